/*
 * redis_diff.c - see redis_diff.h: a differential runner for integration
 * tests, one redis-server and one atticdb-server side by side, raw RESP
 * connections whose replies are kept as the exact bytes received.
 */
#include "redis_diff.h"

#include <criterion/criterion.h>
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <hiredis/hiredis.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- a raw RESP connection: replies kept as the exact bytes received ---- */

peer_t *peer_open(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return NULL;
    struct sockaddr_in sa = {.sin_family = AF_INET,
                             .sin_port = htons((uint16_t)port),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
        close(fd);
        return NULL;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    struct timeval tv = {10, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    peer_t *p = calloc(1, sizeof(*p));
    p->fd = fd;
    return p;
}

void peer_close(peer_t *p)
{
    if (!p) return;
    close(p->fd);
    free(p->in);
    free(p);
}

/* Length of the complete RESP2 value at b[off..n), 0 if incomplete, -1 if
 * not RESP. */
static long resp_span(const char *b, size_t n, size_t off)
{
    if (off >= n) return 0;
    const char *eol = memmem(b + off, n - off, "\r\n", 2);
    if (!eol) return 0;
    size_t after = (size_t)(eol - b) + 2;
    long long v = strtoll(b + off + 1, NULL, 10);
    switch (b[off]) {
    case '+':
    case '-':
    case ':':
        return (long)(after - off);
    case '$':
        if (v < 0) return (long)(after - off);
        return n < after + (size_t)v + 2 ? 0 : (long)(after + (size_t)v + 2 - off);
    case '*': {
        size_t p = after;
        for (long long i = 0; i < v; i++) {
            long s = resp_span(b, n, p);
            if (s <= 0) return s;
            p += (size_t)s;
        }
        return (long)(p - off);
    }
    default:
        return -1;
    }
}

/* Send one command (none when argc is 0: read the next reply of a
 * pipeline); returns its reply's bytes (malloc'd, NUL-terminated; "<...>"
 * on EOF, timeout or garbage) and sets *rlen. */
char *peer_cmd(peer_t *p, int argc, const char *const *argv, const size_t *lens, size_t *rlen)
{
    size_t total = 32;
    for (int i = 0; i < argc; i++)
        total += (lens ? lens[i] : strlen(argv[i])) + 32;
    char *req = malloc(total), *w = req;
    w += sprintf(w, "*%d\r\n", argc);
    for (int i = 0; i < argc; i++) {
        size_t l = lens ? lens[i] : strlen(argv[i]);
        w += sprintf(w, "$%zu\r\n", l);
        memcpy(w, argv[i], l);
        w += l;
        *w++ = '\r';
        *w++ = '\n';
    }
    if (argc == 0) w = req;
    for (char *q = req; q < w;) {
        ssize_t n = write(p->fd, q, (size_t)(w - q));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            free(req);
            *rlen = strlen("<write failed>");
            return strdup("<write failed>");
        }
        q += n;
    }
    free(req);
    for (;;) {
        long s = resp_span(p->in ? p->in : "", p->len, 0);
        if (s < 0) {
            p->len = 0;
            *rlen = strlen("<not RESP>");
            return strdup("<not RESP>");
        }
        if (s > 0) {
            char *r = malloc((size_t)s + 1);
            memcpy(r, p->in, (size_t)s);
            r[s] = 0;
            memmove(p->in, p->in + s, p->len - (size_t)s);
            p->len -= (size_t)s;
            *rlen = (size_t)s;
            return r;
        }
        if (p->cap - p->len < 65536) {
            p->cap = p->cap * 2 + 65536;
            p->in = realloc(p->in, p->cap);
        }
        ssize_t n = read(p->fd, p->in + p->len, p->cap - p->len);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            *rlen = strlen("<connection closed or timeout>");
            return strdup("<connection closed or timeout>");
        }
        p->len += (size_t)n;
    }
}

