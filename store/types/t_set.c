/*
 * t_set.c - the store's set commands (handlers.h): the writes SADD, SREM,
 * SPOP, SMOVE, SINTERSTORE, SUNIONSTORE, SDIFFSTORE and the reads
 * SMEMBERS, SISMEMBER, SMISMEMBER, SCARD, SRANDMEMBER, SINTER, SUNION,
 * SDIFF, SSCAN. Store process only; a type handler (calls core/, called
 * by route.c) following route.c's determinism rules.
 *
 * A set is core/hash.c's structure with empty values (st_set_ops). Its
 * encoding follows Redis 7.0.15, which has two: intset (every member an
 * integer, at most set-max-intset-entries of them, kept in integer order,
 * so replies list them ascending as Redis does) and hashtable, for good
 * once converted. A new set is an intset when its first member is an
 * integer. The limit is the one each record carries (common/command.h).
 *
 * SPOP is the one write that picks at random: its choice is a function of
 * the set's members in their order (core/hash.c: a function of the log) and
 * the record's LSN (st_apply_spop_at), so live apply, replay and a state
 * read back from a checkpoint remove the same members (ARCHITECTURE.md,
 * contract 4), in O(count). Records of the older form, CMD_SPOP, chose
 * from the contents alone in O(N log N) and replay as they did
 * (st_apply_spop; D62). SRANDMEMBER is a read and uses the process's
 * generator.
 */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "glob.h"
#include "handlers.h"
#include "resp.h"
#include "store/core/alloc.h"
#include "store/core/entry.h"
#include "store/core/hash.h"
#include "store/core/object.h"
#include "store/core/value.h"
#include "store/core/watch.h"
#include "strutil.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

#define ERR_NOT_INT "ERR value is not an integer or out of range"

static int is_int(const void *p, uint32_t n)
{
    long long v;
    return str_to_ll(p, n, &v) == 0;
}

static uint64_t rng_step(uint64_t *s)
{
    uint64_t x = *s ? *s : 0x2545F4914F6CDD1Dull;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *s = x;
}

/* ---- building sets ---- */

/* A new empty set for a first member m (Redis' setTypeCreate). */
static st_hash_t *set_for(const st_db_t *db, const void *m, uint32_t n)
{
    int intset = is_int(m, n);
    st_hash_t *s = st_set_new(db->ix.seed ^ 0x7F4A7C159E3779B9ull, intset);
    if (!intset) st_hash_convert(s); /* sets have no listpack in Redis 7.0 */
    return s;
}

/* Redis' setTypeAdd: 1 when m was added. Members hold no value, so no log
 * bytes to count (st_hash_set's live NULL), whether or not s is in an
 * index yet (the STORE forms build theirs first). */
static int set_add(st_hash_t *s, uint64_t max_intset, const void *m, uint32_t n)
{
    if (st_hash_is_sorted(s) && !is_int(m, n)) st_hash_convert(s);
    if (st_hash_find(s, m, n)) return 0;
    st_hash_set(s, NULL, m, n, NULL, 0, 0);
    if (st_hash_is_sorted(s) && st_hash_len(s) > max_intset) st_hash_convert(s);
    return 1;
}

static void account(store_ctx_t *ctx, const st_hash_t *s, uint64_t before)
{
    ctx->entry_bytes += st_hash_bytes(s) - before;
}

/* ---- writes ---- */

void st_apply_sadd(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    uint64_t max = (uint64_t)cmd_get_i64(a->argv[1].ptr);
    idx_entry_t **slot = st_find_live(a->db, &a->argv[0], ctx->now, 1);
    if (st_wrongtype(slot, ST_SET, r)) return;
    st_hash_t *s = slot ? st_ent_hash(*slot) : NULL;
    if (!s) {
        s = set_for(a->db, a->argv[2].ptr, a->argv[2].len);
        st_ent_store(a->db, NULL, st_ent_new_obj(&a->argv[0], (st_obj_t *)s, 0));
    }
    uint64_t before = st_hash_bytes(s);
    long long added = 0;
    for (uint16_t i = 2; i < a->argc; i++)
        added += set_add(s, max, a->argv[i].ptr, a->argv[i].len);
    account(ctx, s, before);
    if (added) st_key_changed(ctx, a, a->dbnum, &a->argv[0]);
    if (r) resp_integer(r, added);
}

