/*
 * groups.h - pending value groups (D31): the parts of a large value that
 * have been logged as chunk records but not yet made visible by a final
 * record. Each group is a piece list of PIECE_LOG pieces (the bytes stay
 * in the log) counted in the live-bytes table while pending.
 */
#ifndef ATTIC_STORE_GROUPS_H
#define ATTIC_STORE_GROUPS_H

#include <stdint.h>

#include "live.h"
#include "pieces.h"

typedef struct st_group {
    uint64_t id;       /* slot << 48 | incarnation << 32 | counter (D31) */
    uint32_t next_seq; /* the seq the next chunk must carry */
    st_pieces_t *l;    /* the parts so far, in order */
} st_group_t;

typedef struct st_groups {
    st_group_t *g;
    uint32_t n, cap;
    st_live_t *live; /* counted here while pending; NULL: not counted */
} st_groups_t;

void st_groups_init(st_groups_t *t, st_live_t *live);
/* Drop every pending group (their live bytes go) and free the table. */
void st_groups_free(st_groups_t *t);
/* Add chunk seq of group id: len log bytes at lsn. seq 0 opens the group.
 * Returns 0, or -1 when refused (seq not the group's next, an open group
 * reopened, len 0): nothing changes then. */
int st_groups_chunk(st_groups_t *t, uint64_t id, uint32_t seq, uint64_t lsn, uint32_t len);
/* Take group id out of the table: its list (the caller owns it and its
 * live bytes are no longer counted here), or NULL when id is not pending. */
st_pieces_t *st_groups_take(st_groups_t *t, uint64_t id);
/* Abandon group id (no-op when not pending). */
void st_groups_drop(st_groups_t *t, uint64_t id);
/* Abandon every group of frontend slot whose incarnation is below inc
 * (inc = UINT32_MAX: every group of the slot). Returns how many. */
uint32_t st_groups_drop_slot(st_groups_t *t, uint32_t slot, uint32_t inc);
/* Bytes pending in group id (0 when not pending). */
uint64_t st_groups_len(const st_groups_t *t, uint64_t id);

static inline uint64_t st_group_id(uint32_t slot, uint32_t inc, uint32_t counter)
{
    return (uint64_t)(slot & 0xffff) << 48 | (uint64_t)(inc & 0xffff) << 32 | counter;
}

#endif
