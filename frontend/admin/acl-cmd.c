/*
 * acl-cmd.c - AUTH and ACL (WHOAMI, LIST, USERS, GETUSER, SETUSER,
 * DELUSER, CAT, DRYRUN, GENPASS, LOG, HELP), in the frontends. Changes go
 * through the shared table (acl.c), so they apply on every frontend; a
 * deleted user's clients are closed by each frontend's periodic sweep.
 * Replies and errors are Redis 7.0.15's.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "frontend/cmd/cmd.h"
#include "frontend/core/core.h"
#include "frontend/admin/admin.h"
#include "strutil.h"

static const char ERR_WRONGPASS[] = "WRONGPASS invalid username-password pair or user is disabled.";

void fe_cmd_auth(fe_conn_t *c, int argc, const char **argv, const uint32_t *lens, buf_t *out)
{
    if (argc > 3) {
        resp_error(out, "ERR syntax error");
        return;
    }
    const char *user = "default", *pass = argv[1];
    size_t ulen = 7, plen = lens[1];
    if (argc == 2) {
        if (fe_acl_default_nopass(c->fe)) {
            resp_error(out, "ERR AUTH <password> called without any password configured for the "
                            "default user. Are you sure your configuration is correct?");
            return;
        }
    } else {
        user = argv[1];
        ulen = lens[1];
        pass = argv[2];
        plen = lens[2];
    }
    if (fe_acl_auth(c, user, ulen, pass, plen) != 0)
        resp_error(out, ERR_WRONGPASS);
    else
        resp_simple(out, "OK");
}

/* ---- changes to the shared table ---- */

typedef struct setuser_arg {
    const char *name;
    size_t nlen;
    int nrules;
    const char *const *rules;
    const uint32_t *lens;
} setuser_arg_t;

static int do_setuser(acl_table_t *t, void *argp, char *err, size_t errlen)
{
    setuser_arg_t *a = argp;
    return acl_setuser(t, a->name, a->nlen, a->nrules, a->rules, a->lens, err, errlen);
}

typedef struct deluser_arg {
    int n;
    const char *const *names;
    const uint32_t *lens;
    int deleted;
} deluser_arg_t;

static int do_deluser(acl_table_t *t, void *argp, char *err, size_t errlen)
{
    (void)err;
    (void)errlen;
    deluser_arg_t *a = argp;
    a->deleted = 0;
    for (int i = 0; i < a->n; i++)
        a->deleted += acl_deluser(t, a->names[i], a->lens[i]);
    return 0;
}

int fe_acl_set_requirepass(fe_t *fe, const char *pass, size_t n, char *err, size_t errlen)
{
    char rule[SHM_REQUIREPASS_MAX + 2];
    const char *rules[2] = {"resetpass", rule};
    uint32_t lens[2] = {9, 0};
    if (n == 0) {
        snprintf(rule, sizeof(rule), "nopass");
    } else {
        rule[0] = '>';
        memcpy(rule + 1, pass, n);
        rule[n + 1] = '\0';
    }
    lens[1] = (uint32_t)(n ? n + 1 : 6);
    setuser_arg_t a = {"default", 7, 2, rules, lens};
    return fe_acl_update(fe, do_setuser, &a, err, errlen);
}

/* ---- ACL subcommands ---- */

static void acl_cat(int argc, const char **argv, const uint32_t *lens, buf_t *out)
{
    if (argc == 2) {
        int n = 0;
        while (acl_category(n, NULL))
            n++;
        resp_array(out, n);
        for (int i = 0; i < n; i++)
            resp_bulk_cstr(out, acl_category(i, NULL));
        return;
    }
    uint32_t bits = 0;
    if (acl_category_find(argv[2], lens[2], &bits) < 0) {
        char msg[192];
        snprintf(msg, sizeof(msg), "ERR Unknown category '%.*s'",
                 (int)(lens[2] > 128 ? 128 : lens[2]), argv[2]);
        resp_error(out, msg);
        return;
    }
    buf_t items;
    buf_init(&items);
    long long n = 0;
    for (size_t i = 0; i < fe_cmd_index_count() && bits; i++) {
        unsigned idx = fe_cmd_index_at(i);
        const char *name = fe_cmd_index_name(idx);
        if (!name) continue;
        /* A parent with subcommands is listed by its subcommands. */
        if (idx < FE_SUB_BASE && fe_has_subcmds((cmd_id_t)idx)) continue;
        if (!(fe_cmd_index_cats(idx) & bits)) continue;
        resp_bulk_cstr(&items, name);
        n++;
    }
    resp_array(out, n);
    buf_append(out, items.data, items.len);
    buf_free(&items);
}