/* Printable bytes for failure messages (static buffer per slot). */
static const char *esc(const char *s, size_t n, int slot)
{
    static char out[2][2048];
    char *o = out[slot & 1];
    size_t k = 0;
    for (size_t i = 0; i < n && k < sizeof(out[0]) - 8; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch == '\r')
            k += (size_t)sprintf(o + k, "\\r");
        else if (ch == '\n')
            k += (size_t)sprintf(o + k, "\\n");
        else if (ch < 32 || ch >= 127)
            k += (size_t)sprintf(o + k, "\\x%02x", ch);
        else
            o[k++] = (char)ch;
    }
    o[k] = 0;
    return o;
}

/* ---- the two servers ---------------------------------------------------- */

srv_t rdiff_atticdb;
static int atticdb_up;
static pid_t redis_pid;
static int redis_port;
static char redis_dir[64];

static const char *redis_path(void)
{
    static char found[512];
    const char *e = getenv("REDIS_SERVER");
    if (e && *e) return access(e, X_OK) == 0 ? e : NULL;
    const char *path = getenv("PATH");
    char *dup = strdup(path ? path : "/usr/local/bin:/usr/bin:/bin");
    const char *res = NULL;
    for (char *t = strtok(dup, ":"); t && !res; t = strtok(NULL, ":")) {
        snprintf(found, sizeof(found), "%s/redis-server", t);
        if (access(found, X_OK) == 0) res = found;
    }
    free(dup);
    return res;
}

static int redis_start(void)
{
    const char *path = redis_path();
    if (!path) return -2;
    snprintf(redis_dir, sizeof(redis_dir), "/tmp/attic-redis-XXXXXX");
    if (!mkdtemp(redis_dir)) return -1;
    redis_port = srv_free_port();
    char port[16];
    snprintf(port, sizeof(port), "%d", redis_port);
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        setpgid(0, 0);
        prctl(PR_SET_PDEATHSIG, SIGKILL); /* a crashed test takes it along */
        int dn = open("/dev/null", O_RDWR);
        if (dn >= 0) {
            dup2(dn, 0);
            dup2(dn, 1);
            dup2(dn, 2);
        }
        execl(path, path, "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
              "--dir", redis_dir, (char *)NULL);
        _exit(127);
    }
    redis_pid = pid;
    for (int i = 0; i < 500; i++) { /* up to 5 s */
        if (waitpid(pid, NULL, WNOHANG) == pid) break;
        peer_t *p = peer_open(redis_port);
        if (p) {
            const char *ping[] = {"PING"};
            size_t n;
            char *r = peer_cmd(p, 1, ping, NULL, &n);
            int ok = strcmp(r, "+PONG\r\n") == 0;
            free(r);
            peer_close(p);
            if (ok) return 0;
        }
        usleep(10000);
    }
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    redis_pid = 0;
    return -1;
}

void rdiff_teardown(void)
{
    if (redis_pid > 0) {
        kill(redis_pid, SIGKILL);
        waitpid(redis_pid, NULL, 0);
        redis_pid = 0;
    }
    if (redis_dir[0]) {
        char cmd[128];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", redis_dir);
        if (system(cmd) != 0) fprintf(stderr, "cleanup of %s failed\n", redis_dir);
        redis_dir[0] = 0;
    }
    if (atticdb_up) {
        srv_stop(&rdiff_atticdb);
        srv_cleanup(&rdiff_atticdb);
        atticdb_up = 0;
    }
    srv_cleanup_all();
}

void rdiff_start_atticdb(void)
{
    int rc = srv_start(&rdiff_atticdb, "--frontends 2");
    if (rc == 0)
        atticdb_up = 1;
    else
        srv_cleanup(&rdiff_atticdb);
    cr_assert_eq(rc, 0, "atticdb-server did not start");
}

/* ---- the differential runner -------------------------------------------- */

void rdiff_start_both(diff_t *d)
{
    int rc = redis_start();
    if (rc == -2)
        cr_skip_test(
            "redis-server not found (PATH or REDIS_SERVER): differential tests need Redis 7");
    cr_assert_eq(rc, 0, "redis-server did not start");
    rdiff_start_atticdb();
    memset(d, 0, sizeof(*d));
    d->r = peer_open(redis_port);
    d->a = peer_open(rdiff_atticdb.port);
    cr_assert(d->r && d->a, "connect");
}

