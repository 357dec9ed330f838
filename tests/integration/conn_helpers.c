/*
 * conn_helpers.c - raw connections and the servers shared by the
 * connection-layer integration tests (test_conn_protocol, test_conn_admin);
 * see conn_helpers.h.
 */
#include <criterion/criterion.h>
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "conn_helpers.h"

/* ------------------------------------------------------------------ */
/* raw connections: send bytes, read whole replies (RESP2 and RESP3)   */

raw_t *raw_open_from(const char *src, int port)
{
    struct sockaddr_in from = {.sin_family = AF_INET};
    struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    inet_pton(AF_INET, "127.0.0.1", &to.sin_addr);
    if (src && inet_pton(AF_INET, src, &from.sin_addr) != 1) return NULL;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return NULL;
    if ((src && bind(fd, (struct sockaddr *)&from, sizeof(from)) != 0) ||
        connect(fd, (struct sockaddr *)&to, sizeof(to)) != 0) {
        close(fd);
        return NULL;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    raw_t *r = calloc(1, sizeof(*r));
    r->fd = fd;
    return r;
}

raw_t *raw_open(int port)
{
    return raw_open_from(NULL, port);
}

void raw_close(raw_t *r)
{
    if (!r) return;
    close(r->fd);
    free(r->buf);
    free(r);
}

void raw_send(raw_t *r, const char *s, size_t n)
{
    while (n) {
        ssize_t w = send(r->fd, s, n, MSG_NOSIGNAL);
        if (w <= 0) return;
        s += w;
        n -= (size_t)w;
    }
}

/* Bytes of one whole reply at p[0, n), 0 if incomplete. */
static size_t reply_len(const char *p, size_t n)
{
    if (!n) return 0;
    const char *cr = memchr(p, '\r', n);
    if (!cr || cr + 1 >= p + n) return 0;
    size_t head = (size_t)(cr + 2 - p);
    long long v = strtoll(p + 1, NULL, 10);
    switch (p[0]) {
    case '$':
    case '=':
    case '!':
        if (v < 0) return head;
        return n >= head + (size_t)v + 2 ? head + (size_t)v + 2 : 0;
    case '*':
    case '~':
    case '>':
    case '%': {
        if (v < 0) return head;
        size_t off = head;
        long long items = p[0] == '%' ? 2 * v : v;
        for (long long i = 0; i < items; i++) {
            size_t k = reply_len(p + off, n - off);
            if (!k) return 0;
            off += k;
        }
        return off;
    }
    default:
        return head;
    }
}

/* Read the next `count` replies (2 s timeout); returns them as one
 * NUL-terminated string (caller frees), "<EOF>" appended if the server
 * closed the connection first. */
char *raw_read(raw_t *r, int count)
{
    size_t want = 0;
    int got = 0;
    for (;;) {
        while (got < count) {
            size_t k = reply_len(r->buf + want, r->len - want);
            if (!k) break;
            want += k;
            got++;
        }
        if (got == count) break;
        struct pollfd pfd = {.fd = r->fd, .events = POLLIN};
        if (poll(&pfd, 1, 2000) <= 0) break;
        if (r->len + 65536 > r->cap) {
            r->cap = (r->len + 65536) * 2;
            r->buf = realloc(r->buf, r->cap);
        }
        ssize_t n = recv(r->fd, r->buf + r->len, r->cap - r->len, 0);
        if (n <= 0) {
            char *out = malloc(want + 6);
            if (want) memcpy(out, r->buf, want);
            strcpy(out + want, "<EOF>");
            if (r->len > want) memmove(r->buf, r->buf + want, r->len - want);
            r->len -= want;
            return out;
        }
        r->len += (size_t)n;
    }
    char *out = malloc(want + 1);
    if (want) memcpy(out, r->buf, want);
    out[want] = '\0';
    if (r->len > want) memmove(r->buf, r->buf + want, r->len - want);
    r->len -= want;
    return out;
}

/* Send an inline command line (CRLF added), read one reply. The returned
 * string lives until the next call. */
const char *cmd(raw_t *r, const char *fmt, ...)
{
    static char *last;
    char line[4096];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof(line) - 2, fmt, ap);
    va_end(ap);
    if (n < 0 || n >= (int)sizeof(line) - 2) n = (int)sizeof(line) - 3; /* cut, never overrun */
    memcpy(line + n, "\r\n", 2);
    raw_send(r, line, (size_t)n + 2);
    free(last);
    last = raw_read(r, 1);
    return last;
}