static void acl_dryrun(fe_conn_t *c, int argc, const char **argv, const uint32_t *lens, buf_t *out)
{
    char msg[512];
    acl_user_t *u = acl_find(c->fe->admin->acl, argv[2], lens[2]);
    if (!u) {
        snprintf(msg, sizeof(msg), "ERR User '%.*s' not found",
                 (int)(lens[2] > 128 ? 128 : lens[2]), argv[2]);
        resp_error(out, msg);
        return;
    }
    const cmd_desc_t *d = cmd_lookup(argv[3], lens[3]);
    if (!d) {
        snprintf(msg, sizeof(msg), "ERR Command '%.*s' not found",
                 (int)(lens[3] > 128 ? 128 : lens[3]), argv[3]);
        resp_error(out, msg);
        return;
    }
    int n = argc - 3;
    const char *const *args = argv + 3;
    const uint32_t *alens = lens + 3;
    if (!cmd_arity_ok(d->arity, n)) {
        snprintf(msg, sizeof(msg), "ERR wrong number of arguments for '%s' command", d->name);
        resp_error(out, msg);
        return;
    }
    unsigned idx = fe_cmd_index(d, n, args, alens);
    int rc = acl_check(u, d, idx, n, args, alens);
    if (rc == ACL_OK) {
        resp_simple(out, "OK");
        return;
    }
    int len;
    if (rc == ACL_DENIED_CMD) {
        len = snprintf(msg, sizeof(msg), "This user has no permissions to run the '%s' command",
                       fe_cmd_index_name(idx));
    } else if (rc == ACL_DENIED_CHANNEL) {
        int bad = acl_denied_channel(u, d, n, args, alens);
        len =
            snprintf(msg, sizeof(msg), "This user has no permissions to access the '%.*s' channel",
                     (int)(alens[bad] > 256 ? 256 : alens[bad]), args[bad]);
    } else {
        /* The first key the user may not touch (acl_check found one). */
        int bad = 0;
        for (int i = cmd_key_next(d, n, args, alens, 0); i && !bad;
             i = cmd_key_next(d, n, args, alens, i))
            if (!acl_key_ok(u, args[i], alens[i])) bad = i;
        len = snprintf(msg, sizeof(msg), "This user has no permissions to access the '%.*s' key",
                       (int)(alens[bad] > 256 ? 256 : alens[bad]), args[bad]);
    }
    resp_bulk(out, msg, (size_t)(len < (int)sizeof(msg) ? len : (int)sizeof(msg) - 1));
}

static void acl_genpass(int argc, const char **argv, const uint32_t *lens, buf_t *out)
{
    long long bits = 256;
    if (argc > 2) {
        if (str_to_ll(argv[2], lens[2], &bits) != 0) {
            resp_error(out, "ERR value is not an integer or out of range");
            return;
        }
        if (bits <= 0 || bits > 4096) {
            resp_error(out, "ERR ACL GENPASS argument must be the number of bits for the output "
                            "password, a positive number up to 4096");
            return;
        }
    }
    size_t chars = (size_t)(bits + 3) / 4;
    unsigned char raw[512];
    size_t nraw = (chars + 1) / 2;
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    ssize_t got = fd >= 0 ? read(fd, raw, nraw) : -1;
    if (fd >= 0) close(fd);
    if (got != (ssize_t)nraw) {
        resp_error(out, "ERR can't read random bytes");
        return;
    }
    static const char hex[] = "0123456789abcdef";
    char pass[1025];
    for (size_t i = 0; i < chars; i++)
        pass[i] = hex[(raw[i / 2] >> (i % 2 ? 0 : 4)) & 15];
    resp_bulk(out, pass, chars);
}

static const char *const acl_help[] = {
    "ACL <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "CAT [<category>]",
    "    List all commands that belong to <category>, or all command categories",
    "    when no category is specified.",
    "DELUSER <username> [<username> ...]",
    "    Delete a list of users.",
    "DRYRUN <username> <command> [<arg> ...]",
    "    Returns whether the user can execute the given command without executing the command.",
    "GETUSER <username>",
    "    Get the user's details.",
    "GENPASS [<bits>]",
    "    Generate a secure 256-bit user password. The optional `bits` argument can",
    "    be used to specify a different size.",
    "LIST",
    "    Show users details in config file format.",
    "SETUSER <username> <attribute> [<attribute> ...]",
    "    Create or modify a user with the specified attributes.",
    "USERS",
    "    List all the registered usernames.",
    "WHOAMI",
    "    Return the current connection username.",
    "HELP",
    "    Prints this help.",
    NULL,
};

