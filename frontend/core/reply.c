/*
 * reply.c - each connection's replies in request order, in a frontend
 * process: the entries of its FIFO, the map of entries waiting for the
 * store, and the wake-ups of the logger and the store.
 *
 * Every request gets an entry in its connection's FIFO, and bytes go to the
 * socket only from the FIFO's head (fe_conn_collect), so replies leave in
 * request order even though they become ready out of order (a GET answered
 * by the store can be ready before an earlier SET is durable). An entry is
 * ready at once (fe_reply_ready_*), waits for durable_lsn to cover its
 * record (fe_wait_durable, writes whose reply is fixed) or for the store's
 * reply (fe_wait_store, found again by (kind, id) in the map). conn.c
 * resolves the waiting ones. A crash here is a frontend's crash: its
 * clients lose their connection, nothing acked is lost (contract 5).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/core/core.h"
#include "log.h"

static const char REPLY_OK[] = "+OK\r\n";

#define FE_ADOPT_MIN (1u << 20)

/* ---- reply entries ---- */

static fe_reply_t *reply_alloc(fe_t *fe)
{
    fe_reply_t *r = fe->free_replies;
    if (r)
        fe->free_replies = r->next;
    else if (!(r = malloc(sizeof(*r)))) {
        log_warn("out of memory");
        abort();
    }
    memset(r, 0, sizeof(*r));
    return r;
}

void fe_reply_free(fe_t *fe, fe_reply_t *r)
{
    if (r->owns_data) free((void *)r->data);
    if (r->parts) {
        buf_free(r->parts);
        free(r->parts);
    }
    r->next = fe->free_replies;
    fe->free_replies = r;
}

static void wlist_add(fe_conn_t *c)
{
    if (c->in_wlist) return;
    fe_t *fe = c->fe;
    c->wprev = NULL;
    c->wnext = fe->wlist;
    if (fe->wlist) fe->wlist->wprev = c;
    fe->wlist = c;
    c->in_wlist = 1;
}

void fe_wlist_del(fe_conn_t *c)
{
    if (!c->in_wlist) return;
    if (c->wprev)
        c->wprev->wnext = c->wnext;
    else
        c->fe->wlist = c->wnext;
    if (c->wnext) c->wnext->wprev = c->wprev;
    c->in_wlist = 0;
}

fe_reply_t *fe_reply_push(fe_conn_t *c)
{
    fe_reply_t *r = reply_alloc(c->fe);
    r->conn = c;
    r->discard = c->reply_suppress;
    if (c->tail)
        c->tail->next = r;
    else
        c->head = r;
    c->tail = r;
    c->npending++;
    return r;
}

fe_reply_t *fe_reply_detached(fe_conn_t *c)
{
    fe_reply_t *r = reply_alloc(c->fe);
    r->conn = c;
    r->detached = 1;
    return r;
}

void fe_reply_ready_static(fe_conn_t *c, const char *s, size_t n)
{
    if (!c->head) {
        if (!c->reply_suppress) buf_append(&c->out, s, n);
        return;
    }
    fe_reply_t *r = fe_reply_push(c);
    r->state = FE_READY;
    r->data = s;
    r->len = (uint32_t)n;
}

void fe_reply_ready_buf(fe_conn_t *c, buf_t *b)
{
    if (!c->head) {
        if (!c->reply_suppress) buf_append(&c->out, b->data, b->len);
    } else {
        fe_reply_t *r = fe_reply_push(c);
        char *copy = malloc(b->len ? b->len : 1);
        if (!copy) abort();
        memcpy(copy, b->data, b->len);
        r->state = FE_READY;
        r->data = copy;
        r->len = (uint32_t)b->len;
        r->owns_data = 1;
    }
    buf_reset(b);
}

static size_t map_bucket(uint8_t kind, uint64_t id)
{
    uint64_t h = (id * 2 + kind) * 0x9E3779B97F4A7C15ull;
    return (size_t)(h >> 48) & (FE_MAP_BUCKETS - 1);
}

void fe_wait_store(fe_t *fe, fe_reply_t *r, uint8_t kind, uint64_t id)
{
    r->state = FE_WAIT_STORE;
    r->kind = kind;
    r->id = id;
    size_t b = map_bucket(kind, id);
    r->hash_next = fe->map[b];
    fe->map[b] = r;
    fe->nwaiting++;
    if (kind == FE_KIND_HELD) {
        fe->nheld++;
        fe_want_durable(fe);
    }
    wlist_add(r->conn);
}

