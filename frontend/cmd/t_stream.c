/*
 * t_stream.c - canonical encoding of the stream writes (encode.h), in a
 * frontend process: XADD, XTRIM, XDEL, XSETID, XGROUP, XACK, XCLAIM,
 * XAUTOCLAIM and XREADGROUP. Their records hold the
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

/* The record of XREADGROUP (group set: CMD_XREADGROUP, waiter kind 6,
 * ST_BLOCK_STREAM_GROUP) or of XREAD with BLOCK (CMD_XREADBLOCK, kind 7,
 * ST_BLOCK_STREAM_READ), D46: the options are checked here, as Redis
 * checks them before any key is looked up (the keys, groups and IDs are
 * the store's); a blocking record (client, protocol, two unused words and
 * the waiter's kind, as CMD_BLPOP's) followed by the user's words. With
 * BLOCK the client may wait for the store's reply (block.c), 0 ms or a
 * deadline past the clock's range meaning forever. */
static int enc_stream_read(const fe_conn_t *c, const fe_args_t *a, fe_enc_t *e, int group)
{
    sid_xread_args_t o;
    const char *err;
    if (sid_xread_parse(a->argc - 1, a->argv + 1, a->lens + 1, group, &o, &err))
        return fe_enc_fail(e, "%s", err);
    fe_enc_block_head(c, e, group ? CMD_XREADGROUP : CMD_XREADBLOCK, 0, group ? 6 : 7, 0);
    fe_enc_tail(e, a, 1);
    if (o.block_ms >= 0) {
        e->blocks = 1;
        e->block_ms = o.block_ms > INT64_MAX - shm_now_ms() ? 0 : o.block_ms;
    }
    return 0;
}

/* XREADGROUP GROUP g c [COUNT n] [BLOCK ms] [NOACK] STREAMS key... id... */
int fe_enc_xreadgroup(const fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a, fe_enc_t *e)
{
    (void)d;
    return enc_stream_read(c, a, e, 1);
}

int fe_xread_blocks(const fe_args_t *a)
{
    sid_xread_args_t o;
    const char *err;
    return sid_xread_parse(a->argc - 1, a->argv + 1, a->lens + 1, 0, &o, &err) == 0 &&
           o.block_ms >= 0;
}

/* XREAD ... BLOCK ms ...: the store answers it at once or queues the
 * client. */
int fe_enc_xreadblock(const fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a, fe_enc_t *e)
{
    (void)d;
    return enc_stream_read(c, a, e, 0);
}
