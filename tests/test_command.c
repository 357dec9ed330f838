/*
 * test_command.c - unit tests of the command registry (common/commands.def
 * and the tables made from it): every row is found by name and by id, every
 * route has its handler on both sides (a write's encoder makes a record the
 * store accepts, a read has the store's read handler), the subcommand rows
 * are consistent, and the generated COMMAND INFO and DOCS entries
 * (frontend/admin/command-docs.c, Redis 7.0.15's facts) agree with the registry
 * on arity, flags, key positions, ACL categories, subcommands and summaries.
 */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "command.h"
#include "config.h"
#include "frontend/admin/command-docs.h"
#include "frontend/cmd/encode.h"
#include "frontend/core/core.h"
#include "record.h"
#include "store/route.h"

/* ---- lookups ---- */

Test(registry, every_row_is_found_by_name_and_by_id)
{
    size_t n;
    const cmd_desc_t *t = cmd_table(&n);
    cr_assert_gt(n, 0);
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(t[i].name);
        cr_expect_eq(cmd_lookup(t[i].name, len), &t[i], "%s by name", t[i].name);
        char upper[64];
        cr_assert_lt(len, sizeof(upper));
        for (size_t k = 0; k <= len; k++)
            upper[k] = (char)(t[i].name[k] >= 'a' && t[i].name[k] <= 'z' ? t[i].name[k] - 32
                                                                         : t[i].name[k]);
        cr_expect_eq(cmd_lookup(upper, len), &t[i], "%s in upper case", t[i].name);
        cr_expect_eq(cmd_by_id(t[i].id), &t[i], "%s by id", t[i].name);
        cr_expect(t[i].id > CMD_NONE && (int)t[i].id < CMD__COUNT, "%s: id in range", t[i].name);
        cr_expect(t[i].summary && *t[i].summary && t[i].complexity && *t[i].complexity,
                  "%s: COMMAND DOCS texts", t[i].name);
        /* a prefix is not the command */
        cr_expect_neq(cmd_lookup(t[i].name, len - 1), &t[i], "%s", t[i].name);
    }
    cr_expect_null(cmd_lookup("GETDEL\0", 7));
    cr_expect_null(cmd_lookup("", 0));
    cr_expect_null(cmd_lookup("nosuchcommandatall", 18));
    /* operations only the log has are no user command */
    cr_expect_null(cmd_by_id(CMD_NONE));
    cr_expect_null(cmd_by_id(CMD_TICK));
    cr_expect_null(cmd_by_id(CMD_LITERAL));
    cr_expect_null(cmd_by_id((cmd_id_t)CMD__COUNT));
}

Test(registry, log_ids_never_move)
{
    /* Ids are in logs on disk (command.h): a row must keep its number. */
    cr_expect_eq(CMD_PING, 1);
    cr_expect_eq(CMD_GET, 8);
    cr_expect_eq(CMD_SET, 15);
    cr_expect_eq(CMD_FLUSHALL, 29);
    cr_expect_eq(CMD_LITERAL, 30);
    cr_expect_eq(CMD_EXEC, 31);
    cr_expect_eq(CMD_FLUSHDB, 41);
    cr_expect_eq(CMD_OBJECT, 60);
    cr_expect_eq(CMD_TICK, 72);
    cr_expect_eq(CMD_SHUTDOWN, 73);
    cr_expect_gt(CMD__COUNT, CMD_SHUTDOWN);
}

Test(registry, arity_check)
{
    cr_expect(cmd_arity_ok(2, 2));
    cr_expect_not(cmd_arity_ok(2, 1));
    cr_expect_not(cmd_arity_ok(2, 3));
    cr_expect(cmd_arity_ok(-2, 2));
    cr_expect(cmd_arity_ok(-2, 9));
    cr_expect_not(cmd_arity_ok(-2, 1));
    cr_expect(cmd_arity_ok(-1, 1));
}

/* ---- routes and handlers ---- */

static fe_t enc_fe;
static config_t enc_cfg;
static fe_conn_t enc_conn;

/* Encode command d with argc words: every argument "1", or, when that is
 * refused (COPY 1 1: the same key; SETBIT 1 1 2), "1", "2", "3" ..., or
 * "1", "BEFORE", "LEFT", "LEFT" (LINSERT, LMOVE, LMPOP's keywords), or
 * "1", "1", "MIN" (ZMPOP's); then "1", "1", "1", "LEFT" (BLMPOP's),
 * "1", "STORE", "3" (SORT's), XREADGROUP's GROUP g c STREAMS k > and
 * BITOP's AND 2 3. */
