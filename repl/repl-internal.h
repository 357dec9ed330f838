/*
 * repl-internal.h - what the replication process's files share (repl.c's
 * loop, sender.c, receiver.c); nothing outside repl/ includes it.
 */
#ifndef ATTIC_REPL_INTERNAL_H
#define ATTIC_REPL_INTERNAL_H

#include <poll.h>
#include <stdint.h>
#include <string.h>

#include "buf.h"
#include "config.h"
#include "repl/repl.h"
#include "resp.h"
#include "shm.h"

/* A replica this leader ships to (slot i of shm repl.replicas). */
typedef struct repl_peer {
    int fd;       /* -1 = free */
    uint64_t pos; /* next LSN to ship */
    buf_t out;    /* framed bytes not written yet */
    size_t out_off;
    buf_t in; /* the replica's acks, unparsed */
    resp_cmd_t cmd;
    int seg_fd; /* the segment holding pos, open (survives its deletion) */
    uint64_t seg_start;
    int64_t last_send_ms;
} repl_peer_t;

enum recv_state { RECV_IDLE, RECV_CONNECTING, RECV_HANDSHAKE, RECV_STREAM };

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
    int adopted; /* the ring claimer is ours */
} repl_recv_t;

typedef struct repl_proc {
    shm_t *shm;
    const config_t *cfg;
    repl_peer_t peers[REPL_MAX_REPLICAS];
    repl_recv_t recv;
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

/* receiver.c */
void receiver_init(repl_proc_t *p);
int receiver_pollfd(repl_proc_t *p, struct pollfd *fd); /* 1 when it has one */
void receiver_event(repl_proc_t *p, short revents);
void receiver_step(repl_proc_t *p);             /* connect, push, ack, follow REPLICAOF */
int receiver_wants_retry(const repl_proc_t *p); /* ring was full: poll soon */

#endif
