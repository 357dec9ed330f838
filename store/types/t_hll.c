/*
 * t_hll.c - the store's HyperLogLog commands, Redis 7.0's: PFADD, PFMERGE
 * and PFDEBUG (apply), PFCOUNT (read); PFSELFTEST is a frontend's
 * (frontend/cmd/local.c). A HyperLogLog is a string in Redis'
 * format (core/hll.h), so GET, SET, DUMP and RESTORE carry it as they
 * carry any string, to and from Redis.
 *
 * Each command reads the whole string (at most HLL_SPARSE_MAX_SIZE or
 * HLL_DENSE_SIZE bytes: longer is not a HyperLogLog), changes a copy, and
 * a write stores the copy as a new RAM value with the key's TTL, only when
 * something changed. So an error (a corrupt sparse string) changes
 * nothing. Writes carry hll-sparse-max-bytes in the record (the frontend's
 * enc_hll): a replay makes the same encoding whatever the setting is then.
 *
 * Known difference: Redis' PFCOUNT of one key writes the estimate it
 * computed into the string's header (a write it propagates, which touches
 * WATCH). Here PFCOUNT is a read and computes the estimate again while the
 * header says it is not valid; the header's estimate is only ever 0 and
 * valid (a new, empty HyperLogLog) or marked not valid, so GET after a
 * PFCOUNT differs from Redis' in those 8 bytes.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "handlers.h"
#include "hll.h"
#include "pubsub.h"
#include "resp.h"
#include "store/core/alloc.h"
#include "store/core/entry.h"
#include "store/core/object.h"
#include "store/core/value.h"
#include "store/core/watch.h"

#define ERR_NOT_HLL "WRONGTYPE Key is not a valid HyperLogLog string value."
#define ERR_CORRUPT "INVALIDOBJ Corrupted HLL object detected"

/* An error reply, unless the record is being replayed (r NULL). */
static void err(buf_t *r, const char *msg)
{
    if (r) resp_error(r, msg);
}

/* Read e's string into b when it is a HyperLogLog. Returns 0; or -1
 * after the error reply in r (not one, or a read error on a read: apply
 * set means a failed read stops the store instead). */
static int hll_load(store_ctx_t *ctx, idx_entry_t *e, hll_buf_t *b, int apply, buf_t *r)
{
    uint64_t len = st_ent_vlen(e);
    unsigned char hdr[HLL_HDR_SIZE];
    if (len < HLL_HDR_SIZE) {
        err(r, ERR_NOT_HLL);
        return -1;
    }
    if (apply)
        st_apply_read(ctx, e, 0, HLL_HDR_SIZE, hdr, "a HyperLogLog command");
    else if (st_read_range(ctx, e, 0, HLL_HDR_SIZE, hdr)) {
        resp_error(r, STORE_ERR_IO);
        return -1;
    }
    if (!hll_is_valid(hdr, (size_t)len)) { /* reads the header only */
        err(r, ERR_NOT_HLL);
        return -1;
    }
    if (len > HLL_SPARSE_MAX_SIZE) { /* more opcodes than registers */
        err(r, ERR_CORRUPT);
        return -1;
    }
    b->len = b->cap = (size_t)len;
    b->p = st_xmalloc(b->cap);
    if (apply) {
        st_apply_read(ctx, e, 0, len, b->p, "a HyperLogLog command");
    } else if (st_read_range(ctx, e, 0, len, b->p)) {
        free(b->p);
        resp_error(r, STORE_ERR_IO);
        return -1;
    }
    return 0;
}

/* Store b as key's new value (raw, the TTL kept), which slot (NULL: none)
 * held before; report the change as Redis' "pfadd" when `report`, else
 * only drop the read cache's copy (PFDEBUG: Redis just propagates it). */
static void hll_store(store_ctx_t *ctx, const apply_args_t *a, const rec_arg_t *key,
                      idx_entry_t **slot, const hll_buf_t *b, int report)
{
    idx_entry_t *e = st_ent_new_ram(key, b->p, b->len, slot ? st_ent_expire(*slot) : 0);
    st_ent_set_enc(e, VENC_RAW);
    st_ent_store(a->db, slot, e);
    if (report)
        st_key_changed_as(ctx, a, a->dbnum, key, PS_NOTIFY_STRING, "pfadd");
    else
        st_rcache_drop(ctx, a->dbnum, key);
}

