/*
 * command-cmd.c - COMMAND and its subcommands, and the "command index"
 * helpers (admin.h) the ACL and the statistics use. Run by the frontends;
 * reads only constant tables.
 *
 * COMMAND INFO and COMMAND DOCS answer with Redis 7.0.15's own entries for
 * the commands AtticDB implements (frontend/command-docs.c, generated from a
 * redis-server's replies, subcommands AtticDB lacks removed), so redis-cli's
 * hints and clients that probe COMMAND work as they do with Redis. The
 * entries are RESP3; a RESP2 client gets them converted (resp3_to_resp2).
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "fe-internal.h"
#include "frontend/admin.h"
#include "frontend/command-docs.h"
#include "glob.h"

/* ---- command indexes ---- */

static int16_t sub_first[256], sub_count[256];
static int sub_ready;

static void sub_init(void)
{
    if (sub_ready) return;
    for (size_t k = 0; k < fe_subcmds_count; k++) {
        unsigned p = (unsigned)fe_subcmds[k].parent;
        if (!sub_count[p]) sub_first[p] = (int16_t)k;
        sub_count[p]++;
    }
    sub_ready = 1;
}

int fe_has_subcmds(cmd_id_t id)
{
    sub_init();
    return (unsigned)id < 256 && sub_count[id] > 0;
}

int fe_subcmd_find(cmd_id_t parent, const char *s, size_t n)
{
    sub_init();
    if ((unsigned)parent >= 256) return -1;
    for (int k = sub_first[parent]; k < sub_first[parent] + sub_count[parent]; k++)
        if (strlen(fe_subcmds[k].name) == n && strncasecmp(fe_subcmds[k].name, s, n) == 0) return k;
    return -1;
}

unsigned fe_cmd_index(const cmd_desc_t *d, int argc, const char *const *argv, const uint32_t *lens)
{
    if (__builtin_expect(!sub_ready, 0)) sub_init();
    if (__builtin_expect(sub_count[d->id] == 0, 1) || argc < 2) return (unsigned)d->id;
    int k = fe_subcmd_find(d->id, argv[1], lens[1]);
    return k < 0 ? (unsigned)d->id : FE_SUB_BASE + (unsigned)k;
}

size_t fe_cmd_index_count(void)
{
    size_t n;
    cmd_table(&n);
    return n + fe_subcmds_count;
}

unsigned fe_cmd_index_at(size_t i)
{
    size_t n;
    const cmd_desc_t *t = cmd_table(&n);
    return i < n ? (unsigned)t[i].id : FE_SUB_BASE + (unsigned)(i - n);
}

const char *fe_cmd_index_name(unsigned idx)
{
    if (idx >= FE_SUB_BASE) {
        idx -= FE_SUB_BASE;
        return idx < fe_subcmds_count ? fe_subcmds[idx].fullname : NULL;
    }
    const cmd_desc_t *d = cmd_by_id((cmd_id_t)idx);
    return d ? d->name : NULL;
}

uint32_t fe_cmd_index_cats(unsigned idx)
{
    if (idx >= FE_SUB_BASE) {
        idx -= FE_SUB_BASE;
        return idx < fe_subcmds_count ? fe_subcmds[idx].cats : 0;
    }
    const cmd_desc_t *d = cmd_by_id((cmd_id_t)idx);
    return d ? d->cats : 0;
}

int fe_subcmd_arity_check(const cmd_desc_t *d, int argc, const char *const *argv,
                          const uint32_t *lens, buf_t *out)
{
    if (argc < 2 || !fe_has_subcmds(d->id)) return 0;
    int k = fe_subcmd_find(d->id, argv[1], lens[1]);
    if (k < 0) return 0;
    int arity = fe_subcmds[k].arity;
    if ((arity > 0 && argc == arity) || (arity < 0 && argc >= -arity)) return 0;
    buf_appendf(out, "-ERR wrong number of arguments for '%s' command\r\n", fe_subcmds[k].fullname);
    return -1;
}

