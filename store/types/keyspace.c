/*
 * keyspace.c - the store's key and database commands (handlers.h), which
 * work on keys of any type (Redis' db.c and expire.c):
 *   writes  DEL (and UNLINK), the expiry family, RENAME/RENAMENX, COPY, MOVE,
 *           SWAPDB, FLUSHDB, FLUSHALL, TICK
 *   reads   EXISTS, TTL/PTTL, EXPIRETIME/PEXPIRETIME, TYPE, TOUCH, DBSIZE,
 *           KEYS, SCAN, RANDOMKEY
 * Store process only; a type handler: it calls core/ and is called by
 * route.c. Apply handlers follow the determinism rules of route.c's banner
 * (ctx->now, never the wall clock; the same state change with or without a
 * reply), and read handlers never change anything: a key expired by a->now
 * is hidden, not removed.
 *
 * Moving entries: RENAME and MOVE take an entry out of its index with its
 * accounting (st_ent_take) and store it again, under its new key or in the
 * other database, so the per-database key and TTL counters INFO keyspace
 * shows follow it. COPY makes a deep copy: the two entries may point at the
 * same log bytes (extents are immutable), but never share an extent list,
 * which APPEND grows in place.
 */
#include <ctype.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "glob.h"
#include "handlers.h"
#include "resp.h"
#include "store/core/alloc.h"
#include "store/core/entry.h"
#include "store/core/index.h"
#include "store/core/object.h"
#include "store/core/value.h"
#include "store/core/watch.h"
#include "strutil.h"

void st_apply_del(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    long long n = 0;
    for (uint16_t i = 0; i < a->argc; i++) {
        idx_entry_t **slot = st_find_live(a->db, &a->argv[i], ctx->now, 1);
        if (slot) {
            st_remove(a->db, slot);
            st_key_changed(ctx, a, a->dbnum, &a->argv[i]);
            n++;
        }
    }
    if (r) resp_integer(r, n);
}

void st_apply_pexpireat(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    int64_t when = cmd_get_i64(a->argv[1].ptr);
    uint32_t flags = cmd_get_u32(a->argv[2].ptr);
    idx_entry_t **slot = st_find_live(a->db, &a->argv[0], ctx->now, 1);
    int ok = slot != NULL;
    if (ok) {
        /* Redis 7 expireGenericCommand: no TTL counts as an infinite one. */
        int64_t cur = st_ent_expire(*slot);
        if ((flags & EXPF_NX) && cur) ok = 0;
        if ((flags & EXPF_XX) && !cur) ok = 0;
        if ((flags & EXPF_GT) && (!cur || when <= cur)) ok = 0;
        if ((flags & EXPF_LT) && cur && when >= cur) ok = 0;
    }
    if (ok) {
        if (when <= ctx->now)
            st_remove(a->db, slot);
        else
            st_ent_set_expire(a->db, slot, when);
        st_key_changed(ctx, a, a->dbnum, &a->argv[0]);
    }
    if (r) resp_integer(r, ok);
}

void st_apply_persist(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    idx_entry_t **slot = st_find_live(a->db, &a->argv[0], ctx->now, 1);
    int ok = slot && st_ent_expire(*slot);
    if (ok) {
        st_ent_set_expire(a->db, slot, 0);
        st_key_changed(ctx, a, a->dbnum, &a->argv[0]);
    }
    if (r) resp_integer(r, ok);
}

void st_apply_flushall(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    /* Synchronous, as Redis' default (lazyfree-lazy-user-flush no). */
    for (int i = 0; i < ctx->ndb; i++) {
        idx_clear(&ctx->dbs[i]->ix);
        st_db_flushed(ctx, a, (unsigned)i);
    }
    ctx->expire_cursor = 0;
    ctx->expire_db = 0;
    if (r) resp_simple(r, "OK");
}

/* CMD_TICK: store_apply has moved the apply clock; nothing else to do. */
void st_apply_tick(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    (void)ctx;
    (void)a;
    (void)r;
}

/* ---- moving and copying entries ------------------------------------- */

/* Bytes of e after its key: inline prefix and tail (extent or list pointer). */
static size_t ent_value_bytes(idx_entry_t *e)
{
    return st_entry_size(e->klen, e->ilen, e->vkind) - IDX_ENTRY_HDR - e->klen;
}

/* A new entry with e's value and TTL under key. With deep set, the value's
 * piece list is duplicated (COPY, st_ent_dup); without, the new entry takes
 * e's list over (RENAME: e is freed right after, without its list). */
