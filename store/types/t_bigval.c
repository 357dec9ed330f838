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

#include "command.h"
#include "io_fault.h"
#include "log.h"
#include "store/core/groups.h"
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

st_pieces_t *st_big_take(store_ctx_t *ctx, int i)
{
    if (!ctx->big || ctx->big_arg != i) return NULL;
    st_pieces_t *l = ctx->big;
    ctx->big = NULL;
    return l;
}

uint64_t st_arg_vlen(const store_ctx_t *ctx, const apply_args_t *a, int i)
{
    if (ctx->big && ctx->big_arg == i) return st_pieces_len(ctx->big);
    return a->argv[i].len;
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
