/*
 * shm.h - the layout of the one shared-memory segment every AtticDB process
 * maps. The master creates it (MAP_SHARED|MAP_ANONYMOUS) before forking, so
 * every child sees it at the same address; still, parts are found by offsets
 * from the segment's start, never by stored pointers, so the layout does not
 * depend on that.
 *
 *   shm_t          counters, LSNs, wake-ups, per-frontend slots
 *   ring_t         the record ring (ring.h), at ring_off
 *   chan_t x 2N    each frontend's request and reply channel (chan.h)
 *   frontend part  the tables only frontends use (frontend/fe-shm.h), at
 *                  frontend_off
 *   pubsub part    subscriptions and the broadcast ring (pubsub.h), at
 *                  pubsub_off: frontends and the store use it
 *
 * Each part is sized by its own module (ring_shm_size, chan_shm_size,
 * fe_shm_size) and laid out here at 64-byte aligned offsets; shm.h holds
 * only what two roles share. The part of a role is reserved by size only:
 * this file knows nothing of what is inside it.
 *
 * Wake-ups: a process that is about to block sets its `sleeping` flag, checks
 * its condition once more, then blocks on its eventfd; a waker publishes
 * first, then wakes only a sleeper (xchg of the flag), so no wake-up is lost
 * and nobody pays a syscall for a process that is busy anyway.
 */
#ifndef ATTIC_SHM_H
#define ATTIC_SHM_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "chan.h"
#include "repl-shm.h"
#include "pubsub.h"
#include "ring.h"

#define SHM_MAX_FRONTENDS 64
#define SHM_MAGIC         0x4154544943534d31ull /* "ATTICSM1" */

typedef struct shm_waiter {
    _Atomic uint32_t sleeping;
    int32_t efd; /* eventfd, created by the master, inherited by all */
} shm_waiter_t;

enum logger_state {
    LOGGER_STARTING = 0, /* recovering the log; nothing may be claimed yet */
    LOGGER_RUNNING = 1,
    LOGGER_FAILED = 2,  /* an fsync or write failed: no write is acked again */
    LOGGER_STOPPED = 3, /* shut down cleanly after the last record */
};

/* A frontend -> store request (read command), followed by a record payload
 * (rec_encode_payload) of `payload_len` bytes. */
typedef struct store_req {
    uint64_t id;      /* echoed in the reply */
    uint64_t min_lsn; /* answer only once applied_lsn >= min_lsn (contract 3) */
    uint32_t payload_len;
    uint32_t db;    /* the connection's selected database */
    uint32_t proto; /* the connection's protocol (2, 3): a few replies differ */
    uint32_t reserved;
} store_req_t;

/* A store -> frontend reply, followed by `len` bytes of RESP. */
typedef struct store_reply {
    uint64_t id; /* request id, or the record's LSN for a write's reply */
    uint32_t len;
    uint32_t kind; /* STORE_REPLY_READ or STORE_REPLY_WRITE */
} store_reply_t;

enum { STORE_REPLY_READ = 1, STORE_REPLY_WRITE = 2 };

/* A reply larger than one channel message travels in parts, in order, each
 * with the same id: every part but the last has STORE_REPLY_MORE in kind,
 * every part but the first STORE_REPLY_CONT. A reply in one message has
 * neither. A part without CONT starts the reply over (a store that died
 * part-way resends it whole). */
#define STORE_REPLY_MORE 0x100u
#define STORE_REPLY_CONT 0x200u
/* A large value's GET or GETRANGE answered in parts that the frontend asks
 * for one at a time (D48), so neither process holds the value: every part
 * but the last has STORE_REPLY_PAUSE, every part but the first CONT, and
 * each part's bytes start with a u64 token naming the reply (the store's
 * pid and a count). The frontend asks for the next part with a request
 * whose `reserved` is STORE_REQ_NEXT, id the read's id, db and proto the
 * token's low and high halves; STORE_REQ_DROP gives the reply up (its
 * client left). A token the store does not know (it was respawned) gets
 * an empty part with STORE_REPLY_LOST: the client, which has part of a
 * bulk, is disconnected. */
