/*
 * t_stream_group.c - the store's consumer-group commands (D42, D46): the
 * writes XGROUP (CREATE, SETID, DESTROY, CREATECONSUMER, DELCONSUMER,
 * HELP), XACK and XREADGROUP (with its BLOCK waiters' serve), and the
 * reads XINFO GROUPS, XINFO CONSUMERS and XINFO STREAM FULL's groups
 * (XCLAIM and XAUTOCLAIM are t_stream_claim.c's). Store process only; a type
 * handler (calls core/sgroup.c, called by route.c) following route.c's
 * determinism rules: a consumer's times are the record's apply clock
 * (ctx->now, D14), so a replay makes the same groups.
 *
 * XGROUP's record holds the user's arguments unchanged; every check is
 * made here, in Redis 7.0's order (options, key, group, then the
 * subcommand's own), and a refused record changes nothing, live or on
 * replay.
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "pubsub.h"
#include "handlers.h"
#include "io_fault.h"
#include "resp.h"
#include "store/core/entry.h"
#include "store/core/object.h"
#include "store/core/sgroup.h"
#include "store/core/stream.h"
#include "store/core/watch.h"
#include "stream_ids.h"
#include "strutil.h"
#include "store/core/block.h"
#include "store/core/notify.h"

/* The COUNT of a blocked XREADGROUP given none (Redis 7.0's
 * XREAD_BLOCKED_DEFAULT_COUNT). */
#define XREADGROUP_BLOCKED_COUNT 1000

static const char *const xgroup_help[] = {
    "XGROUP <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "CREATE <key> <groupname> <id|$> [option]",
    "    Create a new consumer group. Options are:",
    "    * MKSTREAM",
    "      Create the empty stream if it does not exist.",
    "    * ENTRIESREAD entries_read",
    "      Set the group's entries_read counter (internal use).",
    "CREATECONSUMER <key> <groupname> <consumer>",
    "    Create a new consumer in the specified group.",
    "DELCONSUMER <key> <groupname> <consumer>",
    "    Remove the specified consumer.",
    "DESTROY <key> <groupname>",
    "    Remove the specified group.",
    "SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
    "    Set the current group ID and entries_read counter.",
    "HELP",
    "    Prints this help.",
};

static void reply_error(buf_t *r, const char *e)
{
    if (r) resp_error(r, e);
}

/* An error that echoes arguments: CR and LF become spaces, as Redis. */
static void reply_echoed_error(buf_t *r, char *msg)
{
    for (char *p = msg; *p; p++)
        if (*p == '\r' || *p == '\n') *p = ' ';
    resp_error(r, msg);
}

/* "-NOGROUP No such consumer group 'g' for key name 'k'" */
static void reply_nogroup(buf_t *r, const rec_arg_t *key, const rec_arg_t *group)
{
    if (!r) return;
    char msg[600];
    int gl = group->len < 256 ? (int)group->len : 256, kl = key->len < 256 ? (int)key->len : 256;
    snprintf(msg, sizeof(msg), "NOGROUP No such consumer group '%.*s' for key name '%.*s'", gl,
             (const char *)group->ptr, kl, (const char *)key->ptr);
    reply_echoed_error(r, msg);
}

static void reply_subcommand_syntax(buf_t *r, const rec_arg_t *sub)
{
    if (!r) return;
    char msg[300];
    int n = sub->len < 128 ? (int)sub->len : 128;
    snprintf(msg, sizeof(msg),
             "ERR unknown subcommand or wrong number of arguments for '%.*s'. Try XGROUP HELP.", n,
             (const char *)sub->ptr);
    reply_echoed_error(r, msg);
}

/* CREATE's MKSTREAM and CREATE's and SETID's ENTRIESREAD, from argument 4
 * on: 0, or -1 with the error replied. */
static int xgroup_options(const apply_args_t *a, int create, int setid, int *mkstream,
                          long long *entries_read, buf_t *r)
{
    for (uint16_t i = 4; i < a->argc;) {
        if (create && st_arg_is(&a->argv[i], "MKSTREAM")) {
            *mkstream = 1;
            i++;
        } else if ((create || setid) && st_arg_is(&a->argv[i], "ENTRIESREAD") && i + 1 < a->argc) {
            if (str_to_ll((const char *)a->argv[i + 1].ptr, a->argv[i + 1].len, entries_read)) {
                reply_error(r, "ERR value is not an integer or out of range");
                return -1;
            }
            if (*entries_read < 0 && *entries_read != SG_ENTRIES_UNKNOWN) {
                reply_error(r, "ERR value for ENTRIESREAD must be positive or -1");
                return -1;
            }
            i += 2;
        } else {
            reply_subcommand_syntax(r, &a->argv[0]);
            return -1;
        }
    }
    return 0;
}

