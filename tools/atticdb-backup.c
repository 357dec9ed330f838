/*
 * atticdb-backup - take a backup of a running AtticDB server, check one,
 * and turn one into a new data directory (docs/OPERATIONS.md, "Backup and
 * restore"; D38).
 *
 *   atticdb-backup take [-h host] [-p port] [-s socket] [-a password]
 *                       [--timeout seconds]
 *       BGSAVE through the protocol, wait for it through INFO persistence
 *       (rdb_bgsave_in_progress back to 0, rdb_last_bgsave_status ok), then
 *       verify the backup it names (atticdb_last_backup_path) and print
 *       that path. The backup directory must be readable here: run it on
 *       the server's machine.
 *   atticdb-backup verify BACKUP
 *       Check the MANIFEST and every file's size and CRC32C, and the
 *       checkpoint as a whole (common/backup.h).
 *   atticdb-backup restore BACKUP DATADIR
 *       Verify, then copy into DATADIR.restore, sync, rename to DATADIR
 *       (which must not exist, or be empty). Start a server with --dir
 *       DATADIR: it holds the state at the backup's LSN.
 *
 * Exit status: 0 done, 1 failed (the reason on stderr), 2 usage. A process
 * of its own (no server runs it); a kill at any moment leaves no directory
 * that a later restore or server would take for a complete one.
 */
#include <errno.h>
#include <inttypes.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "backup.h"
#include "bench_resp.h"
#include "io_fault.h"

#define POLL_MS         100
#define DEFAULT_TIMEOUT 3600 /* seconds a backup may take before `take` gives up */

static void usage(void)
{
    fprintf(stderr, "usage: atticdb-backup take [-h host] [-p port] [-s socket] [-a password] "
                    "[--timeout seconds]\n"
                    "       atticdb-backup verify BACKUP\n"
                    "       atticdb-backup restore BACKUP DATADIR\n");
}

/* ---- a minimal client ------------------------------------------------------ */

typedef struct client {
    int fd;
    char *buf;
    size_t len, cap;
} client_t;

static int dial(const char *host, const char *port, const char *sock)
{
    if (sock) {
        struct sockaddr_un un = {.sun_family = AF_UNIX};
        if (strlen(sock) >= sizeof(un.sun_path)) return -1;
        strcpy(un.sun_path, sock);
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd >= 0 && connect(fd, (struct sockaddr *)&un, sizeof(un)) == 0) return fd;
        if (fd >= 0) close(fd);
        return -1;
    }
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *res, *a;
    if (getaddrinfo(host, port, &hints, &res)) return -1;
    int fd = -1;
    for (a = res; a && fd < 0; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (fd >= 0 && connect(fd, a->ai_addr, a->ai_addrlen)) {
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(res);
    return fd;
}

/*
 * Send a command, read its reply: *kind '+', '-', ':' or '$' and its text
 * (the line, or the bulk's bytes) in out, NUL-terminated. Returns 0, or -1
 * (the connection failed, or a reply this tool does not read).
 */
static int call(client_t *c, int argc, const char *const *argv, char *kind, char **out)
{
    size_t lens[8];
    for (int i = 0; i < argc; i++)
        lens[i] = strlen(argv[i]);
    bench_buf_t req = {0};
    if (bench_resp_append_cmd(&req, argc, argv, lens)) return -1;
    size_t off = 0;
    while (off < req.len) {
        ssize_t n = write(c->fd, req.data + off, req.len - off);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            bench_buf_free(&req);
            return -1;
        }
        off += (size_t)n;
    }
    bench_buf_free(&req);
    size_t used;
    int k;
    c->len = 0;
    for (;;) {
        int r = bench_resp_scan(c->buf, c->len, &used, &k);
        if (r < 0) return -1;
        if (r > 0) break;
        if (c->cap - c->len < 4096) {
            char *nb = realloc(c->buf, c->cap * 2 + 65536);
            if (!nb) return -1;
            c->buf = nb;
            c->cap = c->cap * 2 + 65536;
        }
        ssize_t n = read(c->fd, c->buf + c->len, c->cap - c->len - 1);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return -1;
        c->len += (size_t)n;
    }
    *kind = c->buf[0];
    char *body = c->buf + 1, *crlf = strstr(c->buf, "\r\n");
    if (!crlf) return -1;
    if (*kind == '$') {
        long long blen = atoll(body);
        if (blen < 0) return -1;
        body = crlf + 2;
        body[blen] = '\0';
    } else if (*kind == '+' || *kind == '-' || *kind == ':') {
        *crlf = '\0';
    } else {
        return -1;
    }
    *out = body;
    return 0;
}

