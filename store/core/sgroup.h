/*
 * sgroup.h - a stream's consumer groups (core/sgroup.c, D42): each group's
 * name, last delivered ID and entries-read counter, its consumers (by
 * name, with the time each was last seen) and its pending entries list
 * (PEL: IDs delivered and not yet acknowledged, each with its consumer,
 * delivery time and delivery count). Part of the stream object (stream.c
 * frees, copies, digests and checkpoints them through these functions).
 *
 * Groups and consumers are kept sorted by name, bytewise with a prefix
 * first (Redis' radix-tree order, which XINFO shows); the PEL by ID.
 * Times are the record's apply clock (ctx->now, D14), never the wall
 * clock, so a replay gives the same groups.
 */
#ifndef ATTIC_STORE_SGROUP_H
#define ATTIC_STORE_SGROUP_H

#include <stdint.h>

#include "buf.h"
#include "stream.h"

/* An entries-read counter that is not known (Redis' -1). */
#define SG_ENTRIES_UNKNOWN (-1)

typedef struct st_sconsumer {
    int64_t seen; /* the apply clock (ms) when it last read or was made */
    uint32_t nlen;
    unsigned char name[];
} st_sconsumer_t;

typedef struct st_spending {
    st_sid_t id;
    st_sconsumer_t *owner;
    int64_t delivered; /* the apply clock (ms) of the last delivery */
    uint64_t count;    /* deliveries */
} st_spending_t;

typedef struct st_sgroup {
    st_sid_t last_id;
    int64_t entries_read; /* SG_ENTRIES_UNKNOWN when not known */
    st_sconsumer_t **c;   /* sorted by name */
    uint32_t nc, capc;
    st_spending_t *pel; /* sorted by ID */
    uint64_t npel, cappel;
    uint32_t nlen;
    unsigned char name[];
} st_sgroup_t;

typedef struct st_sgroups {
    st_sgroup_t **g; /* sorted by name */
    uint32_t n, cap;
} st_sgroups_t;

/* The group named name, or NULL. */
st_sgroup_t *sg_find(const st_sgroups_t *t, const void *name, uint32_t len);
/* A new group (the name must not be there): the group. */
st_sgroup_t *sg_create(st_sgroups_t *t, const void *name, uint32_t len, st_sid_t last_id,
                       int64_t entries_read);
/* Remove and free the group (it must be in t). */
void sg_destroy(st_sgroups_t *t, st_sgroup_t *g);
/* Free every group (t itself is the caller's). */
void sg_free_all(st_sgroups_t *t);

/* The consumer named name, or NULL. */
st_sconsumer_t *sg_consumer(const st_sgroup_t *g, const void *name, uint32_t len);
/* A new consumer seen at now (the name must not be there). */
st_sconsumer_t *sg_consumer_add(st_sgroup_t *g, const void *name, uint32_t len, int64_t now);
/* Remove the consumer and its pending entries: how many it had. */
uint64_t sg_consumer_del(st_sgroup_t *g, st_sconsumer_t *c);
/* The consumer's pending entries. */
uint64_t sg_consumer_pending(const st_sgroup_t *g, const st_sconsumer_t *c);

/* The index of the first pending entry with an ID >= id (npel if none). */
uint64_t sg_pel_lower(const st_sgroup_t *g, st_sid_t id);
/* The pending entry of ID id, or NULL. */
st_spending_t *sg_pel_find(st_sgroup_t *g, st_sid_t id);
/* Add id (not pending yet) for c, delivered at now once. */
st_spending_t *sg_pel_add(st_sgroup_t *g, st_sid_t id, st_sconsumer_t *c, int64_t now);
/* Remove pending entry i. */
void sg_pel_remove(st_sgroup_t *g, uint64_t i);

/* A deep copy of every group of from into to (empty). */
void sg_dup(st_sgroups_t *to, const st_sgroups_t *from);
/* Bytes of RAM held. */
uint64_t sg_bytes(const st_sgroups_t *t);
/* Feed every group, in order, to an XXH3 state (void *: xxhash.h stays
 * in sgroup.c and stream.c). */
void sg_digest(const st_sgroups_t *t, void *xxh3_state);
/* Checkpoints: append the groups; read them back from p[0, len) into t
 * (empty): the bytes used, or -1 when they are not such a stream. */
void sg_ckpt_write(const st_sgroups_t *t, buf_t *out);
long sg_ckpt_read(st_sgroups_t *t, const unsigned char *p, size_t len);

#endif