static int encode_some(const cmd_desc_t *d, int argc, fe_enc_t *e)
{
    static const char *const words[] = {"1", "2", "3", "4", "5", "6", "7", "8"};
    static const char *const keywords[] = {"1", "BEFORE", "LEFT", "LEFT", "5", "6", "7", "8"};
    static const char *const zkeywords[] = {"1", "1", "MIN", "4", "5", "6", "7", "8"};
    static const char *const timed[] = {"1", "1", "1", "LEFT", "5", "6", "7", "8"}; /* BLMPOP */
    static const char *const trims[] = {"1", "MAXLEN", "1", "4", "5", "6", "7", "8"};
    static const char *const ztimed[] = {"1", "1", "1", "MIN", "5", "6", "7", "8"};   /* BZMPOP */
    static const char *const stores[] = {"1", "STORE", "3", "4", "5", "6", "7", "8"}; /* SORT */
    static const char *const grouped[] = {"GROUP", "g", "c", "STREAMS", "k", ">", "7", "8"};
    static const char *const bitops[] = {"AND", "2", "3", "4", "5", "6", "7", "8"}; /* BITOP */
    /* Static: an encoder may point e->argv at the arguments it was given
     * (fe_enc_plain), and the caller reads e after this returns. */
    static const char *argv[8];
    static uint32_t lens[8];
    cr_assert_leq(argc, 8);
    enc_cfg.databases = 16;
    enc_fe.cfg = &enc_cfg;
    enc_fe.limits.max_bulk_len = 512 * 1024 * 1024;
    enc_conn.fe = &enc_fe;
    for (int attempt = 0; attempt < 10; attempt++) {
        fe_enc_init(e); /* as dispatch does before each encoder */
        argv[0] = d->name;
        lens[0] = (uint32_t)strlen(d->name);
        for (int i = 1; i < argc; i++) {
            argv[i] = attempt == 9   ? bitops[i - 1]
                      : attempt == 8 ? grouped[i - 1] /* XREADGROUP */
                      : attempt == 7 ? stores[i - 1]
                      : attempt == 6 ? ztimed[i - 1]
                      : attempt == 5 ? trims[i - 1]
                      : attempt == 4 ? timed[i - 1]
                      : attempt == 3 ? zkeywords[i - 1]
                      : attempt == 2 ? keywords[i - 1]
                      : attempt      ? words[i - 1]
                                     : "1";
            lens[i] = (uint32_t)strlen(argv[i]);
        }
        fe_args_t a = {argc, argv, lens};
        if (fe_encoder(d->id)(&enc_conn, d, &a, e) == 0) return 0;
        fe_enc_release(e);
    }
    return -1;
}

Test(registry, every_route_has_its_handler)
{
    size_t n;
    const cmd_desc_t *t = cmd_table(&n);
    for (size_t i = 0; i < n; i++) {
        const cmd_desc_t *d = &t[i];
        int write = d->route == CMD_ROUTE_WRITE, read = d->route == CMD_ROUTE_READ;
        /* Redis' write/readonly flags and the route say the same (an admin
         * command the store answers, DEBUG, is not "readonly" in Redis) */
        cr_expect_eq(!!(d->flags & CMDF_WRITE), write, "%s: write flag and route", d->name);
        cr_expect_eq(!!(d->flags & CMDF_READONLY), read && !(d->flags & CMDF_ADMIN),
                     "%s: readonly flag and route", d->name);
        cr_expect_eq(fe_encoder(d->id) != NULL, write, "%s: encoder", d->name);
        cr_expect_eq(st_read_handler(d->id) != NULL, read, "%s: store read handler", d->name);
        if (!write) continue;
        /* The encoder's record is one the store applies. */
        fe_enc_t e;
        int argc = d->arity < 0 ? -d->arity : d->arity;
        if (d->id == CMD_SORT) argc = 4; /* a write only with STORE destination */
        cr_assert_eq(encode_some(d, argc, &e), 0, "%s: encodes", d->name);
        rec_arg_t args[2 * FE_ENC_FIXED]; /* XREADGROUP's head and 6 words: 11 */
        cr_assert_leq(e.argc, 2 * FE_ENC_FIXED);
        for (int k = 0; k < e.argc; k++) {
            args[k].ptr = e.argv[k];
            args[k].len = e.lens[k];
        }
        cr_expect_not_null(st_write_handler(e.op, (uint16_t)e.argc, args),
                           "%s: the store has no handler for its record (op %d)", d->name, e.op);
    }
    cr_expect_not_null(st_write_handler(CMD_TICK, 0, NULL), "TICK is applied");
    cr_expect_null(st_write_handler(CMD_LITERAL, 0, NULL), "LITERAL only inside EXEC");
}

