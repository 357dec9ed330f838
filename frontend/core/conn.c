/*
 * conn.c - a frontend's connections and event loop: accept, read, parse,
 * write, close; the completions that make waiting replies ready; the
 * timers. The connection core of frontend/core/ (core.h says how the
 * layers above plug in).
 *
 * Run by each of the N frontend processes (fork per core). A frontend holds
 * no data: its clients' writes live in the ring and the log, their reads are
 * answered by the store. Killing one loses nothing acked; its clients lose
 * their connection (contract 5).
 *
 * Replies leave in request order (reply.c). A waiting entry becomes ready:
 *  - when durable_lsn covers its record (writes whose reply is fixed, +OK);
 *  - when the store's reply arrives (reads, and writes whose reply needs
 *    state; the store applies only durable records, so durability is implied).
 *    A read is sent only once its connection's writes are durable (D19):
 *    the store then never holds a request for the logger, and a request
 *    stays in the channel until answered, so a store's death loses none.
 *
 * Wake-ups: while anything waits, the frontend arms its shm "sleeping" flag
 * and the logger or store signals its eventfd; libevent watches that fd like
 * any socket. The flag is armed, then the condition re-checked, so a wake-up
 * can't be lost between the check and epoll_wait.
 *
 * Per command the core parses, hands the request to the command hook (one
 * call) and counts it; everything a command means is above it. A reply for
 * a RESP3 client whose bytes come from the store (written in RESP2) has its
 * nulls converted here. Limits and timeouts are fe_t's fields, which the
 * refresh hook keeps equal to the settings shared by all frontends.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include "frontend/core/core.h"
#include "log.h"

#define READ_CHUNK           (16 * 1024)
#define MAX_PENDING_PER_CONN 100000

/* This frontend's own counters: one writer, so a load and a store. */
static inline void stat_add(_Atomic uint64_t *p, uint64_t v)
{
    atomic_store_explicit(p, atomic_load_explicit(p, memory_order_relaxed) + v,
                          memory_order_relaxed);
}

static void conn_close(fe_conn_t *c);
static void conn_pause(fe_conn_t *c);
static int conn_flush(fe_conn_t *c);
static void conn_process_input(fe_conn_t *c);
static void fe_check_completions(fe_t *fe);

/* ---- counters (INFO reads them; CONFIG RESETSTAT zeroes them) ---- */

void fe_stats_sync_epoch(fe_t *fe)
{
    uint64_t e = atomic_load_explicit(&fe_shm(fe->shm)->stat_epoch, memory_order_acquire);
    if (__builtin_expect(e == fe->stat_epoch, 1)) return;
    shm_fe_stats_t *st = fe->stats;
    for (unsigned i = 0; i < SHM_STAT_SLOTS; i++) {
        atomic_store_explicit(&st->cmd[i].calls, 0, memory_order_relaxed);
        atomic_store_explicit(&st->cmd[i].nsec, 0, memory_order_relaxed);
        atomic_store_explicit(&st->cmd[i].rejected, 0, memory_order_relaxed);
        atomic_store_explicit(&st->cmd[i].failed, 0, memory_order_relaxed);
    }
    atomic_store(&st->conns, 0);
    atomic_store(&st->cmds, 0);
    atomic_store(&st->rejected_conns, 0);
    atomic_store(&st->net_in, 0);
    atomic_store(&st->net_out, 0);
    atomic_store(&st->reads, 0);
    atomic_store(&st->writes, 0);
    atomic_store(&st->error_replies, 0);
    for (unsigned i = 0; i < SHM_ERRSTAT_SLOTS; i++)
        atomic_store_explicit(&st->err[i].count, 0, memory_order_relaxed);
    atomic_store(&st->write_probes, 0);
    atomic_store(&st->writes_unlogged, 0);
    atomic_store(&st->cache_hits, 0);
    atomic_store(&st->cache_misses, 0);
    atomic_store_explicit(&st->epoch_seen, e, memory_order_release);
    fe->stat_epoch = e;
}

/* ---- completions ---- */

static const char *logger_failed_reply(fe_t *fe, size_t *n)
{
    static char msg[256];
    int err = atomic_load(&fe->shm->logger_errno);
    *n = (size_t)snprintf(msg, sizeof(msg),
                          "-ERR AtticDB could not make this write durable (%s): the log "
                          "is stopped and writes are refused until the server restarts\r\n",
                          strerror(err));
    return msg;
}

/* r is ready with a copy of data[0, len). */
static void set_ready_copy(fe_reply_t *r, const char *data, size_t len)
{
    char *copy = malloc(len ? len : 1);
    if (!copy) abort();
    memcpy(copy, data, len);
    r->data = copy;
    r->len = (uint32_t)len;
    r->owns_data = 1;
    r->state = FE_READY;
}

uint64_t fe_ack_lsn(fe_t *fe)
{
    uint64_t durable = atomic_load_explicit(&fe->shm->durable_lsn, memory_order_acquire);
    int k = fe->cfg->min_replicas_acked;
    if (k <= 0) return durable;
    /* The k-th largest acked LSN of the online replicas (0 with fewer). */
    uint64_t top[REPL_MAX_REPLICAS] = {0};
    for (int i = 0; i < REPL_MAX_REPLICAS; i++) {
        const repl_replica_t *r = &fe->shm->repl.replicas[i];
        if (!atomic_load(&r->online)) continue;
        uint64_t v = atomic_load(&r->acked_lsn);
        for (int j = 0; j < k; j++)
            if (v > top[j]) {
                uint64_t t = top[j];
                top[j] = v;
                v = t;
            }
    }
    return top[k - 1] < durable ? top[k - 1] : durable;
}