/* The group's ID argument: "$" is the stream's last ID (0-0 when it is
 * not there yet). 0, or -1 with the error replied. */
static int group_id(const rec_arg_t *x, st_stream_t *s, int strict, st_sid_t *id, buf_t *r)
{
    if (x->len == 1 && x->ptr[0] == '$') {
        *id = s ? st_stream_meta(s)->last_id : (st_sid_t){0, 0};
        return 0;
    }
    if (st_parse_sid(x, strict, 0, id)) {
        reply_error(r, SID_ERR_INVALID);
        return -1;
    }
    return 0;
}

static void xgroup_help_reply(buf_t *r)
{
    if (!r) return;
    size_t n = sizeof(xgroup_help) / sizeof(xgroup_help[0]);
    resp_array(r, (long long)n);
    for (size_t i = 0; i < n; i++)
        resp_simple(r, xgroup_help[i]);
}

/* CMD_XGROUP: sub key group [id|consumer] [options], or HELP. */
void st_apply_xgroup(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    const rec_arg_t *sub = &a->argv[0];
    int create = st_arg_is(sub, "CREATE"), setid = st_arg_is(sub, "SETID"), mkstream = 0;
    long long entries_read = SG_ENTRIES_UNKNOWN;
    st_stream_t *s = NULL;
    idx_entry_t **slot = NULL;
    st_sgroup_t *g = NULL;
    if (a->argc >= 3) {
        if (xgroup_options(a, create, setid, &mkstream, &entries_read, r)) return;
        slot = st_find_live(a->db, &a->argv[1], ctx->now, 1);
        if (st_wrongtype(slot, ST_STREAM, r)) return;
        if (slot) s = st_ent_stream(*slot);
        if (s) g = sg_find(st_stream_groups(s), a->argv[2].ptr, a->argv[2].len);
    }
    if (a->argc >= 3 && !mkstream) {
        if (!s) {
            reply_error(r, "ERR The XGROUP subcommand requires the key to exist. Note that for "
                           "CREATE you may want to use the MKSTREAM option to create an empty "
                           "stream automatically.");
            return;
        }
        if (!g && (setid || st_arg_is(sub, "CREATECONSUMER") || st_arg_is(sub, "DELCONSUMER"))) {
            reply_nogroup(r, &a->argv[1], &a->argv[2]);
            return;
        }
    }
    if (a->argc == 1 && st_arg_is(sub, "HELP")) {
        xgroup_help_reply(r);
    } else if (create && a->argc >= 4 && a->argc <= 7) {
        st_sid_t id;
        if (group_id(&a->argv[3], s, 1, &id, r)) return;
        if (g) {
            reply_error(r, "BUSYGROUP Consumer Group name already exists");
            return;
        }
        if (!s) {
            s = st_stream_new();
            st_ent_store(a->db, NULL, st_ent_new_obj(&a->argv[1], (st_obj_t *)s, 0));
        }
        uint64_t before = st_stream_bytes(s);
        sg_create(st_stream_groups(s), a->argv[2].ptr, a->argv[2].len, id, entries_read);
        ctx->entry_bytes += st_stream_bytes(s) - before;
        st_key_changed_as(ctx, a, a->dbnum, &a->argv[1], PS_NOTIFY_STREAM, "xgroup-create");
        if (r) resp_simple(r, "OK");
    } else if (setid && (a->argc == 4 || a->argc == 6)) {
        st_sid_t id;
        if (group_id(&a->argv[3], s, 0, &id, r)) return;
        g->last_id = id;
        g->entries_read = entries_read;
        st_key_changed_as(ctx, a, a->dbnum, &a->argv[1], PS_NOTIFY_STREAM, "xgroup-setid");
        if (r) resp_simple(r, "OK");
    } else if (st_arg_is(sub, "DESTROY") && a->argc == 3) {
        if (g) {
            uint64_t before = st_stream_bytes(s);
            sg_destroy(st_stream_groups(s), g);
            ctx->entry_bytes -= before - st_stream_bytes(s);
            st_key_changed_as(ctx, a, a->dbnum, &a->argv[1], PS_NOTIFY_STREAM, "xgroup-destroy");
        }
        if (r) resp_integer(r, g ? 1 : 0);
    } else if (st_arg_is(sub, "CREATECONSUMER") && a->argc == 4) {
        int made = !sg_consumer(g, a->argv[3].ptr, a->argv[3].len);
        if (made) {
            uint64_t before = st_stream_bytes(s);
            sg_consumer_add(g, a->argv[3].ptr, a->argv[3].len, ctx->now);
            ctx->entry_bytes += st_stream_bytes(s) - before;
            st_key_changed_as(ctx, a, a->dbnum, &a->argv[1], PS_NOTIFY_STREAM,
                              "xgroup-createconsumer");
        }
        if (r) resp_integer(r, made);
    } else if (st_arg_is(sub, "DELCONSUMER") && a->argc == 4) {
        st_sconsumer_t *c = sg_consumer(g, a->argv[3].ptr, a->argv[3].len);
        uint64_t pending = 0;
        if (c) {
            uint64_t before = st_stream_bytes(s);
            pending = sg_consumer_del(g, c);
            ctx->entry_bytes -= before - st_stream_bytes(s);
            st_key_changed_as(ctx, a, a->dbnum, &a->argv[1], PS_NOTIFY_STREAM,
                              "xgroup-delconsumer");
        }
        if (r) resp_integer(r, (long long)pending);
    } else {
        reply_subcommand_syntax(r, sub);
    }
}

