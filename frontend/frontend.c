/*
 * frontend.c - a frontend process: connections, reply order and wake-ups.
 *
 * Run by each of the N frontend processes (fork per core). A frontend holds
 * no data: its clients' writes live in the ring and the log, their reads are
 * answered by the store. Killing one loses nothing acked; its clients lose
 * their connection (contract 5).
 *
 * Every request gets an entry in its connection's FIFO, and bytes go to the
 * socket only from the FIFO's head, so replies leave in request order even
 * though they become ready out of order (a GET answered by the store can be
 * ready before an earlier SET is durable). An entry becomes ready:
 *  - at once (PING, errors, anything answered here);
 *  - when durable_lsn covers its record (writes whose reply is fixed, +OK);
 *  - when the store's reply arrives (reads, and writes whose reply needs
 *    state; the store applies only durable records, so durability is implied).
 *
 * Wake-ups: while anything waits, the frontend arms its shm "sleeping" flag
 * and the logger or store signals its eventfd; libevent watches that fd like
 * any socket. The flag is armed, then the condition re-checked, so a wake-up
 * can't be lost between the check and epoll_wait.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fe-internal.h"
#include "frontend/frontend.h"
#include "log.h"

#define READ_CHUNK (16 * 1024)
#define MAX_PENDING_PER_CONN 100000

static const char REPLY_OK[] = "+OK\r\n";

static void conn_close(fe_conn_t *c);
static int conn_flush(fe_conn_t *c);
static void conn_process_input(fe_conn_t *c);
static void fe_check_completions(fe_t *fe);

/* ---- reply entries ---- */

static fe_reply_t *reply_alloc(fe_t *fe)
{
    fe_reply_t *r = fe->free_replies;
    if (r) fe->free_replies = r->next;
    else if (!(r = malloc(sizeof(*r)))) {
        log_warn("out of memory");
        abort();
    }
    memset(r, 0, sizeof(*r));
    return r;
}

