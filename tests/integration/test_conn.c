/*
 * test_conn.c - the connection and administration layer of a real
 * atticdb-server (frontend/client.c, acl*.c, config-cmd.c, info.c,
 * slowlog.c, command-cmd.c): RESP3 through HELLO 3, AUTH and ACL users,
 * CLIENT, RESET, TIME, COMMAND, CONFIG GET/SET, INFO, SLOWLOG, protected
 * mode and the runtime limits, and the same checks across two frontends
 * (CLIENT LIST / KILL, CONFIG SET, ACL SETUSER / DELUSER seen by a
 * connection on the other frontend).
 *
 * Replies are compared as raw bytes. Where a redis-server is installed
 * (PATH or REDIS_SERVER), the same byte sequences go to a private Redis
 * and to AtticDB and the replies must be identical (ids masked); without
 * one those tests are skipped with a message. The expected texts written
 * out here come from redis-server 7.0.15.
 *
 * Environment: ATTICDB_SERVER (the server binary), REDIS_SERVER.
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
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

TestSuite(conn, .fini = srv_cleanup_all, .timeout = 90);

/* ------------------------------------------------------------------ */
/* raw connections: send bytes, read whole replies (RESP2 and RESP3)   */

typedef struct raw {
    int fd;
    char *buf;
    size_t len, cap;
} raw_t;

static raw_t *raw_open_addr(const char *ip, int port)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    if (inet_pton(AF_INET, ip, &sa.sin_addr) != 1) return NULL;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return NULL;
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
        close(fd);
        return NULL;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    raw_t *r = calloc(1, sizeof(*r));
    r->fd = fd;
    return r;
}

static raw_t *raw_open(int port)
{
    return raw_open_addr("127.0.0.1", port);
}

static void raw_close(raw_t *r)
{
    if (!r) return;
    close(r->fd);
    free(r->buf);
    free(r);
}

static void raw_send(raw_t *r, const char *s, size_t n)
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
static char *raw_read(raw_t *r, int count)
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
static const char *cmd(raw_t *r, const char *fmt, ...)
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
static int raw_closed(raw_t *r)
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

/* The value of `field:` in an INFO text. */
static long long info_field(const char *text, const char *field)
{
    char key[128];
    snprintf(key, sizeof(key), "\r\n%s:", field);
    const char *p = strstr(text, key);
    if (!p) return -1;
    return strtoll(p + strlen(key), NULL, 10);
}

/* "id=" of a CLIENT ID reply (":<n>\r\n"). */
static long long int_reply(const char *s)
{
    return s[0] == ':' ? strtoll(s + 1, NULL, 10) : -1;
}

/* ------------------------------------------------------------------ */
/* servers                                                             */

static srv_t S;

static void start(const char *extra)
{
    cr_assert_eq(srv_start(&S, extra), 0, "atticdb-server did not start");
}

/* A process of our own (a redis-server, or an atticdb-server the harness
 * can't wait for because it answers PING with NOAUTH): its own process
 * group, waits until a connection gets `ready_prefix` for PING. */
typedef struct proc {
    pid_t pid;
    int port;
    char dir[128];
} proc_t;

