/*
 * t_stream.c - the store's stream commands (handlers.h): the writes XADD,
 * XTRIM, XDEL, XSETID, the reads XLEN, XRANGE, XREVRANGE, XREAD and XINFO
 * STREAM, and XREAD BLOCK's record (CMD_XREADBLOCK) and waiters (D46).
 * Store process only; a type handler (calls core/, called by route.c)
 * following route.c's determinism rules.
 *
 * Records hold the user's arguments unchanged. An ID of "*" is resolved
 * here with the record's apply clock (ctx->now, D14), never the wall
 * clock, so a replay generates the same IDs; when that clock is not past
 * the last ID's milliseconds the ID is the last one's sequence plus one,
 * as Redis does when its clock goes backwards. The options are parsed by
 * common/streamid.c, the same code the frontend used to refuse bad input
 * (D39). An emptied stream stays, as in Redis.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "handlers.h"
#include "resp.h"
#include "store/core/alloc.h"
#include "store/core/block.h"
#include "store/core/entry.h"
#include "store/core/object.h"
#include "store/core/sgroup.h"
#include "store/core/stream.h"
#include "store/core/watch.h"
#include "stream_ids.h"
#include "streamid.h"
#include "strutil.h"
#include "pubsub.h"

#define ERR_NOT_INT "ERR value is not an integer or out of range"

static int trim_parse(const rec_arg_t *argv, uint16_t argc, int xadd, sid_trim_args_t *o,
                      const char **err)
{
    const char **p;
    uint32_t *n;
    st_args_arrays(argv, argc, &p, &n);
    int rc = sid_trim_parse(argc, p, n, xadd, o, err);
    free(p);
    free(n);
    return rc;
}

#define parse_id st_parse_sid
#define reply_id st_reply_sid

#define reply_entry st_reply_entry

static void account(store_ctx_t *ctx, const st_stream_t *s, uint64_t before)
{
    ctx->entry_bytes += st_stream_bytes(s) - before;
}

/* How many entries a trim removes from the head. An approximate trim
 * removes whole blocks of 100 entries (Redis' nodes at
 * stream-node-max-entries 100), at most limit entries when limit > 0. */
static uint64_t trim_count(st_stream_t *s, const sid_trim_args_t *o)
{
    uint64_t n = st_stream_len(s), k;
    if (o->strategy == STRIM_MAXLEN)
        k = n > (uint64_t)o->maxlen ? n - (uint64_t)o->maxlen : 0;
    else
        k = st_stream_lower(s, (st_sid_t){o->minid_ms, o->minid_seq});
    if (o->approx) {
        k -= k % 100;
        if (o->limit > 0 && k > (uint64_t)o->limit)
            k = (uint64_t)o->limit - (uint64_t)o->limit % 100;
    }
    return k;
}

/* The ID XADD gives: an error text, or NULL with *id set. */
static const char *next_id(store_ctx_t *ctx, const st_stream_meta_t *m, const sid_trim_args_t *o,
                           st_sid_t *id)
{
    static const char *const edom =
        "ERR The ID specified in XADD is equal or smaller than the target stream top item";
    st_sid_t last = m->last_id;
    if (st_sid_cmp(last, SID_MAX) == 0)
        return "ERR The stream has exhausted the last possible ID, unable to add more items";
    if (o->id_given && o->seq_given) {
        *id = (st_sid_t){o->id_ms, o->id_seq};
        return st_sid_cmp(*id, last) > 0 ? NULL : edom;
    }
    if (o->id_given) { /* ms-* */
        if (o->id_ms < last.ms || (o->id_ms == last.ms && last.seq == UINT64_MAX)) return edom;
        *id = (st_sid_t){o->id_ms, o->id_ms == last.ms ? last.seq + 1 : 0};
        return NULL;
    }
    uint64_t now = ctx->now > 0 ? (uint64_t)ctx->now : 0;
    if (now > last.ms)
        *id = (st_sid_t){now, 0};
    else if (last.seq < UINT64_MAX)
        *id = (st_sid_t){last.ms, last.seq + 1};
    else
        *id = (st_sid_t){last.ms + 1, 0};
    return NULL;
}

/* ---- writes ---- */

