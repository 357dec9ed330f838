/*
 * fe-shm.h - the frontends' part of the shared segment (common/shm.h lays
 * out the segment; this part sits at shm->frontend_off, frontend_size
 * bytes, sized by fe_shm_size() and filled by fe_shm_init(), both in
 * frontend/frontend.h). Only frontends read and write these tables; the
 * master only reserves and initialises them before the first fork.
 *
 * Connections, ACL users, runtime settings, the slow log and command
 * statistics are per frontend process in memory but must look like one
 * server to clients: an ACL SETUSER, a CONFIG SET or a CLIENT KILL run
 * through one frontend applies to the clients of all. Writers of a shared
 * table take its shm_lock_t (frontend/admin/shm-lock.c): the holder's pid, so the
 * lock of a frontend killed while holding it is taken over. Readers never
 * block: they check a version counter instead.
 */
#ifndef ATTIC_FE_SHM_H
#define ATTIC_FE_SHM_H

#include <stdatomic.h>
#include <stdint.h>

#include "shm.h"

typedef struct shm_lock {
    _Atomic int32_t pid; /* holder, 0 = free */
} shm_lock_t;

/* ACL users (frontend/admin/acl.c): the whole table as text, one
 * "user <name> <rules>\n" line per user, in two copies. A writer fills the
 * copy that is not current, then bumps `version`; the current copy is
 * text[version & 1]. A reader parses the current copy and parses again if
 * the version moved meanwhile; a writer that dies half way leaves only the
 * unused copy torn. */
#define SHM_ACL_TEXT (64 * 1024)
typedef struct shm_acl {
    shm_lock_t lock;
    _Atomic uint64_t version; /* 0 = not initialised yet */
    _Atomic uint32_t len[2];
    char text[2][SHM_ACL_TEXT];
} shm_acl_t;

/* Settings CONFIG SET can change while running (frontend/admin/config-cmd.c). The
 * frontends read them here, not in their copy of config_t; `version` moves
 * after every change, so a frontend can cache what it uses per event. */
#define SHM_REQUIREPASS_MAX 512
typedef struct shm_config {
    shm_lock_t lock;
    _Atomic uint64_t version;
    _Atomic int64_t maxclients;
    _Atomic int64_t timeout;
    _Atomic int64_t proto_max_bulk_len;
    _Atomic int64_t client_query_buffer_limit;
    _Atomic int64_t obuf_hard, obuf_soft, obuf_soft_seconds;
    _Atomic int64_t obuf_pubsub_hard, obuf_pubsub_soft, obuf_pubsub_soft_seconds; /* D37 */
    _Atomic int64_t protected_mode;
    _Atomic int64_t slowlog_slower_than; /* us; < 0 disables, 0 logs everything */
    _Atomic int64_t slowlog_max_len;
    _Atomic int64_t loglevel;
    _Atomic int64_t latency_threshold_ms; /* latency-monitor-threshold; 0 = off */
    _Atomic int64_t hash_max_listpack_entries, hash_max_listpack_value;
    _Atomic int64_t set_max_intset_entries;
    _Atomic int64_t hll_sparse_max_bytes;
    _Atomic int64_t zset_max_listpack_entries, zset_max_listpack_value;
    _Atomic int64_t list_max_listpack_size; /* DUMP's node split; the store's copy in shm_t */
    _Atomic int64_t list_compress_depth;    /* DUMP's compressed nodes; the store's copy in shm_t */
    _Atomic int64_t rdb_compression;        /* DUMP's LZF; the store's copy in shm_t */
    _Atomic int64_t maxmemory, maxmemory_policy, maxmemory_samples; /* D32 */
    _Atomic int64_t maxmemory_eviction_tenacity;                    /* D43 */
    /* notify-keyspace-events; the store reads its copy in shm_t (D37) */
    _Atomic int64_t notify_keyspace_events;
    _Atomic int64_t lfu_log_factor, lfu_decay_time;
    _Atomic int64_t min_replicas_to_write, min_replicas_max_lag; /* D44 */
    /* D67; the store and the replication process read their copy in repl_shm_t */
    _Atomic int64_t repl_backlog_size, repl_backlog_ttl;
    _Atomic int64_t obuf_replica_hard, obuf_replica_soft, obuf_replica_soft_seconds;
    char requirepass[SHM_REQUIREPASS_MAX]; /* CONFIG GET requirepass; under lock */
} shm_config_t;

