/*
 * repl-shm.h - the replication part of the shared memory (docs/DECISIONS.md
 * D33): what the frontends (REPLICAOF, INFO, ROLE, WAIT, -READONLY), the
 * store (no relocation on a replica), the logger (one wake-up) and the
 * replication process (repl/) share.
 *
 * Writers: REPLICAOF (a frontend) and the master at start write the leader
 * to follow and bump `gen`; the replication process alone writes the link
 * state, the counters and the replica table. Readers take what they see:
 * every field is one atomic word or a text guarded by a generation, so a
 * torn host name is re-read, never acted on.
 */
#ifndef ATTIC_REPL_SHM_H
#define ATTIC_REPL_SHM_H

#include <stdatomic.h>
#include <stdint.h>

#define REPL_MAX_REPLICAS 16
#define REPL_HOST_MAX     256

enum repl_link {
    REPL_LINK_DOWN = 0,       /* not connected (or not a replica) */
    REPL_LINK_CONNECTING = 1, /* handshake in progress */
    REPL_LINK_UP = 2,         /* streaming */
};

/* One replica connected to this leader (the sender's table). */
typedef struct repl_replica {
    _Atomic uint32_t online; /* 0 = free slot */
    uint32_t port;           /* the port the replica listens on (its handshake) */
    char ip[64];
    _Atomic uint64_t acked_lsn;   /* the replica's durable LSN, as it last acked */
    _Atomic uint64_t sent_lsn;    /* shipped up to here */
    _Atomic int64_t last_ack_ms;  /* wall clock of its last ack */
    _Atomic int64_t behind_since; /* ms since which acked < durable, 0 = caught up */
    _Atomic uint32_t copying;     /* enum repl_copy_state: a full copy's phase (D50) */
} repl_replica_t;

/* A replica getting a full copy, in Redis' INFO words: the store writes
 * it (wait_bgsave), then it is sent (send_bulk) until the connection
 * closes; the replica comes back online on its next connection. */
enum repl_copy_state { REPL_COPY_NONE = 0, REPL_COPY_WAIT = 1, REPL_COPY_SEND = 2 };

typedef struct repl_shm {
    /* What to follow: is_replica, then host and port under gen (a frontend
     * or the master writes, the replication process reads). */
    _Atomic uint32_t is_replica;
    _Atomic uint32_t gen;
    _Atomic uint32_t master_port;
    char master_host[REPL_HOST_MAX];
    /* This server's replication id, random at each start (the handshake
     * refuses a replica with the leader's own id: a replica of itself). */
    char run_id[41];
    /* The receiver's state (replica side). */
    _Atomic uint32_t link;
    _Atomic int64_t last_io_ms;        /* last bytes from the leader */
    _Atomic int64_t link_down_since;   /* when the link went down, 0 = never up */
    _Atomic uint64_t leader_durable;   /* the leader's durable LSN, as last heard */
    _Atomic int64_t leader_durable_ms; /* when the leader said so */
    char link_error[160];              /* why the last attempt failed, "" = none */
    _Atomic uint64_t partial_syncs;    /* handshakes that resumed from the LSN */
    _Atomic uint64_t full_syncs;       /* full copies swapped in (at this start: 0 or 1, D50) */
    _Atomic uint64_t sync_errors;      /* handshakes the leader refused */
    /* A full copy being received (D50): Redis' master_sync_* fields. */
    _Atomic uint32_t sync_in_progress;
    _Atomic uint64_t sync_total_bytes; /* the copy's files, as its MANIFEST lists them */
    _Atomic uint64_t sync_read_bytes;  /* of those, written into incoming/ */
    /* A full copy asked of the store (leader side, D50): the replication
     * process bumps copy_wanted; the store writes a backup into the data
     * directory's repl-copy/ and publishes its LSN, then copy_done (the
     * copy_wanted it served). */
    _Atomic uint32_t copy_wanted;
    _Atomic uint32_t copy_done;
    _Atomic uint32_t copy_failed; /* the one copy_done names failed */
    _Atomic uint64_t copy_lsn;
    /* Handshakes this leader answered (INFO stats' sync_full,
     * sync_partial_ok, sync_partial_err: a full copy for a replica that
     * asked from an LSN above 0). */
    _Atomic uint64_t sent_full, sent_partial_ok, sent_partial_err;
    /* The backlog (D67). Settings, written by the master at start and by
     * CONFIG SET: repl-backlog-size, repl-backlog-ttl (s), and the replica
     * class of client-output-buffer-limit (0 = none). */
    _Atomic uint64_t backlog_size;
    _Atomic int64_t backlog_ttl;
    _Atomic uint64_t replica_obuf_hard, replica_obuf_soft;
    _Atomic int64_t replica_obuf_soft_s;
    /* The replication process's: 1 while the backlog is kept (a replica
     * connected, or the last left less than backlog_ttl ago, or this
     * server is a replica); when the last replica left (0 = none since
     * this server started); the lowest LSN a replica connected, getting a
     * full copy or just given one will resume from (UINT64_MAX = none). */
    _Atomic uint32_t backlog_active;
    _Atomic int64_t backlog_left_ms;
    _Atomic uint64_t keep_lsn;
    /* The store's: while it deletes segments, the bound it computed
     * before it read keep_lsn (0 = not deleting). A handshake publishes
     * its LSN in keep_lsn, then reads this: one of the two sees the other. */
    _Atomic uint64_t deleting_below;
    /* The sender's table (leader side). */
    _Atomic uint32_t nreplicas;
    repl_replica_t replicas[REPL_MAX_REPLICAS];
} repl_shm_t;

/*
 * Redis' "good" replicas (min-replicas-to-write, INFO's
 * min_slaves_good_slaves): online, and last acked at most max_lag_s whole
 * seconds before now_ms (shm_now_ms()). Read by every frontend, written by
 * the sender only: a lock-free pass over the table.
 */
static inline int repl_good_replicas(const repl_shm_t *r, int64_t max_lag_s, int64_t now_ms)
{
    int n = 0;
    for (int i = 0; i < REPL_MAX_REPLICAS; i++) {
        const repl_replica_t *s = &r->replicas[i];
        n += atomic_load(&s->online) && (now_ms - atomic_load(&s->last_ack_ms)) / 1000 <= max_lag_s;
    }
    return n;
}

/*
 * What the backlog (D67) lets the store delete: segments wholly below the
 * returned LSN. Keeping a replica at LSN p able to resume means keeping
 * the record that ends at p (the handshake checks its CRC), so its last
 * byte p - 1. UINT64_MAX when the backlog holds nothing back.
 */
static inline uint64_t repl_backlog_keep_below(uint64_t p)
{
    return p == UINT64_MAX ? UINT64_MAX : p ? p - 1 : 0;
}

/* The floor of repl-backlog-size below durable (not keep_lsn). */
static inline uint64_t repl_backlog_floor(const repl_shm_t *r, uint64_t durable)
{
    if (!atomic_load(&r->backlog_active)) return UINT64_MAX;
    uint64_t size = atomic_load(&r->backlog_size);
    return repl_backlog_keep_below(durable > size ? durable - size : 0);
}

#endif
