/*
 * stream_ids.h - what the stream command files (t_stream.c,
 * t_stream_group.c) share: an ID argument's parse and an ID's reply.
 */
#ifndef ATTIC_STORE_STREAM_IDS_H
#define ATTIC_STORE_STREAM_IDS_H

#include "handlers.h"
#include "resp.h"
#include "store/core/stream.h"
#include "streamid.h"

static inline int st_parse_sid(const rec_arg_t *x, int strict, uint64_t missing_seq, st_sid_t *id)
{
    return sid_parse((const char *)x->ptr, x->len, strict, missing_seq, &id->ms, &id->seq, NULL);
}

static inline void st_reply_sid(buf_t *r, st_sid_t id)
{
    char t[SID_TEXT_MAX];
    resp_bulk(r, t, (size_t)sid_format(t, id.ms, id.seq));
}

/* An interval bound of XRANGE (and XPENDING): "(" makes it exclusive.
 * Returns 0, or -1 with the error replied (t_stream.c). */
int st_parse_bound(const rec_arg_t *x, uint64_t missing_seq, int start, st_sid_t *id, buf_t *r);

/* XINFO GROUPS key, XINFO CONSUMERS key group (argv[0] is the
 * subcommand; the arity is checked): t_stream_group.c. */
void st_xinfo_groups(const read_args_t *a, buf_t *r);
void st_xinfo_consumers(const read_args_t *a, buf_t *r);
/* XINFO STREAM FULL's "groups" value (at most count pending entries per
 * list; 0: all). */
void st_xinfo_full_groups(buf_t *r, int proto, st_stream_t *s, uint64_t count);

#endif