#define STORE_REPLY_PAUSE 0x400u
#define STORE_REPLY_LOST  0x800u
enum { STORE_REQ_NEXT = 1, STORE_REQ_DROP = 2 };
/* A write's reply in parts (GETDEL, GETEX, SET GET: D48) has the record's
 * LSN as its id, another space than the reads' ids: its STORE_REQ_NEXT or
 * STORE_REQ_DROP has STORE_REQ_WRITE in `reserved` too, and its parts are
 * STORE_REPLY_WRITE. */
#define STORE_REQ_WRITE     0x100u
#define STORE_REQ_WHAT(r)   ((r)&0xffu)
#define STORE_REPLY_KIND(k) ((k)&0xffu)
/* A read whose request is longer than one channel message (a SISMEMBER of
 * a member past channel-size / 2, D58) travels in parts, in order, with
 * the same id and min_lsn: `reserved` is STORE_REQ_PART, with
 * STORE_REQ_CONT on every part but the first and STORE_REQ_MORE on every
 * part but the last; the first part's bytes start with the whole
 * payload's length (u64). A frontend sends one such request at a time
 * (other requests may come between its parts); the store answers it once
 * the last part is in, and answers an error when parts are missing (a
 * store respawned part-way). STORE_REQ_PART_DROP (the request's id) gives
 * it up: its client left before the last part. */
enum { STORE_REQ_PART = 3, STORE_REQ_PART_DROP = 4 };
#define STORE_REQ_MORE 0x200u
#define STORE_REQ_CONT 0x400u

typedef struct shm_frontend {
    _Alignas(64) _Atomic int32_t pid; /* 0 while no process owns the slot */
    _Atomic uint32_t incarnation;     /* bumped by the master at each fork */
    _Atomic uint32_t ready;           /* listening (see logger_ready) */
    shm_waiter_t wake;                /* durable LSN advanced / store replied */
    /* The durable LSN at which this frontend has something to do (D85):
     * the logger's flush wakes it only once durable_lsn reaches this. The
     * frontend lowers it to 0 (any flush) before it waits for a durable
     * LSN, and raises it before it sleeps while only the store's replies
     * are due (UINT64_MAX): an LPUSH's flush then wakes the store alone. */
    _Atomic uint64_t durable_want;
    /* Set by a publisher, cleared by the frontend before it reads the
     * Pub/Sub ring: one eventfd write per burst, not per message. */
    _Atomic uint32_t pubsub_wake;
    uint64_t to_store_off;   /* chan_t: requests, frontend -> store */
    uint64_t from_store_off; /* chan_t: replies, store -> frontend */
    /* Blocked clients (D36): set by an incarnation before its first
     * blocking record, cleared by the next once its CMD_BLOCKDROP is in
     * the ring; and the store's count of this slot's waiters (applied). */
    _Atomic uint32_t block_used;
    _Atomic uint32_t store_waiters;
    /* Bytes this frontend's clients hold in buffers: requests received and
     * not yet run, replies not yet read; summed every FE_OBUF_SUM_MS
     * (frontend/core/conn.c): INFO mem_clients_normal and part of
     * used_memory (shm_used_memory). */
    _Atomic uint64_t client_bytes;
} shm_frontend_t;

#define FE_OBUF_SUM_MS 100

/* ---- issue 5 (frontend admin helper): a log-linear histogram ----
 * Eight buckets per power of two (each within 12.5% of its neighbour), from
 * 0 ns up to 2^64: enough resolution for latency percentiles, 4 KiB of
 * counters, and an index computed with one count-leading-zeros. */
#define SHM_HIST_SUB     8
#define SHM_HIST_BUCKETS (64 * SHM_HIST_SUB)

static inline unsigned shm_hist_index(uint64_t v)
{
    if (v < SHM_HIST_SUB) return (unsigned)v;
    unsigned octave = 63u - (unsigned)__builtin_clzll(v); /* >= 3 */
    unsigned sub = (unsigned)(v >> (octave - 3)) & (SHM_HIST_SUB - 1);
    return (octave - 2) * SHM_HIST_SUB + sub;
}