/* True when the server closed r (EOF within 5 s); what it sent before is
 * read and dropped. */
int raw_closed(raw_t *r)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    static char b[65536];
    for (;;) {
        clock_gettime(CLOCK_MONOTONIC, &t);
        long ms = (t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000;
        if (ms > 5000) return 0;
        struct pollfd pfd = {.fd = r->fd, .events = POLLIN};
        if (poll(&pfd, 1, 10) <= 0) continue;
        ssize_t n = recv(r->fd, b, sizeof(b), MSG_DONTWAIT);
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) return 1;
    }
}

/* "id=" of a CLIENT ID reply (":<n>\r\n"). */
long long int_reply(const char *s)
{
    return s[0] == ':' ? strtoll(s + 1, NULL, 10) : -1;
}

/* ------------------------------------------------------------------ */
/* servers                                                             */

srv_t S;

void start(const char *extra)
{
    cr_assert_eq(srv_start(&S, extra), 0, "atticdb-server did not start");
}

int proc_start(proc_t *p, const char *path, const char *first, const char *const *args,
               const char *ready_prefix)
{
    snprintf(p->dir, sizeof(p->dir), "/tmp/attic-conn-XXXXXX");
    if (!mkdtemp(p->dir)) return -1;
    p->port = srv_free_port();
    char port[16];
    snprintf(port, sizeof(port), "%d", p->port);
    const char *argv[40];
    int argc = 0;
    argv[argc++] = path;
    if (first) argv[argc++] = first;
    argv[argc++] = "--port";
    argv[argc++] = port;
    argv[argc++] = "--dir";
    argv[argc++] = p->dir;
    for (int i = 0; args && args[i] && argc < 38; i++)
        argv[argc++] = args[i];
    argv[argc] = NULL;
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        setpgid(0, 0);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        int dn = open("/dev/null", O_RDWR);
        if (dn >= 0) {
            dup2(dn, 0);
            dup2(dn, 1);
            dup2(dn, 2);
        }
        execv(path, (char *const *)argv);
        _exit(127);
    }
    setpgid(pid, pid);
    p->pid = pid;
    for (int i = 0; i < 500; i++) {
        if (waitpid(pid, NULL, WNOHANG) == pid) {
            p->pid = 0;
            return -1;
        }
        raw_t *r = raw_open(p->port);
        if (r) {
            const char *rep = cmd(r, "PING");
            int ok = strncmp(rep, ready_prefix, strlen(ready_prefix)) == 0;
            raw_close(r);
            if (ok) return 0;
        }
        usleep(10000);
    }
    return -1;
}

void proc_stop(proc_t *p)
{
    if (p->pid > 0) {
        kill(-p->pid, SIGTERM);
        for (int i = 0; i < 500 && waitpid(p->pid, NULL, WNOHANG) == 0; i++)
            usleep(10000);
        kill(-p->pid, SIGKILL);
        waitpid(p->pid, NULL, 0);
        p->pid = 0;
    }
    if (p->dir[0]) {
        char c[300];
        snprintf(c, sizeof(c), "rm -rf '%s'", p->dir);
        if (system(c)) {
        }
        p->dir[0] = '\0';
    }
}

const char *atticdb_path(void)
{
    const char *p = getenv("ATTICDB_SERVER");
    return p ? p : "./atticdb-server";
}

proc_t R; /* the reference Redis, when present */
proc_t A; /* an atticdb-server the harness can't start (NOAUTH, config file) */

void teardown(void)
{
    proc_stop(&R);
    proc_stop(&A);
    srv_cleanup_all();
}