static void reply_free(fe_t *fe, fe_reply_t *r)
{
    if (r->owns_data) free((void *)r->data);
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

static void wlist_del(fe_conn_t *c)
{
    if (!c->in_wlist) return;
    if (c->wprev) c->wprev->wnext = c->wnext;
    else c->fe->wlist = c->wnext;
    if (c->wnext) c->wnext->wprev = c->wprev;
    c->in_wlist = 0;
}

fe_reply_t *fe_reply_push(fe_conn_t *c)
{
    fe_reply_t *r = reply_alloc(c->fe);
    r->conn = c;
    if (c->tail) c->tail->next = r;
    else c->head = r;
    c->tail = r;
    c->npending++;
    return r;
}

void fe_reply_ready_static(fe_conn_t *c, const char *s, size_t n)
{
    if (!c->head) {
        buf_append(&c->out, s, n);
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
        buf_append(&c->out, b->data, b->len);
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
    wlist_add(r->conn);
}

void fe_wait_durable(fe_t *fe, fe_reply_t *r, uint64_t lsn_end)
{
    r->state = FE_WAIT_DURABLE;
    r->is_write = 1;
    r->lsn_end = lsn_end;
    r->data = REPLY_OK;
    r->len = sizeof(REPLY_OK) - 1;
    fe->nwaiting++;
    wlist_add(r->conn);
}

static fe_reply_t *map_take(fe_t *fe, uint8_t kind, uint64_t id)
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

/* ---- wake-ups ---- */

void fe_wake_logger(fe_t *fe)
{
    shm_wake(&fe->shm->logger_wake);
}

void fe_wake_store(fe_t *fe)
{
    shm_wake(&fe->shm->store_wake);
}

/* Move the ready entries at the head of c's FIFO to its output buffer. */
static void conn_collect(fe_conn_t *c)
{
    fe_t *fe = c->fe;
    while (c->head && c->head->state == FE_READY) {
        fe_reply_t *r = c->head;
        buf_append(&c->out, r->data, r->len);
        c->head = r->next;
        if (!c->head) c->tail = NULL;
        c->npending--;
        reply_free(fe, r);
    }
    if (!c->head) wlist_del(c);
}

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

/* Resolve entries whose condition holds; returns how many became ready. */
static uint64_t fe_collect_durable(fe_t *fe)
{
    uint64_t durable = atomic_load_explicit(&fe->shm->durable_lsn, memory_order_acquire);
    int failed = atomic_load(&fe->shm->logger_state) == LOGGER_FAILED;
    uint64_t done = 0;
    for (fe_conn_t *c = fe->wlist, *next; c; c = next) {
        next = c->wnext;
        for (fe_reply_t *r = c->head; r; r = r->next) {
            if (r->state == FE_WAIT_DURABLE && r->lsn_end <= durable) {
                r->state = FE_READY;
                fe->nwaiting--;
                done++;
            } else if (failed && r->is_write && r->state != FE_READY && r->lsn_end > durable) {
                /* Never to become durable: say so instead of OK (contract 6). */
                if (r->state == FE_WAIT_STORE) map_take(fe, r->kind, r->id);
                size_t n;
                const char *m = logger_failed_reply(fe, &n);
                char *copy = malloc(n);
                if (!copy) abort();
                memcpy(copy, m, n);
                r->data = copy;
                r->len = (uint32_t)n;
                r->owns_data = 1;
                r->state = FE_READY;
                fe->nwaiting--;
                done++;
            } else if (r->state == FE_WAIT_DURABLE && !failed) {
                /* A connection's records are in LSN order: nothing after
                 * this one is durable either. */
                break;
            }
        }
        conn_collect(c);
        conn_flush(c);
    }
    return done;
}

/* Take the store's replies off the channel. */
static uint64_t fe_collect_store(fe_t *fe)
{
    uint64_t done = 0;
    const void *msg;
    uint32_t len;
    while ((msg = chan_peek(fe->from_store, &len)) != NULL) {
        store_reply_t h;
        if (len >= sizeof(h)) {
            memcpy(&h, msg, sizeof(h));
            fe_reply_t *r = map_take(fe, (uint8_t)h.kind, h.id);
            if (r && h.len <= len - sizeof(h)) {
                char *copy = malloc(h.len ? h.len : 1);
                if (!copy) abort();
                memcpy(copy, (const char *)msg + sizeof(h), h.len);
                fe->nwaiting--;
                done++;
                if (!r->conn) {
                    /* The client left; the entry was only kept for this. */
                    free(copy);
                    reply_free(fe, r);
                } else {
                    r->data = copy;
                    r->len = h.len;
                    r->owns_data = 1;
                    r->state = FE_READY;
                    fe_conn_t *c = r->conn;
                    if (h.kind == STORE_REPLY_READ && --c->reads_outstanding == 0 && c->blocked)
                        event_active(fe->ev_retry, EV_TIMEOUT, 0); /* a write waits for it */
                    /* transactions (multi.c): an EXEC whose SELECT waits for its outcome */
                    if (h.kind == STORE_REPLY_WRITE && c->exec_wait_lsn)
                        fe_multi_write_reply(c, h.id, copy, h.len);
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
    for (fe_conn_t *c = fe->wlist; c; c = c->wnext)
        for (fe_reply_t *r = c->head; r; r = r->next)
            if (r->state == FE_WAIT_DURABLE) {
                if (r->lsn_end <= durable) return 1;
                break;
            }
    return 0;
}

/* Resolve whatever completed; arm the wake-up flag while anything waits. */
static void fe_check_completions(fe_t *fe)
{
    shm_waiter_t *w = &fe->shm->fe[fe->slot].wake;
    for (;;) {
        uint64_t n = fe_collect_store(fe);
        n += fe_collect_durable(fe);
        (void)n;
        if (!fe->nwaiting) {
            shm_waiter_disarm(w);
            return;
        }
        shm_waiter_arm(w);
        if (!fe_has_completion(fe)) return;
        shm_waiter_disarm(w);
    }
}

static void on_wake(evutil_socket_t fd, short what, void *arg)
{
    fe_t *fe = arg;
    shm_waiter_drain(&fe->shm->fe[fe->slot].wake);
    fe_check_completions(fe);
}

/* ---- connections ---- */

static void conn_free(fe_conn_t *c)
{
    fe_t *fe = c->fe;
    wlist_del(c);
    for (fe_reply_t *r = c->head, *next; r; r = next) {
        next = r->next;
        if (r->state == FE_WAIT_STORE) {
            r->conn = NULL; /* freed when the store's reply arrives */
        } else {
            if (r->state == FE_WAIT_DURABLE) fe->nwaiting--;
            reply_free(fe, r);
        }
    }
    if (c->blocked) fe->nblocked--;
    if (c->prev) c->prev->next = c->next;
    else fe->conns = c->next;
    if (c->next) c->next->prev = c->prev;
    event_free(c->ev_read);
    event_free(c->ev_write);
    close(c->fd);
    buf_free(&c->in);
    buf_free(&c->out);
    resp_cmd_free(&c->cmd);
    fe_multi_clear(c);
    free(c->user);
    free(c->name);
    free(c->lib_name);
    free(c->lib_ver);
    atomic_fetch_sub(&fe->shm->fe[fe->slot].clients, 1);
    fe->nconns--;
    free(c);
}

static void conn_close(fe_conn_t *c)
{
    conn_free(c);
}

/* A client that does not read its replies: over the hard limit, or over the
 * soft one for too long, it is disconnected (as Redis' client-output-buffer-
 * limit does), so the server's memory stays bounded. */
static int conn_over_output_limit(fe_conn_t *c)
{
    const config_t *cfg = c->fe->cfg;
    uint64_t pending = c->out.len - c->out_off;
    if (cfg->obuf_hard && pending > cfg->obuf_hard) {
        log_info("Client closed for overcoming of output buffer limits (%" PRIu64 " bytes)", pending);
        return 1;
    }
    if (cfg->obuf_soft && pending > cfg->obuf_soft) {
        int64_t now = shm_now_ms();
        if (!c->obuf_soft_since_ms) c->obuf_soft_since_ms = now;
        else if (now - c->obuf_soft_since_ms >= (int64_t)cfg->obuf_soft_seconds * 1000) {
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
    conn_collect(c);
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
                return 0;
            }
            conn_close(c);
            return -1;
        }
        c->out_off += (size_t)n;
    }
    c->out_off = 0;
    c->obuf_soft_since_ms = 0;
    buf_reset(&c->out);
    if (c->out.cap > 1024 * 1024) {
        buf_free(&c->out);
        buf_init(&c->out);
    }
    if (c->closing && !c->head) {
        conn_close(c);
        return -1;
    }
    return 0;
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
    while (!c->closing && c->in.len > c->in_off) {
        if (c->npending >= MAX_PENDING_PER_CONN) {
            /* A client pipelining without reading: stop taking its input
             * until replies drain (the retry timer looks again). */
            fe_block(c, 1);
            break;
        }
        size_t avail = c->in.len - c->in_off;
        if (avail < c->need) break;
        const char *err = NULL;
        size_t need = 0;
        const char *start = c->in.data + c->in_off;
        int64_t used = resp_parse(&fe->limits, start, avail, &c->cmd, &err, &need);
        if (used == RESP_NEED_MORE) {
            c->need = need;
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
            int rc = fe_dispatch(c, start, &c->cmd);
            if (rc == -EAGAIN || rc == -EBUSY) {
                /* Ring or channel full (retry soon), or a write behind
                 * this connection's reads (retried when they are
                 * answered): keep the bytes. */
                fe_block(c, rc == -EAGAIN);
                break;
            }
            atomic_fetch_add_explicit(&fe->shm->fe[fe->slot].total_cmds, 1, memory_order_relaxed);
        }
        c->in_off += (size_t)used;
        if (c->blocked) {
            c->blocked = 0;
            fe->nblocked--;
        }
    }
    if (c->in_off == c->in.len) {
        buf_reset(&c->in);
        c->in_off = 0;
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
    buf_reserve(&c->in, READ_CHUNK);
    ssize_t n = recv(fd, c->in.data + c->in.len, c->in.cap - c->in.len, 0);
    if (n <= 0) {
        if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
        conn_close(c);
        return;
    }
    c->in.len += (size_t)n;
    c->last_active_ms = shm_now_ms();
    if (c->in.len - c->in_off > fe->cfg->client_query_buffer_limit) {
        log_info("Closing client that reached max query buffer length (%zu bytes)",
                 c->in.len - c->in_off);
        conn_close(c);
        return;
    }
    conn_process_input(c);
    /* Flush before looking at completions: that may close c. */
    if (conn_flush(c) == 0) fe_check_completions(fe);
}

static fe_conn_t *conn_new(fe_t *fe, int fd)
{
    fe_conn_t *c = calloc(1, sizeof(*c));
    if (!c) return NULL;
    c->fe = fe;
    c->fd = fd;
    c->id = ++fe->next_conn_id;
    buf_init(&c->in);
    buf_init(&c->out);
    resp_cmd_init(&c->cmd);
    c->last_active_ms = shm_now_ms();
    c->created_ms = c->last_active_ms;
    c->proto = 2;
    c->authenticated = 1;
    c->ev_read = event_new(fe->base, fd, EV_READ | EV_PERSIST, on_readable, c);
    c->ev_write = event_new(fe->base, fd, EV_WRITE, on_writable, c);
    event_add(c->ev_read, NULL);
    c->next = fe->conns;
    if (fe->conns) fe->conns->prev = c;
    fe->conns = c;
    fe->nconns++;
    atomic_fetch_add(&fe->shm->fe[fe->slot].clients, 1);
    atomic_fetch_add(&fe->shm->fe[fe->slot].total_conns, 1);
    return c;
}

static uint64_t total_clients(fe_t *fe)
{
    uint64_t n = 0;
    for (uint32_t i = 0; i < fe->shm->nfrontends; i++) n += atomic_load(&fe->shm->fe[i].clients);
    return n;
}

static void on_accept(evutil_socket_t lfd, short what, void *arg)
{
    fe_t *fe = arg;
    /* Several per wake-up: under a connection storm one epoll round trip
     * per accept would be the bottleneck. */
    for (int i = 0; i < 32; i++) {
        int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) return; /* EAGAIN: another frontend took it, or none left */
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        if (total_clients(fe) >= (uint64_t)fe->cfg->maxclients) {
            static const char msg[] = "-ERR max number of clients reached\r\n";
            ssize_t w = send(fd, msg, sizeof(msg) - 1, MSG_NOSIGNAL);
            (void)w;
            close(fd);
            continue;
        }
        if (!conn_new(fe, fd)) close(fd);
    }
}

/* Retry connections that waited for ring or channel space. */
static void on_retry(evutil_socket_t fd, short what, void *arg)
{
    fe_t *fe = arg;
    for (fe_conn_t *c = fe->conns, *next; c; c = next) {
        next = c->next;
        if (!c->blocked || fe->draining) continue;
        c->blocked = 0;
        fe->nblocked--;
        conn_resume(c);
        conn_process_input(c);
        if (conn_flush(c) != 0) continue;
    }
    fe_check_completions(fe);
}

/* Shutdown: stop accepting and reading; exit once every reply is out. */
static void fe_drain(fe_t *fe)
{
    if (!fe->draining) {
        fe->draining = 1;
        for (int i = 0; i < fe->nlisten; i++) event_del(fe->ev_listen[i]);
        for (fe_conn_t *c = fe->conns; c; c = c->next) conn_pause(c);
    }
    fe_check_completions(fe);
    int busy = 0;
    for (fe_conn_t *c = fe->conns, *next; c; c = next) {
        next = c->next;
        if (c->head || c->out.len > c->out_off) busy = 1;
        else conn_close(c);
    }
    if (!busy) event_base_loopbreak(fe->base);
}

/* Periodic: notice shutdown and the master's death. */
static void on_timer(evutil_socket_t fd, short what, void *arg)
{
    fe_t *fe = arg;
    if (!shm_master_alive(fe->shm)) {
        event_base_loopbreak(fe->base);
        return;
    }
    if (atomic_load(&fe->shm->shutdown) >= 1) fe_drain(fe);
    else fe_check_completions(fe); /* belt and braces for a lost wake-up */
    if (atomic_load(&fe->shm->tick_wanted) && atomic_exchange(&fe->shm->tick_wanted, 0))
        fe_submit_tick(fe);
    if (fe->cfg->timeout > 0) {
        /* Idle clients: no input for `timeout` seconds and nothing owed
         * to them (a client waiting for a reply is not idle). */
        int64_t now = shm_now_ms();
        if (now - fe->last_idle_scan_ms >= 1000) {
            fe->last_idle_scan_ms = now;
            for (fe_conn_t *c = fe->conns, *next; c; c = next) {
                next = c->next;
                if (!c->head && now - c->last_active_ms > (int64_t)fe->cfg->timeout * 1000)
                    conn_close(c);
            }
        }
    }
}

int frontend_main(shm_t *shm, const config_t *cfg, int slot, const int *listen_fds, int nlisten)
{
    fe_t *fe = calloc(1, sizeof(*fe));
    if (!fe) return 1;
    fe->shm = shm;
    fe->cfg = cfg;
    fe->slot = slot;
    fe->ring = shm_ring(shm);
    fe->claimer = &shm->claimers[slot];
    fe->to_store = shm_to_store(shm, slot);
    fe->from_store = shm_from_store(shm, slot);
    fe->limits.max_bulk_len = cfg->proto_max_bulk_len;
    fe->limits.max_args = cfg->max_args;
    fe->limits.max_inline_len = cfg->max_inline_len;
    uint32_t inc = atomic_load(&shm->fe[slot].incarnation);
    /* Read ids carry the incarnation, so a reply the store meant for our
     * predecessor can never match a request of ours. */
    fe->next_read_id = (uint64_t)inc << 40;
    atomic_store(&shm->fe[slot].pid, getpid());
    atomic_store(&shm->fe[slot].clients, 0);

    /* A predecessor may have died holding a ring claim: wait until the
     * logger has dealt with it before claiming through the same slot. */
    while (!ring_claimer_adopt(fe->claimer, atomic_load(&shm->durable_lsn))) {
        if (!shm_master_alive(shm)) return 1;
        usleep(1000);
    }

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
    struct timeval tick = {0, 10000};
    event_add(fe->ev_timer, &tick);
    log_debug("Frontend %d ready", slot);
    event_base_dispatch(fe->base);
    log_debug("Frontend %d stopped", slot);
    return 0;
}
