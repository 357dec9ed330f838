/*
 * test_master.c - the master's surface: a redis.conf style file, the unix
 * socket, configuration errors, the process titles, and the respawn policy.
 */
#include <criterion/criterion.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

TestSuite(master, .fini = srv_cleanup_all, .timeout = 60);

static const char *server_bin(void)
{
    const char *p = getenv("ATTICDB_SERVER");
    return p ? p : "./atticdb-server";
}

/* Run the server with args, collect its output; returns the exit status. */
static int run_capture(const char *args, char *out, size_t outlen)
{
    return srv_run_tool("atticdb-server", args, out, outlen);
}

Test(master, config_file_and_unix_socket)
{
    char dir[] = "/tmp/attic-conf-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char conf[512], sock[512], data[512];
    snprintf(conf, sizeof(conf), "%s/atticdb.conf", dir);
    snprintf(sock, sizeof(sock), "%s/atticdb.sock", dir);
    snprintf(data, sizeof(data), "%s/data", dir);
    int port = srv_free_port();
    FILE *f = fopen(conf, "w");
    fprintf(f,
            "# a redis.conf style file\n"
            "port %d\n"
            "bind 127.0.0.1\n"
            "dir \"%s\"\n"
            "unixsocket %s\n"
            "unixsocketperm 700\n"
            "frontends 1\n"
            "ring-size 1mb\n"
            "segment-size 4mb\n"
            "appendonly yes   # a Redis setting, accepted and ignored\n"
            "logfile %s/server.log\n",
            port, data, sock, dir);
    fclose(f);
    pid_t pid = fork();
    if (pid == 0) {
        setpgid(0, 0);
        execl(server_bin(), server_bin(), conf, (char *)NULL);
        _exit(127);
    }
    redisContext *c = NULL;
    for (int i = 0; i < 500 && !c; i++) {
        c = redisConnectUnix(sock);
        if (c && c->err) {
            redisFree(c);
            c = NULL;
            usleep(10000);
        }
    }
    cr_assert_not_null(c, "no server on the unix socket");
    redisReply *r = redisCommand(c, "SET via unix");
    cr_assert_eq(r->type, REDIS_REPLY_STATUS);
    freeReplyObject(r);
    r = redisCommand(c, "CONFIG GET ring-size");
    cr_assert_eq(r->elements, 2);
    cr_assert_str_eq(r->element[1]->str, "1048576");
    freeReplyObject(r);
    redisFree(c);
    /* The same data over TCP, on the port from the file. */
    srv_t tcp = {.port = port};
    c = srv_connect(&tcp);
    cr_assert_not_null(c);
    r = redisCommand(c, "GET via");
    cr_assert_str_eq(r->str, "unix");
    freeReplyObject(r);
    redisFree(c);
    kill(pid, SIGTERM);
    int status;
    waitpid(pid, &status, 0);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    cr_assert_neq(access(sock, F_OK), 0, "the unix socket is removed at exit");
    char cmd[600];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
}

Test(master, bad_configuration_is_refused)
{
    char out[4096];
    cr_assert_eq(run_capture("--port 0 --dir /tmp/attic-never --ring-size 1000", out, sizeof(out)),
                 1);
    cr_assert(strstr(out, "FATAL CONFIG ERROR") && strstr(out, "ring-size"), "%s", out);
    cr_assert_eq(run_capture("--no-such-option 1", out, sizeof(out)), 1);
    cr_assert(strstr(out, "Bad directive"), "%s", out);
    cr_assert_eq(run_capture("--segment-size 64kb --ring-size 1mb", out, sizeof(out)), 1);
    cr_assert(strstr(out, "segment-size"), "%s", out);
    cr_assert_eq(run_capture("/nonexistent/atticdb.conf", out, sizeof(out)), 1);
    cr_assert(strstr(out, "can't open config file"), "%s", out);
}

Test(master, port_in_use_is_refused)
{
    srv_t s;
    cr_assert_eq(srv_start(&s, "--frontends 1"), 0);
    char args[600], out[4096];
    snprintf(args, sizeof(args), "--port %d --dir %s-other", s.port, s.dir);
    cr_assert_eq(run_capture(args, out, sizeof(out)), 1);
    cr_assert(strstr(out, "port in use"), "%s", out);
    char cmd[600];
    snprintf(cmd, sizeof(cmd), "rm -rf %s-other", s.dir);
    cr_assert_eq(system(cmd), 0);
    srv_stop(&s);
    srv_cleanup(&s);
}

