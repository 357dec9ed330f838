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
#include <time.h>
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
    cr_assert_str_eq(notify_next(fd, msg, sizeof(msg)),
                     "READY=1\nSTATUS=Ready to accept connections");
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
    cr_assert_str_eq(notify_next(fd, msg, sizeof(msg)), "STOPPING=1\nSTATUS=Shutting down");
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
    cr_assert_str_eq(notify_next(fd, msg, sizeof(msg)),
                     "READY=1\nSTATUS=Ready to accept connections");
    /* Only once: a respawned child is not a new start. */
    pid_t fe[4];
    cr_assert_eq(srv_wait_children(&s, "atticdb-server: frontend", fe, 4, 1), 1);
    kill(fe[0], SIGKILL);
    cr_assert(wait_file_contains(s.log, "respawned frontend"));
    cr_assert_eq(srv_stop(&s), 0);
    cr_assert_str_eq(notify_next(fd, msg, sizeof(msg)), "STOPPING=1\nSTATUS=Shutting down");
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
    cr_assert(wait_file_contains(s.log, "Can't notify the service manager (READY=1"));
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

/* ---- LATENCY ---- */

static redisReply *cmdv(redisContext *c, const char *fmt)
{
    redisReply *r = redisCommand(c, fmt);
    cr_assert(r, "%s: no reply", fmt);
    return r;
}

/* An event's LATENCY LATEST entry, or NULL. */
static const redisReply *latest_of(const redisReply *r, const char *event)
{
    for (size_t i = 0; i < r->elements; i++) {
        const redisReply *e = r->element[i];
        if (e->type == REDIS_REPLY_ARRAY && e->elements == 4 && !strcmp(e->element[0]->str, event))
            return e;
    }
    return NULL;
}

/* An 8 MB SET: copying, logging and syncing it takes well over 1 ms. */
static void big_set(redisContext *c)
{
    size_t n = 8u << 20;
    char *v = malloc(n);
    cr_assert(v);
    memset(v, 'x', n);
    redisReply *r = redisCommand(c, "SET big %b", v, n);
    free(v);
    cr_assert(r && r->type == REDIS_REPLY_STATUS, "%s", r && r->str ? r->str : "no reply");
    freeReplyObject(r);
}

Test(ops, latency_monitor_records_commands_and_fsyncs_over_the_threshold)
{
    srv_t s;
    cr_assert(srv_start(&s, "--frontends 1 --ring-size 64mb --segment-size 128mb") == 0);
    redisContext *c = srv_connect(&s);
    cr_assert(c);
    redisReply *r = cmdv(c, "LATENCY DOCTOR");
    cr_assert(r->type == REDIS_REPLY_STRING);
    cr_expect(strstr(r->str, "Latency monitoring is disabled"), "%s", r->str);
    freeReplyObject(r);
    /* Threshold 0 (the default): nothing is recorded. */
    big_set(c);
    r = cmdv(c, "LATENCY LATEST");
    cr_assert(r->type == REDIS_REPLY_ARRAY);
    cr_expect_eq(r->elements, 0);
    freeReplyObject(r);

    r = cmdv(c, "CONFIG SET latency-monitor-threshold 1");
    cr_assert(r->type == REDIS_REPLY_STATUS);
    freeReplyObject(r);
    time_t t0 = time(NULL);
    big_set(c);
    /* The fsync event comes from frontend 0's look at the logger's
     * histogram, every 10 ms: wait for it (bounded). */
    const redisReply *cmd = NULL, *fs = NULL;
    for (int i = 0; i < 500 && !(cmd && fs); i++) {
        if (i) {
            freeReplyObject(r);
            usleep(10000);
        }
        r = cmdv(c, "LATENCY LATEST");
        cr_assert(r->type == REDIS_REPLY_ARRAY);
        cmd = latest_of(r, "command");
        fs = latest_of(r, "fsync");
    }
    time_t t1 = time(NULL);
    cr_assert(cmd, "no 'command' event after an 8 MB SET");
    cr_assert(fs, "no 'fsync' event after an 8 MB SET");
    cr_expect(cmd->element[1]->integer >= t0 && cmd->element[1]->integer <= t1);
    cr_expect_geq(cmd->element[2]->integer, 1);
    cr_expect_geq(cmd->element[3]->integer, cmd->element[2]->integer);
    cr_expect_geq(fs->element[2]->integer, 1);
    freeReplyObject(r);

    r = cmdv(c, "LATENCY HISTORY command");
    cr_assert(r->type == REDIS_REPLY_ARRAY && r->elements >= 1);
    cr_expect(r->element[0]->type == REDIS_REPLY_ARRAY && r->element[0]->elements == 2);
    freeReplyObject(r);
    r = cmdv(c, "LATENCY HISTORY nosuch");
    cr_expect(r->type == REDIS_REPLY_ARRAY && r->elements == 0);
    freeReplyObject(r);
    r = cmdv(c, "LATENCY DOCTOR");
    cr_expect(strstr(r->str, "Dave, I have observed latency spikes") &&
                  strstr(r->str, ". command: ") && strstr(r->str, ". fsync: "),
              "%s", r->str);
    freeReplyObject(r);
    r = cmdv(c, "LATENCY RESET command nosuch");
    cr_expect(r->type == REDIS_REPLY_INTEGER && r->integer == 1);
    freeReplyObject(r);
    r = cmdv(c, "LATENCY RESET");
    cr_expect(r->type == REDIS_REPLY_INTEGER && r->integer >= 1);
    freeReplyObject(r);
    r = cmdv(c, "LATENCY LATEST");
    cr_expect(r->type == REDIS_REPLY_ARRAY && r->elements == 0);
    freeReplyObject(r);
    r = cmdv(c, "LATENCY DOCTOR");
    cr_expect(strstr(r->str, "Dave, no latency spike was observed"), "%s", r->str);
    freeReplyObject(r);
    r = cmdv(c, "LATENCY HELP");
    cr_expect(r->type == REDIS_REPLY_ARRAY && r->elements > 4 &&
              !strcmp(r->element[0]->str,
                      "LATENCY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"));
    freeReplyObject(r);
    expect_error(c, "LATENCY HISTOGRAM", "ERR unknown subcommand 'HISTOGRAM'. Try LATENCY HELP.");
    expect_error(c, "LATENCY NOPE", "ERR unknown subcommand 'NOPE'. Try LATENCY HELP.");
    expect_error(c, "LATENCY HISTORY",
                 "ERR wrong number of arguments for 'latency|history' command");
    redisFree(c);
    cr_assert_eq(srv_stop(&s), 0);
    srv_cleanup(&s);
}

