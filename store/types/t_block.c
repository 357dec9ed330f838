/*
 * t_block.c - the store's records that end a client's wait without
 * serving it (core/block.c, D36): CMD_UNBLOCK (a timeout, CLIENT UNBLOCK,
 * a closed connection) and CMD_BLOCKDROP (a frontend incarnation that
 * died: every waiter it had). Store process only; a type handler
 * following route.c's determinism rules: what they remove depends only on
 * the waiters the earlier records left.
 */
#include <stdint.h>
#include <string.h>

#include "handlers.h"
#include "resp.h"
#include "store/core/block.h"

/* How each kind of waiter is served (core/block.c calls it through
 * route.c): the lists' three kinds, the sorted sets' two, and the
 * streams' XREADGROUP and XREAD (D46). */
const st_block_serve_fn st_block_serve_table[ST_BLOCK_KINDS] = {
    [ST_BLOCK_LIST_POP] = st_list_serve,           [ST_BLOCK_LIST_MPOP] = st_list_serve,
    [ST_BLOCK_LIST_MOVE] = st_list_serve,          [ST_BLOCK_ZSET_POP] = st_zset_serve,
    [ST_BLOCK_ZSET_MPOP] = st_zset_serve,          [ST_BLOCK_STREAM_GROUP] = st_stream_group_serve,
    [ST_BLOCK_STREAM_READ] = st_stream_read_serve,
};

/* CMD_UNBLOCK client_id mode (enum st_unblock_mode): the waiter's reply
 * (null, or -UNBLOCKED) goes to its own frontend; this record's reply is
 * CLIENT UNBLOCK's: 1 when the client was waiting, else 0. */
void st_apply_unblock(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    uint64_t client_id = (uint64_t)cmd_get_i64(a->argv[0].ptr);
    uint32_t mode = cmd_get_u32(a->argv[1].ptr);
    if (mode > ST_UNBLOCK_ERROR) mode = ST_UNBLOCK_TIMEOUT;
    int found = st_block_unblock(ctx, client_id, (int)mode);
    if (r) resp_integer(r, found);
}

/* CMD_BLOCKDROP origin: written by a frontend's new incarnation before
 * its first blocking record, for its predecessors' waiters (their
 * connections are gone); origin 0, by the first store after a restart of
 * the server, for every waiter of the previous run. No reply. */
void st_apply_blockdrop(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    (void)r;
    st_block_drop_origin(ctx, (uint16_t)cmd_get_u32(a->argv[0].ptr));
}