static int proc_start(proc_t *p, const char *path, const char *first, const char *const *args,
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

static void proc_stop(proc_t *p)
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

static const char *redis_path(void)
{
    const char *e = getenv("REDIS_SERVER");
    if (e && access(e, X_OK) == 0) return e;
    static char found[512];
    const char *path = getenv("PATH");
    if (!path) return NULL;
    char copy[4096];
    snprintf(copy, sizeof(copy), "%s", path);
    for (char *d = strtok(copy, ":"); d; d = strtok(NULL, ":")) {
        snprintf(found, sizeof(found), "%s/redis-server", d);
        if (access(found, X_OK) == 0) return found;
    }
    return NULL;
}

static const char *atticdb_path(void)
{
    const char *p = getenv("ATTICDB_SERVER");
    return p ? p : "./atticdb-server";
}

static proc_t R; /* the reference Redis, when present */
static proc_t A; /* an atticdb-server the harness can't start (NOAUTH, config file) */

static void redis_or_skip(const char *const *extra)
{
    const char *path = redis_path();
    if (!path)
        cr_skip_test(
            "redis-server not found (PATH or REDIS_SERVER): differential checks need Redis 7");
    const char *args[16] = {"--bind", "127.0.0.1", "--save", "", "--appendonly", "no"};
    int n = 6;
    for (int i = 0; extra && extra[i] && n < 15; i++)
        args[n++] = extra[i];
    args[n] = NULL;
    cr_assert_eq(proc_start(&R, path, NULL, args, extra ? "" : "+PONG"), 0,
                 "redis-server did not start");
}

static void teardown(void)
{
    proc_stop(&R);
    proc_stop(&A);
    srv_cleanup_all();
}

/* Replace the number after "id" in HELLO replies (client ids differ). */
static void mask_ids(char *s)
{
    for (char *p = s; (p = strstr(p, "$2\r\nid\r\n:")) != NULL;) {
        p += 9;
        char *e = strstr(p, "\r\n");
        if (!e) return;
        memset(p, 'N', (size_t)(e - p));
    }
}

/* Send `bytes` (holding `count` commands) on a fresh connection to Redis
 * and to AtticDB; the replies must be the same bytes. */
static void same(int count, const char *bytes)
{
    raw_t *a = raw_open(R.port), *b = raw_open(S.port);
    cr_assert(a && b);
    raw_send(a, bytes, strlen(bytes));
    raw_send(b, bytes, strlen(bytes));
    char *ra = raw_read(a, count), *rb = raw_read(b, count);
    mask_ids(ra);
    mask_ids(rb);
    cr_expect(strcmp(ra, rb) == 0, "for %s\nredis:   %s\natticdb: %s", bytes, ra, rb);
    free(ra);
    free(rb);
    raw_close(a);
    raw_close(b);
}

/* ------------------------------------------------------------------ */
/* RESP3 and HELLO                                                     */

Test(conn, hello_and_resp3_replies, .fini = teardown)
{
    start("--frontends 1");
    raw_t *c = raw_open(S.port);
    cr_assert_not_null(c);
    long long id = int_reply(cmd(c, "CLIENT ID"));
    char want[512];
    snprintf(
        want, sizeof(want),
        "%%7\r\n$6\r\nserver\r\n$5\r\nredis\r\n$7\r\nversion\r\n$6\r\n7.0.15\r\n$5\r\nproto\r\n:"
        "3\r\n"
        "$2\r\nid\r\n:%lld\r\n$4\r\nmode\r\n$10\r\nstandalone\r\n$4\r\nrole\r\n$6\r\nmaster\r\n"
        "$7\r\nmodules\r\n*0\r\n",
        id);
    cr_expect_str_eq(cmd(c, "HELLO 3"), want);
    /* the store's replies, converted: null bulk and null array elements */
    cr_expect_str_eq(cmd(c, "GET missing"), "_\r\n");
    cr_expect_str_eq(cmd(c, "SET a 1"), "+OK\r\n");
    cr_expect_str_eq(cmd(c, "MGET a missing"), "*2\r\n$1\r\n1\r\n_\r\n");
    cr_expect_str_eq(cmd(c, "CLIENT GETNAME"), "_\r\n");
    cr_expect_str_eq(cmd(c, "CONFIG GET maxclients"), "%1\r\n$10\r\nmaxclients\r\n$5\r\n10000\r\n");
    const char *info = cmd(c, "INFO server");
    cr_expect(strncmp(info, "=", 1) == 0 && strstr(info, "\r\ntxt:# Server\r\n"), "%.80s", info);
    const char *ci = cmd(c, "CLIENT INFO");
    cr_expect(ci[0] == '=' && strstr(ci, "txt:id=") && strstr(ci, " resp=3 "), "%s", ci);
    cr_expect_str_eq(cmd(c, "ACL GETUSER nobody"), "_\r\n");
    /* back to RESP2 */
    snprintf(
        want, sizeof(want),
        "*14\r\n$6\r\nserver\r\n$5\r\nredis\r\n$7\r\nversion\r\n$6\r\n7.0.15\r\n$5\r\nproto\r\n:"
        "2\r\n"
        "$2\r\nid\r\n:%lld\r\n$4\r\nmode\r\n$10\r\nstandalone\r\n$4\r\nrole\r\n$6\r\nmaster\r\n"
        "$7\r\nmodules\r\n*0\r\n",
        id);
    cr_expect_str_eq(cmd(c, "HELLO 2"), want);
    cr_expect_str_eq(cmd(c, "GET missing"), "$-1\r\n");
    cr_expect_str_eq(cmd(c, "MGET a missing"), "*2\r\n$1\r\n1\r\n$-1\r\n");
    /* HELLO's errors, Redis' texts */
    cr_expect_str_eq(cmd(c, "HELLO 4"), "-NOPROTO unsupported protocol version\r\n");
    cr_expect_str_eq(cmd(c, "HELLO 1"), "-NOPROTO unsupported protocol version\r\n");
    cr_expect_str_eq(cmd(c, "HELLO abc"),
                     "-ERR Protocol version is not an integer or out of range\r\n");
    cr_expect_str_eq(cmd(c, "HELLO 3 FOO"), "-ERR Syntax error in HELLO option 'FOO'\r\n");
    cr_expect_str_eq(cmd(c, "HELLO 3 AUTH default"),
                     "-ERR Syntax error in HELLO option 'AUTH'\r\n");
    cr_expect_str_eq(cmd(c, "HELLO 3 SETNAME"), "-ERR Syntax error in HELLO option 'SETNAME'\r\n");
    const char *bad = "*4\r\n$5\r\nHELLO\r\n$1\r\n2\r\n$7\r\nSETNAME\r\n$3\r\na b\r\n";
    raw_send(c, bad, strlen(bad));
    char *r = raw_read(c, 1);
    cr_expect_str_eq(
        r, "-ERR Client names cannot contain spaces, newlines or special characters.\r\n");
    free(r);
    /* the failed HELLOs changed nothing: still RESP2, no name */
    cr_expect_str_eq(cmd(c, "CLIENT GETNAME"), "$-1\r\n");
    cmd(c, "HELLO 2 SETNAME hello-name");
    cr_expect_str_eq(cmd(c, "CLIENT GETNAME"), "$10\r\nhello-name\r\n");
    raw_close(c);
}

Test(conn, differential_replies, .fini = teardown)
{
    redis_or_skip(NULL);
    start("--frontends 1");
    same(10, "HELLO 4\r\nHELLO abc\r\nHELLO 3 FOO\r\nHELLO 1\r\nHELLO 3 SETNAME\r\n"
             "HELLO 3 AUTH default\r\nHELLO 3 SETNAME a b\r\nHELLO 3\r\nHELLO 2 SETNAME x\r\n"
             "CLIENT GETNAME\r\n");
    same(4, "AUTH x\r\nAUTH a b c\r\nAUTH nouser x\r\nAUTH default x\r\n");
    same(3, "ACL WHOAMI\r\nACL USERS\r\nACL LIST\r\n");
    same(22,
         "CLIENT ID x\r\nCLIENT GETNAME x\r\nCLIENT SETNAME\r\nCLIENT SETNAME \"\"\r\n"
         "CLIENT GETNAME\r\nCLIENT KILL 1.2.3.4:5\r\nCLIENT KILL ID 99999\r\nCLIENT KILL ID x\r\n"
         "CLIENT KILL FOO bar\r\nCLIENT KILL ADDR 1.2.3.4:5 SKIPME maybe\r\nCLIENT KILL ID\r\n"
         "CLIENT KILL USER nosuch\r\nCLIENT KILL TYPE normal SKIPME yes\r\nCLIENT REPLY foo\r\n"
         "CLIENT NO-EVICT maybe\r\nCLIENT NO-EVICT on\r\nCLIENT FOO\r\nCLIENT\r\nCLIENT INFO x\r\n"
         "CLIENT LIST ID 1 x\r\nCLIENT LIST ID\r\nCLIENT LIST TYPE foo\r\n");
    /* CLIENT REPLY: OFF and SKIP drop replies, ON says OK */
    same(5,
         "CLIENT SETNAME foo\r\nCLIENT GETNAME\r\nCLIENT REPLY OFF\r\nPING\r\nCLIENT REPLY SKIP\r\n"
         "PING\r\nCLIENT REPLY ON\r\nPING\r\nCLIENT REPLY SKIP\r\nPING\r\nPING\r\n");
    same(18,
         "CONFIG SET maxclients 100 timeout 5\r\nCONFIG GET maxclients\r\nCONFIG SET maxclients "
         "abc\r\n"
         "CONFIG SET nosuch 1\r\nCONFIG SET maxclients 10 maxclients 20\r\n"
         "CONFIG SET timeout 1 nosuch 2\r\nCONFIG SET timeout\r\nCONFIG SET timeout 1 2\r\n"
         "CONFIG GET\r\nCONFIG GET nosuch\r\nCONFIG SET timeout -1\r\nCONFIG SET maxclients 0\r\n"
         "CONFIG SET proto-max-bulk-len 10\r\nCONFIG SET loglevel foo\r\n"
         "CONFIG SET protected-mode maybe\r\nCONFIG SET slowlog-max-len -1\r\n"
         "CONFIG SET client-output-buffer-limit \"normal 1 2\"\r\nCONFIG SET "
         "client-query-buffer-limit 1\r\n");
    same(13,
         "CONFIG SET daemonize yes\r\nCONFIG SET daemonize yes timeout 1\r\n"
         "CONFIG SET timeout 1 daemonize yes\r\nCONFIG SET databases 3\r\n"
         "CONFIG SET timeout abc daemonize yes\r\nCONFIG SET Timeout 7\r\nCONFIG GET TIMEOUT\r\n"
         "CONFIG SET client-output-buffer-limit \"normal 1mb 2mb 3\"\r\n"
         "CONFIG GET client-output-buffer-limit\r\nCONFIG GET slowlog-max-len\r\nCONFIG GET "
         "loglevel\r\n"
         "CONFIG GET proto-max-bulk-len\r\nCONFIG GET client-query-buffer-limit\r\n");
    same(11,
         "CONFIG SET proto-max-bulk-len abc\r\nCONFIG SET proto-max-bulk-len 2mb\r\n"
         "CONFIG GET proto-max-bulk-len\r\nCONFIG SET timeout 1.5\r\nCONFIG SET maxclients 10k\r\n"
         "CONFIG SET slowlog-log-slower-than -5\r\nCONFIG SET client-output-buffer-limit \"foo 1 2 "
         "3\"\r\n"
         "CONFIG SET client-output-buffer-limit \"normal x 2 3\"\r\nCONFIG SET daemonize yes "
         "nosuch 1\r\n"
         "CONFIG SET timeout 5 maxclients 0\r\nCONFIG GET timeout\r\n");
    same(7,
         "HELLO 3\r\nCONFIG GET maxclients\r\nCONFIG RESETSTAT\r\nCONFIG RESETSTAT x\r\nCONFIG\r\n"
         "CONFIG FOO\r\nCONFIG SET proto-max-bulk-len 512mb client-query-buffer-limit 1gb\r\n");
    same(17, "COMMAND COUNT x\r\nCOMMAND GETKEYS get a\r\nCOMMAND GETKEYS mset a 1 b 2\r\n"
             "COMMAND GETKEYS ping\r\nCOMMAND GETKEYS nosuch a\r\nCOMMAND GETKEYS get\r\n"
             "COMMAND GETKEYS get a b\r\nCOMMAND GETKEYS ping x\r\nCOMMAND FOO\r\nCOMMAND LIST "
             "FILTERBY\r\n"
             "COMMAND LIST foo\r\nCOMMAND DOCS nosuch\r\nCOMMAND INFO nosuch\r\nCOMMAND GETKEYS "
             "mset a\r\n"
             "COMMAND GETKEYS object encoding k\r\nCOMMAND LIST FILTERBY MODULE x\r\n"
             "COMMAND LIST FILTERBY ACLCAT nosuch\r\n");
    /* Redis' own command entries (redis-cli's hints); COMMAND DOCS has our
     * own summaries, so its structure is compared in command_docs_structure */
    same(2, "COMMAND INFO get set mget mset expire\r\nCOMMAND INFO ping echo\r\n");
    same(2, "HELLO 3\r\nCOMMAND INFO get set incr\r\n");
    same(8, "SLOWLOG GET -2\r\nSLOWLOG GET x\r\nSLOWLOG GET 1 2\r\nSLOWLOG LEN 1\r\nSLOWLOG FOO\r\n"
            "SLOWLOG HELP\r\nSLOWLOG\r\nSLOWLOG RESET\r\n");
    same(3, "RESET\r\nTIME x\r\nCLIENT GETNAME\r\n");
    same(15,
         "ACL SETUSER u2 on >p1 ~k* +@string -set +get\r\nACL GETUSER nouser\r\nACL SETUSER u2 "
         "+@foo\r\n"
         "ACL SETUSER u2 foo\r\nACL SETUSER u2 #abc\r\nACL SETUSER \"a b\"\r\nACL DELUSER "
         "default\r\n"
         "ACL DELUSER u2 nosuch\r\nACL CAT\r\nACL CAT nosuch\r\nACL FOO\r\nACL\r\nACL WHOAMI x\r\n"
         "ACL LOG x\r\nACL SAVE\r\n");
    same(12, "ACL SETUSER d1 on nopass ~a* +get +mset\r\nACL DRYRUN d1 get zz\r\n"
             "ACL DRYRUN d1 mset a 1 zz 2\r\nACL DRYRUN d1 get a\r\nACL DRYRUN nosuch get a\r\n"
             "ACL DRYRUN d1 nocmd\r\nACL DRYRUN d1 get\r\nACL DRYRUN d1 del a\r\nACL GENPASS 0\r\n"
             "ACL GENPASS x\r\nACL DELUSER d1\r\nACL DRYRUN d1 get a\r\n");
    /* descriptions (Redis 7.0 orders several single commands by its hash
     * table, so one each here) */
    same(7, "ACL SETUSER d2 on >pw ~b* &c +get\r\nACL SETUSER d3 off nopass allkeys +@all "
            "-@dangerous\r\n"
            "ACL SETUSER d4 reset\r\nACL GETUSER d2\r\nACL GETUSER d3\r\nACL LIST\r\nACL DELUSER "
            "d2 d3 d4\r\n");
    /* permissions, NOPERM texts, AUTH as another user */
    same(15, "ACL SETUSER t on nopass ~k* +get +config|get +client +set\r\nAUTH t x\r\nGET k1\r\n"
             "GET z\r\nSET z 1\r\nDEL k\r\nCONFIG GET maxclients\r\nCONFIG SET maxclients 10\r\n"
             "CONFIG FOO\r\nACL WHOAMI\r\nMGET k1 z\r\nPING\r\nCLIENT SETNAME x\r\nCONFIG GET\r\n"
             "RESET\r\n");
    same(6, "ACL SETUSER n1 on nopass -@all\r\nAUTH n1 x\r\nHELLO 2\r\nRESET\r\nPING\r\nACL "
            "DELUSER n1 t\r\n");
}

/* ---- COMMAND DOCS: Redis' structure, our own wording ---- */

/* A parsed reply: a leaf (t, s, len) or an aggregate of n kids (a map's
 * kids alternate key, value). */
typedef struct rnode {
    char t;
    const char *s;
    size_t len;
    size_t n;
    struct rnode *kid;
} rnode_t;

static size_t rparse(const char *p, rnode_t *out)
{
    const char *cr = strstr(p, "\r\n");
    long long v = strtoll(p + 1, NULL, 10);
    size_t head = (size_t)(cr + 2 - p);
    memset(out, 0, sizeof(*out));
    out->t = p[0];
    switch (p[0]) {
    case '$':
    case '=':
        if (v < 0) return head;
        out->s = p + head;
        out->len = (size_t)v;
        return head + (size_t)v + 2;
    case '*':
    case '~':
    case '%': {
        out->n = v < 0 ? 0 : (size_t)(p[0] == '%' ? 2 * v : v);
        out->kid = calloc(out->n ? out->n : 1, sizeof(rnode_t));
        size_t off = head;
        for (size_t i = 0; i < out->n; i++)
            off += rparse(p + off, &out->kid[i]);
        return off;
    }
    default:
        out->s = p + 1;
        out->len = head - 3;
        return head;
    }
}

static void rfree(rnode_t *r)
{
    for (size_t i = 0; i < r->n; i++)
        rfree(&r->kid[i]);
    free(r->kid);
}

static int leaf_is(const rnode_t *r, const char *s)
{
    return r->s && r->len == strlen(s) && memcmp(r->s, s, r->len) == 0;
}

/* The value under `key` of a map (RESP3 %) or flat key/value array (RESP2). */
static const rnode_t *field(const rnode_t *m, const char *key)
{
    for (size_t i = 0; m && i + 1 < m->n; i += 2)
        if (leaf_is(&m->kid[i], key)) return &m->kid[i + 1];
    return NULL;
}

/* The structure of a COMMAND DOCS entry as text: every field and value,
 * arguments included, except our own wording (summary, complexity), what we
 * leave out (history, replaced_by), an argument's display_text, and the
 * subcommands (compared one by one). */
static void shape(FILE *f, const rnode_t *r)
{
    if (r->t == '*' || r->t == '~' || r->t == '%') {
        fprintf(f, "%c[", r->t);
        for (size_t i = 0; i < r->n; i++) {
            if ((r->t == '%' || (r->t == '*' && r->n % 2 == 0)) && i % 2 == 0 &&
                (leaf_is(&r->kid[i], "summary") || leaf_is(&r->kid[i], "complexity") ||
                 leaf_is(&r->kid[i], "history") || leaf_is(&r->kid[i], "replaced_by") ||
                 leaf_is(&r->kid[i], "display_text") || leaf_is(&r->kid[i], "subcommands"))) {
                i++;
                continue;
            }
            shape(f, &r->kid[i]);
            fputc(' ', f);
        }
        fputc(']', f);
    } else {
        fprintf(f, "%c%.*s", r->t, (int)r->len, r->s ? r->s : "");
    }
}

static char *shape_of(const rnode_t *r)
{
    char *s = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&s, &n);
    shape(f, r);
    fclose(f);
    return s;
}