/* The smallest value counted in bucket i. */
static inline uint64_t shm_hist_lower(unsigned i)
{
    if (i < 2 * SHM_HIST_SUB) return i; /* below 16: one value per bucket */
    unsigned octave = i / SHM_HIST_SUB + 2, sub = i % SHM_HIST_SUB;
    if (octave >= 64) return UINT64_MAX;
    return ((uint64_t)(SHM_HIST_SUB + sub)) << (octave - 3);
}
/* ---- end issue 5 ---- */

typedef struct shm_stats {
    _Atomic uint64_t fsyncs;  /* fdatasync calls that succeeded */
    _Atomic uint64_t records; /* records made durable */
    _Atomic uint64_t bytes;   /* bytes made durable */
    _Atomic uint64_t last_fsync_ns;
    _Atomic uint64_t total_fsync_ns;
    _Atomic uint64_t max_batch_records;
    _Atomic uint64_t segments_created;
    /* ---- issue 5 (frontend admin helper): fsync latency histogram ----
     * Written by the logger after each fdatasync (the sync alone, not the
     * write before it), read by INFO persistence for p50/p99/p99.9. Bucket
     * i counts latencies in [shm_hist_lower(i), shm_hist_lower(i + 1)) ns. */
    _Atomic uint64_t fsync_hist[SHM_HIST_BUCKETS];
    /* ---- end issue 5 ---- */
} shm_stats_t;

