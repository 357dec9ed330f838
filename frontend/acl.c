/*
 * acl.c - who may run what: AUTH state and ACL users.
 * (Placeholder until issue 5's AUTH and ACL land: everything is allowed.)
 */
#include "fe-internal.h"

int fe_acl_check(fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a, buf_t *err)
{
    (void)c;
    (void)d;
    (void)a;
    (void)err;
    return 0;
}