static idx_entry_t *ent_rekey(idx_entry_t *e, const rec_arg_t *key, int deep)
{
    if (deep) return st_ent_dup(e, key);
    idx_entry_t *n = st_ent_alloc(key->ptr, key->len, e->ilen, e->vkind, st_ent_expire(e));
    memcpy(st_ent_inline(n), st_ent_inline(e), ent_value_bytes(e));
    return n;
}

/* RENAME: +OK; RENAMENX: :1 when renamed, :0 when not. */
static void reply_renamed(buf_t *r, int nx, int done)
{
    if (!r) return;
    if (nx)
        resp_integer(r, done);
    else
        resp_simple(r, "OK");
}

static int same_key(const rec_arg_t *x, const rec_arg_t *y)
{
    return x->len == y->len && memcmp(x->ptr, y->ptr, x->len) == 0;
}

/* CMD_RENAME key newkey nx. Slots are looked up again after each change:
 * removing one entry can move the link that pointed at another. */
void st_apply_rename(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    const rec_arg_t *key = &a->argv[0], *newkey = &a->argv[1];
    int nx = cmd_get_u32(a->argv[2].ptr) != 0;
    if (!st_find_live(a->db, key, ctx->now, 1)) {
        if (r) resp_error(r, "ERR no such key");
        return;
    }
    if (same_key(key, newkey)) { /* Redis: no change, no WATCH signal */
        reply_renamed(r, nx, 0);
        return;
    }
    idx_entry_t **dst = st_find_live(a->db, newkey, ctx->now, 1);
    if (dst && nx) {
        reply_renamed(r, nx, 0);
        return;
    }
    if (dst) st_remove(a->db, dst);
    idx_entry_t *e = st_ent_take(a->db, idx_find(&a->db->ix, key->ptr, key->len));
    idx_entry_t *n = ent_rekey(e, newkey, 0);
    free(e); /* its extent list, if any, now belongs to n */
    st_ent_store(a->db, NULL, n);
    st_key_changed(ctx, a, a->dbnum, key);
    st_key_changed(ctx, a, a->dbnum, newkey);
    reply_renamed(r, nx, 1);
}

/* CMD_COPY source destination dstdb replace. The frontend refused what
 * Redis refuses (bad db, same key in the same db); a record that still
 * names such a thing is answered with the same error and changes nothing. */
void st_apply_copy(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    const rec_arg_t *key = &a->argv[0], *newkey = &a->argv[1];
    unsigned dstnum = cmd_get_u32(a->argv[2].ptr);
    int replace = cmd_get_u32(a->argv[3].ptr) != 0;
    st_db_t *dstdb = st_db(ctx, dstnum);
    if (!dstdb) {
        if (r) resp_error(r, "ERR DB index is out of range");
        return;
    }
    if (dstdb == a->db && same_key(key, newkey)) {
        if (r) resp_error(r, "ERR source and destination objects are the same");
        return;
    }
    if (!st_find_read(a->db, key, ctx->now, 1)) { /* Redis reads the source (keymiss) */
        if (r) resp_integer(r, 0);
        return;
    }
    idx_entry_t **dst = st_find_live(dstdb, newkey, ctx->now, 1);
    if (dst && !replace) {
        if (r) resp_integer(r, 0);
        return;
    }
    /* Found again: reaping an expired destination may have moved its link. */
    idx_entry_t **src = idx_find(&a->db->ix, key->ptr, key->len);
    st_ent_store(dstdb, dst, ent_rekey(*src, newkey, 1));
    st_key_changed(ctx, a, dstnum, newkey);
    if (r) resp_integer(r, 1);
}

/* CMD_MOVE key dstdb: the entry itself changes index, TTL and all. */
void st_apply_move(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    const rec_arg_t *key = &a->argv[0];
    unsigned dstnum = cmd_get_u32(a->argv[1].ptr);
    st_db_t *dstdb = st_db(ctx, dstnum);
    if (!dstdb) {
        if (r) resp_error(r, "ERR DB index is out of range");
        return;
    }
    if (dstdb == a->db) {
        if (r) resp_error(r, "ERR source and destination objects are the same");
        return;
    }
    idx_entry_t **src = st_find_live(a->db, key, ctx->now, 1);
    if (!src || st_find_live(dstdb, key, ctx->now, 1)) {
        if (r) resp_integer(r, 0);
        return;
    }
    st_ent_store(dstdb, NULL, st_ent_take(a->db, src));
    st_key_changed(ctx, a, a->dbnum, key);
    st_key_changed(ctx, a, dstnum, key);
    if (r) resp_integer(r, 1);
}