/* One connection, as CLIENT LIST and CLIENT KILL see it from any frontend
 * (frontend/admin/client-registry.c). Written only by the owning frontend; the text fields
 * are rewritten between two increments of `seq` (odd while writing), so a
 * reader copies them and retries when seq moved. An entry whose owner slot
 * has another incarnation (the frontend died and was respawned) is stale:
 * readers skip it and the new frontend frees it. */
#define SHM_CLIENT_SLOTS 16384
typedef struct shm_client {
    _Atomic uint32_t seq;
    _Atomic uint32_t owner;       /* frontend slot + 1, 0 = free */
    _Atomic uint32_t incarnation; /* the owner's, when it took the entry */
    uint32_t pad_;
    _Atomic uint64_t kill_id; /* CLIENT KILL: the owner closes its client of this id */
    _Atomic uint64_t id;
    _Atomic int64_t created_ms;
    _Atomic int64_t last_active_ms;
    _Atomic int32_t fd, db, resp, multi; /* multi: -1, or commands queued */
    _Atomic uint32_t flags;              /* SHM_CLIENT_F_* */
    _Atomic uint32_t last_cmd;           /* command statistics index (info.c) */
    char addr[112], laddr[112];          /* "ip:port", "[ipv6]:port", "/path:0" */
    char user[64];
    char name[128]; /* longer names are cut here (local view is whole) */
    char lib_name[64], lib_ver[32];
} shm_client_t;
enum {
    SHM_CLIENT_F_UNIX = 1u << 0,
    SHM_CLIENT_F_NO_EVICT = 1u << 1,
    SHM_CLIENT_F_BLOCKED = 1u << 2,
    SHM_CLIENT_F_MONITOR = 1u << 3
};

/* The slow log (frontend/admin/slowlog.c): a ring of the newest entries, under
 * its lock. Arguments are stored already cut to Redis' limits (32 args,
 * 128 bytes each plus the "... (N more bytes)" note), as u32 length + bytes. */
#define SHM_SLOWLOG_SLOTS    1024
#define SHM_SLOWLOG_ARGBYTES 6144
typedef struct shm_slowlog_entry {
    uint64_t id;
    int64_t time_s;
    int64_t duration_us;
    uint32_t argc, args_len;
    char addr[112];
    char name[128];
    char args[SHM_SLOWLOG_ARGBYTES];
} shm_slowlog_entry_t;
typedef struct shm_slowlog {
    shm_lock_t lock;
    uint64_t next_id;
    uint32_t head;  /* next entry written */
    uint32_t count; /* entries held */
    shm_slowlog_entry_t e[SHM_SLOWLOG_SLOTS];
} shm_slowlog_t;

/* Command statistics (INFO commandstats), one table per frontend, each
 * written by its frontend only. Index: command id (< 256), then the
 * subcommands (frontend/admin/command-index.c). CONFIG RESETSTAT bumps
 * stat_epoch; a frontend zeroes its own table when it sees the new epoch,
 * and INFO counts only tables whose epoch_seen is current. */
#define SHM_STAT_SLOTS 384 /* 256 ids + every SUB row (command-index.c checks) */
typedef struct shm_cmdstat {
    _Atomic uint64_t calls, nsec, rejected, failed; /* INFO shows nsec / 1000 as usec */
} shm_cmdstat_t;
/* INFO errorstats: error replies by their code (the word after '-'), one
 * table per frontend as the command statistics. A slot is free while its
 * count is 0; its code is written before the count becomes 1. Codes past
 * SHM_ERRSTAT_SLOTS are counted in total_error_replies only. */