void st_apply_srem(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    idx_entry_t **slot = st_find_live(a->db, &a->argv[0], ctx->now, 1);
    if (st_wrongtype(slot, ST_SET, r)) return;
    long long removed = 0;
    if (slot) {
        st_hash_t *s = st_ent_hash(*slot);
        uint64_t before = st_hash_bytes(s);
        for (uint16_t i = 1; i < a->argc && st_hash_len(s); i++)
            removed += st_hash_del(s, &ctx->live, a->argv[i].ptr, a->argv[i].len);
        account(ctx, s, before);
        if (removed) st_key_changed(ctx, a, a->dbnum, &a->argv[0]);
        if (!st_hash_len(s)) st_remove(a->db, slot); /* an empty set does not exist */
    }
    if (r) resp_integer(r, removed);
}

typedef struct collect_arg {
    idx_entry_t **v;
    uint32_t n;
} collect_arg_t;

static int collect(void *arg, idx_entry_t *f)
{
    collect_arg_t *c = arg;
    c->v[c->n++] = f;
    return 0;
}

/* Every member of s, in its order (malloc'd, st_hash_len entries). */
static idx_entry_t **members(st_hash_t *s)
{
    collect_arg_t c = {st_xmalloc(((size_t)st_hash_len(s) + 1) * sizeof(idx_entry_t *)), 0};
    st_hash_foreach(s, collect, &c);
    return c.v;
}

/* SPOP's choice must be the same on replay and after a checkpoint is read
 * back, where a hashtable's internal order may differ: each member gets a
 * key, XXH3 of its bytes seeded with the record's LSN, and the members with
 * the smallest keys are popped (ties by bytes). A function of the set's
 * contents and the LSN only; it costs O(N log N) in the set's size where
 * Redis' is O(count) (docs/COMMANDS.md). */
typedef struct pick {
    uint64_t key;
    idx_entry_t *m;
} pick_t;

static int by_pick(const void *x, const void *y)
{
    const pick_t *a = x, *b = y;
    if (a->key != b->key) return a->key < b->key ? -1 : 1;
    uint32_t n = a->m->klen < b->m->klen ? a->m->klen : b->m->klen;
    int c = memcmp(a->m->data, b->m->data, n);
    return c ? c : (a->m->klen > b->m->klen) - (a->m->klen < b->m->klen);
}

/* SPOP's reply when the key is missing or count is 0: 1 when
 * done (replied), 0 when there is a set to pop from (*slot). */
static int spop_trivial(store_ctx_t *ctx, const apply_args_t *a, long long count, int resp3,
                        idx_entry_t ***slot, buf_t *r)
{
    *slot = st_find_live(a->db, &a->argv[0], ctx->now, 1);
    if (!*slot) {
        if (!r) return 1;
        if (count < 0)
            resp_null(r);
        else
            resp_set(r, resp3 ? 3 : 2, 0);
        return 1;
    }
    if (st_wrongtype(*slot, ST_SET, r)) return 1;
    if (count == 0) {
        if (r) resp_set(r, resp3 ? 3 : 2, 0);
        return 1;
    }
    return 0;
}