/* One entry (name `name`) of AtticDB's COMMAND DOCS against Redis'. */
static void docs_entry_like_redis(const char *name, const rnode_t *a, const rnode_t *r)
{
    const char *need[] = {"summary", "since", "group", "complexity"};
    for (int k = 0; k < 4; k++) {
        const rnode_t *v = field(a, need[k]);
        cr_expect(v && v->s && v->len > 0, "%s: no %s", name, need[k]);
    }
    cr_expect(!field(a, "history") && !field(a, "replaced_by"), "%s: Redis' prose left", name);
    if (!r) return;
    const rnode_t *sa = field(a, "summary"), *sr = field(r, "summary");
    cr_expect(!(sa && sr && sa->len == sr->len && !memcmp(sa->s, sr->s, sa->len)),
              "%s: the summary is Redis' own text", name);
    char *ta = shape_of(a), *tr = shape_of(r);
    cr_expect_str_eq(ta, tr, "%s: structure differs from Redis'", name);
    free(ta);
    free(tr);
    /* subcommands: AtticDB's (a subset of Redis') one by one */
    const rnode_t *subs = field(a, "subcommands"), *rsubs = field(r, "subcommands");
    cr_expect(!subs == !rsubs, "%s: subcommands on one side only", name);
    for (size_t i = 0; subs && i + 1 < subs->n; i += 2) {
        char sub[64];
        snprintf(sub, sizeof(sub), "%.*s", (int)subs->kid[i].len, subs->kid[i].s);
        const rnode_t *rs = field(rsubs, sub);
        /* CLIENT SETINFO is Redis 7.2's, absent from 7.0.15 */
        cr_expect(rs || !strcmp(sub, "client|setinfo"), "%s: not a Redis subcommand", sub);
        docs_entry_like_redis(sub, &subs->kid[i + 1], rs);
    }
}

/* COMMAND DOCS keeps Redis' structure (since, group, doc_flags, arguments
 * with their names, types, tokens and flags, subcommands) but not its prose:
 * every entry has our own summary and complexity, and no history. Compared
 * with a redis-server in RESP2 and RESP3. */