/* CMD_XADD: XADD's arguments. */
void st_apply_xadd(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    sid_trim_args_t o;
    const char *err;
    if (trim_parse(a->argv, a->argc, 1, &o, &err)) {
        if (r) resp_error(r, err);
        return;
    }
    if (o.id_given && o.seq_given && o.id_ms == 0 && o.id_seq == 0) {
        if (r) resp_error(r, "ERR The ID specified in XADD must be greater than 0-0");
        return;
    }
    idx_entry_t **slot = st_find_live(a->db, &a->argv[0], ctx->now, 1);
    if (st_wrongtype(slot, ST_STREAM, r)) return;
    if (!slot && o.nomkstream) {
        if (r) resp_null(r);
        return;
    }
    st_stream_meta_t zero = {0};
    st_sid_t id;
    err = next_id(ctx, slot ? st_stream_meta(st_ent_stream(*slot)) : &zero, &o, &id);
    if (err) {
        if (r) resp_error(r, err);
        return;
    }
    st_stream_t *s;
    if (slot) {
        s = st_ent_stream(*slot);
    } else {
        s = st_stream_new();
        st_ent_store(a->db, NULL, st_ent_new_obj(&a->argv[0], (st_obj_t *)s, 0));
    }
    uint64_t before = st_stream_bytes(s);
    int first = o.id_at + 1;
    st_stream_append(ctx, s, id, &a->argv[first], (uint32_t)(a->argc - first));
    uint64_t trimmed = o.strategy != STRIM_NONE ? trim_count(s, &o) : 0;
    if (trimmed) st_stream_drop_head(ctx, s, trimmed);
    account(ctx, s, before);
    st_key_changed(ctx, a, a->dbnum, &a->argv[0]);
    if (trimmed) st_key_changed_as(ctx, a, a->dbnum, &a->argv[0], PS_NOTIFY_STREAM, "xtrim");
    if (r) reply_id(r, id);
}

/* CMD_XTRIM: XTRIM's arguments. */
void st_apply_xtrim(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    sid_trim_args_t o;
    const char *err;
    if (trim_parse(a->argv, a->argc, 0, &o, &err)) {
        if (r) resp_error(r, err);
        return;
    }
    idx_entry_t **slot = st_find_live(a->db, &a->argv[0], ctx->now, 1);
    if (st_wrongtype(slot, ST_STREAM, r)) return;
    uint64_t k = 0;
    if (slot) {
        st_stream_t *s = st_ent_stream(*slot);
        uint64_t before = st_stream_bytes(s);
        k = trim_count(s, &o);
        st_stream_drop_head(ctx, s, k);
        account(ctx, s, before);
        if (k) st_key_changed(ctx, a, a->dbnum, &a->argv[0]);
    }
    if (r) resp_integer(r, (long long)k);
}

/* CMD_XDEL key id...: the key is looked up before the IDs are checked,
 * as Redis does. */
void st_apply_xdel(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    idx_entry_t **slot = st_find_live(a->db, &a->argv[0], ctx->now, 1);
    if (!slot) {
        if (r) resp_integer(r, 0);
        return;
    }
    if (st_wrongtype(slot, ST_STREAM, r)) return;
    st_sid_t *ids = st_xmalloc(sizeof(*ids) * a->argc);
    for (uint16_t i = 1; i < a->argc; i++) {
        if (parse_id(&a->argv[i], 1, 0, &ids[i])) {
            free(ids);
            if (r) resp_error(r, SID_ERR_INVALID);
            return;
        }
    }
    st_stream_t *s = st_ent_stream(*slot);
    st_stream_meta_t *m = st_stream_meta(s);
    uint64_t before = st_stream_bytes(s);
    long long deleted = 0;
    for (uint16_t i = 1; i < a->argc; i++) {
        uint64_t at = st_stream_lower(s, ids[i]);
        if (at == st_stream_len(s) || st_sid_cmp(st_stream_id_at(s, at), ids[i]) != 0) continue;
        st_stream_remove(ctx, s, at);
        if (st_sid_cmp(ids[i], m->max_deleted) > 0) m->max_deleted = ids[i];
        deleted++;
    }
    free(ids);
    account(ctx, s, before);
    if (deleted) st_key_changed(ctx, a, a->dbnum, &a->argv[0]);
    if (r) resp_integer(r, deleted);
}