void fe_reply_complete(fe_t *fe, fe_reply_t *r, const char *data, size_t len)
{
    fe_map_take(fe, r->kind, r->id);
    fe->nwaiting--;
    if (r->kind == FE_KIND_HELD) fe->nheld--;
    if (!r->conn) {
        fe_reply_free(fe, r);
        return;
    }
    set_ready_copy(r, data, len);
    uint64_t now = 0;
    fe->hooks->reply_ready(fe, r, &now);
    fe_conn_collect(r->conn);
    conn_flush(r->conn);
}

/* A write the store answered, while min-replicas-acked holds its ack:
 * it waits as a fixed reply does, with the store's reply as its data. */
static void hold_for_replicas(fe_reply_t *r)
{
    fe_conn_t *c = r->conn;
    r->state = FE_WAIT_DURABLE;
    /* The cursor is the oldest waiting entry: r, unless one before it. */
    fe_reply_t *w = c->wait_durable;
    if (w) {
        for (fe_reply_t *e = c->head; e && e != w; e = e->next)
            if (e == r) {
                w = NULL;
                break;
            }
    }
    if (!w) c->wait_durable = r;
}

/* Resolve entries whose condition holds; returns how many became ready. */
static uint64_t fe_collect_durable(fe_t *fe)
{
    uint64_t durable = atomic_load_explicit(&fe->shm->durable_lsn, memory_order_acquire);
    uint64_t ack = fe_ack_lsn(fe);
    int failed = atomic_load(&fe->shm->logger_state) == LOGGER_FAILED;
    uint64_t done = 0, now = 0;
    for (fe_conn_t *c = fe->wlist, *next; c; c = next) {
        next = c->wnext;
        if (failed) {
            for (fe_reply_t *r = c->head; r; r = r->next) {
                if (r->state == FE_WAIT_DURABLE && r->lsn_end <= durable) {
                    r->state = FE_READY;
                    fe->nwaiting--;
                    done++;
                    fe->hooks->reply_ready(fe, r, &now);
                } else if (r->is_write && r->state != FE_READY && r->lsn_end > durable) {
                    /* Never to become durable: say so instead of OK
                     * (contract 6). */
                    if (r->state == FE_WAIT_STORE) fe_map_take(fe, r->kind, r->id);
                    size_t n;
                    const char *m = logger_failed_reply(fe, &n);
                    set_ready_copy(r, m, n);
                    fe->nwaiting--;
                    done++;
                    fe->hooks->reply_ready(fe, r, &now);
                }
            }
            c->wait_durable = NULL;
        } else {
            fe_reply_t *r = c->wait_durable;
            while (r && r->lsn_end <= ack) {
                r->state = FE_READY;
                fe->nwaiting--;
                done++;
                fe->hooks->reply_ready(fe, r, &now);
                do
                    r = r->next;
                while (r && r->state != FE_WAIT_DURABLE);
            }
            c->wait_durable = r;
        }
        fe_conn_collect(c);
        conn_flush(c);
    }
    return done;
}

/* A copy of a store reply for c: converted for a RESP3 client. */
static char *store_reply_copy(fe_conn_t *c, const char *p, uint32_t n, uint32_t *outlen)
{
    *outlen = n;
    if (c && c->proto >= 3 && n) {
        buf_t conv;
        buf_init(&conv);
        if (resp3_from_resp2(p, n, &conv) == 1) {
            char *copy = malloc(conv.len);
            if (!copy) abort();
            memcpy(copy, conv.data, conv.len);
            *outlen = (uint32_t)conv.len;
            buf_free(&conv);
            return copy;
        }
        buf_free(&conv);
    }
    char *copy = malloc(n ? n : 1);
    if (!copy) abort();
    memcpy(copy, p, n);
    return copy;
}

/* c's blocking command got its reply (served, timed out, unblocked):
 * its input runs again (on_retry). */
static void block_ended(fe_conn_t *c)
{
    fe_t *fe = c->fe;
    c->blocking = 0;
    c->block_deadline_ms = 0;
    c->block_timeout_sent = 0;
    fe->nblocked_clients--;
    atomic_fetch_sub(&fe->stats->blocked, 1);
    if (!c->blocked) {
        c->blocked = 1;
        fe->nblocked++;
    }
    event_active(fe->ev_retry, EV_TIMEOUT, 0);
}

void fe_conn_block(fe_conn_t *c, uint64_t lsn, int64_t deadline_ms)
{
    c->blocking = 1;
    c->block_id = lsn;
    c->block_deadline_ms = deadline_ms;
    c->block_timeout_sent = 0;
    c->fe->nblocked_clients++;
    atomic_fetch_add(&c->fe->stats->blocked, 1);
}

/* c's probe was answered (D68): its command runs again, by itself, not
 * by a walk over every connection. */
static void probe_answered(fe_t *fe, fe_reply_t *r)
{
    fe_conn_t *c = r->conn;
    fe->nwaiting--;
    c->reads_outstanding--;
    c->probe.wait = NULL;
    /* The store's ":0", ":1" or ":2"; anything else (an error) runs the
     * write, which answers what the log says. */
    c->probe.state = FE_PROBE_UNKNOWN;
    if (r->len == 4 && r->data[0] == ':' && r->data[2] == '\r') {
        if (r->data[1] == '0') c->probe.state = FE_PROBE_ABSENT;
        if (r->data[1] == '1') c->probe.state = FE_PROBE_LIVE;
        if (r->data[1] == '2') c->probe.state = FE_PROBE_EXPIRED;
    }
    fe_reply_free(fe, r);
    if (!c->probe.resume_queued) {
        c->probe.resume_queued = 1;
        c->probe.resume_next = fe->resume;
        fe->resume = c;
    }
    event_active(fe->ev_retry, EV_TIMEOUT, 0);
}

