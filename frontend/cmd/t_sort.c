/*
 * t_sort.c - SORT and SORT_RO in a frontend process (D47): the check of
 * their words, and the canonical encoding of SORT ... STORE (encode.h).
 * SORT without STORE runs as SORT_RO, a read (common/command.h,
 * cmd_runs_as); the store answers it.
 *
 * Both forms are checked here with the parser the store uses
 * (common/sort.h), given what only a frontend knows: cluster mode and
 * whether the user may read every key (BY and GET patterns name keys no
 * ACL check saw, so Redis refuses them to users with key patterns). A
 * refused SORT is answered here and reaches neither the log nor the store
 * (contract 7); the store parses the words again and answers what depends
 * on the data (WRONGTYPE, scores that are not numbers). The record of
 * SORT ... STORE is the user's words from the key on.
 */
#include <stdlib.h>

#include "frontend/cmd/cmd.h"
#include "frontend/cmd/encode.h"
#include "frontend/core/core.h"
#include "sort.h"

const char *fe_sort_refused(fe_conn_t *c, const cmd_desc_t *run, const fe_args_t *a)
{
    unsigned flags = run->id == CMD_SORT_RO ? SORT_READONLY : 0;
    if (c->fe->cluster) flags |= SORT_CLUSTER;
    if (c->fe->cmd_hooks && c->fe->cmd_hooks->all_keys && !c->fe->cmd_hooks->all_keys(c))
        flags |= SORT_KEYS_ACL;
    int n = a->argc - 1;
    rec_arg_t *words = malloc((size_t)(n > 0 ? n : 1) * sizeof(*words));
    if (!words) abort();
    for (int i = 0; i < n; i++)
        words[i] = (rec_arg_t){(const unsigned char *)a->argv[i + 1], a->lens[i + 1]};
    sort_spec_t s;
    const char *err = sort_parse(words, n, flags, &s);
    free(words);
    if (err) return err;
    int store = s.store;
    sort_spec_free(&s);
    /* cmd_runs_as sends a line without STORE to the store as a read. */
    return run->id == CMD_SORT && !store ? "ERR syntax error" : NULL;
}

/* SORT key [BY pattern] [LIMIT offset count] [GET pattern ...] [ASC|DESC]
 * [ALPHA] STORE destination. */
int fe_enc_sort(const fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a, fe_enc_t *e)
{
    const char *err = fe_sort_refused((fe_conn_t *)c, d, a);
    if (err) return fe_enc_fail(e, "%s", err);
    fe_enc_begin(e, CMD_SORT, 1);
    fe_enc_tail(e, a, 1);
    return 0;
}