/* CMD_XACK key group id...: no key or group acknowledges nothing; the
 * IDs are all checked before any is removed (all or nothing, as Redis:
 * the reply cannot be an error once some were acknowledged). */
void st_apply_xack(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    idx_entry_t **slot = st_find_read(a->db, &a->argv[0], ctx->now, 1);
    if (st_wrongtype(slot, ST_STREAM, r)) return;
    st_stream_t *s = slot ? st_ent_stream(*slot) : NULL;
    st_sgroup_t *g = s ? sg_find(st_stream_groups(s), a->argv[1].ptr, a->argv[1].len) : NULL;
    if (!g) {
        if (r) resp_integer(r, 0);
        return;
    }
    st_sid_t id;
    for (uint16_t i = 2; i < a->argc; i++) {
        if (st_parse_sid(&a->argv[i], 1, 0, &id)) {
            reply_error(r, SID_ERR_INVALID);
            return;
        }
    }
    long long acked = 0;
    for (uint16_t i = 2; i < a->argc; i++) {
        st_parse_sid(&a->argv[i], 1, 0, &id);
        uint64_t at = sg_pel_lower(g, id);
        if (at == g->npel || st_sid_cmp(g->pel[at].id, id) != 0) continue;
        sg_pel_remove(g, at);
        acked++;
    }
    if (acked) st_key_changed(ctx, a, a->dbnum, &a->argv[0]);
    if (r) resp_integer(r, acked);
}

/* ---- reads ---- */

/* The stream at key for XINFO: NULL with the error replied when absent
 * or of another type. */
static st_stream_t *info_stream(const read_args_t *a, const rec_arg_t *key, buf_t *r)
{
    idx_entry_t **slot = st_find_live(a->db, key, a->now, 0);
    if (st_wrongtype(slot, ST_STREAM, r)) return NULL;
    if (!slot) {
        resp_error(r, "ERR no such key");
        return NULL;
    }
    return st_ent_stream(*slot);
}

/* 1 when an entry deleted by XDEL lies in [start, end] (Redis'
 * streamRangeHasTombstones). */
static int has_tombstones(st_stream_t *s, st_sid_t start, st_sid_t end)
{
    const st_stream_meta_t *m = st_stream_meta_c(s);
    uint64_t n = st_stream_len(s);
    if (!n || (m->max_deleted.ms == 0 && m->max_deleted.seq == 0)) return 0;
    if (st_sid_cmp(st_stream_id_at(s, 0), m->max_deleted) > 0) return 0;
    return st_sid_cmp(start, m->max_deleted) <= 0 && st_sid_cmp(end, m->max_deleted) >= 0;
}

/* The entries-read counter of ID id when it can be known, else
 * SG_ENTRIES_UNKNOWN (Redis' streamEstimateDistanceFromFirstEverEntry). */
static int64_t entries_before(st_stream_t *s, st_sid_t id)
{
    const st_stream_meta_t *m = st_stream_meta_c(s);
    uint64_t n = st_stream_len(s);
    if (!m->entries_added) return 0;
    int cmp_last = st_sid_cmp(id, m->last_id);
    if (!n && cmp_last < 1) return (int64_t)m->entries_added;
    if (cmp_last == 0) return (int64_t)m->entries_added;
    if (cmp_last > 0) return SG_ENTRIES_UNKNOWN;
    st_sid_t first = n ? st_stream_id_at(s, 0) : (st_sid_t){0, 0};
    int cmp_first = st_sid_cmp(id, first);
    int no_del = m->max_deleted.ms == 0 && m->max_deleted.seq == 0;
    if (no_del || st_sid_cmp(m->max_deleted, first) < 0) {
        if (cmp_first < 0) return (int64_t)(m->entries_added - n);
        if (cmp_first == 0) return (int64_t)(m->entries_added - n + 1);
    }
    return SG_ENTRIES_UNKNOWN;
}

