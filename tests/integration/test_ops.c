/*
 * test_ops.c - running AtticDB unattended (issue 15, parts 3 and 4): the
 * service manager's readiness protocol (master/notify.c), log rotation by
 * SIGHUP (common/log.c), SHUTDOWN's options, CONFIG REWRITE, LATENCY,
 * MEMORY and the INFO fields monitoring reads. Real server, hiredis.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "harness.h"

TestSuite(ops, .fini = srv_cleanup_all, .timeout = 120);

/* ---- helpers ---- */

/* A datagram socket bound to name (abstract when it starts with '@'). */
static int notify_listen(const char *name)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    size_t n = strlen(name);
    memcpy(sa.sun_path, name, n);
    if (name[0] == '@')
        sa.sun_path[0] = '\0';
    else
        unlink(name);
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    cr_assert(fd >= 0);
    cr_assert(bind(fd, (struct sockaddr *)&sa,
                   (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n)) == 0,
              "bind %s: %s", name, strerror(errno));
    return fd;
}

/* The next datagram, waiting up to 20 s; "" when none came. */
static const char *notify_next(int fd, char *buf, size_t len)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    buf[0] = '\0';
    if (poll(&p, 1, 20000) != 1) return buf;
    ssize_t n = recv(fd, buf, len - 1, 0);
    buf[n > 0 ? n : 0] = '\0';
    return buf;
}

static int file_contains(const char *path, const char *needle)
{
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    char line[2048];
    int found = 0;
    while (!found && fgets(line, sizeof(line), f))
        found = strstr(line, needle) != NULL;
    fclose(f);
    return found;
}

/* Wait up to 10 s for a line holding needle in path. */
static int wait_file_contains(const char *path, const char *needle)
{
    for (int i = 0; i < 1000; i++) {
        if (file_contains(path, needle)) return 1;
        usleep(10000);
    }
    return 0;
}

static void start_notified(const char *name, int *fd, srv_t *s, const char *extra)
{
    *fd = notify_listen(name);
    setenv("NOTIFY_SOCKET", name, 1);
    int rc = srv_start(s, extra);
    unsetenv("NOTIFY_SOCKET");
    cr_assert(rc == 0, "server did not start");
}

/* ---- the readiness protocol ---- */

Test(ops, ready_is_notified_on_an_abstract_socket_and_stopping_at_shutdown)
{
    char name[64], msg[256];
    snprintf(name, sizeof(name), "@attic-notify-%d", (int)getpid());
    int fd;
    srv_t s;
    start_notified(name, &fd, &s, "--frontends 2");
    cr_assert_str_eq(notify_next(fd, msg, sizeof(msg)), "READY=1");
    /* Ready means serving: both frontends answer. */
    for (int i = 0; i < 4; i++) {
        redisContext *c = srv_connect(&s);
        cr_assert(c);
        redisReply *r = redisCommand(c, "SET k%d v", i);
        cr_assert(r && r->type == REDIS_REPLY_STATUS);
        freeReplyObject(r);
        redisFree(c);
    }
    cr_assert_eq(srv_stop(&s), 0);
    cr_assert_str_eq(notify_next(fd, msg, sizeof(msg)), "STOPPING=1");
    close(fd);
    srv_cleanup(&s);
}

Test(ops, ready_is_notified_on_a_socket_path)
{
    char name[108], msg[256];
    snprintf(name, sizeof(name), "/tmp/attic-notify-%d.sock", (int)getpid());
    int fd;
    srv_t s;
    start_notified(name, &fd, &s, "--frontends 1");
    cr_assert_str_eq(notify_next(fd, msg, sizeof(msg)), "READY=1");
    /* Only once: a respawned child is not a new start. */
    pid_t fe[4];
    cr_assert_eq(srv_wait_children(&s, "atticdb-server: frontend", fe, 4, 1), 1);
    kill(fe[0], SIGKILL);
    cr_assert(wait_file_contains(s.log, "respawned frontend"));
    cr_assert_eq(srv_stop(&s), 0);
    cr_assert_str_eq(notify_next(fd, msg, sizeof(msg)), "STOPPING=1");
    close(fd);
    unlink(name);
    srv_cleanup(&s);
}

Test(ops, no_notify_socket_no_message_and_a_bad_one_does_not_stop_the_server)
{
    setenv("NOTIFY_SOCKET", "@attic-nobody-listens-here", 1);
    srv_t s;
    int rc = srv_start(&s, NULL);
    unsetenv("NOTIFY_SOCKET");
    cr_assert(rc == 0);
    cr_assert(wait_file_contains(s.log, "Can't notify the service manager (READY=1)"));
    cr_assert_eq(srv_stop(&s), 0);
    srv_cleanup(&s);
}

