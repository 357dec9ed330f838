/*
 * evict.c - eviction under maxmemory, the store process's part (evict.h,
 * D32). Run by the store between batches (store.c), single-threaded.
 *
 * Why records: the state must stay a function of the log (contract 4), so
 * the store cannot just drop a key; it writes CMD_EVICT (the key) into the
 * ring like a client's DEL, through its own claimer (shared with
 * compaction's CMD_RELOCATE), and the key goes when that record is
 * durable and applied (store/types/evict.c), on replay at the same point.
 * The choice may use the live access data (LRU clock, LFU counters): only
 * the record decides, so replay never chooses.
 *
 * Pacing: one round's records are in flight at a time. A round writes
 * victims until their bytes cover the excess over maxmemory (or
 * STORE_EVICT_BATCH keys), then waits until they are applied and the
 * published figure moved, so the store never evicts twice for the same
 * excess. Memory may exceed the bound meanwhile by what writes add in one
 * round trip through the logger: the frontends accept writes under an
 * evicting policy and refuse them (-OOM, as Redis) only while the store
 * says it has nothing to evict (shm->evict_stuck).
 *
 * A crash of the store loses nothing: records written are in the ring and
 * applied by the next store; a claim it held is abandoned and skipped
 * (contract 5).
 */
#include "evict.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "command.h"
#include "record.h"
#include "ring.h"
#include "shm.h"
#include "store/core/entry.h"
#include "store/core/evict.h"

#define STORE_EVICT_BATCH    256
#define STORE_EVICT_RETRY_MS 100 /* stuck: look again this often */
#define STORE_EVICT_CHECK    16  /* keys between two looks at the clock, as Redis */

uint64_t store_evict_time_limit_us(int tenacity)
{
    if (tenacity <= 0) return 0;
    if (tenacity <= 10) return 50u * (uint64_t)tenacity;
    if (tenacity < 100) return (uint64_t)(500.0 * pow(1.15, tenacity - 10.0));
    return UINT64_MAX;
}

void store_evict_exceeded(shm_t *shm, int over, int64_t now_ms)
{
    int64_t since = atomic_load_explicit(&shm->evict_exceeded_since_ms, memory_order_relaxed);
    if (over && !since) {
        atomic_store(&shm->evict_exceeded_since_ms, now_ms > 0 ? now_ms : 1);
    } else if (!over && since) {
        /* The total first: INFO adds the current spell to it, so a reader
         * between the two stores counts this spell twice for an instant
         * rather than not at all. */
        atomic_fetch_add(&shm->evict_exceeded_total_ms, now_ms > since ? now_ms - since : 0);
        atomic_store(&shm->evict_exceeded_since_ms, 0);
    }
}

void store_evict_settings(store_evict_t *ev, store_ctx_t *ctx, shm_t *shm)
{
    uint64_t v = atomic_load_explicit(&shm->mem_version, memory_order_acquire);
    if (!v || v == ev->mem_version) return;
    ev->mem_version = v;
    ev->maxmemory = (uint64_t)atomic_load(&shm->mem_maxmemory);
    st_access_t *a = &ctx->access;
    a->policy = (int)atomic_load(&shm->mem_policy);
    a->samples = (int)atomic_load(&shm->mem_samples);
    a->lfu_log_factor = (int)atomic_load(&shm->mem_lfu_log_factor);
    a->lfu_decay_time = (int)atomic_load(&shm->mem_lfu_decay_time);
    ev->tenacity = (int)atomic_load(&shm->mem_tenacity);
    ctx->list_fill = atomic_load(&shm->mem_list_fill);
    ctx->list_compress_depth = atomic_load(&shm->mem_list_compress_depth);
    ctx->rdb_compression = (int)atomic_load(&shm->mem_rdb_compression);
    ev->last_round_ms = 0; /* a new policy may find victims: look now */
}

static void set_stuck(shm_t *shm, uint32_t v)
{
    if (atomic_load_explicit(&shm->evict_stuck, memory_order_relaxed) != v)
        atomic_store(&shm->evict_stuck, v);
}