/* A group's lag, or a null when it cannot be known (Redis'
 * streamReplyWithCGLag). */
static void reply_lag(buf_t *r, int proto, st_stream_t *s, const st_sgroup_t *g)
{
    const st_stream_meta_t *m = st_stream_meta_c(s);
    if (!m->entries_added) {
        resp_integer(r, 0);
        return;
    }
    if (g->entries_read != SG_ENTRIES_UNKNOWN &&
        !has_tombstones(s, g->last_id, (st_sid_t){UINT64_MAX, UINT64_MAX})) {
        resp_integer(r, (long long)m->entries_added - g->entries_read);
        return;
    }
    int64_t read = entries_before(s, g->last_id);
    if (read != SG_ENTRIES_UNKNOWN)
        resp_integer(r, (long long)m->entries_added - read);
    else
        resp_null3(r, proto);
}

/* The "entries-read" and "lag" fields of a group (XINFO GROUPS and
 * XINFO STREAM FULL). */
static void reply_read_and_lag(buf_t *r, int proto, st_stream_t *s, const st_sgroup_t *g)
{
    resp_bulk_cstr(r, "entries-read");
    if (g->entries_read != SG_ENTRIES_UNKNOWN)
        resp_integer(r, g->entries_read);
    else
        resp_null3(r, proto);
    resp_bulk_cstr(r, "lag");
    reply_lag(r, proto, s, g);
}

void st_xinfo_groups(const read_args_t *a, buf_t *r)
{
    st_stream_t *s = info_stream(a, &a->argv[1], r);
    if (!s) return;
    const st_sgroups_t *t = st_stream_groups(s);
    resp_array(r, t->n);
    for (uint32_t i = 0; i < t->n; i++) {
        const st_sgroup_t *g = t->g[i];
        resp_map(r, a->proto, 6);
        resp_bulk_cstr(r, "name");
        resp_bulk(r, g->name, g->nlen);
        resp_bulk_cstr(r, "consumers");
        resp_integer(r, g->nc);
        resp_bulk_cstr(r, "pending");
        resp_integer(r, (long long)g->npel);
        resp_bulk_cstr(r, "last-delivered-id");
        st_reply_sid(r, g->last_id);
        reply_read_and_lag(r, a->proto, s, g);
    }
}

void st_xinfo_consumers(const read_args_t *a, buf_t *r)
{
    st_stream_t *s = info_stream(a, &a->argv[1], r);
    if (!s) return;
    const st_sgroup_t *g = sg_find(st_stream_groups(s), a->argv[2].ptr, a->argv[2].len);
    if (!g) {
        reply_nogroup(r, &a->argv[1], &a->argv[2]);
        return;
    }
    resp_array(r, g->nc);
    for (uint32_t i = 0; i < g->nc; i++) {
        const st_sconsumer_t *c = g->c[i];
        int64_t idle = a->now - c->seen;
        resp_map(r, a->proto, 3);
        resp_bulk_cstr(r, "name");
        resp_bulk(r, c->name, c->nlen);
        resp_bulk_cstr(r, "pending");
        resp_integer(r, (long long)sg_consumer_pending(g, c));
        resp_bulk_cstr(r, "idle");
        resp_integer(r, idle > 0 ? idle : 0);
    }
}

/* XINFO STREAM FULL's "groups" value: each group with its PEL and its
 * consumers (each with its own pending entries), at most count pending
 * entries per list (0: all), as Redis 7.0.15. */