#define SHM_ERRSTAT_SLOTS 128
typedef struct shm_errstat {
    char code[32];
    _Atomic uint64_t count;
} shm_errstat_t;
typedef struct shm_fe_stats {
    /* Aligned so that no two frontends' tables share a cache line. */
    _Alignas(64) _Atomic uint64_t epoch_seen;
    _Atomic uint64_t conns, cmds; /* since the epoch: INFO stats */
    _Atomic uint64_t rejected_conns;
    _Atomic uint64_t net_in, net_out, error_replies;
    /* Reads of client sockets and writes of replies (each call; INFO
     * total_reads_processed, total_writes_processed, as Redis counts). */
    _Atomic uint64_t reads, writes;
    /* Writes that asked the store first, and those answered without a
     * record (D68, frontend/cmd/probe.c). */
    _Atomic uint64_t write_probes, writes_unlogged;
    /* GETs answered from the read cache (D70, frontend/cmd/cached.c): a
     * value (keyspace_hits) or the key's absence (keyspace_misses). */
    _Atomic uint64_t cache_hits, cache_misses;
    _Atomic uint64_t inst_ops;                  /* commands per second, sampled (not reset) */
    _Atomic uint64_t inst_in_bps, inst_out_bps; /* network bytes per second, the same way */
    _Atomic uint64_t clients; /* connected now: not reset; zeroed at the frontend's start */
    _Atomic uint64_t blocked; /* of those, blocked (BLPOP ...): the same */
    shm_cmdstat_t cmd[SHM_STAT_SLOTS];
    shm_errstat_t err[SHM_ERRSTAT_SLOTS];
} shm_fe_stats_t;

/* LATENCY (frontend/admin/latency.c): Redis' latency monitor, one table
 * for the server. Each event keeps its newest SHM_LATENCY_SAMPLES
 * per-second maxima, as Redis' LATENCY_TS_LEN, and its all-time maximum.
 * Written and read under the lock (a sample is only added for a latency
 * at or above latency-monitor-threshold, so rarely). */
#define SHM_LATENCY_EVENTS  8
#define SHM_LATENCY_SAMPLES 160
typedef struct shm_latency_event {
    char name[32]; /* "" = free */
    uint32_t idx;  /* next sample written */
    uint32_t max;  /* ms, all time */
    struct {
        int32_t time_s;
        uint32_t latency_ms;
    } samples[SHM_LATENCY_SAMPLES];
} shm_latency_event_t;
typedef struct shm_latency {
    shm_lock_t lock;
    shm_latency_event_t ev[SHM_LATENCY_EVENTS];
} shm_latency_t;

typedef struct shm_admin {
    shm_config_t config;
    shm_acl_t acl;
    _Alignas(64) _Atomic uint64_t next_client_id;
    _Atomic uint32_t kill_pending[SHM_MAX_FRONTENDS]; /* an entry of slot i has kill_id set */
    _Atomic uint64_t stat_epoch;
    _Alignas(64) shm_client_t clients[SHM_CLIENT_SLOTS];
    _Alignas(64) shm_slowlog_t slowlog;
    _Alignas(64) shm_latency_t latency;
    /* INFO evicted_keys at the last CONFIG RESETSTAT (the store's count,
     * shm_t.evicted_keys, never goes back; INFO shows what it gained since). */
    _Atomic uint64_t evicted_base;
    /* The same for expired_keys, keyspace_hits and keyspace_misses. */
    _Atomic uint64_t expired_base, hits_base, misses_base;
    /* At the last RESETSTAT: the eviction-exceeded ms shown then (total
     * and current) and when (CLOCK_MONOTONIC ms), D43. */
    _Atomic int64_t exceeded_base_ms, exceeded_reset_ms;
    /* One per frontend: shm->nfrontends entries (fe_shm_size). */
    _Alignas(64) shm_fe_stats_t fe_stats[];
} shm_admin_t;

/* The frontends' tables in the segment s (the master reserved them). */
static inline shm_admin_t *fe_shm(shm_t *s)
{
    return (shm_admin_t *)((char *)s + s->frontend_off);
}

/* A lock between processes (shm_lock_t): spins, and takes over a lock whose
 * holder died. Critical sections are short copies, never blocking calls. */
void fe_shm_lock(shm_lock_t *l);
void fe_shm_unlock(shm_lock_t *l);

#endif
