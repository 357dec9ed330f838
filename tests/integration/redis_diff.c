/*
 * redis_diff.c - see redis_diff.h: raw RESP connections, reply parsing,
 * sorted key sets, a private redis-server, and the differential runner of
 * the integration tests. Runs in the test process only, and has no
 * Criterion in it (test_diff.c is a plain program). Replies are kept as the
 * exact bytes off the wire: the tests compare AtticDB's bytes with Redis'
 * bytes, so nothing here may normalise unless a comparison asks for it.
 */
#include "redis_diff.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------------ */
/* buffer and escape                                                   */

static void buf_reserve(wire_buf_t *b, size_t more)
{
    if (b->len + more + 1 <= b->cap) return;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + more + 1)
        cap *= 2;
    b->p = realloc(b->p, cap);
    if (!b->p) abort();
    b->cap = cap;
}

void wire_buf_add(wire_buf_t *b, const void *p, size_t n)
{
    buf_reserve(b, n);
    if (n) memcpy(b->p + b->len, p, n);
    b->len += n;
    b->p[b->len] = '\0';
}

void wire_buf_printf(wire_buf_t *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char tmp[1024];
    int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
    va_end(ap);
    if (n > 0) wire_buf_add(b, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

void wire_buf_free(wire_buf_t *b)
{
    free(b->p);
    memset(b, 0, sizeof(*b));
}

char *wire_escape(const char *p, size_t n, size_t max)
{
    wire_buf_t b = {0};
    wire_buf_add(&b, "\"", 1);
    for (size_t i = 0; i < n && i < max; i++) {
        unsigned char ch = (unsigned char)p[i];
        if (ch == '\r')
            wire_buf_add(&b, "\\r", 2);
        else if (ch == '\n')
            wire_buf_add(&b, "\\n", 2);
        else if (ch == '"' || ch == '\\')
            wire_buf_printf(&b, "\\%c", ch);
        else if (ch < 32 || ch >= 127)
            wire_buf_printf(&b, "\\x%02x", ch);
        else
            wire_buf_add(&b, &p[i], 1);
    }
    wire_buf_add(&b, "\"", 1);
    if (n > max) wire_buf_printf(&b, "...(%zu bytes in all)", n);
    return b.p;
}

void wire_encode(wire_buf_t *b, int argc, const char *const *argv, const size_t *lens)
{
    wire_buf_printf(b, "*%d\r\n", argc);
    for (int i = 0; i < argc; i++) {
        size_t l = lens ? lens[i] : strlen(argv[i]);
        wire_buf_printf(b, "$%zu\r\n", l);
        wire_buf_add(b, argv[i], l);
        wire_buf_add(b, "\r\n", 2);
    }
}

char *wire_cmd_text(int argc, const char *const *argv, const size_t *lens)
{
    wire_buf_t b = {0};
    for (int i = 0; i < argc; i++) {
        char *e = wire_escape(argv[i], lens ? lens[i] : strlen(argv[i]), 60);
        if (i) wire_buf_add(&b, " ", 1);
        wire_buf_add(&b, e, strlen(e));
        free(e);
    }
    if (!b.p) wire_buf_add(&b, "", 0);
    return b.p;
}

/* ------------------------------------------------------------------ */
/* connection                                                          */

wire_conn_t *wire_open(int port, int timeout_s)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return NULL;
    struct timeval tv = {timeout_s, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    struct sockaddr_in sa = {.sin_family = AF_INET,
                             .sin_port = htons((uint16_t)port),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
        close(fd);
        return NULL;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    wire_conn_t *c = calloc(1, sizeof(*c));
    if (!c) abort();
    c->fd = fd;
    return c;
}

void wire_close(wire_conn_t *c)
{
    if (!c) return;
    close(c->fd);
    wire_buf_free(&c->in);
    free(c);
}

int wire_write(wire_conn_t *c, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(c->fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

int wire_send(wire_conn_t *c, int argc, const char *const *argv, const size_t *lens)
{
    wire_buf_t b = {0};
    wire_encode(&b, argc, argv, lens);
    int rc = wire_write(c, b.p, b.len);
    wire_buf_free(&b);
    return rc;
}

/* The first "\r\n" in p[0..n), or NULL. Not memmem: AddressSanitizer's
 * memmem checks the whole haystack on every call, so a reply of a million
 * elements took a pass over the rest of the buffer per element (the
 * sanitizer pass's test_pstream and test_pzset ran for many minutes in
 * that check); its memchr checks only up to the match. */
static const char *find_crlf(const char *p, size_t n)
{
    for (const char *end = p + n; p < end;) {
        const char *cr = memchr(p, '\r', (size_t)(end - p));
        if (!cr || cr + 1 >= end) return NULL;
        if (cr[1] == '\n') return cr;
        p = cr + 1;
    }
    return NULL;
}

/* Length of the complete RESP value at b[off..n): 0 if incomplete, -1 if
 * the bytes are not RESP. */
static long resp_span(const char *b, size_t n, size_t off, int depth)
{
    if (off >= n) return 0;
    if (depth > 64) return -1;
    const char *eol = find_crlf(b + off, n - off);
    if (!eol) return 0;
    size_t after = (size_t)(eol - b) + 2;
    switch (b[off]) {
    case '+':
    case '-':
    case ':':
    case '_':
    case ',':
    case '#':
    case '(':
        return (long)(after - off);
    case '$':
    case '=':
    case '!': {
        long long l = strtoll(b + off + 1, NULL, 10);
        if (l < 0) return (long)(after - off);
        if (n < after + (size_t)l + 2) return 0;
        return (long)(after + (size_t)l + 2 - off);
    }
    case '*':
    case '~':
    case '>':
    case '%': {
        long long cnt = strtoll(b + off + 1, NULL, 10);
        if (b[off] == '%') cnt *= 2;
        size_t p = after;
        for (long long i = 0; i < cnt; i++) {
            long s = resp_span(b, n, p, depth + 1);
            if (s <= 0) return s;
            p += (size_t)s;
        }
        return (long)(p - off);
    }
    default:
        return -1;
    }
}

static char *failure(const char *what, size_t *len)
{
    char *r = strdup(what);
    if (!r) abort();
    *len = strlen(r);
    return r;
}

char *wire_reply(wire_conn_t *c, size_t *len)
{
    for (;;) {
        long s = resp_span(c->in.p ? c->in.p : "", c->in.len, 0, 0);
        if (s < 0) {
            char *e = wire_escape(c->in.p, c->in.len, 200);
            wire_buf_t b = {0};
            wire_buf_printf(&b, "<not RESP: %s>", e);
            free(e);
            c->in.len = 0;
            *len = b.len;
            return b.p;
        }
        if (s > 0) {
            char *r = malloc((size_t)s + 1);
            if (!r) abort();
            memcpy(r, c->in.p, (size_t)s);
            r[s] = '\0';
            memmove(c->in.p, c->in.p + s, c->in.len - (size_t)s);
            c->in.len -= (size_t)s;
            *len = (size_t)s;
            return r;
        }
        buf_reserve(&c->in, 65536);
        ssize_t n = read(c->fd, c->in.p + c->in.len, 65536);
        if (n < 0 && errno == EINTR) continue;
        if (n == 0) return failure("<connection closed>", len);
        if (n < 0)
            return failure(errno == EAGAIN ? "<no reply within the timeout>" : "<read error>", len);
        c->in.len += (size_t)n;
    }
}

char *wire_cmd(wire_conn_t *c, int argc, const char *const *argv, const size_t *lens, size_t *len)
{
    if (wire_send(c, argc, argv, lens) != 0) return failure("<write failed>", len);
    return wire_reply(c, len);
}

int wire_closed_within(wire_conn_t *c, int ms)
{
    struct pollfd pfd = {.fd = c->fd, .events = POLLIN};
    if (poll(&pfd, 1, ms) <= 0) return 0;
    char tmp[64];
    return read(c->fd, tmp, sizeof(tmp)) == 0;
}

/* ------------------------------------------------------------------ */
/* parser                                                              */

static long parse_at(const char *p, size_t n, size_t off, wire_val_t *v, int depth)
{
    memset(v, 0, sizeof(*v));
    long span = resp_span(p, n, off, depth);
    if (span <= 0) return -1;
    v->type = p[off];
    const char *eol = find_crlf(p + off, n - off);
    size_t body = (size_t)(eol - p) + 2;
    switch (v->type) {
    case ':':
        v->integer = strtoll(p + off + 1, NULL, 10);
        break;
    case '+':
    case '-':
    case ',':
    case '#':
    case '(':
        v->str = p + off + 1;
        v->len = (size_t)(eol - (p + off + 1));
        break;
    case '$':
    case '=':
    case '!': {
        long long l = strtoll(p + off + 1, NULL, 10);
        if (l >= 0) {
            v->str = p + body;
            v->len = (size_t)l;
        }
        break;
    }
    case '*':
    case '~':
    case '>':
    case '%': {
        long long cnt = strtoll(p + off + 1, NULL, 10);
        v->n = cnt;
        if (v->type == '%') cnt *= 2;
        if (cnt > 0) {
            v->elem = calloc((size_t)cnt, sizeof(wire_val_t));
            if (!v->elem) abort();
            size_t at = body;
            for (long long i = 0; i < cnt; i++) {
                long s = parse_at(p, n, at, &v->elem[i], depth + 1);
                if (s <= 0) return -1;
                at += (size_t)s;
            }
        }
        break;
    }
    default:
        break;
    }
    return span;
}

int wire_parse(const char *p, size_t n, wire_val_t *out)
{
    return parse_at(p, n, 0, out, 0) > 0 ? 0 : -1;
}

void wire_val_free(wire_val_t *v)
{
    if (v->elem) {
        long long cnt = v->type == '%' ? v->n * 2 : v->n;
        for (long long i = 0; i < cnt; i++)
            wire_val_free(&v->elem[i]);
        free(v->elem);
    }
    memset(v, 0, sizeof(*v));
}

/* ------------------------------------------------------------------ */
/* sets of keys                                                        */

void wire_keys_add(wire_keys_t *s, const char *p, size_t n)
{
    s->k = realloc(s->k, (s->n + 1) * sizeof(char *));
    s->len = realloc(s->len, (s->n + 1) * sizeof(size_t));
    if (!s->k || !s->len) abort();
    s->k[s->n] = malloc(n + 1);
    if (!s->k[s->n]) abort();
    memcpy(s->k[s->n], p, n);
    s->k[s->n][n] = '\0';
    s->len[s->n] = n;
    s->n++;
}

void wire_keys_free(wire_keys_t *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->k[i]);
    free(s->k);
    free(s->len);
    memset(s, 0, sizeof(*s));
}

static int cmp_bulk(const void *x, const void *y)
{
    const wire_val_t *a = x, *b = y;
    size_t n = a->len < b->len ? a->len : b->len;
    int c = n ? memcmp(a->str, b->str, n) : 0;
    if (c) return c;
    return a->len < b->len ? -1 : a->len > b->len;
}

void wire_keys_sort(wire_keys_t *s)
{
    wire_val_t *v = calloc(s->n ? s->n : 1, sizeof(*v));
    if (!v) abort();
    for (size_t i = 0; i < s->n; i++)
        v[i].str = s->k[i], v[i].len = s->len[i];
    qsort(v, s->n, sizeof(*v), cmp_bulk);
    wire_keys_t out = {0};
    for (size_t i = 0; i < s->n; i++)
        if (i == 0 || cmp_bulk(&v[i - 1], &v[i]) != 0) wire_keys_add(&out, v[i].str, v[i].len);
    free(v);
    wire_keys_free(s);
    *s = out;
}

int wire_keys_equal(const wire_keys_t *a, const wire_keys_t *b)
{
    if (a->n != b->n) return 0;
    for (size_t i = 0; i < a->n; i++)
        if (a->len[i] != b->len[i] || memcmp(a->k[i], b->k[i], a->len[i]) != 0) return 0;
    return 1;
}

int wire_keys_from_array(const wire_val_t *v, wire_keys_t *s)
{
    if ((v->type != '*' && v->type != '~') || v->n < 0) return -1; /* an array or a RESP3 set */
    for (long long i = 0; i < v->n; i++) {
        if (v->elem[i].type != '$' || !v->elem[i].str) return -1;
        wire_keys_add(s, v->elem[i].str, v->elem[i].len);
    }
    return 0;
}

int wire_pairs_from_array(const wire_val_t *v, wire_keys_t *s)
{
    if ((v->type != '*' && v->type != '%') || v->n < 0) return -1;
    long long n = v->type == '%' ? v->n * 2 : v->n;
    if (n % 2) return -1;
    for (long long i = 0; i < n; i += 2) {
        const wire_val_t *f = &v->elem[i], *x = &v->elem[i + 1];
        if (f->type != '$' || !f->str || x->type != '$' || !x->str) return -1;
        wire_buf_t b = {0};
        wire_buf_printf(&b, "%zu:", f->len);
        wire_buf_add(&b, f->str, f->len);
        wire_buf_add(&b, x->str, x->len);
        wire_keys_add(s, b.p, b.len);
        wire_buf_free(&b);
    }
    return 0;
}

int wire_keys_of_reply(const char *p, size_t n, wire_keys_t *s)
{
    wire_val_t v;
    int ok = wire_parse(p, n, &v) == 0 && wire_keys_from_array(&v, s) == 0;
    wire_keys_sort(s);
    wire_val_free(&v);
    return ok ? 0 : -1;
}

char *wire_keys_render(const wire_keys_t *s, size_t *len)
{
    wire_buf_t b = {0};
    wire_buf_printf(&b, "*%zu\r\n", s->n);
    for (size_t i = 0; i < s->n; i++) {
        wire_buf_printf(&b, "$%zu\r\n", s->len[i]);
        wire_buf_add(&b, s->k[i], s->len[i]);
        wire_buf_add(&b, "\r\n", 2);
    }
    *len = b.len;
    return b.p;
}

int wire_scan_all(wire_conn_t *c, int argc, const char *const *argv, const size_t *lens,
                  wire_keys_t *keys, char **bad, size_t *bad_len)
{
    return wire_scan_all_at(c, argc, argv, lens, 1, 0, keys, bad, bad_len);
}

int wire_scan_all_at(wire_conn_t *c, int argc, const char *const *argv, const size_t *lens,
                     int cursor_arg, int pairs, wire_keys_t *keys, char **bad, size_t *bad_len)
{
    const char *args[64];
    size_t arg_lens[64];
    if (argc <= cursor_arg || argc > 64) {
        *bad = failure("<SCAN: bad argument count>", bad_len);
        return -1;
    }
    for (int i = 0; i < argc; i++) {
        args[i] = argv[i];
        arg_lens[i] = lens ? lens[i] : strlen(argv[i]);
    }
    char *cursor = NULL;
    int rc = 0;
    for (int round = 0; round < 100000; round++) {
        size_t n;
        char *r = wire_cmd(c, argc, args, arg_lens, &n);
        wire_val_t v;
        int parsed = wire_parse(r, n, &v) == 0;
        if (!parsed || v.type != '*' || v.n != 2 || v.elem[0].type != '$' || !v.elem[0].str ||
            (pairs ? wire_pairs_from_array(&v.elem[1], keys)
                   : wire_keys_from_array(&v.elem[1], keys)) != 0) {
            if (parsed) wire_val_free(&v);
            *bad = r;
            *bad_len = n;
            rc = -1;
            break;
        }
        free(cursor);
        cursor = strndup(v.elem[0].str, v.elem[0].len);
        if (!cursor) abort();
        args[cursor_arg] = cursor;
        arg_lens[cursor_arg] = v.elem[0].len;
        wire_val_free(&v);
        free(r);
        if (strcmp(cursor, "0") == 0) break;
        if (round == 99999) {
            *bad = failure("<SCAN did not end in 100000 rounds>", bad_len);
            rc = -1;
        }
    }
    free(cursor);
    wire_keys_sort(keys);
    return rc;
}

/* ------------------------------------------------------------------ */
/* redis-server                                                        */

const char *wire_redis_path(void)
{
    static char found[1024];
    const char *e = getenv("REDIS_SERVER");
    if (e && *e) return access(e, X_OK) == 0 ? e : NULL;
    const char *path = getenv("PATH");
    if (!path) path = "/usr/local/bin:/usr/bin:/bin";
    char *dup = strdup(path);
    const char *res = NULL;
    for (char *save = NULL, *t = strtok_r(dup, ":", &save); t; t = strtok_r(NULL, ":", &save)) {
        snprintf(found, sizeof(found), "%s/redis-server", t);
        if (access(found, X_OK) == 0) {
            res = found;
            break;
        }
    }
    free(dup);
    return res;
}

static int answers_ping(int port, pid_t pid)
{
    for (int i = 0; i < 1000; i++) { /* up to 10 s */
        if (waitpid(pid, NULL, WNOHANG) == pid) return -1;
        wire_conn_t *c = wire_open(port, 2);
        if (c) {
            const char *argv[] = {"PING"};
            size_t n;
            char *r = wire_cmd(c, 1, argv, NULL, &n);
            int ok = strcmp(r, "+PONG\r\n") == 0;
            free(r);
            wire_close(c);
            if (ok) return 0;
        }
        usleep(10000);
    }
    return -1;
}

int wire_redis_start(wire_redis_t *r, const char *extra)
{
    memset(r, 0, sizeof(*r));
    const char *path = wire_redis_path();
    if (!path) return -1;
    snprintf(r->dir, sizeof(r->dir), "/tmp/attic-redis-XXXXXX");
    if (!mkdtemp(r->dir)) {
        r->dir[0] = '\0';
        return -1;
    }
    for (int attempt = 0; attempt < 5; attempt++) {
        r->port = srv_free_port();
        char port[16];
        snprintf(port, sizeof(port), "%d", r->port);
        char args[512];
        snprintf(args, sizeof(args), "%s", extra ? extra : "");
        const char *argv[40] = {path, "--port",       port, "--bind", "127.0.0.1", "--save",
                                "",   "--appendonly", "no", "--dir",  r->dir};
        int argc = 11;
        for (char *save = NULL, *t = strtok_r(args, " ", &save); t && argc < 39;
             t = strtok_r(NULL, " ", &save))
            argv[argc++] = t;
        argv[argc] = NULL;
        pid_t pid = srv_spawn((char *const *)argv);
        if (pid < 0) break;
        r->pid = pid;
        if (answers_ping(r->port, pid) == 0) return 0;
        kill(-pid, SIGKILL);
        waitpid(pid, NULL, 0);
        r->pid = 0;
    }
    wire_redis_stop(r);
    return -1;
}

void wire_redis_stop(wire_redis_t *r)
{
    if (r->pid > 0) {
        kill(-r->pid, SIGKILL);
        waitpid(r->pid, NULL, 0);
        r->pid = 0;
    }
    if (r->dir[0]) {
        char cmd[128];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", r->dir);
        if (system(cmd) != 0) fprintf(stderr, "cleanup of %s failed\n", r->dir);
        r->dir[0] = '\0';
    }
}

/* ------------------------------------------------------------------ */
/* seeds                                                               */

uint64_t rdiff_seed(void)
{
    /* A fixed sequence unless asked: make check must be repeatable.
     * ATTIC_SEED=random explores. */
    const char *env = getenv("ATTIC_SEED");
    if (!env || !*env) return 1;
    if (strcmp(env, "random") != 0) return strtoull(env, NULL, 0);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000003u ^ (uint64_t)ts.tv_nsec ^ (uint64_t)getpid();
}

uint64_t rdiff_splitmix(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

unsigned rdiff_below(uint64_t *state, unsigned n)
{
    return (unsigned)(rdiff_splitmix(state) % n);
}

/* ------------------------------------------------------------------ */
/* the two servers                                                     */

srv_t rdiff_atticdb;
wire_redis_t rdiff_redis;

int rdiff_redis_start(const char *extra)
{
    if (!wire_redis_path()) return RDIFF_NO_REDIS;
    return wire_redis_start(&rdiff_redis, extra);
}

int rdiff_atticdb_start(const char *args)
{
    int rc = srv_start(&rdiff_atticdb, args);
    if (rc != 0) srv_cleanup(&rdiff_atticdb);
    return rc;
}

void rdiff_teardown(void)
{
    wire_redis_stop(&rdiff_redis);
    if (rdiff_atticdb.dir[0]) {
        srv_stop(&rdiff_atticdb);
        srv_cleanup(&rdiff_atticdb);
    }
    srv_cleanup_all();
}

int rdiff_connect(diff_t *d, int n)
{
    memset(d, 0, sizeof(*d));
    if (n < 1 || n > RDIFF_CONNS) return -1;
    d->nconn = n;
    for (int i = 0; i < n; i++) {
        d->r[i] = wire_open(rdiff_redis.port, 10);
        d->a[i] = wire_open(rdiff_atticdb.port, 10);
        if (!d->r[i] || !d->a[i]) return -1;
    }
    return 0;
}

int rdiff_disconnect(diff_t *d)
{
    for (int i = 0; i < RDIFF_CONNS; i++) {
        wire_close(d->r[i]);
        wire_close(d->a[i]);
        d->r[i] = d->a[i] = NULL;
    }
    return d->mismatches;
}

/* ------------------------------------------------------------------ */
/* the differential runner                                             */

int rdiff_compare(diff_t *d, int line, const char *what, const char *rr, size_t rn, const char *ar,
                  size_t an)
{
    d->step++;
    /* both connections failing the same way is not agreement */
    if (rn == an && memcmp(rr, ar, rn) == 0 && !wire_is_failure(rr)) return 1;
    d->mismatches++;
    char seed[48] = "";
    if (d->seed) snprintf(seed, sizeof(seed), ", ATTIC_SEED=%llu", (unsigned long long)d->seed);
    char *er = wire_escape(rr, rn, 400), *ea = wire_escape(ar, an, 400);
    wire_buf_t msg = {0};
    wire_buf_add(&msg, d->label ? d->label : "", d->label ? strlen(d->label) : 0);
    wire_buf_printf(&msg, "step %d (line %d%s): ", d->step, line, seed);
    wire_buf_add(&msg, what, strlen(what));
    wire_buf_add(&msg, "\n    redis:   ", 14);
    wire_buf_add(&msg, er, strlen(er));
    wire_buf_add(&msg, "\n    atticdb: ", 14);
    wire_buf_add(&msg, ea, strlen(ea));
    if (d->fail)
        d->fail(msg.p);
    else
        fprintf(stderr, "%s\n", msg.p);
    wire_buf_free(&msg);
    free(er);
    free(ea);
    return 0;
}

/* The command for messages, after "[conn i] " when there are several
 * connections; malloc'd. */
static char *cmd_text(const diff_t *d, int ci, int argc, const char *const *argv,
                      const size_t *lens)
{
    char *t = wire_cmd_text(argc, argv, lens);
    if (d->nconn <= 1) return t;
    wire_buf_t b = {0};
    wire_buf_printf(&b, "[conn %d] ", ci);
    wire_buf_add(&b, t, strlen(t));
    free(t);
    return b.p;
}

void rdiff_normalize(char **r, size_t *n, int how)
{
    if ((how == RDIFF_POSITIVE || how == RDIFF_ANY_INT) && (*r)[0] == ':' &&
        (how == RDIFF_ANY_INT || strtoll(*r + 1, NULL, 10) > 0)) {
        free(*r);
        *r = failure(":<positive>\r\n", n);
    } else if (how == RDIFF_SORTED) {
        wire_keys_t s = {0};
        if (wire_keys_of_reply(*r, *n, &s) == 0) {
            free(*r);
            *r = wire_keys_render(&s, n);
        }
        wire_keys_free(&s);
    }
}

int rdiff_cmd(diff_t *d, int line, int ci, int how, int argc, const char *const *argv,
              const size_t *lens)
{
    size_t rn, an;
    char *rr = wire_cmd(d->r[ci], argc, argv, lens, &rn);
    char *ar = wire_cmd(d->a[ci], argc, argv, lens, &an);
    rdiff_normalize(&rr, &rn, how);
    rdiff_normalize(&ar, &an, how);
    char *what = cmd_text(d, ci, argc, argv, lens);
    int eq = rdiff_compare(d, line, what, rr, rn, ar, an);
    free(what);
    free(rr);
    free(ar);
    return eq;
}

/* A whole SCAN iteration on one side: the sorted keys as RESP, or the
 * reply that was not a proper SCAN reply. */
static char *scan_side(wire_conn_t *c, int argc, const char *const *argv, size_t *len)
{
    wire_keys_t keys = {0};
    char *r = NULL;
    if (wire_scan_all(c, argc, argv, NULL, &keys, &r, len) == 0) r = wire_keys_render(&keys, len);
    wire_keys_free(&keys);
    return r;
}

int rdiff_scan(diff_t *d, int line, int nopt, const char *const *opts)
{
    const char *argv[16] = {"SCAN", "0"};
    for (int i = 0; i < nopt && i < 14; i++)
        argv[2 + i] = opts[i];
    size_t rn, an;
    char *rr = scan_side(d->r[0], 2 + nopt, argv, &rn);
    char *ar = scan_side(d->a[0], 2 + nopt, argv, &an);
    argv[1] = "SCAN(all)";
    char *what = cmd_text(d, 0, 1 + nopt, argv + 1, NULL);
    int eq = rdiff_compare(d, line, what, rr, rn, ar, an);
    free(what);
    free(rr);
    free(ar);
    return eq;
}

int rdiff_pipeline(diff_t *d, int line, int ci, const char *bytes, size_t len, int n,
                   const char *what)
{
    wire_write(d->r[ci], bytes, len);
    wire_write(d->a[ci], bytes, len);
    int bad = 0;
    for (int i = 0; i < n; i++) {
        size_t rn, an;
        char *rr = wire_reply(d->r[ci], &rn), *ar = wire_reply(d->a[ci], &an);
        char label[64];
        snprintf(label, sizeof(label), "[conn %d] pipeline reply %d", ci, i + 1);
        bad += !rdiff_compare(d, line, what ? what : label, rr, rn, ar, an);
        free(rr);
        free(ar);
    }
    return bad;
}

int rdiff_wait_expired(diff_t *d, const char *key, int timeout_ms)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        /* PTTL reads; on Redis it also deletes the expired key, as the
         * command that follows would. */
        int gone = !strcmp(ONE(d->r[0], "PTTL", key), ":-2\r\n") &&
                   !strcmp(ONE(d->a[0], "PTTL", key), ":-2\r\n");
        if (gone) return 0;
        clock_gettime(CLOCK_MONOTONIC, &t);
        if ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 > timeout_ms)
            return -1;
        usleep(5000);
    }
}

void rdiff_hello3(diff_t *d)
{
    const char *hello[] = {"HELLO", "3"};
    const size_t hlens[] = {5, 1};
    size_t n1, n2;
    free(wire_cmd(d->r[0], 2, hello, hlens, &n1));
    free(wire_cmd(d->a[0], 2, hello, hlens, &n2));
}

const char *rdiff_one(wire_conn_t *c, int argc, const char *const *argv)
{
    static char *last;
    free(last);
    size_t n;
    last = wire_cmd(c, argc, argv, NULL, &n);
    return last;
}