void fe_cmd_acl(fe_conn_t *c, int argc, const char **argv, const uint32_t *lens, buf_t *out)
{
    fe_t *fe = c->fe;
    fe_acl_refresh(fe);
    const char *sub = argv[1];
    size_t sl = lens[1];
    if (fe_word_eq(sub, sl, "load") || fe_word_eq(sub, sl, "save")) {
        resp_error(out,
                   "ERR This Redis instance is not configured to use an ACL file. You may want "
                   "to specify users via the ACL SETUSER command and then issue a CONFIG "
                   "REWRITE (assuming you have a Redis configuration file set) in order to "
                   "store users in the Redis configuration.");
        return;
    }
    if (fe_word_eq(sub, sl, "log")) {
        /* No ACL log is kept: the log is always empty. */
        long long count;
        if (argc > 3 || (argc == 3 && !fe_word_eq(argv[2], lens[2], "reset") &&
                         str_to_ll(argv[2], lens[2], &count) != 0)) {
            resp_error(out, "ERR value is not an integer or out of range");
        } else if (argc == 3 && fe_word_eq(argv[2], lens[2], "reset")) {
            resp_simple(out, "OK");
        } else {
            resp_array(out, 0);
        }
        return;
    }
    if (fe_subcmd_arity_check(cmd_by_id(CMD_ACL), argc, argv, lens, out) != 0) return;
    char err[512];
    if (fe_word_eq(sub, sl, "whoami")) {
        resp_bulk_cstr(out, c->admin->user ? c->admin->user : "default");
    } else if (fe_word_eq(sub, sl, "list")) {
        int n = acl_count(fe->admin->acl);
        resp_array(out, n);
        buf_t line;
        buf_init(&line);
        for (int i = 0; i < n; i++) {
            buf_reset(&line);
            acl_user_describe(acl_at(fe->admin->acl, i), &line);
            resp_bulk(out, line.data, line.len);
        }
        buf_free(&line);
    } else if (fe_word_eq(sub, sl, "users")) {
        int n = acl_count(fe->admin->acl);
        resp_array(out, n);
        for (int i = 0; i < n; i++)
            resp_bulk_cstr(out, acl_user_name(acl_at(fe->admin->acl, i)));
    } else if (fe_word_eq(sub, sl, "getuser")) {
        acl_user_t *u = acl_find(fe->admin->acl, argv[2], lens[2]);
        if (u)
            acl_user_getuser(u, c->proto, out);
        else
            resp_null3(out, c->proto);
    } else if (fe_word_eq(sub, sl, "setuser")) {
        setuser_arg_t a = {argv[2], lens[2], argc - 3, argv + 3, lens + 3};
        if (fe_acl_update(fe, do_setuser, &a, err, sizeof(err)) != 0) {
            resp_error(out, err);
        } else {
            resp_simple(out, "OK");
            fe_acl_sweep(
                fe); /* subscribers whose channels it took away; the others' on their timer */
        }
    } else if (fe_word_eq(sub, sl, "deluser")) {
        for (int i = 2; i < argc; i++)
            if (fe_word_eq(argv[i], lens[i], "default") && lens[i] == 7 &&
                !memcmp(argv[i], "default", 7)) {
                resp_error(out, "ERR The 'default' user cannot be removed");
                return;
            }
        deluser_arg_t a = {argc - 2, argv + 2, lens + 2, 0};
        if (fe_acl_update(fe, do_deluser, &a, err, sizeof(err)) != 0) {
            resp_error(out, err);
            return;
        }
        resp_integer(out, a.deleted);
        fe_acl_sweep(fe); /* this frontend's clients of those users; the others' on their timer */
    } else if (fe_word_eq(sub, sl, "cat")) {
        if (argc > 3) {
            resp_error(out, "ERR wrong number of arguments for 'acl|cat' command");
            return;
        }
        acl_cat(argc, argv, lens, out);
    } else if (fe_word_eq(sub, sl, "dryrun")) {
        acl_dryrun(c, argc, argv, lens, out);
    } else if (fe_word_eq(sub, sl, "genpass")) {
        if (argc > 3) {
            resp_error(out, "ERR wrong number of arguments for 'acl|genpass' command");
            return;
        }
        acl_genpass(argc, argv, lens, out);
    } else if (fe_word_eq(sub, sl, "help")) {
        fe_reply_help(out, acl_help);
    } else {
        fe_reply_unknown_subcmd(out, "ACL", sub, sl);
    }
}
