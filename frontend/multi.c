/*
 * multi.c - transactions: MULTI, EXEC, DISCARD, WATCH, UNWATCH.
 * (Placeholder until issue 5's transactions land.)
 */
#include <stdio.h>

#include "fe-internal.h"

int fe_multi_command(fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a)
{
    (void)a;
    buf_t b;
    buf_init(&b);
    char msg[96];
    snprintf(msg, sizeof(msg), "ERR command '%s' is not implemented", d->name);
    resp_error(&b, msg);
    fe_reply_ready_buf(c, &b);
    buf_free(&b);
    return 0;
}

int fe_multi_queue(fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a)
{
    return fe_multi_command(c, d, a);
}

void fe_multi_flag_error(fe_conn_t *c)
{
    (void)c;
}

void fe_multi_clear(fe_conn_t *c)
{
    (void)c;
}