/* r (its client still here) has its store reply, or the first part of a
 * large value's (D48), as its data: it is answered, or held while
 * min-replicas-acked holds its write's ack (D33). Returns 1 when it is
 * ready, 0 when held. */
static uint64_t store_reply_ready(fe_t *fe, fe_reply_t *r, uint8_t kind, uint64_t id, uint64_t *now)
{
    fe_conn_t *c = r->conn;
    if (r->detached) {
        probe_answered(fe, r);
        return 1;
    }
    int held = kind == STORE_REPLY_WRITE && r->lsn_end > fe_ack_lsn(fe);
    if (!held) fe->nwaiting--;
    r->state = FE_READY;
    if (kind == STORE_REPLY_WRITE && c->blocking && c->block_id == id) block_ended(c);
    if (held)
        hold_for_replicas(r); /* min-replicas-acked (D33) */
    else
        fe->hooks->reply_ready(fe, r, now);
    if (kind == STORE_REPLY_READ && --c->reads_outstanding == 0 && c->blocked)
        event_active(fe->ev_retry, EV_TIMEOUT, 0); /* a write waits for it */
    /* transactions (multi.c): an EXEC whose SELECT waits for its outcome */
    if (kind == STORE_REPLY_WRITE) fe->hooks->write_reply(c, id, r->data, r->len);
    return !held;
}

/* Take the store's replies off the channel. */
static uint64_t fe_collect_store(fe_t *fe)
{
    uint64_t done = 0, now = 0;
    const void *msg;
    uint32_t len;
    while ((msg = chan_peek(fe->from_store, &len)) != NULL) {
        store_reply_t h;
        if (len >= sizeof(h)) {
            memcpy(&h, msg, sizeof(h));
            uint8_t kind = (uint8_t)STORE_REPLY_KIND(h.kind);
            fe_reply_t *r = fe_map_find(fe, kind, h.id);
            const char *body = (const char *)msg + sizeof(h);
            uint32_t blen = h.len;
            int in_parts = (h.kind & (STORE_REPLY_PAUSE | STORE_REPLY_LOST)) || (r && r->big_token);
            if (in_parts && h.len <= len - sizeof(h)) {
                /* A large value's reply, part by part (D48, bigreply.c). */
                if (r) {
                    fe_conn_t *rc = r->conn;
                    int got = fe_bigreply_part(fe, r, &h, body, blen);
                    if (got < 0)
                        fe_conn_kill(rc);
                    else if (got && rc)
                        done += store_reply_ready(fe, r, kind, h.id, &now);
                } else
                    fe_bigreply_orphan(fe, &h, body, blen);
            } else if (r && h.len <= len - sizeof(h) && fe_reply_part(r, &h, &body, &blen)) {
                fe_map_take(fe, kind, h.id);
                uint32_t clen;
                char *copy;
                if (r->parts && (!r->conn || r->conn->proto < 3)) {
                    /* The parts are the reply already: taken, not copied. */
                    copy = r->parts->data;
                    clen = (uint32_t)r->parts->len;
                    buf_init(r->parts);
                } else {
                    copy = store_reply_copy(r->conn, body, blen, &clen);
                }
                if (r->parts) {
                    buf_free(r->parts);
                    free(r->parts);
                    r->parts = NULL;
                }
                if (!r->conn) {
                    /* The client left; the entry was only kept for this. */
                    fe->nwaiting--, done++;
                    free(copy);
                    fe_reply_free(fe, r);
                } else {
                    r->data = copy;
                    r->len = clen;
                    r->owns_data = 1;
                    done += store_reply_ready(fe, r, kind, h.id, &now);
                }
            }
            /* An id we don't know is a reply meant for a previous
             * incarnation of this frontend: dropped. */
        }
        chan_consume(fe->from_store);
    }
    return done;
}

static int fe_has_completion(fe_t *fe)
{
    if (!chan_empty(fe->from_store)) return 1;
    /* Not "the logger failed": once it has, fe_collect_durable answers every
     * waiting write at once, and a read still waiting is the store's to
     * answer, so reporting a completion here would spin forever. */
    uint64_t durable = atomic_load_explicit(&fe->shm->durable_lsn, memory_order_acquire);
    if (fe->read_wait_lsn && durable >= fe->read_wait_lsn) return 1;
    uint64_t ack = fe_ack_lsn(fe);
    for (fe_conn_t *c = fe->wlist; c; c = c->wnext)
        if (c->wait_durable && c->wait_durable->lsn_end <= ack) return 1;
    return 0;
}

/* The lowest durable LSN at which something here becomes ready (D85):
 * the oldest fixed reply of each connection, the reads held behind their
 * connection's writes; UINT64_MAX when only the store's replies are due.
 * WAIT and min-replicas-acked look at every flush, as before. */
static uint64_t durable_want(fe_t *fe)
{
    if (fe->nheld || fe->cfg->min_replicas_acked > 0) return 0;
    uint64_t want = fe->read_wait_lsn ? fe->read_wait_lsn : UINT64_MAX;
    for (fe_conn_t *c = fe->wlist; c; c = c->wnext)
        if (c->wait_durable && c->wait_durable->lsn_end < want) want = c->wait_durable->lsn_end;
    return want;
}