typedef struct shm {
    uint64_t magic;
    uint64_t total_size;
    uint32_t nfrontends;
    uint32_t pad_;
    uint64_t ring_off;
    uint64_t chan_size;
    uint64_t frontend_off;  /* the frontends' part (frontend/fe-shm.h); 0 = none */
    uint64_t frontend_size; /* its size in bytes (fe_shm_size) */
    uint64_t pubsub_off;    /* Pub/Sub's part (pubsub.h, ps_shm_size bytes) */
    _Atomic int64_t start_time_ms;
    int32_t master_pid; /* children compare getppid() with it: master gone? */

    _Alignas(64) _Atomic uint64_t durable_lsn; /* written by the logger only */
    _Alignas(64) _Atomic uint32_t logger_state;
    _Atomic int32_t logger_errno;  /* why LOGGER_FAILED */
    _Atomic uint32_t log_no_space; /* the next segment can't be created: ENOSPC (contract 8) */
    _Atomic uint32_t store_ready;  /* store has replayed the log and serves */
    /* Readiness for the master's respawn policy (master.c): each role sets
     * its flag once it serves (store_ready above, logger_ready here,
     * fe[i].ready); the master clears it before each fork, so it speaks for
     * the newest process of the slot only. */
    _Atomic uint32_t logger_ready; /* this logger took over the log and commits */
    _Atomic uint32_t repl_ready;   /* the replication process runs (repl/) */
    /* The LSN of the record the store is replaying (UINT64_MAX before its
     * replay starts), so that the master can name it if the store dies there. */
    _Atomic uint64_t store_replay_lsn;
    _Atomic uint32_t store_deferred; /* store holds reads waiting for durable records */
    /* Shutdown stages, set by the master in order: 1 frontends stop accepting
     * and finish their clients' replies; 2 the logger syncs what is left and
     * exits; 3 the store applies the rest and exits. */
    _Atomic uint32_t shutdown;
    _Atomic uint64_t store_keys; /* keys in the store, all databases */
    _Atomic uint64_t store_expires;
    _Atomic uint64_t store_index_bytes; /* RAM of the key index (INFO memory) */
    _Atomic uint64_t store_table_bytes; /* of it, the bucket arrays (INFO / MEMORY overhead) */
    /* INFO used_memory_peak less the shared memory: the largest
     * shm_used_memory seen, raised by frontend 0 every tick (10 ms), by
     * every INFO and every MEMORY STATS (shm_memory). */
    _Atomic uint64_t used_memory_peak;
    /* The applied LSN the figures above are of, stored (release) after
     * them: INFO waits for it to reach durable_lsn (D25). */
    _Atomic uint64_t store_counts_lsn;
    /* maxmemory and what eviction reads of its settings (D32), for the
     * store: written by the master at start and by CONFIG SET
     * (frontend/admin/config-cmd.c), each change bumping mem_version (0 =
     * never written: the store keeps its config_t's). */
    _Atomic uint64_t mem_version;
    _Atomic int64_t mem_maxmemory, mem_policy, mem_samples, mem_lfu_log_factor, mem_lfu_decay_time;
    _Atomic int64_t mem_tenacity; /* maxmemory-eviction-tenacity (D43) */
    /* DUMP's settings, which travel with the memory settings, under the
     * same mem_version: list-max-listpack-size splits a list into nodes
     * (D40), list-compress-depth and rdbcompression say which of its
     * strings are LZF-compressed (D57). */
    _Atomic int64_t mem_list_fill, mem_list_compress_depth, mem_rdb_compression;
    /* The store's (D43): since when (CLOCK_MONOTONIC ms, 0 = not now) the
     * figure it compares is over maxmemory, and the ms of the spells over
     * it that ended; kept here, not in the store, so that a respawned
     * store goes on with a spell (INFO *_eviction_exceeded_time). */
    _Atomic int64_t evict_exceeded_since_ms, evict_exceeded_total_ms;
    /* The store's: keys it evicted since it started (INFO evicted_keys),
     * and 1 while used memory is over maxmemory and the policy finds no
     * key to evict (the frontends then refuse denyoom writes with -OOM). */
    _Atomic uint64_t evicted_keys;
    /* The store's, since it started: keys removed by expiry, and read
     * lookups that found their key or not (INFO expired_keys,
     * keyspace_hits, keyspace_misses). */
    _Atomic uint64_t expired_keys, keyspace_hits, keyspace_misses;
    /* The store's, since it started: how read commands got values' bytes
     * from the log (D59): pieces copied from the page cache, pieces read
     * in flight (from the device, or through the page cache with read-io
     * buffered); and the read-io in effect (CONFIG_READ_*: pread when
     * io_uring is not available). INFO atticdb_value_reads_*. */
    _Atomic uint64_t value_reads_cached, value_reads_device;
    _Atomic uint32_t read_io;
    _Atomic uint32_t evict_stuck;
    /* Per database, published by the store for INFO keyspace. */
    _Atomic uint64_t db_keys[256];
    _Atomic uint64_t db_expires[256];
    _Atomic uint64_t log_start_lsn; /* first LSN still in the log */
    /* Set by the store when keys with a TTL wait for the apply clock to
     * pass their expiry and no write moves it; a frontend that sees it
     * clears it and writes a CMD_TICK record. */
    _Atomic uint32_t tick_wanted;
    /* Set by the first store of this shared memory once the waiters the
     * log left from a previous run of the server are dropped (its
     * CMD_BLOCKDROP is in the ring, or there were none); frontends write no
     * client record before (D36). */
    _Atomic uint32_t block_reset;
    /* Keyspace notifications (D37): notify-keyspace-events for the store
     * (enum ps_notify; written by CONFIG SET). notify_lsn: records from
     * there on were not published yet (UINT64_MAX until the first store of
     * this master finished its replay: what came before this start is
     * never published); notify_expired_ms: keys expiring at or before it
     * were published as expired already. A respawned store publishes only
     * past both, so nothing is published twice. */
    _Atomic uint32_t notify_flags;
    _Atomic uint64_t notify_lsn;
    _Atomic int64_t notify_expired_ms;
    /* Bumped by the master after it reopened the log file on SIGHUP; every
     * process reopens it before its next line (common/log.c). */
    _Atomic uint32_t log_generation;
    /* Backups (SAVE, BGSAVE: store/backup.c, D38), published by the store
     * for LASTSAVE and INFO persistence. */
    _Atomic uint32_t backup_in_progress; /* one is asked for or being written */
    _Atomic uint32_t backup_last_failed; /* the last one to end failed */
    _Atomic int64_t backup_last_ms;      /* when the last good one ended (0: none yet) */
    _Atomic int64_t backup_started_ms;   /* when the one in progress was asked for */
    _Atomic int64_t backup_last_secs;    /* how long the last one took (-1: none) */
    _Atomic uint64_t backup_last_lsn;    /* the LSN of the last good one */
    _Atomic uint64_t backup_saves;       /* good ones since the server started */
    _Atomic uint64_t backup_changes;     /* client writes applied since the last good one began */

    _Alignas(64) shm_waiter_t logger_wake; /* records committed to the ring */
    _Alignas(64) shm_waiter_t store_wake;  /* durable LSN advanced / request */
    /* The replication process (repl/, D33): woken when the durable LSN
     * moves or REPLICAOF changes what to follow; frontends hand it a
     * replica's connection over a datagram socketpair the master made
     * (SCM_RIGHTS): they send on handoff_fd, it receives on the other end. */
    _Alignas(64) shm_waiter_t repl_wake;
    int32_t repl_handoff_fd;
    int32_t repl_handoff_rfd;
    repl_shm_t repl;
    shm_stats_t stats;
    shm_frontend_t fe[SHM_MAX_FRONTENDS];
    /* Frontend i claims ring space through claimers[i] (one array, so the
     * logger can search it for the owner of an abandoned claim), and the
     * store through claimers[nfrontends] (its relocation, eviction and
     * abort records, D27, D32, D31), a replica's receiver through
     * claimers[nfrontends + 1] (the leader's records, D33): shm_nclaimers()
     * of them are in use. */
    ring_claimer_t claimers[SHM_MAX_FRONTENDS + 2];
} shm_t;