void fe_reply_unknown_subcmd(buf_t *out, const char *cmd_upper, const char *sub, size_t n)
{
    char msg[256];
    snprintf(msg, sizeof(msg), "ERR unknown subcommand '%.*s'. Try %s HELP.",
             (int)(n > 128 ? 128 : n), sub, cmd_upper);
    resp_error(out, msg);
}

void fe_reply_help(buf_t *out, const char *const *lines)
{
    int n = 0;
    while (lines[n])
        n++;
    resp_array(out, n);
    for (int i = 0; i < n; i++)
        resp_simple(out, lines[i]);
}

/* ---- COMMAND ---- */

static const fe_cmd_doc_t *doc_of(const cmd_desc_t *d)
{
    for (size_t i = 0; i < fe_cmd_docs_count; i++)
        if (strcmp(fe_cmd_docs[i].name, d->name) == 0) return &fe_cmd_docs[i];
    return NULL;
}

/* Append RESP3 text as the connection's protocol wants it. */
static void put3(buf_t *out, int proto, const char *p, size_t n)
{
    if (proto >= 3)
        buf_append(out, p, n);
    else
        resp3_to_resp2(p, n, out);
}

static void command_info(const cmd_desc_t *d, int proto, buf_t *out)
{
    const fe_cmd_doc_t *doc = doc_of(d);
    if (doc) {
        put3(out, proto, doc->info, doc->info_len);
        return;
    }
    /* A command Redis does not have: what the table knows. */
    resp_array(out, 10);
    resp_bulk_cstr(out, d->name);
    resp_integer(out, d->arity);
    resp_set(out, proto, 0);
    resp_integer(out, d->first_key);
    resp_integer(out, d->last_key);
    resp_integer(out, d->key_step);
    resp_set(out, proto, 0);
    resp_set(out, proto, 0);
    resp_set(out, proto, 0);
    resp_array(out, 0);
}

static void command_docs_entry(const cmd_desc_t *d, int proto, buf_t *out)
{
    resp_bulk_cstr(out, d->name);
    const fe_cmd_doc_t *doc = doc_of(d);
    if (doc)
        put3(out, proto, doc->docs, doc->docs_len);
    else
        resp_map(out, proto, 0);
}

static void command_getkeys(int argc, const char **argv, const uint32_t *lens, buf_t *out)
{
    const cmd_desc_t *d = cmd_lookup(argv[2], lens[2]);
    int n = argc - 2; /* the command's own argc */
    if (!d) {
        resp_error(out, "ERR Invalid command specified");
        return;
    }
    if (d->first_key <= 0) {
        resp_error(out, "ERR The command has no key arguments");
        return;
    }
    if ((d->arity > 0 && d->arity != n) || n < -d->arity) {
        resp_error(out, "ERR Invalid number of arguments specified for command");
        return;
    }
    const char *const *args = argv + 2;
    const uint32_t *alens = lens + 2;
    int last = d->last_key < 0 ? n + d->last_key : d->last_key;
    if (last >= n) last = n - 1;
    int step = d->key_step > 0 ? d->key_step : 1;
    if (d->first_key >= n) {
        resp_error(out, "ERR Invalid arguments specified for command");
        return;
    }
    int count = 0;
    for (int i = d->first_key; i <= last; i += step)
        count++;
    resp_array(out, count);
    for (int i = d->first_key; i <= last; i += step)
        resp_bulk(out, args[i], alens[i]);
}