void rdiff_end_both(diff_t *d)
{
    peer_close(d->r);
    peer_close(d->a);
    cr_assert_eq(d->mismatches, 0, "%d differences from Redis (see above)", d->mismatches);
}

static char *cmd_text(int argc, const char *const *argv)
{
    static char t[512];
    size_t k = 0;
    t[0] = 0;
    for (int i = 0; i < argc && k < sizeof(t) - 80; i++)
        k += (size_t)snprintf(t + k, sizeof(t) - k, "%s%s", i ? " " : "",
                              esc(argv[i], strlen(argv[i]) > 60 ? 60 : strlen(argv[i]), 0));
    return t;
}

static int report(diff_t *d, int line, int argc, const char *const *argv, const char *rr, size_t rn,
                  const char *ar, size_t an)
{
    d->step++;
    if (rn == an && memcmp(rr, ar, rn) == 0 && rr[0] != '<') return 1;
    d->mismatches++;
    char what[512];
    snprintf(what, sizeof(what), "%s", cmd_text(argc, argv));
    char seed[48] = "";
    if (d->seed) snprintf(seed, sizeof(seed), ", ATTIC_SEED=%llu", (unsigned long long)d->seed);
    cr_expect_fail("step %d (line %d%s): %s\n    redis:   %s\n    atticdb: %s", d->step, line, seed,
                   what, esc(rr, rn, 0), esc(ar, an, 1));
    return 0;
}

/* The sorted, de-duplicated elements of an array reply, re-encoded as an
 * array (anything else comes back unchanged). */
static char *sorted_array(const char *r, size_t n, size_t *out_len)
{
    redisReader *rd = redisReaderCreate();
    redisReaderFeed(rd, r, n);
    void *v = NULL;
    if (redisReaderGetReply(rd, &v) != REDIS_OK || !v ||
        ((redisReply *)v)->type != REDIS_REPLY_ARRAY) {
        if (v) freeReplyObject(v);
        redisReaderFree(rd);
        *out_len = n;
        char *c = malloc(n + 1);
        memcpy(c, r, n);
        c[n] = 0;
        return c;
    }
    redisReply *a = v;
    size_t cnt = a->elements, total = 32;
    for (size_t i = 0; i < cnt; i++)
        total += a->element[i]->len + 32;
    /* insertion sort by bytes */
    for (size_t i = 1; i < cnt; i++)
        for (size_t j = i; j > 0; j--) {
            redisReply *x = a->element[j - 1], *y = a->element[j];
            size_t m = x->len < y->len ? x->len : y->len;
            int c = memcmp(x->str, y->str, m);
            if (c < 0 || (c == 0 && x->len <= y->len)) break;
            a->element[j - 1] = y;
            a->element[j] = x;
        }
    char *o = malloc(total), *w = o;
    size_t kept = 0;
    char *hdr = w;
    w += 24; /* room for the header, moved down below */
    for (size_t i = 0; i < cnt; i++) {
        redisReply *e = a->element[i];
        if (i > 0 && e->len == a->element[i - 1]->len &&
            memcmp(e->str, a->element[i - 1]->str, e->len) == 0)
            continue;
        w += sprintf(w, "$%zu\r\n", e->len);
        memcpy(w, e->str, e->len);
        w += e->len;
        w += sprintf(w, "\r\n");
        kept++;
    }
    char h[24];
    int hl = sprintf(h, "*%zu\r\n", kept);
    memmove(hdr + hl, hdr + 24, (size_t)(w - hdr - 24));
    memcpy(hdr, h, (size_t)hl);
    *out_len = (size_t)(w - hdr - 24 + hl);
    o[*out_len] = 0;
    freeReplyObject(a);
    redisReaderFree(rd);
    return o;
}

