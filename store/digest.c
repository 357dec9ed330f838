/*
 * digest.c - DEBUG DIGEST and DEBUG DIGEST-VALUE: a 160-bit fingerprint of
 * the logical state (every live key of every database with its type, value
 * and expiry) or of single values, as the 40 hex digits Redis answers.
 * Store process only (and tests); single-threaded; reads, never changes,
 * the state.
 *
 * The digest is order-independent: each entry's 160 bits (XXH3-128 and a
 * differently seeded XXH3-64 of the entry, the last 32 bits dropped) are
 * added lane by lane, so two stores with the same keys and values agree
 * whatever their hash seeds, table sizes or the order keys were loaded in:
 * exactly what a restart from a checkpoint must preserve (tests compare the
 * digest before and after one). An empty dataset is all zeros, as in Redis.
 * The numbers are AtticDB's own; they do not match Redis' for the same data.
 * Unlike Redis, a key whose TTL has run out by the wall clock is left out
 * even when it was not reclaimed yet: when AtticDB reclaims it differs
 * between live apply and replay, what is visible does not.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "digest.h"
#include "compact.h"
#include "resp.h"
#include "store/core/entry.h"
#include "store/core/hash.h"
#include "store/core/list.h"
#include "store/core/stream.h"
#include "store/core/object.h"
#include "store/core/index.h"
#include "store/core/value.h"
#include "store/core/zset.h"
#include "store/types/handlers.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

#define DIGEST_SEED_A      0x41747469634442ull /* fixed: digests compare across processes */
#define DIGEST_SEED_B      0x4469676573743136ull
#define DIGEST_TYPE_STRING 1

typedef struct dig_state {
    XXH3_state_t a, b;
} dig_state_t;

static void dig_reset(dig_state_t *d)
{
    /* A seeded reset reads the state's previous seed: initialise it first. */
    XXH3_INITSTATE(&d->a);
    XXH3_INITSTATE(&d->b);
    XXH3_128bits_reset_withSeed(&d->a, DIGEST_SEED_A);
    XXH3_64bits_reset_withSeed(&d->b, DIGEST_SEED_B);
}

static void dig_update(dig_state_t *d, const void *p, size_t n)
{
    XXH3_128bits_update(&d->a, p, n);
    XXH3_64bits_update(&d->b, p, n);
}

static void dig_add(uint64_t sum[3], dig_state_t *d)
{
    XXH128_hash_t h = XXH3_128bits_digest(&d->a);
    sum[0] += h.low64;
    sum[1] += h.high64;
    sum[2] += XXH3_64bits_digest(&d->b);
}

static int feed(void *arg, const unsigned char *p, size_t n)
{
    static const unsigned char zeros[4096];
    dig_state_t *d = arg;
    if (p) {
        dig_update(d, p, n);
        return 0;
    }
    while (n > 0) { /* a run of zero bytes */
        size_t k = n < sizeof(zeros) ? n : sizeof(zeros);
        dig_update(d, zeros, k);
        n -= k;
    }
    return 0;
}

/* The value part: type tag, length, bytes. Returns 0 or -1 (I/O). */
static int dig_value(store_ctx_t *ctx, idx_entry_t *e, dig_state_t *d)
{
    uint8_t type = DIGEST_TYPE_STRING;
    uint64_t vlen = st_ent_vlen(e);
    dig_update(d, &type, 1);
    dig_update(d, &vlen, sizeof(vlen));
    return st_scan_range(ctx, e, 0, vlen, feed, d) < 0 ? -1 : 0;
}

typedef struct dataset_arg {
    store_ctx_t *ctx;
    uint32_t dbnum;
    int64_t now;
    uint64_t sum[3];
} dataset_arg_t;

static int dig_entry(void *arg, idx_entry_t *e)
{
    dataset_arg_t *a = arg;
    if (st_ent_expired(e, a->now)) return 0;
    dig_state_t d;
    dig_reset(&d);
    dig_update(&d, &a->dbnum, sizeof(a->dbnum));
    dig_update(&d, &e->klen, sizeof(e->klen));
    dig_update(&d, e->data, e->klen);
    int64_t expire = st_ent_expire(e);
    dig_update(&d, &expire, sizeof(expire));
    if (dig_value(a->ctx, e, &d)) return -1;
    dig_add(a->sum, &d);
    return 0;
}

static void to_bytes(const uint64_t sum[3], unsigned char out[STORE_DIGEST_BYTES])
{
    unsigned char all[24];
    memcpy(all, sum, sizeof(all));
    memcpy(out, all, STORE_DIGEST_BYTES);
}

int store_digest160(store_ctx_t *ctx, int64_t now_ms, unsigned char out[STORE_DIGEST_BYTES])
{
    dataset_arg_t a = {ctx, 0, now_ms, {0, 0, 0}};
    for (int i = 0; i < ctx->ndb; i++) {
        a.dbnum = (uint32_t)i;
        if (idx_foreach(&ctx->dbs[i]->ix, dig_entry, &a)) return -1;
    }
    to_bytes(a.sum, out);
    return 0;
}

void store_digest_hex(const unsigned char d[STORE_DIGEST_BYTES], char out[STORE_DIGEST_HEX + 1])
{
    for (int i = 0; i < STORE_DIGEST_BYTES; i++)
        snprintf(out + 2 * i, 3, "%02x", d[i]);
}