/* ---- SIGHUP reopens the log file ---- */

Test(ops, sighup_moves_every_process_to_a_new_log_file)
{
    srv_t s;
    cr_assert(srv_start(&s, "--frontends 2") == 0);
    cr_assert(wait_file_contains(s.log, "Ready to accept connections"));
    char old[320];
    snprintf(old, sizeof(old), "%s.1", s.log);
    cr_assert(rename(s.log, old) == 0);
    kill(s.pid, SIGHUP);
    cr_assert(wait_file_contains(s.log, "Received SIGHUP: reopened the log file"),
              "the master did not reopen %s", s.log);
    /* Lines from processes that were running before the SIGHUP: a
     * frontend (SHUTDOWN), the logger (its stop), the master. */
    redisContext *c = srv_connect(&s);
    cr_assert(c);
    redisReply *r = redisCommand(c, "SET a b");
    cr_assert(r && r->type == REDIS_REPLY_STATUS);
    freeReplyObject(r);
    r = redisCommand(c, "SHUTDOWN");
    if (r) freeReplyObject(r);
    redisFree(c);
    cr_assert_eq(srv_wait_exit(&s, 30), 0);
    cr_assert(file_contains(s.log, "User requested shutdown"));
    cr_assert(file_contains(s.log, "Logger stopped at durable LSN"));
    cr_assert(file_contains(s.log, "bye bye"));
    cr_assert(!file_contains(old, "User requested shutdown"));
    cr_assert(!file_contains(old, "Logger stopped at durable LSN"));
    cr_assert(file_contains(old, "Ready to accept connections"));
    unlink(old);
    srv_cleanup(&s);
}

/* ---- the example configuration (etc/atticdb.conf) ---- */

Test(ops, server_starts_with_the_example_configuration_unchanged)
{
    const char *conf = getenv("ATTICDB_CONF_EXAMPLE");
    cr_assert(conf, "ATTICDB_CONF_EXAMPLE is set by make check");
    srv_t s;
    cr_assert(srv_start_conf(&s, conf, NULL) == 0, "the server did not start with %s", conf);
    redisContext *c = srv_connect(&s);
    cr_assert(c);
    redisReply *r = redisCommand(c, "CONFIG GET maxclients");
    cr_assert(r && r->type == REDIS_REPLY_ARRAY && r->elements == 2);
    cr_assert_str_eq(r->element[1]->str, "10000");
    freeReplyObject(r);
    r = redisCommand(c, "INFO server");
    cr_assert(r && r->type == REDIS_REPLY_STRING);
    char want[400];
    char *abs = realpath(conf, NULL);
    snprintf(want, sizeof(want), "config_file:%s\r\n", abs);
    free(abs);
    cr_assert(strstr(r->str, want), "INFO server lacks %s", want);
    freeReplyObject(r);
    redisFree(c);
    cr_assert_eq(srv_stop(&s), 0);
    srv_cleanup(&s);
}

/* ---- SHUTDOWN's options (Redis 7.0's parsing and texts) ---- */

static void expect_error(redisContext *c, const char *cmd, const char *want)
{
    redisReply *r = redisCommand(c, cmd);
    cr_assert(r, "%s: no reply", cmd);
    cr_expect(r->type == REDIS_REPLY_ERROR && !strcmp(r->str, want), "%s: got %s, want %s", cmd,
              r->str ? r->str : "(no text)", want);
    freeReplyObject(r);
}

Test(ops, shutdown_options_parse_as_redis)
{
    srv_t s;
    cr_assert(srv_start(&s, "--frontends 1") == 0);
    redisContext *c = srv_connect(&s);
    cr_assert(c);
    expect_error(c, "SHUTDOWN ABORT", "ERR No shutdown in progress.");
    expect_error(c, "SHUTDOWN abort abort", "ERR No shutdown in progress.");
    expect_error(c, "SHUTDOWN ABORT NOW", "ERR syntax error");
    expect_error(c, "SHUTDOWN FORCE ABORT", "ERR syntax error");
    expect_error(c, "SHUTDOWN SAVE NOSAVE", "ERR syntax error");
    expect_error(c, "SHUTDOWN NOSAVE maybe", "ERR syntax error");
    /* Still serving after all of them. */
    redisReply *r = redisCommand(c, "PING");
    cr_assert(r && r->type == REDIS_REPLY_STATUS);
    freeReplyObject(r);
    r = redisCommand(c, "SHUTDOWN NOSAVE NOW FORCE");
    cr_assert(!r || r->type != REDIS_REPLY_STATUS, "SHUTDOWN replied instead of closing");
    if (r) freeReplyObject(r);
    redisFree(c);
    cr_assert_eq(srv_wait_exit(&s, 30), 0);
    srv_cleanup(&s);
}

