/*
 * t_bigval.c - values larger than one record (D31): applying CMD_CHUNK
 * and CMD_BIGABORT, and what the string handlers call to take the parts
 * that stand for a CMD_BIGFINAL's value argument (route.c applies the
 * final itself, since it routes the write nested in it).
 *
 * Store process, on the apply path (live and replay alike). A chunk's bytes
 * stay in the log: the group table (core/groups.c) keeps where they are, as
 * PIECE_LOG pieces counted live, so compaction never deletes a segment a
 * pending part is in. Nothing here is visible to a read: only the final
 * record makes the parts a key's value, in one step, so a crash before it
 * leaves the old value and a crash after it the new one. Every decision
 * (a chunk refused, a group dropped) depends only on the records applied,
 * so replay makes the same ones (contract 4).
 */
#include <inttypes.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>

#include "command.h"
#include "io_fault.h"
#include "log.h"
#include "store/core/alloc.h"
#include "store/core/groups.h"
#include "store/core/notify.h"
#include "store/core/value.h"
#include "store/types/handlers.h"

void st_apply_chunk(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    (void)r; /* nobody waits for a chunk */
    uint64_t group = (uint64_t)cmd_get_i64(a->argv[0].ptr);
    uint32_t seq = cmd_get_u32(a->argv[1].ptr);
    uint64_t owner = (uint64_t)cmd_get_i64(a->argv[2].ptr);
    /* A group is named by its first chunk's LSN: unique for ever, across
     * restarts and frontends alike. */
    if ((seq == 0 && group != a->lsn) ||
        st_groups_chunk(&ctx->groups, group, owner, seq, st_arg_lsn(a, 3), a->argv[3].len)) {
        log_warn("store: chunk %" PRIu32 " of value group %" PRIu64 " at LSN %" PRIu64
                 " does not follow its group; ignored",
                 seq, group, a->lsn);
        return;
    }
    if (io_fault_point(IO_FAULT_BIG_APPLY) == IO_FAULT_KILL) raise(SIGKILL);
}

void st_apply_bigabort(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    (void)r;
    st_groups_drop(&ctx->groups, (uint64_t)cmd_get_i64(a->argv[0].ptr));
}

static st_bigval_t *big_of(const store_ctx_t *ctx, int i)
{
    for (uint32_t k = 0; k < ctx->nbig; k++)
        if (ctx->big[k].arg == (uint32_t)i && ctx->big[k].l) return &ctx->big[k];
    return NULL;
}

st_pieces_t *st_big_take(store_ctx_t *ctx, int i)
{
    st_bigval_t *v = big_of(ctx, i);
    if (!v) return NULL;
    st_pieces_t *l = v->l;
    v->l = NULL;
    return l;
}

uint64_t st_arg_vlen(const store_ctx_t *ctx, const apply_args_t *a, int i)
{
    const st_bigval_t *v = big_of(ctx, i);
    return v ? st_pieces_len(v->l) : a->argv[i].len;
}

idx_entry_t *st_ent_new_arg(store_ctx_t *ctx, const apply_args_t *a, int i, const rec_arg_t *key,
                            int64_t expire_at)
{
    st_pieces_t *l = st_big_take(ctx, i);
    if (l) return st_ent_new_pieces(key, l, expire_at);
    return st_ent_new(key, &a->argv[i], st_arg_lsn(a, i), expire_at);
}

idx_entry_t *st_val_write_arg(store_ctx_t *ctx, const apply_args_t *a, int i, idx_entry_t **slot,
                              uint64_t off)
{
    st_pieces_t *l = st_big_take(ctx, i);
    if (!l)
        return st_val_write(ctx, a->db, slot, off, a->argv[i].ptr, st_arg_lsn(a, i),
                            a->argv[i].len);
    /* Piece by piece, each a run of the log: the bytes are never read. */
    idx_entry_t *e = *slot;
    for (uint32_t j = 0; j < l->n; j++) {
        uint64_t start = st_piece_start(l, j), len = st_piece_end(&l->p[j]) - start;
        e = st_val_write(ctx, a->db, slot, off + start, NULL, l->p[j].where, len);
    }
    st_pieces_free(l);
    return e;
}

/* ---- the values of a final (D58) ---- */

#define LAYOUT_ITEM 24 /* u32 at, u32 arg, u64 off, u64 len */

