/*
 * stream_ids.h - what the stream command files (t_stream.c,
 * t_stream_group.c) share: an ID argument's parse and an ID's reply.
 */
#ifndef ATTIC_STORE_STREAM_IDS_H
#define ATTIC_STORE_STREAM_IDS_H

#include <stdint.h>

#include "handlers.h"
#include "resp.h"
#include "store/core/stream.h"
#include "streamid.h"

#define SID_MAX ((st_sid_t){UINT64_MAX, UINT64_MAX})

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
 * Returns 0, or -1 with the error replied. Inline here, so that neither
 * command file calls into the other (tests/dep_graph.sh). */
static inline int st_parse_bound(const rec_arg_t *x, uint64_t missing_seq, int start, st_sid_t *id,
                                 buf_t *r)
{
    int ex = x->len > 1 && x->ptr[0] == '(';
    rec_arg_t y = ex ? (rec_arg_t){x->ptr + 1, x->len - 1} : *x;
    if (st_parse_sid(&y, ex, missing_seq, id)) {
        resp_error(r, SID_ERR_INVALID);
        return -1;
    }
    if (!ex) return 0;
    if (start) {
        if (st_sid_cmp(*id, SID_MAX) == 0) {
            resp_error(r, "ERR invalid start ID for the interval");
            return -1;
        }
        *id = id->seq == UINT64_MAX ? (st_sid_t){id->ms + 1, 0} : (st_sid_t){id->ms, id->seq + 1};
    } else {
        if (id->ms == 0 && id->seq == 0) {
            resp_error(r, "ERR invalid end ID for the interval");
            return -1;
        }
        *id = id->seq == 0 ? (st_sid_t){id->ms - 1, UINT64_MAX} : (st_sid_t){id->ms, id->seq - 1};
    }
    return 0;
}

/* XINFO GROUPS key, XINFO CONSUMERS key group (argv[0] is the
 * subcommand; the arity is checked): t_stream_group.c. */
void st_xinfo_groups(const read_args_t *a, buf_t *r);
void st_xinfo_consumers(const read_args_t *a, buf_t *r);
/* XINFO STREAM FULL's "groups" value (at most count pending entries per
 * list; 0: all). */
void st_xinfo_full_groups(buf_t *r, int proto, st_stream_t *s, uint64_t count);

#endif
