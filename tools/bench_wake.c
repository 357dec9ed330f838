/*
 * bench_wake.c - atticdb-bench --wake: how long a blocked reader waits after
 * the write that serves it has been acknowledged.
 *
 * A round: each of -c readers sends one blocking read on its own key
 * (BLPOP key 0, or XREAD BLOCK 0 STREAMS key $); a control connection polls
 * INFO clients until the server counts every reader as blocked; then the one
 * writer sends one push per reader key, pipelined (RPUSH, or XADD key * ...).
 * The sample of reader i is the time its reply was read minus the time the
 * writer read the ack of the push to key i: the wake-up cost beyond the
 * writer's own durable ack (issue 14's target: p99 under 1 ms). A reader
 * answered before the writer's ack counts as 0 and as "early"; both read in
 * the same poll round count as 0, not early (one clock reading per round).
 *
 * Readers are placed on another frontend than the writer when the server
 * names its frontend in INFO server (AtticDB does; Redis does not): a reader
 * reconnects up to WAKE_PLACE_TRIES times, and the result line says how many
 * readers ended up across.
 *
 * Invariants: every wait is bounded (WAKE_TIMEOUT_MS per round, the blocked
 * count by WAKE_BLOCKED_WAIT_MS); one request in flight per reader; the
 * writer has exactly one pipeline of -c pushes in flight per round.
 */
#include "bench.h"
#include "bench_resp.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define WAKE_TIMEOUT_MS      30000
#define WAKE_BLOCKED_WAIT_MS 5000
#define WAKE_PLACE_TRIES     16

typedef struct wake_conn {
    int fd;
    char *in;
    size_t in_len, in_cap;
} wake_conn_t;

/* Room for at least 4 KiB more input (and a NUL) in c->in. */
static int wake_grow(wake_conn_t *c)
{
    if (c->in_cap - c->in_len >= 4096) return 0;
    size_t ncap = c->in_cap ? c->in_cap * 2 : 65536;
    char *p = realloc(c->in, ncap);
    if (!p) return -1;
    c->in = p;
    c->in_cap = ncap;
    return 0;
}

/* Reads what is there on `c` and consumes complete replies, up to `want`.
 * Returns the replies consumed (error replies counted in *errors), or -1 on
 * EOF, I/O or protocol failure. */
static int wake_read(wake_conn_t *c, int want, long *errors)
{
    if (wake_grow(c) < 0) return -1;
    ssize_t n = read(c->fd, c->in + c->in_len, c->in_cap - c->in_len);
    if (n < 0 && errno == EINTR) return 0;
    if (n <= 0) return -1;
    c->in_len += (size_t)n;
    size_t off = 0, used;
    int kind, got = 0, r = 0;
    while (got < want && (r = bench_resp_scan(c->in + off, c->in_len - off, &used, &kind)) == 1) {
        if (kind == BENCH_REPLY_ERROR) (*errors)++;
        off += used;
        got++;
    }
    if (r < 0) return -1;
    memmove(c->in, c->in + off, c->in_len - off);
    c->in_len -= off;
    return got;
}

/* Writes one request. Returns 0, or -1. */
static int wake_send(wake_conn_t *c, int argc, const char *const *argv)
{
    size_t lens[8];
    bench_buf_t out = {0};
    for (int i = 0; i < argc; i++)
        lens[i] = strlen(argv[i]);
    int rc = bench_resp_append_cmd(&out, argc, argv, lens);
    if (rc == 0) rc = bench_write_all(c->fd, out.data, out.len);
    bench_buf_free(&out);
    return rc;
}

/* One command, one whole reply, on a blocking fd; the reply is left in c->in
 * (NUL-terminated). Returns 0, or -1. */
static int wake_call(wake_conn_t *c, int argc, const char *const *argv)
{
    if (wake_send(c, argc, argv) < 0) return -1;
    c->in_len = 0;
    for (;;) {
        size_t used;
        int kind;
        if (c->in_len > 0 && bench_resp_scan(c->in, c->in_len, &used, &kind) == 1) break;
        if (wake_grow(c) < 0) return -1;
        ssize_t n = read(c->fd, c->in + c->in_len, c->in_cap - c->in_len - 1);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return -1;
        c->in_len += (size_t)n;
    }
    c->in[c->in_len] = '\0';
    c->in_len = 0;
    return 0;
}

