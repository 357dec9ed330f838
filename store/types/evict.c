/*
 * evict.c - applying CMD_EVICT (common/command.h): the record the store
 * itself writes into the ring when used memory is over maxmemory and the
 * policy chose a key (store/evict.c, D32).
 *
 * Store process, on the apply path (live and replay alike). The record
 * decides: the key named is removed if it is present, whatever happened
 * to it between the choice and the record being applied, so replay removes
 * the same key at the same point of the log (contract 4). A key written
 * again meanwhile goes too, as in Redis a key written just before an
 * eviction round may be its victim. WATCH sees the removal (Redis signals
 * evicted keys as modified); no reply; the apply clock kept.
 */
#include "store/core/entry.h"
#include "store/core/watch.h"
#include "store/types/handlers.h"

void st_apply_evict(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    (void)r;
    idx_entry_t **slot = st_find_peek(a->db, &a->argv[0], INT64_MIN);
    if (!slot) return;
    st_remove(a->db, slot);
    st_key_changed(ctx, a, a->dbnum, &a->argv[0]);
    ctx->evicted++;
}