/* CMD_SWAPDB a b: databases are pointers in ctx->dbs, so a swap is O(1);
 * each st_db_t keeps its own counters and index. */
void st_apply_swapdb(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    unsigned x = cmd_get_u32(a->argv[0].ptr), y = cmd_get_u32(a->argv[1].ptr);
    if (!st_db(ctx, x) || !st_db(ctx, y)) {
        if (r) resp_error(r, "ERR DB index is out of range");
        return;
    }
    if (x != y) { /* Redis: swapping a database with itself signals nothing */
        st_db_t *t = ctx->dbs[x];
        ctx->dbs[x] = ctx->dbs[y];
        ctx->dbs[y] = t;
        st_db_swapped(ctx, a, x, y);
        st_db_swapped(ctx, a, y, x);
        /* An active-expiry pass in progress may have covered one of the
         * two slots and not the other: start it over, or the database
         * swapped into a covered slot would keep its expired keys until the
         * apply clock moves. (A finished pass left nothing expired.) */
        ctx->expire_db = 0;
        ctx->expire_cursor = 0;
    }
    if (r) resp_simple(r, "OK");
}

/* CMD_FLUSHDB: the record's database, synchronously (ASYNC too). */
void st_apply_flushdb(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    idx_clear(&a->db->ix);
    st_db_flushed(ctx, a, a->dbnum);
    if (ctx->expire_db == (int)a->dbnum) ctx->expire_cursor = 0;
    if (r) resp_simple(r, "OK");
}

/* ---- reads ---------------------------------------------------------- */

void st_read_exists(store_ctx_t *ctx, const read_args_t *a, buf_t *r)
{
    (void)ctx;
    long long n = 0; /* duplicates count, as in Redis */
    for (uint16_t i = 0; i < a->argc; i++)
        n += st_find_peek(a->db, &a->argv[i], a->now) != NULL;
    resp_integer(r, n);
}

void st_read_probe(st_db_t *db, const rec_arg_t *key, int64_t now, buf_t *r)
{
    /* An expired key is told apart from a missing one: a write's record
     * must delete it, as the log must say (D68). */
    idx_entry_t **slot = idx_find(&db->ix, key->ptr, key->len);
    resp_integer(r, !slot ? 0 : st_ent_expired(*slot, now) ? 2 : 1);
}

/* TTL, PTTL, EXPIRETIME, PEXPIRETIME: -2 without the key, -1 without a
 * TTL; seconds are rounded to the nearest, as Redis does for all four. */
enum { TTL_REL_S, TTL_REL_MS, TTL_ABS_S, TTL_ABS_MS };

static void reply_ttl(const read_args_t *a, buf_t *r, int mode)
{
    idx_entry_t **slot = st_find_peek(a->db, &a->argv[0], a->now);
    if (!slot) {
        resp_integer(r, -2);
        return;
    }
    int64_t at = st_ent_expire(*slot);
    if (!at) {
        resp_integer(r, -1);
        return;
    }
    int abs = mode == TTL_ABS_S || mode == TTL_ABS_MS;
    int ms = mode == TTL_REL_MS || mode == TTL_ABS_MS;
    long long t = abs ? at : at - a->now;
    if (t < 0) t = 0;
    /* Rounded to the nearest second without overflowing near LLONG_MAX
     * (Redis' reply there is the rounded value, e.g. 9223372036854776). */
    resp_integer(r, ms ? t : (long long)(((uint64_t)t + 500) / 1000));
}

void st_read_ttl(store_ctx_t *ctx, const read_args_t *a, buf_t *r)
{
    (void)ctx;
    reply_ttl(a, r, TTL_REL_S);
}

void st_read_pttl(store_ctx_t *ctx, const read_args_t *a, buf_t *r)
{
    (void)ctx;
    reply_ttl(a, r, TTL_REL_MS);
}

void st_read_expiretime(store_ctx_t *ctx, const read_args_t *a, buf_t *r)
{
    (void)ctx;
    reply_ttl(a, r, TTL_ABS_S);
}

void st_read_pexpiretime(store_ctx_t *ctx, const read_args_t *a, buf_t *r)
{
    (void)ctx;
    reply_ttl(a, r, TTL_ABS_MS);
}