void st_xinfo_full_groups(buf_t *r, int proto, st_stream_t *s, uint64_t count)
{
    const st_sgroups_t *t = st_stream_groups(s);
    resp_array(r, t->n);
    for (uint32_t i = 0; i < t->n; i++) {
        const st_sgroup_t *g = t->g[i];
        uint64_t k = count && count < g->npel ? count : g->npel;
        resp_map(r, proto, 7);
        resp_bulk_cstr(r, "name");
        resp_bulk(r, g->name, g->nlen);
        resp_bulk_cstr(r, "last-delivered-id");
        st_reply_sid(r, g->last_id);
        reply_read_and_lag(r, proto, s, g);
        resp_bulk_cstr(r, "pel-count");
        resp_integer(r, (long long)g->npel);
        resp_bulk_cstr(r, "pending");
        resp_array(r, (long long)k);
        for (uint64_t p = 0; p < k; p++) {
            resp_array(r, 4);
            st_reply_sid(r, g->pel[p].id);
            resp_bulk(r, g->pel[p].owner->name, g->pel[p].owner->nlen);
            resp_integer(r, g->pel[p].delivered);
            resp_integer(r, (long long)g->pel[p].count);
        }
        resp_bulk_cstr(r, "consumers");
        resp_array(r, g->nc);
        for (uint32_t c = 0; c < g->nc; c++) {
            const st_sconsumer_t *sc = g->c[c];
            uint64_t mine = sg_consumer_pending(g, sc), n = count && count < mine ? count : mine;
            resp_map(r, proto, 4);
            resp_bulk_cstr(r, "name");
            resp_bulk(r, sc->name, sc->nlen);
            resp_bulk_cstr(r, "seen-time");
            resp_integer(r, sc->seen);
            resp_bulk_cstr(r, "pel-count");
            resp_integer(r, (long long)mine);
            resp_bulk_cstr(r, "pending");
            resp_array(r, (long long)n);
            for (uint64_t p = 0; p < g->npel && n; p++) {
                if (g->pel[p].owner != sc) continue;
                resp_array(r, 3);
                st_reply_sid(r, g->pel[p].id);
                resp_integer(r, g->pel[p].delivered);
                resp_integer(r, (long long)g->pel[p].count);
                n--;
            }
        }
    }
}

/* XPENDING key group [[IDLE ms] start end count [consumer]]: the
 * arguments are checked before the key (Redis' order). */
void st_read_xpending(store_ctx_t *ctx, const read_args_t *a, buf_t *r)
{
    (void)ctx;
    long long minidle = 0, count = 0;
    st_sid_t lo = {0, 0}, hi = {0, 0};
    const rec_arg_t *who = NULL;
    if (a->argc != 2 && (a->argc < 5 || a->argc > 8)) {
        resp_error(r, "ERR syntax error");
        return;
    }
    if (a->argc >= 5) {
        uint16_t at = 2;
        if (st_arg_is(&a->argv[2], "IDLE")) {
            if (str_to_ll((const char *)a->argv[3].ptr, a->argv[3].len, &minidle)) {
                resp_error(r, "ERR value is not an integer or out of range");
                return;
            }
            if (a->argc < 7) {
                resp_error(r, "ERR syntax error");
                return;
            }
            at += 2;
        }
        if (str_to_ll((const char *)a->argv[at + 2].ptr, a->argv[at + 2].len, &count)) {
            resp_error(r, "ERR value is not an integer or out of range");
            return;
        }
        if (count < 0) count = 0;
        if (st_parse_bound(&a->argv[at], 0, 1, &lo, r)) return;
        if (st_parse_bound(&a->argv[at + 1], UINT64_MAX, 0, &hi, r)) return;
        if (at + 3 < a->argc) who = &a->argv[at + 3];
    }
    idx_entry_t **slot = st_find_live(a->db, &a->argv[0], a->now, 0);
    if (st_wrongtype(slot, ST_STREAM, r)) return;
    st_sgroup_t *g =
        slot ? sg_find(st_stream_groups(st_ent_stream(*slot)), a->argv[1].ptr, a->argv[1].len)
             : NULL;
    if (!g) {
        char msg[600];
        int kl = a->argv[0].len < 256 ? (int)a->argv[0].len : 256;
        int gl = a->argv[1].len < 256 ? (int)a->argv[1].len : 256;
        snprintf(msg, sizeof(msg), "NOGROUP No such key '%.*s' or consumer group '%.*s'", kl,
                 (const char *)a->argv[0].ptr, gl, (const char *)a->argv[1].ptr);
        reply_echoed_error(r, msg);
        return;
    }
    if (a->argc == 2) {
        resp_array(r, 4);
        resp_integer(r, (long long)g->npel);
        if (!g->npel) {
            resp_null(r);
            resp_null(r);
            resp_null_array(r);
            return;
        }
        st_reply_sid(r, g->pel[0].id);
        st_reply_sid(r, g->pel[g->npel - 1].id);
        buf_t body;
        buf_init(&body);
        long long n = 0;
        for (uint32_t i = 0; i < g->nc; i++) {
            uint64_t k = sg_consumer_pending(g, g->c[i]);
            if (!k) continue;
            char t[24];
            resp_array(&body, 2);
            resp_bulk(&body, g->c[i]->name, g->c[i]->nlen);
            resp_bulk(&body, t, (size_t)snprintf(t, sizeof(t), "%llu", (unsigned long long)k));
            n++;
        }
        resp_array(r, n);
        buf_append(r, body.data, body.len);
        buf_free(&body);
        return;
    }
    const st_sconsumer_t *only = who ? sg_consumer(g, who->ptr, who->len) : NULL;
    if (who && !only) {
        resp_array(r, 0);
        return;
    }
    buf_t body;
    buf_init(&body);
    long long n = 0;
    for (uint64_t i = sg_pel_lower(g, lo); count && i < g->npel; i++) {
        const st_spending_t *p = &g->pel[i];
        if (st_sid_cmp(p->id, hi) > 0) break;
        if (only && p->owner != only) continue;
        int64_t idle = a->now - p->delivered;
        if (idle < 0) idle = 0;
        if (minidle && idle < minidle) continue;
        resp_array(&body, 4);
        st_reply_sid(&body, p->id);
        resp_bulk(&body, p->owner->name, p->owner->nlen);
        resp_integer(&body, idle);
        resp_integer(&body, (long long)p->count);
        n++;
        count--;
    }
    resp_array(r, n);
    buf_append(r, body.data, body.len);
    buf_free(&body);
}