void fe_wait_durable(fe_t *fe, fe_reply_t *r, uint64_t lsn_end)
{
    /* r is the newest entry of its connection (just pushed): the cursor
     * only needs setting when no older write waits. */
    if (!r->conn->wait_durable) r->conn->wait_durable = r;
    r->state = FE_WAIT_DURABLE;
    r->is_write = 1;
    r->lsn_end = lsn_end;
    r->data = REPLY_OK;
    r->len = sizeof(REPLY_OK) - 1;
    fe->nwaiting++;
    fe_want_durable(fe);
    wlist_add(r->conn);
}

fe_reply_t *fe_map_take(fe_t *fe, uint8_t kind, uint64_t id)
{
    fe_reply_t **pp = &fe->map[map_bucket(kind, id)];
    for (fe_reply_t *r = *pp; r; pp = &r->hash_next, r = r->hash_next) {
        if (r->id == id && r->kind == kind) {
            *pp = r->hash_next;
            return r;
        }
    }
    return NULL;
}

fe_reply_t *fe_map_find(fe_t *fe, uint8_t kind, uint64_t id)
{
    for (fe_reply_t *r = fe->map[map_bucket(kind, id)]; r; r = r->hash_next)
        if (r->id == id && r->kind == kind) return r;
    return NULL;
}

/* A part of a reply that comes in parts (shm.h): kept with its entry until
 * the last one. Returns 1 when the reply is complete, with *p and *n set to
 * the whole of it (in r->parts when there were several). */
int fe_reply_part(fe_reply_t *r, const store_reply_t *h, const char **p, uint32_t *n)
{
    if (!(h->kind & (STORE_REPLY_MORE | STORE_REPLY_CONT))) return 1; /* one message */
    if (!r->parts) {
        r->parts = malloc(sizeof(*r->parts));
        if (!r->parts) abort();
        buf_init(r->parts);
    }
    if (!(h->kind & STORE_REPLY_CONT)) {
        buf_reset(r->parts); /* (re)starts */
        /* A bulk string (a large value's GET, D31): room for all of it at
         * once, not the next power of two and a copy per doubling. */
        long long want = 0;
        if (*n > 1 && (*p)[0] == '$') {
            for (uint32_t i = 1; i < *n && i < 21 && (*p)[i] >= '0' && (*p)[i] <= '9'; i++)
                want = want * 10 + ((*p)[i] - '0');
            if (want > 0 && want < (1LL << 40)) buf_reserve(r->parts, (size_t)want + 32);
        }
    }
    buf_append(r->parts, *p, *n);
    if (h->kind & STORE_REPLY_MORE) return 0;
    *p = r->parts->data;
    *n = (uint32_t)r->parts->len;
    return 1;
}

/* ---- wake-ups ---- */

void fe_wake_logger(fe_t *fe)
{
    shm_wake(&fe->shm->logger_wake);
}

void fe_durable_want_publish(fe_t *fe, uint64_t want)
{
    if (want == fe->durable_want) return;
    fe->durable_want = want;
    atomic_store_explicit(&fe->shm->fe[fe->slot].durable_want, want, memory_order_relaxed);
}

void fe_want_durable(fe_t *fe)
{
    fe_durable_want_publish(fe, 0);
}

void fe_wake_store(fe_t *fe)
{
    shm_wake(&fe->shm->store_wake);
}

/* Move the ready entries at the head of c's FIFO to its output buffer. */
void fe_conn_collect(fe_conn_t *c)
{
    fe_t *fe = c->fe;
    while (c->head && c->head->state == FE_READY) {
        fe_reply_t *r = c->head;
        if (!r->discard && r->owns_data && r->len >= FE_ADOPT_MIN && c->out.len == 0) {
            /* A large reply (a big value's GET, D31) becomes the output
             * buffer itself: no second copy of it. */
            buf_free(&c->out);
            c->out.data = (char *)r->data;
            c->out.len = c->out.cap = r->len;
            c->out_off = 0;
            r->owns_data = 0;
        } else if (!r->discard) {
            buf_append(&c->out, r->data, r->len);
        }
        if (r->big_more) {
            /* A large value's reply (D48): it stays first until its last
             * part is out (conn_flush asks bigreply.c for the next, once
             * the output has room). */
            if (r->owns_data) free((void *)r->data);
            r->data = NULL;
            r->len = 0;
            r->owns_data = 0;
            r->state = FE_PAUSED;
            return;
        }
        c->head = r->next;
        if (!c->head) c->tail = NULL;
        c->npending--;
        fe_reply_free(fe, r);
    }
    if (!c->head) fe_wlist_del(c);
}

/* An error reply built with printf, cleaned as Redis cleans its own
 * (resp_error_clean), so a client can't break the protocol through an
 * echoed argument. */
void fe_reply_errorf(fe_conn_t *c, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    resp_error_clean(msg);
    buf_t b;
    buf_init(&b);
    resp_error(&b, msg);
    fe_reply_ready_buf(c, &b);
    buf_free(&b);
}