/* CMD_PFADD key sparse-max [element ...]: Redis' pfaddCommand. A missing
 * key is made (an empty HyperLogLog, which counts as a change); the reply
 * is 1 when the key was made or a register rose. */
void st_apply_pfadd(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    const rec_arg_t *key = &a->argv[0];
    int64_t sparse_max = cmd_get_i64(a->argv[1].ptr);
    idx_entry_t **slot = st_find_live(a->db, key, ctx->now, 1);
    if (st_wrongtype(slot, ST_STRING, r)) return;
    hll_buf_t b;
    int updated = 0;
    if (!slot) {
        hll_new(&b);
        updated = 1;
    } else if (hll_load(ctx, *slot, &b, 1, r)) {
        return;
    }
    for (uint16_t i = 2; i < a->argc; i++) {
        int rc = hll_add(&b, a->argv[i].ptr, a->argv[i].len, sparse_max);
        if (rc < 0) {
            err(r, ERR_CORRUPT);
            free(b.p);
            return;
        }
        updated |= rc;
    }
    if (updated) {
        hll_invalidate(&b);
        hll_store(ctx, a, key, slot, &b, 1);
    }
    free(b.p);
    if (r) resp_integer(r, updated);
}

/* CMD_PFMERGE destkey sparse-max [sourcekey ...]: Redis' pfmergeCommand.
 * destkey and then the sources are read (missing ones are empty) into the
 * registers' maxima; any one not a HyperLogLog answers an error before
 * anything changes. destkey (made if missing) becomes dense when any of
 * them was, then takes the maxima. Always a change ("pfadd"), as Redis. */
void st_apply_pfmerge(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    const rec_arg_t *dest = &a->argv[0];
    int64_t sparse_max = cmd_get_i64(a->argv[1].ptr);
    uint8_t *max = st_xmalloc(HLL_REGISTERS);
    memset(max, 0, HLL_REGISTERS);
    hll_buf_t d = {0};
    int dense = 0;
    for (uint16_t i = 0; i < a->argc; i++) {
        if (i == 1) continue; /* sparse-max */
        idx_entry_t **slot = st_find_read(a->db, &a->argv[i], ctx->now, 1);
        if (!slot) continue;
        hll_buf_t b;
        if (st_wrongtype(slot, ST_STRING, r) || hll_load(ctx, *slot, &b, 1, r)) goto out;
        dense |= b.p[4] == HLL_DENSE;
        int rc = hll_merge(max, b.p, b.len);
        if (i == 0)
            d = b; /* destkey's own string, to change */
        else
            free(b.p);
        if (rc) {
            err(r, ERR_CORRUPT);
            goto out;
        }
    }
    idx_entry_t **slot = st_find_live(a->db, dest, ctx->now, 1);
    if (!d.p) hll_new(&d);
    if (dense && hll_to_dense(&d)) { /* merged above: cannot fail */
        err(r, ERR_CORRUPT);
        goto out;
    }
    for (long j = 0; j < HLL_REGISTERS; j++)
        if (max[j]) (void)hll_set(&d, j, max[j], sparse_max);
    hll_invalidate(&d);
    hll_store(ctx, a, dest, slot, &d, 1);
    if (r) resp_simple(r, "OK");
out:
    free(d.p);
    free(max);
}

/* PFCOUNT key [key ...]: one key's estimate (its header's while valid),
 * or the estimate of the union of several (missing keys are empty). */
void st_read_pfcount(store_ctx_t *ctx, const read_args_t *a, buf_t *r)
{
    if (a->argc == 1) {
        idx_entry_t **slot = st_find_read(a->db, &a->argv[0], a->now, 0);
        if (!slot) {
            resp_integer(r, 0);
            return;
        }
        hll_buf_t b;
        if (st_wrongtype(slot, ST_STRING, r) || hll_load(ctx, *slot, &b, 0, r)) return;
        uint64_t card;
        int invalid = 0;
        if (!hll_cached(b.p, &card)) card = hll_count(b.p, b.len, &invalid);
        free(b.p);
        if (invalid)
            resp_error(r, ERR_CORRUPT);
        else
            resp_integer(r, (long long)card);
        return;
    }
    uint8_t *max = st_xmalloc(HLL_REGISTERS);
    memset(max, 0, HLL_REGISTERS);
    for (uint16_t i = 0; i < a->argc; i++) {
        idx_entry_t **slot = st_find_read(a->db, &a->argv[i], a->now, 0);
        if (!slot) continue;
        hll_buf_t b;
        if (st_wrongtype(slot, ST_STRING, r) || hll_load(ctx, *slot, &b, 0, r)) {
            free(max);
            return;
        }
        int rc = hll_merge(max, b.p, b.len);
        free(b.p);
        if (rc) {
            resp_error(r, ERR_CORRUPT);
            free(max);
            return;
        }
    }
    resp_integer(r, (long long)hll_count_raw(max));
    free(max);
}

