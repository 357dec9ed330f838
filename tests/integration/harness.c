/*
 * harness.c - see harness.h. Used by the integration tests only.
 */
#include "harness.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int srv_free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof(sa);
    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
        getsockname(fd, (struct sockaddr *)&sa, &len) != 0) {
        if (fd >= 0) close(fd);
        return -1;
    }
    close(fd);
    return ntohs(sa.sin_port);
}

static const char *server_path(void)
{
    const char *p = getenv("ATTICDB_SERVER");
    return p ? p : "./atticdb-server";
}

/* The last lines of a server's log on stderr: why it did not start (the
 * log itself is removed with the data directory when the test ends). */
static void show_log_tail(const srv_t *s, const char *why)
{
    FILE *f = fopen(s->log, "r");
    if (!f) return;
    char lines[20][512];
    int n = 0;
    while (fgets(lines[n % 20], sizeof(lines[0]), f))
        n++;
    fclose(f);
    fprintf(stderr, "server on port %d %s; the end of its log (%s):\n", s->port, why, s->log);
    for (int i = n > 20 ? n - 20 : 0; i < n; i++)
        fprintf(stderr, "  | %s", lines[i % 20]);
}

/* Until the server answers PING and, when `loaded`, its store serves
 * (INFO loading:0): PING is the frontend's own, answered while the store
 * still replays the log, and a read sent then waits for the replay. A
 * restart that falls back to replaying the whole log (every checkpoint
 * refused) made a test's 2 s client see no reply at all. A store that
 * never serves within the time (a crash loop) still counts as started
 * once PING is answered, as before. */
static int wait_ready(srv_t *s, int loaded)
{
    int answered = 0;
    /* Up to 30 s: a restart replays the log after the newest checkpoint,
     * and a loaded machine (or a sanitizer build) can take a while. */
    for (int i = 0; i < 3000; i++) {
        int status;
        if (waitpid(s->pid, &status, WNOHANG) == s->pid) {
            s->pid = 0;
            if (!srv_log_contains(s, "port in use", NULL) &&
                !srv_log_contains(s, "Address already in use", NULL))
                show_log_tail(s, "exited before it was ready");
            return -1;
        }
        redisContext *c = srv_connect(s);
        if (c) {
            redisReply *r = redisCommand(c, "PING");
            int ok = r && r->type == REDIS_REPLY_STATUS;
            if (r) freeReplyObject(r);
            char loading[8] = "0";
            if (ok && loaded) srv_info_persistence(c, "loading", loading, sizeof(loading));
            redisFree(c);
            answered |= ok;
            if (ok && strcmp(loading, "0") == 0) return 0;
        }
        usleep(10000);
    }
    if (answered) return 0;
    show_log_tail(s, "was not ready within 30 s");
    return -1;
}

pid_t srv_spawn(char *const *argv)
{
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        setpgid(0, 0);
        /* If the test process dies (a crash skips .fini), the server goes
         * too: its children follow the master by their own PDEATHSIG. */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        /* Not the test's stdout: a pipe held open by a server would keep a
         * reader of the test's output waiting forever. */
        int devnull = open("/dev/null", O_RDWR);
        if (devnull >= 0) {
            dup2(devnull, 0);
            dup2(devnull, 1);
            dup2(devnull, 2);
        }
        execv(argv[0], argv);
        _exit(127);
    }
    setpgid(pid, pid);
    return pid;
}

static void track(const srv_t *s);

static int spawn(srv_t *s, int loaded)
{
    char port[16];
    snprintf(port, sizeof(port), "%d", s->port);
    char *argv[64];
    int argc = 0;
    argv[argc++] = (char *)server_path();
    if (s->conf[0]) argv[argc++] = s->conf;
    argv[argc++] = "--port";
    argv[argc++] = port;
    argv[argc++] = "--bind";
    argv[argc++] = "127.0.0.1";
    argv[argc++] = "--dir";
    argv[argc++] = s->dir;
    argv[argc++] = "--logfile";
    argv[argc++] = s->log;
    char extra[512];
    snprintf(extra, sizeof(extra), "%s", s->extra);
    for (char *t = strtok(extra, " "); t && argc < 62; t = strtok(NULL, " "))
        argv[argc++] = t;
    argv[argc] = NULL;
    pid_t pid = srv_spawn(argv);
    if (pid < 0) return -1;
    s->pid = pid;
    track(s);
    int rc = wait_ready(s, loaded);
    track(s);
    return rc;
}

