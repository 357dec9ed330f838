/*
 * cached.c - GET and MGET answered from the read cache (common/rcache.h,
 * D70), and the other reads of one key the registry marks RC (D71), in a
 * frontend process, without the store's round trip.
 *
 * Every read used to cross to the store and back: two process wake-ups
 * per GET that Redis does not make, most of a GET's cost on this
 * machine (D69). The store now leaves each GET's answer in shared memory
 * (the value's reply of a string without a TTL, or the key's absence),
 * rewrites it when SET or MSET write such a key, and drops it at every
 * other change it applies; a frontend answers the next GET of that key from
 * there when the store's published applied LSN covers the durable LSN
 * (rcache.h says why that is contract 3). An MGET is answered when the
 * cache knows every key and its reads were one snapshot. Another read
 * of one key (LRANGE, HGETALL, ZSCORE ...) is answered when the store
 * left the reply of the same words in the same protocol: it does so only
 * for a key that exists without a TTL, so absences stay the store's.
 *
 * Left to the store: a connection with a reply still owed (its order), a
 * store behind the log (a write's ack does not wait for its apply, D25),
 * an absence while someone listens to "keymiss" events (the store
 * publishes them), and a maxmemory-policy that chooses victims by access
 * (a hit here does not touch the key's access data).
 */
#include "frontend/cmd/cmd.h"
#include "io_fault.h"
#include "pubsub.h"
#include "rcache.h"

/* May c's read be answered from the cache now? */
static int usable(fe_conn_t *c)
{
    if (!rcache_shared || c->head || c->reads_outstanding) return 0;
    shm_t *shm = c->fe->shm;
    if (config_policy_by_access((int)atomic_load_explicit(&shm->mem_policy, memory_order_relaxed)))
        return 0;
    /* Durable first, then applied: an applied LSN read after covers every
     * reply sent before this read arrived (rcache.h). */
    uint64_t durable = atomic_load_explicit(&shm->durable_lsn, memory_order_acquire);
    uint64_t applied = atomic_load_explicit(&shm->store_counts_lsn, memory_order_acquire);
    return applied >= durable && applied >= c->last_write_end;
}

/* Whether an absence may be answered here: not while "keymiss" events may
 * have a listener (the store publishes them as it looks the key up). */
static int absence_ok(fe_conn_t *c)
{
    return !(atomic_load_explicit(&c->fe->shm->notify_flags, memory_order_relaxed) &
             PS_NOTIFY_KEY_MISS);
}

static void count(fe_conn_t *c, uint64_t hits, uint64_t absent)
{
    shm_fe_stats_t *st = c->fe->stats;
    if (hits) atomic_fetch_add_explicit(&st->cache_hits, hits, memory_order_relaxed);
    if (absent) atomic_fetch_add_explicit(&st->cache_misses, absent, memory_order_relaxed);
}

static const char *null_reply(const fe_conn_t *c, size_t *n)
{
    *n = c->proto >= 3 ? 3 : 5;
    return c->proto >= 3 ? "_\r\n" : "$-1\r\n";
}

int fe_cached_get(fe_conn_t *c, const fe_args_t *a)
{
    if (!usable(c)) return 0;
    unsigned char out[RCACHE_SLOT_BYTES];
    int n =
        rcache_get(rcache_shared, (unsigned)c->db, a->argv[1], a->lens[1], out, c->last_active_ms);
    if (n < 0 || (n == 0 && !absence_ok(c))) return 0;
    if (n == 0) {
        size_t len;
        const char *nil = null_reply(c, &len);
        fe_reply_ready_static(c, nil, len);
        count(c, 0, 1);
        return 1;
    }
    if (!c->reply_suppress) buf_append(&c->out, out, (size_t)n);
    count(c, 1, 0);
    return 1;
}

int fe_cached_mget(fe_conn_t *c, const fe_args_t *a)
{
    int nkeys = a->argc - 1;
    if (nkeys < 1 || nkeys > FE_CACHED_MGET_MAX || !usable(c)) return 0;
    int absent_ok = absence_ok(c);
    /* Written straight into c's output (usable: no reply owed before it),
     * cut off again when the store must answer. */
    size_t mark = c->out.len;
    buf_appendf(&c->out, "*%d\r\n", nkeys);
    unsigned char out[RCACHE_SLOT_BYTES];
    rcache_mark_t marks[FE_CACHED_MGET_MAX];
    uint64_t hits = 0, absent = 0;
    for (int i = 1; i <= nkeys; i++) {
        int n = rcache_get_marked(rcache_shared, (unsigned)c->db, a->argv[i], a->lens[i], out,
                                  c->last_active_ms, &marks[i - 1]);
        if (n < 0 || (n == 0 && !absent_ok)) {
            c->out.len = mark;
            return 0; /* one the cache does not know: the store answers all */
        }
        /* Test hook: the frontend held between the first key and the rest. */
        if (i == 1) (void)io_fault_point(IO_FAULT_CACHE_MGET);
        if (n > 0) {
            buf_append(&c->out, out, (size_t)n);
            hits++;
        } else {
            size_t len;
            const char *nil = null_reply(c, &len);
            buf_append(&c->out, nil, len);
            absent++;
        }
    }
    /* One snapshot (rcache.h): nothing read moved, and nothing durable is
     * still being applied (a transaction half applied, say). */
    int same = 1;
    for (int i = 0; i < nkeys && same; i++)
        same = rcache_unchanged(rcache_shared, &marks[i]);
    if (!same || !usable(c)) {
        c->out.len = mark;
        return 0;
    }
    if (c->reply_suppress) c->out.len = mark;
    count(c, hits, absent);
    return 1;
}

int fe_cached_query(fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a)
{
    if (a->argc < 2 || !usable(c)) return 0;
    unsigned char query[RCACHE_QUERY_MAX];
    size_t qlen = rcache_query(query, sizeof(query), c->proto, d->id, a->argc - 2,
                               (const unsigned char *const *)(a->argv + 2), a->lens + 2);
    if (!qlen) return 0;
    unsigned char out[RCACHE_BIG_SLOT_BYTES];
    int n = rcache_get_query(rcache_shared, (unsigned)c->db, a->argv[1], a->lens[1], query, qlen,
                             out, c->last_active_ms);
    if (n <= 0) return 0;
    count(c, 1, 0);
    if (c->reply_suppress) return 1;
    /* The store's reply as it left the store: its RESP2 nulls become
     * RESP3's here, as they do for every store reply (conn.c). */
    if (c->proto >= 3) {
        buf_t conv;
        buf_init(&conv);
        int rc = resp3_from_resp2((const char *)out, (size_t)n, &conv);
        if (rc == 1) buf_append(&c->out, conv.data, conv.len);
        buf_free(&conv);
        if (rc == 1) return 1;
    }
    buf_append(&c->out, out, (size_t)n);
    return 1;
}
