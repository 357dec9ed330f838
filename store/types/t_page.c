/*
 * t_page.c - applying the records the store writes to keep large hashes,
 * sets, lists, streams and sorted sets on disk (D60, D63, D64, D65):
 * CMD_PAGEIN makes a hash or set paged, CMD_PAGE puts a run of its members
 * into pages (core/hash_paged.c has the design), CMD_LPAGE a run of a
 * list's chunks (core/list_page.c), CMD_SPAGE a run of a stream's
 * (core/stream_page.c); a sorted set's member -> score part takes the
 * first two, its order the third (core/zset.c). The store's pager,
 * store/pager.c, decides when to write them.
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
#include "store/core/zset.h"
#include "store/types/handlers.h"

/* The collection at the record's key (whatever its TTL: the record moves
 * bytes, it reads nothing), or NULL; its RAM, for the accounting. */
static idx_entry_t *target(const apply_args_t *a)
{
    idx_entry_t **slot = idx_find(&a->db->ix, a->argv[0].ptr, a->argv[0].len);
    return slot && st_ent_kind(*slot) == VK_OBJ ? *slot : NULL;
}

static uint64_t ram_of(idx_entry_t *e)
{
    st_obj_t *o = st_ent_obj(e);
    return o->ops->mem_usage(o);
}

/* The hash a CMD_PAGEIN or CMD_PAGE is for: a hash's or set's own, a
 * sorted set's member -> score part (D65). */
static st_hash_t *hash_of(idx_entry_t *e)
{
    unsigned t = e ? st_ent_type(e) : ST_STRING;
    if (t == ST_ZSET) return st_zset_dict(st_ent_zset(e));
    return t == ST_HASH || t == ST_SET ? st_ent_hash(e) : NULL;
}

/* A change applied to e: its RAM's change counted; then the test's kill,
 * a sorted set's own point or the type's. */
static void applied(store_ctx_t *ctx, idx_entry_t *e, uint64_t before, enum io_fault_point at)
{
    ctx->entry_bytes += ram_of(e) - before; /* modular: a decrease too */
    if (st_ent_type(e) == ST_ZSET) at = IO_FAULT_ZSET_PAGED;
    /* Tests: killed with the change in RAM only (the record is durable). */
    if (io_fault_point(at) == IO_FAULT_KILL) raise(SIGKILL);
}

/* CMD_PAGEIN key seed ranges. */
void st_apply_pagein(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    (void)r;
    idx_entry_t *e = target(a);
    st_hash_t *h = hash_of(e);
    if (!h) return;
    uint64_t before = ram_of(e);
    if (st_hash_page_in(ctx, h, (uint64_t)cmd_get_i64(a->argv[1].ptr), cmd_get_u32(a->argv[2].ptr)))
        return;
    applied(ctx, e, before, IO_FAULT_PAGE_IN);
}

/* CMD_PAGE key objid as_of first_lo end_lo rest versions image... */
void st_apply_page(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    (void)r;
    if (a->argv[4].len != 8 || a->argv[5].len != 4) return;
    idx_entry_t *e = target(a);
    st_hash_t *h = hash_of(e);
    if (!h) return;
    uint64_t before = ram_of(e);
    if (st_hash_page_apply(ctx, h, a)) return;
    applied(ctx, e, before, IO_FAULT_PAGED);
}

/* CMD_LPAGE key stamps layout page...: a list's chunks, or a sorted set's
 * order's (D65). */
void st_apply_lpage(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    (void)r;
    idx_entry_t *e = target(a);
    unsigned t = e ? st_ent_type(e) : ST_STRING;
    st_list_t *l = t == ST_LIST   ? st_ent_list(e)
                   : t == ST_ZSET ? st_zset_order(st_ent_zset(e))
                                  : NULL;
    if (!l) return;
    uint64_t before = ram_of(e);
    if (st_list_page_apply(ctx, l, a)) return;
    applied(ctx, e, before, IO_FAULT_LIST_PAGED);
}

/* CMD_SPAGE key stamps layout page... (D64) */
void st_apply_spage(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    (void)r;
    idx_entry_t *e = target(a);
    if (!e || st_ent_type(e) != ST_STREAM) return;
    uint64_t before = ram_of(e);
    if (st_stream_page_apply(ctx, st_ent_stream(e), a)) return;
    applied(ctx, e, before, IO_FAULT_STREAM_PAGED);
}