/* Resolve whatever completed; arm the wake-up flag while anything waits.
 * The flag is armed with the LSN the logger's flush must reach to wake us
 * (durable_want); the store's replies wake us whatever it says. Both are
 * stored before the fence in shm_waiter_arm, and the re-check after it
 * reads durable_lsn: the logger stores durable_lsn, fences, then reads
 * both, so one of the two sides sees the other. */
static void fe_check_completions(fe_t *fe)
{
    shm_waiter_t *w = &fe->shm->fe[fe->slot].wake;
    fe_stats_sync_epoch(fe); /* before reply_ready counts */
    for (;;) {
        uint64_t n = fe_collect_store(fe);
        n += fe_collect_durable(fe);
        fe_reads_release(fe);
        (void)n;
        if (!fe->nwaiting) {
            shm_waiter_disarm(w);
            return;
        }
        fe_durable_want_publish(fe, durable_want(fe));
        shm_waiter_arm(w);
        if (!fe_has_completion(fe)) return;
        shm_waiter_disarm(w);
    }
}

static void on_wake(evutil_socket_t fd, short what, void *arg)
{
    fe_t *fe = arg;
    shm_waiter_drain(&fe->shm->fe[fe->slot].wake);
    fe->hooks->on_wake(fe); /* CLIENT KILL from another frontend */
    fe_check_completions(fe);
}

/* ---- connections ---- */

/* ---- replies written at the end of a pass ---- */

static void flush_list_del(fe_conn_t *c)
{
    if (!c->in_flush) return;
    if (c->fprev)
        c->fprev->fnext = c->fnext;
    else
        c->fe->flush_list = c->fnext;
    if (c->fnext) c->fnext->fprev = c->fprev;
    c->in_flush = 0;
}

/* c's input ran: its replies are written once every connection the
 * event loop found ready has run (fe_core_run), as Redis writes its
 * replies before it sleeps, so that a client with many connections finds
 * several replies at a wake-up rather than one (D70). */
static void flush_later(fe_conn_t *c)
{
    if (c->in_flush) return;
    fe_t *fe = c->fe;
    c->fprev = NULL;
    c->fnext = fe->flush_list;
    if (fe->flush_list) fe->flush_list->fprev = c;
    fe->flush_list = c;
    c->in_flush = 1;
}

static void flush_pass(fe_t *fe)
{
    int any = fe->flush_list != NULL;
    while (fe->flush_list) {
        fe_conn_t *c = fe->flush_list;
        flush_list_del(c);
        conn_flush(c); /* may free c: it is out of the list already */
    }
    if (any) fe_check_completions(fe);
}

static void conn_free(fe_conn_t *c)
{
    fe_t *fe = c->fe;
    flush_list_del(c);
    fe_big_abandon(c);  /* a large value left without its final (D31) */
    fe_read_abandon(c); /* a read left with part of its request sent (D58) */
    fe_wlist_del(c);
    if (c->probe.wait) c->probe.wait->conn = NULL; /* freed when the store answers */
    if (c->probe.resume_queued) {
        fe_conn_t **pp = &fe->resume;
        while (*pp != c)
            pp = &(*pp)->probe.resume_next;
        *pp = c->probe.resume_next;
    }
    for (fe_reply_t *r = c->head, *next; r; r = next) {
        next = r->next;
        if (r->state == FE_WAIT_STORE) {
            r->conn = NULL; /* freed when the store's reply arrives */
        } else {
            if (r->state == FE_WAIT_DURABLE) fe->nwaiting--;
            if (r->state == FE_PAUSED) fe_bigreply_drop(fe, r); /* D48 */
            fe_reply_free(fe, r);
        }
    }
    if (c->blocked) fe->nblocked--;
    if (c->blocking) {
        fe->nblocked_clients--;
        atomic_fetch_sub(&fe->stats->blocked, 1);
    }
    if (c->prev)
        c->prev->next = c->next;
    else
        fe->conns = c->next;
    if (c->next) c->next->prev = c->prev;
    event_free(c->ev_read);
    event_free(c->ev_write);
    close(c->fd);
    buf_free(&c->in);
    buf_free(&c->out);
    free(c->stream.vals);
    resp_cmd_free(&c->cmd);
    fe->hooks->on_close(c);
    atomic_fetch_sub(&fe->stats->clients, 1);
    fe->nconns--;
    free(c);
}

static void conn_close(fe_conn_t *c)
{
    conn_free(c);
}

/* CLIENT KILL, a deleted ACL user: close c. Never frees it here (a caller
 * may be walking the connection list, or running c's own command): c stops
 * reading and is closed by the reaper right after the current event. */
void fe_conn_kill(fe_conn_t *c)
{
    if (c->doomed) return;
    c->doomed = 1;
    c->closing = 1;
    c->reply_suppress = 1;
    conn_pause(c);
    event_active(c->fe->ev_reap, EV_TIMEOUT, 0);
}

static void on_reap(evutil_socket_t fd, short what, void *arg)
{
    fe_t *fe = arg;
    (void)fd;
    (void)what;
    for (fe_conn_t *c = fe->conns, *next; c; c = next) {
        next = c->next;
        if (c->doomed && !c->dispatching) conn_close(c);
    }
}

/* A client that does not read its replies: over the hard limit, or over the
 * soft one for too long, it is disconnected (as Redis' client-output-buffer-
 * limit does), so the server's memory stays bounded. */
