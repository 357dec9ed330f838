/*
 * diff_wire.c - raw RESP connections, reply parsing and a private
 * redis-server for the differential test (see diff_wire.h). Runs in the test
 * process only. Replies are kept as the exact bytes off the wire: the test
 * compares AtticDB's bytes with Redis' bytes, so nothing here may normalise.
 */
#include "diff_wire.h"

#include "harness.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

/* ------------------------------------------------------------------ */
/* buffer and escape                                                   */

static void buf_reserve(wire_buf_t *b, size_t more)
{
    if (b->len + more + 1 <= b->cap) return;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + more + 1) cap *= 2;
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
        if (ch == '\r') wire_buf_add(&b, "\\r", 2);
        else if (ch == '\n') wire_buf_add(&b, "\\n", 2);
        else if (ch == '"' || ch == '\\') wire_buf_printf(&b, "\\%c", ch);
        else if (ch < 32 || ch >= 127) wire_buf_printf(&b, "\\x%02x", ch);
        else wire_buf_add(&b, &p[i], 1);
    }
    wire_buf_add(&b, "\"", 1);
    if (n > max) wire_buf_printf(&b, "...(%zu bytes in all)", n);
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
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
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

int wire_send(wire_conn_t *c, int argc, char *const *argv, const size_t *lens)
{
    wire_buf_t b = {0};
    wire_buf_printf(&b, "*%d\r\n", argc);
    for (int i = 0; i < argc; i++) {
        wire_buf_printf(&b, "$%zu\r\n", lens[i]);
        wire_buf_add(&b, argv[i], lens[i]);
        wire_buf_add(&b, "\r\n", 2);
    }
    const char *p = b.p;
    size_t n = b.len;
    int rc = 0;
    while (n > 0) {
        ssize_t w = write(c->fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            rc = -1;
            break;
        }
        p += w;
        n -= (size_t)w;
    }
    wire_buf_free(&b);
    return rc;
}

/* Length of the complete RESP value at b[off..n): 0 if incomplete, -1 if
 * the bytes are not RESP. */
static long resp_span(const char *b, size_t n, size_t off, int depth)
{
    if (off >= n) return 0;
    if (depth > 64) return -1;
    const char *eol = memmem(b + off, n - off, "\r\n", 2);
    if (!eol) return 0;
    size_t after = (size_t)(eol - b) + 2;
    switch (b[off]) {
    case '+': case '-': case ':': case '_': case ',': case '#': case '(':
        return (long)(after - off);
    case '$': case '=': case '!': {
        long long l = strtoll(b + off + 1, NULL, 10);
        if (l < 0) return (long)(after - off);
        if (n < after + (size_t)l + 2) return 0;
        return (long)(after + (size_t)l + 2 - off);
    }
    case '*': case '~': case '>': case '%': {
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
        if (n < 0) return failure(errno == EAGAIN ? "<no reply within the timeout>" : "<read error>", len);
        c->in.len += (size_t)n;
    }
}

/* ------------------------------------------------------------------ */
/* parser                                                              */

static long parse_at(const char *p, size_t n, size_t off, wire_val_t *v, int depth)
{
    memset(v, 0, sizeof(*v));
    long span = resp_span(p, n, off, depth);
    if (span <= 0) return -1;
    v->type = p[off];
    const char *eol = memmem(p + off, n - off, "\r\n", 2);
    size_t body = (size_t)(eol - p) + 2;
    switch (v->type) {
    case ':':
        v->integer = strtoll(p + off + 1, NULL, 10);
        break;
    case '+': case '-': case ',': case '#': case '(':
        v->str = p + off + 1;
        v->len = (size_t)(eol - (p + off + 1));
        break;
    case '$': case '=': case '!': {
        long long l = strtoll(p + off + 1, NULL, 10);
        if (l >= 0) {
            v->str = p + body;
            v->len = (size_t)l;
        }
        break;
    }
    case '*': case '~': case '>': case '%': {
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
        for (long long i = 0; i < cnt; i++) wire_val_free(&v->elem[i]);
        free(v->elem);
    }
    memset(v, 0, sizeof(*v));
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
            char *argv[] = {"PING"};
            size_t lens[] = {4}, n;
            int ok = 0;
            if (wire_send(c, 1, argv, lens) == 0) {
                char *r = wire_reply(c, &n);
                ok = strcmp(r, "+PONG\r\n") == 0;
                free(r);
            }
            wire_close(c);
            if (ok) return 0;
        }
        usleep(10000);
    }
    return -1;
}

int wire_redis_start(wire_redis_t *r)
{
    memset(r, 0, sizeof(*r));
    const char *path = wire_redis_path();
    if (!path) return -1;
    snprintf(r->dir, sizeof(r->dir), "/tmp/attic-diff-redis-XXXXXX");
    if (!mkdtemp(r->dir)) {
        r->dir[0] = '\0';
        return -1;
    }
    for (int attempt = 0; attempt < 5; attempt++) {
        r->port = srv_free_port();
        char port[16];
        snprintf(port, sizeof(port), "%d", r->port);
        pid_t pid = fork();
        if (pid < 0) break;
        if (pid == 0) {
            setpgid(0, 0);
            prctl(PR_SET_PDEATHSIG, SIGKILL); /* gone with the test */
            int dn = open("/dev/null", O_RDWR);
            if (dn >= 0) {
                dup2(dn, 0);
                dup2(dn, 1);
                dup2(dn, 2);
            }
            execl(path, path, "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                  "--dir", r->dir, (char *)NULL);
            _exit(127);
        }
        setpgid(pid, pid);
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