/* CMD_XSETID key last-id [ENTRIESADDED n] [MAXDELETEDID id]: options
 * first, then the key (Redis' order). */
void st_apply_xsetid(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    st_sid_t id, maxdel = {0, 0};
    long long added = -1;
    if (parse_id(&a->argv[1], 1, 0, &id)) {
        if (r) resp_error(r, SID_ERR_INVALID);
        return;
    }
    for (uint16_t i = 2; i < a->argc; i += 2) {
        int more = a->argc - 1 - i;
        if (st_arg_is(&a->argv[i], "ENTRIESADDED") && more) {
            if (str_to_ll((const char *)a->argv[i + 1].ptr, a->argv[i + 1].len, &added)) {
                if (r) resp_error(r, ERR_NOT_INT);
                return;
            }
            if (added < 0) {
                if (r) resp_error(r, "ERR entries_added must be positive");
                return;
            }
        } else if (st_arg_is(&a->argv[i], "MAXDELETEDID") && more) {
            if (parse_id(&a->argv[i + 1], 1, 0, &maxdel)) {
                if (r) resp_error(r, SID_ERR_INVALID);
                return;
            }
            if (st_sid_cmp(id, maxdel) < 0) {
                if (r)
                    resp_error(r, "ERR The ID specified in XSETID is smaller than the provided "
                                  "max_deleted_entry_id");
                return;
            }
        } else {
            if (r) resp_error(r, "ERR syntax error");
            return;
        }
    }
    idx_entry_t **slot = st_find_live(a->db, &a->argv[0], ctx->now, 1);
    if (!slot) {
        if (r) resp_error(r, "ERR no such key");
        return;
    }
    if (st_wrongtype(slot, ST_STREAM, r)) return;
    st_stream_t *s = st_ent_stream(*slot);
    st_stream_meta_t *m = st_stream_meta(s);
    const char *err = NULL;
    uint64_t n = st_stream_len(s);
    /* Redis 7.0.15 does not compare the ID with the stream's own max
     * deleted ID (later versions do). */
    if (n && st_sid_cmp(id, st_stream_id_at(s, n - 1)) < 0)
        err = "ERR The ID specified in XSETID is smaller than the target stream top item";
    else if (n && added != -1 && n > (uint64_t)added)
        err = "ERR The entries_added specified in XSETID is smaller than the target stream "
              "length";
    if (err) {
        if (r) resp_error(r, err);
        return;
    }
    m->last_id = id;
    if (added != -1) m->entries_added = (uint64_t)added;
    if (maxdel.ms || maxdel.seq) m->max_deleted = maxdel;
    st_key_changed(ctx, a, a->dbnum, &a->argv[0]);
    if (r) resp_simple(r, "OK");
}

/* ---- reads ---- */

/* The stream at key for a read: NULL when absent (nothing replied) or of
 * another type (WRONGTYPE replied: *wrong set). */
static st_stream_t *read_stream(const read_args_t *a, const rec_arg_t *key, int *wrong, buf_t *r)
{
    idx_entry_t **slot = st_find_live(a->db, key, a->now, 0);
    *wrong = st_wrongtype(slot, ST_STREAM, r);
    return slot && !*wrong ? st_ent_stream(*slot) : NULL;
}

void st_read_xlen(store_ctx_t *ctx, const read_args_t *a, buf_t *r)
{
    (void)ctx;
    int wrong;
    st_stream_t *s = read_stream(a, &a->argv[0], &wrong, r);
    if (!wrong) resp_integer(r, s ? (long long)st_stream_len(s) : 0);
}

/* A range of at least this many entries of a stream with pages goes out
 * in parts where parts may go (D64): smaller ones are cheaper whole. */
#define RANGE_PARTS_MIN 1000u

/* The entries of s in [lo, hi] (reversed: from hi down), at most count
 * (0: all), as an array; in parts when parts is set and the range is
 * large (XRANGE, XREVRANGE: one range is the whole reply). */