static int conn_over_output_limit(fe_conn_t *c)
{
    fe_t *fe = c->fe;
    uint64_t pending = c->out.len - c->out_off;
    /* A subscriber is judged by the pubsub class, as Redis does. */
    uint64_t hard = c->subscriptions ? fe->obuf_pubsub_hard : fe->obuf_hard;
    uint64_t soft = c->subscriptions ? fe->obuf_pubsub_soft : fe->obuf_soft;
    int64_t soft_s = c->subscriptions ? fe->obuf_pubsub_soft_seconds : fe->obuf_soft_seconds;
    if (hard && pending > hard) {
        log_info("Client closed for overcoming of output buffer limits (%" PRIu64 " bytes)",
                 pending);
        return 1;
    }
    if (soft && pending > soft) {
        int64_t now = shm_now_ms();
        if (!c->obuf_soft_since_ms)
            c->obuf_soft_since_ms = now;
        else if (now - c->obuf_soft_since_ms >= soft_s * 1000) {
            log_info("Client closed for overcoming of output buffer soft limit (%" PRIu64 " bytes)",
                     pending);
            return 1;
        }
    } else {
        c->obuf_soft_since_ms = 0;
    }
    return 0;
}

/* Write what is ready. Returns 0 after EAGAIN (with EV_WRITE armed) or when
 * everything is written, -1 when the connection was closed (on error, or
 * after QUIT once its replies are out): c must not be used then. */
static int conn_flush(fe_conn_t *c)
{
    fe_conn_collect(c);
    if (c->out.len > c->out_off) stat_add(&c->fe->stats->writes, 1);
    while (c->out.len > c->out_off) {
        ssize_t n = send(c->fd, c->out.data + c->out_off, c->out.len - c->out_off, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                if (conn_over_output_limit(c)) {
                    conn_close(c);
                    return -1;
                }
                event_add(c->ev_write, NULL);
                fe_bigreply_pull(c); /* room for a large reply's next part (D48) */
                return 0;
            }
            conn_close(c);
            return -1;
        }
        c->out_off += (size_t)n;
        stat_add(&c->fe->stats->net_out, (uint64_t)n);
    }
    c->out_off = 0;
    c->obuf_soft_since_ms = 0;
    buf_reset(&c->out);
    if (c->out.cap > 4 * 1024 * 1024) {
        buf_free(&c->out);
        buf_init(&c->out);
    }
    fe_bigreply_pull(c);
    if (c->closing && !c->head) {
        conn_close(c);
        return -1;
    }
    return 0;
}

void fe_conn_push(fe_conn_t *c, const char *p, size_t n)
{
    if (c->doomed) return;
    buf_append(&c->out, p, n);
    if (conn_over_output_limit(c)) {
        fe_conn_kill(c);
        return;
    }
    /* Written when the socket takes it (on_writable), not here: the
     * caller may be walking a list c is in, and a failed send frees c. */
    event_add(c->ev_write, NULL);
}

static void on_writable(evutil_socket_t fd, short what, void *arg)
{
    fe_conn_t *c = arg;
    conn_flush(c);
}

static void conn_pause(fe_conn_t *c)
{
    if (!c->reading_paused) {
        event_del(c->ev_read);
        c->reading_paused = 1;
    }
}

static void conn_resume(fe_conn_t *c)
{
    if (c->reading_paused && !c->closing) {
        event_add(c->ev_read, NULL);
        c->reading_paused = 0;
    }
}

/* Pause c's input and retry it shortly (back-pressure, never loss). */
static void fe_block(fe_conn_t *c, int retry_soon)
{
    fe_t *fe = c->fe;
    if (!c->blocked) {
        c->blocked = 1;
        fe->nblocked++;
    }
    conn_pause(c);
    if (retry_soon && !event_pending(fe->ev_retry, EV_TIMEOUT, NULL)) {
        struct timeval soon = {0, 200};
        event_add(fe->ev_retry, &soon);
    }
}

/* Parse and dispatch every whole command in the input buffer. */
static void conn_process_input(fe_conn_t *c)
{
    fe_t *fe = c->fe;
    fe_stats_sync_epoch(fe); /* before anything is counted */
    while (!c->closing && c->in.len > c->in_off) {
        if (c->blocking) break; /* a blocking command waits: the rest later */
        if (c->npending >= MAX_PENDING_PER_CONN) {
            /* A client pipelining without reading: stop taking its input
             * until replies drain (the retry timer looks again). */
            fe_block(c, 1);
            break;
        }
        if (c->stream.on && !c->stream.whole) {
            /* A large bulk arriving (D48): its bytes go out as chunks. */
            int rc = fe_stream_pump(c);
            if (rc == -EAGAIN) {
                fe_block(c, 1);
                break;
            }
            if (rc == -EPIPE) {
                fe_reply_errorf(c, "ERR writes are refused now (the log is stopped, the disk "
                                   "is full or this is a replica): a large value in flight "
                                   "was dropped");
                c->closing = 1;
                conn_pause(c);
                break;
            }
            if (rc == 0) break;
        }
        size_t avail = c->in.len - c->in_off;
        if (avail < c->need) break;
        const char *err = NULL;
        size_t need = 0;
        const char *start = c->in.data + c->in_off;
        int64_t used = resp_parse(&fe->limits, start, avail, &c->cmd, &err, &need);
        if (used == RESP_NEED_MORE) {
            c->need = need;
            if (fe_stream_begin(c)) continue;
            break;
        }
        c->need = 0;
        if (used == RESP_ERROR) {
            buf_t b;
            buf_init(&b);
            resp_error(&b, err);
            fe_reply_ready_buf(c, &b);
            buf_free(&b);
            c->closing = 1;
            conn_pause(c);
            break;
        }
        if (c->cmd.argc > 0) {
            /* The one hook call per command: routing, and around it the
             * statistics and CLIENT REPLY (frontend/frontend.c). */
            c->dispatching = 1;
            /* Where the empty arguments that stand for streamed bulks are
             * (D48, fe_stream_find). */
            c->stream.base = c->stream.whole ? start : NULL;
            c->input_more = avail > (size_t)used;
            int rc = fe->hooks->command(c, start, &c->cmd);
            c->dispatching = 0;
            if (c->stream.on && rc != -EAGAIN && rc != -EBUSY) fe_stream_end(c);
            if (rc == -EAGAIN || rc == -EBUSY) {
                /* Ring or channel full (retry soon), or a write behind
                 * this connection's reads (retried when they are
                 * answered): keep the bytes. */
                fe_block(c, rc == -EAGAIN);
                break;
            }
            stat_add(&fe->stats->cmds, 1);
        }
        c->in_off += (size_t)used;
        if (c->blocked) {
            c->blocked = 0;
            fe->nblocked--;
        }
    }
    fe->hooks->input_done(c);
    if (c->in_off == c->in.len) {
        buf_reset(&c->in);
        c->in_off = 0;
        if (c->in.cap > 1024 * 1024) { /* a large value's (D31): given back */
            buf_free(&c->in);
            buf_init(&c->in);
        }
    } else if (c->in_off > 64 * 1024 && c->in_off > c->in.len / 2) {
        memmove(c->in.data, c->in.data + c->in_off, c->in.len - c->in_off);
        c->in.len -= c->in_off;
        c->in_off = 0;
    }
}