/* ---- MEMORY ---- */

Test(ops, memory_usage_counts_ram_and_memory_stats_agrees_with_the_keyspace)
{
    srv_t s;
    cr_assert(srv_start(&s, "--frontends 1") == 0);
    redisContext *c = srv_connect(&s);
    cr_assert(c);
    char big[2000];
    memset(big, 'v', sizeof(big));
    redisReply *r = redisCommand(c, "SET long %b", big, sizeof(big));
    freeReplyObject(r);
    r = cmdv(c, "SET short 12345");
    freeReplyObject(r);
    r = cmdv(c, "MEMORY USAGE nosuch");
    cr_expect_eq(r->type, REDIS_REPLY_NIL);
    freeReplyObject(r);
    r = cmdv(c, "MEMORY USAGE short");
    cr_assert_eq(r->type, REDIS_REPLY_INTEGER);
    long long short_bytes = r->integer;
    freeReplyObject(r);
    r = cmdv(c, "MEMORY USAGE long SAMPLES 0");
    cr_assert_eq(r->type, REDIS_REPLY_INTEGER);
    long long long_bytes = r->integer;
    freeReplyObject(r);
    /* RAM only: the 2000-byte value is in the log, the index holds an
     * extent (a few bytes more than an inline 5-byte value, far from 2000). */
    cr_expect(short_bytes > 5 && long_bytes > 0 && long_bytes < 200, "short %lld long %lld",
              short_bytes, long_bytes);
    expect_error(c, "MEMORY USAGE short SAMPLES -1", "ERR syntax error");
    expect_error(c, "MEMORY USAGE short SAMPLES x", "ERR value is not an integer or out of range");
    expect_error(c, "MEMORY USAGE short FOO", "ERR syntax error");
    expect_error(c, "MEMORY USAGE", "ERR wrong number of arguments for 'memory|usage' command");
    expect_error(c, "MEMORY FOO", "ERR unknown subcommand 'FOO'. Try MEMORY HELP.");
    r = cmdv(c, "MEMORY STATS");
    cr_assert(r->type == REDIS_REPLY_ARRAY && r->elements % 2 == 0);
    long long keys = -1;
    int db0 = 0;
    for (size_t i = 0; i + 1 < r->elements; i += 2) {
        if (!strcmp(r->element[i]->str, "keys.count")) keys = r->element[i + 1]->integer;
        if (!strcmp(r->element[i]->str, "db.0")) db0 = 1;
    }
    cr_expect_eq(keys, 2);
    cr_expect(db0);
    freeReplyObject(r);
    r = cmdv(c, "MEMORY DOCTOR");
    cr_expect(r->type == REDIS_REPLY_STRING && !strncmp(r->str, "Hi Sam", 6));
    freeReplyObject(r);
    r = cmdv(c, "MEMORY PURGE");
    cr_expect(r->type == REDIS_REPLY_STATUS && !strcmp(r->str, "OK"));
    freeReplyObject(r);
    r = cmdv(c, "MEMORY HELP");
    cr_expect(r->type == REDIS_REPLY_ARRAY && r->elements > 4 &&
              !strcmp(r->element[0]->str,
                      "MEMORY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"));
    freeReplyObject(r);
    redisFree(c);
    cr_assert_eq(srv_stop(&s), 0);
    srv_cleanup(&s);
}