static void reply_range(store_ctx_t *ctx, buf_t *r, st_stream_t *s, st_sid_t lo, st_sid_t hi,
                        int rev, uint64_t count, int parts)
{
    uint64_t from = st_stream_lower(s, lo);
    uint64_t to =
        st_sid_cmp(hi, SID_MAX) == 0 ? st_stream_len(s) : st_stream_lower(s, st_sid_after(hi));
    uint64_t n = to > from ? to - from : 0;
    if (count && n > count) n = count;
    uint64_t start = rev ? to - 1 : from;
    if (parts && n >= RANGE_PARTS_MIN && ctx->reply_stream_ok && !ctx->reply_stream &&
        st_stream_has_pages(s)) {
        size_t mark = r->len;
        resp_array(r, (long long)n);
        ctx->reply_stream = st_stream_range_snapshot(s, start, n, rev);
        if (ctx->reply_stream) return;
        r->len = mark;
    }
    buf_t body;
    buf_init(&body);
    st_stream_iter_t it;
    const st_sentry_t *e;
    st_stream_iter_init(&it, s, start, n, rev);
    while ((e = st_stream_next(&it)))
        reply_entry(&body, e);
    st_stream_iter_free(&it);
    st_reply_array_of(ctx, r, n, &body);
    buf_free(&body);
}

/* XRANGE key start end [COUNT n], XREVRANGE key end start [COUNT n]. */
static void range(store_ctx_t *ctx, const read_args_t *a, buf_t *r, int rev)
{
    st_sid_t lo, hi;
    if (st_parse_bound(&a->argv[rev ? 2 : 1], 0, 1, &lo, r)) return;
    if (st_parse_bound(&a->argv[rev ? 1 : 2], UINT64_MAX, 0, &hi, r)) return;
    long long count = -1;
    for (uint16_t j = 3; j < a->argc; j++) {
        if (st_arg_is(&a->argv[j], "COUNT") && a->argc - j - 1 >= 1) {
            if (str_to_ll((const char *)a->argv[j + 1].ptr, a->argv[j + 1].len, &count)) {
                resp_error(r, ERR_NOT_INT);
                return;
            }
            if (count < 0) count = 0;
            j++;
        } else {
            resp_error(r, "ERR syntax error");
            return;
        }
    }
    int wrong;
    st_stream_t *s = read_stream(a, &a->argv[0], &wrong, r);
    if (wrong) return;
    if (!s) {
        resp_array(r, 0);
        return;
    }
    if (count == 0) {
        resp_null_array(r);
        return;
    }
    if (st_sid_cmp(lo, hi) > 0) {
        resp_array(r, 0);
        return;
    }
    reply_range(ctx, r, s, lo, hi, rev, count < 0 ? 0 : (uint64_t)count, 1);
}

void st_read_xrange(store_ctx_t *ctx, const read_args_t *a, buf_t *r)
{
    range(ctx, a, r, 0);
}

void st_read_xrevrange(store_ctx_t *ctx, const read_args_t *a, buf_t *r)
{
    range(ctx, a, r, 1);
}

static const char *const xinfo_help[] = {
    "XINFO <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "CONSUMERS <key> <groupname>",
    "    Show consumers of <groupname>.",
    "GROUPS <key>",
    "    Show the stream consumer groups.",
    "STREAM <key> [FULL [COUNT <count>]",
    "    Show information about the stream.",
    "HELP",
    "    Prints this help.",
};

/* Redis' radix tree counts for a stream whose nodes hold 100 entries
 * (stream-node-max-entries): exact for streams up to 100 entries. */
static void tree_counts(uint64_t n, long long *keys, long long *nodes)
{
    *keys = (long long)((n + 99) / 100);
    *nodes = *keys + 1;
}