/* ---- subcommands ---- */

Test(registry, subcommands)
{
    size_t n;
    const cmd_sub_t *s = cmd_subs(&n);
    cr_assert_gt(n, 0);
    for (size_t k = 0; k < n; k++) {
        const cmd_desc_t *p = cmd_by_id(s[k].parent);
        cr_assert_not_null(p);
        size_t pl = strlen(p->name);
        /* "client|setinfo": parent name, '|', then the name (command.c
         * takes the name past the parent's token, as long as its name) */
        cr_expect(strncmp(s[k].fullname, p->name, pl) == 0 && s[k].fullname[pl] == '|' &&
                      s[k].name == s[k].fullname + pl + 1,
                  "%s", s[k].fullname);
        cr_expect(cmd_has_subs(p->id), "%s", p->name);
        cr_expect_eq(cmd_lookup_sub(p->id, s[k].name, strlen(s[k].name)), &s[k], "%s",
                     s[k].fullname);
        cr_expect_eq(cmd_sub_index(p->id, s[k].name, strlen(s[k].name)), (int)k);
        cr_expect(s[k].summary && *s[k].summary, "%s: summary", s[k].fullname);
        /* a parent's rows are adjacent (command.c indexes them as a range) */
        if (k > 0 && s[k - 1].parent != s[k].parent)
            for (size_t j = 0; j < k; j++)
                cr_expect_neq(s[j].parent, s[k].parent, "%s: rows apart", s[k].fullname);
    }
    /* Redis-only ones are known for their arity, not run */
    const cmd_sub_t *r = cmd_lookup_sub(CMD_CLIENT, "TRACKING", 8);
    cr_assert_not_null(r);
    cr_expect_eq(r->arity, -3);
    cr_expect_eq(cmd_sub_index(CMD_CLIENT, "tracking", 8), -1);
    cr_expect_null(cmd_lookup_sub(CMD_CONFIG, "nope", 4));
    cr_expect_null(cmd_lookup_sub(CMD_GET, "x", 1));
    cr_expect_not(cmd_has_subs(CMD_GET));
    cr_expect_eq(cmd_sub_count(CMD_GET), 0);
    /* CLIENT SETINFO takes exactly one attribute and its value (Redis
     * 7.2's arity 4; the generated entry said -4) */
    const cmd_sub_t *si = cmd_lookup_sub(CMD_CLIENT, "setinfo", 7);
    cr_assert_not_null(si);
    cr_expect_eq(si->arity, 4);
}

/* ---- the generated COMMAND INFO and DOCS entries ---- */

/* A RESP3 value, parsed: enough for the generated entries. */
typedef struct rv {
    char type;     /* '*', '~', '%', '$', ':', '+' */
    long long n;   /* integer, or element count (pairs count twice) */
    const char *s; /* string bytes */
    size_t len;
    struct rv *items; /* n elements */
} rv_t;

static const char *parse(const char *p, rv_t *v)
{
    v->type = *p;
    const char *eol = strstr(p, "\r\n");
    cr_assert_not_null(eol);
    switch (*p) {
    case '$':
        v->len = (size_t)strtoll(p + 1, NULL, 10);
        v->s = eol + 2;
        return eol + 2 + v->len + 2;
    case ':':
        v->n = strtoll(p + 1, NULL, 10);
        return eol + 2;
    case '+':
        v->s = p + 1;
        v->len = (size_t)(eol - p - 1);
        return eol + 2;
    case '*':
    case '~':
    case '%':
        v->n = strtoll(p + 1, NULL, 10) * (*p == '%' ? 2 : 1);
        v->items = calloc((size_t)v->n + 1, sizeof(rv_t));
        p = eol + 2;
        for (long long i = 0; i < v->n; i++)
            p = parse(p, &v->items[i]);
        return p;
    default:
        cr_assert_fail("unexpected RESP3 type %c", *p);
        return NULL;
    }
}

static int str_is(const rv_t *v, const char *s)
{
    return v->len == strlen(s) && memcmp(v->s, s, v->len) == 0;
}