Test(master, processes_are_named_by_role)
{
    srv_t s;
    cr_assert_eq(srv_start(&s, "--frontends 2"), 0);
    pid_t pids[4];
    const char *titles[] = {"atticdb-server: logger", "atticdb-server: store",
                            "atticdb-server: frontend 0", "atticdb-server: frontend 1"};
    for (int t = 0; t < 4; t++) {
        int n = srv_wait_children(&s, titles[t], pids, 4, 1);
        cr_assert_eq(n, 1, "%s", titles[t]);
    }
    srv_stop(&s);
    srv_cleanup(&s);
}

/* ---- limits on clients ---- */

Test(master, client_that_never_reads_is_disconnected)
{
    srv_t s;
    cr_assert_eq(srv_start(&s, "--frontends 1 --client-output-buffer-limit normal 1mb 512kb 10"),
                 0);
    redisContext *c = srv_connect(&s);
    size_t big = 100 * 1024;
    char *v = malloc(big);
    memset(v, 'o', big);
    redisReply *r = redisCommand(c, "SET big %b", v, big);
    cr_assert_eq(r->type, REDIS_REPLY_STATUS);
    freeReplyObject(r);
    free(v);
    /* A raw client pipelines GETs of it and never reads a byte. */
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET,
                             .sin_port = htons((uint16_t)s.port),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    cr_assert_eq(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    int small = 4096;
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
    const char *get = "*2\r\n$3\r\nGET\r\n$3\r\nbig\r\n";
    for (int i = 0; i < 200; i++)
        if (send(fd, get, strlen(get), MSG_NOSIGNAL) < 0) break;
    /* The server drops it; everyone else is served meanwhile. */
    int closed = 0;
    for (int t = 0; t < 100 && !closed; t++) {
        closed = srv_log_contains(&s, "output buffer limit", NULL);
        r = redisCommand(c, "PING");
        cr_assert_not_null(r, "the server stopped serving others");
        freeReplyObject(r);
        if (!closed) usleep(50 * 1000);
    }
    cr_assert(closed, "a client that never reads was not disconnected");
    close(fd);
    redisFree(c);
    srv_stop(&s);
    srv_cleanup(&s);
}

Test(master, idle_client_is_closed_after_timeout)
{
    srv_t s;
    cr_assert_eq(srv_start(&s, "--frontends 1 --timeout 1"), 0);
    redisContext *idle = srv_connect(&s);
    redisReply *r = redisCommand(idle, "PING");
    cr_assert_eq(r->type, REDIS_REPLY_STATUS);
    freeReplyObject(r);
    /* Wait for the close without sending anything (a command would make
     * the client busy again): its socket turns readable at EOF. */
    struct pollfd pfd = {.fd = idle->fd, .events = POLLIN};
    cr_assert_eq(poll(&pfd, 1, 10000), 1, "an idle client outlived the timeout by 9 s");
    r = redisCommand(idle, "PING");
    cr_assert_null(r, "an idle client outlived the timeout");
    redisFree(idle);
    redisContext *c = srv_connect(&s);
    r = redisCommand(c, "PING");
    cr_assert_eq(r->type, REDIS_REPLY_STATUS);
    freeReplyObject(r);
    redisFree(c);
    srv_stop(&s);
    srv_cleanup(&s);
}

Test(master, maxclients_refuses_the_next_connection)
{
    srv_t s;
    cr_assert_eq(srv_start(&s, "--frontends 2 --maxclients 6"), 0);
    redisContext *cs[6];
    for (int i = 0; i < 6; i++) {
        cs[i] = srv_connect(&s);
        cr_assert_not_null(cs[i]);
        redisReply *r = redisCommand(cs[i], "PING");
        cr_assert_eq(r->type, REDIS_REPLY_STATUS, "client %d", i);
        freeReplyObject(r);
    }
    redisContext *extra = srv_connect(&s);
    redisReply *r = extra ? redisCommand(extra, "PING") : NULL;
    cr_assert(r && r->type == REDIS_REPLY_ERROR && strstr(r->str, "max number of clients reached"),
              "the 7th client was not refused");
    freeReplyObject(r);
    redisFree(extra);
    redisFree(cs[0]);
    /* Its frontend notices the close when it gets to it: until then a new
     * client may still be refused. */
    int served = 0;
    for (int i = 0; i < 500 && !served; i++) {
        if (i) usleep(10 * 1000);
        extra = srv_connect(&s);
        r = extra ? redisCommand(extra, "PING") : NULL;
        served = r && r->type == REDIS_REPLY_STATUS;
        freeReplyObject(r);
        if (!served) redisFree(extra);
    }
    cr_assert(served, "a slot freed by a closed client is not usable again within 5 s");
    redisFree(extra);
    for (int i = 1; i < 6; i++)
        redisFree(cs[i]);
    srv_stop(&s);
    srv_cleanup(&s);
}

Test(master, slow_client_does_not_hold_up_others)
{
    srv_t s;
    cr_assert_eq(srv_start(&s, "--frontends 1"), 0);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET,
                             .sin_port = htons((uint16_t)s.port),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    cr_assert_eq(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    const char *cmd = "*3\r\n$3\r\nSET\r\n$4\r\nslow\r\n$5\r\nvalue\r\n";
    redisContext *c = srv_connect(&s);
    /* One byte at a time, and between bytes the other client is served. */
    for (size_t i = 0; i < strlen(cmd); i++) {
        cr_assert_eq(send(fd, cmd + i, 1, MSG_NOSIGNAL), 1);
        redisReply *r = redisCommand(c, "SET fast:%d x", (int)i);
        cr_assert(r && r->type == REDIS_REPLY_STATUS, "byte %zu: %s", i, r ? r->str : c->errstr);
        freeReplyObject(r);
        usleep(5000);
    }
    char buf[16] = "";
    ssize_t n = recv(fd, buf, sizeof(buf) - 1, 0);
    cr_assert_eq(n, 5);
    cr_assert_str_eq(buf, "+OK\r\n");
    redisReply *r = redisCommand(c, "GET slow");
    cr_assert_str_eq(r->str, "value");
    freeReplyObject(r);
    close(fd);
    redisFree(c);
    srv_stop(&s);
    srv_cleanup(&s);
}

/* ---- the respawn policy (docs/OPERATIONS.md, "Processes and the restart
 * policy"): deaths by a signal are always respawned, with back-off; only a
 * child that fails by itself before it is ready stops the server. ---- */

/* Fails the test (showing the log) if the master has exited. */
static void assert_master_alive(srv_t *s, const char *doing)
{
    int status;
    char tail[2048];
    cr_assert_neq(waitpid(s->pid, &status, WNOHANG), s->pid, "the server stopped %s; log:\n%s",
                  doing, srv_log_tail(s, tail, sizeof(tail)));
}

/* SIGKILL the process titled `title` `times` times, each as soon as it
 * appears, so that every death comes right after a start. Fails the test if
 * the master exits meanwhile. */
static void kill_as_it_appears(srv_t *s, const char *title, int times)
{
    pid_t last = 0;
    for (int k = 0; k < times; k++) {
        pid_t pid = 0;
        char doing[128];
        snprintf(doing, sizeof(doing), "after %d kills of %s", k, title);
        for (int t = 0; t < 30000 && !pid; t++) { /* up to 30 s */
            assert_master_alive(s, doing);
            pid_t p[1];
            if (srv_find_children(s, title, p, 1) == 1 && p[0] != last)
                pid = p[0];
            else
                usleep(1000);
        }
        cr_assert_neq(pid, 0, "no new %s after %d kills", title, k);
        kill(pid, SIGKILL);
        last = pid;
    }
}

/* A write and a read of it (the logger and the store both serve). */
static void assert_serves(srv_t *s, const char *key)
{
    redisContext *c = srv_connect(s);
    cr_assert_not_null(c);
    char buf[256], tail[2048];
    cr_assert_str_eq(srv_cmd_raw(c, buf, sizeof(buf), "SET %s after", key), "+OK\r\n", "log:\n%s",
                     srv_log_tail(s, tail, sizeof(tail)));
    cr_assert_str_eq(srv_cmd_raw(c, buf, sizeof(buf), "GET %s", key), "$5\r\nafter\r\n");
    redisFree(c);
}

Test(master, store_killed_at_every_start_is_respawned_and_serves_again)
{
    srv_t s;
    cr_assert_eq(srv_start(&s, "--frontends 1 --respawn-limit 3"), 0);
    assert_serves(&s, "before");
    /* More deaths right after starting than respawn-limit: killed from
     * outside, not a crash loop of its own. */
    kill_as_it_appears(&s, "atticdb-server: store", 8);
    assert_serves(&s, "k");
    cr_assert_eq(srv_stop(&s), 0);
    srv_cleanup(&s);
}

/* The delays the log announces for role's respawns, in order. */
static int respawn_delays(const srv_t *s, const char *role, int *ms, int max)
{
    FILE *f = fopen(s->log, "r");
    if (!f) return 0;
    char line[1024];
    int n = 0;
    while (n < max && fgets(line, sizeof(line), f)) {
        const char *at = strstr(line, "respawning it in ");
        if (at && strstr(line, role)) n += sscanf(at, "respawning it in %d ms", &ms[n]) == 1;
    }
    fclose(f);
    return n;
}

Test(master, repeated_deaths_back_off_and_the_server_answers_after)
{
    srv_t s;
    cr_assert_eq(srv_start(&s, "--frontends 1 --respawn-limit 2"), 0);
    kill_as_it_appears(&s, "atticdb-server: logger", 6);
    assert_serves(&s, "k");
    /* The first death is respawned at once; each further one in a row
     * waits longer than the one before. */
    int ms[16], n = respawn_delays(&s, "logger", ms, 16);
    char tail[4096];
    cr_assert_geq(n, 4, "back-off delays logged: %d; log:\n%s", n,
                  srv_log_tail(&s, tail, sizeof(tail)));
    for (int i = 1; i < n; i++)
        cr_assert_gt(ms[i], ms[i - 1], "delay %d: %d ms after %d ms", i, ms[i], ms[i - 1]);
    cr_assert_eq(srv_stop(&s), 0);
    srv_cleanup(&s);
}

Test(master, crash_loop_by_signal_keeps_the_server_up)
{
    /* The store kills itself at every start: the server keeps respawning it
     * (backing off) and keeps answering what needs no store. */
    setenv("ATTICDB_TEST_FAULTS", "*store.start:1:KILL", 1);
    srv_t s;
    int rc = srv_start(&s, "--frontends 1 --respawn-limit 2");
    unsetenv("ATTICDB_TEST_FAULTS");
    cr_assert_eq(rc, 0);
    char tail[4096];
    int deaths = 0;
    for (int t = 0; t < 300 && deaths < 5; t++) { /* up to 30 s */
        int ms[16];
        deaths = respawn_delays(&s, "store", ms, 16);
        assert_master_alive(&s, "in the store's crash loop");
        if (deaths < 5) usleep(100 * 1000);
    }
    cr_assert_geq(deaths, 5, "log:\n%s", srv_log_tail(&s, tail, sizeof(tail)));
    redisContext *c = srv_connect(&s);
    cr_assert_not_null(c);
    char buf[64];
    cr_assert_str_eq(srv_cmd_raw(c, buf, sizeof(buf), "PING"), "+PONG\r\n");
    redisFree(c);
    srv_kill_all(&s);
    srv_cleanup(&s);
}

Test(master, failing_before_ready_stops_the_server_with_a_clear_message)
{
    /* The store exits (status 1, not a signal) at every start: after
     * respawn-limit failures in a row the master gives up, saying why. */
    char dir[] = "/tmp/attic-loop-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char args[512], out[8192];
    snprintf(args, sizeof(args), "--port %d --dir %s/data --respawn-limit 3", srv_free_port(), dir);
    setenv("ATTICDB_TEST_FAULTS", "*store.start:1:1", 1);
    int status = srv_run_tool("atticdb-server", args, out, sizeof(out));
    unsetenv("ATTICDB_TEST_FAULTS");
    cr_assert_eq(status, 1, "exit status %d; output:\n%s", status, out);
    cr_assert(
        strstr(out, "store failed 3 times in a row before it was ready (exited with status 1)"),
        "%s", out);
    char cmd[600];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
}

Test(master, store_failing_to_replay_names_the_lsn)
{
    srv_t s;
    /* No checkpoint (the clean stop would write one): the store must
     * replay the log to meet the fault. */
    cr_assert_eq(srv_start(&s, "--frontends 1 --checkpoint-bytes 0"), 0);
    assert_serves(&s, "k");
    cr_assert_eq(srv_stop(&s), 0);
    /* The store cannot read the log back: a fatal exit before it is ready,
     * at once (no respawn), naming where the replay stood. */
    char args[600], out[8192];
    snprintf(args, sizeof(args), "--port %d --dir %s --frontends 1", srv_free_port(), s.dir);
    setenv("ATTICDB_TEST_FAULTS", "store.pread:1:EIO", 1);
    int status = srv_run_tool("atticdb-server", args, out, sizeof(out));
    unsetenv("ATTICDB_TEST_FAULTS");
    cr_assert_eq(status, 1, "exit status %d; output:\n%s", status, out);
    const char *store_says = strstr(out, "unreadable at LSN ");
    const char *master_says = strstr(out, "while replaying the record at LSN ");
    cr_assert(store_says && master_says, "%s", out);
    unsigned long long a, b;
    cr_assert_eq(sscanf(store_says, "unreadable at LSN %llu", &a), 1);
    cr_assert_eq(sscanf(master_says, "while replaying the record at LSN %llu", &b), 1);
    cr_assert_eq(a, b, "%s", out);
    cr_assert(strstr(out, "store exited with status 2 (fatal) before it was ready"), "%s", out);
    cr_assert_null(strstr(out, "respawned store"), "%s", out);
    srv_cleanup(&s);
}

Test(master, shutdown_command_stops_the_server_in_order)
{
    srv_t s;
    cr_assert_eq(srv_start(&s, "--frontends 2"), 0);
    redisContext *c = srv_connect(&s);
    cr_assert_not_null(c);
    char buf[256];
    cr_assert_str_eq(srv_cmd_raw(c, buf, sizeof(buf), "SET kept value"), "+OK\r\n");
    cr_assert_str_eq(srv_cmd_raw(c, buf, sizeof(buf), "SHUTDOWN ABORT"),
                     "-ERR No shutdown in progress.\r\n");
    cr_assert_str_eq(srv_cmd_raw(c, buf, sizeof(buf), "SHUTDOWN SAVE NOSAVE"),
                     "-ERR syntax error\r\n");
    cr_assert_str_eq(srv_cmd_raw(c, buf, sizeof(buf), "SHUTDOWN NOW ABORT"),
                     "-ERR syntax error\r\n");
    /* Refused inside MULTI, which then fails as a whole (Redis' no_multi). */
    cr_assert_str_eq(srv_cmd_raw(c, buf, sizeof(buf), "MULTI"), "+OK\r\n");
    cr_assert_str_eq(srv_cmd_raw(c, buf, sizeof(buf), "SHUTDOWN"),
                     "-ERR Command not allowed inside a transaction\r\n");
    cr_assert_str_eq(srv_cmd_raw(c, buf, sizeof(buf), "EXEC"),
                     "-EXECABORT Transaction discarded because of previous errors.\r\n");
    /* No reply: the connection closes and the whole server exits 0. */
    redisReply *r = redisCommand(c, "SHUTDOWN NOSAVE");
    cr_assert_null(r, "SHUTDOWN replied");
    redisFree(c);
    int status = -1;
    for (int i = 0; i < 3000; i++) { /* up to 30 s */
        if (waitpid(s.pid, &status, WNOHANG) == s.pid) break;
        usleep(10000);
    }
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "server status %d", status);
    s.pid = 0;
    cr_assert_eq(srv_restart(&s), 0);
    c = srv_connect(&s);
    cr_assert_str_eq(srv_cmd_raw(c, buf, sizeof(buf), "GET kept"), "$5\r\nvalue\r\n");
    redisFree(c);
    srv_stop(&s);
    srv_cleanup(&s);
}

/* ---- the data-dir lock through the I/O seam (role "master") ---- */

Test(master, failing_to_take_the_data_dir_lock_exits_with_a_clear_message)
{
    /* Each call of the lock failing with EIO: exit status 1, before any
     * child is forked, with the failed step and the error named. */
    static const struct {
        const char *spec, *msg;
    } cases[] = {
        {"master.mkdir:1:EIO", "Can't create data directory"},
        {"master.fsync:1:EIO", "Can't fsync the parent of the new data directory"},
        {"master.open:2:EIO", "Can't open"}, /* open 1: the parent, for its fsync */
        {"master.flock:1:EIO", "Can't lock"},
    };
    char dir[] = "/tmp/attic-lock-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char args[512], out[8192];
        snprintf(args, sizeof(args), "--port %d --dir %s/data%zu", srv_free_port(), dir, i);
        setenv("ATTICDB_TEST_FAULTS", cases[i].spec, 1);
        int status = run_capture(args, out, sizeof(out));
        unsetenv("ATTICDB_TEST_FAULTS");
        cr_assert_eq(status, 1, "%s: exit status %d; output:\n%s", cases[i].spec, status, out);
        cr_assert(strstr(out, cases[i].msg) && strstr(out, "Input/output error"), "%s: %s",
                  cases[i].spec, out);
        cr_assert(!strstr(out, "Ready to accept"), "%s: started anyway", cases[i].spec);
    }
    char cmd[600];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
}