/* XINFO STREAM key [FULL [COUNT n]] (argv[0] is "STREAM"). */
static void xinfo_stream(store_ctx_t *ctx, const read_args_t *a, buf_t *r)
{
    static const char *const usage =
        "ERR unknown subcommand or wrong number of arguments for 'stream'. Try XINFO HELP.";
    int full = 0;
    long long count = 10;
    if (a->argc > 2) {
        if (!st_arg_is(&a->argv[2], "FULL") || (a->argc != 3 && a->argc != 5) ||
            (a->argc == 5 && !st_arg_is(&a->argv[3], "COUNT"))) {
            resp_error(r, usage);
            return;
        }
        full = 1;
        if (a->argc == 5 && str_to_ll((const char *)a->argv[4].ptr, a->argv[4].len, &count)) {
            resp_error(r, ERR_NOT_INT);
            return;
        }
    }
    int wrong;
    st_stream_t *s = read_stream(a, &a->argv[1], &wrong, r);
    if (wrong) return;
    if (!s) {
        resp_error(r, "ERR no such key");
        return;
    }
    const st_stream_meta_t *m = st_stream_meta_c(s);
    uint64_t n = st_stream_len(s);
    long long keys, nodes;
    tree_counts(n, &keys, &nodes);
    buf_t body;
    buf_init(&body);
    resp_map(&body, a->proto, full ? 9 : 10);
    resp_bulk_cstr(&body, "length");
    resp_integer(&body, (long long)n);
    resp_bulk_cstr(&body, "radix-tree-keys");
    resp_integer(&body, keys);
    resp_bulk_cstr(&body, "radix-tree-nodes");
    resp_integer(&body, nodes);
    resp_bulk_cstr(&body, "last-generated-id");
    reply_id(&body, m->last_id);
    resp_bulk_cstr(&body, "max-deleted-entry-id");
    reply_id(&body, m->max_deleted);
    resp_bulk_cstr(&body, "entries-added");
    resp_integer(&body, (long long)m->entries_added);
    resp_bulk_cstr(&body, "recorded-first-entry-id");
    reply_id(&body, n ? st_stream_id_at(s, 0) : (st_sid_t){0, 0});
    if (full) {
        uint64_t k = count <= 0 || (uint64_t)count > n ? n : (uint64_t)count;
        resp_bulk_cstr(&body, "entries");
        resp_array(&body, (long long)k);
        st_stream_iter_t it;
        const st_sentry_t *e;
        st_stream_iter_init(&it, s, 0, k, 0);
        while ((e = st_stream_next(&it)))
            reply_entry(&body, e);
        st_stream_iter_free(&it);
        resp_bulk_cstr(&body, "groups");
        st_xinfo_full_groups(&body, a->proto, s, count <= 0 ? 0 : (uint64_t)count);
    } else {
        resp_bulk_cstr(&body, "groups");
        resp_integer(&body, st_stream_groups(s)->n);
        resp_bulk_cstr(&body, "first-entry");
        if (n)
            reply_entry(&body, st_stream_at(s, 0));
        else
            resp_null(&body);
        resp_bulk_cstr(&body, "last-entry");
        if (n)
            reply_entry(&body, st_stream_at(s, n - 1));
        else
            resp_null(&body);
    }
    (void)ctx;
    buf_append(r, body.data, body.len);
    buf_free(&body);
}

/* XINFO STREAM ..., XINFO HELP, XINFO GROUPS and CONSUMERS
 * (t_stream_group.c; the frontend checked their arity). */
void st_read_xinfo(store_ctx_t *ctx, const read_args_t *a, buf_t *r)
{
    if (st_arg_is(&a->argv[0], "STREAM")) {
        if (a->argc < 2) {
            resp_error(r, "ERR wrong number of arguments for 'xinfo|stream' command");
            return;
        }
        xinfo_stream(ctx, a, r);
    } else if (st_arg_is(&a->argv[0], "GROUPS")) {
        st_xinfo_groups(a, r);
    } else if (st_arg_is(&a->argv[0], "CONSUMERS")) {
        st_xinfo_consumers(a, r);
    } else if (st_arg_is(&a->argv[0], "HELP") && a->argc == 1) {
        size_t n = sizeof(xinfo_help) / sizeof(xinfo_help[0]);
        resp_array(r, (long long)n);
        for (size_t i = 0; i < n; i++)
            resp_simple(r, xinfo_help[i]);
    } else if (st_arg_is(&a->argv[0], "HELP")) {
        resp_error(r, "ERR wrong number of arguments for 'xinfo|help' command");
    } else {
        char msg[256];
        size_t len = a->argv[0].len < 128 ? a->argv[0].len : 128;
        snprintf(msg, sizeof(msg), "ERR unknown subcommand '%.*s'. Try XINFO HELP.", (int)len,
                 (const char *)a->argv[0].ptr);
        for (char *p = msg; *p; p++)
            if (*p == '\r' || *p == '\n') *p = ' ';
        resp_error(r, msg);
    }
}