static void on_readable(evutil_socket_t fd, short what, void *arg)
{
    fe_conn_t *c = arg;
    fe_t *fe = c->fe;
    /* A bulk the parser knows the length of is read into room made for it
     * at once: a 100 MB value costs 100 MB, not the next power of two and
     * the copies of each doubling (the need is at most proto-max-bulk-len
     * past the command's start, and the query buffer limit still holds). */
    size_t have = c->in.len - c->in_off, room = fe_stream_room(c);
    if (room) /* a bulk taken as chunks: one chunk at a time (D48) */
        buf_reserve(&c->in, room);
    else if (c->need > have + READ_CHUNK && c->need <= fe->qbuf_limit)
        buf_reserve(&c->in, c->need - have);
    else
        buf_reserve(&c->in, READ_CHUNK);
    ssize_t n = recv(fd, c->in.data + c->in.len, c->in.cap - c->in.len, 0);
    stat_add(&fe->stats->reads, 1);
    if (n <= 0) {
        if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
        conn_close(c);
        return;
    }
    c->in.len += (size_t)n;
    c->last_active_ms = shm_now_ms();
    stat_add(&fe->stats->net_in, (uint64_t)n);
    fe->hooks->refresh(fe);
    fe->hooks->on_input(c);
    if (c->in.len - c->in_off > fe->qbuf_limit) {
        log_info("Closing client that reached max query buffer length (%zu bytes)",
                 c->in.len - c->in_off);
        conn_close(c);
        return;
    }
    conn_process_input(c);
    flush_later(c);
}

/* "ip:port" as Redis writes it ("[ip]:port" for IPv6, "path:0" for the
 * unix socket). */
static void format_addr(const struct sockaddr_storage *ss, const char *unix_path, char *out,
                        size_t n)
{
    char ip[INET6_ADDRSTRLEN] = "?";
    if (ss->ss_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)ss;
        inet_ntop(AF_INET, &in->sin_addr, ip, sizeof(ip));
        snprintf(out, n, "%s:%u", ip, (unsigned)ntohs(in->sin_port));
    } else if (ss->ss_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)ss;
        inet_ntop(AF_INET6, &in6->sin6_addr, ip, sizeof(ip));
        snprintf(out, n, "[%s]:%u", ip, (unsigned)ntohs(in6->sin6_port));
    } else {
        snprintf(out, n, "%s:0", unix_path ? unix_path : "");
    }
}

static fe_conn_t *conn_new(fe_t *fe, int fd, const struct sockaddr_storage *peer)
{
    /* One allocation with the admin layer's state right after it. */
    fe_conn_t *c = calloc(1, sizeof(*c) + fe->hooks->conn_admin_size);
    if (!c) return NULL;
    if (fe->hooks->conn_admin_size) c->admin = (struct fe_conn_admin *)(void *)(c + 1);
    c->fe = fe;
    c->fd = fd;
    /* Unique across frontends (CLIENT ID, CLIENT KILL ID). */
    c->id = atomic_fetch_add(&fe_shm(fe->shm)->next_client_id, 1) + 1;
    struct sockaddr_storage local;
    socklen_t ll = sizeof(local);
    memset(&local, 0, sizeof(local));
    if (getsockname(fd, (struct sockaddr *)&local, &ll) != 0) local.ss_family = AF_UNIX;
    c->is_unix = peer->ss_family == AF_UNIX;
    format_addr(peer, fe->cfg->unixsocket, c->addr, sizeof(c->addr));
    format_addr(&local, fe->cfg->unixsocket, c->laddr, sizeof(c->laddr));
    buf_init(&c->in);
    buf_init(&c->out);
    resp_cmd_init(&c->cmd);
    c->last_active_ms = shm_now_ms();
    c->created_ms = c->last_active_ms;
    c->proto = 2;
    c->ev_read = event_new(fe->base, fd, EV_READ | EV_PERSIST, on_readable, c);
    c->ev_write = event_new(fe->base, fd, EV_WRITE, on_writable, c);
    event_add(c->ev_read, NULL);
    c->next = fe->conns;
    if (fe->conns) fe->conns->prev = c;
    fe->conns = c;
    fe->nconns++;
    atomic_fetch_add(&fe->stats->clients, 1);
    fe_stats_sync_epoch(fe);
    stat_add(&fe->stats->conns, 1);
    fe->hooks->on_connect(c);
    return c;
}