/* The clients' buffers, every frontend (shm_frontend_t.client_bytes). */
static inline uint64_t shm_clients_bytes(const shm_t *s)
{
    uint64_t n = 0;
    for (uint32_t i = 0; i < s->nfrontends && i < SHM_MAX_FRONTENDS; i++)
        n += atomic_load_explicit(&s->fe[i].client_bytes, memory_order_relaxed);
    return n;
}

/* What maxmemory bounds (D32, D43): the store's index and entries plus
 * the clients' buffers. INFO used_memory adds the shared memory mapped at
 * start, which it reports again as mem_not_counted_for_evict. */
static inline uint64_t shm_used_memory(const shm_t *s)
{
    return atomic_load_explicit(&s->store_index_bytes, memory_order_relaxed) + shm_clients_bytes(s);
}

/*
 * INFO memory's and MEMORY STATS' figures (D43, D49), from one place so
 * that the two agree: used is all the server holds, the dataset (the
 * store's index and entries, the bucket arrays of which are overhead, as
 * Redis counts its hash tables) plus the clients' buffers plus the shared
 * memory mapped at start (the ring, channels and tables: startup memory,
 * and not counted for eviction). index_bytes and table_bytes are the
 * store's figures (published in shm_t by the store, or its own fresh
 * ones). Raises the peak to what it sees.
 */
typedef struct shm_memory {
    uint64_t used;     /* INFO used_memory, MEMORY STATS total.allocated */
    uint64_t peak;     /* used_memory_peak, peak.allocated */
    uint64_t startup;  /* used_memory_startup, startup.allocated: the shared memory */
    uint64_t clients;  /* mem_clients_normal, clients.normal */
    uint64_t tables;   /* the store's bucket arrays (MEMORY STATS db.N) */
    uint64_t overhead; /* used_memory_overhead, overhead.total: the three above */
    uint64_t dataset;  /* used_memory_dataset, dataset.bytes: used less overhead */
} shm_memory_t;

static inline void shm_memory(shm_t *s, uint64_t index_bytes, uint64_t table_bytes, shm_memory_t *m)
{
    m->clients = shm_clients_bytes(s);
    m->startup = s->total_size;
    m->tables = table_bytes < index_bytes ? table_bytes : index_bytes;
    m->used = index_bytes + m->clients + m->startup;
    m->overhead = m->startup + m->clients + m->tables;
    m->dataset = m->used - m->overhead;
    uint64_t bounded = index_bytes + m->clients;
    uint64_t p = atomic_load_explicit(&s->used_memory_peak, memory_order_relaxed);
    while (bounded > p && !atomic_compare_exchange_weak(&s->used_memory_peak, &p, bounded)) {
    }
    m->peak = (bounded > p ? bounded : p) + m->startup;
}

