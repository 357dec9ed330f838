/*
 * pieces.h - the piece list (core/pieces.c): how a string value's bytes
 * are kept when they are not one argument of one record. An ordered list
 * of pieces, each a run of bytes in the log, of zeros, or in RAM, found by
 * binary search on their end offsets. core/value.c's banner has the design
 * and the RAM bound; this header is the data structure only, and knows
 * nothing of entries or of the log's files.
 */
#ifndef ATTIC_STORE_PIECES_H
#define ATTIC_STORE_PIECES_H

#include <stdint.h>

/* Piece kinds. */
enum { PIECE_LOG = 0, PIECE_ZERO = 1, PIECE_RAM = 2 };
#define PIECE_KIND_SHIFT 62
#define PIECE_END_MASK   ((UINT64_C(1) << PIECE_KIND_SHIFT) - 1)

#define ST_RAM_CHUNK 4096u /* RAM block of SETBIT, chunk of compaction (value.c) */

/* One piece of a value's tail: `end` (low 62 bits) is the offset just past
 * the piece, counted from the end of the inline prefix, so a piece starts
 * where the previous one ends and lookups are a binary search. */
typedef struct st_piece {
    uint64_t where; /* PIECE_LOG: LSN of the first byte; PIECE_RAM: the
                     * bytes (malloc'd, exactly the piece's length);
                     * PIECE_ZERO: 0 */
    uint64_t end;   /* kind << PIECE_KIND_SHIFT | end offset */
} st_piece_t;

typedef struct st_pieces {
    uint64_t ram_bytes; /* bytes held by PIECE_RAM pieces */
    uint32_t n, cap;
    st_piece_t p[];
} st_pieces_t;

static inline uint64_t st_piece_end(const st_piece_t *p)
{
    return p->end & PIECE_END_MASK;
}

static inline unsigned st_piece_kind(const st_piece_t *p)
{
    return (unsigned)(p->end >> PIECE_KIND_SHIFT);
}

static inline uint64_t st_piece_start(const st_pieces_t *l, uint32_t i)
{
    return i ? st_piece_end(&l->p[i - 1]) : 0;
}

static inline unsigned char *st_piece_ram(const st_piece_t *p)
{
    return (unsigned char *)(uintptr_t)p->where;
}

static inline st_piece_t st_piece_make(unsigned kind, uint64_t where, uint64_t end)
{
    return (st_piece_t){where, ((uint64_t)kind << PIECE_KIND_SHIFT) | end};
}

/* The first piece whose end is past off (l->n when off >= the length). */
static inline uint32_t st_pieces_find(const st_pieces_t *l, uint64_t off)
{
    uint32_t lo = 0, hi = l->n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (st_piece_end(&l->p[mid]) > off)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

uint64_t st_pieces_len(const st_pieces_t *l);   /* bytes in the tail */
uint64_t st_pieces_bytes(const st_pieces_t *l); /* RAM it holds */
/* Free the list and the RAM its pieces hold. */
void st_pieces_free(st_pieces_t *l);
/* An empty list with room for cap pieces. */
st_pieces_t *st_pieces_new(uint32_t cap);
/* Replace tail bytes [lo, hi) with one piece of len bytes (pieces.c says
 * which ranges are allowed); returns the list, which may have moved. */
st_pieces_t *st_pieces_splice(st_pieces_t *l, uint64_t lo, uint64_t hi, unsigned kind,
                              uint64_t where, uint64_t len);
/* Grow the tail by delta zero bytes; returns the list, which may have moved. */
st_pieces_t *st_pieces_grow_zero(st_pieces_t *l, uint64_t delta);

#endif