/* Servers started by this process, copied (a test's srv_t lives on its
 * stack, gone after a failed assertion leaves the test early), so that
 * srv_cleanup_all can still stop them and remove their files. */
#define MAX_TRACKED 16
static srv_t tracked[MAX_TRACKED];

static void track(const srv_t *s)
{
    int free_slot = -1;
    for (int i = 0; i < MAX_TRACKED; i++) {
        if (tracked[i].dir[0] && strcmp(tracked[i].dir, s->dir) == 0) {
            tracked[i] = *s;
            return;
        }
        if (!tracked[i].dir[0] && free_slot < 0) free_slot = i;
    }
    if (free_slot >= 0) tracked[free_slot] = *s;
}

void srv_cleanup_all(void)
{
    for (int i = 0; i < MAX_TRACKED; i++) {
        if (tracked[i].dir[0]) srv_cleanup(&tracked[i]);
        memset(&tracked[i], 0, sizeof(tracked[i]));
    }
}

static int start(srv_t *s, const char *conf, const char *extra)
{
    /* A server that closes a connection must give the test an error, not
     * kill it with SIGPIPE. */
    signal(SIGPIPE, SIG_IGN);
    memset(s, 0, sizeof(*s));
    snprintf(s->conf, sizeof(s->conf), "%s", conf ? conf : "");
    snprintf(s->dir, sizeof(s->dir), "/tmp/attic-it-XXXXXX");
    if (!mkdtemp(s->dir)) return -1;
    snprintf(s->log, sizeof(s->log), "%s.log", s->dir);
    snprintf(s->extra, sizeof(s->extra), "%s", extra ? extra : "");
    s->port = srv_free_port();
    return spawn(s, 0);
}

int srv_start(srv_t *s, const char *extra)
{
    return start(s, NULL, extra);
}

int srv_start_conf(srv_t *s, const char *conf, const char *extra)
{
    return start(s, conf, extra);
}

/* The children were in the master's group. They are gone for our purpose
 * once none holds the data directory's lock any more (a zombie waiting
 * for init to reap it holds no file): up to 1 s. */
static void wait_lock_free(const srv_t *s)
{
    char lock[300];
    snprintf(lock, sizeof(lock), "%s/LOCK", s->dir);
    for (int i = 0; i < 500; i++) {
        int fd = open(lock, O_RDWR);
        if (fd < 0) break;
        int free_now = flock(fd, LOCK_EX | LOCK_NB) == 0;
        close(fd);
        if (free_now) break;
        usleep(2000);
    }
}

int srv_wait_exit(srv_t *s, int seconds)
{
    if (s->pid <= 0) return -1;
    for (int i = 0; i < seconds * 100; i++) {
        int status;
        if (waitpid(s->pid, &status, WNOHANG) == s->pid) {
            s->pid = 0;
            track(s);
            /* A master killed with its group (a simulated power cut) may
             * go first: a restart must not find its children's lock. */
            wait_lock_free(s);
            return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        }
        usleep(10000);
    }
    return -1;
}

int srv_start_faults(srv_t *s, const char *faults, const char *extra)
{
    setenv("ATTICDB_TEST_FAULTS", faults, 1);
    int rc = srv_start(s, extra);
    unsetenv("ATTICDB_TEST_FAULTS");
    return rc;
}

int srv_log_contains(const srv_t *s, const char *needle, const char *also)
{
    FILE *f = fopen(s->log, "r");
    if (!f) return 0;
    char line[1024];
    int found = 0;
    while (!found && fgets(line, sizeof(line), f))
        found = strstr(line, needle) && (!also || strstr(line, also));
    fclose(f);
    return found;
}

int srv_restart(srv_t *s)
{
    /* While a server is down its port is free, and another test starting
     * at that moment may take it: then move to another free port. */
    for (int attempt = 0; attempt < 5; attempt++) {
        if (spawn(s, 1) == 0) return 0;
        if (!srv_log_contains(s, "port in use", NULL) &&
            !srv_log_contains(s, "Address already in use", NULL))
            return -1;
        s->port = srv_free_port();
    }
    return -1;
}