Test(conn, command_docs_structure, .fini = teardown)
{
    redis_or_skip(NULL);
    start("--frontends 1");
    for (int proto = 2; proto <= 3; proto++) {
        raw_t *a = raw_open(S.port), *r = raw_open(R.port);
        cr_assert(a && r);
        if (proto == 3) {
            cmd(a, "HELLO 3");
            cmd(r, "HELLO 3");
        }
        rnode_t ad, rd;
        char *abytes = strdup(cmd(a, "COMMAND DOCS")); /* cmd()'s reply lives until its next call */
        rparse(abytes, &ad);
        /* the same names asked of Redis */
        char line[4096] = "COMMAND DOCS";
        size_t ln = strlen(line);
        for (size_t i = 0; i + 1 < ad.n; i += 2)
            ln += (size_t)snprintf(line + ln, sizeof(line) - ln, " %.*s", (int)ad.kid[i].len,
                                   ad.kid[i].s);
        cr_assert_lt(ln, sizeof(line) - 1);
        char *rbytes = strdup(cmd(r, "%s", line));
        rparse(rbytes, &rd);
        cr_expect_gt(ad.n / 2, 60, "COMMAND DOCS has %zu entries", ad.n / 2);
        cr_expect_eq(ad.n, rd.n, "Redis has docs for every command AtticDB has");
        for (size_t i = 0; i + 1 < ad.n; i += 2) {
            char name[64];
            snprintf(name, sizeof(name), "%.*s", (int)ad.kid[i].len, ad.kid[i].s);
            const rnode_t *re = field(&rd, name);
            cr_expect_not_null(re, "%s: no Redis docs", name);
            docs_entry_like_redis(name, &ad.kid[i + 1], re);
        }
        rfree(&ad);
        rfree(&rd);
        free(abytes);
        free(rbytes);
        raw_close(a);
        raw_close(r);
    }
}

Test(conn, differential_requirepass, .fini = teardown)
{
    const char *extra[] = {"--requirepass", "secret", NULL};
    redis_or_skip(extra);
    const char *args[] = {"--bind",        "127.0.0.1", "--frontends", "2",
                          "--requirepass", "secret",    NULL};
    cr_assert_eq(proc_start(&A, atticdb_path(), NULL, args, "-NOAUTH"), 0);
    S.port = A.port;
    same(1, "GET a\r\n");
    same(1, "PING\r\n");
    same(1, "HELLO 3\r\n");
    same(1, "HELLO\r\n");
    same(1, "HELLO 3 AUTH default x\r\n");
    same(4, "AUTH x\r\nAUTH default x\r\nAUTH nouser x\r\nAUTH a b c\r\n");
    same(2, "AUTH secret\r\nGET a\r\n");
    same(2, "CLIENT ID\r\nQUIT\r\n");
    same(3, "AUTH secret\r\nRESET\r\nGET a\r\n");
    same(2, "HELLO 2 AUTH default secret\r\nGET a\r\n");
    same(1, "EXEC\r\n");
    same(5, "AUTH default secret\r\nCONFIG SET requirepass \"\"\r\nCONFIG GET requirepass\r\n"
            "CONFIG SET requirepass secret\r\nCONFIG GET requirepass\r\n");
}

/* ------------------------------------------------------------------ */
/* AUTH, ACL users from the configuration                              */

Test(conn, requirepass_and_user_lines, .fini = teardown)
{
    char dir[] = "/tmp/attic-conf-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof(path), "%s/atticdb.conf", dir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fprintf(f, "user alice on >wonderland ~a* +get +set +client|id\n"
               "user bob off nopass allkeys +@all\n"
               "requirepass \"s3cret\"\n");
    fclose(f);
    const char *args[] = {"--bind", "127.0.0.1", "--frontends", "1", NULL};
    /* the config file goes first, as with redis-server */
    cr_assert_eq(proc_start(&A, atticdb_path(), path, args, "-NOAUTH"), 0);
    raw_t *c = raw_open(A.port);
    cr_assert_not_null(c);
    const char *r;
    cr_expect_str_eq(cmd(c, "GET a"), "-NOAUTH Authentication required.\r\n");
    cr_expect_str_eq(
        cmd(c, "HELLO 3"),
        "-NOAUTH HELLO must be called with the client already authenticated, otherwise the "
        "HELLO AUTH <user> <pass> option can be used to authenticate the client and select "
        "the RESP protocol version at the same time\r\n");
    cr_expect_str_eq(cmd(c, "AUTH wrong"),
                     "-WRONGPASS invalid username-password pair or user is disabled.\r\n");
    cr_expect_str_eq(cmd(c, "AUTH bob x"),
                     "-WRONGPASS invalid username-password pair or user is disabled.\r\n");
    cr_expect_str_eq(cmd(c, "AUTH alice wonderland"), "+OK\r\n");
    cr_expect_str_eq(cmd(c, "ACL WHOAMI"),
                     "-NOPERM this user has no permissions to run the 'acl|whoami' command\r\n");
    cr_expect_str_eq(cmd(c, "SET apple 1"), "+OK\r\n");
    cr_expect_str_eq(
        cmd(c, "SET banana 1"),
        "-NOPERM this user has no permissions to access one of the keys used as arguments\r\n");
    cr_expect_str_eq(cmd(c, "DEL apple"),
                     "-NOPERM this user has no permissions to run the 'del' command\r\n");
    cr_expect(cmd(c, "CLIENT ID")[0] == ':');
    cr_expect_str_eq(cmd(c, "CLIENT LIST"),
                     "-NOPERM this user has no permissions to run the 'client|list' command\r\n");
    /* EXEC refused is an EXECABORT, as Redis words it */
    cr_expect_str_eq(
        cmd(c, "EXEC"),
        "-EXECABORT Transaction discarded because of: NOPERM this user has no permissions "
        "to run the 'exec' command\r\n");
    cr_expect_str_eq(cmd(c, "AUTH s3cret"), "+OK\r\n");
    cr_expect_str_eq(cmd(c, "ACL WHOAMI"), "$7\r\ndefault\r\n");
    r = cmd(c, "ACL LIST");
    cr_expect(strstr(r, "\r\nuser alice on #") &&
                  strstr(r, " ~a* resetchannels -@all +get +set +client|id\r\n"),
              "%s", r);
    cr_expect(strstr(r, "\r\nuser bob off nopass ~* resetchannels +@all\r\n"), "%s", r);
    cr_expect(strstr(r, "user default on #") && strstr(r, " ~* &* +@all\r\n"), "%s", r);
    /* RESET: back to the default user, unauthenticated (it has a password) */
    cr_expect_str_eq(cmd(c, "RESET"), "+RESET\r\n");
    cr_expect_str_eq(cmd(c, "GET a"), "-NOAUTH Authentication required.\r\n");
    char hello[512];
    snprintf(hello, sizeof(hello), "%s", cmd(c, "HELLO 3 AUTH default s3cret SETNAME n1"));
    mask_ids(hello);
    cr_expect_str_eq(
        hello, "%7\r\n$6\r\nserver\r\n$5\r\nredis\r\n$7\r\nversion\r\n$6\r\n7.0.15\r\n$5\r\n"
               "proto\r\n:3\r\n$2\r\nid\r\n:N\r\n$4\r\nmode\r\n$10\r\nstandalone\r\n$4\r\nrole\r\n"
               "$6\r\nmaster\r\n$7\r\nmodules\r\n*0\r\n");
    cr_expect_str_eq(cmd(c, "CLIENT GETNAME"), "$2\r\nn1\r\n");
    /* requirepass removed at run time: new clients need no AUTH */
    cr_expect_str_eq(cmd(c, "CONFIG SET requirepass \"\""), "+OK\r\n");
    raw_t *d = raw_open(A.port);
    cr_expect_str_eq(cmd(d, "PING"), "+PONG\r\n");
    cr_expect_str_eq(
        cmd(d, "AUTH x"),
        "-ERR AUTH <password> called without any password configured for the default user. "
        "Are you sure your configuration is correct?\r\n");
    /* and set again: an existing client stays authenticated, a new one
     * must AUTH (as in Redis) */
    cr_expect_str_eq(cmd(c, "CONFIG SET requirepass again"), "+OK\r\n");
    cr_expect_str_eq(cmd(d, "PING"), "+PONG\r\n");
    raw_t *e = raw_open(A.port);
    cr_expect_str_eq(cmd(e, "PING"), "-NOAUTH Authentication required.\r\n");
    raw_close(c);
    raw_close(d);
    raw_close(e);
    proc_stop(&A);
    char rm[300];
    snprintf(rm, sizeof(rm), "rm -rf '%s'", dir);
    if (system(rm)) {
    }
}

