/*
 * repl-internal.h - what the replication process's files share (repl.c's
 * loop, sender.c, receiver.c); nothing outside repl/ includes it.
 */
#ifndef ATTIC_REPL_INTERNAL_H
#define ATTIC_REPL_INTERNAL_H

#include <poll.h>
#include <stdint.h>
#include <string.h>

#include "backup.h"
#include "buf.h"
#include "config.h"
#include "repl/repl.h"
#include "resp.h"
#include "shm.h"

enum peer_state {
    PEER_STREAM,    /* shipping the log from pos */
    PEER_WAIT_COPY, /* a full copy asked of the store (D50) */
    PEER_COPY,      /* sending the copy's files */
    PEER_COPY_SENT, /* all sent: the replica restarts and reconnects */
};

/* A replica this leader ships to (slot i of shm repl.replicas). */
typedef struct repl_peer {
    int fd; /* -1 = free */
    enum peer_state state;
    /* The full copy (D50): its files, open from the moment the store
     * finished it, so that nothing can delete them while they are sent. */
    uint32_t copy_gen; /* the shm repl.copy_wanted asked for it */
    backup_manifest_t copy;
    int *copy_fds;
    size_t copy_file; /* the file being sent, its next offset */
    uint64_t copy_off;
    uint64_t pos; /* next LSN to ship */
    buf_t out;    /* framed bytes not written yet */
    size_t out_off;
    buf_t in; /* the replica's acks, unparsed */
    resp_cmd_t cmd;
    int seg_fd; /* the segment holding pos, open (survives its deletion) */
    uint64_t seg_start;
    int64_t last_send_ms;
    /* The backlog (backlog.c, D67): the LSN this replica will resume
     * from, kept by the leader (UINT64_MAX = none), and since when it has
     * been more than the soft limit behind (0 = not). */
    uint64_t pin;
    int64_t soft_since_ms;
} repl_peer_t;

/* A replica that was sent a whole full copy and closed to restart on it:
 * the copy's LSN is kept until it is back (same address and port) or
 * REPL_PARKED_MS passed (backlog.c, D67). */
#define REPL_PARKED_MS 60000
typedef struct repl_parked {
    char ip[64];
    unsigned port;
    uint64_t lsn; /* UINT64_MAX = free */
    int64_t since_ms;
} repl_parked_t;

enum recv_state { RECV_IDLE, RECV_CONNECTING, RECV_HANDSHAKE, RECV_STREAM, RECV_COPY };

/* A full copy being written into incoming/ (copy.c, D50). */
typedef struct repl_copy {
    int have_manifest;
    backup_manifest_t m;
    size_t file; /* the file being written, its fd and next offset */
    int fd;
    uint64_t off;
} repl_copy_t;

/* The follower's link to its leader. */
typedef struct repl_recv {
    int fd;
    enum recv_state state;
    uint32_t gen; /* repl.gen it was started for */
    int64_t next_try_ms;
    int64_t last_ack_ms;
    buf_t in; /* bytes from the leader, unparsed from in_off */
    size_t in_off;
    buf_t log; /* log bytes from next_lsn, records not pushed yet */
    uint64_t next_lsn;
    uint64_t acked;
    int adopted;                       /* the ring claimer is ours */
    int shipped_known;                 /* shipped_from/to hold the data directory's SHIPPED */
    uint64_t shipped_from, shipped_to; /* datadir.h, D56 */
    repl_copy_t copy;
} repl_recv_t;

typedef struct repl_proc {
    shm_t *shm;
    const config_t *cfg;
    repl_peer_t peers[REPL_MAX_REPLICAS];
    repl_recv_t recv;
    repl_parked_t parked[REPL_MAX_REPLICAS];
    int exit_status; /* set: the loop ends with it (EXIT_FULLCOPY) */
} repl_proc_t;

/* Drop the first n bytes of b (parsed input). */
static inline void repl_buf_drop(buf_t *b, size_t n)
{
    if (n >= b->len) {
        b->len = 0;
        return;
    }
    memmove(b->data, b->data + n, b->len - n);
    b->len -= n;
}

/* sender.c */
void sender_init(repl_proc_t *p);
void sender_accept(repl_proc_t *p); /* a handed-over replica connection, if any */
int sender_pollfds(repl_proc_t *p, struct pollfd *fds, int *owner, int max);
void sender_event(repl_proc_t *p, int peer, short revents);
void sender_ship(repl_proc_t *p); /* ship what became durable, pings */

void sender_drop(repl_proc_t *p, int peer, const char *why); /* close, log why */

/* backlog.c: what the leader keeps of its log for its replicas (D67). */
void backlog_init(repl_proc_t *p);
/* The peer in slot i is closing: a replica that has its whole copy is
 * parked (its copy's LSN kept for its return). */
void backlog_closing(repl_proc_t *p, int i);
/* A handshake from ip:port asking for lsn: returns 0 when the log from
 * lsn is there and now kept (its pin published, then checked against the
 * log's start and a deletion in progress), else -1 with why set. */
int backlog_admit(repl_proc_t *p, uint64_t lsn, const char *ip, unsigned port, char *why, size_t n);
/* A full copy asked for ip:port: keep the whole log until its LSN is known. */
void backlog_copy_wanted(repl_proc_t *p, int i, const char *ip, unsigned port);
/* Every pass: drop replicas past client-output-buffer-limit replica, then
 * publish keep_lsn and backlog_active. */
void backlog_step(repl_proc_t *p, uint64_t durable, int64_t now);

/* receiver.c */
void receiver_init(repl_proc_t *p);
int receiver_pollfd(repl_proc_t *p, struct pollfd *fd); /* 1 when it has one */
void receiver_event(repl_proc_t *p, short revents);
void receiver_step(repl_proc_t *p);             /* connect, push, ack, follow REPLICAOF */
int receiver_wants_retry(const repl_proc_t *p); /* ring was full: poll soon */

/* copy.c: the replica's side of a full copy (D50). */
void copy_begin(repl_proc_t *p); /* the leader answered +FULLCOPY */
/* One frame of the copy. Returns 0, 1 once the copy is complete and
 * synced in incoming/ (p->exit_status set), or -1 (the reason set with
 * set_error's text in err; the caller drops the link). */
int copy_frame(repl_proc_t *p, const repl_frame_t *f, const char *data, char *err, size_t errlen);
void copy_abort(repl_proc_t *p); /* the link dropped: what is half written stays unused */

#endif
