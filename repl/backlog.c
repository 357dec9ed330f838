/*
 * backlog.c - what a leader keeps of its log for its replicas
 * (docs/DECISIONS.md D67). The log is the replication backlog (D33): a
 * replica resumes from any LSN whose record is still in it. The store
 * deletes segments from the log's start (store/compact.c); this file tells
 * it, through two words of shm repl, what the replicas still need:
 *   - keep_lsn: the lowest LSN a replica will resume from: a connected
 *     replica's acked LSN, a full copy's LSN from the moment it is asked
 *     (the whole log then) until the replica that got it all is back or
 *     REPL_PARKED_MS passed;
 *   - backlog_active: repl-backlog-size bytes below the durable LSN are
 *     kept too while a replica is connected, or the last left less than
 *     repl-backlog-ttl seconds ago (0 = for ever), or this server is a
 *     replica (its log is its leader's: after a promotion the others can
 *     resume from it), as Redis keeps its backlog.
 * What one replica can hold is bounded by the replica class of
 * client-output-buffer-limit (Redis' bound on what a slow replica costs):
 * past the hard limit behind the durable LSN, or the soft one for longer
 * than its seconds, the replica is dropped, with a line in the log, and
 * only the backlog then keeps its log; a parked copy's LSN is forgotten.
 *
 * Run by: the replication process (sender.c calls in). Invariants: a
 * handshake's LSN is in keep_lsn before it is checked against the log's
 * start (the race with a deletion pass: compact.c's banner); keep_lsn
 * only ever names an LSN some replica will ask from. A crash here loses
 * the parked copies (their replicas may need another full copy) and the
 * connections; the successor starts from keep_lsn = none and the time of
 * the crash as the last replica's leaving, so the backlog stays active.
 */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "io_fault.h"
#include "log.h"
#include "repl/repl-internal.h"

static uint64_t min_u64(uint64_t a, uint64_t b)
{
    return a < b ? a : b;
}

void backlog_init(repl_proc_t *p)
{
    repl_shm_t *r = &p->shm->repl;
    for (int i = 0; i < REPL_MAX_REPLICAS; i++) {
        p->peers[i].pin = UINT64_MAX;
        p->peers[i].soft_since_ms = 0;
        p->parked[i].lsn = UINT64_MAX;
    }
    /* A predecessor's replicas left with it: the ttl counts from now. */
    if (atomic_load(&r->nreplicas) || atomic_load(&r->backlog_left_ms))
        atomic_store(&r->backlog_left_ms, shm_now_ms());
    atomic_store(&r->keep_lsn, UINT64_MAX);
}

/* The lowest LSN any replica will resume from (UINT64_MAX = none). */
static uint64_t lowest_pin(const repl_proc_t *p)
{
    uint64_t low = UINT64_MAX;
    for (int i = 0; i < REPL_MAX_REPLICAS; i++) {
        if (p->peers[i].fd >= 0) low = min_u64(low, p->peers[i].pin);
        low = min_u64(low, p->parked[i].lsn);
    }
    return low;
}

static void unpark(repl_proc_t *p, const char *ip, unsigned port)
{
    for (int i = 0; i < REPL_MAX_REPLICAS; i++)
        if (p->parked[i].lsn != UINT64_MAX && p->parked[i].port == port &&
            !strcmp(p->parked[i].ip, ip))
            p->parked[i].lsn = UINT64_MAX;
}

void backlog_closing(repl_proc_t *p, int i)
{
    repl_peer_t *r = &p->peers[i];
    const repl_replica_t *s = &p->shm->repl.replicas[i];
    if (r->state == PEER_COPY_SENT && r->pin != UINT64_MAX) {
        unpark(p, s->ip, s->port);
        for (int k = 0; k < REPL_MAX_REPLICAS; k++) {
            repl_parked_t *q = &p->parked[k];
            if (q->lsn != UINT64_MAX) continue;
            snprintf(q->ip, sizeof(q->ip), "%s", s->ip);
            q->port = s->port;
            q->lsn = r->pin;
            q->since_ms = shm_now_ms();
            break;
        }
    }
    r->pin = UINT64_MAX;
    r->soft_since_ms = 0;
    int left = 0;
    for (int k = 0; k < REPL_MAX_REPLICAS; k++)
        left += k != i && p->peers[k].fd >= 0;
    if (!left) atomic_store(&p->shm->repl.backlog_left_ms, shm_now_ms());
}

/* Publish keep_lsn: what the peers and the parked copies need, and extra
 * (a handshake's LSN not yet in a slot). Sequentially consistent. */
static void publish_keep(repl_proc_t *p, uint64_t extra)
{
    atomic_store(&p->shm->repl.keep_lsn, min_u64(lowest_pin(p), extra));
}