/* XREAD's words (after the name, options parsed into o) against the
 * streams as they are now (the read's clock, or the record's): when some
 * stream has entries above its ID ("$": the stream's last ID), the answer
 * into r and 1; when none has, nothing replied, 0, and ids[] holds each
 * stream's ID as resolved (a waiter's, D46); -1 with an error replied. */
static int xread_answer(store_ctx_t *ctx, const read_args_t *a, const sid_xread_args_t *o,
                        st_sid_t *ids, buf_t *r)
{
    const rec_arg_t *keys = &a->argv[o->streams_at], *idv = keys + o->nstreams;
    uint16_t n = (uint16_t)o->nstreams;
    st_stream_t **ss = st_xmalloc(sizeof(*ss) * (n ? n : 1));
    int rc = -1;
    for (uint16_t i = 0; i < n; i++) {
        int wrong;
        ss[i] = read_stream(a, &keys[i], &wrong, r);
        if (wrong) goto done;
        if (idv[i].len == 1 && idv[i].ptr[0] == '$') {
            ids[i] = ss[i] ? st_stream_meta(ss[i])->last_id : (st_sid_t){0, 0};
        } else if (idv[i].len == 1 && idv[i].ptr[0] == '>') {
            resp_error(r, "ERR The > ID can be specified only when calling XREADGROUP using the "
                          "GROUP <group> <consumer> option.");
            goto done;
        } else if (parse_id(&idv[i], 1, 0, &ids[i])) {
            resp_error(r, SID_ERR_INVALID);
            goto done;
        }
    }
    buf_t body;
    buf_init(&body);
    uint64_t served = 0;
    for (uint16_t i = 0; i < n; i++) {
        /* Redis looks each stream up again as it serves them: a missing
         * one is a second miss (keyspace_misses, "keymiss"), as there. */
        (void)st_find_live(a->db, &keys[i], a->now, 0);
        st_stream_t *s = ss[i];
        uint64_t len = s ? st_stream_len(s) : 0;
        if (!len || st_sid_cmp(st_stream_id_at(s, len - 1), ids[i]) <= 0) continue;
        if (a->proto != 3) resp_array(&body, 2);
        resp_bulk(&body, keys[i].ptr, keys[i].len);
        reply_range(ctx, &body, s, st_sid_after(ids[i]), SID_MAX, 0, (uint64_t)o->count, 0);
        served++;
    }
    if (served) {
        if (a->proto == 3)
            resp_map(r, 3, (long long)served);
        else
            resp_array(r, (long long)served);
        buf_append(r, body.data, body.len);
    }
    buf_free(&body);
    rc = served ? 1 : 0;
done:
    free(ss);
    return rc;
}

/* XREAD's options from the words: 0, or -1 with the error replied. */
static int xread_options(const rec_arg_t *w, uint16_t nw, sid_xread_args_t *o, buf_t *r)
{
    const char **pv, *err;
    uint32_t *lv;
    st_args_arrays(w, nw, &pv, &lv);
    int bad = sid_xread_parse(nw, pv, lv, 0, o, &err);
    free(pv);
    free(lv);
    if (bad && r) resp_error(r, err);
    return bad ? -1 : 0;
}

/* XREAD [COUNT n] [BLOCK ms] STREAMS key... id...: entries above each ID,
 * or a null array. A BLOCK outside a transaction comes as CMD_XREADBLOCK
 * (the frontend routes it as a write, D46), except on a replica, whose
 * log is its leader's: there a BLOCK with nothing to answer is refused
 * with an error that says so (a fake timeout would be a lie). Inside
 * MULTI a BLOCK does not block (Redis): a null array. */
