/*
 * bigreply.c - a large value's reply in parts, asked for one at a time, in
 * a frontend process (D48).
 *
 * A GET or GETRANGE of a value of ST_STREAM_MIN bytes or more, and a
 * GETDEL, GETEX or SET ... GET of one outside MULTI (a write's reply: its
 * id an LSN, its requests flagged STORE_REQ_WRITE; its first part is
 * answered as any write reply, conn.c), is answered
 * by the store in parts of at most 1 MB (common/shm.h, STORE_REPLY_PAUSE):
 * it keeps a snapshot of the value's byte runs (no copy of its bytes) and
 * sends the next part only when this frontend asks. The entry stays at
 * the head of its connection's replies (FE_PAUSED) while its parts go out,
 * and the next part is asked for once less than FE_BIGREPLY_LOW bytes of
 * the connection's output are unsent: each such reply holds at most that
 * plus one part here, whatever the value's size, and a slow client slows
 * only its own reply. A client that leaves gets its reply dropped
 * (STORE_REQ_DROP); a frontend that dies has its replies dropped by the
 * store. A store that dies mid-reply answers the next request with
 * STORE_REPLY_LOST, and the client, which has part of a bulk, is
 * disconnected (the bytes it would get next could be of a later value).
 */
#include <stdlib.h>
#include <string.h>

#include "frontend/core/core.h"
#include "log.h"

#define FE_BIGREPLY_LOW (2u << 20)

/* Put a STORE_REQ_NEXT or STORE_REQ_DROP for (id, token) in the request
 * channel: 0, or -1 when it is full. */
static int put_request(fe_t *fe, uint32_t what, uint8_t kind, uint64_t id, uint64_t token)
{
    unsigned char *dst = chan_reserve(fe->to_store, sizeof(store_req_t));
    if (!dst) {
        fe_wake_store(fe);
        return -1;
    }
    store_req_t req = {.id = id,
                       .min_lsn = 0,
                       .payload_len = 0,
                       .db = (uint32_t)token,
                       .proto = (uint32_t)(token >> 32),
                       .reserved = what | (kind == STORE_REPLY_WRITE ? STORE_REQ_WRITE : 0)};
    memcpy(dst, &req, sizeof(req));
    chan_publish(fe->to_store);
    fe_wake_store(fe);
    return 0;
}

static void drop(fe_t *fe, uint8_t kind, uint64_t id, uint64_t token)
{
    if (put_request(fe, STORE_REQ_DROP, kind, id, token) == 0) return;
    if (fe->nbigreply_owed < FE_BIG_OWED_MAX) {
        fe->bigreply_owed_kind[fe->nbigreply_owed] = kind;
        fe->bigreply_owed[fe->nbigreply_owed][0] = id;
        fe->bigreply_owed[fe->nbigreply_owed++][1] = token;
    }
    /* Else the store keeps it until this frontend is gone. */
}

void fe_bigreply_drop(fe_t *fe, const fe_reply_t *r)
{
    if (r->big_token && r->big_more) drop(fe, r->kind, r->id, r->big_token);
}

int fe_bigreply_part(fe_t *fe, fe_reply_t *r, const store_reply_t *h, const char *body,
                     uint32_t len)
{
    fe_map_take(fe, r->kind, r->id);
    int first = !r->big_token;
    fe_conn_t *c = r->conn;
    /* A part out of order (CONT first, or a reply started over by a store
     * that applied the write again) is a reply cut short too. */
    int cont = (h->kind & STORE_REPLY_CONT) != 0;
    if ((h->kind & STORE_REPLY_LOST) || len < 8 || first == cont) {
        fe->nwaiting--;
        /* Part of a bulk is out: nothing can follow it but the close. */
        r->big_token = 0;
        r->big_more = 0;
        if (!c) {
            fe_reply_free(fe, r);
            return 0;
        }
        log_info("A large value's reply was cut short (the store restarted): closing its client");
        r->state = FE_PAUSED;
        return -1; /* the caller closes c */
    }
    uint64_t token;
    memcpy(&token, body, 8);
    body += 8;
    len -= 8;
    r->big_token = token;
    r->big_more = (h->kind & STORE_REPLY_PAUSE) != 0;
    if (!first || !c) fe->nwaiting--; /* else the caller's, as for any reply */
    if (!c) {
        fe_bigreply_drop(fe, r);
        fe_reply_free(fe, r);
        return 0;
    }
    if (!first && c->head == r) {
        /* A later part (asked for at the head): straight to the output,
         * after what is sent of it is dropped (the socket may never be
         * drained whole while a large reply flows). */
        if (c->out_off >= FE_BIGREPLY_LOW / 2) {
            size_t left = c->out.len - c->out_off;
            memmove(c->out.data, c->out.data + c->out_off, left);
            c->out.len = left;
            c->out_off = 0;
        }
        if (!r->discard) buf_append(&c->out, body, len);
        r->state = r->big_more ? FE_PAUSED : FE_READY;
        r->data = "";
        r->len = 0;
        r->owns_data = 0;
        return 0;
    }
    char *copy = malloc(len ? len : 1);
    if (!copy) abort();
    memcpy(copy, body, len);
    r->data = copy;
    r->len = len;
    r->owns_data = 1;
    r->state = FE_READY;
    return first;
}

void fe_bigreply_orphan(fe_t *fe, const store_reply_t *h, const char *body, uint32_t len)
{
    uint64_t token;
    if (!(h->kind & STORE_REPLY_PAUSE) || len < 8) return;
    memcpy(&token, body, 8);
    drop(fe, (uint8_t)STORE_REPLY_KIND(h->kind), h->id, token);
}

void fe_bigreply_pull(fe_conn_t *c)
{
    fe_t *fe = c->fe;
    fe_reply_t *r = c->head;
    if (!r || r->state != FE_PAUSED || !r->big_token || c->out.len - c->out_off >= FE_BIGREPLY_LOW)
        return;
    if (put_request(fe, STORE_REQ_NEXT, r->kind, r->id, r->big_token)) {
        fe->bigreply_retry = 1;
        return;
    }
    fe_wait_store(fe, r, r->kind, r->id);
}

void fe_bigreply_tick(fe_t *fe)
{
    while (fe->nbigreply_owed &&
           put_request(fe, STORE_REQ_DROP, fe->bigreply_owed_kind[fe->nbigreply_owed - 1],
                       fe->bigreply_owed[fe->nbigreply_owed - 1][0],
                       fe->bigreply_owed[fe->nbigreply_owed - 1][1]) == 0)
        fe->nbigreply_owed--;
    if (!fe->bigreply_retry) return;
    fe->bigreply_retry = 0;
    for (fe_conn_t *c = fe->conns; c; c = c->next)
        fe_bigreply_pull(c);
}