static void command_list(fe_conn_t *c, int argc, const char **argv, const uint32_t *lens,
                         buf_t *out)
{
    enum { ALL, CAT, PATTERN, NONE } mode = ALL;
    uint32_t bits = 0;
    const char *pat = NULL;
    size_t plen = 0;
    (void)c;
    if (argc != 2) {
        if (argc != 5 || !fe_word_eq(argv[2], lens[2], "filterby")) {
            resp_error(out, "ERR syntax error");
            return;
        }
        if (fe_word_eq(argv[3], lens[3], "aclcat")) {
            /* an unknown category, or one no command here has: nothing */
            mode = acl_category_find(argv[4], lens[4], &bits) >= 0 && bits ? CAT : NONE;
        } else if (fe_word_eq(argv[3], lens[3], "pattern")) {
            mode = PATTERN;
            pat = argv[4];
            plen = lens[4];
        } else if (fe_word_eq(argv[3], lens[3], "module")) {
            mode = NONE;
        } else {
            resp_error(out, "ERR syntax error");
            return;
        }
    }
    buf_t items;
    buf_init(&items);
    long long n = 0;
    for (size_t i = 0; i < fe_cmd_index_count() && mode != NONE; i++) {
        unsigned idx = fe_cmd_index_at(i);
        const char *name = fe_cmd_index_name(idx);
        if (mode == ALL && idx >= FE_SUB_BASE) continue;
        if (mode == CAT && !(fe_cmd_index_cats(idx) & bits)) continue;
        if (mode == PATTERN && !glob_match(pat, plen, name, strlen(name), 1)) continue;
        resp_bulk_cstr(&items, name);
        n++;
    }
    resp_array(out, n);
    buf_append(out, items.data, items.len);
    buf_free(&items);
}

static const char *const command_help[] = {
    "COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "(no subcommand)",
    "    Return details about all Redis commands.",
    "COUNT",
    "    Return the total number of commands in this Redis server.",
    "LIST",
    "    Return a list of all commands in this Redis server.",
    "INFO [<command-name> ...]",
    "    Return details about multiple Redis commands.",
    "    If no command names are given, documentation details for all",
    "    commands are returned.",
    "DOCS [<command-name> ...]",
    "    Return documentation details about multiple Redis commands.",
    "    If no command names are given, documentation details for all",
    "    commands are returned.",
    "GETKEYS <full-command>",
    "    Return the keys from a full Redis command.",
    "HELP",
    "    Prints this help.",
    NULL,
};

void fe_command(fe_conn_t *c, int argc, const char **argv, const uint32_t *lens, buf_t *out)
{
    int proto = c->proto;
    size_t n;
    const cmd_desc_t *t = cmd_table(&n);
    if (argc == 1) {
        resp_array(out, (long long)n);
        for (size_t i = 0; i < n; i++)
            command_info(&t[i], proto, out);
        return;
    }
    if (fe_subcmd_arity_check(cmd_by_id(CMD_COMMAND), argc, argv, lens, out) != 0) return;
    const char *sub = argv[1];
    size_t sl = lens[1];
    if (fe_word_eq(sub, sl, "count")) {
        resp_integer(out, (long long)n);
    } else if (fe_word_eq(sub, sl, "info")) {
        if (argc == 2) {
            resp_array(out, (long long)n);
            for (size_t i = 0; i < n; i++)
                command_info(&t[i], proto, out);
            return;
        }
        resp_array(out, argc - 2);
        for (int i = 2; i < argc; i++) {
            const cmd_desc_t *d = cmd_lookup(argv[i], lens[i]);
            if (d)
                command_info(d, proto, out);
            else
                resp_null3(out, proto);
        }
    } else if (fe_word_eq(sub, sl, "docs")) {
        if (argc == 2) {
            resp_map(out, proto, (long long)n);
            for (size_t i = 0; i < n; i++)
                command_docs_entry(&t[i], proto, out);
            return;
        }
        buf_t items;
        buf_init(&items);
        long long found = 0;
        for (int i = 2; i < argc; i++) {
            const cmd_desc_t *d = cmd_lookup(argv[i], lens[i]);
            if (!d) continue;
            command_docs_entry(d, proto, &items);
            found++;
        }
        resp_map(out, proto, found);
        buf_append(out, items.data, items.len);
        buf_free(&items);
    } else if (fe_word_eq(sub, sl, "list")) {
        command_list(c, argc, argv, lens, out);
    } else if (fe_word_eq(sub, sl, "getkeys")) {
        command_getkeys(argc, argv, lens, out);
    } else if (fe_word_eq(sub, sl, "help")) {
        fe_reply_help(out, command_help);
    } else {
        fe_reply_unknown_subcmd(out, "COMMAND", sub, sl);
    }
}