int srv_stop(srv_t *s)
{
    if (s->pid <= 0) return -1;
    kill(s->pid, SIGTERM);
    for (int i = 0; i < 3000; i++) { /* up to 30 s */
        int status;
        if (waitpid(s->pid, &status, WNOHANG) == s->pid) {
            s->pid = 0;
            track(s);
            /* Children must be gone too. */
            return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        }
        usleep(10000);
    }
    srv_kill_all(s);
    return -1;
}

void srv_kill_all(srv_t *s)
{
    /* pid 0: the master is already reaped (it died starting, perhaps by a
     * simulated power cut that killed the group); its children may still
     * be exiting, so the wait for the lock below still runs. */
    if (s->pid > 0) {
        kill(-s->pid, SIGKILL);
        waitpid(s->pid, NULL, 0);
    }
    wait_lock_free(s);
    s->pid = 0;
    track(s);
}

void srv_cleanup(srv_t *s)
{
    if (s->pid > 0) srv_kill_all(s);
    if (s->dir[0]) {
        char cmd[700];
        /* ATTIC_KEEP_LOGS=DIR keeps each server's log there, for a flake
         * caught in a loop (the data directory still goes). */
        const char *keep = getenv("ATTIC_KEEP_LOGS");
        if (keep && keep[0]) {
            snprintf(cmd, sizeof(cmd), "cp '%s' '%s/' 2>/dev/null", s->log, keep);
            if (system(cmd) != 0) fprintf(stderr, "could not keep %s\n", s->log);
        }
        snprintf(cmd, sizeof(cmd), "rm -rf '%s' '%s'", s->dir, s->log);
        if (system(cmd) != 0) fprintf(stderr, "cleanup of %s failed\n", s->dir);
        for (int i = 0; i < MAX_TRACKED; i++)
            if (strcmp(tracked[i].dir, s->dir) == 0) memset(&tracked[i], 0, sizeof(tracked[i]));
        s->dir[0] = '\0';
    }
}

redisContext *srv_connect(const srv_t *s)
{
    struct timeval tv = {2, 0};
    redisContext *c = redisConnectWithTimeout("127.0.0.1", s->port, tv);
    if (!c) return NULL;
    if (c->err) {
        redisFree(c);
        return NULL;
    }
    redisSetTimeout(c, (struct timeval){10, 0});
    return c;
}

int srv_frontend_of(redisContext *c)
{
    redisReply *r = redisCommand(c, "INFO server");
    const char *p = r && r->type == REDIS_REPLY_STRING ? strstr(r->str, "\r\nfrontend:") : NULL;
    int fe = p ? atoi(p + 11) : -1;
    if (r) freeReplyObject(r);
    return fe;
}

long long srv_info_text_num(const char *text, const char *field)
{
    char key[128];
    snprintf(key, sizeof(key), "\r\n%s:", field);
    const char *p = strstr(text, key);
    return p ? strtoll(p + strlen(key), NULL, 10) : -1;
}

long long srv_info_num(const srv_t *s, const char *section, const char *field)
{
    redisContext *c = srv_connect(s);
    if (!c) return -1;
    redisReply *r = redisCommand(c, "INFO %s", section);
    long long v = r && r->type == REDIS_REPLY_STRING ? srv_info_text_num(r->str, field) : -1;
    if (r) freeReplyObject(r);
    redisFree(c);
    return v;
}

redisContext *srv_connect_on(const srv_t *s, int fe)
{
    for (int i = 0; i < 200; i++) {
        redisContext *c = srv_connect(s);
        if (!c) return NULL;
        if (srv_frontend_of(c) == fe) return c;
        redisFree(c);
    }
    return NULL;
}

int srv_find_children(const srv_t *s, const char *title, pid_t *out, int max)
{
    DIR *d = opendir("/proc");
    if (!d) return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && n < max) {
        pid_t pid = (pid_t)atoi(e->d_name);
        if (pid <= 0) continue;
        char path[64], buf[256];
        snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        int ppid = 0;
        char comm[64];
        int ok = fscanf(f, "%*d (%63[^)]) %*c %d", comm, &ppid) == 2;
        fclose(f);
        if (!ok || ppid != s->pid) continue;
        snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
        f = fopen(path, "r");
        if (!f) continue;
        size_t len = fread(buf, 1, sizeof(buf) - 1, f);
        fclose(f);
        buf[len] = '\0';
        if (strncmp(buf, title, strlen(title)) == 0) out[n++] = pid;
    }
    closedir(d);
    return n;
}