/* The value of field in an INFO text, into out ("" when absent). */
static void info_field(const char *info, const char *field, char *out, size_t outlen)
{
    out[0] = '\0';
    size_t fl = strlen(field);
    for (const char *p = info; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
        if (strncmp(p, field, fl) || p[fl] != ':') continue;
        const char *v = p + fl + 1;
        size_t n = strcspn(v, "\r\n");
        if (n >= outlen) n = outlen - 1;
        memcpy(out, v, n);
        out[n] = '\0';
        return;
    }
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* INFO persistence's rdb_bgsave_in_progress: 1, 0, or -1 (no answer). */
static int in_progress(client_t *c, char *status, char *path, size_t pathlen)
{
    static const char *const argv[] = {"INFO", "persistence"};
    char kind, *text, v[32];
    if (call(c, 2, argv, &kind, &text) || kind != '$') return -1;
    info_field(text, "rdb_bgsave_in_progress", v, sizeof(v));
    info_field(text, "rdb_last_bgsave_status", status, 16);
    info_field(text, "atticdb_last_backup_path", path, pathlen);
    return v[0] ? atoi(v) != 0 : -1;
}

static int take(int argc, char **argv)
{
    const char *host = "127.0.0.1", *port = "6379", *sock = NULL, *pass = NULL;
    long timeout = DEFAULT_TIMEOUT;
    for (int i = 0; i < argc; i++) {
        const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) {
            usage();
            return 2;
        }
        if (!strcmp(o, "-h"))
            host = v;
        else if (!strcmp(o, "-p"))
            port = v;
        else if (!strcmp(o, "-s"))
            sock = v;
        else if (!strcmp(o, "-a"))
            pass = v;
        else if (!strcmp(o, "--timeout"))
            timeout = atol(v);
        else {
            usage();
            return 2;
        }
        i++;
    }
    client_t c = {dial(host, port, sock), malloc(65536), 0, 65536};
    if (c.fd < 0 || !c.buf) {
        fprintf(stderr, "atticdb-backup: cannot connect to %s: %s\n", sock ? sock : host,
                strerror(errno));
        return 1;
    }
    char kind, *text, status[16], path[4096];
    if (pass) {
        const char *auth[] = {"AUTH", pass};
        if (call(&c, 2, auth, &kind, &text) || kind == '-') {
            fprintf(stderr, "atticdb-backup: AUTH failed: %s\n", kind == '-' ? text : "no reply");
            return 1;
        }
    }
    time_t deadline = time(NULL) + timeout;
    static const char *const bgsave[] = {"BGSAVE"};
    /* One already running may have begun before writes this backup must
     * hold: wait for it, then ask for ours. */
    for (;;) {
        if (call(&c, 1, bgsave, &kind, &text)) goto lost;
        if (kind == '+') break;
        if (kind != '-' || !strstr(text, "already in progress")) {
            fprintf(stderr, "atticdb-backup: BGSAVE: %s\n", text);
            return 1;
        }
        if (time(NULL) > deadline) goto late;
        sleep_ms(POLL_MS);
    }
    int r;
    while ((r = in_progress(&c, status, path, sizeof(path))) == 1) {
        if (time(NULL) > deadline) goto late;
        sleep_ms(POLL_MS);
    }
    if (r < 0) goto lost;
    if (strcmp(status, "ok") || !path[0]) {
        fprintf(stderr,
                "atticdb-backup: the backup failed (rdb_last_bgsave_status:%s): the server's "
                "log says why\n",
                status);
        return 1;
    }
    char err[1024];
    if (backup_verify(path, NULL, err, sizeof(err))) {
        fprintf(stderr, "atticdb-backup: %s\n", err);
        return 1;
    }
    printf("%s\n", path);
    return 0;
lost:
    fprintf(stderr, "atticdb-backup: the connection to the server failed\n");
    return 1;
late:
    fprintf(stderr, "atticdb-backup: no backup completed within %ld s\n", timeout);
    return 1;
}

int main(int argc, char **argv)
{
    const char *faults = getenv("ATTICDB_TEST_FAULTS");
    if (faults) {
        /* A test hook (common/io_fault.h): entries of role "backup". */
        fprintf(stderr, "atticdb-backup: ATTICDB_TEST_FAULTS is set (%s): faults are injected\n",
                faults);
        if (io_fault_install(faults, "backup", 1) < 0) {
            fprintf(stderr, "atticdb-backup: malformed ATTICDB_TEST_FAULTS: %s\n", faults);
            return 2;
        }
    }
    char err[1024];
    if (argc >= 2 && !strcmp(argv[1], "take")) return take(argc - 2, argv + 2);
    if (argc == 3 && !strcmp(argv[1], "verify")) {
        backup_manifest_t m;
        if (backup_verify(argv[2], &m, err, sizeof(err))) {
            fprintf(stderr, "atticdb-backup: %s\n", err);
            return 1;
        }
        printf("%s: a complete backup at LSN %" PRIu64 " (%zu files)\n", argv[2], m.lsn, m.nfiles);
        backup_manifest_free(&m);
        return 0;
    }
    if (argc == 4 && !strcmp(argv[1], "restore")) {
        if (backup_restore(argv[2], argv[3], err, sizeof(err))) {
            fprintf(stderr, "atticdb-backup: %s\n", err);
            return 1;
        }
        printf("%s: restored from %s\n", argv[3], argv[2]);
        return 0;
    }
    usage();
    return 2;
}
