/*
 * list-internal.h - what core/list.c (the list's chunks, positions and
 * operations table) and core/list_page.c (its pages: CMD_LPAGE's apply,
 * the pager's builder, the checks) share: the structure itself. Private to
 * those two files; everything else goes through list.h. Calls go one way:
 * list_page.c -> list.c.
 */
#ifndef ATTIC_STORE_LIST_INTERNAL_H
#define ATTIC_STORE_LIST_INTERNAL_H

#include <stdint.h>

#include "chunked.h"
#include "list.h"

/* A RAM chunk takes pushes at an end while it has fewer than this many
 * elements and element bytes (each +2); an insertion inside splits a full
 * one. Fixed, not configured: chunk boundaries are state (page records
 * name chunks), so live runs and replays must cut them alike. */
#define ST_LCHUNK_ELEMS 128u
#define ST_LCHUNK_BYTES 4096u

/* One chunk: consecutive elements, either in RAM (lsn 0: entries in
 * v[first, first + n)) or clean (elements [first, first + n) of the list
 * page of len bytes at lsn, a CMD_LPAGE argument); the fields every
 * chunked collection's chunk has, core/chunked.h (vbytes: element bytes,
 * +2 each, ST_LCHUNK_BYTES; a stamp of lsn 0: a list built outside the
 * apply path, which st_list_seal stamps; by contents: read from a version
 * 1 checkpoint), then its entries. */
typedef struct st_lchunk {
    union {
        st_cchunk_t c;
        struct {
            ST_CCHUNK_FIELDS;
        };
    };
    uint32_t pn; /* clean, keyed: its page's element count (0: unknown) */
    idx_entry_t **v;
    /* Clean, in a keyed list (a sorted set's order, D65): a RAM copy of
     * its window's first element, so a seek compares chunks without
     * reading their pages; NULL otherwise. Counted in l->bytes. */
    idx_entry_t *head;
} st_lchunk_t;

struct st_list {
    st_obj_t obj;
    store_ctx_t *ctx; /* reads pages through it (bound: list.c's banner) */
    uint32_t n;       /* elements */
    uint64_t bytes;   /* RAM held (list.c's banner) */
    st_lchunk_t *c;   /* chunks c[c0, c0 + nc): slack on both sides */
    uint32_t c0, nc, ccap;
    st_ccounts_t cc;  /* the pager's counts (core/chunked.h) */
    uint32_t nsparse; /* keyed: clean chunks holding under half their page (st_lch_sparse) */
    uint64_t *fen;    /* a Fenwick tree over the chunks' n (fen_ok: valid) */
    uint32_t fen_cap;
    int fen_ok;
    int keyed; /* a sorted set's order (D65): clean chunks keep their heads */
};

static inline st_lchunk_t *st_lch(const st_list_t *l, uint32_t j)
{
    return &l->c[l->c0 + j];
}

/* Whether element bytes of this length go into pages (else pinned). */
static inline int st_lelem_pageable(uint64_t vlen)
{
    return vlen <= ST_LIST_PAGE_ELEM_MAX;
}

/* Whether a keyed list's clean chunk ch holds under half of its page's
 * elements: writes inside a sorted set's order shrink windows, and the
 * pager then merges such chunks with their neighbours (list_page.c). */
static inline int st_lch_sparse(const st_list_t *l, const st_lchunk_t *ch)
{
    return l->keyed && ch->lsn && 2 * ch->n < ch->pn;
}

/* l's chunks as core/chunked.c sees them (a keyed list's with its clean
 * chunks worth merging: list_page.c). */
st_chunks_t st_list_chunks(const st_list_t *l);

/* Take chunk ch's contribution out of l's counts (sign -1) or put it back
 * (+1), around a change of it. */
static inline void st_lch_count(st_list_t *l, const st_lchunk_t *ch, int sign)
{
    st_ccounts_add(&l->cc, &ch->c, sign);
    l->nsparse += (uint32_t)(sign * st_lch_sparse(l, ch));
}
/* A new stamp from ctx (NULL: unstamped): st_pgstamp_take. */
static inline void st_lch_stamp(store_ctx_t *ctx, st_lchunk_t *ch)
{
    st_pgstamp_take(ctx, &ch->stamp);
}
/* The chunk holding position i (< l->n) and i's place in it: O(1) near
 * either end, else O(log chunks) (the Fenwick tree, rebuilt when stale). */
void st_list_locate(st_list_t *l, uint32_t i, uint32_t *j, uint32_t *k);
/* Make room for `add` chunks at relative position j (shifting the rest),
 * return a pointer to the first, zeroed; remove chunks [j, j + k). */
st_lchunk_t *st_list_chunks_open(st_list_t *l, uint32_t j, uint32_t add);
void st_list_chunks_close(st_list_t *l, uint32_t j, uint32_t k);
/* Chunks [j, j + k) become m new ones, zeroed (moving the rest only by
 * the difference). */
st_lchunk_t *st_list_chunks_replace(st_list_t *l, uint32_t j, uint32_t k, uint32_t m);
/* A RAM chunk's element array, and its RAM. */
void st_lch_free_ram(st_list_t *l, st_lchunk_t *ch);
void st_lch_append(st_list_t *l, st_lchunk_t *ch, idx_entry_t *e);
uint64_t st_list_elem_bytes(const idx_entry_t *e);
/* A keyed list's clean chunk ch: its head becomes a copy of p[0, n)
 * (nothing for a list that is not keyed); its head dropped (any chunk). */
void st_lch_head_set(st_list_t *l, st_lchunk_t *ch, const unsigned char *p, uint32_t n);
void st_lch_head_drop(st_list_t *l, st_lchunk_t *ch);

#endif
