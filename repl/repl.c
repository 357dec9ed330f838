/*
 * repl.c - the replication process's loop (docs/DECISIONS.md D33).
 *
 * Run by: the replication child the master forks and respawns like the
 * others. It is the sender on a leader (sender.c) and the receiver on a
 * replica (receiver.c); one poll() loop serves both, woken by the logger
 * when the durable LSN moves (shm repl_wake), by the sockets, and every
 * 100 ms to follow REPLICAOF and send pings.
 *
 * A crash here loses nothing: the sender only reads the log, so its
 * replicas reconnect and resume from their own durable LSNs; the
 * receiver's ring claim, if it died holding one, is padded by the logger
 * (its claimer is marked dead by the master, contract 5) and the next
 * receiver resumes from this server's durable LSN.
 */
#include <errno.h>
#include <poll.h>
#include <string.h>

#include "log.h"
#include "repl/repl-internal.h"
#include "seg.h"

int repl_tail_crc(const char *dir, uint64_t segment_size, uint64_t lsn, uint32_t *crc)
{
    *crc = 0;
    if (lsn == 0) return 0;
    /* Records never cross a segment's end, so the one ending at lsn
     * starts in the segment holding lsn - 1, at a record boundary met by
     * walking from that segment's start. */
    seg_reader_t r;
    if (seg_reader_open(&r, dir, segment_size, (lsn - 1) & ~(segment_size - 1)) != 0) return -1;
    int rc = -1;
    while (r.lsn < lsn) {
        const void *rec;
        int64_t n = seg_reader_next(&r, &rec);
        if (n <= 0) break;
        if (r.lsn == lsn) {
            rec_hdr_t h;
            memcpy(&h, rec, sizeof(h));
            *crc = h.crc;
            rc = 0;
        }
    }
    seg_reader_close(&r);
    return rc;
}

int repl_main(shm_t *shm, const config_t *cfg)
{
    static repl_proc_t p; /* large (the peers' buffers): not on the stack */
    p.shm = shm;
    p.cfg = cfg;
    sender_init(&p);
    receiver_init(&p);
    atomic_store(&shm->repl_ready, 1);
    uint64_t seen = UINT64_MAX; /* durable LSN the last steps worked from */
    while (shm_master_alive(shm) && atomic_load(&shm->shutdown) < 2) {
        struct pollfd fds[REPL_MAX_REPLICAS + 3];
        int owner[REPL_MAX_REPLICAS + 3];
        int n = 0;
        fds[n] = (struct pollfd){.fd = shm->repl_wake.efd, .events = POLLIN};
        owner[n++] = -1;
        fds[n] = (struct pollfd){.fd = shm->repl_handoff_rfd, .events = POLLIN};
        owner[n++] = -2;
        n += sender_pollfds(&p, fds + n, owner + n, REPL_MAX_REPLICAS);
        if (receiver_pollfd(&p, &fds[n])) owner[n++] = -3;
        /* Only a link (a replica of ours, or our leader) has work when the
         * durable LSN moves: without one, being woken by every flush cost
         * a context switch per acked write on the CPUs the acks need. A
         * link that appears comes through the poll (the handoff pipe, or
         * REPLICAOF seen within 100 ms), and the next pass arms. */
        int follow = n > 2;
        if (follow) shm_waiter_arm(&shm->repl_wake);
        int timeout = receiver_wants_retry(&p) ? 1 : 100;
        /* The re-check after arming (shm.h): a durable LSN that moved
         * while the steps ran woke nobody, so it is work now. */
        if (follow && atomic_load(&shm->durable_lsn) != seen) timeout = 0;
        int rc = poll(fds, (nfds_t)n, timeout);
        if (follow) shm_waiter_disarm(&shm->repl_wake);
        if (rc < 0 && errno != EINTR) {
            log_warn("repl: poll: %s", strerror(errno));
            return 1;
        }
        shm_waiter_drain(&shm->repl_wake);
        for (int i = 0; rc > 0 && i < n; i++) {
            if (!fds[i].revents) continue;
            if (owner[i] == -2)
                sender_accept(&p);
            else if (owner[i] == -3)
                receiver_event(&p, fds[i].revents);
            else if (owner[i] >= 0)
                sender_event(&p, owner[i], fds[i].revents);
        }
        seen = atomic_load(&shm->durable_lsn);
        receiver_step(&p);
        sender_ship(&p);
        if (p.exit_status) return p.exit_status; /* a full copy to restart on */
    }
    return 0;
}