Test(conn, bad_user_line_stops_the_server)
{
    char out[4096];
    int rc = srv_run_tool("atticdb-server",
                          "--port 0 --unixsocket /tmp/attic-conn-nope.sock "
                          "--dir /tmp/attic-conn-nodir --user alice on +nocmd",
                          out, sizeof(out));
    cr_expect_neq(rc, 0);
    cr_expect(strstr(out, "FATAL CONFIG ERROR") &&
                  strstr(out, "Error in user declaration 'alice': "
                              "Unknown command or category name in ACL"),
              "%s", out);
    if (system("rm -rf /tmp/attic-conn-nodir")) {
    }
}

/* ------------------------------------------------------------------ */
/* CLIENT, RESET, TIME                                                 */

/* The field names of a CLIENT LIST / INFO line, space separated. */
static void field_names(const char *line, char *out, size_t n)
{
    out[0] = '\0';
    size_t len = 0;
    for (const char *p = line; *p && *p != '\n';) {
        const char *eq = strchr(p, '=');
        const char *sp = strchr(p, ' ');
        if (!eq) break;
        len += (size_t)snprintf(out + len, n - len, "%s%.*s", len ? " " : "", (int)(eq - p), p);
        if (!sp) break;
        p = sp + 1;
    }
}

Test(conn, client_commands, .fini = teardown)
{
    start("--frontends 1");
    raw_t *c = raw_open(S.port), *d = raw_open(S.port);
    long long id = int_reply(cmd(c, "CLIENT ID")), id2 = int_reply(cmd(d, "CLIENT ID"));
    cr_expect_gt(id2, id);
    cr_expect_str_eq(cmd(c, "CLIENT SETNAME worker-1"), "+OK\r\n");
    cr_expect_str_eq(cmd(c, "CLIENT GETNAME"), "$8\r\nworker-1\r\n");
    cr_expect_str_eq(cmd(c, "CLIENT SETINFO LIB-NAME mylib"), "+OK\r\n");
    cr_expect_str_eq(cmd(c, "CLIENT SETINFO lib-ver 1.2"), "+OK\r\n");
    cr_expect_str_eq(cmd(c, "CLIENT SETINFO foo x"), "-ERR Unrecognized option 'foo'\r\n");
    cr_expect_str_eq(cmd(c, "CLIENT SETINFO lib-name \"a b\""),
                     "-ERR lib-name cannot contain spaces, newlines or special characters.\r\n");
    cr_expect_str_eq(cmd(c, "CLIENT NO-EVICT on"), "+OK\r\n");
    const char *info = cmd(c, "CLIENT INFO");
    char names[1024];
    field_names(strchr(info, '\n') + 1, names, sizeof(names));
    /* Redis 7.0.15's fields, then 7.2's lib-name and lib-ver */
    cr_expect_str_eq(names,
                     "id addr laddr fd name age idle flags db sub psub ssub multi qbuf qbuf-free "
                     "argv-mem multi-mem rbs rbp obl oll omem tot-mem events cmd user redir resp "
                     "lib-name lib-ver");
    char want[128];
    snprintf(want, sizeof(want), "id=%lld addr=127.0.0.1:", id);
    cr_expect(strstr(info, want), "%s", info);
    cr_expect(strstr(info, " name=worker-1 ") && strstr(info, " flags=e ") &&
                  strstr(info, " db=0 ") && strstr(info, " multi=-1 ") &&
                  strstr(info, " cmd=client|info ") && strstr(info, " user=default ") &&
                  strstr(info, " resp=2 ") && strstr(info, " lib-name=mylib lib-ver=1.2\n\r\n"),
              "%s", info);
    snprintf(want, sizeof(want), " laddr=127.0.0.1:%d ", S.port);
    cr_expect(strstr(info, want), "%s", info);
    /* CLIENT LIST: both clients, oldest first, one line each */
    const char *list = cmd(d, "CLIENT LIST");
    const char *p1 = strstr(list, "name=worker-1"), *p2 = strstr(list, " cmd=client|list ");
    cr_expect(p1 && p2 && p1 < p2, "%s", list);
    snprintf(want, sizeof(want), "CLIENT LIST ID %lld", id2);
    list = cmd(c, want);
    cr_expect(!strstr(list, "worker-1") && strstr(list, "cmd=client|list"), "%s", list);
    cr_expect_str_eq(cmd(c, "CLIENT LIST TYPE pubsub"), "$0\r\n\r\n");
    /* KILL: by id, by addr (old form), USER, SKIPME */
    cr_expect_str_eq(cmd(c, "CLIENT KILL USER default"), ":1\r\n");
    cr_expect(raw_closed(d));
    raw_close(d);
    d = raw_open(S.port);
    cmd(d, "PING");
    const char *dl = cmd(d, "CLIENT INFO");
    const char *a = strstr(dl, "addr=") + 5;
    char addr[64];
    snprintf(addr, sizeof(addr), "%.*s", (int)(strchr(a, ' ') - a), a);
    cr_expect_str_eq(cmd(c, "CLIENT KILL %s", addr), "+OK\r\n");
    cr_expect(raw_closed(d));
    raw_close(d);
    cr_expect_str_eq(cmd(c, "CLIENT KILL %s", addr), "-ERR No such client\r\n");
    snprintf(want, sizeof(want), "CLIENT KILL ID %lld", id);
    cr_expect_str_eq(cmd(c, want), ":0\r\n"); /* SKIPME yes */
    /* CLIENT REPLY */
    const char *pipeline =
        "CLIENT REPLY SKIP\r\nECHO one\r\nECHO two\r\nCLIENT REPLY OFF\r\nECHO three\r\n"
        "CLIENT REPLY ON\r\nECHO four\r\n";
    raw_send(c, pipeline, strlen(pipeline));
    char *r = raw_read(c, 3);
    cr_expect_str_eq(r, "$3\r\ntwo\r\n+OK\r\n$4\r\nfour\r\n");
    free(r);
    /* RESET */
    cmd(c, "HELLO 3");
    cr_expect_str_eq(cmd(c, "RESET"), "+RESET\r\n");
    info = cmd(c, "CLIENT INFO");
    cr_expect(info[0] == '$' && strstr(info, " name= ") && strstr(info, " resp=2 ") &&
                  strstr(info, " flags=N "),
              "%s", info);
    /* and killing itself, SKIPME no: the reply, then the connection closes */
    snprintf(want, sizeof(want), "CLIENT KILL ID %lld SKIPME no", id);
    cr_expect_str_eq(cmd(c, want), ":1\r\n");
    cr_expect(raw_closed(c));
    raw_close(c);
    /* TIME */
    c = raw_open(S.port);
    const char *t = cmd(c, "TIME");
    long long sec = 0, usec = -1;
    cr_expect_eq(sscanf(t, "*2\r\n$10\r\n%lld\r\n$%*d\r\n%lld\r\n", &sec, &usec), 2, "%s", t);
    cr_expect(llabs(sec - (long long)time(NULL)) <= 5 && usec >= 0 && usec < 1000000, "%s", t);
    raw_close(c);
}

/* ------------------------------------------------------------------ */
/* COMMAND, CONFIG, INFO                                               */

