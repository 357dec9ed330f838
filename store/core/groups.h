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
    uint64_t id;       /* the LSN of the group's first chunk record (D31) */
    uint64_t owner;    /* the writer: frontend slot << 32 | its pid */
    uint32_t next_seq; /* the seq the next chunk must carry */
    uint32_t aborting; /* the store wrote a CMD_BIGABORT for it (not state:
                        * a hint that keeps it from writing another) */
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
/* Add chunk seq of group id, written by owner: len log bytes at lsn. seq 0
 * opens the group. Returns 0, or -1 when refused (seq not the group's next,
 * an open group reopened, another owner, len 0): nothing changes then. */
int st_groups_chunk(st_groups_t *t, uint64_t id, uint64_t owner, uint32_t seq, uint64_t lsn,
                    uint32_t len);
/* Take group id out of the table: its list (the caller owns it and its
 * live bytes are no longer counted here), or NULL when id is not pending. */
st_pieces_t *st_groups_take(st_groups_t *t, uint64_t id);
/* Abandon group id (no-op when not pending). */
void st_groups_drop(st_groups_t *t, uint64_t id);
/* Count every pending part into live (a recount, compact.c). */
void st_groups_count(const st_groups_t *t, st_live_t *live);
/* Put back a group as a checkpoint held it (D55): its list l (taken:
 * freed on refusal), counted live. Returns -1, changing nothing, when id
 * is already pending. */
int st_groups_restore(st_groups_t *t, uint64_t id, uint64_t owner, uint32_t next_seq,
                      st_pieces_t *l);
/* Bytes pending in group id (0 when not pending). */
uint64_t st_groups_len(const st_groups_t *t, uint64_t id);

/* One value of a final record (D58): argument `arg` of the nested
 * payload `at` (0 in a plain final, the CMD_EXEC argument it is in a
 * transaction's) stands for the group's bytes [off, off + len). */
typedef struct st_bigval {
    uint32_t at, arg;
    uint64_t off, len;
    st_pieces_t *l; /* its parts once split (NULL once taken or freed) */
} st_bigval_t;

/* Cut a group's list l (taken: freed or handed on) into the values'
 * lists v[i].l. The values are in the group's order, each non-empty and
 * inside l, none overlapping (st_big_layout checks it); bytes outside
 * every value are dropped. A value that is the whole group gets l itself,
 * so a final of one value keeps the list its chunks grew. */
void st_groups_split(st_pieces_t *l, st_bigval_t *v, uint32_t n);

/* A group's writer, as chunk records carry it. */
static inline uint64_t st_group_owner(uint32_t slot, uint32_t pid)
{
    return (uint64_t)slot << 32 | pid;
}

#endif