/* DEBUG HELP's lines, in Redis' form. */
static const char *const debug_help[] = {
    "DEBUG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "DIGEST",
    "    Output a hex signature representing the current DB content.",
    "DIGEST-VALUE <key> [<key> ...]",
    "    Output a hex signature of the values of all the specified keys.",
    "SEGMENTS",
    "    AtticDB: the log bytes values refer to per segment: [recount agrees (1/0), total,",
    "    then segment start and live bytes for each segment with some].",
    "PAGED <key>",
    "    AtticDB: how a hash or set is kept (D60): [paged (1/0), ranges, pages, page bytes,",
    "    overlay entries in RAM, pinned entries, members]; a list (D63): [paged (1/0),",
    "    chunks, pages, page bytes, elements in RAM, pinned elements, elements], a stream's",
    "    (D64) the same of entries; a sorted set (D65): its order's seven, then its scores'.",
    "HELP",
    "    Prints this help.",
};

static int is_sub(const rec_arg_t *a, const char *name)
{
    return a->len == strlen(name) && strncasecmp((const char *)a->ptr, name, a->len) == 0;
}

/* DEBUG DIGEST | DIGEST-VALUE key... | HELP; the others Redis has answer
 * its error for an unknown subcommand. */
void st_read_debug(store_ctx_t *ctx, const read_args_t *a, buf_t *r)
{
    char hex[STORE_DIGEST_HEX + 1];
    unsigned char d[STORE_DIGEST_BYTES];
    if (a->argc == 1 && is_sub(&a->argv[0], "digest")) {
        if (store_digest160(ctx, a->now, d)) {
            resp_error(r, STORE_ERR_IO);
            return;
        }
        store_digest_hex(d, hex);
        resp_simple(r, hex);
        return;
    }
    if (a->argc >= 1 && is_sub(&a->argv[0], "digest-value")) {
        resp_array(r, a->argc - 1);
        for (int i = 1; i < a->argc; i++) {
            uint64_t sum[3] = {0, 0, 0};
            idx_entry_t **slot = st_find_quiet(a->db, &a->argv[i], a->now);
            if (slot) {
                dig_state_t ds;
                dig_reset(&ds);
                if (dig_value(ctx, *slot, &ds)) {
                    resp_error(r, STORE_ERR_IO);
                    continue;
                }
                dig_add(sum, &ds);
            }
            to_bytes(sum, d);
            store_digest_hex(d, hex);
            resp_simple(r, hex);
        }
        return;
    }
    if (a->argc == 1 && is_sub(&a->argv[0], "segments")) {
        store_live_reply(ctx, r);
        return;
    }
    if (a->argc == 2 && is_sub(&a->argv[0], "paged")) {
        idx_entry_t **slot = st_find_quiet(a->db, &a->argv[1], a->now);
        unsigned t = slot ? st_ent_type(*slot) : ST_STRING;
        if (t != ST_HASH && t != ST_SET && t != ST_LIST && t != ST_STREAM && t != ST_ZSET) {
            resp_error(r,
                       "ERR no such key, or not a hash, a set, a list, a stream or a sorted set");
            return;
        }
        /* A list's or a stream's seven figures, a hash's, or a sorted set's
         * order's then its member -> score part's (D65). */
        long long v[14];
        int nv = 7;
        st_list_t *l = t == ST_LIST   ? st_ent_list(*slot)
                       : t == ST_ZSET ? st_zset_order(st_ent_zset(*slot))
                                      : NULL;
        st_hash_t *h = t == ST_ZSET                  ? st_zset_dict(st_ent_zset(*slot))
                       : t == ST_HASH || t == ST_SET ? st_ent_hash(*slot)
                                                     : NULL;
        /* paged, chunks, pages, page bytes, in RAM, pinned, elements */
        if (l) st_list_page_stats(l, v);
        if (t == ST_STREAM)
            st_stream_page_stats(st_ent_stream(*slot), v); /* the same, of entries */
        if (h) {
            st_pgstats_t s;
            st_hash_page_stats(h, &s);
            long long hv[7] = {s.paged,   s.ranges, s.pages,  (long long)s.page_bytes,
                               s.overlay, s.pinned, s.members};
            memcpy(v + (l ? 7 : 0), hv, sizeof(hv));
            if (l) nv = 14;
        }
        resp_array(r, nv);
        for (int i = 0; i < nv; i++)
            resp_integer(r, v[i]);
        return;
    }
    if (a->argc == 1 && is_sub(&a->argv[0], "help")) {
        size_t n = sizeof(debug_help) / sizeof(debug_help[0]);
        resp_array(r, (long long)n);
        for (size_t i = 0; i < n; i++)
            resp_simple(r, debug_help[i]);
        return;
    }
    char name[129], msg[256];
    size_t n = a->argv[0].len < 128 ? a->argv[0].len : 128;
    memcpy(name, a->argv[0].ptr, n);
    name[n] = '\0';
    for (size_t i = 0; i < n; i++)
        if (name[i] == '\r' || name[i] == '\n' || name[i] == '\0') name[i] = ' ';
    snprintf(msg, sizeof(msg),
             "ERR unknown subcommand or wrong number of arguments for '%s'. Try DEBUG HELP.", name);
    resp_error(r, msg);
}
