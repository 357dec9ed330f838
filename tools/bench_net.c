/*
 * bench_net.c - atticdb-bench's network writers and readers: N connections to
 * a Redis-protocol server, each with exactly one request in flight, driven by
 * libevent so that 1,024 writers need no more than one thread.
 *
 * Runs in the benchmark client, on --threads event-loop threads (default 1),
 * each owning a contiguous slice of the connections and its own samples; the
 * slices are merged after every thread has joined, so no sample is shared
 * while the run is on.
 *
 * Invariants:
 *  - a connection never has two requests outstanding: the next one is built
 *    only after the previous reply has been framed completely (BENCHMARK.md:
 *    "a writer is one connection with exactly one request in flight");
 *  - latency = time the reply's last bytes were read minus the time taken
 *    just before the request's write(2); a think pause is never inside it;
 *  - every loop is bounded: by -n, by --duration, or by the per-request
 *    timeout, after which the connection counts an error and stops.
 */
#include "bench.h"
#include "bench_resp.h"

#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

/* A reply slower than this is counted as an error and ends the connection:
 * it keeps a wedged server from hanging the benchmark forever. */
#define NET_REQUEST_TIMEOUT_S 30

typedef struct net_thread net_thread_t;

typedef struct net_conn {
    net_thread_t *th;
    int index; /* global writer index: seeds its think-time generator */
    int fd;
    struct event *ev_read, *ev_write, *ev_timer;
    bench_buf_t out;
    size_t out_off;
    char *in;
    size_t in_len, in_cap;
    long acked; /* replies received on this connection */
    long seq;   /* requests sent on this connection */
    uint64_t sent_ns;
    int in_flight;
    int finished;
    bench_think_t think;
    bench_rng_t key_rng;
} net_conn_t;

struct net_thread {
    const bench_config_t *cfg;
    const char *value;
    const bench_zipf_t *zipf; /* NULL: uniform key choice */
    struct event_base *base;
    net_conn_t *conns;
    int nconns;
    int active;
    uint64_t deadline_ns; /* 0 = none */
    uint64_t first_send_ns, last_reply_ns;
    bench_result_t res;
    pthread_t tid;
};

int bench_format_key(char *out, size_t cap, const char *prefix, const char *kind, long a, long b)
{
    if (b < 0) return snprintf(out, cap, "%s:%s%ld", prefix, kind, a);
    return snprintf(out, cap, "%s:%s%ld:%ld", prefix, kind, a, b);
}

const char *bench_key_kind(enum bench_command c)
{
    /* The command is part of the key so that an RPUSH run after an APPEND
     * run on the same server never meets a key of the wrong type. */
    static const char *kinds[] = {"set:w", "append:w", "rpush:w", "xadd:w", "k"};
    return kinds[c];
}

int bench_net_connect(const bench_config_t *cfg)
{
    if (cfg->socket) {
        struct sockaddr_un sa;
        memset(&sa, 0, sizeof(sa));
        sa.sun_family = AF_UNIX;
        if (strlen(cfg->socket) >= sizeof(sa.sun_path)) {
            fprintf(stderr, "atticdb-bench: socket path too long: %s\n", cfg->socket);
            return -1;
        }
        strcpy(sa.sun_path, cfg->socket);
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0) return -1;
        if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
            close(fd);
            return -1;
        }
        return fd;
    }
    char port[16];
    snprintf(port, sizeof(port), "%d", cfg->port);
    struct addrinfo hints, *ai = NULL;
    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    if (getaddrinfo(cfg->host, port, &hints, &ai) != 0) return -1;
    int fd = -1;
    for (struct addrinfo *p = ai; p; p = p->ai_next) {
        fd = socket(p->ai_family, p->ai_socktype | SOCK_CLOEXEC, p->ai_protocol);
        if (fd < 0) continue;
        if (connect(fd, p->ai_addr, p->ai_addrlen) == 0) break;
        close(fd);
        fd = -1;
    }
    freeaddrinfo(ai);
    if (fd >= 0) {
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    }
    return fd;
}