/* Claimers in use: one per frontend, then the store's, then the receiver's. */
static inline int shm_nclaimers(const shm_t *s)
{
    return (int)s->nfrontends + 2;
}

/* The receiver's ring claimer (a replica's copy of its leader's log). */
static inline ring_claimer_t *shm_repl_claimer(shm_t *s)
{
    return &s->claimers[s->nfrontends + 1];
}

/* The store's ring claimer (relocation and eviction records:
 * store/compact.c, store/evict.c). */
static inline ring_claimer_t *shm_store_claimer(shm_t *s)
{
    return &s->claimers[s->nfrontends];
}

/*
 * Size of a segment for nfrontends frontends, a ring of ring_size bytes,
 * channels of chan_size bytes and a frontends' part of frontend_size bytes
 * (fe_shm_size; 0 for none, as in tests without frontends). Returns 0 when
 * a size overflows.
 */
size_t shm_size(uint32_t nfrontends, uint64_t ring_size, uint64_t chan_size,
                uint64_t frontend_size);

/* Map and lay out the segment (master, before forking). Eventfds are created
 * here; the frontends' part is left zeroed for fe_shm_init. Returns NULL with
 * errno set on failure (EINVAL: nfrontends out of range, EOVERFLOW: sizes). */
shm_t *shm_create(uint32_t nfrontends, uint64_t ring_size, uint64_t chan_size,
                  uint64_t frontend_size);

/* A process about to use the ring (after fork): map all of its pages now.
 * The mapping is shared, so fork copies no page tables: without this each
 * process takes a minor fault on every page of the ring at its first pass
 * (4,096 per process with the default 16 MiB ring), on the path of the
 * writes that touch them. A hint: errors are ignored. */
void shm_prefault_ring(shm_t *s);

static inline ring_t *shm_ring(shm_t *s)
{
    return (ring_t *)((char *)s + s->ring_off);
}
static inline chan_t *shm_to_store(shm_t *s, int fe)
{
    return (chan_t *)((char *)s + s->fe[fe].to_store_off);
}
static inline chan_t *shm_from_store(shm_t *s, int fe)
{
    return (chan_t *)((char *)s + s->fe[fe].from_store_off);
}

/* Waiter side: announce the intention to sleep (then re-check, then wait). */
void shm_waiter_arm(shm_waiter_t *w);
/* Waiter side: clear the flag without sleeping (the re-check found work). */
void shm_waiter_disarm(shm_waiter_t *w);
/* Waiter side: block until woken or timeout_ms passes (-1 = forever). */
void shm_waiter_wait(shm_waiter_t *w, int timeout_ms);
/* Waiter side: consume a pending wake-up on the eventfd (non-blocking). */
void shm_waiter_drain(shm_waiter_t *w);
/* Waker side: after publishing, wake w if it sleeps. */
void shm_wake(shm_waiter_t *w);

/* After a message was put in the Pub/Sub ring (pubsub.h): wake every
 * frontend but `except` (-1: all) whose wake-up is not pending already,
 * through its eventfd whether it sleeps or not (a frontend with no reply
 * waiting does not arm its flag). */
void shm_wake_pubsub(shm_t *s, int except);

/* Pub/Sub's part of segment s. */
static inline ps_shm_t *shm_pubsub(shm_t *s)
{
    return (ps_shm_t *)((char *)s + s->pubsub_off);
}

/* False once the master died (the process was reparented). */
int shm_master_alive(const shm_t *s);

/* Clock helpers. */
int64_t shm_now_ms(void);   /* CLOCK_REALTIME, ms (expiry is wall time) */
uint64_t shm_mono_ns(void); /* CLOCK_MONOTONIC, ns (latencies) */

#endif