/* CMD_SPOP key count resp3: the older form (banner), for its records. */
void st_apply_spop(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    long long count = cmd_get_i64(a->argv[1].ptr);
    int resp3 = cmd_get_u32(a->argv[2].ptr) != 0;
    idx_entry_t **slot;
    if (spop_trivial(ctx, a, count, resp3, &slot, r)) return;
    st_hash_t *s = st_ent_hash(*slot);
    uint32_t size = st_hash_len(s);
    uint32_t n = count < 0 ? 1 : (uint64_t)count < size ? (uint32_t)count : size;
    idx_entry_t **v = members(s);
    pick_t *p = st_xmalloc((size_t)size * sizeof(*p));
    for (uint32_t i = 0; i < size; i++)
        p[i] = (pick_t){XXH3_64bits_withSeed(v[i]->data, v[i]->klen, a->lsn), v[i]};
    qsort(p, size, sizeof(*p), by_pick); /* the reply's order too: layout-free */
    if (r) {
        if (count >= 0) resp_set(r, resp3 ? 3 : 2, n);
        for (uint32_t i = 0; i < n; i++)
            resp_bulk(r, p[i].m->data, p[i].m->klen);
    }
    uint64_t before = st_hash_bytes(s);
    for (uint32_t i = 0; i < n; i++)
        st_hash_del(s, &ctx->live, p[i].m->data, p[i].m->klen); /* p[i].m is freed here: last use */
    free(p);
    free(v);
    account(ctx, s, before);
    st_key_changed(ctx, a, a->dbnum, &a->argv[0]);
    if (!st_hash_len(s)) st_remove(a->db, slot);
}

static int reply_member(void *arg, idx_entry_t *m)
{
    resp_bulk(arg, m->data, m->klen);
    return 0;
}

/* CMD_SPOP_AT key count resp3 (D62). Pop j (from 0) takes the member at
 * XXH3(j) seeded with the LSN, modulo the members left, in the set's order;
 * a count of at least the size takes them all, in that order. O(count) for
 * a hashtable (the last member fills the gap), O(count x N) for an intset,
 * as Redis' intset removal. */
void st_apply_spop_at(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    long long count = cmd_get_i64(a->argv[1].ptr);
    int resp3 = cmd_get_u32(a->argv[2].ptr) != 0;
    idx_entry_t **slot;
    if (spop_trivial(ctx, a, count, resp3, &slot, r)) return;
    st_hash_t *s = st_ent_hash(*slot);
    uint32_t size = st_hash_len(s);
    uint64_t before = st_hash_bytes(s);
    if (count >= (long long)size) {     /* all of it: the key goes */
        if (r && st_hash_is_paged(s)) { /* by position would cost a page read each (D60) */
            resp_set(r, resp3 ? 3 : 2, size);
            st_hash_foreach(s, reply_member, r);
        } else if (r) {
            resp_set(r, resp3 ? 3 : 2, size);
            for (uint32_t i = 0; i < size; i++) {
                idx_entry_t *m = st_hash_at(s, i);
                resp_bulk(r, m->data, m->klen);
            }
        }
    } else {
        uint32_t n = count < 0 ? 1 : (uint32_t)count;
        if (r && count >= 0) resp_set(r, resp3 ? 3 : 2, n);
        for (uint32_t j = 0; j < n; j++) {
            unsigned char jb[4];
            cmd_put_u32(jb, j);
            uint32_t at = (uint32_t)(XXH3_64bits_withSeed(jb, 4, a->lsn) % st_hash_len(s));
            idx_entry_t *m = st_hash_at(s, at);
            if (r) resp_bulk(r, m->data, m->klen);
            st_hash_del(s, &ctx->live, m->data, m->klen); /* m is freed here: last use */
        }
    }
    account(ctx, s, before);
    st_key_changed(ctx, a, a->dbnum, &a->argv[0]);
    if (count >= (long long)size || !st_hash_len(s)) st_remove(a->db, slot);
}

/* CMD_SMOVE source destination member limit, in Redis 7.0's order: a
 * missing source is 0 whatever the destination holds. */
