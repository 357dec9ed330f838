/*
 * t_stream_claim.c - the store's XCLAIM and XAUTOCLAIM (D46): pending
 * entries of a consumer group given to another consumer. Store process
 * only; a type handler (calls core/sgroup.c, called by route.c) following
 * route.c's determinism rules: "now" is the record's apply clock
 * (ctx->now, D14), so idle times, delivery times and which entries are
 * idle enough come out the same on replay.
 *
 * Both are writes whose records hold the user's arguments unchanged;
 * every check is made here, in Redis 7.0.15's order, and a refused
 * record changes nothing. Neither is a WATCHed change (Redis signals
 * none); the consumer, made when the first entry is claimed, sends
 * "xgroup-createconsumer", as Redis.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "handlers.h"
#include "pubsub.h"
#include "resp.h"
#include "store/core/entry.h"
#include "store/core/notify.h"
#include "store/core/object.h"
#include "store/core/sgroup.h"
#include "store/core/stream.h"
#include "stream_ids.h"
#include "strutil.h"

static void reply_error(buf_t *r, const char *e)
{
    if (r) resp_error(r, e);
}

/* The group of key (the stream's type checked first), or NULL with
 * "-NOGROUP No such key 'k' or consumer group 'g'" replied. *s is set. */
static st_sgroup_t *claim_group(store_ctx_t *ctx, const apply_args_t *a, st_stream_t **s, buf_t *r,
                                int *wrong)
{
    idx_entry_t **slot = st_find_live(a->db, &a->argv[0], ctx->now, 1);
    *wrong = st_wrongtype(slot, ST_STREAM, r);
    if (*wrong) return NULL;
    *s = slot ? st_ent_stream(*slot) : NULL;
    st_sgroup_t *g = *s ? sg_find(st_stream_groups(*s), a->argv[1].ptr, a->argv[1].len) : NULL;
    if (!g && r) {
        char msg[600];
        int kl = a->argv[0].len < 256 ? (int)a->argv[0].len : 256;
        int gl = a->argv[1].len < 256 ? (int)a->argv[1].len : 256;
        snprintf(msg, sizeof(msg), "NOGROUP No such key '%.*s' or consumer group '%.*s'", kl,
                 (const char *)a->argv[0].ptr, gl, (const char *)a->argv[1].ptr);
        for (char *p = msg; *p; p++)
            if (*p == '\r' || *p == '\n') *p = ' ';
        resp_error(r, msg);
    }
    return g;
}

/* What a claim does with each entry (shared by both commands). */
typedef struct claim {
    store_ctx_t *ctx;
    const apply_args_t *a;
    st_stream_t *s;
    st_sgroup_t *g;
    st_sconsumer_t *to; /* made at the first entry claimed */
    int justid;
} claim_t;

/* Pending entry i of the group goes to the claiming consumer, delivered
 * at delivered; its count is retries when >= 0, else one more unless
 * JUSTID. Its reply (ID, or the entry) into r. */
static void claim_one(claim_t *cl, uint64_t i, int64_t delivered, long long retries, buf_t *r)
{
    st_sgroup_t *g = cl->g;
    if (!cl->to) {
        const rec_arg_t *name = &cl->a->argv[2];
        cl->to = sg_consumer(g, name->ptr, name->len);
        if (!cl->to) {
            uint64_t before = st_stream_bytes(cl->s);
            cl->to = sg_consumer_add(g, name->ptr, name->len, cl->ctx->now);
            cl->ctx->entry_bytes += st_stream_bytes(cl->s) - before;
            st_notify_note(cl->ctx, cl->a->dbnum, &cl->a->argv[0], PS_NOTIFY_STREAM,
                           "xgroup-createconsumer");
        }
        cl->to->seen = cl->ctx->now;
    }
    st_spending_t *p = &g->pel[i];
    p->owner = cl->to;
    p->delivered = delivered;
    if (retries >= 0)
        p->count = (uint64_t)retries;
    else if (!cl->justid)
        p->count++;
    if (!r) return;
    if (cl->justid)
        st_reply_sid(r, p->id);
    else
        st_reply_entry(r, st_entry_of(cl->s, p->id));
}