static void append_reply(char *buf, size_t len, redisReply *r)
{
    size_t n = strlen(buf);
    switch (r->type) {
    case REDIS_REPLY_STATUS:
        snprintf(buf + n, len - n, "+%s\r\n", r->str);
        break;
    case REDIS_REPLY_ERROR:
        snprintf(buf + n, len - n, "-%s\r\n", r->str);
        break;
    case REDIS_REPLY_INTEGER:
        snprintf(buf + n, len - n, ":%lld\r\n", r->integer);
        break;
    case REDIS_REPLY_NIL:
        snprintf(buf + n, len - n, "$-1\r\n");
        break;
    case REDIS_REPLY_STRING:
        snprintf(buf + n, len - n, "$%zu\r\n%.*s\r\n", r->len, (int)r->len, r->str);
        break;
    case REDIS_REPLY_ARRAY:
        snprintf(buf + n, len - n, "*%zu\r\n", r->elements);
        for (size_t i = 0; i < r->elements; i++)
            append_reply(buf, len, r->element[i]);
        break;
    default:
        snprintf(buf + n, len - n, "?type%d\r\n", r->type);
    }
}

const char *srv_cmd_raw(redisContext *c, char *buf, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    redisReply *r = redisvCommand(c, fmt, ap);
    va_end(ap);
    buf[0] = '\0';
    if (!r) {
        snprintf(buf, len, "<connection error: %s>", c->errstr);
        return buf;
    }
    append_reply(buf, len, r);
    freeReplyObject(r);
    return buf;
}

int srv_run_tool(const char *tool, const char *args, char *out, size_t outlen)
{
    char bin[1024];
    snprintf(bin, sizeof(bin), "%s", server_path());
    char *slash = strrchr(bin, '/');
    size_t at = slash ? (size_t)(slash + 1 - bin) : 0;
    snprintf(bin + at, sizeof(bin) - at, "%s", tool);
    char cmd[4096];
    snprintf(cmd, sizeof(cmd), "%s %s 2>&1", bin, args);
    FILE *p = popen(cmd, "r");
    if (!p) return -1;
    size_t n = fread(out, 1, outlen - 1, p);
    out[n] = '\0';
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

const char *srv_log_tail(const srv_t *s, char *buf, size_t len)
{
    buf[0] = '\0';
    FILE *f = fopen(s->log, "r");
    if (!f) return buf;
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    long from = size > (long)len - 1 ? size - (long)len + 1 : 0;
    fseek(f, from, SEEK_SET);
    size_t n = fread(buf, 1, len - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

const char *srv_log_tail_of_port(int port, char *buf, size_t len)
{
    buf[0] = '\0';
    for (int i = 0; i < MAX_TRACKED; i++)
        if (tracked[i].dir[0] && tracked[i].port == port)
            return srv_log_tail(&tracked[i], buf, len);
    return buf;
}

int srv_wait_children(const srv_t *s, const char *title, pid_t *out, int max, int want)
{
    int n = 0;
    for (int i = 0; i < 200 && (n = srv_find_children(s, title, out, max)) != want; i++)
        usleep(10000);
    return n;
}

const char *srv_info_persistence(redisContext *c, const char *field, char *out, size_t n)
{
    redisReply *r = redisCommand(c, "INFO persistence");
    snprintf(out, n, "%s", r && r->type == REDIS_REPLY_STRING ? "" : "<error>");
    const char *p = r && r->type == REDIS_REPLY_STRING ? r->str : "";
    size_t flen = strlen(field);
    for (; (p = strstr(p, field)) != NULL; p += flen) {
        if (p[flen] != ':' || (p != r->str && p[-1] != '\n')) continue;
        p += flen + 1;
        snprintf(out, n, "%.*s", (int)strcspn(p, "\r\n"), p);
        break;
    }
    if (r) freeReplyObject(r);
    return out;
}
