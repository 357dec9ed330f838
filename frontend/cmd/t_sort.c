/*
 * t_sort.c - canonical encoding of SORT ... STORE (encode.h, D47), in a
 * frontend process. SORT without STORE never comes here: it runs as
 * SORT_RO, a read (common/command.h, cmd_runs_as).
 *
 * The record is the user's words from the key on, checked first with the
 * parser the store uses (common/sort.h), so a refused SORT (syntax, LIMIT
 * not an integer, BY/GET patterns in cluster mode) is answered here and
 * never logged (contract 7). What depends on the data (WRONGTYPE, scores
 * that are not numbers) is the store's, when it applies the record.
 */
#include <stdlib.h>

#include "frontend/cmd/encode.h"
#include "frontend/core/core.h"
#include "sort.h"

/* SORT key [BY pattern] [LIMIT offset count] [GET pattern ...] [ASC|DESC]
 * [ALPHA] STORE destination. */
int fe_enc_sort(const fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a, fe_enc_t *e)
{
    (void)d;
    int n = a->argc - 1;
    rec_arg_t *words = malloc((size_t)n * sizeof(*words));
    if (!words) abort();
    for (int i = 0; i < n; i++)
        words[i] = (rec_arg_t){(const unsigned char *)a->argv[i + 1], a->lens[i + 1]};
    sort_spec_t s;
    const char *err = sort_parse(words, n, c->fe->cluster ? SORT_CLUSTER : 0, &s);
    free(words);
    if (err) return fe_enc_fail(e, "%s", err);
    int store = s.store;
    sort_spec_free(&s);
    if (!store)
        return fe_enc_fail(e, "ERR syntax error"); /* cmd_runs_as sends those to the store */
    fe_enc_begin(e, CMD_SORT, 1);
    fe_enc_tail(e, a, 1);
    return 0;
}