/* ---- XREADGROUP (D46) ---- */

/* The entries of s above the group's last delivered ID, at most count
 * (0: all), delivered to c at the record's time: the group's last ID and
 * entries-read move past each (Redis' streamReplyWithRange), and unless
 * noack each becomes pending for c (one already pending, after an XGROUP
 * SETID back, changes hands and counts one delivery). The array into r
 * (NULL: replay). */
static void deliver_new(store_ctx_t *ctx, st_stream_t *s, st_sgroup_t *g, st_sconsumer_t *c,
                        uint64_t count, int noack, buf_t *r)
{
    const st_stream_meta_t *m = st_stream_meta_c(s);
    uint64_t at = 0, n = 0, len = st_stream_len(s);
    if (st_sid_cmp(g->last_id, SID_MAX) < 0) {
        at = st_stream_lower(s, st_sid_after(g->last_id));
        n = len - at;
    }
    if (count && n > count) n = count;
    uint64_t before = st_stream_bytes(s);
    if (r) resp_array(r, (long long)n);
    st_stream_iter_t it;
    const st_sentry_t *e;
    st_stream_iter_init(&it, s, at, n, 0);
    while ((e = st_stream_next(&it))) {
        if (st_sid_cmp(e->id, g->last_id) > 0) {
            if (g->entries_read != SG_ENTRIES_UNKNOWN && !has_tombstones(s, e->id, SID_MAX))
                g->entries_read++;
            else if (m->entries_added)
                g->entries_read = entries_before(s, e->id);
            g->last_id = e->id;
        }
        if (r) st_reply_entry(r, e);
        if (noack) continue;
        st_spending_t *p = sg_pel_find(g, e->id);
        if (p)
            *p = (st_spending_t){e->id, c, ctx->now, 1};
        else
            sg_pel_add(g, e->id, c, ctx->now);
    }
    st_stream_iter_free(&it);
    ctx->entry_bytes += st_stream_bytes(s) - before;
}

/* c's own pending entries from ID from on, at most count (0: all): each
 * still in the stream is delivered once more at the record's time; one
 * deleted since is [id, null] and keeps its counters, as Redis 7.0. */
static void deliver_history(store_ctx_t *ctx, st_stream_t *s, st_sgroup_t *g,
                            const st_sconsumer_t *c, st_sid_t from, uint64_t count, int proto,
                            buf_t *r)
{
    buf_t body;
    buf_init(&body);
    uint64_t n = 0;
    for (uint64_t i = sg_pel_lower(g, from); i < g->npel && (!count || n < count); i++) {
        st_spending_t *p = &g->pel[i];
        if (p->owner != c) continue;
        const st_sentry_t *e = st_entry_of(s, p->id);
        if (e) {
            st_reply_entry(&body, e);
            p->delivered = ctx->now;
            p->count++;
        } else {
            resp_array(&body, 2);
            st_reply_sid(&body, p->id);
            resp_null_array3(&body, proto);
        }
        n++;
    }
    if (r) {
        resp_array(r, (long long)n);
        buf_append(r, body.data, body.len);
    }
    buf_free(&body);
}

/* The consumer named name of g, made (with its keyspace event) when it
 * is not there; seen now either way (Redis' streamLookupConsumer and
 * streamCreateConsumer). */