/* Redis' flag names and the registry's bits (NM is AtticDB's own). */
static const struct {
    const char *name;
    uint32_t bit;
} flag_names[] = {
    {"write", CMDF_WRITE},
    {"readonly", CMDF_READONLY},
    {"denyoom", CMDF_DENYOOM},
    {"admin", CMDF_ADMIN},
    {"noscript", CMDF_NOSCRIPT},
    {"loading", CMDF_LOADING},
    {"stale", CMDF_STALE},
    {"skip_slowlog", CMDF_SKIP_SLOWLOG},
    {"fast", CMDF_FAST},
    {"no_auth", CMDF_NO_AUTH},
    {"allow_busy", CMDF_ALLOW_BUSY},
    {"no_multi", CMDF_REFUSED_IN_MULTI},
    {"movablekeys", CMDF_MOVABLEKEYS},
    {"no_async_loading", CMDF_NO_ASYNC_LOADING},
    {"blocking", CMDF_BLOCKING},
    {"pubsub", CMDF_PUBSUB},
};

static uint32_t flags_of(const rv_t *set, const char *who)
{
    uint32_t bits = 0;
    for (long long i = 0; i < set->n; i++) {
        size_t f;
        for (f = 0; f < sizeof(flag_names) / sizeof(flag_names[0]); f++)
            if (str_is(&set->items[i], flag_names[f].name)) break;
        cr_expect_lt(f, sizeof(flag_names) / sizeof(flag_names[0]), "%s: flag %.*s unknown here",
                     who, (int)set->items[i].len, set->items[i].s);
        if (f < sizeof(flag_names) / sizeof(flag_names[0])) bits |= flag_names[f].bit;
    }
    return bits;
}

static uint32_t cats_of(const rv_t *set, const char *who)
{
    uint32_t bits = 0;
    for (long long i = 0; i < set->n; i++) {
        int c;
        for (c = 0; cmd_cat_name(c); c++)
            if (set->items[i].len == strlen(cmd_cat_name(c)) + 1 && set->items[i].s[0] == '@' &&
                !memcmp(set->items[i].s + 1, cmd_cat_name(c), set->items[i].len - 1))
                break;
        cr_expect_not_null(cmd_cat_name(c), "%s: category %.*s unknown here", who,
                           (int)set->items[i].len, set->items[i].s);
        if (cmd_cat_name(c)) bits |= 1u << c;
    }
    return bits;
}

/* One COMMAND INFO entry (array of 10) against the registry's facts. */
static void check_info(const rv_t *e, const char *name, int arity, uint32_t flags, int first,
                       int last, int step, uint32_t cats, int container)
{
    cr_assert_eq(e->type, '*');
    cr_assert_eq(e->n, 10, "%s", name);
    cr_expect(str_is(&e->items[0], name), "%s: name", name);
    cr_expect_eq(e->items[1].n, arity, "%s: arity (Redis %lld, registry %d)", name, e->items[1].n,
                 arity);
    if (container) return; /* Redis reports none for a container (commands.def) */
    cr_expect_eq(flags_of(&e->items[2], name),
                 flags & ~(uint32_t)(CMDF_NO_MULTI | CMDF_REPLY_CACHE), "%s: flags", name);
    cr_expect_eq(e->items[3].n, first, "%s: first key", name);
    cr_expect_eq(e->items[4].n, last, "%s: last key", name);
    cr_expect_eq(e->items[5].n, step, "%s: key step", name);
    cr_expect_eq(cats_of(&e->items[6], name), cats, "%s: ACL categories", name);
}

/* The summary and complexity of a COMMAND DOCS map. */
static void check_docs(const rv_t *m, const char *name, const char *summary, const char *cx)
{
    cr_assert_eq(m->type, '%', "%s", name);
    cr_assert_geq(m->n, 8, "%s", name);
    cr_expect(str_is(&m->items[0], "summary") && str_is(&m->items[1], summary), "%s: summary",
              name);
    cr_expect(str_is(&m->items[6], "complexity") && str_is(&m->items[7], cx), "%s: complexity",
              name);
    cr_expect(str_is(&m->items[2], "since") && m->items[3].len, "%s: since", name);
    cr_expect(str_is(&m->items[4], "group") && m->items[5].len, "%s: group", name);
    /* Redis' documentation prose is left out (tools/gen-command-docs) */
    for (long long i = 0; i < m->n; i += 2)
        cr_expect(!str_is(&m->items[i], "history") && !str_is(&m->items[i], "replaced_by"),
                  "%s: Redis' prose in the docs", name);
}

static const rv_t *map_get(const rv_t *m, const char *key)
{
    for (long long i = 0; i + 1 < m->n; i += 2)
        if (str_is(&m->items[i], key)) return &m->items[i + 1];
    return NULL;
}