/* Encode and commit CMD_EVICT for v. 1 committed, 0 the ring is full, -1
 * the key is too long for a record (never evicted: the frontends took
 * it in a record, so this cannot happen with the same ring). */
static int write_evict(store_ctx_t *ctx, shm_t *shm, const st_victim_t *v, uint64_t *end)
{
    ring_t *ring = shm_ring(shm);
    uint32_t lens[1] = {v->klen};
    const unsigned char *argv[1] = {v->key};
    size_t payload = rec_cmd_payload_size(1, lens);
    if (payload + REC_HDR_SIZE > ring_max_record(ring)) return -1;
    uint32_t space = rec_space((uint32_t)payload);
    uint64_t pos;
    if (ring_claim(ring, shm_store_claimer(shm), space, &pos) != 0) return 0;
    uint64_t durable = atomic_load_explicit(&shm->durable_lsn, memory_order_acquire);
    /* The apply clock as the record's time: applying it moves no clock. */
    rec_encode_cmd_durable(ring_ptr(ring, pos), pos, durable, 0, ctx->now,
                           REC_OP_DB(CMD_EVICT, v->db), 1, argv, lens);
    ring_commit(ring, shm_store_claimer(shm), pos);
    *end = pos + space;
    return 1;
}

int store_evict_round(store_evict_t *ev, store_ctx_t *ctx, store_compact_t *claim, shm_t *shm)
{
    /* What the frontends check (shm_used_memory), with the index figure
     * fresh: the clients' unsent replies count too, as in Redis. */
    uint64_t used = store_index_bytes(ctx) + shm_clients_bytes(shm);
    /* Over the bound counts under noeviction too (Redis' EVICT_FAIL). */
    store_evict_exceeded(shm, ev->maxmemory && used > ev->maxmemory,
                         (int64_t)(shm_mono_ns() / 1000000));
    if (!ev->maxmemory || used <= ev->maxmemory || ctx->access.policy == CONFIG_POLICY_NOEVICTION) {
        set_stuck(shm, 0);
        return 0;
    }
    uint64_t applied = store_applied(ctx);
    if (ev->inflight_end > applied) return 0; /* the last round is not applied yet */
    int64_t now = shm_now_ms();
    /* Stuck and nothing applied since: the answer would be the same. */
    if (atomic_load_explicit(&shm->evict_stuck, memory_order_relaxed) &&
        applied == ev->last_applied && now - ev->last_round_ms < STORE_EVICT_RETRY_MS)
        return 0;
    if (!store_compact_claimer_ready(claim, shm)) return 0;
    ev->last_applied = applied;
    ev->last_round_ms = now;
    uint64_t need = used - ev->maxmemory, freed = 0;
    int n = 0, none = 0, tries = 0;
    uint64_t limit_us = store_evict_time_limit_us(ev->tenacity), start_ns = shm_mono_ns();
    while (freed < need && n < STORE_EVICT_BATCH && tries++ < 2 * STORE_EVICT_BATCH) {
        /* Redis' tenacity: a round that ran its time yields; the next
         * round (once these records are applied) goes on from there. */
        if (n && n % STORE_EVICT_CHECK == 0 && limit_us != UINT64_MAX &&
            (shm_mono_ns() - start_ns) / 1000 >= limit_us) {
            ev->yields++;
            break;
        }
        st_victim_t v;
        if (!st_evict_pick(ctx, now, &v, &none)) break;
        int rc = write_evict(ctx, shm, &v, &ev->inflight_end);
        free(v.key);
        if (rc == 0) break; /* ring full: the rest next turn */
        if (rc < 0) continue;
        freed += v.bytes;
        n++;
    }
    /* Nothing chosen: volatile-* without keys with a TTL, or no keys. */
    set_stuck(shm, n == 0 && none);
    if (n) {
        ev->written += (uint64_t)n;
        shm_wake(&shm->logger_wake);
    }
    return n;
}