Test(master, failing_to_write_the_pid_into_the_lock_is_only_a_warning)
{
    srv_t s;
    cr_assert_eq(srv_start_faults(&s, "master.pwrite:1:EIO", "--frontends 1"), 0);
    cr_assert(srv_log_contains(&s, "Can't write the pid into", "LOCK"));
    assert_serves(&s, "k");
    cr_assert_eq(srv_stop(&s), 0);
    srv_cleanup(&s);
}

/* A KILL entry on an I/O call kills the process at that call (it used to
 * become EINTR, which the caller retried): the master respawns the logger,
 * which continues at the durable LSN, and no acked write is lost. */
Test(master, kill_fault_on_an_io_call_kills_the_process_and_it_is_respawned)
{
    srv_t s;
    /* pwrite 1 zero-fills the first 1 MB segment; each SET below is a
     * batch of its own, so pwrite 5 is the fourth write's. */
    cr_assert_eq(srv_start_faults(&s, "logger.pwrite:5:KILL",
                                  "--frontends 1 --segment-size 1mb --ring-size 256kb"),
                 0);
    redisContext *c = srv_connect(&s);
    cr_assert_not_null(c);
    for (int i = 0; i < 20; i++) {
        redisReply *r = redisCommand(c, "SET kill:%d v%d", i, i);
        cr_assert_not_null(r, "%s", c->errstr);
        cr_assert_eq(r->type, REDIS_REPLY_STATUS, "SET kill:%d: %s", i,
                     r->type == REDIS_REPLY_ERROR ? r->str : "?");
        freeReplyObject(r);
    }
    redisFree(c);
    char tail[4096];
    cr_assert(srv_log_contains(&s, "logger (pid", "killed by signal 9"), "log:\n%s",
              srv_log_tail(&s, tail, sizeof(tail)));
    cr_assert(srv_log_contains(&s, "respawned logger", NULL), "log:\n%s",
              srv_log_tail(&s, tail, sizeof(tail)));
    cr_assert_eq(srv_stop(&s), 0);
    cr_assert_eq(srv_restart(&s), 0);
    c = srv_connect(&s);
    for (int i = 0; i < 20; i++) {
        char want[16];
        snprintf(want, sizeof(want), "v%d", i);
        redisReply *r = redisCommand(c, "GET kill:%d", i);
        cr_assert_eq(r->type, REDIS_REPLY_STRING, "acked kill:%d lost", i);
        cr_assert_str_eq(r->str, want);
        freeReplyObject(r);
    }
    redisFree(c);
    cr_assert_eq(srv_stop(&s), 0);
    srv_cleanup(&s);
}
