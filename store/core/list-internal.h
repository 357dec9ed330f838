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
    idx_entry_t **v;
} st_lchunk_t;

struct st_list {
    st_obj_t obj;
    store_ctx_t *ctx; /* reads pages through it (bound: list.c's banner) */
    uint32_t n;       /* elements */
    uint64_t bytes;   /* RAM held (list.c's banner) */
    st_lchunk_t *c;   /* chunks c[c0, c0 + nc): slack on both sides */
    uint32_t c0, nc, ccap;
    st_ccounts_t cc; /* the pager's counts (core/chunked.h) */
    uint64_t *fen;   /* a Fenwick tree over the chunks' n (fen_ok: valid) */
    uint32_t fen_cap;
    int fen_ok;
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

/* l's chunks as core/chunked.c sees them. */
static inline st_chunks_t st_list_chunks(const st_list_t *l)
{
    return (st_chunks_t){(char *)(l->c + l->c0), sizeof(*l->c), l->nc};
}

/* Take chunk ch's contribution out of l's counts (sign -1) or put it back
 * (+1), around a change of it. */
static inline void st_lch_count(st_list_t *l, const st_lchunk_t *ch, int sign)
{
    st_ccounts_add(&l->cc, &ch->c, sign);
}
/* A new stamp from ctx (NULL: unstamped): st_pgstamp_take. */
static inline void st_lch_stamp(store_ctx_t *ctx, st_lchunk_t *ch)
{
    st_pgstamp_take(ctx, &ch->stamp);
}
/* Make room for `add` chunks at relative position j (shifting the rest),
 * return a pointer to the first, zeroed; remove chunks [j, j + k). */
st_lchunk_t *st_list_chunks_open(st_list_t *l, uint32_t j, uint32_t add);
void st_list_chunks_close(st_list_t *l, uint32_t j, uint32_t k);
/* A RAM chunk's element array, and its RAM. */
void st_lch_free_ram(st_list_t *l, st_lchunk_t *ch);
void st_lch_append(st_list_t *l, st_lchunk_t *ch, idx_entry_t *e);
uint64_t st_list_elem_bytes(const idx_entry_t *e);

#endif
