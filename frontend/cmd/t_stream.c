/*
 * t_stream.c - canonical encoding of the stream writes (encode.h), in a
 * frontend process: XADD, XTRIM, XDEL, XSETID. Their records hold the
 * user's arguments unchanged (an ID of "*" included: the store resolves
 * it with the record's apply clock, D39). XADD's and XTRIM's options are
 * checked here with the parser the store uses (common/streamid.c), so bad
 * input is refused before the ring; what Redis checks after looking the
 * key up (XDEL's IDs, XSETID's against the stream) is the store's.
 */
#include "frontend/cmd/encode.h"
#include "frontend/core/core.h"
#include "streamid.h"

/* XADD key [NOMKSTREAM] [MAXLEN|MINID [=|~] threshold [LIMIT n]] *|id
 * field value [field value ...]; XTRIM key MAXLEN|MINID ... */
int fe_enc_xadd(const fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a, fe_enc_t *e)
{
    (void)c;
    int xadd = d->id == CMD_XADD;
    sid_trim_args_t o;
    const char *err;
    if (sid_trim_parse(a->argc - 1, a->argv + 1, a->lens + 1, xadd, &o, &err))
        return fe_enc_fail(e, "%s", err);
    if (xadd && o.id_given && o.seq_given && o.id_ms == 0 && o.id_seq == 0)
        return fe_enc_fail(e, "ERR The ID specified in XADD must be greater than 0-0");
    fe_enc_plain(e, xadd ? CMD_XADD : CMD_XTRIM, 1, a);
    return 0;
}

/* XDEL key id [id ...], XSETID key last-id [options], XGROUP sub key
 * group ... (D42: every check of XGROUP is the store's, in Redis' order). */
int fe_enc_xplain(const fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a, fe_enc_t *e)
{
    (void)c;
    fe_enc_plain(e, d->id, 1, a);
    return 0;
}
