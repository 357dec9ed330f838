/*
 * t_page.c - applying the records the store writes to keep large hashes,
 * sets, lists and streams on disk (D60, D63, D64): CMD_PAGEIN makes a hash
 * or set paged, CMD_PAGE puts a run of its members into pages
 * (core/hash_paged.c has the design), CMD_LPAGE a run of a list's chunks
 * (core/list_page.c), CMD_SPAGE a run of a stream's (core/stream_page.c);
 * the store's pager, store/pager.c, decides when to write them.
 *
 * Store process, on the apply path (live and replay alike). Like
 * CMD_RELOCATE (relocate.c): no reply, no WATCH signal, no keyspace event,
 * the apply clock kept; a record that no longer fits the key's state
 * (deleted, replaced, renamed away, ranges changed since it was built) is
 * a no-op, decided by the state the log built only (contract 4). Neither
 * changes what any read returns, only where the members are.
 */
#include <signal.h>
#include <stdint.h>

#include "command.h"
#include "io_fault.h"
#include "store/core/entry.h"
#include "store/core/hash.h"
#include "store/core/list.h"
#include "store/core/object.h"
#include "store/core/stream.h"
#include "store/types/handlers.h"

/* The hash or set at the record's key (whatever its TTL: the record moves
 * bytes, it reads nothing), or NULL. */
static st_hash_t *target(const apply_args_t *a)
{
    idx_entry_t **slot = idx_find(&a->db->ix, a->argv[0].ptr, a->argv[0].len);
    if (!slot) return NULL;
    unsigned t = st_ent_type(*slot);
    return t == ST_HASH || t == ST_SET ? st_ent_hash(*slot) : NULL;
}

/* CMD_PAGEIN key seed ranges. */
void st_apply_pagein(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    (void)r;
    st_hash_t *h = target(a);
    if (!h) return;
    uint64_t before = st_hash_bytes(h);
    if (st_hash_page_in(ctx, h, (uint64_t)cmd_get_i64(a->argv[1].ptr), cmd_get_u32(a->argv[2].ptr)))
        return;
    ctx->entry_bytes += st_hash_bytes(h) - before; /* modular: a decrease too */
    /* Tests: killed with the collection paged in RAM only (the record is durable). */
    if (io_fault_point(IO_FAULT_PAGE_IN) == IO_FAULT_KILL) raise(SIGKILL);
}

/* CMD_PAGE key objid as_of first_lo end_lo rest versions image... */
void st_apply_page(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    (void)r;
    if (a->argv[4].len != 8 || a->argv[5].len != 4) return;
    st_hash_t *h = target(a);
    if (!h) return;
    uint64_t before = st_hash_bytes(h);
    if (st_hash_page_apply(ctx, h, a)) return;
    ctx->entry_bytes += st_hash_bytes(h) - before;
    if (io_fault_point(IO_FAULT_PAGED) == IO_FAULT_KILL) raise(SIGKILL);
}

/* CMD_LPAGE key stamps layout page... */
void st_apply_lpage(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    (void)r;
    idx_entry_t **slot = idx_find(&a->db->ix, a->argv[0].ptr, a->argv[0].len);
    if (!slot || st_ent_type(*slot) != ST_LIST) return;
    st_list_t *l = st_ent_list(*slot);
    uint64_t before = st_list_bytes(l);
    if (st_list_page_apply(ctx, l, a)) return;
    ctx->entry_bytes += st_list_bytes(l) - before;
    /* Tests: killed with the run in pages in RAM only (the record is durable). */
    if (io_fault_point(IO_FAULT_LIST_PAGED) == IO_FAULT_KILL) raise(SIGKILL);
}

/* CMD_SPAGE key stamps layout page... (D64) */
void st_apply_spage(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    (void)r;
    idx_entry_t **slot = idx_find(&a->db->ix, a->argv[0].ptr, a->argv[0].len);
    if (!slot || st_ent_type(*slot) != ST_STREAM) return;
    st_stream_t *s = st_ent_stream(*slot);
    uint64_t before = st_stream_bytes(s);
    if (st_stream_page_apply(ctx, s, a)) return;
    ctx->entry_bytes += st_stream_bytes(s) - before;
    /* Tests: killed with the run in pages in RAM only (the record is durable). */
    if (io_fault_point(IO_FAULT_STREAM_PAGED) == IO_FAULT_KILL) raise(SIGKILL);
}
