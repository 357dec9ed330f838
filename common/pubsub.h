/*
 * pubsub.h - Pub/Sub's part of the shared segment (D37): the subscription
 * table every frontend publishes its subscribers into, and the broadcast
 * ring that carries messages from a publisher (a frontend, or the store's
 * keyspace notifications) to every other frontend.
 *
 * Subscription table: one entry per (kind, name) subscribed anywhere, with
 * one subscriber count per frontend slot. A frontend changes only its own
 * count, under the table's lock (taken over from a dead holder, as the
 * frontends' admin locks are); PUBLISH, PUBSUB NUMSUB and CHANNELS read
 * without the lock and check the entry's `seq` (odd while a name is being
 * written) to notice an entry reused meanwhile. A frontend's successor
 * clears the dead one's counts at start (ps_slot_reset). Patterns sit in a
 * second, smaller table, scanned whole by PUBLISH (only while any exists).
 * Names longer than PS_NAME_MAX are not shared: their frontend serves them
 * alone (docs/COMMANDS.md).
 *
 * A frontend is woken for new messages through its slot's eventfd
 * (shm.h, shm_wake_pubsub).
 *
 * Broadcast ring: messages are appended under the ring's lock; `head`
 * (bytes ever written) is the commit point, `reserved` is raised before
 * the bytes are copied, so a reader that copied a message at its cursor
 * knows the copy is whole when reserved - PS_RING_SIZE <= cursor still
 * holds after the copy. A reader that fell further behind lost messages:
 * it disconnects its subscribers (as an output-buffer limit would) and
 * starts again at head. Publishers never wait for readers.
 */
#ifndef ATTIC_PUBSUB_H
#define ATTIC_PUBSUB_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "pidlock.h"

#define PS_MAX_FRONTENDS 64 /* SHM_MAX_FRONTENDS (shm.h checks) */
#define PS_NAME_MAX      256
#define PS_SLOTS         8192 /* channels and shard channels, a power of two */
#define PS_PAT_SLOTS     1024 /* patterns, scanned whole by PUBLISH */
#define PS_RING_SIZE     (8u << 20)
#define PS_MSG_MAX       (PS_RING_SIZE / 4) /* a larger message stays on its frontend */
#define PS_ORIGIN_STORE  0xffffu            /* the store's keyspace notifications */

/* PS_MONITOR: a ring message only, a MONITOR line (its text the message,
 * no channel) for the MONITOR clients of the other frontends. */
enum ps_kind { PS_CHANNEL = 0, PS_PATTERN = 1, PS_SHARD = 2, PS_MONITOR = 3 };

/* notify-keyspace-events' classes (Redis 7.0's letters), which the store's
 * keyspace notifications are filtered by (store/notify.c). */
enum ps_notify {
    PS_NOTIFY_KEYSPACE = 1u << 0,  /* K */
    PS_NOTIFY_KEYEVENT = 1u << 1,  /* E */
    PS_NOTIFY_GENERIC = 1u << 2,   /* g */
    PS_NOTIFY_STRING = 1u << 3,    /* $ */
    PS_NOTIFY_LIST = 1u << 4,      /* l */
    PS_NOTIFY_SET = 1u << 5,       /* s */
    PS_NOTIFY_HASH = 1u << 6,      /* h */
    PS_NOTIFY_ZSET = 1u << 7,      /* z */
    PS_NOTIFY_EXPIRED = 1u << 8,   /* x */
    PS_NOTIFY_EVICTED = 1u << 9,   /* e */
    PS_NOTIFY_STREAM = 1u << 10,   /* t */
    PS_NOTIFY_KEY_MISS = 1u << 11, /* m */
    PS_NOTIFY_MODULE = 1u << 12,   /* d */
    PS_NOTIFY_NEW = 1u << 13,      /* n */
    /* A: every class but m and n */
    PS_NOTIFY_ALL = PS_NOTIFY_GENERIC | PS_NOTIFY_STRING | PS_NOTIFY_LIST | PS_NOTIFY_SET |
                    PS_NOTIFY_HASH | PS_NOTIFY_ZSET | PS_NOTIFY_EXPIRED | PS_NOTIFY_EVICTED |
                    PS_NOTIFY_STREAM | PS_NOTIFY_MODULE,
};