/* Remove pending entry i, whose stream entry is gone. */
static void drop_pending(claim_t *cl, uint64_t i)
{
    uint64_t before = st_stream_bytes(cl->s);
    sg_pel_remove(cl->g, i);
    cl->ctx->entry_bytes -= before - st_stream_bytes(cl->s);
}

/* XCLAIM's options after its IDs, from argument j on: 0, or -1 with the
 * error replied. */
typedef struct xclaim_opts {
    int force, justid;
    int64_t delivered; /* -1: neither IDLE nor TIME */
    long long retries; /* -1: no RETRYCOUNT */
    st_sid_t lastid;
} xclaim_opts_t;

static int xclaim_options(store_ctx_t *ctx, const apply_args_t *a, uint16_t j, xclaim_opts_t *o,
                          buf_t *r)
{
    *o = (xclaim_opts_t){0, 0, -1, -1, {0, 0}};
    for (; j < a->argc; j++) {
        const rec_arg_t *x = &a->argv[j];
        int more = a->argc - 1 - j;
        long long v;
        if (st_arg_is(x, "FORCE")) {
            o->force = 1;
        } else if (st_arg_is(x, "JUSTID")) {
            o->justid = 1;
        } else if ((st_arg_is(x, "IDLE") || st_arg_is(x, "TIME")) && more) {
            int idle = st_arg_is(x, "IDLE");
            j++;
            if (str_to_ll((const char *)a->argv[j].ptr, a->argv[j].len, &v)) {
                reply_error(r, idle ? "ERR Invalid IDLE option argument for XCLAIM"
                                    : "ERR Invalid TIME option argument for XCLAIM");
                return -1;
            }
            /* Wrapping as Redis' mstime_t arithmetic does; a result out of
             * [0, now] becomes now below. */
            o->delivered = idle ? (int64_t)((uint64_t)ctx->now - (uint64_t)v) : v;
        } else if (st_arg_is(x, "RETRYCOUNT") && more) {
            j++;
            if (str_to_ll((const char *)a->argv[j].ptr, a->argv[j].len, &o->retries)) {
                reply_error(r, "ERR Invalid RETRYCOUNT option argument for XCLAIM");
                return -1;
            }
        } else if (st_arg_is(x, "LASTID") && more) {
            j++;
            if (st_parse_sid(&a->argv[j], 1, 0, &o->lastid)) {
                reply_error(r, SID_ERR_INVALID);
                return -1;
            }
        } else {
            if (r) {
                char msg[300];
                int n = x->len < 128 ? (int)x->len : 128;
                snprintf(msg, sizeof(msg), "ERR Unrecognized XCLAIM option '%.*s'", n,
                         (const char *)x->ptr);
                for (char *p = msg; *p; p++)
                    if (*p == '\r' || *p == '\n') *p = ' ';
                resp_error(r, msg);
            }
            return -1;
        }
    }
    return 0;
}

/* CMD_XCLAIM key group consumer min-idle-time id... [IDLE ms] [TIME ms]
 * [RETRYCOUNT n] [FORCE] [JUSTID] [LASTID id]: the key and group first,
 * then min-idle, then the IDs (as many as parse; the rest are options),
 * all before anything changes. An ID whose entry is gone leaves the PEL
 * and is not answered; FORCE makes an entry that exists pending. A
 * delivery time past now, or before 0, is now (Redis). */