/* The value of "\r\nfield:" in the last reply of `c`, or -1. */
static long wake_info_field(wake_conn_t *c, const char *section, const char *field)
{
    const char *argv[2] = {"INFO", section};
    if (wake_call(c, 2, argv) < 0) return -1;
    char pat[64];
    snprintf(pat, sizeof(pat), "\n%s:", field);
    const char *p = strstr(c->in, pat);
    return p ? atol(p + strlen(pat)) : -1;
}

static int wake_connect(const bench_config_t *cfg, wake_conn_t *c)
{
    memset(c, 0, sizeof(*c));
    c->fd = bench_net_connect(cfg);
    return c->fd < 0 ? -1 : 0;
}

static void wake_close(wake_conn_t *c)
{
    if (c->fd >= 0) close(c->fd);
    free(c->in);
    c->fd = -1;
    c->in = NULL;
}

/* Reconnects reader `r` until it is on another frontend than `fe_writer`
 * (bounded). Returns 1 when it is across, 0 when not (or the server has no
 * frontends to tell apart), -1 when a connection failed. */
static int wake_place(const bench_config_t *cfg, wake_conn_t *r, long fe_writer)
{
    if (fe_writer < 0) return 0;
    for (int t = 0; t < WAKE_PLACE_TRIES; t++) {
        long fe = wake_info_field(r, "server", "frontend");
        if (fe < 0) return -1;
        if (fe != fe_writer) return 1;
        wake_close(r);
        if (wake_connect(cfg, r) < 0) return -1;
    }
    return 0;
}

static void wake_key(char *out, size_t cap, const bench_config_t *cfg, int reader)
{
    bench_format_key(out, cap, cfg->key_prefix, "wake:r", reader, -1);
}

/* Sends every reader's blocking read and waits until the server counts them
 * all as blocked. Returns 0, or -1. */
static int wake_block_all(const bench_config_t *cfg, wake_conn_t *readers, wake_conn_t *ctl)
{
    for (int i = 0; i < cfg->writers; i++) {
        char key[256];
        wake_key(key, sizeof(key), cfg, i);
        const char *blpop[3] = {"BLPOP", key, "0"};
        const char *xread[6] = {"XREAD", "BLOCK", "0", "STREAMS", key, "$"};
        int rc = cfg->wake == BENCH_WAKE_XREAD ? wake_send(&readers[i], 6, xread)
                                               : wake_send(&readers[i], 3, blpop);
        if (rc < 0) return -1;
    }
    for (int waited = 0; waited < WAKE_BLOCKED_WAIT_MS * 10; waited++) {
        long n = wake_info_field(ctl, "clients", "blocked_clients");
        if (n < 0) return -1;
        if (n >= cfg->writers) return 0;
        usleep(100);
    }
    fprintf(stderr, "atticdb-bench: --wake: readers not all blocked after %d ms\n",
            WAKE_BLOCKED_WAIT_MS);
    return -1;
}

/* One round: the pushes, then every ack and every wake-up. Returns 0, or -1
 * (a failure that ends the run). */
