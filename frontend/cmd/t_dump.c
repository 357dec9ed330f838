/*
 * t_dump.c - RESTORE's encoder (issue 13, D34): the options are checked
 * here (Redis checks them first); the key's existence (BUSYKEY), the TTL's
 * errors, the payload's version and checksum and its decoding are the
 * store's, in Redis' order (store/types/t_restore.c), so the TTL's
 * verdict travels in the flags. The record carries the absolute expiry
 * and the encoding limits, so replay decodes the same value the same way.
 * IDLETIME or FREQ (one of them: Redis takes the other as a syntax
 * error) travels as a flag and the record's last argument, and the store
 * sets the key's access data from it under the policy it applies with
 * (D52).
 */
#include <limits.h>
#include <stdint.h>

#include "frontend/cmd/encode.h"
#include "frontend/core/core.h"
#include "store/dump.h"
#include "strutil.h"

#define RESTORE_TTL_NOT_INT  2u
#define RESTORE_TTL_NEGATIVE 4u

int fe_enc_restore(const fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a, fe_enc_t *e)
{
    (void)d;
    uint32_t flags = 0;
    int abs = 0, idle = 0, freq = 0;
    long long access = 0; /* the IDLETIME or FREQ value */
    for (int j = 4; j < a->argc; j++) {
        const char *o = a->argv[j];
        size_t n = a->lens[j];
        int more = j < a->argc - 1;
        long long v;
        if (fe_word_eq(o, n, "replace")) {
            flags |= ST_RESTORE_REPLACE;
        } else if (fe_word_eq(o, n, "absttl")) {
            abs = 1;
        } else if (fe_word_eq(o, n, "idletime") && more && !freq) {
            if (str_to_ll(a->argv[j + 1], a->lens[j + 1], &v))
                return fe_enc_fail(e, FE_ERR_NOT_INT);
            if (v < 0) return fe_enc_fail(e, "ERR Invalid IDLETIME value, must be >= 0");
            idle = 1;
            access = v;
            j++;
        } else if (fe_word_eq(o, n, "freq") && more && !idle) {
            if (str_to_ll(a->argv[j + 1], a->lens[j + 1], &v))
                return fe_enc_fail(e, FE_ERR_NOT_INT);
            if (v < 0 || v > 255)
                return fe_enc_fail(e, "ERR Invalid FREQ value, must be >= 0 and <= 255");
            freq = 1;
            access = v;
            j++;
        } else {
            return fe_enc_fail(e, FE_ERR_SYNTAX);
        }
    }
    if (idle) flags |= ST_RESTORE_IDLETIME;
    if (freq) flags |= ST_RESTORE_FREQ;
    long long ttl = 0;
    if (str_to_ll(a->argv[2], a->lens[2], &ttl)) {
        flags |= RESTORE_TTL_NOT_INT;
        ttl = 0;
    } else if (ttl < 0) {
        flags |= RESTORE_TTL_NEGATIVE;
        ttl = 0;
    }
    if (ttl && !abs) {
        long long now = shm_now_ms();
        ttl = ttl > LLONG_MAX - now ? LLONG_MAX : ttl + now;
    }
    int64_t hn = c->fe->hash_max_entries, hv = c->fe->hash_max_value;
    uint64_t lo = hn < 0 ? 0 : hn > UINT32_MAX ? UINT32_MAX : (uint64_t)hn;
    uint64_t hi = hv < 0 ? 0 : hv > UINT32_MAX ? UINT32_MAX : (uint64_t)hv;
    fe_enc_begin(e, CMD_RESTORE, 1);
    fe_enc_arg(e, a->argv[1], a->lens[1]);
    fe_enc_arg(e, a->argv[3], a->lens[3]);
    fe_enc_u32(e, flags);
    fe_enc_i64(e, ttl);
    fe_enc_i64(e, (int64_t)(lo | hi << 32));
    fe_enc_i64(e, c->fe->set_max_intset < 0 ? 0 : c->fe->set_max_intset);
    int64_t zn = c->fe->zset_max_entries, zv = c->fe->zset_max_value;
    lo = zn < 0 ? 0 : zn > UINT32_MAX ? UINT32_MAX : (uint64_t)zn;
    hi = zv < 0 ? 0 : zv > UINT32_MAX ? UINT32_MAX : (uint64_t)zv;
    fe_enc_i64(e, (int64_t)(lo | hi << 32));
    fe_enc_i64(e, access); /* appended last: older records lack it (D52) */
    return 0;
}