void st_read_type(store_ctx_t *ctx, const read_args_t *a, buf_t *r)
{
    (void)ctx;
    idx_entry_t **slot = st_find_peek(a->db, &a->argv[0], a->now);
    resp_simple(r, slot ? st_type_name(*slot) : "none");
}

/* TOUCH: as EXISTS, but each key found counts as used now (its access
 * data: OBJECT IDLETIME and FREQ, eviction), as Redis' lookupKeyRead. */
void st_read_touch(store_ctx_t *ctx, const read_args_t *a, buf_t *r)
{
    (void)ctx;
    long long n = 0;
    for (uint16_t i = 0; i < a->argc; i++)
        n += st_find_live(a->db, &a->argv[i], a->now, 0) != NULL;
    resp_integer(r, n);
}

typedef struct count_arg {
    int64_t now;
    uint64_t n;
} count_arg_t;

static int count_expired_at(void *arg, idx_entry_t *e)
{
    count_arg_t *c = arg;
    if (st_ent_expired(e, c->now)) c->n++;
    return 0;
}

void st_read_dbsize(store_ctx_t *ctx, const read_args_t *a, buf_t *r)
{
    (void)ctx;
    /* Redis deletes an expired key as soon as a command touches it, so its
     * DBSIZE stops counting a key a GET has already called missing. Our
     * reads must not remove anything (removal is a state change: it happens
     * by the apply clock, within about a second thanks to CMD_TICK), so keys
     * expired by the wall clock but not yet reclaimed are left out of the
     * count instead. That walks the keys, but only in the moments after
     * some key's TTL ran out (next_expiry says when none can have). */
    uint64_t n = idx_count(&a->db->ix);
    if (a->db->expires > 0 && a->now >= a->db->next_expiry) {
        count_arg_t c = {a->now, 0};
        idx_foreach(&a->db->ix, count_expired_at, &c);
        n -= c.n;
    }
    resp_integer(r, (long long)n);
}

static int live_at(const idx_entry_t *e, int64_t now)
{
    return !st_ent_expired(e, now);
}

/* glob_match follows Redis: the empty key matches only the empty pattern
 * ("*" is taken as "everything" by the callers, without matching). */
static int key_matches(const rec_arg_t *pat, const idx_entry_t *e)
{
    return glob_match((const char *)pat->ptr, pat->len, (const char *)e->data, e->klen, 0);
}

static int arg_is(const rec_arg_t *x, const char *word)
{
    size_t n = strlen(word);
    return x->len == n && strncasecmp((const char *)x->ptr, word, n) == 0;
}

void st_reply_array_of(store_ctx_t *ctx, buf_t *r, uint64_t n, const buf_t *body)
{
    if (ctx->max_reply && body->len + 32 > ctx->max_reply) {
        resp_error(r, STORE_ERR_TOO_LARGE);
        return;
    }
    resp_array(r, (long long)n);
    buf_append(r, body->data, body->len);
}

/* ---- KEYS ------------------------------------------------------------- */

typedef struct keys_arg {
    const read_args_t *a;
    const rec_arg_t *pat;
    int all;        /* the pattern is "*" */
    uint64_t limit; /* stop once body passes it (0 = none) */
    buf_t body;
    uint64_t n;
} keys_arg_t;

static int keys_visit(void *arg, idx_entry_t *e)
{
    keys_arg_t *k = arg;
    if (!live_at(e, k->a->now)) return 0;
    if (!k->all && !key_matches(k->pat, e)) return 0;
    resp_bulk(&k->body, e->data, e->klen);
    k->n++;
    return k->limit && k->body.len > k->limit; /* too large: stop the walk */
}

/* KEYS pattern: every live key that matches, in index order. Larger than
 * the reply limit (channel-size), it is an error rather than a reply Redis
 * would give: SCAN is the way through a large keyspace. */
void st_read_keys(store_ctx_t *ctx, const read_args_t *a, buf_t *r)
{
    keys_arg_t k = {
        a, &a->argv[0], a->argv[0].len == 1 && a->argv[0].ptr[0] == '*', ctx->max_reply, {0}, 0};
    buf_init(&k.body);
    idx_foreach(&a->db->ix, keys_visit, &k);
    st_reply_array_of(ctx, r, k.n, &k.body);
    buf_free(&k.body);
}

/* ---- SCAN ------------------------------------------------------------- */