/* ---- INFO for monitoring (Prometheus' redis_exporter and the like) ---- */

/* The value of `field:` in an INFO text, into out; 0 when missing. */
static int info_value(const char *text, const char *field, char *out, size_t n)
{
    char key[128];
    snprintf(key, sizeof(key), "\r\n%s:", field);
    const char *p = strstr(text, key);
    if (!p && !strncmp(text, key + 2, strlen(key) - 2)) p = text - 2;
    if (!p) return 0;
    p += strlen(key);
    size_t len = strcspn(p, "\r\n");
    snprintf(out, n, "%.*s", (int)(len < n ? len : n - 1), p);
    return 1;
}

static int is_number(const char *s)
{
    char *end;
    if (!*s) return 0;
    strtod(s, &end);
    return *end == '\0';
}

Test(ops, info_has_the_fields_monitoring_reads)
{
    srv_t s;
    long long started = (long long)time(NULL);
    cr_assert(srv_start(&s, "--frontends 2") == 0);
    redisContext *c = srv_connect(&s);
    cr_assert(c);
    redisReply *r = cmdv(c, "SET a 1");
    freeReplyObject(r);
    r = cmdv(c, "SET b 2 EX 100");
    freeReplyObject(r);
    /* The counts are the store's, published as it applies; INFO first
     * lets it catch up with what is durable (D25), so both acked writes
     * are in them at once, whichever frontend answers. */
    r = cmdv(c, "INFO");
    cr_assert(r->type == REDIS_REPLY_STRING);
    cr_expect(strstr(r->str, "\r\ndb0:keys=2,expires=1,"), "%s", r->str);
    static const char *const numeric[] = {"uptime_in_seconds",
                                          "connected_clients",
                                          "blocked_clients",
                                          "used_memory",
                                          "used_memory_rss",
                                          "used_memory_peak",
                                          "maxmemory",
                                          "mem_fragmentation_ratio",
                                          "total_connections_received",
                                          "total_commands_processed",
                                          "instantaneous_ops_per_sec",
                                          "total_net_input_bytes",
                                          "total_net_output_bytes",
                                          "instantaneous_input_kbps",
                                          "instantaneous_output_kbps",
                                          "rejected_connections",
                                          "expired_keys",
                                          "evicted_keys",
                                          "keyspace_hits",
                                          "keyspace_misses",
                                          "rdb_last_save_time",
                                          "aof_enabled",
                                          "connected_slaves",
                                          "master_repl_offset",
                                          "loading",
                                          "rdb_changes_since_last_save",
                                          "total_error_replies",
                                          "used_cpu_sys",
                                          "used_cpu_user",
                                          "cluster_enabled",
                                          "process_id",
                                          "maxclients",
                                          NULL};
    char v[256] = "";
    for (int i = 0; numeric[i]; i++) {
        cr_expect(info_value(r->str, numeric[i], v, sizeof(v)), "INFO lacks %s", numeric[i]);
        cr_expect(is_number(v), "%s:%s is not a number", numeric[i], v);
    }
    cr_expect(info_value(r->str, "redis_version", v, sizeof(v)) && !strcmp(v, "7.0.15"));
    cr_expect(info_value(r->str, "role", v, sizeof(v)) && !strcmp(v, "master"));
    cr_expect(info_value(r->str, "rdb_last_bgsave_status", v, sizeof(v)) && !strcmp(v, "ok"));
    cr_expect(info_value(r->str, "db0", v, sizeof(v)) && !strcmp(v, "keys=2,expires=1,avg_ttl=0"),
              "db0:%s", v);
    /* True values, not placeholders. */
    info_value(r->str, "used_memory", v, sizeof(v));
    long long used = atoll(v);
    info_value(r->str, "used_memory_peak", v, sizeof(v));
    cr_expect(used > 0 && atoll(v) >= used, "used %lld, peak %s", used, v);
    info_value(r->str, "rdb_last_save_time", v, sizeof(v));
    /* No backup yet: the server's start, as Redis counts its start (D38). */
    cr_expect(atoll(v) >= started && atoll(v) <= (long long)time(NULL), "rdb_last_save_time %s", v);
    info_value(r->str, "total_commands_processed", v, sizeof(v));
    cr_expect_geq(atoll(v), 2);
    cr_expect(strstr(r->str, "# Cluster\r\ncluster_enabled:0\r\n"));
    freeReplyObject(r);
    redisFree(c);
    cr_assert_eq(srv_stop(&s), 0);
    srv_cleanup(&s);
}