/* Send to both and compare; CMP_SORTED compares array replies as sets,
 * CMP_TTL lets any two positive integers agree. */
int rdiff_cmd(diff_t *d, int line, int how, int argc, const char *const *argv)
{
    size_t rn, an;
    char *rr = peer_cmd(d->r, argc, argv, NULL, &rn);
    char *ar = peer_cmd(d->a, argc, argv, NULL, &an);
    if (how == CMP_SORTED) {
        char *x = sorted_array(rr, rn, &rn), *y = sorted_array(ar, an, &an);
        free(rr);
        free(ar);
        rr = x;
        ar = y;
    }
    if (how == CMP_TTL && rr[0] == ':' && ar[0] == ':' && atoll(rr + 1) > 0 && atoll(ar + 1) > 0) {
        rr[1] = ar[1] = 'P', rn = an = 2; /* equal */
    }
    int eq = report(d, line, argc, argv, rr, rn, ar, an);
    free(rr);
    free(ar);
    return eq;
}

/* A whole SCAN iteration with these options (after the cursor), as the
 * sorted set of keys returned, or the first error reply. */
char *rdiff_scan_all(peer_t *p, int nopt, const char *const *opts, size_t *len)
{
    const char *argv[16] = {"SCAN"};
    char cursor[32] = "0";
    argv[1] = cursor;
    for (int i = 0; i < nopt; i++)
        argv[2 + i] = opts[i];
    size_t cap = 4096, n = 0;
    char *all = malloc(cap);
    int count = 0, calls = 0;
    do {
        size_t rl;
        char *r = peer_cmd(p, 2 + nopt, argv, NULL, &rl);
        redisReader *rd = redisReaderCreate();
        redisReaderFeed(rd, r, rl);
        void *v = NULL;
        redisReaderGetReply(rd, &v);
        redisReaderFree(rd);
        redisReply *a = v;
        if (!a || a->type != REDIS_REPLY_ARRAY || a->elements != 2) {
            if (a) freeReplyObject(a);
            free(all);
            *len = rl;
            return r;
        }
        free(r);
        snprintf(cursor, sizeof(cursor), "%.*s", (int)a->element[0]->len, a->element[0]->str);
        redisReply *keys = a->element[1];
        for (size_t i = 0; i < keys->elements; i++) {
            redisReply *k = keys->element[i];
            if (n + k->len + 32 > cap) {
                cap = (n + k->len + 32) * 2;
                all = realloc(all, cap);
            }
            n += (size_t)sprintf(all + n, "$%zu\r\n", k->len);
            memcpy(all + n, k->str, k->len);
            n += k->len;
            n += (size_t)sprintf(all + n, "\r\n");
            count++;
        }
        freeReplyObject(a);
        calls++;
    } while (strcmp(cursor, "0") != 0 && calls < 100000);
    char hdr[32];
    int hl = sprintf(hdr, "*%d\r\n", count);
    char *arr = malloc(n + (size_t)hl + 1);
    memcpy(arr, hdr, (size_t)hl);
    memcpy(arr + hl, all, n);
    free(all);
    char *s = sorted_array(arr, n + (size_t)hl, len);
    free(arr);
    return s;
}

int rdiff_scan(diff_t *d, int line, int nopt, const char *const *opts)
{
    size_t rn, an;
    char *rr = rdiff_scan_all(d->r, nopt, opts, &rn), *ar = rdiff_scan_all(d->a, nopt, opts, &an);
    const char *argv[16] = {"SCAN(all)"};
    for (int i = 0; i < nopt; i++)
        argv[1 + i] = opts[i];
    int eq = report(d, line, 1 + nopt, argv, rr, rn, ar, an);
    free(rr);
    free(ar);
    return eq;
}

/* One command to one server; reply bytes in a static buffer. */
const char *rdiff_one(peer_t *p, int argc, const char *const *argv)
{
    static char *last;
    free(last);
    size_t n;
    last = peer_cmd(p, argc, argv, NULL, &n);
    return last;
}