/* Redis parses the cursor with strtoul and refuses leading space, trailing
 * bytes and overflow: so "+5", "-1" (ULONG_MAX) and "" (0) are cursors.
 * The argument ends at its first NUL, as a C string would. Returns 0 or -1. */
int st_parse_cursor(const rec_arg_t *x, uint64_t *out)
{
    const unsigned char *p = x->ptr, *end = memchr(p, 0, x->len);
    if (!end) end = p + x->len;
    if (p == end) { /* strtoul("") converts nothing and leaves "" behind */
        *out = 0;
        return 0;
    }
    if (isspace(*p)) return -1;
    int neg = 0;
    if (*p == '+' || *p == '-') neg = *p++ == '-';
    if (p == end) return -1;
    uint64_t v = 0;
    for (; p < end; p++) {
        if (*p < '0' || *p > '9') return -1;
        unsigned d = (unsigned)(*p - '0');
        if (v > (UINT64_MAX - d) / 10) return -1; /* ERANGE */
        v = v * 10 + d;
    }
    *out = neg ? (uint64_t)0 - v : v;
    return 0;
}

/* SCAN's TYPE filter: a type number (enum st_type), or one of these. */
enum { SCAN_TYPE_ANY = -1, SCAN_TYPE_NONE = -2, SCAN_TYPE_OTHER = -3 };

typedef struct scan_arg {
    const read_args_t *a;
    const rec_arg_t *pat; /* NULL: every key */
    int type;
    st_scan_out_t out;
} scan_arg_t;

static int scan_visit(void *arg, idx_entry_t *e)
{
    scan_arg_t *s = arg;
    s->out.visited++;
    if (s->pat && !key_matches(s->pat, e)) return 0;
    int live = live_at(e, s->a->now);
    /* Redis 7.0 judges TYPE by looking the key up, which finds an expired
     * key gone ("none") and deletes it, so its later expiry check passes:
     * TYPE none lists keys that expired but were not reclaimed yet. */
    int keep = s->type == SCAN_TYPE_ANY    ? live
               : s->type == SCAN_TYPE_NONE ? !live
               : s->type >= 0              ? live && (int)st_ent_type(e) == s->type
                                           : 0;
    if (keep) {
        resp_bulk(&s->out.body, e->data, e->klen);
        s->out.n++;
    }
    return 0;
}

int st_scan_options(const read_args_t *a, uint16_t from, long long *count, const rec_arg_t **pat,
                    const rec_arg_t **type, buf_t *r)
{
    *count = 10;
    *pat = NULL;
    for (uint16_t i = from; i < a->argc; i += 2) {
        const rec_arg_t *o = &a->argv[i];
        int has_value = i + 1 < a->argc;
        if (arg_is(o, "count") && has_value) {
            if (str_to_ll((const char *)a->argv[i + 1].ptr, a->argv[i + 1].len, count)) {
                resp_error(r, "ERR value is not an integer or out of range");
                return -1;
            }
            if (*count < 1) {
                resp_error(r, "ERR syntax error");
                return -1;
            }
        } else if (arg_is(o, "match") && has_value) {
            const rec_arg_t *p = &a->argv[i + 1];
            *pat = p->len == 1 && p->ptr[0] == '*' ? NULL : p;
        } else if (type && arg_is(o, "type") && has_value) {
            *type = &a->argv[i + 1];
        } else {
            resp_error(r, "ERR syntax error");
            return -1;
        }
    }
    return 0;
}

idx_entry_t *st_scan_key_begin(const read_args_t *a, unsigned type, uint64_t *cursor,
                               long long *count, const rec_arg_t **pat, buf_t *r)
{
    if (st_parse_cursor(&a->argv[1], cursor)) {
        resp_error(r, "ERR invalid cursor");
        return NULL;
    }
    idx_entry_t **slot = st_find_live(a->db, &a->argv[0], a->now, 0);
    if (st_wrongtype(slot, type, r)) return NULL;
    if (!slot) {
        resp_array(r, 2);
        resp_bulk(r, "0", 1);
        resp_array(r, 0);
        return NULL;
    }
    *pat = NULL;
    return st_scan_options(a, 2, count, pat, NULL, r) ? NULL : *slot;
}