static st_sconsumer_t *consumer_seen(store_ctx_t *ctx, st_stream_t *s, st_sgroup_t *g,
                                     unsigned dbnum, const rec_arg_t *key, const void *name,
                                     uint32_t len)
{
    st_sconsumer_t *c = sg_consumer(g, name, len);
    if (!c) {
        uint64_t before = st_stream_bytes(s);
        c = sg_consumer_add(g, name, len, ctx->now);
        ctx->entry_bytes += st_stream_bytes(s) - before;
        st_notify_note(ctx, dbnum, key, PS_NOTIFY_STREAM, "xgroup-createconsumer");
    }
    c->seen = ctx->now;
    return c;
}

/* XREADGROUP's NOGROUP error for key. */
static void reply_nogroup_read(buf_t *r, const rec_arg_t *key, const rec_arg_t *group)
{
    if (!r) return;
    char msg[600];
    int kl = key->len < 256 ? (int)key->len : 256, gl = group->len < 256 ? (int)group->len : 256;
    snprintf(msg, sizeof(msg),
             "NOGROUP No such key '%.*s' or consumer group '%.*s' in XREADGROUP with GROUP option",
             kl, (const char *)key->ptr, gl, (const char *)group->ptr);
    reply_echoed_error(r, msg);
}

/* XREADGROUP's per stream checks, in Redis 7.0.15's order: its type, its
 * group, its ID ("$" refused, ">" new entries as SID_MAX, else the
 * consumer's history from above it; "-" and "+" are no IDs here, and the
 * largest ID written out reads as ">", Redis' marker). 0, or -1 with the
 * error replied. */
static int readgroup_check(store_ctx_t *ctx, const apply_args_t *a, const rec_arg_t *key,
                           const rec_arg_t *group, const rec_arg_t *id, st_sid_t *gt, buf_t *r)
{
    idx_entry_t **slot = st_find_live(a->db, key, ctx->now, 1);
    if (st_wrongtype(slot, ST_STREAM, r)) return -1;
    if (!slot || !sg_find(st_stream_groups(st_ent_stream(*slot)), group->ptr, group->len)) {
        reply_nogroup_read(r, key, group);
        return -1;
    }
    if (id->len == 1 && id->ptr[0] == '$') {
        reply_error(r, "ERR The $ ID is meaningless in the context of XREADGROUP: you want to "
                       "read the history of this consumer by specifying a proper ID, or use the "
                       "> ID to get new messages. The $ ID would just return an empty result "
                       "set.");
        return -1;
    }
    if (id->len == 1 && id->ptr[0] == '>') {
        *gt = SID_MAX;
    } else if (st_parse_sid(id, 1, 0, gt)) {
        reply_error(r, SID_ERR_INVALID);
        return -1;
    }
    return 0;
}

/* No stream answered and BLOCK was given: the client waits on every key
 * (its waiter keeps the group and the consumer in its dst word), or, in
 * a transaction, gets the null array. */
static void readgroup_wait(store_ctx_t *ctx, const apply_args_t *a, const sid_xread_args_t *o,
                           const rec_arg_t *keys, int proto, buf_t *r)
{
    const rec_arg_t *group = &a->argv[5 + o->group_at], *consumer = group + 1;
    buf_t names;
    buf_init(&names);
    unsigned char glen[4];
    cmd_put_u32(glen, group->len);
    buf_append(&names, glen, 4);
    buf_append(&names, group->ptr, group->len);
    buf_append(&names, consumer->ptr, consumer->len);
    st_waiter_spec_t sp = {.client_id = (uint64_t)cmd_get_i64(a->argv[0].ptr),
                           .proto = (uint8_t)proto,
                           .right = (uint8_t)o->noack,
                           .kind = ST_BLOCK_STREAM_GROUP,
                           .count = o->count ? o->count : XREADGROUP_BLOCKED_COUNT,
                           .nkeys = (uint32_t)o->nstreams,
                           .keys = keys,
                           .dst = {(const unsigned char *)names.data, (uint32_t)names.len}};
    st_block_wait(ctx, a, &sp, r);
    buf_free(&names);
    if (r && !ctx->in_exec && io_fault_point(IO_FAULT_XRG_PARKED) == IO_FAULT_KILL) raise(SIGKILL);
}

/* CMD_XREADGROUP client proto 0 kind 0 GROUP g c [options] STREAMS
 * key... id... (CMD_BLPOP's head; the frontend checked the options).
 * Nothing changes before every stream passed readgroup_check. A history
 * always answers, ">" when the stream has entries above the group's last
 * ID; the consumer is made or seen on each stream that answers (7.0.15:
 * a read that waits makes none until it is served). None answered: with
 * BLOCK the client waits, else a null array. It is no WATCHed change
 * (Redis signals none). */