/* Builds the next request of `c` into c->out. */
static int conn_build(net_conn_t *c)
{
    const bench_config_t *cfg = c->th->cfg;
    char key[256] = "";
    const char *argv[5];
    size_t lens[5];
    int argc = 0;
    c->out.len = 0;
    c->out_off = 0;
    switch (cfg->command) {
    case CMD_SET:
        bench_format_key(key, sizeof(key), cfg->key_prefix, bench_key_kind(cfg->command), c->index,
                         c->seq);
        argv[argc++] = "SET";
        break;
    case CMD_APPEND:
        bench_format_key(key, sizeof(key), cfg->key_prefix, bench_key_kind(cfg->command), c->index,
                         -1);
        argv[argc++] = "APPEND";
        break;
    case CMD_RPUSH:
        bench_format_key(key, sizeof(key), cfg->key_prefix, bench_key_kind(cfg->command), c->index,
                         -1);
        argv[argc++] = "RPUSH";
        break;
    case CMD_XADD:
        bench_format_key(key, sizeof(key), cfg->key_prefix, bench_key_kind(cfg->command), c->index,
                         -1);
        argv[argc++] = "XADD";
        break;
    case CMD_GET: {
        uint64_t k = c->th->zipf ? bench_zipf_next(c->th->zipf, &c->key_rng)
                                 : bench_rng_below_incl(&c->key_rng, (uint64_t)cfg->keys - 1);
        bench_format_key(key, sizeof(key), cfg->key_prefix, "k", (long)k, -1);
        argv[argc++] = "GET";
        break;
    }
    }
    for (int i = 0; i < argc; i++)
        lens[i] = strlen(argv[i]);
    argv[argc] = key;
    lens[argc++] = strlen(key);
    if (cfg->command == CMD_XADD) {
        argv[argc] = "*";
        lens[argc++] = 1;
        argv[argc] = "v";
        lens[argc++] = 1;
    }
    if (cfg->command != CMD_GET) {
        argv[argc] = c->th->value;
        lens[argc++] = (size_t)cfg->value_size;
    }
    return bench_resp_append_cmd(&c->out, argc, argv, lens);
}

static void conn_finish(net_conn_t *c)
{
    if (c->finished) return;
    c->finished = 1;
    event_del(c->ev_read);
    event_del(c->ev_write);
    event_del(c->ev_timer);
    close(c->fd);
    c->fd = -1;
    if (--c->th->active == 0) event_base_loopbreak(c->th->base);
}

static void conn_fail(net_conn_t *c, const char *why)
{
    net_thread_t *th = c->th;
    th->res.errors++;
    /* One line per failed connection: enough to diagnose, bounded by -c. */
    fprintf(stderr, "atticdb-bench: connection %d: %s\n", c->index, why);
    conn_finish(c);
}