void st_apply_smove(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    const rec_arg_t *src = &a->argv[0], *dst = &a->argv[1], *m = &a->argv[2];
    uint64_t max = (uint64_t)cmd_get_i64(a->argv[3].ptr);
    idx_entry_t **sslot = st_find_live(a->db, src, ctx->now, 1);
    idx_entry_t **dslot = st_find_live(a->db, dst, ctx->now, 1);
    sslot = st_find_live(a->db, src, ctx->now, 0); /* reaping dst may move its link */
    if (!sslot) {
        if (r) resp_integer(r, 0);
        return;
    }
    if (st_wrongtype(sslot, ST_SET, r) || st_wrongtype(dslot, ST_SET, r)) return;
    st_hash_t *s = st_ent_hash(*sslot);
    if (src->len == dst->len && memcmp(src->ptr, dst->ptr, src->len) == 0) {
        if (r) resp_integer(r, st_hash_find(s, m->ptr, m->len) != NULL);
        return;
    }
    uint64_t before = st_hash_bytes(s);
    if (!st_hash_del(s, &ctx->live, m->ptr, m->len)) {
        if (r) resp_integer(r, 0);
        return;
    }
    account(ctx, s, before);
    st_key_changed(ctx, a, a->dbnum, src);
    if (!st_hash_len(s)) st_remove(a->db, sslot);
    dslot = st_find_live(a->db, dst, ctx->now, 0);
    st_hash_t *d = dslot ? st_ent_hash(*dslot) : NULL;
    if (!d) {
        d = set_for(a->db, m->ptr, m->len);
        st_ent_store(a->db, NULL, st_ent_new_obj(dst, (st_obj_t *)d, 0));
    }
    before = st_hash_bytes(d);
    /* As Redis: a destination that held the member already is unchanged
     * (no WATCH broken, no "sadd" event). */
    int added = set_add(d, max, m->ptr, m->len);
    account(ctx, d, before);
    if (added) st_key_changed(ctx, a, a->dbnum, dst);
    if (r) resp_integer(r, 1);
}

/* ---- SINTER, SUNION, SDIFF (and their STORE forms) ---- */

enum { OP_INTER, OP_UNION, OP_DIFF };

typedef struct sets {
    st_hash_t **v; /* NULL: a missing key (an empty set) */
    uint16_t n;
} sets_t;

/* The sets at keys[0, n): 0, or -1 with WRONGTYPE replied (Redis checks
 * every key's type, a missing one before it or not). */
static int gather(st_db_t *db, int64_t now, int reap, const rec_arg_t *keys, uint16_t n, sets_t *s,
                  buf_t *r)
{
    s->v = st_xmalloc(((size_t)n + 1) * sizeof(*s->v));
    s->n = n;
    for (uint16_t i = 0; i < n; i++) {
        idx_entry_t **slot = st_find_read(db, &keys[i], now, reap);
        if (st_wrongtype(slot, ST_SET, r)) {
            free(s->v);
            return -1;
        }
        s->v[i] = slot ? st_ent_hash(*slot) : NULL;
    }
    return 0;
}

static int by_size(const void *x, const void *y)
{
    uint32_t a = st_hash_len(*(st_hash_t *const *)x), b = st_hash_len(*(st_hash_t *const *)y);
    return a < b ? -1 : a > b;
}

/* The result as a list of members (pointers into the sets, valid until
 * they change), in Redis' order: SINTER the smallest set's order; SUNION
 * and SDIFF build a set first (an intset when every member is an integer:
 * ascending), which *built receives (NULL for SINTER). */
static idx_entry_t **compute(int op, sets_t *s, uint32_t *count, st_hash_t **built,
                             uint64_t max_intset, const st_db_t *db)
{
    *built = NULL;
    *count = 0;
    if (op == OP_INTER) {
        for (uint16_t i = 0; i < s->n; i++)
            if (!s->v[i]) return NULL;
        qsort(s->v, s->n, sizeof(*s->v), by_size);
        idx_entry_t **all = members(s->v[0]), **out = all;
        uint32_t n = st_hash_len(s->v[0]);
        for (uint32_t k = 0; k < n; k++) {
            int in_all = 1;
            for (uint16_t i = 1; i < s->n && in_all; i++)
                in_all = st_hash_find(s->v[i], all[k]->data, all[k]->klen) != NULL;
            if (in_all) out[(*count)++] = all[k];
        }
        return out;
    }
    st_hash_t *t = NULL;
    for (uint16_t i = 0; i < s->n; i++) {
        if (!s->v[i]) continue;
        if (op == OP_DIFF && i > 0) break;
        idx_entry_t **m = members(s->v[i]);
        for (uint32_t k = 0; k < st_hash_len(s->v[i]); k++) {
            int keep = 1;
            for (uint16_t j = 1; op == OP_DIFF && j < s->n && keep; j++)
                keep = !s->v[j] || !st_hash_find(s->v[j], m[k]->data, m[k]->klen);
            if (!keep) continue;
            if (!t) t = st_set_new(db->ix.seed ^ 0x7F4A7C159E3779B9ull, 1); /* createIntsetObject */
            set_add(t, max_intset, m[k]->data, m[k]->klen);
        }
        free(m);
    }
    *built = t;
    if (!t) return NULL;
    *count = st_hash_len(t);
    return members(t);
}

