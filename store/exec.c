/*
 * exec.c - transactions in the store: CMD_EXEC records (MULTI ... EXEC) and
 * the bookkeeping WATCH needs. (Placeholder until issue 5's transactions
 * land: EXEC records are refused, and no change is tracked.)
 */
#include "resp.h"
#include "state-internal.h"

void st_key_changed(store_ctx_t *ctx, const apply_args_t *a, unsigned dbnum,
                    const rec_arg_t *key)
{
    (void)ctx;
    (void)a;
    (void)dbnum;
    (void)key;
}

void st_db_changed(store_ctx_t *ctx, const apply_args_t *a, unsigned dbnum)
{
    (void)ctx;
    (void)a;
    (void)dbnum;
}

void st_watch_free(store_ctx_t *ctx)
{
    (void)ctx;
}

void st_apply_exec(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    (void)ctx;
    (void)a;
    if (r) resp_error(r, "ERR EXEC is not implemented");
}