/* Writes what is left of c->out; arms the write event if the socket is full. */
static void conn_flush(net_conn_t *c)
{
    while (c->out_off < c->out.len) {
        ssize_t n = write(c->fd, c->out.data + c->out_off, c->out.len - c->out_off);
        if (n > 0) {
            c->out_off += (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            event_add(c->ev_write, NULL);
            return;
        }
        conn_fail(c, n < 0 ? strerror(errno) : "short write");
        return;
    }
}

static void conn_send(net_conn_t *c)
{
    net_thread_t *th = c->th;
    if (th->deadline_ns && bench_now_ns() >= th->deadline_ns) {
        conn_finish(c);
        return;
    }
    if (conn_build(c) < 0) {
        conn_fail(c, "out of memory");
        return;
    }
    c->in_flight = 1;
    c->seq++;
    th->res.sent++;
    struct timeval tv = {NET_REQUEST_TIMEOUT_S, 0};
    event_add(c->ev_timer, &tv);
    c->sent_ns = bench_now_ns();
    if (th->first_send_ns == 0) th->first_send_ns = c->sent_ns;
    conn_flush(c);
}

/* Decides what a connection does after a reply (or at the start): stop, pause
 * for its think time, or send at once. */
static void conn_next(net_conn_t *c)
{
    const bench_config_t *cfg = c->th->cfg;
    if (cfg->requests > 0 && c->seq >= cfg->requests) {
        conn_finish(c);
        return;
    }
    if (c->th->deadline_ns && bench_now_ns() >= c->th->deadline_ns) {
        conn_finish(c);
        return;
    }
    uint64_t pause_us = bench_think_next_us(&c->think);
    if (cfg->think_ms > 0) {
        struct timeval tv = {(time_t)(pause_us / 1000000), (suseconds_t)(pause_us % 1000000)};
        event_add(c->ev_timer, &tv);
        return;
    }
    conn_send(c);
}

static void on_timer(evutil_socket_t fd, short what, void *arg)
{
    net_conn_t *c = arg;
    if (c->in_flight) {
        conn_fail(c, "no reply within the request timeout");
        return;
    }
    conn_send(c);
}

static void on_write(evutil_socket_t fd, short what, void *arg)
{
    conn_flush(arg);
}

static void on_read(evutil_socket_t fd, short what, void *arg)
{
    net_conn_t *c = arg;
    net_thread_t *th = c->th;
    if (c->in_cap - c->in_len < 4096) {
        size_t cap = c->in_cap ? c->in_cap * 2 : 8192;
        char *p = realloc(c->in, cap);
        if (!p) {
            conn_fail(c, "out of memory");
            return;
        }
        c->in = p;
        c->in_cap = cap;
    }
    ssize_t n = read(c->fd, c->in + c->in_len, c->in_cap - c->in_len);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
    if (n <= 0) {
        conn_fail(c, n == 0 ? "server closed the connection" : strerror(errno));
        return;
    }
    uint64_t now = bench_now_ns();
    c->in_len += (size_t)n;
    if (!c->in_flight) {
        conn_fail(c, "reply without a request");
        return;
    }
    size_t used = 0;
    int kind = 0;
    int r = bench_resp_scan(c->in, c->in_len, &used, &kind);
    if (r == 0) return;
    if (r < 0 || used != c->in_len) {
        conn_fail(c, r < 0 ? "protocol error in reply" : "more than one reply");
        return;
    }
    event_del(c->ev_timer);
    c->in_flight = 0;
    c->acked++;
    th->res.acked++;
    th->last_reply_ns = now;
    if (bench_samples_add(&th->res.samples, now - c->sent_ns) < 0) th->res.errors++;
    if (kind == BENCH_REPLY_ERROR) {
        th->res.errors++;
        /* Report the first error of each connection verbatim. */
        if (th->res.errors <= 5) {
            int len = (int)(used > 200 ? 200 : used - 2);
            fprintf(stderr, "atticdb-bench: connection %d: error reply: %.*s\n", c->index, len,
                    c->in);
        }
    } else if (kind == BENCH_REPLY_NIL) {
        th->res.misses++;
    }
    c->in_len = 0;
    conn_next(c);
}

static void *thread_main(void *arg)
{
    net_thread_t *th = arg;
    for (int i = 0; i < th->nconns; i++)
        conn_next(&th->conns[i]);
    if (th->active > 0) event_base_dispatch(th->base);
    return NULL;
}

int bench_net_run(const bench_config_t *cfg, bench_result_t *res)
{
    int nthreads = cfg->threads < 1 ? 1 : cfg->threads;
    if (nthreads > cfg->writers) nthreads = cfg->writers;
    int rc = -1;
    char *value = malloc((size_t)cfg->value_size + 1);
    net_thread_t *threads = calloc((size_t)nthreads, sizeof(*threads));
    net_conn_t *conns = calloc((size_t)cfg->writers, sizeof(*conns));
    bench_zipf_t zipf;
    int have_zipf = 0;
    if (!value || !threads || !conns) goto out;
    bench_fill_value(value, cfg->value_size, cfg->seed);
    if (cfg->command == CMD_GET && cfg->zipf_theta > 0) {
        if (bench_zipf_init(&zipf, (uint64_t)cfg->keys, cfg->zipf_theta) < 0) goto out;
        have_zipf = 1;
    }
    for (int i = 0; i < cfg->writers; i++)
        conns[i].fd = -1;

    /* Connect everything before the clock starts: connection setup is not
     * what is being measured. */
    int per = cfg->writers / nthreads, extra = cfg->writers % nthreads, next = 0;
    for (int t = 0; t < nthreads; t++) {
        net_thread_t *th = &threads[t];
        th->cfg = cfg;
        th->value = value;
        th->zipf = have_zipf ? &zipf : NULL;
        bench_samples_init(&th->res.samples);
        th->base = event_base_new();
        if (!th->base) goto out;
        th->conns = &conns[next];
        th->nconns = per + (t < extra ? 1 : 0);
        next += th->nconns;
        for (int i = 0; i < th->nconns; i++) {
            net_conn_t *c = &th->conns[i];
            c->th = th;
            c->index = (int)(c - conns);
            c->fd = bench_net_connect(cfg);
            if (c->fd < 0) {
                fprintf(stderr, "atticdb-bench: cannot connect connection %d to %s: %s\n", c->index,
                        cfg->socket ? cfg->socket : cfg->host, strerror(errno));
                goto out;
            }
            evutil_make_socket_nonblocking(c->fd);
            c->ev_read = event_new(th->base, c->fd, EV_READ | EV_PERSIST, on_read, c);
            c->ev_write = event_new(th->base, c->fd, EV_WRITE, on_write, c);
            c->ev_timer = evtimer_new(th->base, on_timer, c);
            if (!c->ev_read || !c->ev_write || !c->ev_timer) goto out;
            event_add(c->ev_read, NULL);
            bench_think_init(&c->think, (uint64_t)(cfg->think_ms * 1000.0 + 0.5),
                             (uint64_t)c->index, cfg->seed);
            bench_rng_seed(&c->key_rng, (uint64_t)c->index * 7919 + cfg->seed + 1);
            th->active++;
        }
    }

    uint64_t start = bench_now_ns();
    uint64_t deadline = cfg->duration_s > 0 ? start + (uint64_t)(cfg->duration_s * 1e9) : 0;
    int started = 0;
    for (int t = 0; t < nthreads; t++) {
        threads[t].deadline_ns = deadline;
        if (pthread_create(&threads[t].tid, NULL, thread_main, &threads[t]) != 0) {
            fprintf(stderr, "atticdb-bench: cannot start thread %d\n", t);
            break;
        }
        started++;
    }
    for (int t = 0; t < started; t++)
        pthread_join(threads[t].tid, NULL);
    if (started < nthreads) goto out;

    uint64_t first = 0, last = 0;
    for (int t = 0; t < nthreads; t++) {
        net_thread_t *th = &threads[t];
        if (bench_samples_merge(&res->samples, &th->res.samples) < 0) res->errors++;
        res->sent += th->res.sent;
        res->acked += th->res.acked;
        res->errors += th->res.errors;
        res->misses += th->res.misses;
        if (th->first_send_ns && (!first || th->first_send_ns < first)) first = th->first_send_ns;
        if (th->last_reply_ns > last) last = th->last_reply_ns;
    }
    res->elapsed_s = last > first ? (double)(last - first) / 1e9 : 0;
    rc = 0;
out:
    for (int i = 0; conns && i < cfg->writers; i++) {
        net_conn_t *c = &conns[i];
        if (c->ev_read) event_free(c->ev_read);
        if (c->ev_write) event_free(c->ev_write);
        if (c->ev_timer) event_free(c->ev_timer);
        if (c->fd >= 0) close(c->fd);
        bench_buf_free(&c->out);
        free(c->in);
    }
    for (int t = 0; threads && t < nthreads; t++) {
        if (threads[t].base) event_base_free(threads[t].base);
        bench_samples_free(&threads[t].res.samples);
    }
    free(conns);
    free(threads);
    free(value);
    return rc;
}

/* Reads replies on a blocking fd until `want` whole replies have arrived.
 * Returns the number of error replies, or -1 on I/O or protocol failure. */
static long read_replies(int fd, long want, char **buf, size_t *cap)
{
    size_t len = 0;
    long got = 0, errors = 0;
    while (got < want) {
        if (*cap - len < 65536) {
            size_t ncap = *cap ? *cap * 2 : 1 << 20;
            char *p = realloc(*buf, ncap);
            if (!p) return -1;
            *buf = p;
            *cap = ncap;
        }
        ssize_t n = read(fd, *buf + len, *cap - len);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return -1;
        len += (size_t)n;
        size_t off = 0, used;
        int kind, r;
        while (got < want && (r = bench_resp_scan(*buf + off, len - off, &used, &kind)) == 1) {
            if (kind == BENCH_REPLY_ERROR) errors++;
            off += used;
            got++;
        }
        if (got < want && r < 0) return -1;
        memmove(*buf, *buf + off, len - off);
        len -= off;
    }
    return errors;
}

int bench_write_all(int fd, const char *p, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

int bench_net_load(const bench_config_t *cfg)
{
    /* Pipelined batches on one connection: loading is setup, not measured,
     * so it may use the fastest way the protocol allows. */
    enum { BATCH = 1000 };
    int fd = bench_net_connect(cfg);
    if (fd < 0) {
        fprintf(stderr, "atticdb-bench: --load: cannot connect: %s\n", strerror(errno));
        return -1;
    }
    char *value = malloc((size_t)cfg->value_size + 1);
    bench_buf_t out = {0};
    char *in = NULL;
    size_t in_cap = 0;
    int rc = -1;
    if (!value) goto out;
    bench_fill_value(value, cfg->value_size, cfg->seed);
    for (long base = 0; base < cfg->keys; base += BATCH) {
        long n = cfg->keys - base < BATCH ? cfg->keys - base : BATCH;
        out.len = 0;
        for (long i = 0; i < n; i++) {
            char key[256];
            bench_format_key(key, sizeof(key), cfg->key_prefix, "k", base + i, -1);
            const char *argv[3] = {"SET", key, value};
            size_t lens[3] = {3, strlen(key), (size_t)cfg->value_size};
            if (bench_resp_append_cmd(&out, 3, argv, lens) < 0) goto out;
        }
        if (bench_write_all(fd, out.data, out.len) < 0) {
            fprintf(stderr, "atticdb-bench: --load: write failed\n");
            goto out;
        }
        long errors = read_replies(fd, n, &in, &in_cap);
        if (errors != 0) {
            fprintf(stderr, "atticdb-bench: --load: %s\n",
                    errors < 0 ? "connection failed" : "server returned errors");
            goto out;
        }
    }
    rc = 0;
out:
    close(fd);
    free(value);
    free(in);
    bench_buf_free(&out);
    return rc;
}

int bench_net_wait_ready(const bench_config_t *cfg)
{
    uint64_t deadline = bench_now_ns() + (uint64_t)(cfg->wait_ready_s * 1e9);
    for (;;) {
        int fd = bench_net_connect(cfg);
        if (fd >= 0) {
            struct timeval tv = {1, 0};
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
            char buf[256];
            ssize_t n = -1;
            if (bench_write_all(fd, "*1\r\n$4\r\nPING\r\n", 14) == 0)
                n = read(fd, buf, sizeof(buf));
            close(fd);
            if (n >= 5 && memcmp(buf, "+PONG", 5) == 0) return 0;
        }
        if (bench_now_ns() >= deadline) return -1;
        usleep(50 * 1000);
    }
}