void st_scan_reply(store_ctx_t *ctx, uint64_t cursor, long long count, st_scan_step_fn step,
                   void *arg, st_scan_out_t *out, buf_t *r)
{
    buf_t *body = &out->body;
    long long budget = count > LLONG_MAX / 10 ? LLONG_MAX : count * 10;
    int too_large = 0, steps = 0;
    do {
        uint64_t before = cursor;
        size_t mark = body->len;
        uint64_t n_before = out->n;
        cursor = step(arg, cursor);
        if (ctx->max_reply && body->len + 64 > ctx->max_reply) {
            if (steps == 0) {
                too_large = 1;
            } else { /* give back this step: the next call starts there */
                cursor = before;
                body->len = mark;
                out->n = n_before;
            }
            break;
        }
        steps++;
    } while (cursor && budget-- && out->visited < (uint64_t)count);
    if (too_large) {
        resp_error(r, STORE_ERR_TOO_LARGE);
        return;
    }
    char num[24];
    int len = snprintf(num, sizeof(num), "%llu", (unsigned long long)cursor);
    resp_array(r, 2);
    resp_bulk(r, num, (size_t)len);
    resp_array(r, (long long)out->n * out->per_item);
    buf_append(r, body->data, body->len);
}

typedef struct db_scan {
    idx_t *ix;
    scan_arg_t *s;
} db_scan_t;

static uint64_t db_scan_step(void *arg, uint64_t cursor)
{
    db_scan_t *d = arg;
    return idx_scan(d->ix, cursor, scan_visit, d->s);
}

/*
 * SCAN cursor [MATCH pattern] [COUNT count] [TYPE type], with Redis 7.0's
 * parsing, errors and work bound: buckets are visited until COUNT entries
 * were seen (before filtering, as Redis filters afterwards) or 10 * COUNT
 * more buckets were tried or the cursor came back to 0. idx_scan's
 * reverse-binary cursor returns every key present for a whole iteration,
 * across resizes. When the reply limit would be passed, the reply stops at
 * the last whole step and returns its cursor, so a client with a huge COUNT
 * still gets through.
 */
void st_read_scan(store_ctx_t *ctx, const read_args_t *a, buf_t *r)
{
    uint64_t cursor;
    if (st_parse_cursor(&a->argv[0], &cursor)) {
        resp_error(r, "ERR invalid cursor");
        return;
    }
    long long count;
    const rec_arg_t *type = NULL;
    scan_arg_t s = {a, NULL, SCAN_TYPE_ANY, {{0}, 0, 0, 1}};
    if (st_scan_options(a, 1, &count, &s.pat, &type, r)) return;
    if (type) {
        s.type = arg_is(type, "none") ? SCAN_TYPE_NONE : SCAN_TYPE_OTHER;
        for (unsigned k = 0; k < ST__NTYPES; k++)
            if (arg_is(type, st_type_name_of(k))) s.type = (int)k;
    }
    buf_init(&s.out.body);
    db_scan_t d = {&a->db->ix, &s};
    st_scan_reply(ctx, cursor, count, db_scan_step, &d, &s.out, r);
    buf_free(&s.out.body);
}

/* ---- RANDOMKEY -------------------------------------------------------- */

typedef struct live_walk {
    int64_t now;
    idx_entry_t *found;
} live_walk_t;

static int walk_first_live(void *arg, idx_entry_t *e)
{
    live_walk_t *w = arg;
    if (!live_at(e, w->now)) return 0;
    w->found = e;
    return 1;
}

/*
 * RANDOMKEY: a random live key, or nil. Redis deletes the expired keys it
 * draws and draws again; a read must not delete, so after a bounded number
 * of expired draws (most keys expired and not reclaimed yet, which lasts
 * about a second) it walks the index for any live key instead of spinning.
 */
void st_read_randomkey(store_ctx_t *ctx, const read_args_t *a, buf_t *r)
{
    (void)ctx;
    /* Reads need no determinism: one generator for the process, seeded
     * from the (random) index seed the first time. */
    static uint64_t rng;
    if (!rng) rng = a->db->ix.seed | 1;
    for (int tries = 0; tries < 64; tries++) {
        idx_entry_t *e = idx_random_fair(&a->db->ix, &rng);
        if (!e) {
            resp_null(r);
            return;
        }
        if (live_at(e, a->now)) {
            resp_bulk(r, e->data, e->klen);
            return;
        }
    }
    live_walk_t w = {a->now, NULL};
    idx_foreach(&a->db->ix, walk_first_live, &w);
    if (w.found)
        resp_bulk(r, w.found->data, w.found->klen);
    else
        resp_null(r);
}