int st_big_layout(const rec_arg_t *layout, uint64_t total, st_bigval_t **out, uint32_t *n)
{
    *out = NULL;
    *n = 0;
    if (layout->len == 4) {
        /* D31's form: one value, the whole group, of a plain final. */
        *out = st_xmalloc(sizeof(**out));
        **out = (st_bigval_t){0, cmd_get_u32(layout->ptr), 0, total, NULL};
        *n = 1;
        return 0;
    }
    if (!layout->len || layout->len % LAYOUT_ITEM) return -1;
    uint32_t count = layout->len / LAYOUT_ITEM;
    st_bigval_t *v = st_xmalloc((size_t)count * sizeof(*v));
    uint64_t end = 0;
    for (uint32_t k = 0; k < count; k++) {
        const unsigned char *p = layout->ptr + (size_t)k * LAYOUT_ITEM;
        v[k] = (st_bigval_t){cmd_get_u32(p), cmd_get_u32(p + 4), (uint64_t)cmd_get_i64(p + 8),
                             (uint64_t)cmd_get_i64(p + 16), NULL};
        /* In the group's order, none empty, overlapping or past its end;
         * an argument's length is a u32. */
        if (!v[k].len || v[k].len > UINT32_MAX || v[k].off < end || v[k].off > total ||
            v[k].len > total - v[k].off) {
            free(v);
            return -1;
        }
        end = v[k].off + v[k].len;
    }
    *out = v;
    *n = count;
    return 0;
}

static int by_place(const void *x, const void *y)
{
    const st_bigval_t *a = x, *b = y;
    if (a->at != b->at) return a->at < b->at ? -1 : 1;
    return a->arg < b->arg ? -1 : a->arg > b->arg;
}

int st_big_by_place(st_bigval_t *v, uint32_t n)
{
    qsort(v, n, sizeof(*v), by_place);
    for (uint32_t k = 1; k < n; k++)
        if (v[k].at == v[k - 1].at && v[k].arg == v[k - 1].arg) return -1;
    return 0;
}

void st_big_free(st_bigval_t *v, uint32_t n)
{
    for (uint32_t k = 0; k < n; k++) {
        if (v[k].l) st_pieces_free(v[k].l);
        v[k].l = NULL;
    }
}

unsigned char **st_big_to_ram(store_ctx_t *ctx, rec_arg_t *argv, st_bigval_t *v, uint32_t n)
{
    unsigned char **bufs = st_xmalloc((size_t)(n ? n : 1) * sizeof(*bufs));
    for (uint32_t k = 0; k < n; k++) {
        /* Read back while applying, as APPEND's splice does: a failure
         * stops the store (st_pieces_read), so replay meets the same. */
        uint64_t len = 0;
        bufs[k] = st_pieces_read(ctx, v[k].l, &len);
        st_pieces_free(v[k].l);
        v[k].l = NULL;
        argv[v[k].arg] = (rec_arg_t){bufs[k], (uint32_t)len};
    }
    return bufs;
}

void st_big_ram_free(unsigned char **bufs, uint32_t n)
{
    for (uint32_t k = 0; k < n; k++)
        free(bufs[k]);
    free(bufs);
}

/* The writes whose large values become elements of a collection (a hash
 * field's value, a list element, a set member: D45, D48) or are parsed
 * (a RESTORE payload): those keep their elements' bytes in RAM or as one
 * log extent, never as a piece list, so the parts are read into RAM and
 * handed over as ordinary arguments (no log position: st_arg_lsn). */
static int in_ram(cmd_id_t op)
{
    return op == CMD_HSET || op == CMD_LPUSH || op == CMD_LSET || op == CMD_LINSERT ||
           op == CMD_RESTORE || op == CMD_SADD || op == CMD_SREM;
}

void st_big_apply(store_ctx_t *ctx, st_apply_fn fn, cmd_id_t op, const apply_args_t *na,
                  rec_arg_t *argv, st_bigval_t *v, uint32_t n, buf_t *r)
{
    /* The keyspace events are the nested write's (its op, not the
     * final's), told while its arguments are still there. */
    if (in_ram(op)) {
        unsigned char **bufs = st_big_to_ram(ctx, argv, v, n);
        fn(ctx, na, r);
        if (ctx->nnotes) st_notify_flush(ctx, op, na);
        st_big_ram_free(bufs, n);
        return;
    }
    ctx->big = v;
    ctx->nbig = n;
    fn(ctx, na, r);
    if (ctx->nnotes) st_notify_flush(ctx, op, na);
    ctx->big = NULL;
    ctx->nbig = 0;
    /* Not taken: the write did not happen (NX/XX, WRONGTYPE, too long). */
    st_big_free(v, n);
}