Test(ops, shutdown_save_is_refused_while_the_log_is_failed_unless_forced)
{
    srv_t s;
    cr_assert(srv_start_faults(&s, "logger.fdatasync:20:EIO", "--frontends 1") == 0);
    redisContext *c = srv_connect(&s);
    cr_assert(c);
    int failed = 0;
    for (int i = 0; i < 200 && !failed; i++) { /* the 20th fdatasync fails the log */
        redisReply *w = redisCommand(c, "SET k%d v", i);
        cr_assert(w);
        failed = w->type == REDIS_REPLY_ERROR;
        freeReplyObject(w);
    }
    cr_assert(failed, "the log never failed");
    redisReply *r;
    expect_error(c, "SHUTDOWN SAVE", "ERR Errors trying to SHUTDOWN. Check logs.");
    cr_assert(srv_log_contains(&s, "Error trying to save the DB, can't exit", NULL));
    r = redisCommand(c, "PING");
    cr_assert(r && r->type == REDIS_REPLY_STATUS, "the server stopped after a refused SAVE");
    freeReplyObject(r);
    r = redisCommand(c, "SHUTDOWN SAVE FORCE");
    if (r) freeReplyObject(r);
    redisFree(c);
    /* Exit status 1: the log had failed (docs/OPERATIONS.md). */
    cr_assert_eq(srv_wait_exit(&s, 30), 1);
    srv_cleanup(&s);
}

/* ---- CONFIG REWRITE ---- */

Test(ops, config_rewrite_without_a_file_is_redis_error)
{
    srv_t s;
    cr_assert(srv_start(&s, "--frontends 1") == 0);
    redisContext *c = srv_connect(&s);
    cr_assert(c);
    expect_error(c, "CONFIG REWRITE", "ERR The server is running without a config file");
    redisFree(c);
    cr_assert_eq(srv_stop(&s), 0);
    srv_cleanup(&s);
}

static char *slurp(const char *path)
{
    static char text[16384];
    FILE *f = fopen(path, "r");
    cr_assert(f, "can't open %s", path);
    size_t n = fread(text, 1, sizeof(text) - 1, f);
    fclose(f);
    text[n] = '\0';
    return text;
}

Test(ops, config_rewrite_writes_config_set_values_back_and_a_restart_reads_them)
{
    char conf[] = "/tmp/attic-conf-XXXXXX";
    int fd = mkstemp(conf);
    cr_assert(fd >= 0);
    const char *text = "# kept as it is\n"
                       "maxclients 100\n"
                       "timeout 0 # no idle limit\n"
                       "maxclients 200\n"
                       "frontends 1\n";
    cr_assert(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
    close(fd);
    srv_t s;
    cr_assert(srv_start_conf(&s, conf, NULL) == 0);
    redisContext *c = srv_connect(&s);
    cr_assert(c);
    redisReply *r = redisCommand(c, "CONFIG SET maxclients 300 slowlog-max-len 64");
    cr_assert(r && r->type == REDIS_REPLY_STATUS);
    freeReplyObject(r);
    r = redisCommand(c, "CONFIG REWRITE");
    cr_assert(r && r->type == REDIS_REPLY_STATUS && !strcmp(r->str, "OK"), "%s",
              r && r->str ? r->str : "no reply");
    freeReplyObject(r);
    redisFree(c);
    cr_assert_str_eq(slurp(conf), "# kept as it is\n"
                                  "maxclients 300\n"
                                  "timeout 0 # no idle limit\n"
                                  "frontends 1\n"
                                  "# Generated by CONFIG REWRITE\n"
                                  "slowlog-max-len 64\n");
    cr_assert(srv_log_contains(&s, "CONFIG REWRITE executed with success", NULL));
    cr_assert_eq(srv_stop(&s), 0);
    cr_assert_eq(srv_restart(&s), 0);
    c = srv_connect(&s);
    cr_assert(c);
    r = redisCommand(c, "CONFIG GET maxclients");
    cr_assert(r && r->type == REDIS_REPLY_ARRAY && r->elements == 2);
    cr_assert_str_eq(r->element[1]->str, "300");
    freeReplyObject(r);
    redisFree(c);
    cr_assert_eq(srv_stop(&s), 0);
    srv_cleanup(&s);
    unlink(conf);
}