Test(registry, generated_entries_agree_with_the_registry)
{
    size_t n, nsubs;
    const cmd_desc_t *t = cmd_table(&n);
    const cmd_sub_t *subs = cmd_subs(&nsubs);
    cr_assert_eq(fe_cmd_docs_count, n, "one generated entry per row");
    size_t seen_subs = 0;
    for (size_t i = 0; i < n; i++) {
        const cmd_desc_t *d = &t[i];
        const fe_cmd_doc_t *doc = &fe_cmd_docs[i];
        cr_assert_str_eq(doc->name, d->name, "entries in the registry's order");
        cr_assert_eq(strlen(doc->info), doc->info_len, "%s", d->name);
        int container = cmd_sub_count(d->id) > 0;
        rv_t info, docs;
        parse(doc->info, &info);
        check_info(&info, d->name, d->arity, d->flags, d->first_key, d->last_key, d->key_step,
                   d->cats, container && d->id != CMD_COMMAND);
        parse(doc->docs, &docs);
        check_docs(&docs, d->name, d->summary, d->complexity);
        /* the subcommands: the registry's, in its order, each agreeing */
        const rv_t *isubs = &info.items[9];
        const rv_t *dsubs = map_get(&docs, "subcommands");
        cr_expect_eq(isubs->n, cmd_sub_count(d->id), "%s: subcommands", d->name);
        cr_expect_eq(dsubs ? dsubs->n / 2 : 0, cmd_sub_count(d->id), "%s: documented subs",
                     d->name);
        size_t first = 0;
        while (first < nsubs && subs[first].parent != d->id)
            first++;
        for (long long k = 0; k < isubs->n && k < cmd_sub_count(d->id); k++) {
            const cmd_sub_t *s = &subs[first + (size_t)k];
            check_info(&isubs->items[k], s->fullname, s->arity, s->flags, s->first_key, s->last_key,
                       s->key_step, s->cats, 0);
            cr_expect(str_is(&dsubs->items[2 * k], s->fullname), "%s: docs order", s->fullname);
            check_docs(&dsubs->items[2 * k + 1], s->fullname, s->summary, s->complexity);
            seen_subs++;
        }
    }
    cr_expect_eq(seen_subs, nsubs, "every subcommand row has its generated entry");
}

/* cmd_key_next walks a row's fixed keys by its step (MSET: 1, 3, 5), and
 * a command with no key positions has none to count. */
Test(registry, key_positions_of_fixed_rows)
{
    const char *mset[] = {"mset", "a", "1", "b", "2", "c", "3"};
    uint32_t ml[] = {4, 1, 1, 1, 1, 1, 1};
    const cmd_desc_t *d = cmd_lookup("mset", 4);
    cr_assert_not_null(d);
    cr_expect_eq(cmd_key_count(d, 7, mset, ml), 3);
    int want[] = {1, 3, 5}, k = 0;
    for (int i = cmd_key_next(d, 7, mset, ml, 0); i; i = cmd_key_next(d, 7, mset, ml, i)) {
        cr_assert_lt(k, 3);
        cr_expect_eq(i, want[k++]);
    }
    cr_expect_eq(k, 3);
    const cmd_desc_t *p = cmd_lookup("ping", 4);
    cr_expect_eq(cmd_key_count(p, 1, mset, ml), -1);
    cr_expect_eq(cmd_key_next(p, 1, mset, ml, 0), 0);
}

/* A movable-keys command (SINTERCARD, numkeys at 1): its keys are the
 * numkeys words after it, and a numkeys that is no count, zero or more
 * than the words left names none (-1, COMMAND GETKEYS' error). */
Test(registry, key_positions_of_movable_rows)
{
    const cmd_desc_t *d = cmd_lookup("sintercard", 10);
    cr_assert_not_null(d);
    cr_expect(d->flags & CMDF_MOVABLEKEYS);
    const char *ok[] = {"sintercard", "2", "a", "b", "LIMIT", "1"};
    uint32_t ol[] = {10, 1, 1, 1, 5, 1};
    cr_expect_eq(cmd_key_count(d, 6, ok, ol), 2);
    cr_expect_eq(cmd_key_next(d, 6, ok, ol, 0), 2);
    cr_expect_eq(cmd_key_next(d, 6, ok, ol, 2), 3);
    cr_expect_eq(cmd_key_next(d, 6, ok, ol, 3), 0);
    const char *bad[][3] = {{"sintercard", "0", "a"},
                            {"sintercard", "x", "a"},
                            {"sintercard", "2", "a"},
                            {"sintercard", "-1", "a"}};
    uint32_t bl[] = {10, 1, 1};
    for (int i = 0; i < 4; i++)
        cr_expect_eq(cmd_key_count(d, 3, bad[i], bl), -1, "numkeys %s", bad[i][1]);
}
