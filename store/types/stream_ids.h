/*
 * stream_ids.h - what the stream command files (t_stream.c,
 * t_stream_group.c) share: an ID argument's parse and an ID's reply.
 */
#ifndef ATTIC_STORE_STREAM_IDS_H
#define ATTIC_STORE_STREAM_IDS_H

#include <stdint.h>
#include <stdlib.h>

#include "handlers.h"
#include "resp.h"
#include "store/core/alloc.h"
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

/* The ID right after id (Redis' streamIncrID: the largest wraps to 0-0). */
static inline st_sid_t st_sid_after(st_sid_t id)
{
    if (id.seq < UINT64_MAX) return (st_sid_t){id.ms, id.seq + 1};
    return id.ms < UINT64_MAX ? (st_sid_t){id.ms + 1, 0} : (st_sid_t){0, 0};
}

/* The entry of ID id in s, or NULL. */
static inline const st_sentry_t *st_entry_of(st_stream_t *s, st_sid_t id)
{
    uint64_t at = st_stream_lower(s, id);
    return at < st_stream_len(s) && st_sid_cmp(st_stream_id_at(s, at), id) == 0
               ? st_stream_at(s, at)
               : NULL;
}

/* [id, [field, value, ...]] */
static inline void st_reply_entry(buf_t *r, const st_sentry_t *e)
{
    st_sentry_reply(r, e);
}

/* The head of a blocked reader's reply, one stream served (XREAD and
 * XREADGROUP BLOCK, D46): [[key, ...]], or RESP3's {key: ...}; the
 * entries follow. */
static inline void st_reply_served_key(buf_t *r, int proto, const rec_arg_t *key)
{
    if (proto == 3) {
        resp_map(r, 3, 1);
    } else {
        resp_array(r, 1);
        resp_array(r, 2);
    }
    resp_bulk(r, key->ptr, key->len);
}

/* The record's arguments as the pointer and length arrays streamid.c
 * takes (free both with free()). */
static inline void st_args_arrays(const rec_arg_t *argv, uint16_t argc, const char ***p,
                                  uint32_t **n)
{
    *p = st_xmalloc(sizeof(**p) * (argc ? argc : 1));
    *n = st_xmalloc(sizeof(**n) * (argc ? argc : 1));
    for (uint16_t i = 0; i < argc; i++) {
        (*p)[i] = (const char *)argv[i].ptr;
        (*n)[i] = argv[i].len;
    }
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
