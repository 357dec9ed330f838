/*
 * pieces.c - the piece list (pieces.h): the data structure behind string
 * values that are not one argument of one record (core/value.c's banner
 * has the design). Allocating, growing, freeing, and splicing a new piece
 * over a range. Knows nothing of entries, databases or the log's files:
 * core/entry.c frees lists with their entries, core/value.c builds them.
 *
 * Store process only (and tests); single-threaded. Invariants: pieces are
 * in order, each starts where the previous one ends (their `end` offsets
 * strictly increase), ram_bytes is the sum of the PIECE_RAM pieces'
 * lengths, and every PIECE_RAM buffer is owned by exactly one list. A crash
 * here loses nothing: lists are rebuilt by replaying the log.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "pieces.h"

uint64_t st_pieces_len(const st_pieces_t *l)
{
    return l->n ? st_piece_end(&l->p[l->n - 1]) : 0;
}

uint64_t st_pieces_bytes(const st_pieces_t *l)
{
    return sizeof(*l) + (uint64_t)l->cap * sizeof(st_piece_t) + l->ram_bytes;
}

void st_pieces_free(st_pieces_t *l)
{
    for (uint32_t i = 0; i < l->n; i++)
        if (st_piece_kind(&l->p[i]) == PIECE_RAM) free(st_piece_ram(&l->p[i]));
    free(l);
}

st_pieces_t *st_pieces_new(uint32_t cap)
{
    st_pieces_t *l = st_xmalloc(sizeof(*l) + (size_t)cap * sizeof(st_piece_t));
    l->ram_bytes = 0;
    l->n = 0;
    l->cap = cap;
    return l;
}

static st_pieces_t *st_pieces_reserve(st_pieces_t *l, uint32_t more)
{
    if (l->n + more <= l->cap) return l;
    uint32_t cap = l->cap * 2 > l->n + more ? l->cap * 2 : l->n + more;
    l = st_xrealloc(l, sizeof(*l) + (size_t)cap * sizeof(st_piece_t));
    l->cap = cap;
    return l;
}

/*
 * Replace tail bytes [lo, hi) with one piece of len bytes (kind, where; a
 * RAM buffer passed in is owned by the list from now on, and counted by the
 * caller). Either hi - lo == len (an overwrite inside the tail), or hi is
 * the tail's length (the new piece ends the tail: an append when lo == hi,
 * an overwrite running past the end otherwise). The list may move.
 */
st_pieces_t *st_pieces_splice(st_pieces_t *l, uint64_t lo, uint64_t hi, unsigned kind,
                              uint64_t where, uint64_t len)
{
    st_piece_t out[3];
    uint32_t k = 0, m = 0;
    uint32_t i = st_pieces_find(l, lo);
    if (hi > lo) {
        uint32_t j = st_pieces_find(l, hi - 1);
        m = j - i + 1;
        st_piece_t *pi = &l->p[i], *pj = &l->p[j];
        uint64_t si = st_piece_start(l, i), sj = st_piece_start(l, j), ej = st_piece_end(pj);
        int keep_left_buf = 0;
        st_piece_t right = {0, 0};
        /* The right remainder first: it may copy out of a RAM buffer the
         * left remainder then shrinks. Its end does not move: a piece that
         * ends the tail is never cut on the right. */
        if (ej > hi) {
            uint64_t skip = hi - sj, rlen = ej - hi;
            if (st_piece_kind(pj) == PIECE_RAM) {
                unsigned char *buf = st_xmalloc((size_t)rlen);
                memcpy(buf, st_piece_ram(pj) + skip, (size_t)rlen);
                l->ram_bytes += rlen;
                right = st_piece_make(PIECE_RAM, (uintptr_t)buf, ej);
            } else {
                right = st_piece_make(st_piece_kind(pj),
                                      st_piece_kind(pj) == PIECE_LOG ? pj->where + skip : 0, ej);
            }
        }
        if (si < lo) {
            if (st_piece_kind(pi) == PIECE_RAM) {
                unsigned char *buf = st_xrealloc(st_piece_ram(pi), (size_t)(lo - si));
                l->ram_bytes -= st_piece_end(pi) - lo;
                out[k++] = st_piece_make(PIECE_RAM, (uintptr_t)buf, lo);
                keep_left_buf = 1;
            } else {
                out[k++] = st_piece_make(st_piece_kind(pi), pi->where, lo);
            }
        }
        for (uint32_t t = i; t <= j; t++) {
            st_piece_t *p = &l->p[t];
            if (st_piece_kind(p) != PIECE_RAM || (t == i && keep_left_buf)) continue;
            l->ram_bytes -= st_piece_end(p) - st_piece_start(l, t);
            free(st_piece_ram(p));
        }
        out[k++] = st_piece_make(kind, where, lo + len);
        if (ej > hi) out[k++] = right;
    } else {
        out[k++] = st_piece_make(kind, where, lo + len); /* append: i == l->n */
    }
    if (k > m) l = st_pieces_reserve(l, k - m);
    memmove(&l->p[i + k], &l->p[i + m], (size_t)(l->n - i - m) * sizeof(st_piece_t));
    memcpy(&l->p[i], out, k * sizeof(st_piece_t));
    l->n = l->n + k - m;
    return l;
}

/* Grow the tail by delta zero bytes. */
st_pieces_t *st_pieces_grow_zero(st_pieces_t *l, uint64_t delta)
{
    uint64_t len = st_pieces_len(l);
    if (l->n) {
        st_piece_t *p = &l->p[l->n - 1];
        uint64_t plen = len - st_piece_start(l, l->n - 1);
        if (st_piece_kind(p) == PIECE_ZERO) {
            p->end += delta;
            return l;
        }
        /* A small RAM piece at the end grows instead (SETBIT building a
         * bitmap byte after byte). */
        if (st_piece_kind(p) == PIECE_RAM && plen + delta <= ST_RAM_CHUNK) {
            unsigned char *buf = st_xrealloc(st_piece_ram(p), (size_t)(plen + delta));
            memset(buf + plen, 0, (size_t)delta);
            l->ram_bytes += delta;
            p->where = (uintptr_t)buf;
            p->end += delta;
            return l;
        }
    }
    l = st_pieces_reserve(l, 1);
    l->p[l->n++] = st_piece_make(PIECE_ZERO, 0, len + delta);
    return l;
}