typedef struct ps_entry {
    _Atomic uint32_t seq;   /* odd while kind/len/name change */
    _Atomic uint32_t state; /* 0 never used, 1 in use, 2 free again */
    uint32_t kind, len;
    uint64_t hash;
    char name[PS_NAME_MAX];
    _Atomic uint32_t count[PS_MAX_FRONTENDS]; /* subscribers per frontend slot */
} ps_entry_t;

/* A message in the ring (then chan_len + msg_len bytes, padded to 8). */
typedef struct ps_msg {
    uint32_t total; /* header and bytes, a multiple of 8 */
    uint16_t kind;  /* PS_CHANNEL (PUBLISH) or PS_SHARD (SPUBLISH) */
    uint16_t origin;
    uint32_t chan_len, msg_len;
} ps_msg_t;

typedef struct ps_shm {
    _Atomic int32_t table_lock; /* pid of the holder, 0 = free */
    _Atomic uint32_t npatterns; /* pattern entries in use */
    /* MONITOR clients: per frontend slot, and their sum, which every
     * command reads (relaxed) to know whether to describe itself. */
    _Atomic uint32_t monitors[PS_MAX_FRONTENDS];
    _Atomic uint32_t monitors_total;
    _Alignas(64) _Atomic int32_t ring_lock;
    _Atomic uint64_t head;     /* bytes ever committed */
    _Atomic uint64_t reserved; /* bytes ever claimed (>= head) */
    _Alignas(64) ps_entry_t entries[PS_SLOTS];
    ps_entry_t patterns[PS_PAT_SLOTS];
    _Alignas(64) char ring[PS_RING_SIZE];
} ps_shm_t;

/* Bytes of the part (fixed: the segment is sized before any setting can
 * change). */
size_t ps_shm_size(void);
/* Zero the part (the master, before forking). */
void ps_shm_init(ps_shm_t *ps);

/* Set frontend `slot`'s subscriber count of (kind, name) to n, adding the
 * entry when new and freeing it when every count is 0. Returns 0, or -1
 * when the name is too long or the table is full (the name stays local). */
int ps_set_count(ps_shm_t *ps, int kind, const char *name, size_t len, int slot, uint32_t n);
/* Subscribers of channel (kind PS_CHANNEL or PS_SHARD) on frontends
 * 0..nfrontends-1 but `except` (-1: none; a publisher counts its own
 * frontend's receivers as it delivers to them). */
uint64_t ps_channel_subscribers(ps_shm_t *ps, int kind, const char *name, size_t len,
                                int nfrontends, int except);
/* Pattern subscriptions there whose pattern matches channel (a client
 * with two matching patterns counts twice, as in Redis). */
uint64_t ps_pattern_matches(ps_shm_t *ps, const char *chan, size_t len, int nfrontends, int except);
/* Visit every entry of kind in use (a copy of its name, and the sum of its
 * counts over nfrontends, > 0); for PUBSUB CHANNELS and NUMPAT. */
typedef void ps_visit_fn(void *arg, const char *name, size_t len, uint64_t subscribers);
void ps_each(ps_shm_t *ps, int kind, int nfrontends, ps_visit_fn *fn, void *arg);
/* A frontend starting in `slot`: its predecessor's counts are gone
 * (subscribers and MONITOR clients). */
void ps_slot_reset(ps_shm_t *ps, int slot);
/* Frontend `slot` has one MONITOR client more (delta 1) or fewer (-1). */
void ps_monitors_add(ps_shm_t *ps, int slot, int delta);

/* Append one message; returns its end position, or 0 when too large for
 * the ring (PS_MSG_MAX). Never waits for readers. */
uint64_t ps_publish(ps_shm_t *ps, int kind, unsigned origin, const char *chan, size_t chan_len,
                    const char *msg, size_t msg_len);
/* Read the message at *cursor into *buf (grown as needed: *cap). Returns 1
 * with *cursor advanced, 0 when none is there yet, -1 when the cursor was
 * overrun (messages lost; *cursor moved to head). */
int ps_read(ps_shm_t *ps, uint64_t *cursor, char **buf, size_t *cap);

/* 1 when frontend `slot` has no count left anywhere (tests). */
int ps_slot_empty(ps_shm_t *ps, int slot);

#endif