int backlog_admit(repl_proc_t *p, uint64_t lsn, const char *ip, unsigned port, char *why, size_t n)
{
    unpark(p, ip, port); /* it is back: its slot's pin takes over */
    publish_keep(p, lsn);
    if (io_fault_point(IO_FAULT_REPL_PINNED) == IO_FAULT_KILL) raise(SIGKILL);
    repl_shm_t *r = &p->shm->repl;
    uint64_t start = atomic_load(&p->shm->log_start_lsn);
    uint64_t deleting = atomic_load(&r->deleting_below);
    uint64_t seg = p->cfg->segment_size;
    /* The byte the replica needs first: the last of the record ending at
     * lsn (its CRC is checked), and whether a pass may be deleting it. */
    uint64_t first = lsn ? lsn - 1 : 0;
    if (lsn < start || (lsn == start && lsn > 0)) {
        snprintf(why, n,
                 "the leader no longer has its log at the replica's LSN %" PRIu64
                 " (it starts at %" PRIu64 ")",
                 lsn, start);
        return -1;
    }
    if (deleting && (first & ~(seg - 1)) + seg <= deleting) {
        snprintf(why, n,
                 "the leader is deleting its log below LSN %" PRIu64
                 ", past the replica's LSN %" PRIu64,
                 deleting, lsn);
        return -1;
    }
    return 0;
}

void backlog_copy_wanted(repl_proc_t *p, int i, const char *ip, unsigned port)
{
    unpark(p, ip, port);
    /* The copy's LSN is the store's applied LSN when it forks, unknown
     * here: everything from the log's start is kept until then. */
    p->peers[i].pin = atomic_load(&p->shm->log_start_lsn);
    publish_keep(p, UINT64_MAX);
}

/* Past client-output-buffer-limit replica: why (set) when the replica
 * lagging by lag bytes must be dropped, else NULL. */
static const char *over_limit(repl_proc_t *p, repl_peer_t *r, uint64_t lag, int64_t now, char *why,
                              size_t n)
{
    repl_shm_t *rs = &p->shm->repl;
    uint64_t hard = atomic_load(&rs->replica_obuf_hard), soft = atomic_load(&rs->replica_obuf_soft);
    int64_t soft_s = atomic_load(&rs->replica_obuf_soft_s);
    if (hard && lag > hard) {
        snprintf(why, n,
                 "%" PRIu64 " bytes behind, past the hard limit of client-output-buffer-limit "
                 "replica (%" PRIu64 ")",
                 lag, hard);
        return why;
    }
    if (!soft || lag <= soft) {
        r->soft_since_ms = 0;
        return NULL;
    }
    if (!r->soft_since_ms) r->soft_since_ms = now;
    if (now - r->soft_since_ms <= soft_s * 1000) return NULL;
    snprintf(why, n,
             "%" PRIu64 " bytes behind, past the soft limit of client-output-buffer-limit "
             "replica (%" PRIu64 ") for more than %" PRId64 " s",
             lag, soft, soft_s);
    return why;
}

/* Is the backlog kept (banner)? */
static int active(repl_proc_t *p, int64_t now)
{
    repl_shm_t *r = &p->shm->repl;
    if (atomic_load(&r->is_replica) || lowest_pin(p) != UINT64_MAX) return 1;
    for (int i = 0; i < REPL_MAX_REPLICAS; i++)
        if (p->peers[i].fd >= 0) return 1;
    int64_t left = atomic_load(&r->backlog_left_ms), ttl = atomic_load(&r->backlog_ttl);
    return left && (ttl == 0 || now - left < ttl * 1000);
}

void backlog_step(repl_proc_t *p, uint64_t durable, int64_t now)
{
    repl_shm_t *rs = &p->shm->repl;
    char why[256];
    for (int i = 0; i < REPL_MAX_REPLICAS; i++) {
        repl_peer_t *r = &p->peers[i];
        if (r->fd < 0) continue;
        if (r->state == PEER_STREAM) r->pin = atomic_load(&rs->replicas[i].acked_lsn);
        /* Waiting for its copy, it holds the whole log for a moment, not
         * because it lags: its lag starts at the copy's LSN. */
        if (r->state == PEER_WAIT_COPY) continue;
        uint64_t lag = r->pin != UINT64_MAX && durable > r->pin ? durable - r->pin : 0;
        if (!over_limit(p, r, lag, now, why, sizeof(why))) continue;
        log_warn("repl: replica %s:%u is %s: dropped; the leader keeps only repl-backlog-size of "
                 "log for it now, past that it will need a full copy",
                 rs->replicas[i].ip, rs->replicas[i].port, why);
        sender_drop(p, i, "client-output-buffer-limit replica");
    }
    uint64_t hard = atomic_load(&rs->replica_obuf_hard);
    for (int i = 0; i < REPL_MAX_REPLICAS; i++) {
        repl_parked_t *q = &p->parked[i];
        if (q->lsn == UINT64_MAX) continue;
        int late = now - q->since_ms > REPL_PARKED_MS;
        if (!late && !(hard && durable > q->lsn && durable - q->lsn > hard)) continue;
        log_warn("repl: replica %s:%u did not come back from its full copy at LSN %" PRIu64
                 " %s: its log is no longer kept for it",
                 q->ip, q->port, q->lsn,
                 late ? "within a minute"
                      : "before the leader wrote client-output-buffer-limit "
                        "replica's hard limit of log");
        q->lsn = UINT64_MAX;
    }
    publish_keep(p, UINT64_MAX);
    uint32_t on = (uint32_t)active(p, now);
    if (atomic_exchange(&rs->backlog_active, on) && !on)
        log_info("repl: no replica for repl-backlog-ttl (%" PRId64 " s): the backlog is released; "
                 "the log is kept for restarts only",
                 atomic_load(&rs->backlog_ttl));
}