void st_apply_xreadgroup(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    int proto = (int)cmd_get_u32(a->argv[1].ptr);
    const rec_arg_t *w = &a->argv[5];
    uint16_t nw = (uint16_t)(a->argc - 5);
    const char **pv, *err;
    uint32_t *lv;
    sid_xread_args_t o;
    st_args_arrays(w, nw, &pv, &lv);
    int bad = sid_xread_parse(nw, pv, lv, 1, &o, &err);
    free(pv);
    free(lv);
    if (bad) {
        reply_error(r, err);
        return;
    }
    const rec_arg_t *keys = &w[o.streams_at], *ids = keys + o.nstreams;
    const rec_arg_t *group = &w[o.group_at], *consumer = group + 1;
    uint32_t n = (uint32_t)o.nstreams;
    st_sid_t *gt = st_xmalloc(sizeof(*gt) * n);
    for (uint32_t i = 0; i < n; i++)
        if (readgroup_check(ctx, a, &keys[i], group, &ids[i], &gt[i], r)) goto done;
    buf_t body;
    buf_init(&body);
    uint32_t served = 0;
    for (uint32_t i = 0; i < n; i++) {
        st_stream_t *s = st_ent_stream(*st_find_live(a->db, &keys[i], ctx->now, 1));
        st_sgroup_t *g = sg_find(st_stream_groups(s), group->ptr, group->len);
        int history = st_sid_cmp(gt[i], SID_MAX) != 0;
        uint64_t len = st_stream_len(s);
        int serve = history || (len && st_sid_cmp(st_stream_id_at(s, len - 1), g->last_id) > 0);
        if (!serve) continue;
        st_sconsumer_t *c =
            consumer_seen(ctx, s, g, a->dbnum, &keys[i], consumer->ptr, consumer->len);
        served++;
        if (proto != 3) resp_array(&body, 2);
        resp_bulk(&body, keys[i].ptr, keys[i].len);
        if (history)
            deliver_history(ctx, s, g, c, st_sid_after(gt[i]), (uint64_t)o.count, proto, &body);
        else
            deliver_new(ctx, s, g, c, (uint64_t)o.count, o.noack, &body);
    }
    if (served && r) {
        if (proto == 3)
            resp_map(r, 3, served);
        else
            resp_array(r, served);
        buf_append(r, body.data, body.len);
    } else if (!served && o.block_ms >= 0) {
        readgroup_wait(ctx, a, &o, keys, proto, r);
    } else if (!served && r) {
        resp_null_array3(r, proto);
    }
    buf_free(&body);
done:
    free(gt);
}

/* A waiter of XREADGROUP ... BLOCK on key (core/block.c, after a record
 * touched the key): the key gone or of another type answers -UNBLOCKED,
 * its group gone -NOGROUP (both as Redis 7.0.15); no entry above the
 * group's last ID passes it over (waiters of other groups behind it may
 * be served); else it is served as the ">" read it was, at the serving
 * record's time. */
int st_stream_group_serve(store_ctx_t *ctx, const apply_args_t *a, st_waiter_t *w,
                          const rec_arg_t *key, buf_t *r)
{
    idx_entry_t **slot = st_find_live(a->db, key, ctx->now, 1);
    if (!slot || st_ent_type(*slot) != ST_STREAM) {
        reply_error(r, "UNBLOCKED the stream key no longer exists");
        return ST_REFUSED;
    }
    st_stream_t *s = st_ent_stream(*slot);
    uint32_t glen = cmd_get_u32(w->dst.ptr);
    const unsigned char *gname = w->dst.ptr + 4, *cname = gname + glen;
    st_sgroup_t *g = sg_find(st_stream_groups(s), gname, glen);
    if (!g) {
        reply_error(r, "NOGROUP the consumer group this client was blocked on no longer exists");
        return ST_REFUSED;
    }
    if (st_sid_cmp(st_stream_meta_c(s)->last_id, g->last_id) <= 0) return ST_PASSED;
    st_sconsumer_t *c = consumer_seen(ctx, s, g, a->dbnum, key, cname, w->dst.len - 4 - glen);
    if (r) st_reply_served_key(r, w->proto, key);
    deliver_new(ctx, s, g, c, (uint64_t)w->count, w->right, r);
    if (r && io_fault_point(IO_FAULT_XRG_SERVED) == IO_FAULT_KILL) raise(SIGKILL);
    return ST_SERVED;
}