static uint64_t total_clients(fe_t *fe)
{
    uint64_t n = 0;
    for (uint32_t i = 0; i < fe->shm->nfrontends; i++)
        n += atomic_load(&fe_shm(fe->shm)->fe_stats[i].clients);
    return n;
}

static void on_accept(evutil_socket_t lfd, short what, void *arg)
{
    fe_t *fe = arg;
    /* Several per wake-up: under a connection storm one epoll round trip
     * per accept would be the bottleneck. */
    for (int i = 0; i < 32; i++) {
        /* Each time (one atomic load when nothing changed): a connection
         * made after another frontend answered CONFIG SET (protected-mode,
         * maxclients) must be judged by the new values, even if it reaches
         * this loop while it is still accepting earlier ones. */
        fe->hooks->refresh(fe);
        struct sockaddr_storage peer;
        socklen_t plen = sizeof(peer);
        memset(&peer, 0, sizeof(peer));
        int fd = accept4(lfd, (struct sockaddr *)&peer, &plen, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) return; /* EAGAIN: another frontend took it, or none left */
        if (plen == 0 || peer.ss_family == AF_UNIX) peer.ss_family = AF_UNIX;
        int one = 1;
        if (peer.ss_family != AF_UNIX) setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        if (total_clients(fe) >= (uint64_t)fe->maxclients) {
            static const char msg[] = "-ERR max number of clients reached\r\n";
            /* Counted first: a client that saw the error then asks INFO. */
            fe_stats_sync_epoch(fe);
            stat_add(&fe->stats->rejected_conns, 1);
            ssize_t w = send(fd, msg, sizeof(msg) - 1, MSG_NOSIGNAL);
            (void)w;
            close(fd);
            continue;
        }
        /* Protected mode (Redis' text, then the connection is closed). */
        const char *deny = fe->hooks->refuse(fe, (const struct sockaddr *)&peer);
        if (deny) {
            ssize_t w = send(fd, deny, strlen(deny), MSG_NOSIGNAL);
            (void)w;
            close(fd);
            continue;
        }
        if (!conn_new(fe, fd, &peer)) close(fd);
    }
}

/* Retry connections that waited for ring or channel space. */
/* A blocked connection's input runs again (it may close c). */
static void conn_retry(fe_conn_t *c)
{
    fe_t *fe = c->fe;
    if (!c->blocked || fe->draining) return;
    c->blocked = 0;
    fe->nblocked--;
    conn_resume(c);
    conn_process_input(c);
    conn_flush(c);
}

static void on_retry(evutil_socket_t fd, short what, void *arg)
{
    fe_t *fe = arg;
    /* Connections whose probe was answered first, each by itself (D68). */
    while (fe->resume) {
        fe_conn_t *c = fe->resume;
        fe->resume = c->probe.resume_next;
        c->probe.resume_queued = 0;
        conn_retry(c);
    }
    for (fe_conn_t *c = fe->conns, *next; c && fe->nblocked; c = next) {
        next = c->next;
        conn_retry(c);
    }
    fe_check_completions(fe);
}

/* Shutdown: stop accepting and reading; exit once every reply is out. */
static void fe_drain(fe_t *fe)
{
    if (!fe->draining) {
        fe->draining = 1;
        for (int i = 0; i < fe->nlisten; i++)
            event_del(fe->ev_listen[i]);
        for (fe_conn_t *c = fe->conns; c; c = c->next)
            conn_pause(c);
    }
    fe_check_completions(fe);
    int busy = 0;
    for (fe_conn_t *c = fe->conns, *next; c; c = next) {
        next = c->next;
        /* A client blocked with every earlier reply sent is closed, as
         * Redis closes it at shutdown: its wait would hold the drain. */
        if (c->blocking && c->head && c->head->id == c->block_id && c->out.len == c->out_off &&
            !c->head->next)
            conn_close(c);
        else if (c->head || c->out.len > c->out_off)
            busy = 1;
        else
            conn_close(c);
    }
    if (!busy) event_base_loopbreak(fe->base);
}

/* A test hook: ATTICDB_TEST_NO_WAKE_NET=1 turns the timer's look for
 * completions off, so that a wake-up the logger or the store should have
 * sent and did not (D85) leaves its client waiting for ever instead of
 * for one tick. */
static int no_wake_net(fe_t *fe)
{
    if (!fe->no_wake_net) {
        const char *v = getenv("ATTICDB_TEST_NO_WAKE_NET");
        fe->no_wake_net = v && strcmp(v, "1") == 0 ? 1 : -1;
    }
    return fe->no_wake_net > 0;
}