static void reply_members(buf_t *r, int proto, idx_entry_t **m, uint32_t n)
{
    resp_set(r, proto, n);
    for (uint32_t i = 0; i < n; i++)
        resp_bulk(r, m[i]->data, m[i]->klen);
}

static void read_op(store_ctx_t *ctx, const read_args_t *a, buf_t *r, int op)
{
    sets_t s;
    if (gather(a->db, a->now, 0, a->argv, a->argc, &s, r)) return;
    uint32_t n;
    st_hash_t *t;
    idx_entry_t **m = compute(op, &s, &n, &t, 512, a->db);
    size_t mark = r->len;
    reply_members(r, a->proto, m, n);
    if (ctx->max_reply && r->len - mark > ctx->max_reply) {
        r->len = mark;
        resp_error(r, STORE_ERR_TOO_LARGE);
    }
    free(m);
    if (t) st_set_ops.free((st_obj_t *)t);
    free(s.v);
}

void st_read_smembers(store_ctx_t *ctx, const read_args_t *a, buf_t *r)
{
    /* A paged set goes in parts, page by page (D60), where parts may go
     * (a read outside MULTI). */
    idx_entry_t **slot = ctx->reply_stream_ok && !ctx->reply_stream
                             ? st_find_quiet(a->db, &a->argv[0], a->now)
                             : NULL;
    if (slot && st_ent_type(*slot) == ST_SET && st_hash_is_paged(st_ent_hash(*slot))) {
        slot = st_find_read(a->db, &a->argv[0], a->now, 0); /* the lookup INFO counts */
        st_hash_t *s = st_ent_hash(*slot);
        size_t mark = r->len;
        resp_set(r, a->proto, st_hash_len(s));
        ctx->reply_stream = st_hash_members_snapshot(s, ST_MEMBERS_NAMES);
        if (ctx->reply_stream) return;
        r->len = mark;
    }
    read_op(ctx, a, r, OP_INTER);
}

void st_read_sinter(store_ctx_t *ctx, const read_args_t *a, buf_t *r)
{
    read_op(ctx, a, r, OP_INTER);
}

void st_read_sunion(store_ctx_t *ctx, const read_args_t *a, buf_t *r)
{
    read_op(ctx, a, r, OP_UNION);
}

void st_read_sdiff(store_ctx_t *ctx, const read_args_t *a, buf_t *r)
{
    read_op(ctx, a, r, OP_DIFF);
}

/* SINTERCARD numkeys key... [LIMIT n]: Redis checks numkeys, then the
 * options, then every key's type; the count stops at LIMIT (0: none). */
void st_read_sintercard(store_ctx_t *ctx, const read_args_t *a, buf_t *r)
{
    (void)ctx;
    long long nk, limit = 0;
    if (str_to_ll((const char *)a->argv[0].ptr, a->argv[0].len, &nk) || nk < 1) {
        resp_error(r, "ERR numkeys should be greater than 0");
        return;
    }
    if (nk > (long long)a->argc - 1) {
        resp_error(r, "ERR Number of keys can't be greater than number of args");
        return;
    }
    for (uint32_t j = 1 + (uint32_t)nk; j < a->argc; j += 2) {
        if (j + 1 >= a->argc ||
            !(a->argv[j].len == 5 && strncasecmp((const char *)a->argv[j].ptr, "limit", 5) == 0)) {
            resp_error(r, "ERR syntax error");
            return;
        }
        if (str_to_ll((const char *)a->argv[j + 1].ptr, a->argv[j + 1].len, &limit) || limit < 0) {
            resp_error(r, "ERR LIMIT can't be negative");
            return;
        }
    }
    sets_t s;
    if (gather(a->db, a->now, 0, a->argv + 1, (uint16_t)nk, &s, r)) return;
    long long count = 0;
    int empty = 0;
    for (uint16_t i = 0; i < s.n; i++)
        empty |= !s.v[i];
    if (!empty) {
        qsort(s.v, s.n, sizeof(*s.v), by_size);
        idx_entry_t **all = members(s.v[0]);
        uint32_t n = st_hash_len(s.v[0]);
        for (uint32_t k = 0; k < n && (!limit || count < limit); k++) {
            int in_all = 1;
            for (uint16_t i = 1; i < s.n && in_all; i++)
                in_all = st_hash_find(s.v[i], all[k]->data, all[k]->klen) != NULL;
            count += in_all;
        }
        free(all);
    }
    free(s.v);
    resp_integer(r, count);
}