static int wake_round(const bench_config_t *cfg, wake_conn_t *w, wake_conn_t *readers,
                      const char *value, uint64_t *ack_ns, bench_result_t *res, long *early)
{
    int nr = cfg->writers;
    bench_buf_t out = {0};
    for (int i = 0; i < nr; i++) {
        char key[256];
        wake_key(key, sizeof(key), cfg, i);
        const char *rpush[3] = {"RPUSH", key, value};
        const char *xadd[5] = {"XADD", key, "*", "v", value};
        size_t lens[5];
        const char *const *argv = cfg->wake == BENCH_WAKE_XREAD ? xadd : rpush;
        int argc = cfg->wake == BENCH_WAKE_XREAD ? 5 : 3;
        for (int a = 0; a < argc; a++)
            lens[a] = strlen(argv[a]);
        if (bench_resp_append_cmd(&out, argc, argv, lens) < 0) {
            bench_buf_free(&out);
            return -1;
        }
        ack_ns[i] = 0;
    }
    int rc = bench_write_all(w->fd, out.data, out.len);
    bench_buf_free(&out);
    if (rc < 0) return -1;
    res->sent += (uint64_t)nr;

    struct pollfd *pf = calloc((size_t)nr + 1, sizeof(*pf));
    uint64_t *wake_ns = calloc((size_t)nr, sizeof(*wake_ns));
    if (!pf || !wake_ns) {
        free(pf);
        free(wake_ns);
        return -1;
    }
    int acks = 0, wakes = 0;
    rc = 0;
    while (rc == 0 && (acks < nr || wakes < nr)) {
        int n = 0;
        pf[n++] = (struct pollfd){.fd = acks < nr ? w->fd : -1, .events = POLLIN};
        for (int i = 0; i < nr; i++)
            pf[n++] = (struct pollfd){.fd = wake_ns[i] ? -1 : readers[i].fd, .events = POLLIN};
        int ready = poll(pf, (nfds_t)n, WAKE_TIMEOUT_MS);
        if (ready < 0 && errno == EINTR) continue;
        if (ready <= 0) {
            fprintf(stderr, "atticdb-bench: --wake: no reply within %d ms\n", WAKE_TIMEOUT_MS);
            rc = -1;
            break;
        }
        uint64_t now = bench_now_ns();
        if (pf[0].revents) {
            long errors = 0;
            int got = wake_read(w, nr - acks, &errors);
            if (got < 0) rc = -1;
            for (int k = 0; k < got; k++)
                ack_ns[acks++] = now;
            res->errors += (uint64_t)errors;
        }
        for (int i = 0; i < nr && rc == 0; i++) {
            if (!pf[i + 1].revents) continue;
            long errors = 0;
            int got = wake_read(&readers[i], 1, &errors);
            if (got < 0) rc = -1;
            if (got == 1) {
                wake_ns[i] = now ? now : 1;
                wakes++;
                res->acked++;
                res->errors += (uint64_t)errors;
            }
        }
    }
    for (int i = 0; rc == 0 && i < nr; i++) {
        uint64_t d = 0;
        if (wake_ns[i] >= ack_ns[i])
            d = wake_ns[i] - ack_ns[i];
        else
            (*early)++;
        if (bench_samples_add(&res->samples, d) < 0) res->errors++;
    }
    free(pf);
    free(wake_ns);
    return rc;
}

int bench_wake_run(const bench_config_t *cfg, bench_result_t *res, long *across, long *early)
{
    int nr = cfg->writers;
    long rounds = cfg->requests > 0 ? cfg->requests : LONG_MAX;
    wake_conn_t w, ctl, *readers = calloc((size_t)nr, sizeof(*readers));
    uint64_t *ack_ns = calloc((size_t)nr, sizeof(*ack_ns));
    char *value = malloc((size_t)cfg->value_size + 1);
    int rc = -1;
    w.fd = ctl.fd = -1;
    w.in = ctl.in = NULL;
    *across = *early = 0;
    if (!readers || !ack_ns || !value) goto out;
    for (int i = 0; i < nr; i++)
        readers[i].fd = -1;
    bench_fill_value(value, cfg->value_size, cfg->seed);
    value[cfg->value_size] = '\0';
    if (wake_connect(cfg, &w) < 0 || wake_connect(cfg, &ctl) < 0) goto fail_connect;
    long fe_writer = wake_info_field(&w, "server", "frontend");
    for (int i = 0; i < nr; i++) {
        if (wake_connect(cfg, &readers[i]) < 0) goto fail_connect;
        int placed = wake_place(cfg, &readers[i], fe_writer);
        if (placed < 0) goto fail_connect;
        *across += placed;
    }
    /* Each reader's key starts empty, so its first BLPOP blocks. */
    for (int i = 0; i < nr; i++) {
        char key[256];
        wake_key(key, sizeof(key), cfg, i);
        const char *del[2] = {"DEL", key};
        if (wake_call(&ctl, 2, del) < 0) goto fail_connect;
    }
    uint64_t t0 = bench_now_ns();
    for (long r = 0; r < rounds; r++) {
        if (wake_block_all(cfg, readers, &ctl) < 0 ||
            wake_round(cfg, &w, readers, value, ack_ns, res, early) < 0) {
            res->errors++;
            break;
        }
        if (cfg->duration_s > 0 && bench_now_ns() - t0 >= (uint64_t)(cfg->duration_s * 1e9)) break;
    }
    res->elapsed_s = (double)(bench_now_ns() - t0) / 1e9;
    rc = 0;
    goto out;
fail_connect:
    fprintf(stderr, "atticdb-bench: --wake: cannot connect or talk to the server: %s\n",
            strerror(errno));
out:
    wake_close(&w);
    wake_close(&ctl);
    for (int i = 0; readers && i < nr; i++)
        wake_close(&readers[i]);
    free(readers);
    free(ack_ns);
    free(value);
    return rc;
}
