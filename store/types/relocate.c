/*
 * relocate.c - applying CMD_RELOCATE (common/command.h): the record the
 * store itself writes into the ring to move a live value out of an old log
 * segment, so the segment can be deleted (store/compact.c, D27).
 *
 * Store process, on the apply path (live and replay alike). The record
 * carries the key, a copy of the value's bytes and where the value was
 * (old_lsn). Applying it repoints the key to the copy only when the key
 * still is exactly that one extent: a write, delete, rename or expiry
 * applied between the store reading the value and the record being
 * applied makes it a no-op. The decision depends only on the state the log
 * has built, so replay makes the same one (contract 4), and the bytes are
 * the same either way (the log never changes), so no reader, digest or
 * WATCH can tell: no reply, no WATCH signal, the apply clock kept (the
 * record's time is the store's own apply clock).
 */
#include <signal.h>
#include <stdint.h>

#include "io_fault.h"
#include "command.h"
#include "store/core/entry.h"
#include "store/core/live.h"
#include "store/types/handlers.h"

void st_apply_relocate(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    (void)r;
    const rec_arg_t *key = &a->argv[0], *val = &a->argv[1];
    uint64_t old_lsn = (uint64_t)cmd_get_i64(a->argv[2].ptr);
    idx_entry_t **slot = idx_find(&a->db->ix, key->ptr, key->len);
    if (!slot || st_ent_kind(*slot) != VK_EXTENT) return;
    uint64_t lsn;
    uint32_t len;
    st_ent_get_ext1(*slot, &lsn, &len);
    if (lsn != old_lsn || len != val->len) return;
    st_live_add(&ctx->live, lsn, len, -1);
    st_ent_set_ext1(*slot, st_arg_lsn(a, 1), len);
    st_live_add(&ctx->live, st_arg_lsn(a, 1), len, 1);
    /* Tests: killed with the value moved in RAM only (the record is durable). */
    if (io_fault_point(IO_FAULT_RELOCATED) == IO_FAULT_KILL) raise(SIGKILL);
}