/* Periodic: notice shutdown and the master's death. */
static void on_timer(evutil_socket_t fd, short what, void *arg)
{
    fe_t *fe = arg;
    /* Replies this pass made go out first: the clients' buffers summed
     * below are what the clients have not read, not what is on its way. */
    flush_pass(fe);
    if (!shm_master_alive(fe->shm)) {
        event_base_loopbreak(fe->base);
        return;
    }
    if (atomic_load(&fe->shm->shutdown) >= 1)
        fe_drain(fe);
    else if (!no_wake_net(fe))
        fe_check_completions(fe); /* belt and braces for a lost wake-up */
    if (atomic_load(&fe->shm->tick_wanted) && atomic_exchange(&fe->shm->tick_wanted, 0))
        fe_submit_tick(fe);
    if (fe->nbig_owed) fe_big_flush_owed(fe);
    fe_bigreply_tick(fe);
    fe_read_tick(fe);
    fe->hooks->on_timer(fe); /* settings, ACL sweep, CLIENT KILL, INFO's sampling */
    int64_t now = shm_now_ms();
    if (now - fe->last_obuf_sum_ms >= FE_OBUF_SUM_MS) {
        /* Requests received and not yet run, replies written and not yet
         * sent, all clients (D32): they count in used_memory, against
         * maxmemory, as Redis counts client query and output buffers. */
        fe->last_obuf_sum_ms = now;
        uint64_t pending = 0;
        for (fe_conn_t *c = fe->conns; c; c = c->next)
            pending += (c->out.len - c->out_off) + (c->in.len - c->in_off);
        atomic_store_explicit(&fe->shm->fe[fe->slot].client_bytes, pending, memory_order_relaxed);
    }
    if (fe->timeout_s > 0) {
        /* Idle clients: no input for `timeout` seconds and nothing owed
         * to them (a client waiting for a reply is not idle). */
        if (now - fe->last_idle_scan_ms >= 1000) {
            fe->last_idle_scan_ms = now;
            for (fe_conn_t *c = fe->conns, *next; c; c = next) {
                next = c->next;
                if (!c->head && now - c->last_active_ms > fe->timeout_s * 1000) conn_close(c);
            }
        }
    }
}

/* ---- start-up and the loop ---- */

fe_t *fe_core_new(shm_t *shm, const config_t *cfg, int slot, const fe_hooks_t *hooks,
                  const struct fe_cmd_hooks *cmd_hooks)
{
    fe_t *fe = calloc(1, sizeof(*fe));
    if (!fe) return NULL;
    fe->shm = shm;
    fe->cfg = cfg;
    fe->slot = slot;
    fe->hooks = hooks;
    fe->cmd_hooks = cmd_hooks;
    fe->ring = shm_ring(shm);
    fe->claimer = &shm->claimers[slot];
    fe->to_store = shm_to_store(shm, slot);
    fe->from_store = shm_from_store(shm, slot);
    /* Every flush wakes us until we say otherwise (a predecessor may
     * have left its durable_want behind). */
    atomic_store(&shm->fe[slot].durable_want, 0);
    fe->limits.max_bulk_len = cfg->proto_max_bulk_len;
    fe->hash_max_entries = cfg->hash_max_listpack_entries;
    fe->hash_max_value = cfg->hash_max_listpack_value;
    fe->set_max_intset = cfg->set_max_intset_entries;
    fe->hll_sparse_max = cfg->hll_sparse_max_bytes;
    fe->zset_max_entries = cfg->zset_max_listpack_entries;
    fe->zset_max_value = cfg->zset_max_listpack_value;
    fe->limits.max_args = cfg->max_args;
    fe->limits.max_inline_len = cfg->max_inline_len;
    uint32_t inc = atomic_load(&shm->fe[slot].incarnation);
    /* Read ids carry the incarnation, so a reply the store meant for our
     * predecessor can never match a request of ours. */
    fe->next_read_id = (uint64_t)inc << 40;
    atomic_store(&shm->fe[slot].pid, getpid());
    fe->stats = &fe_shm(shm)->fe_stats[slot];
    atomic_store(&fe->stats->clients, 0);
    atomic_store(&fe->stats->blocked, 0);
    /* A respawned frontend keeps its predecessor's counts. */
    fe->stat_epoch = atomic_load(&fe->stats->epoch_seen);
    fe_stats_sync_epoch(fe);
    return fe;
}

int fe_core_run(fe_t *fe, const int *listen_fds, int nlisten)
{
    shm_t *shm = fe->shm;
    int slot = fe->slot;
    /* The slot's ring claimer is taken over at the first claim
     * (fe_submit_record): a dead predecessor's claim must not keep this
     * frontend from serving reads. */
    fe->base = event_base_new();
    if (!fe->base) return 1;
    for (int i = 0; i < nlisten; i++) {
        fe->ev_listen[i] = event_new(fe->base, listen_fds[i], EV_READ | EV_PERSIST, on_accept, fe);
        event_add(fe->ev_listen[i], NULL);
    }
    fe->nlisten = nlisten;
    fe->ev_wake = event_new(fe->base, shm->fe[slot].wake.efd, EV_READ | EV_PERSIST, on_wake, fe);
    event_add(fe->ev_wake, NULL);
    fe->ev_timer = event_new(fe->base, -1, EV_PERSIST, on_timer, fe);
    fe->ev_retry = event_new(fe->base, -1, 0, on_retry, fe);
    fe->ev_reap = event_new(fe->base, -1, 0, on_reap, fe);
    struct timeval tick = {0, 10000};
    event_add(fe->ev_timer, &tick);
    atomic_store(&shm->fe[slot].ready, 1);
    log_debug("Frontend %d ready", slot);
    /* One pass at a time: the replies of the connections a pass ran go
     * out at its end (flush_pass). */
    for (;;) {
        int rc = event_base_loop(fe->base, EVLOOP_ONCE);
        flush_pass(fe);
        if (rc != 0 || event_base_got_break(fe->base) || event_base_got_exit(fe->base)) break;
    }
    log_debug("Frontend %d stopped", slot);
    return 0;
}