/* CMD_SINTERSTORE / SUNIONSTORE / SDIFFSTORE destination limit key...: the
 * destination is replaced whatever it held (its TTL goes), or removed when
 * the result is empty. */
static void apply_store(store_ctx_t *ctx, const apply_args_t *a, buf_t *r, int op)
{
    uint64_t max = (uint64_t)cmd_get_i64(a->argv[1].ptr);
    sets_t s;
    if (gather(a->db, ctx->now, 1, &a->argv[2], (uint16_t)(a->argc - 2), &s, r)) return;
    uint32_t n;
    st_hash_t *t;
    idx_entry_t **m = compute(op, &s, &n, &t, max, a->db);
    if (n && !t) { /* SINTER's members belong to the sources: copy them */
        t = set_for(a->db, m[0]->data, m[0]->klen);
        for (uint32_t i = 0; i < n; i++)
            set_add(t, max, m[i]->data, m[i]->klen);
    }
    free(m);
    free(s.v);
    idx_entry_t **dslot = st_find_live(a->db, &a->argv[0], ctx->now, 1);
    if (!n) {
        if (t) st_set_ops.free((st_obj_t *)t);
        if (dslot) {
            st_remove(a->db, dslot);
            st_key_changed(ctx, a, a->dbnum, &a->argv[0]);
        }
        if (r) resp_integer(r, 0);
        return;
    }
    st_ent_store(a->db, dslot, st_ent_new_obj(&a->argv[0], (st_obj_t *)t, 0));
    st_key_changed(ctx, a, a->dbnum, &a->argv[0]);
    if (r) resp_integer(r, n);
}

void st_apply_sinterstore(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    apply_store(ctx, a, r, OP_INTER);
}

void st_apply_sunionstore(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    apply_store(ctx, a, r, OP_UNION);
}

void st_apply_sdiffstore(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    apply_store(ctx, a, r, OP_DIFF);
}

/* ---- the other reads ---- */

static st_hash_t *lookup_read(const read_args_t *a, buf_t *r, int *wrong)
{
    idx_entry_t **slot = st_find_live(a->db, &a->argv[0], a->now, 0);
    *wrong = st_wrongtype(slot, ST_SET, r);
    return slot && !*wrong ? st_ent_hash(*slot) : NULL;
}

void st_read_sismember(store_ctx_t *ctx, const read_args_t *a, buf_t *r)
{
    (void)ctx;
    int wrong;
    st_hash_t *s = lookup_read(a, r, &wrong);
    if (!wrong) resp_integer(r, s && st_hash_find(s, a->argv[1].ptr, a->argv[1].len));
}

void st_read_smismember(store_ctx_t *ctx, const read_args_t *a, buf_t *r)
{
    (void)ctx;
    int wrong;
    st_hash_t *s = lookup_read(a, r, &wrong);
    if (wrong) return;
    resp_array(r, a->argc - 1);
    for (uint16_t i = 1; i < a->argc; i++)
        resp_integer(r, s && st_hash_find(s, a->argv[i].ptr, a->argv[i].len));
}