void st_read_xread(store_ctx_t *ctx, const read_args_t *a, buf_t *r)
{
    sid_xread_args_t o;
    if (xread_options(a->argv, a->argc, &o, r)) return;
    st_sid_t *ids = st_xmalloc(sizeof(*ids) * (o.nstreams ? (size_t)o.nstreams : 1));
    if (xread_answer(ctx, a, &o, ids, r) == 0) {
        if (o.block_ms >= 0 && !ctx->in_exec)
            resp_error(r, "ERR XREAD BLOCK is not supported by AtticDB on a replica, and no "
                          "stream has entries to answer now");
        else
            resp_null_array3(r, a->proto);
    }
    free(ids);
}

/* The COUNT of a blocked XREAD given none (Redis 7.0's
 * XREAD_BLOCKED_DEFAULT_COUNT). */
#define XREAD_BLOCKED_COUNT 1000

/* CMD_XREADBLOCK client proto 0 kind 0 then XREAD's words, with BLOCK
 * (CMD_BLPOP's head): answered now as XREAD is, in log order ("$" is the
 * stream's last ID at this record), or the client waits on every key, its
 * IDs in the waiter's dst word (16 bytes per key, in the keys' order). */
void st_apply_xreadblock(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    int proto = (int)cmd_get_u32(a->argv[1].ptr);
    read_args_t ra = {&a->argv[5], (uint16_t)(a->argc - 5), a->dbnum, a->db, ctx->now, proto,
                      CMD_XREAD};
    sid_xread_args_t o;
    buf_t scratch; /* the read path replies into a buffer; replay has none */
    buf_init(&scratch);
    buf_t *out = r ? r : &scratch;
    if (xread_options(ra.argv, ra.argc, &o, out) == 0) {
        size_t n = o.nstreams ? (size_t)o.nstreams : 1;
        st_sid_t *ids = st_xmalloc(sizeof(*ids) * n);
        if (xread_answer(ctx, &ra, &o, ids, out) == 0) {
            unsigned char *packed = st_xmalloc(16 * n);
            for (int i = 0; i < o.nstreams; i++) {
                cmd_put_i64(packed + 16 * i, (int64_t)ids[i].ms);
                cmd_put_i64(packed + 16 * i + 8, (int64_t)ids[i].seq);
            }
            st_waiter_spec_t sp = {.client_id = (uint64_t)cmd_get_i64(a->argv[0].ptr),
                                   .proto = (uint8_t)proto,
                                   .kind = ST_BLOCK_STREAM_READ,
                                   .count = o.count ? o.count : XREAD_BLOCKED_COUNT,
                                   .nkeys = (uint32_t)o.nstreams,
                                   .keys = &ra.argv[o.streams_at],
                                   .dst = {packed, (uint32_t)(16 * o.nstreams)}};
            st_block_wait(ctx, a, &sp, r);
            free(packed);
        }
        free(ids);
    }
    buf_free(&scratch);
}

/* A waiter of XREAD ... BLOCK on key (core/block.c): served when the
 * stream's last ID is above the one it waits after (for the first of its
 * keys that is key), with the entries above it; a key gone or of another
 * type keeps it waiting, as Redis 7.0.15. */
int st_stream_read_serve(store_ctx_t *ctx, const apply_args_t *a, st_waiter_t *w,
                         const rec_arg_t *key, buf_t *r)
{
    idx_entry_t **slot = st_find_live(a->db, key, ctx->now, 1);
    if (!slot || st_ent_type(*slot) != ST_STREAM) return ST_PASSED;
    uint32_t i = 0;
    while (i < w->nkeys &&
           (w->keys[i].len != key->len || memcmp(w->keys[i].ptr, key->ptr, key->len) != 0))
        i++;
    if (i == w->nkeys || w->dst.len < 16 * (i + 1)) return ST_PASSED;
    st_sid_t after = {(uint64_t)cmd_get_i64(w->dst.ptr + 16 * i),
                      (uint64_t)cmd_get_i64(w->dst.ptr + 16 * i + 8)};
    st_stream_t *s = st_ent_stream(*slot);
    if (st_sid_cmp(st_stream_meta_c(s)->last_id, after) <= 0) return ST_PASSED;
    if (!r) return ST_SERVED;
    st_reply_served_key(r, w->proto, key);
    reply_range(ctx, r, s, st_sid_after(after), SID_MAX, 0, (uint64_t)w->count, 0);
    return ST_SERVED;
}