Test(conn, command_config_info, .fini = teardown)
{
    start("--frontends 1");
    raw_t *c = raw_open(S.port);
    long long n = int_reply(cmd(c, "COMMAND COUNT"));
    cr_expect_gt(n, 60);
    raw_send(c, "COMMAND\r\n", 9);
    char *all = raw_read(c, 1);
    char head[32];
    snprintf(head, sizeof(head), "*%lld\r\n*10\r\n", n);
    cr_expect(strncmp(all, head, strlen(head)) == 0, "%.60s", all);
    free(all);
    const char *docs = cmd(c, "COMMAND DOCS get");
    cr_expect(
        strstr(docs,
               "$7\r\nsummary\r\n$54\r\nRead a key's string value; nil when the key is missing\r\n"
               "$5\r\nsince\r\n$5\r\n1.0.0\r\n"
               "$5\r\ngroup\r\n$6\r\nstring\r\n$10\r\ncomplexity\r\n$4\r\nO(1)\r\n"),
        "%s", docs);
    const char *cl = cmd(c, "COMMAND LIST FILTERBY PATTERN config*");
    cr_expect_str_eq(
        cl, "*5\r\n$6\r\nconfig\r\n$10\r\nconfig|get\r\n$11\r\nconfig|help\r\n$10\r\nconfig|set\r\n"
            "$16\r\nconfig|resetstat\r\n");
    /* CONFIG GET: every setting under its name, patterns, several */
    const char *cg = cmd(c, "CONFIG GET *");
    const char *names[] = {"port",
                           "bind",
                           "dir",
                           "maxclients",
                           "timeout",
                           "proto-max-bulk-len",
                           "client-query-buffer-limit",
                           "client-output-buffer-limit",
                           "requirepass",
                           "protected-mode",
                           "slowlog-log-slower-than",
                           "slowlog-max-len",
                           "loglevel",
                           "databases",
                           "frontends",
                           "ring-size",
                           "segment-size",
                           NULL};
    for (int i = 0; names[i]; i++) {
        char k[64];
        snprintf(k, sizeof(k), "$%zu\r\n%s\r\n", strlen(names[i]), names[i]);
        cr_expect(strstr(cg, k), "CONFIG GET * lacks %s", names[i]);
    }
    cr_expect_str_eq(cmd(c, "CONFIG GET bind"), "*2\r\n$4\r\nbind\r\n$9\r\n127.0.0.1\r\n");
    cr_expect_str_eq(
        cmd(c, "CONFIG GET maxclients protected-mode"),
        "*4\r\n$10\r\nmaxclients\r\n$5\r\n10000\r\n$14\r\nprotected-mode\r\n$3\r\nyes\r\n");
    cr_expect_str_eq(cmd(c, "CONFIG GET slowlog-max-*"),
                     "*2\r\n$15\r\nslowlog-max-len\r\n$3\r\n128\r\n");
    cr_expect_str_eq(cmd(c, "CONFIG SET port 1"),
                     "-ERR CONFIG SET failed (possibly related to argument 'port') - can't set "
                     "immutable config\r\n");
    cr_expect_str_eq(cmd(c, "CONFIG SET ring-size 1mb"),
                     "-ERR CONFIG SET failed (possibly related to argument 'ring-size') - can't "
                     "set immutable config\r\n");
    /* INFO: sections, several, all, commandstats after a reset */
    cmd(c, "SET k v");
    cmd(c, "GET k");
    cmd(c, "GET k");
    cr_expect_str_eq(cmd(c, "CONFIG RESETSTAT"), "+OK\r\n");
    cmd(c, "GET k");
    cmd(c, "GET k");
    cmd(c, "CLIENT ID");
    cmd(c, "HELLO 4");
    const char *is = cmd(c, "INFO commandstats");
    cr_expect(strstr(is, "\r\ncmdstat_get:calls=2,usec="), "%s", is);
    cr_expect(strstr(is, "\r\ncmdstat_client|id:calls=1,usec="), "%s", is);
    cr_expect(strstr(is, "\r\ncmdstat_hello:calls=1,") &&
                  strstr(is, ",rejected_calls=0,failed_calls=1"),
              "%s", is);
    cr_expect(!strstr(is, "cmdstat_set:"), "RESETSTAT kept set: %s", is);
    const char *ia = cmd(c, "INFO");
    const char *order[] = {"# Server\r\n",      "# Clients\r\n",  "# Memory\r\n",
                           "# Persistence\r\n", "# Stats\r\n",    "# Replication\r\n",
                           "# CPU\r\n",         "# Keyspace\r\n", NULL};
    const char *at = ia;
    for (int i = 0; order[i]; i++) {
        const char *p = strstr(at, order[i]);
        cr_expect_not_null(p, "INFO lacks (or misorders) %s", order[i]);
        if (p) at = p;
    }
    cr_expect(!strstr(ia, "# Commandstats"), "commandstats is not a default section");
    cr_expect(strstr(ia, "\r\nredis_version:7.0.15\r\n") && strstr(ia, "\r\nrole:master\r\n") &&
                  strstr(ia, "\r\nconnected_slaves:0\r\n") &&
                  strstr(ia, "\r\ndb0:keys=1,expires=0,avg_ttl=0\r\n"),
              "%s", ia);
    cr_expect_gt(info_field(ia, "atticdb_fsyncs"), 0);
    /* the fsync latency histogram the logger fills */
    const char *p50 = strstr(ia, "\r\natticdb_fsync_p50_us:");
    cr_assert_not_null(p50);
    double lat50 = strtod(p50 + 23, NULL);
    double lat999 = strtod(strstr(ia, "\r\natticdb_fsync_p999_us:") + 24, NULL);
    cr_expect(lat50 > 0 && lat999 >= lat50, "p50 %f p999 %f", lat50, lat999);
    cr_expect(strstr(ia, "\r\natticdb_fsync_p99_us:") && strstr(ia, "\r\natticdb_fsync_p999_us:") &&
                  strstr(ia, "\r\natticdb_durable_lsn:") &&
                  strstr(ia, "\r\natticdb_applied_lsn:") &&
                  strstr(ia, "\r\natticdb_avg_batch_records:") &&
                  strstr(ia, "\r\natticdb_avg_batch_bytes:"),
              "%s", ia);
    const char *two = cmd(c, "INFO clients cpu");
    cr_expect(strstr(two, "# Clients\r\nconnected_clients:1\r\n") &&
                  strstr(two, "\r\n\r\n# CPU\r\n") && !strstr(two, "# Server"),
              "%s", two);
    cr_expect_str_eq(cmd(c, "INFO nosuch"), "$0\r\n\r\n");
    const char *ev = cmd(c, "INFO everything");
    cr_expect(strstr(ev, "# Commandstats\r\n") && strstr(ev, "# Keyspace\r\n"), "%.100s", ev);
    /* the text ends with its last field, no blank line */
    const char *ks = cmd(c, "INFO keyspace");
    cr_expect_str_eq(ks, "$44\r\n# Keyspace\r\ndb0:keys=1,expires=0,avg_ttl=0\r\n\r\n");
    raw_close(c);
}

/* ------------------------------------------------------------------ */
/* SLOWLOG                                                             */

Test(conn, slowlog, .fini = teardown)
{
    start("--frontends 1");
    raw_t *c = raw_open(S.port);
    cr_expect_str_eq(cmd(c, "CONFIG SET slowlog-log-slower-than 0"), "+OK\r\n");
    cr_expect_str_eq(cmd(c, "SLOWLOG RESET"), "+OK\r\n");
    cmd(c, "CLIENT SETNAME me");
    cmd(c, "SET k v");
    cmd(c, "AUTH a b");
    char big[200];
    memset(big, 'a', 163);
    big[163] = '\0';
    cmd(c, "ECHO %s", big);
    cmd(c, "MGET 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 "
           "31 32 33 34 35");
    cmd(c, "CONFIG SET requirepass \"\"");
    cmd(c, "CONFIG SET slowlog-log-slower-than -1");
    /* SLOWLOG RESET itself, then six; not the CONFIG SET that disabled it */
    cr_expect_str_eq(cmd(c, "SLOWLOG LEN"), ":7\r\n");
    const char *g = cmd(c, "SLOWLOG GET 3");
    /* newest first, ids counting on from before the reset */
    cr_expect(strncmp(g, "*3\r\n*6\r\n:7\r\n:", 13) == 0, "%s", g);
    cr_expect(
        strstr(g, "*4\r\n$6\r\nCONFIG\r\n$3\r\nSET\r\n$11\r\nrequirepass\r\n$10\r\n(redacted)\r\n"),
        "%s", g);
    cr_expect(strstr(g, "$2\r\nme\r\n"), "%s", g);
    cr_expect(strstr(g, "$2\r\n30\r\n$22\r\n... (5 more arguments)\r\n$15\r\n127.0.0.1:"), "%s", g);
    g = cmd(c, "SLOWLOG GET -1");
    cr_expect(strncmp(g, "*7\r\n", 4) == 0, "%.20s", g);
    cr_expect(strstr(g, "... (35 more bytes)\r\n"), "%s", g);
    cr_expect(strstr(g, "*3\r\n$4\r\nAUTH\r\n$10\r\n(redacted)\r\n$10\r\n(redacted)\r\n"), "%s", g);
    /* a write is logged when its reply is ready: after its fdatasync */
    cr_expect(strstr(g, "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n"), "%s", g);
    cr_expect(strstr(g, "*2\r\n$7\r\nSLOWLOG\r\n$5\r\nRESET\r\n$15\r\n127.0.0.1:"), "%s", g);
    cmd(c, "CONFIG SET slowlog-max-len 2");
    cr_expect_str_eq(cmd(c, "SLOWLOG LEN"), ":2\r\n");
    cmd(c, "SLOWLOG RESET");
    cr_expect_str_eq(cmd(c, "SLOWLOG LEN"), ":0\r\n");
    cr_expect_str_eq(cmd(c, "SLOWLOG GET"), "*0\r\n");
    raw_close(c);
}