void st_read_scard(store_ctx_t *ctx, const read_args_t *a, buf_t *r)
{
    (void)ctx;
    int wrong;
    st_hash_t *s = lookup_read(a, r, &wrong);
    if (!wrong) resp_integer(r, s ? st_hash_len(s) : 0);
}

static uint64_t read_rng;

/* SRANDMEMBER key [count]: Redis 7.0's checks in its order (a fourth
 * argument, then the count, then the key). */
void st_read_srandmember(store_ctx_t *ctx, const read_args_t *a, buf_t *r)
{
    if (!read_rng) read_rng = a->db->ix.seed | 1;
    if (a->argc > 2) {
        resp_error(r, "ERR syntax error");
        return;
    }
    long long count = 0;
    if (a->argc == 2) {
        if (str_to_ll((const char *)a->argv[1].ptr, a->argv[1].len, &count)) {
            resp_error(r, ERR_NOT_INT);
            return;
        }
        if (count < -LLONG_MAX) {
            resp_error(r, "ERR value is out of range, value must between -9223372036854775807 "
                          "and 9223372036854775807");
            return;
        }
    }
    int wrong;
    st_hash_t *s = lookup_read(a, r, &wrong);
    if (wrong) return;
    if (!s) {
        if (a->argc == 2)
            resp_array(r, 0);
        else
            resp_null(r);
        return;
    }
    if (a->argc == 1) {
        idx_entry_t *f = st_hash_random(s, &read_rng);
        resp_bulk(r, f->data, f->klen);
        return;
    }
    size_t mark = r->len;
    uint32_t size = st_hash_len(s);
    if (count < 0) {
        uint64_t n = (uint64_t)(-count);
        resp_array(r, (long long)n);
        for (uint64_t i = 0; i < n; i++) {
            idx_entry_t *f = st_hash_random(s, &read_rng);
            resp_bulk(r, f->data, f->klen);
            if (ctx->max_reply && r->len - mark > ctx->max_reply) {
                r->len = mark;
                resp_error(r, STORE_ERR_TOO_LARGE);
                return;
            }
        }
        return;
    }
    uint32_t n = (uint64_t)count < size ? (uint32_t)count : size;
    idx_entry_t **v = members(s);
    if (n < size)
        for (uint32_t i = 0; i < n; i++) {
            uint32_t j = i + (uint32_t)(rng_step(&read_rng) % (size - i));
            idx_entry_t *t = v[i];
            v[i] = v[j];
            v[j] = t;
        }
    resp_array(r, n);
    for (uint32_t i = 0; i < n; i++)
        resp_bulk(r, v[i]->data, v[i]->klen);
    free(v);
    if (ctx->max_reply && r->len - mark > ctx->max_reply) {
        r->len = mark;
        resp_error(r, STORE_ERR_TOO_LARGE);
    }
}

/* ---- SSCAN ---- */

typedef struct sscan_arg {
    st_hash_t *s;
    const rec_arg_t *pat;
    st_scan_out_t out;
} sscan_arg_t;

static int sscan_visit(void *arg, idx_entry_t *f)
{
    sscan_arg_t *x = arg;
    x->out.visited++;
    if (x->pat &&
        !glob_match((const char *)x->pat->ptr, x->pat->len, (const char *)f->data, f->klen, 0))
        return 0;
    resp_bulk(&x->out.body, f->data, f->klen);
    x->out.n++;
    return 0;
}

static uint64_t sscan_step(void *arg, uint64_t cursor)
{
    sscan_arg_t *x = arg;
    return st_hash_scan(x->s, cursor, sscan_visit, x);
}

void st_read_sscan(store_ctx_t *ctx, const read_args_t *a, buf_t *r)
{
    uint64_t cursor;
    long long count;
    sscan_arg_t x = {NULL, NULL, {{0}, 0, 0, 1}};
    idx_entry_t *e = st_scan_key_begin(a, ST_SET, &cursor, &count, &x.pat, r);
    if (!e) return;
    x.s = st_ent_hash(e);
    buf_init(&x.out.body);
    st_scan_reply(ctx, cursor, count, sscan_step, &x, &x.out, r);
    buf_free(&x.out.body);
}