/* PFDEBUG's DECODE: the sparse opcodes as Redis writes them ("z:3" ZERO,
 * "Z:300" XZERO, "v:2,1" VAL value,length), space-separated. */
static void decode_sparse(const hll_buf_t *b, buf_t *r)
{
    buf_t s = {0};
    for (size_t at = HLL_HDR_SIZE; at < b->len;) {
        const unsigned char *o = b->p + at;
        char one[32];
        int n;
        if ((*o & 0xc0) == 0) {
            n = snprintf(one, sizeof(one), "z:%d ", (*o & 0x3f) + 1);
            at++;
        } else if ((*o & 0xc0) == 0x40) {
            /* a string cut inside its last XZERO reads a zero byte, as Redis */
            unsigned lo = at + 1 < b->len ? o[1] : 0;
            n = snprintf(one, sizeof(one), "Z:%u ", ((*o & 0x3fu) << 8 | lo) + 1);
            at += 2;
        } else {
            n = snprintf(one, sizeof(one), "v:%d,%d ", ((*o >> 2) & 0x1f) + 1, (*o & 3) + 1);
            at++;
        }
        buf_append(&s, one, (size_t)n);
    }
    resp_bulk(r, s.len ? s.data : "", s.len ? s.len - 1 : 0); /* without the last space */
    buf_free(&s);
}

/* CMD_PFDEBUG subcommand key: Redis' pfdebugCommand. The key first (it
 * must exist and be a HyperLogLog), then GETREG (the 16,384 registers,
 * making a sparse value dense), DECODE, ENCODING or TODENSE (1 when it
 * made the value dense). A value made dense is stored without an event
 * or a touch of WATCH, as Redis only propagates it. */
void st_apply_pfdebug(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    const rec_arg_t *sub = &a->argv[0], *key = &a->argv[1];
    idx_entry_t **slot = st_find_live(a->db, key, ctx->now, 1);
    if (!slot) {
        err(r, "ERR The specified key does not exist");
        return;
    }
    hll_buf_t b;
    if (st_wrongtype(slot, ST_STRING, r) || hll_load(ctx, *slot, &b, 1, r)) return;
    int sparse = b.p[4] == HLL_SPARSE;
#define SUB_IS(w) (sub->len == sizeof(w) - 1 && !strncasecmp((const char *)sub->ptr, w, sub->len))
    if (SUB_IS("getreg") || SUB_IS("todense")) {
        if (sparse) {
            if (hll_to_dense(&b)) {
                err(r, ERR_CORRUPT);
                free(b.p);
                return;
            }
            hll_store(ctx, a, key, slot, &b, 0);
        }
        if (r && SUB_IS("getreg")) {
            resp_array(r, HLL_REGISTERS);
            for (long j = 0; j < HLL_REGISTERS; j++)
                resp_integer(r, hll_dense_get(b.p + HLL_HDR_SIZE, j));
        } else if (r) {
            resp_integer(r, sparse);
        }
    } else if (SUB_IS("decode")) {
        if (!sparse)
            err(r, "ERR HLL encoding is not sparse");
        else if (r)
            decode_sparse(&b, r);
    } else if (SUB_IS("encoding")) {
        if (r) resp_simple(r, sparse ? "sparse" : "dense");
    } else if (r) {
        char msg[128];
        snprintf(msg, sizeof(msg), "ERR Unknown PFDEBUG subcommand '%.*s'",
                 (int)(sub->len < 64 ? sub->len : 64), (const char *)sub->ptr);
        resp_error(r, msg);
    }
#undef SUB_IS
    free(b.p);
}