/* ------------------------------------------------------------------ */
/* protected mode, binds and limits                                    */

/* Tests talk to loopback addresses only. The server treats clients from
 * REMOTE_IP as remote (ATTICDB_TEST_REMOTE_ADDR, a test hook), and the test
 * connects from that address, so protected mode shows without a real
 * non-loopback address. */
#define REMOTE_IP "127.0.0.2"

static raw_t *raw_open_from(const char *src, int port)
{
    struct sockaddr_in from = {.sin_family = AF_INET};
    struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    inet_pton(AF_INET, src, &from.sin_addr);
    inet_pton(AF_INET, "127.0.0.1", &to.sin_addr);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return NULL;
    if (bind(fd, (struct sockaddr *)&from, sizeof(from)) != 0 ||
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

static const char DENIED[] =
    "-DENIED Redis is running in protected mode because protected mode is enabled and no "
    "password is set for the default user. In this mode connections are only accepted from the "
    "loopback interface. If you want to connect from external computers to Redis you may adopt "
    "one of the following solutions: 1) Just disable protected mode sending the command 'CONFIG "
    "SET protected-mode no' from the loopback interface by connecting to Redis from the same host "
    "the server is running, however MAKE SURE Redis is not publicly accessible from internet if "
    "you do so. Use CONFIG REWRITE to make this change permanent. 2) Alternatively you can just "
    "disable the protected mode by editing the Redis configuration file, and setting the "
    "protected mode option to 'no', and then restarting the server. 3) If you started the server "
    "manually just for testing, restart it with the '--protected-mode no' option. 4) Setup a an "
    "authentication password for the default user. NOTE: You only need to do one of the above "
    "things in order for the server to start accepting connections from the outside.\r\n";

Test(conn, protected_mode, .fini = teardown)
{
    setenv("ATTICDB_TEST_REMOTE_ADDR", REMOTE_IP, 1);
    start("--frontends 2");
    unsetenv("ATTICDB_TEST_REMOTE_ADDR");
    /* several connections, so both frontends refuse */
    for (int i = 0; i < 4; i++) {
        raw_t *x = raw_open_from(REMOTE_IP, S.port);
        cr_assert_not_null(x, "connect from %s", REMOTE_IP);
        raw_send(x, "PING\r\n", 6);
        char *r = raw_read(x, 1);
        cr_expect_str_eq(r, DENIED);
        free(r);
        cr_expect(raw_closed(x));
        raw_close(x);
    }
    raw_t *lo = raw_open(S.port);
    cr_expect_str_eq(cmd(lo, "PING"), "+PONG\r\n");
    cr_expect_str_eq(cmd(lo, "CONFIG SET protected-mode no"), "+OK\r\n");
    for (int i = 0; i < 4; i++) {
        raw_t *x = raw_open_from(REMOTE_IP, S.port);
        cr_expect_str_eq(cmd(x, "PING"), "+PONG\r\n");
        raw_close(x);
    }
    /* with a password the non-loopback client is let in, to AUTH */
    cmd(lo, "CONFIG SET protected-mode yes");
    cmd(lo, "CONFIG SET requirepass pw");
    raw_t *x = raw_open_from(REMOTE_IP, S.port);
    cr_expect_str_eq(cmd(x, "PING"), "-NOAUTH Authentication required.\r\n");
    cr_expect_str_eq(cmd(x, "AUTH pw"), "+OK\r\n");
    raw_close(x);
    raw_close(lo);
}

Test(conn, default_bind_is_loopback_with_optional_ipv6, .fini = teardown)
{
    const char *args[] = {"--frontends", "1", NULL};
    cr_assert_eq(proc_start(&A, atticdb_path(), NULL, args, "+PONG"), 0);
    raw_t *c = raw_open(A.port);
    cr_expect_str_eq(cmd(c, "CONFIG GET bind"), "*2\r\n$4\r\nbind\r\n$14\r\n127.0.0.1 -::1\r\n");
    cr_expect_str_eq(cmd(c, "CONFIG GET protected-mode"),
                     "*2\r\n$14\r\nprotected-mode\r\n$3\r\nyes\r\n");
    raw_close(c);
    /* ::1 listens when the machine has IPv6 (else it was skipped) */
    int fd = socket(AF_INET6, SOCK_STREAM, 0);
    struct sockaddr_in6 sa = {.sin6_family = AF_INET6, .sin6_port = htons((uint16_t)A.port)};
    sa.sin6_addr = in6addr_loopback;
    if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
        raw_t r6 = {.fd = fd};
        cr_expect_str_eq(cmd(&r6, "PING"), "+PONG\r\n");
        const char *info = cmd(&r6, "CLIENT INFO");
        cr_expect(strstr(info, " addr=[::1]:") && strstr(info, " laddr=[::1]:"), "%s", info);
        free(r6.buf);
    }
    if (fd >= 0) close(fd);
}

Test(conn, limits_change_live_on_every_frontend, .fini = teardown)
{
    start("--frontends 2");
    /* enough connections that both frontends hold several */
    enum { N = 20 };
    raw_t *c[N];
    int fe_of[N];
    int on1[N], n1 = 0, a_i = -1;
    for (int i = 0; i < N; i++) {
        c[i] = raw_open(S.port);
        cr_assert_not_null(c[i]);
        fe_of[i] = (int)info_field(cmd(c[i], "INFO server"), "frontend");
        if (fe_of[i] == 0 && a_i < 0) a_i = i;
        if (fe_of[i] == 1) on1[n1++] = i;
    }
    cr_assert(a_i >= 0 && n1 >= 4, "connections did not reach both frontends");
    raw_t *a = c[a_i], *b = c[on1[0]], *q = c[on1[1]], *idle = c[on1[2]];
    /* proto-max-bulk-len, set through one frontend, enforced by the other */
    cr_expect_str_eq(cmd(a, "CONFIG SET proto-max-bulk-len 1mb"), "+OK\r\n");
    raw_send(b, "*2\r\n$4\r\nECHO\r\n$2000000\r\n", 24);
    char *r = raw_read(b, 1);
    cr_expect_str_eq(r, "-ERR Protocol error: invalid bulk length\r\n");
    free(r);
    cr_expect(raw_closed(b));
    cr_expect_str_eq(cmd(a, "CONFIG SET proto-max-bulk-len 512mb"), "+OK\r\n");
    /* maxclients: at the number connected, the next connections are refused */
    long long clients = -1;
    for (int i = 0; i < 200 && clients != N - 1; i++) {
        if (i) usleep(10000);
        clients = info_field(cmd(a, "INFO clients"), "connected_clients");
    }
    cr_expect_eq(clients, N - 1);
    cr_expect_str_eq(cmd(a, "CONFIG SET maxclients %d", N - 1), "+OK\r\n");
    for (int i = 0; i < 4; i++) {
        raw_t *x = raw_open(S.port);
        r = raw_read(x, 1);
        cr_expect_str_eq(r, "-ERR max number of clients reached\r\n");
        free(r);
        raw_close(x);
    }
    cr_expect_geq(info_field(cmd(a, "INFO stats"), "rejected_connections"), 4);
    cr_expect_str_eq(cmd(a, "CONFIG SET maxclients 10000"), "+OK\r\n");
    /* client-query-buffer-limit: a request that grows past it closes */
    cr_expect_str_eq(cmd(a, "CONFIG SET client-query-buffer-limit 1mb"), "+OK\r\n");
    char *chunk = malloc(1 << 20);
    memset(chunk, 'x', 1 << 20);
    raw_send(q, "*2\r\n$4\r\nECHO\r\n$3000000\r\n", 24);
    raw_send(q, chunk, 1 << 20);
    raw_send(q, chunk, 1 << 20);
    free(chunk);
    cr_expect(raw_closed(q), "a client past client-query-buffer-limit was not closed");
    /* client-output-buffer-limit: a client of the other frontend that
     * never reads what it asked for is disconnected */
    cr_expect_str_eq(cmd(a, "CONFIG SET client-output-buffer-limit \"normal 256kb 0 0\""),
                     "+OK\r\n");
    char *val = malloc(100000);
    memset(val, 'v', 100000);
    const char *set_head = "*3\r\n$3\r\nSET\r\n$3\r\nbig\r\n$100000\r\n";
    raw_send(a, set_head, strlen(set_head));
    raw_send(a, val, 100000);
    raw_send(a, "\r\n", 2);
    free(val);
    r = raw_read(a, 1);
    cr_expect_str_eq(r, "+OK\r\n");
    free(r);
    raw_t *slow = c[on1[3 % n1]];
    for (int i = 0; i < 200; i++)
        raw_send(slow, "GET big\r\n", 9);
    usleep(500000);
    cr_expect(raw_closed(slow), "a client that never reads outlived client-output-buffer-limit");
    /* timeout: an idle client of the other frontend is closed */
    cr_expect_str_eq(cmd(a, "CONFIG SET timeout 1"), "+OK\r\n");
    cr_expect(raw_closed(idle), "an idle client of the other frontend outlived timeout 1");
    cmd(a, "CONFIG SET timeout 0");
    for (int i = 0; i < N; i++)
        raw_close(c[i]);
}

/* ------------------------------------------------------------------ */
/* several frontends                                                   */

Test(conn, two_frontends_share_clients_acl_config_and_stats, .fini = teardown)
{
    start("--frontends 2");
    enum { N = 16 };
    raw_t *c[N];
    long long ids[N];
    int fe_of[N], on[2] = {-1, -1};
    for (int i = 0; i < N; i++) {
        c[i] = raw_open(S.port);
        cr_assert_not_null(c[i]);
        fe_of[i] = (int)info_field(cmd(c[i], "INFO server"), "frontend");
        ids[i] = int_reply(cmd(c[i], "CLIENT ID"));
        cmd(c[i], "CLIENT SETNAME conn-%d", i);
        if (fe_of[i] >= 0 && fe_of[i] < 2 && on[fe_of[i]] < 0) on[fe_of[i]] = i;
    }
    cr_assert(on[0] >= 0 && on[1] >= 0, "connections did not reach both frontends");
    for (int i = 0; i < N; i++)
        for (int j = 0; j < i; j++)
            cr_expect_neq(ids[i], ids[j], "client ids repeat across frontends");
    raw_t *a = c[on[0]], *b = c[on[1]];
    /* CLIENT LIST from one frontend sees every client, in id order */
    const char *list = cmd(a, "CLIENT LIST");
    long long prev = 0;
    int lines = 0;
    for (const char *p = strstr(list, "id="); p; p = strstr(p + 1, "\nid=")) {
        long long id = strtoll(p + (p[0] == '\n' ? 4 : 3), NULL, 10);
        cr_expect_gt(id, prev, "CLIENT LIST is not in id order");
        prev = id;
        lines++;
    }
    cr_expect_eq(lines, N, "%s", list);
    for (int i = 0; i < N; i++) {
        char name[32];
        snprintf(name, sizeof(name), " name=conn-%d ", i);
        cr_expect(strstr(list, name), "CLIENT LIST lacks %s", name);
    }
    /* CLIENT KILL of a client of the other frontend */
    int victim = -1;
    for (int i = 0; i < N; i++)
        if (fe_of[i] == 1 && i != on[1]) victim = i;
    cr_assert_geq(victim, 0);
    cr_expect_str_eq(cmd(a, "CLIENT KILL ID %lld", ids[victim]), ":1\r\n");
    cr_expect(raw_closed(c[victim]), "the other frontend's client was not closed");
    list = cmd(a, "CLIENT LIST");
    char gone[32];
    snprintf(gone, sizeof(gone), "id=%lld ", ids[victim]);
    for (int i = 0; i < 100 && strstr(list, gone); i++) {
        usleep(10000);
        list = cmd(a, "CLIENT LIST");
    }
    cr_expect(!strstr(list, gone), "a killed client is still listed");
    /* CONFIG SET through one frontend, CONFIG GET through the other */
    cr_expect_str_eq(cmd(a, "CONFIG SET slowlog-max-len 77 timeout 123"), "+OK\r\n");
    cr_expect_str_eq(cmd(b, "CONFIG GET slowlog-max-len"),
                     "*2\r\n$15\r\nslowlog-max-len\r\n$2\r\n77\r\n");
    cr_expect_str_eq(cmd(b, "CONFIG GET timeout"), "*2\r\n$7\r\ntimeout\r\n$3\r\n123\r\n");
    cmd(a, "CONFIG SET timeout 0");
    /* ACL SETUSER through one, AUTH through the other; DELUSER closes it */
    cr_expect_str_eq(cmd(a, "ACL SETUSER carol on >pw ~c* +get"), "+OK\r\n");
    cr_expect_str_eq(cmd(b, "AUTH carol pw"), "+OK\r\n");
    cr_expect_str_eq(
        cmd(b, "GET nope"),
        "-NOPERM this user has no permissions to access one of the keys used as arguments\r\n");
    cr_expect_str_eq(cmd(a, "ACL SETUSER carol ~n*"), "+OK\r\n");
    cr_expect_str_eq(cmd(b, "GET nope"), "$-1\r\n");
    cr_expect_str_eq(cmd(a, "CLIENT KILL USER carol"), ":1\r\n");
    cr_expect(raw_closed(b));
    raw_close(b);
    c[on[1]] = NULL;
    b = raw_open(S.port);
    for (int i = 0; i < 40 && info_field(cmd(b, "INFO server"), "frontend") != 1; i++) {
        raw_close(b);
        b = raw_open(S.port);
    }
    cr_assert_eq(info_field(cmd(b, "INFO server"), "frontend"), 1);
    cr_expect_str_eq(cmd(b, "AUTH carol pw"), "+OK\r\n");
    cr_expect_str_eq(cmd(a, "ACL DELUSER carol"), ":1\r\n");
    cr_expect(raw_closed(b), "a deleted user's client on the other frontend stayed open");
    raw_close(b);
    b = raw_open(S.port);
    /* statistics add up over the frontends; RESETSTAT clears them all */
    cmd(a, "CONFIG RESETSTAT");
    for (int i = 0; i < N; i++)
        if (c[i] && i != victim) cmd(c[i], "ECHO x");
    const char *st = cmd(a, "INFO commandstats");
    cr_expect(strstr(st, "\r\ncmdstat_echo:calls=14,"), "%s", st);
    /* SLOWLOG: one log, whoever ran the command */
    cmd(a, "CONFIG SET slowlog-log-slower-than 0");
    cmd(a, "SLOWLOG RESET");
    for (int i = 0; i < N; i++)
        if (c[i] && i != victim) cmd(c[i], "PING marker-%d", i);
    cmd(a, "CONFIG SET slowlog-log-slower-than 10000");
    const char *sl = cmd(b, "SLOWLOG GET -1");
    for (int i = 0; i < N; i++) {
        if (!c[i] || i == victim) continue;
        char m[32];
        snprintf(m, sizeof(m), "marker-%d\r\n", i);
        cr_expect(strstr(sl, m), "SLOWLOG lacks %s", m);
    }
    raw_close(b);
    for (int i = 0; i < N; i++)
        raw_close(c[i]);
}