void st_apply_xclaim(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    st_stream_t *s;
    int wrong;
    st_sgroup_t *g = claim_group(ctx, a, &s, r, &wrong);
    if (!g) return;
    long long minidle;
    if (str_to_ll((const char *)a->argv[3].ptr, a->argv[3].len, &minidle)) {
        reply_error(r, "ERR Invalid min-idle-time argument for XCLAIM");
        return;
    }
    if (minidle < 0) minidle = 0;
    uint16_t j = 4;
    st_sid_t id;
    while (j < a->argc && st_parse_sid(&a->argv[j], 1, 0, &id) == 0)
        j++;
    uint16_t ids_end = j;
    xclaim_opts_t o;
    if (xclaim_options(ctx, a, j, &o, r)) return;
    if (st_sid_cmp(o.lastid, g->last_id) > 0) g->last_id = o.lastid;
    int64_t delivered = o.delivered;
    if (delivered < 0 || delivered > ctx->now) delivered = ctx->now;
    claim_t cl = {ctx, a, s, g, NULL, o.justid};
    buf_t body;
    buf_init(&body);
    long long n = 0;
    for (j = 4; j < ids_end; j++) {
        st_parse_sid(&a->argv[j], 1, 0, &id);
        uint64_t i = sg_pel_lower(g, id);
        int pending = i < g->npel && st_sid_cmp(g->pel[i].id, id) == 0;
        if (!st_entry_of(s, id)) {
            if (pending) drop_pending(&cl, i);
            continue;
        }
        if (!pending && !o.force) continue;
        if (!pending) {
            /* A FORCEd entry has no owner yet: min-idle does not apply. */
            uint64_t before = st_stream_bytes(s);
            sg_pel_add(g, id, NULL, ctx->now); /* one delivery, as Redis' new NACK */
            ctx->entry_bytes += st_stream_bytes(s) - before;
        } else if (minidle && ctx->now - g->pel[i].delivered < minidle) {
            continue;
        }
        claim_one(&cl, i, delivered, o.retries, r ? &body : NULL);
        n++;
    }
    if (r) {
        resp_array(r, n);
        buf_append(r, body.data, body.len);
    }
    buf_free(&body);
}

/* CMD_XAUTOCLAIM key group consumer min-idle-time start [COUNT n]
 * [JUSTID]: the arguments are checked before the key (Redis' order).
 * Walks the PEL from start, at most COUNT * 10 entries looked at, until
 * COUNT entries are claimed or found deleted (those leave the PEL and are
 * the reply's third element); the first is the next entry to look at, or
 * 0-0 at the end. */
void st_apply_xautoclaim(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    long long minidle, count = 100;
    if (str_to_ll((const char *)a->argv[3].ptr, a->argv[3].len, &minidle)) {
        reply_error(r, "ERR Invalid min-idle-time argument for XAUTOCLAIM");
        return;
    }
    if (minidle < 0) minidle = 0;
    st_sid_t start;
    buf_t scratch; /* st_parse_bound replies into a buffer */
    buf_init(&scratch);
    int bad = st_parse_bound(&a->argv[4], 0, 1, &start, &scratch);
    if (bad && r) buf_append(r, scratch.data, scratch.len);
    buf_free(&scratch);
    if (bad) return;
    int justid = 0;
    for (uint16_t j = 5; j < a->argc; j++) {
        if (st_arg_is(&a->argv[j], "COUNT") && j + 1 < a->argc) {
            j++;
            if (str_to_ll((const char *)a->argv[j].ptr, a->argv[j].len, &count) || count < 1 ||
                count > INT64_MAX / 16) {
                reply_error(r, "ERR COUNT must be > 0");
                return;
            }
        } else if (st_arg_is(&a->argv[j], "JUSTID")) {
            justid = 1;
        } else {
            reply_error(r, "ERR syntax error");
            return;
        }
    }
    st_stream_t *s;
    int wrong;
    st_sgroup_t *g = claim_group(ctx, a, &s, r, &wrong);
    if (!g) return;
    claim_t cl = {ctx, a, s, g, NULL, justid};
    buf_t body, gone;
    buf_init(&body);
    buf_init(&gone);
    long long claimed = 0, deleted = 0, attempts = count * 10;
    uint64_t i = sg_pel_lower(g, start);
    for (; attempts-- && count && i < g->npel;) {
        st_spending_t *p = &g->pel[i];
        if (!st_entry_of(s, p->id)) {
            st_reply_sid(&gone, p->id);
            drop_pending(&cl, i);
            deleted++;
            count--;
            continue;
        }
        if (minidle && ctx->now - p->delivered < minidle) {
            i++;
            continue;
        }
        claim_one(&cl, i, ctx->now, -1, r ? &body : NULL);
        claimed++;
        count--;
        i++;
    }
    if (r) {
        resp_array(r, 3);
        st_reply_sid(r, i < g->npel ? g->pel[i].id : (st_sid_t){0, 0});
        resp_array(r, claimed);
        buf_append(r, body.data, body.len);
        resp_array(r, deleted);
        buf_append(r, gone.data, gone.len);
    }
    buf_free(&body);
    buf_free(&gone);
}
