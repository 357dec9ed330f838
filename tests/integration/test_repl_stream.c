/*
 * test_repl_stream.c - replication by log shipping (D33) between two real
 * servers on loopback: a leader and a replica started with `--replicaof`,
 * each on a free port and a temporary directory. Writes on the leader
 * reach the replica (same DEBUG DIGEST once writes stop), the replica
 * refuses writes with Redis' -READONLY, resumes from its own LSN after a
 * SIGKILL (INFO's atticdb_partial_syncs / atticdb_full_syncs tell a
 * resume from a copy), rides out a stopped leader (SIGSTOP, SIGCONT), gets
 * a full copy when its log is not a prefix of the leader's (D50: writes of
 * its own, an old leader, compaction) and survives a SIGKILL at each of
 * the copy's narrow windows (fault points replcopied, replswapped), and
 * bad input (a replica of itself, a wrong handshake, garbage on the
 * replication connection) gets a clear error and loses nothing. With
 * min-replicas-acked 1 and two replicas, a leader SIGKILLed at random
 * moments (some after its link was cut) loses no acknowledged write: the
 * most advanced replica has them all, is promoted, and the other follows
 * it (ATTIC_SEED repeats a run). A torn point that the leader's records
 * prove durable is cut by a replica (which resumes) and refused by the
 * leader and by a promoted replica past its promotion (D56). Waits
 * have generous deadlines; nothing asserts a duration.
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "redis_diff.h"

static void suite_fini(void);
TestSuite(repl_stream, .fini = suite_fini, .timeout = 300);

#define SMALL "--frontends 2 --ring-size 256kb --segment-size 1mb"

static srv_t L, R;

/* INFO's field (replication, stats, ...) as text ("" when missing). */
static const char *info_field(redisContext *c, const char *field, char *out, size_t n)
{
    out[0] = 0;
    redisReply *r = redisCommand(c, "INFO");
    cr_assert(r && r->type == REDIS_REPLY_STRING, "INFO to port %d: %s; its log:\n%s", c->tcp.port,
              r ? r->str : c->errstr, srv_log_tail_of_port(c->tcp.port, (char[3072]){0}, 3072));
    char key[128];
    snprintf(key, sizeof(key), "\r\n%s:", field);
    const char *p = strstr(r->str, key);
    if (p) {
        p += strlen(key);
        size_t len = strcspn(p, "\r");
        if (len >= n) len = n - 1;
        memcpy(out, p, len);
        out[len] = 0;
    }
    freeReplyObject(r);
    return out;
}

static long long info_num(redisContext *c, const char *field)
{
    char v[256];
    info_field(c, field, v, sizeof(v));
    return v[0] ? strtoll(v, NULL, 10) : -1;
}

static void digest(redisContext *c, char out[64])
{
    redisReply *r = redisCommand(c, "DEBUG DIGEST");
    cr_assert(r && (r->type == REDIS_REPLY_STATUS || r->type == REDIS_REPLY_STRING), "DIGEST");
    snprintf(out, 64, "%s", r->str);
    freeReplyObject(r);
}

/* Wait (up to 120 s) until the replica has made durable everything the
 * leader has, then compare the two states. */
static void expect_caught_up(redisContext *lc, redisContext *rc)
{
    long long want = -1, got = -2;
    for (int i = 0; i < 2400; i++) {
        want = info_num(lc, "master_repl_offset");
        got = info_num(rc, "slave_repl_offset");
        if (want > 0 && got == want) break;
        usleep(50000);
    }
    cr_assert_eq(got, want, "the replica reached the leader's LSN");
    char a[64], b[64];
    digest(lc, a);
    digest(rc, b);
    cr_expect_str_eq(a, b, "same data on both");
}

static void start_pair(redisContext **lc, redisContext **rc)
{
    cr_assert(srv_start(&L, SMALL) == 0, "leader did not start");
    char extra[256];
    snprintf(extra, sizeof(extra), SMALL " --replicaof 127.0.0.1 %d", L.port);
    cr_assert(srv_start(&R, extra) == 0, "replica did not start");
    *lc = srv_connect(&L);
    *rc = srv_connect(&R);
    cr_assert(*lc && *rc, "connect");
}

/* n writes of several types, pipelined. */
static void write_some(redisContext *c, int from, int n)
{
    for (int i = from; i < from + n; i++) {
        redisAppendCommand(c, "SET key:%d value-%d-%0300d", i % 500, i, i);
        redisAppendCommand(c, "RPUSH list:%d %d", i % 7, i);
        redisAppendCommand(c, "HSET hash:%d f%d %d", i % 11, i % 50, i);
        redisAppendCommand(c, "INCR counter");
    }
    for (int i = 0; i < 4 * n; i++) {
        redisReply *r;
        cr_assert(redisGetReply(c, (void **)&r) == REDIS_OK && r, "reply");
        cr_assert(r->type != REDIS_REPLY_ERROR, "write failed: %s", r->str);
        freeReplyObject(r);
    }
}

/* A linked pair with n rounds of writes on both (n > 0: a fresh
 * leader's offset is 0, which expect_caught_up waits to see move). */
static void start_synced_pair(redisContext **lc, redisContext **rc, int n)
{
    start_pair(lc, rc);
    write_some(*lc, 0, n);
    expect_caught_up(*lc, *rc);
}

Test(repl_stream, writes_reach_the_replica_which_refuses_writes)
{
    redisContext *lc, *rc;
    start_pair(&lc, &rc);
    write_some(lc, 0, 3000); /* several segments and ring laps of 256 KiB */
    expect_caught_up(lc, rc);
    char buf[512];
    cr_expect_str_eq(srv_cmd_raw(rc, buf, sizeof(buf), "GET counter"), "$4\r\n3000\r\n");
    cr_expect_str_eq(srv_cmd_raw(rc, buf, sizeof(buf), "SET x 1"),
                     "-READONLY You can't write against a read only replica.\r\n");
    cr_expect_str_eq(srv_cmd_raw(rc, buf, sizeof(buf), "INCR counter"),
                     "-READONLY You can't write against a read only replica.\r\n");
    /* SORT is a write command even without STORE, as in Redis; SORT_RO
     * is the read a replica serves (D47). */
    cr_expect_str_eq(srv_cmd_raw(rc, buf, sizeof(buf), "SORT nosuch"),
                     "-READONLY You can't write against a read only replica.\r\n");
    cr_expect_str_eq(srv_cmd_raw(rc, buf, sizeof(buf), "SORT_RO nosuch"), "*0\r\n");
    cr_expect_str_eq(srv_cmd_raw(rc, buf, sizeof(buf), "SORT_RO counter"),
                     "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n");
    cr_expect_str_eq(info_field(rc, "role", buf, sizeof(buf)), "slave");
    cr_expect_str_eq(info_field(rc, "master_link_status", buf, sizeof(buf)), "up");
    cr_expect_eq(info_num(rc, "master_port"), L.port);
    cr_expect_eq(info_num(rc, "slave_read_only"), 1);
    cr_expect_eq(info_num(rc, "master_sync_in_progress"), 0);
    cr_expect_eq(info_num(rc, "atticdb_partial_syncs"), 1);
    cr_expect_eq(info_num(rc, "atticdb_full_syncs"), 0);
    cr_expect_str_eq(info_field(lc, "role", buf, sizeof(buf)), "master");
    cr_expect_eq(info_num(lc, "connected_slaves"), 1);
    char want[128];
    snprintf(want, sizeof(want), "ip=127.0.0.1,port=%d,state=online,offset=", R.port);
    cr_expect(!strncmp(info_field(lc, "slave0", buf, sizeof(buf)), want, strlen(want)), "%s", buf);
    /* ROLE on the replica: ["slave", host, port, "connected", offset]. */
    redisReply *r = redisCommand(rc, "ROLE");
    cr_assert(r && r->type == REDIS_REPLY_ARRAY && r->elements == 5);
    cr_expect_str_eq(r->element[0]->str, "slave");
    cr_expect_str_eq(r->element[1]->str, "127.0.0.1");
    cr_expect_eq(r->element[2]->integer, L.port);
    cr_expect_str_eq(r->element[3]->str, "connected");
    freeReplyObject(r);
    /* The leader's ROLE lists it: [ip, port, offset], strings. */
    r = redisCommand(lc, "ROLE");
    cr_assert(r && r->type == REDIS_REPLY_ARRAY && r->elements == 3);
    cr_assert(r->element[2]->type == REDIS_REPLY_ARRAY && r->element[2]->elements == 1);
    cr_expect_str_eq(r->element[2]->element[0]->element[0]->str, "127.0.0.1");
    freeReplyObject(r);
    /* REPLICAOF NO ONE: the replica is a leader with all it had. */
    cr_expect_str_eq(srv_cmd_raw(rc, buf, sizeof(buf), "REPLICAOF NO ONE"), "+OK\r\n");
    cr_expect_str_eq(srv_cmd_raw(rc, buf, sizeof(buf), "INCR counter"), ":3001\r\n");
    redisFree(lc);
    redisFree(rc);
}

Test(repl_stream, a_killed_replica_resumes_from_its_lsn)
{
    redisContext *lc, *rc;
    start_synced_pair(&lc, &rc, 1000);
    redisFree(rc);
    srv_kill_all(&R); /* SIGKILL of every process of the replica */
    write_some(lc, 1000, 1000);
    cr_assert(srv_restart(&R) == 0, "replica restarts");
    rc = srv_connect(&R);
    cr_assert(rc);
    write_some(lc, 2000, 500);
    expect_caught_up(lc, rc);
    /* A fresh replica process: one handshake, a resume, no copy. */
    cr_expect_eq(info_num(rc, "atticdb_partial_syncs"), 1);
    cr_expect_eq(info_num(rc, "atticdb_full_syncs"), 0);
    char buf[64];
    cr_expect_str_eq(srv_cmd_raw(rc, buf, sizeof(buf), "GET counter"), "$4\r\n2500\r\n");
    redisFree(lc);
    redisFree(rc);
}

Test(repl_stream, a_stopped_leader_heals_after_sigcont)
{
    redisContext *lc, *rc;
    start_pair(&lc, &rc);
    write_some(lc, 0, 500);
    expect_caught_up(lc, rc);
    cr_assert(kill(-L.pid, SIGSTOP) == 0); /* the whole leader: a network cut */
    char buf[64];
    for (int i = 0; i < 20; i++) /* reads go on, from what is durable here */
        cr_expect_str_eq(srv_cmd_raw(rc, buf, sizeof(buf), "GET counter"), "$3\r\n500\r\n");
    sleep(2);
    cr_expect_str_eq(srv_cmd_raw(rc, buf, sizeof(buf), "GET counter"), "$3\r\n500\r\n");
    cr_assert(kill(-L.pid, SIGCONT) == 0);
    write_some(lc, 500, 500);
    expect_caught_up(lc, rc);
    cr_expect_str_eq(info_field(rc, "master_link_status", buf, sizeof(buf)), "up");
    redisFree(lc);
    redisFree(rc);
}

/* A raw TCP connection to s (the replication handshake by hand). */
static int raw_connect(const srv_t *s)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    cr_assert(fd >= 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)s->port)};
    inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
    cr_assert(connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0);
    struct timeval tv = {.tv_sec = 30};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    return fd;
}

/* Send text, read the first answer line (or "" at EOF). */
static const char *raw_ask(int fd, const char *text, char *out, size_t n)
{
    cr_assert(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
    size_t len = 0;
    while (len + 1 < n) {
        ssize_t r = read(fd, out + len, 1);
        if (r <= 0) break;
        len++;
        if (out[len - 1] == '\n') break;
    }
    out[len] = 0;
    return out;
}

static const char *handshake(const char *lsn, const char *crc, const char *seg, const char *ring)
{
    static char cmd[512];
    snprintf(cmd, sizeof(cmd),
             "*8\r\n$8\r\nREPLCONF\r\n$10\r\nATTIC-SYNC\r\n$40\r\n"
             "0123456789012345678901234567890123456789\r\n$%zu\r\n%s\r\n$%zu\r\n%s\r\n$%zu\r\n%s"
             "\r\n$%zu\r\n%s\r\n$4\r\n9999\r\n",
             strlen(lsn), lsn, strlen(crc), crc, strlen(seg), seg, strlen(ring), ring);
    return cmd;
}

Test(repl_stream, bad_input_gets_clear_errors_and_loses_nothing)
{
    cr_assert(srv_start(&L, SMALL) == 0);
    redisContext *lc = srv_connect(&L);
    cr_assert(lc);
    write_some(lc, 0, 200);
    char before[64], buf[512];
    digest(lc, before);
    /* Handshakes the leader refuses, each with its reason. */
    int fd = raw_connect(&L);
    cr_expect(strstr(raw_ask(fd, handshake("0", "0", "2097152", "262144"), buf, sizeof(buf)),
                     "segment-size"),
              "%s", buf);
    cr_expect(
        strstr(raw_ask(fd, handshake("0", "0", "1048576", "65536"), buf, sizeof(buf)), "ring-size"),
        "%s", buf);
    cr_expect(strstr(raw_ask(fd, handshake("x", "0", "1048576", "262144"), buf, sizeof(buf)),
                     "malformed"),
              "%s", buf);
    close(fd);
    char end[32];
    snprintf(end, sizeof(end), "%lld", info_num(lc, "master_repl_offset"));
    /* Logs that are not a prefix of the leader's: a full copy (D50), the
     * reason in the leader's log. */
    fd = raw_connect(&L); /* a record ends there, with another CRC */
    cr_expect_str_eq(raw_ask(fd, handshake(end, "12345", "1048576", "262144"), buf, sizeof(buf)),
                     "+FULLCOPY\r\n");
    close(fd);
    cr_expect(srv_log_contains(&L, "gets a full copy", "differs from the leader's"));
    fd = raw_connect(&L);
    cr_expect_str_eq(
        raw_ask(fd, handshake("999999936", "1", "1048576", "262144"), buf, sizeof(buf)),
        "+FULLCOPY\r\n");
    close(fd);
    cr_expect(srv_log_contains(&L, "gets a full copy", "ahead"));
    /* A good handshake, then garbage instead of acks: dropped. */
    fd = raw_connect(&L);
    cr_expect_str_eq(raw_ask(fd, handshake("0", "0", "1048576", "262144"), buf, sizeof(buf)),
                     "+CONTINUE 0\r\n");
    cr_assert(write(fd, "\x01\x02garbage\r\n*1\r\n$3\r\nfoo\r\n", 24) == 24);
    char sink[65536];
    ssize_t r;
    while ((r = read(fd, sink, sizeof(sink))) > 0) {
    }
    cr_expect_eq(r, 0, "the leader closed the connection");
    close(fd);
    /* A replica of itself: a clear link error, then a leader again. */
    char cmd[64];
    snprintf(cmd, sizeof(cmd), "REPLICAOF 127.0.0.1 %d", L.port);
    cr_expect_str_eq(srv_cmd_raw(lc, buf, sizeof(buf), cmd), "+OK\r\n");
    int seen = 0;
    for (int i = 0; i < 600 && !seen; i++) {
        seen = strstr(info_field(lc, "atticdb_link_error", buf, sizeof(buf)), "itself") != NULL;
        if (!seen) usleep(50000);
    }
    cr_expect(seen, "the link error names the cause: %s", buf);
    cr_expect_str_eq(info_field(lc, "master_link_status", buf, sizeof(buf)), "down");
    cr_expect_str_eq(srv_cmd_raw(lc, buf, sizeof(buf), "SET x 1"),
                     "-READONLY You can't write against a read only replica.\r\n");
    cr_expect_str_eq(srv_cmd_raw(lc, buf, sizeof(buf), "REPLICAOF localhost 65536"),
                     "-ERR Invalid master port\r\n");
    cr_expect_str_eq(srv_cmd_raw(lc, buf, sizeof(buf), "REPLICAOF NO ONE"), "+OK\r\n");
    char after[64];
    digest(lc, after);
    cr_expect_str_eq(before, after, "nothing lost or changed");
    cr_expect_str_eq(srv_cmd_raw(lc, buf, sizeof(buf), "INCR counter"), ":201\r\n");
    redisFree(lc);
}

Test(repl_stream, wait_counts_replicas_that_acked_the_last_write)
{
    redisContext *lc, *rc;
    start_synced_pair(&lc, &rc, 10);
    char buf[512];
    cr_expect_str_eq(srv_cmd_raw(lc, buf, sizeof(buf), "SET w 1"), "+OK\r\n");
    /* Waits (no timeout) until the one replica has it durable. */
    cr_expect_str_eq(srv_cmd_raw(lc, buf, sizeof(buf), "WAIT 1 0"), ":1\r\n");
    /* Two are asked, one exists: the count once the timeout passed. */
    cr_expect_str_eq(srv_cmd_raw(lc, buf, sizeof(buf), "WAIT 2 200"), ":1\r\n");
    /* Replies stay in request order around a held WAIT. */
    redisAppendCommand(lc, "SET w 2");
    redisAppendCommand(lc, "WAIT 1 0");   /* the replica has it ... */
    redisAppendCommand(lc, "WAIT 2 100"); /* ... so this counts it, however slow */
    redisAppendCommand(lc, "GET w");
    const char *want[] = {"OK", NULL, NULL, "2"};
    for (int i = 0; i < 4; i++) {
        redisReply *r;
        cr_assert(redisGetReply(lc, (void **)&r) == REDIS_OK && r);
        if (want[i])
            cr_expect_str_eq(r->str, want[i]);
        else
            cr_expect_eq(r->integer, 1);
        freeReplyObject(r);
    }
    cr_expect_str_eq(srv_cmd_raw(rc, buf, sizeof(buf), "WAIT 0 0"),
                     "-ERR WAIT cannot be used with replica instances. Please also note that "
                     "since Redis 4.0 if a replica is configured to be writable (which is not the "
                     "default) writes to replicas are just local and are not propagated.\r\n");
    redisFree(lc);
    redisFree(rc);
}

/* Reads a reply off c; returns WAITAOF's pair as "local,replicas". */
static const char *waitaof_pair(redisContext *c, char *out, size_t n)
{
    redisReply *r;
    cr_assert(redisGetReply(c, (void **)&r) == REDIS_OK && r);
    cr_assert(r->type == REDIS_REPLY_ARRAY && r->elements == 2, "WAITAOF's pair (%d)", r->type);
    snprintf(out, n, "%lld,%lld", r->element[0]->integer, r->element[1]->integer);
    freeReplyObject(r);
    return out;
}

Test(repl_stream, waitaof_counts_replicas_that_made_the_last_write_durable)
{
    redisContext *lc, *rc;
    start_synced_pair(&lc, &rc, 10);
    char buf[512];
    cr_expect_str_eq(srv_cmd_raw(lc, buf, sizeof(buf), "SET w 1"), "+OK\r\n");
    /* No timeout: held until the replica's durable LSN passed the SET. */
    cr_expect_str_eq(srv_cmd_raw(lc, buf, sizeof(buf), "WAITAOF 1 1 0"), "*2\r\n:1\r\n:1\r\n");
    cr_expect_str_eq(srv_cmd_raw(lc, buf, sizeof(buf), "WAITAOF 0 2 200"),
                     "*2\r\n:1\r\n:1\r\n"); /* two asked, one exists: after the timeout */
    /* Request order around a held WAITAOF, and WAIT beside it. */
    redisAppendCommand(lc, "SET w 2");
    redisAppendCommand(lc, "WAITAOF 1 1 0");
    redisAppendCommand(lc, "WAITAOF 1 2 100"); /* after the one above: 1 replica */
    redisAppendCommand(lc, "WAIT 1 0");
    redisAppendCommand(lc, "GET w");
    redisReply *r;
    cr_assert(redisGetReply(lc, (void **)&r) == REDIS_OK && r);
    cr_expect_str_eq(r->str, "OK");
    freeReplyObject(r);
    cr_expect_str_eq(waitaof_pair(lc, buf, sizeof(buf)), "1,1");
    cr_expect_str_eq(waitaof_pair(lc, buf, sizeof(buf)), "1,1");
    cr_assert(redisGetReply(lc, (void **)&r) == REDIS_OK && r);
    cr_expect_eq(r->integer, 1, "WAIT reads the same acks");
    freeReplyObject(r);
    cr_assert(redisGetReply(lc, (void **)&r) == REDIS_OK && r);
    cr_expect_str_eq(r->str, "2");
    freeReplyObject(r);
    cr_expect_str_eq(srv_cmd_raw(rc, buf, sizeof(buf), "WAITAOF 0 0 0"),
                     "-ERR WAITAOF cannot be used with replica instances. Please also note that "
                     "writes to replicas are just local and are not propagated.\r\n");
    redisFree(lc);
    redisFree(rc);
}

Test(repl_stream, a_waitaof_parked_while_its_replica_is_killed_answers_after_the_restart)
{
    redisContext *lc, *rc;
    start_synced_pair(&lc, &rc, 100);
    redisFree(rc);
    /* Stopped, the replica acks nothing: the SET is acked (durable here)
     * and the WAITAOF behind it parks. */
    cr_assert(kill(-R.pid, SIGSTOP) == 0);
    redisAppendCommand(lc, "SET parked 1");
    redisAppendCommand(lc, "WAITAOF 1 1 0");
    redisReply *r;
    cr_assert(redisGetReply(lc, (void **)&r) == REDIS_OK && r);
    cr_expect_str_eq(r->str, "OK");
    freeReplyObject(r);
    /* A second client's bounded WAITAOF sees the replica behind. */
    redisContext *l2 = srv_connect(&L);
    cr_assert(l2);
    char buf[512];
    cr_expect_str_eq(srv_cmd_raw(l2, buf, sizeof(buf), "SET other 1"), "+OK\r\n");
    cr_expect_str_eq(srv_cmd_raw(l2, buf, sizeof(buf), "WAITAOF 1 1 300"), "*2\r\n:1\r\n:0\r\n");
    srv_kill_all(&R); /* SIGKILL while the WAITAOF is parked */
    cr_expect_str_eq(srv_cmd_raw(l2, buf, sizeof(buf), "WAITAOF 1 1 300"), "*2\r\n:1\r\n:0\r\n");
    cr_assert(srv_restart(&R) == 0, "replica restarts");
    /* It resumes from its LSN and acks past the SET: the parked reply. */
    cr_expect_str_eq(waitaof_pair(lc, buf, sizeof(buf)), "1,1");
    rc = srv_connect(&R);
    cr_assert(rc);
    cr_expect_str_eq(srv_cmd_raw(rc, buf, sizeof(buf), "GET parked"), "$1\r\n1\r\n");
    redisFree(l2);
    redisFree(lc);
    redisFree(rc);
}

/* Sends SET key v until its reply is `want` (bounded: the sender notices a
 * dead replica, or a restarted one acks, in its own time). */
static void set_until(redisContext *c, const char *want)
{
    char buf[256];
    for (int i = 0; i < 1200; i++) {
        if (!strcmp(srv_cmd_raw(c, buf, sizeof(buf), "SET guard v%d", i), want)) return;
        usleep(50000);
    }
    cr_assert_fail("SET never answered %s (last %s)", want, buf);
}

Test(repl_stream, min_replicas_to_write_refuses_writes_until_the_replica_is_back)
{
    redisContext *lc, *rc;
    start_synced_pair(&lc, &rc, 10);
    redisFree(rc);
    static const char refused[] = "-NOREPLICAS Not enough good replicas to write.\r\n";
    char buf[512];
    cr_expect_str_eq(srv_cmd_raw(lc, buf, sizeof(buf), "CONFIG SET min-slaves-to-write 1"),
                     "+OK\r\n");
    cr_expect_str_eq(srv_cmd_raw(lc, buf, sizeof(buf), "CONFIG GET min-replicas-to-write"),
                     "*2\r\n$21\r\nmin-replicas-to-write\r\n$1\r\n1\r\n");
    cr_expect_eq(info_num(lc, "min_slaves_good_slaves"), 1);
    cr_expect_str_eq(srv_cmd_raw(lc, buf, sizeof(buf), "SET k 1"), "+OK\r\n");
    /* Two wanted, one good: refused, nothing changed; reads go on. */
    cr_expect_str_eq(srv_cmd_raw(lc, buf, sizeof(buf), "CONFIG SET min-replicas-to-write 2"),
                     "+OK\r\n");
    cr_expect_str_eq(srv_cmd_raw(lc, buf, sizeof(buf), "SET k 2"), refused);
    cr_expect_str_eq(srv_cmd_raw(lc, buf, sizeof(buf), "INCR counter"), refused);
    cr_expect_str_eq(srv_cmd_raw(lc, buf, sizeof(buf), "GET k"), "$1\r\n1\r\n");
    /* max-lag 0 turns the guard off, as in Redis (and hides the field). */
    cr_expect_str_eq(srv_cmd_raw(lc, buf, sizeof(buf), "CONFIG SET min-slaves-max-lag 0"),
                     "+OK\r\n");
    cr_expect_str_eq(srv_cmd_raw(lc, buf, sizeof(buf), "SET k 3"), "+OK\r\n");
    cr_expect_eq(info_num(lc, "min_slaves_good_slaves"), -1, "no field while off");
    cr_expect_str_eq(srv_cmd_raw(lc, buf, sizeof(buf), "CONFIG SET min-replicas-max-lag 10"),
                     "+OK\r\n");
    cr_expect_str_eq(srv_cmd_raw(lc, buf, sizeof(buf), "CONFIG SET min-replicas-to-write 1"),
                     "+OK\r\n");
    /* The replica dies: refused once the leader sees it gone; it comes
     * back: accepted again. */
    srv_kill_all(&R);
    set_until(lc, refused);
    cr_expect_eq(info_num(lc, "min_slaves_good_slaves"), 0);
    cr_expect_str_eq(srv_cmd_raw(lc, buf, sizeof(buf), "GET k"), "$1\r\n3\r\n");
    cr_assert(srv_restart(&R) == 0, "replica restarts");
    set_until(lc, "+OK\r\n");
    cr_expect_eq(info_num(lc, "min_slaves_good_slaves"), 1);
    redisFree(lc);
}

Test(repl_stream, with_min_replicas_acked_every_acked_write_survives_the_leader)
{
    cr_assert(srv_start(&L, SMALL " --min-replicas-acked 1") == 0, "leader did not start");
    char extra[256];
    snprintf(extra, sizeof(extra), SMALL " --replicaof 127.0.0.1 %d", L.port);
    cr_assert(srv_start(&R, extra) == 0, "replica did not start");
    redisContext *lc = srv_connect(&L), *rc = srv_connect(&R);
    cr_assert(lc && rc);
    /* Batches of 100 pipelined writes; in the last one, SIGKILL the whole
     * leader after half the replies: every write acked so far must be
     * on the replica. */
    int acked = 0;
    for (int batch = 0; batch < 20; batch++) {
        for (int i = 0; i < 100; i++)
            redisAppendCommand(lc, "SET acked:%d %d", batch * 100 + i, batch * 100 + i);
        int n = batch == 19 ? 50 : 100;
        for (int i = 0; i < n; i++) {
            redisReply *r;
            cr_assert(redisGetReply(lc, (void **)&r) == REDIS_OK && r);
            cr_assert_str_eq(r->str, "OK");
            freeReplyObject(r);
            acked++;
        }
    }
    srv_kill_all(&L);
    redisFree(lc);
    for (int i = 0; i < acked; i++) {
        redisReply *r = redisCommand(rc, "GET acked:%d", i);
        cr_assert(r && r->type == REDIS_REPLY_STRING, "acked write %d is on the replica", i);
        cr_expect_eq(atoi(r->str), i);
        freeReplyObject(r);
    }
    char buf[64];
    cr_expect_str_eq(srv_cmd_raw(rc, buf, sizeof(buf), "REPLICAOF NO ONE"), "+OK\r\n");
    cr_expect_str_eq(srv_cmd_raw(rc, buf, sizeof(buf), "SET after-failover 1"), "+OK\r\n");
    redisFree(rc);
}

/* The replication process of `s`, SIGKILLed; the master respawns it. */
static void kill_repl_process(const srv_t *s)
{
    pid_t pid;
    cr_assert_eq(srv_wait_children(s, "atticdb-server: replication", &pid, 1, 1), 1);
    cr_assert(kill(pid, SIGKILL) == 0);
}

Test(repl_stream, killed_replication_processes_are_respawned_and_resume)
{
    redisContext *lc, *rc;
    start_pair(&lc, &rc);
    write_some(lc, 0, 500);
    kill_repl_process(&R); /* the receiver, maybe holding a claim */
    write_some(lc, 500, 500);
    expect_caught_up(lc, rc);
    kill_repl_process(&L); /* the sender */
    write_some(lc, 1000, 500);
    expect_caught_up(lc, rc);
    char buf[64];
    cr_expect_str_eq(srv_cmd_raw(rc, buf, sizeof(buf), "GET counter"), "$4\r\n1500\r\n");
    cr_expect(srv_log_contains(&R, "respawned replication", NULL), "the replica's log says so");
    redisFree(lc);
    redisFree(rc);
}

/* ---- full copies (D50) ---------------------------------------------------- */

/* INFO replication's numeric field on a new connection to s (-1 while s
 * does not answer: a replica restarting on its copy). */
static long long info_num_of(const srv_t *s, const char *field)
{
    return srv_info_num(s, "replication", field);
}

/* Wait (up to 120 s) until s restarted on a full copy; a new connection. */
static redisContext *wait_full_copy(const srv_t *s)
{
    for (int i = 0; i < 2400 && info_num_of(s, "atticdb_full_syncs") != 1; i++)
        usleep(50000);
    cr_assert_eq(info_num_of(s, "atticdb_full_syncs"), 1, "no full copy: %s",
                 srv_log_tail(s, (char[2048]){0}, 2048));
    redisContext *c = srv_connect(s);
    cr_assert(c, "connect after the full copy");
    return c;
}

/* expect_caught_up over a fresh connection to each server for every
 * query: Sentinel closes the clients of a server it reconfigures (CLIENT
 * KILL TYPE normal), and under load it may do so again at any moment
 * (it saw a full copy fail once: "Server closed the connection"). */
static pid_t sentinel_pid;
static char sentinel_dir[64];

static void expect_caught_up_of(const srv_t *l, const srv_t *r)
{
    long long want = -1, got = -2;
    for (int i = 0; i < 2400; i++) {
        want = info_num_of(l, "master_repl_offset");
        got = info_num_of(r, "slave_repl_offset");
        if (want > 0 && got == want) break;
        usleep(50000);
    }
    if (got != want) { /* what each side and Sentinel last said */
        fprintf(stderr, "leader on %d at %lld, replica on %d at %lld\n", l->port, want, r->port,
                got);
        fprintf(stderr, "leader's log:\n%s\n", srv_log_tail(l, (char[4096]){0}, 4096));
        fprintf(stderr, "replica's log:\n%s\n", srv_log_tail(r, (char[4096]){0}, 4096));
        char cmd[160];
        snprintf(cmd, sizeof(cmd), "tail -n 40 '%s/sentinel.log' >&2", sentinel_dir);
        if (sentinel_dir[0] && system(cmd) != 0) fprintf(stderr, "no Sentinel log\n");
    }
    cr_assert_eq(got, want, "the replica reached the leader's LSN");
    char a[64] = "", b[64] = "";
    for (int i = 0; i < 100 && (!a[0] || !b[0]); i++) {
        const srv_t *s = a[0] ? r : l;
        redisContext *c = srv_connect(s);
        redisReply *x = c ? redisCommand(c, "DEBUG DIGEST") : NULL;
        if (x && (x->type == REDIS_REPLY_STATUS || x->type == REDIS_REPLY_STRING))
            snprintf(a[0] ? b : a, 64, "%s", x->str);
        if (x) freeReplyObject(x);
        if (c) redisFree(c);
    }
    cr_expect_str_eq(a, b, "same data on both");
}

/* A path under s's data directory exists. */
static int in_dir(const srv_t *s, const char *name)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", s->dir, name);
    return access(path, F_OK) == 0;
}

/* Overwrites of 200 keys with 1 KiB values: the log's old segments die. */
static void overwrite(redisContext *c, int round)
{
    for (int i = 0; i < 200; i++)
        redisAppendCommand(c, "SET big:%d %01000d", i, round);
    for (int i = 0; i < 200; i++) {
        redisReply *r;
        cr_assert(redisGetReply(c, (void **)&r) == REDIS_OK && r, "reply");
        cr_assert(r->type != REDIS_REPLY_ERROR, "write failed: %s", r->str);
        freeReplyObject(r);
    }
}

Test(repl_stream, a_server_with_writes_of_its_own_gets_a_full_copy_that_replaces_them)
{
    redisContext *lc, *sc;
    srv_t *S = &R; /* a second leader, made a replica at run time */
    cr_assert(srv_start(&L, SMALL) == 0);
    cr_assert(srv_start(S, SMALL) == 0);
    lc = srv_connect(&L);
    sc = srv_connect(S);
    cr_assert(lc && sc);
    write_some(lc, 0, 300);
    write_some(sc, 5000, 100); /* its own log: not a prefix of the leader's */
    cr_expect_str_eq(srv_cmd_raw(sc, (char[64]){0}, 64, "SET mine 1"), "+OK\r\n");
    char cmd[64];
    snprintf(cmd, sizeof(cmd), "REPLICAOF 127.0.0.1 %d", L.port);
    cr_expect_str_eq(srv_cmd_raw(sc, (char[64]){0}, 64, cmd), "+OK\r\n");
    redisFree(sc);
    /* The leader goes on acknowledging writes while it makes and sends
     * the copy (its store's child writes it, the replication process
     * sends it): rounds of writes until the replica has restarted on it. */
    int rounds = 0;
    while (info_num_of(S, "atticdb_full_syncs") != 1 && rounds < 400)
        write_some(lc, 1000 + 10 * rounds++, 10);
    sc = wait_full_copy(S);
    write_some(lc, 9000, 50);
    expect_caught_up(lc, sc);
    char buf[128];
    cr_expect_str_eq(srv_cmd_raw(sc, buf, sizeof(buf), "GET mine"), "$-1\r\n",
                     "its own writes are gone (Redis' full sync)");
    cr_expect_eq(info_num(sc, "atticdb_partial_syncs"), 1, "it resumed from the copy's LSN");
    cr_expect_eq(info_num(sc, "master_sync_in_progress"), 0);
    cr_expect(!in_dir(S, "incoming") && !in_dir(S, "old"), "nothing of the copy is left over");
    cr_expect(srv_log_contains(&L, "gets a full copy", "diverged"), "the leader says why");
    /* INFO stats on the leader, as Redis counts: one full sync, for a
     * replica that asked from its own LSN (a refused partial), then the
     * resume from the copy's LSN. */
    cr_expect_eq(info_num(lc, "sync_full"), 1);
    cr_expect_eq(info_num(lc, "sync_partial_err"), 1);
    cr_expect_eq(info_num(lc, "sync_partial_ok"), 1);
    redisFree(lc);
    redisFree(sc);
}

Test(repl_stream, a_replica_behind_the_leaders_log_start_gets_a_full_copy)
{
    redisContext *lc, *rc;
    start_synced_pair(&lc, &rc, 50);
    redisFree(rc);
    cr_assert_eq(srv_stop(&R), 0);
    long long behind = info_num(lc, "master_repl_offset");
    /* Compaction deletes the leader's log below its checkpoint's needs. */
    char v[64];
    for (int round = 0; round < 2000; round++) {
        overwrite(lc, round);
        srv_info_persistence(lc, "atticdb_log_start_lsn", v, sizeof(v));
        if (strtoll(v, NULL, 10) > behind) break;
    }
    cr_assert_gt(strtoll(v, NULL, 10), behind, "the leader's log start passed the replica's LSN");
    cr_assert(srv_restart(&R) == 0);
    rc = wait_full_copy(&R);
    expect_caught_up(lc, rc);
    cr_expect(srv_log_contains(&L, "gets a full copy", "no longer has its log"),
              "the leader says why");
    redisFree(lc);
    redisFree(rc);
}

Test(repl_stream, an_old_leader_rejoining_with_records_the_new_leader_never_had_gets_a_full_copy)
{
    redisContext *lc, *rc;
    start_synced_pair(&lc, &rc, 100);
    redisFree(rc);
    srv_kill_all(&R);
    /* Acked by the old leader only (min-replicas-acked 0): lost by the
     * failover, as Redis' asynchronous replication loses them. */
    cr_expect_str_eq(srv_cmd_raw(lc, (char[64]){0}, 64, "SET only-old-leader 1"), "+OK\r\n");
    write_some(lc, 7000, 20);
    redisFree(lc);
    srv_kill_all(&L);
    snprintf(R.extra, sizeof(R.extra), "%s", SMALL); /* promoted */
    cr_assert(srv_restart(&R) == 0);
    rc = srv_connect(&R);
    cr_assert(rc);
    write_some(rc, 8000, 40);
    snprintf(L.extra, sizeof(L.extra), SMALL " --replicaof 127.0.0.1 %d", R.port);
    cr_assert(srv_restart(&L) == 0);
    lc = wait_full_copy(&L);
    expect_caught_up(rc, lc);
    cr_expect_str_eq(srv_cmd_raw(lc, (char[64]){0}, 64, "GET only-old-leader"), "$-1\r\n");
    redisFree(lc);
    redisFree(rc);
}

/* A replica with writes of its own, started with faults, made to follow L
 * (started here when it does not run): it dies at the fault of its full
 * copy. Its old digest and the leader's into old and lead. */
static void copy_killed_at(const char *faults, char old[64], char lead[64])
{
    redisContext *lc, *sc;
    if (L.pid <= 0) {
        cr_assert(srv_start(&L, SMALL) == 0);
        lc = srv_connect(&L);
        cr_assert(lc);
        write_some(lc, 0, 300);
        redisFree(lc);
    }
    cr_assert(srv_start_faults(&R, faults, SMALL) == 0);
    lc = srv_connect(&L);
    sc = srv_connect(&R);
    cr_assert(lc && sc);
    write_some(sc, 5000, 100);
    digest(sc, old);
    digest(lc, lead);
    char cmd[64];
    snprintf(cmd, sizeof(cmd), "REPLICAOF 127.0.0.1 %d", L.port);
    /* A fault at the receiver's first sync (the SHIPPED note, D56) may
     * kill the group before the reply leaves. */
    const char *reply = srv_cmd_raw(sc, (char[64]){0}, 64, cmd);
    cr_expect(!strcmp(reply, "+OK\r\n") || strstr(reply, "connection error"), "REPLICAOF: %s",
              reply);
    redisFree(sc);
    redisFree(lc);
    cr_assert_eq(srv_wait_exit(&R, 120), 128 + SIGKILL, "killed at the fault (%s)", faults);
}

/* Restarted (standalone) after the kill: its digest, with nothing of the
 * copy left over. */
static void restart_after_kill(char now[64])
{
    snprintf(R.extra, sizeof(R.extra), "%s", SMALL);
    cr_assert(srv_restart(&R) == 0);
    redisContext *sc = srv_connect(&R);
    cr_assert(sc);
    digest(sc, now);
    cr_expect(!in_dir(&R, "incoming") && !in_dir(&R, "old"), "nothing of the copy is left over");
    redisFree(sc);
}

/* ... and that digest is the copy's: the leader's data, all of it. */
static void expect_restart_on_copy(const char *old, const char *lead)
{
    char now[64];
    restart_after_kill(now);
    cr_expect_str_neq(now, old, "not the old data");
    cr_expect_str_eq(now, lead, "the leader's data at the copy");
}

Test(repl_stream, a_replica_killed_with_its_copy_complete_but_not_swapped_starts_on_the_copy)
{
    char old[64], lead[64];
    copy_killed_at("repl.replcopied:1:KILL", old, lead);
    cr_expect(in_dir(&R, "incoming/MANIFEST"), "the copy is complete in incoming/");
    cr_expect(in_dir(&R, "log-0000000000000000.seg"), "its own log is still in place");
    expect_restart_on_copy(old, lead);
    redisContext *sc = srv_connect(&R);
    cr_expect_eq(info_num(sc, "atticdb_full_syncs"), 1, "this start swapped the copy in");
    redisFree(sc);
}

Test(repl_stream, a_replica_killed_with_the_copy_swapped_in_but_old_data_left_starts_on_the_copy)
{
    char old[64], lead[64];
    copy_killed_at("master.replswapped:1:KILL", old, lead);
    cr_expect(in_dir(&R, "old") && !in_dir(&R, "incoming/MANIFEST"), "killed between the steps");
    expect_restart_on_copy(old, lead);
}

/* The power cut during the copy: each of the receiver's fdatasyncs (the
 * checkpoint's, the segment's, the MANIFEST's) in turn cuts the power
 * (io_fault.h's CUT: what was not synced is lost or torn, the server's
 * process group dies). The restart is on the old data, or the whole copy. */
Test(repl_stream, a_power_cut_at_each_sync_of_the_copy_restarts_on_old_data_or_the_whole_copy)
{
    /* Sync 1 is the SHIPPED note's (D56), before the copy's three. */
    for (int n = 1; n <= 4; n++) {
        char faults[64], old[64], lead[64], now[64];
        snprintf(faults, sizeof(faults), "repl.fdatasync:%d:CUT", n);
        copy_killed_at(faults, old, lead);
        restart_after_kill(now);
        cr_expect(!strcmp(now, old) || !strcmp(now, lead),
                  "cut at sync %d: the old data or the copy, not %s", n, now);
        /* The MANIFEST's sync is the last: before it, never the copy. */
        if (n == 1 || n == 4)
            cr_expect_str_eq(now, old, "cut at SHIPPED's or the MANIFEST's sync: the old data");
        srv_cleanup(&R);
    }
}

/* How many of the leader's replication process's descriptors are files of
 * a full copy already unlinked (held open: pinned). */
static int pinned_copy_files(const srv_t *s)
{
    pid_t rp;
    cr_assert_eq(srv_find_children(s, "atticdb-server: replication", &rp, 1), 1);
    int n = 0;
    for (int fd = 0; fd < 1024; fd++) {
        char link[64], target[512];
        snprintf(link, sizeof(link), "/proc/%d/fd/%d", (int)rp, fd);
        ssize_t len = readlink(link, target, sizeof(target) - 1);
        if (len <= 0) continue;
        target[len] = 0;
        n += strstr(target, "/repl-copy/") && strstr(target, "(deleted)");
    }
    return n;
}

/*
 * A replica whose receiver stops writing (its first write of the copy
 * never returns: the fault seam's HANG) holds the leader's copy half sent:
 * the leader keeps its files open, their directory gone, and goes on
 * acknowledging writes, checkpointing and deleting log segments; the
 * replica, killed and restarted, gets a new copy and catches up.
 */
Test(repl_stream, a_stalled_copy_pins_its_files_while_the_leader_writes_and_compacts)
{
    cr_assert(srv_start(&L, SMALL " --checkpoint-bytes 1mb") == 0);
    redisContext *lc = srv_connect(&L);
    cr_assert(lc);
    /* 60 MB of values: more than the loopback socket buffers hold (up to
     * tcp_rmem's 32 MB and tcp_wmem's 4 MB here). */
    for (int i = 0; i < 60000; i += 500) {
        for (int j = i; j < i + 500; j++)
            redisAppendCommand(lc, "SET cold:%d %01000d", j, j);
        for (int j = 0; j < 500; j++) {
            redisReply *r;
            cr_assert(redisGetReply(lc, (void **)&r) == REDIS_OK && r);
            freeReplyObject(r);
        }
    }
    /* Its first pwrite is the SHIPPED note's (D56), the second the copy's. */
    cr_assert(srv_start_faults(&R, "repl.pwrite:2:HANG", SMALL) == 0);
    redisContext *rc = srv_connect(&R);
    cr_assert(rc);
    write_some(rc, 5000, 10); /* of its own: it needs a full copy */
    char cmd[64];
    snprintf(cmd, sizeof(cmd), "REPLICAOF 127.0.0.1 %d", L.port);
    cr_expect_str_eq(srv_cmd_raw(rc, (char[64]){0}, 64, cmd), "+OK\r\n");
    redisFree(rc);
    int pinned = 0;
    for (int i = 0; i < 1200 && !(pinned = pinned_copy_files(&L)); i++)
        usleep(50000);
    cr_assert_gt(pinned, 0, "the copy's files are open, their directory removed: %s",
                 srv_log_tail(&L, (char[4096]){0}, 4096));
    char v[64], before[64];
    srv_info_persistence(lc, "atticdb_log_start_lsn", before, sizeof(before));
    for (int round = 0; round < 2000; round++) {
        overwrite(lc, round);
        srv_info_persistence(lc, "atticdb_log_start_lsn", v, sizeof(v));
        if (strtoll(v, NULL, 10) > strtoll(before, NULL, 10)) break;
    }
    cr_assert_gt(strtoll(v, NULL, 10), strtoll(before, NULL, 10), "the leader deleted segments");
    cr_expect_gt(pinned_copy_files(&L), 0, "still pinned, still being sent");
    srv_kill_all(&R);
    snprintf(R.extra, sizeof(R.extra), SMALL " --replicaof 127.0.0.1 %d", L.port);
    cr_assert(srv_restart(&R) == 0);
    rc = wait_full_copy(&R);
    expect_caught_up(lc, rc);
    for (int i = 0; i < 200 && pinned_copy_files(&L); i++)
        usleep(50000);
    cr_expect_eq(pinned_copy_files(&L), 0, "the stalled copy's files closed with its replica");
    redisFree(rc);
    redisFree(lc);
}

/* ---- Redis Sentinel (Debian's redis-server in sentinel mode) ---------------- */

static void suite_fini(void)
{
    if (sentinel_pid > 0) {
        kill(sentinel_pid, SIGKILL);
        waitpid(sentinel_pid, NULL, 0);
        sentinel_pid = 0;
    }
    if (sentinel_dir[0]) {
        char cmd[128];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", sentinel_dir);
        if (system(cmd) != 0) fprintf(stderr, "cleanup of %s failed\n", sentinel_dir);
        sentinel_dir[0] = 0;
    }
    srv_cleanup_all();
}

/* One Sentinel watching `leader` as "m" (quorum 1, down after 1 s). */
static redisContext *start_sentinel(const srv_t *leader)
{
    const char *redis = wire_redis_path();
    cr_assert(redis, "redis-server (Sentinel mode) not found");
    snprintf(sentinel_dir, sizeof(sentinel_dir), "/tmp/attic-sentinel-XXXXXX");
    cr_assert(mkdtemp(sentinel_dir));
    char conf[128];
    snprintf(conf, sizeof(conf), "%s/sentinel.conf", sentinel_dir);
    int port = srv_free_port();
    FILE *f = fopen(conf, "w");
    cr_assert(f);
    fprintf(f,
            "port %d\nbind 127.0.0.1\ndir %s\nlogfile %s/sentinel.log\n"
            "sentinel monitor m 127.0.0.1 %d 1\nsentinel down-after-milliseconds m 1000\n"
            "sentinel failover-timeout m 20000\n",
            port, sentinel_dir, sentinel_dir, leader->port);
    fclose(f);
    char *argv[] = {(char *)redis, conf, "--sentinel", NULL};
    sentinel_pid = srv_spawn(argv);
    cr_assert(sentinel_pid > 0);
    redisContext *c = NULL;
    for (int i = 0; i < 200 && !c; i++) {
        c = redisConnect("127.0.0.1", port);
        if (c && c->err) redisFree(c), c = NULL;
        if (!c) usleep(50000);
    }
    cr_assert(c, "Sentinel did not start");
    return c;
}

/* The port Sentinel names as m's leader. */
static int sentinel_leader(redisContext *sc)
{
    redisReply *r = redisCommand(sc, "SENTINEL get-master-addr-by-name m");
    cr_assert(r && r->type == REDIS_REPLY_ARRAY && r->elements == 2, "get-master-addr-by-name");
    int port = atoi(r->element[1]->str);
    freeReplyObject(r);
    return port;
}

static size_t sentinel_replicas(redisContext *sc)
{
    redisReply *r = redisCommand(sc, "SENTINEL replicas m");
    cr_assert(r && r->type == REDIS_REPLY_ARRAY, "SENTINEL replicas");
    size_t n = r->elements;
    freeReplyObject(r);
    return n;
}

/*
 * Leader and two replicas under Sentinel, min-replicas-acked 1: the leader
 * is SIGKILLed holding a durable record no replica has (its replication
 * process stopped, the write not acknowledged); Sentinel promotes a replica
 * and repoints the other; every acknowledged write is on the new leader;
 * the old leader, restarted, is made a replica by Sentinel and, its log
 * having diverged, gets a full copy; all three then hold the same data.
 */
Test(repl_stream, sentinel_fails_over_without_losing_acked_writes_and_the_old_leader_rejoins)
{
    static srv_t R2;
    cr_assert(srv_start(&L, SMALL " --min-replicas-acked 1") == 0);
    char extra[256];
    snprintf(extra, sizeof(extra), SMALL " --replicaof 127.0.0.1 %d", L.port);
    cr_assert(srv_start(&R, extra) == 0);
    cr_assert(srv_start(&R2, extra) == 0);
    redisContext *sc = start_sentinel(&L);
    for (int i = 0; i < 1200 && sentinel_replicas(sc) < 2; i++)
        usleep(50000);
    cr_assert_eq(sentinel_replicas(sc), 2, "Sentinel found both replicas");
    redisContext *lc = srv_connect(&L);
    cr_assert(lc);
    write_some(lc, 0, 100); /* each acknowledged once a replica has it durable */
    /* A record durable on the leader only: never shipped, never acked. */
    pid_t rp;
    cr_assert_eq(srv_find_children(&L, "atticdb-server: replication", &rp, 1), 1);
    kill(rp, SIGSTOP);
    long long before = info_num(lc, "master_repl_offset");
    redisContext *uc = srv_connect(&L);
    cr_assert(uc);
    redisAppendCommand(uc, "SET unacked 1");
    for (int done = 0; !done;)
        cr_assert(redisBufferWrite(uc, &done) == REDIS_OK);
    for (int i = 0; i < 1200 && info_num(lc, "master_repl_offset") == before; i++)
        usleep(50000);
    cr_assert_gt(info_num(lc, "master_repl_offset"), before, "the write is durable on the leader");
    redisFree(uc);
    redisFree(lc);
    srv_kill_all(&L);
    int port = L.port;
    for (int i = 0; i < 1200 && (port = sentinel_leader(sc)) == L.port; i++)
        usleep(50000);
    cr_assert(port == R.port || port == R2.port, "Sentinel promoted a replica (%d)", port);
    /* One failover is the test. Under load a PING the new leader answers
     * late was taken for a second failure (+sdown 1 s after the switch) and
     * Sentinel promoted the other replica, leaving this test's roles stale:
     * from here on Sentinel waits a minute before it calls a server down. */
    redisReply *da = redisCommand(sc, "SENTINEL SET m down-after-milliseconds 60000");
    cr_assert(da && da->type == REDIS_REPLY_STATUS, "SENTINEL SET down-after-milliseconds");
    freeReplyObject(da);
    srv_t *N = port == R.port ? &R : &R2, *O = port == R.port ? &R2 : &R;
    /* Sentinel closes the clients of the servers it reconfigures (CLIENT
     * KILL TYPE normal): new connections, after it is done. */
    for (int i = 0; i < 1200 && info_num_of(O, "master_port") != port; i++)
        usleep(50000);
    cr_assert_eq(info_num_of(O, "master_port"), port, "Sentinel repointed the other replica");
    redisContext *nc = srv_connect(N), *oc = srv_connect(O);
    cr_assert(nc && oc);
    char buf[128];
    cr_expect_str_eq(srv_cmd_raw(nc, buf, sizeof(buf), "GET counter"), "$3\r\n100\r\n",
                     "every acknowledged write is on the new leader");
    cr_expect_str_eq(srv_cmd_raw(nc, buf, sizeof(buf), "GET unacked"), "$-1\r\n");
    write_some(nc, 1000, 30);
    /* The old leader comes back as a leader; Sentinel makes it a replica. */
    snprintf(L.extra, sizeof(L.extra), "%s", SMALL);
    cr_assert(srv_restart(&L) == 0);
    redisFree(wait_full_copy(&L));
    redisFree(nc);
    redisFree(oc);
    nc = srv_connect(N);
    cr_assert(nc);
    write_some(nc, 2000, 30);
    redisFree(nc);
    expect_caught_up_of(N, &L);
    expect_caught_up_of(N, O);
    redisContext *lc2 = srv_connect(&L);
    cr_assert(lc2);
    cr_expect_str_eq(srv_cmd_raw(lc2, buf, sizeof(buf), "GET unacked"), "$-1\r\n",
                     "the record the new leader never had is gone");
    cr_expect(srv_log_contains(&L, "REPLICAOF", NULL), "Sentinel sent REPLICAOF");
    redisFree(lc2);
    redisFree(sc);
}

/* One round of the random-kill test: a leader with min-replicas-acked 1
 * and two replicas; pipelined SETs of distinct keys while a child SIGKILLs
 * the leader's whole group after a random delay, with `stall` its
 * replication process stopped (SIGSTOP: a cut link) a random time before
 * (the leader goes on making writes durable that no replica gets: without
 * min-replicas-acked they are acked, and lost). The replica with the
 * higher durable LSN has every acknowledged write; promoted, it takes
 * writes, and the other, repointed to it, resumes and converges. */
static void kill_leader_at_random(unsigned seed, int stall)
{
    static srv_t R2;
    srand(seed);
    cr_assert(srv_start(&L, SMALL " --min-replicas-acked 1") == 0, "leader did not start");
    char extra[256];
    snprintf(extra, sizeof(extra), SMALL " --replicaof 127.0.0.1 %d", L.port);
    cr_assert(srv_start(&R, extra) == 0, "replica 1 did not start");
    cr_assert(srv_start(&R2, extra) == 0, "replica 2 did not start");
    redisContext *lc = srv_connect(&L);
    cr_assert(lc);
    for (int i = 0; i < 1200 && info_num(lc, "connected_slaves") < 2; i++)
        usleep(50000);
    cr_assert_eq(info_num(lc, "connected_slaves"), 2, "both replicas are linked");
    int delay_ms = rand() % 800, stall_ms = stall ? rand() % 400 : -1;
    pid_t repl = 0, killer = -1;
    if (stall) cr_assert_eq(srv_find_children(&L, "atticdb-server: replication", &repl, 1), 1);
    /* Until the connection fails: batches of 50, counting the OKs; the
     * killer starts once the first batch is acknowledged. */
    int acked = 0, sent = 0, failed = 0;
    while (!failed && sent < 200000) {
        if (sent == 50) {
            killer = fork();
            cr_assert(killer >= 0);
            if (killer == 0) {
                if (stall) { /* the link cut first: nothing more reaches a replica */
                    usleep((useconds_t)stall_ms * 1000);
                    kill(repl, SIGSTOP);
                }
                usleep((useconds_t)delay_ms * 1000);
                kill(-L.pid, SIGKILL);
                _exit(0);
            }
        }
        for (int i = 0; i < 50; i++)
            redisAppendCommand(lc, "SET acked:%d %d", sent + i, sent + i);
        sent += 50;
        for (int i = 0; i < 50 && !failed; i++) {
            redisReply *r;
            if (redisGetReply(lc, (void **)&r) != REDIS_OK || !r) {
                failed = 1;
                break;
            }
            if (r->type == REDIS_REPLY_STATUS && !strcmp(r->str, "OK")) {
                cr_assert_eq(acked, sent - 50 + i, "acks come in order");
                acked++;
            } else {
                failed = 1;
            }
            freeReplyObject(r);
        }
    }
    cr_assert_gt(killer, 0, "seed %u: the writes failed before the kill", seed);
    waitpid(killer, NULL, 0);
    redisFree(lc);
    srv_kill_all(&L);
    redisContext *c1 = srv_connect(&R), *c2 = srv_connect(&R2);
    cr_assert(c1 && c2);
    long long o1 = info_num(c1, "slave_repl_offset"), o2 = info_num(c2, "slave_repl_offset");
    srv_t *N = o1 >= o2 ? &R : &R2;
    redisContext *nc = o1 >= o2 ? c1 : c2, *oc = o1 >= o2 ? c2 : c1;
    for (int i = 0; i < acked; i++) {
        redisReply *r = redisCommand(nc, "GET acked:%d", i);
        cr_assert(r && r->type == REDIS_REPLY_STRING,
                  "seed %u: acknowledged write %d of %d is on the promoted replica", seed, i,
                  acked);
        cr_assert_eq(atoi(r->str), i);
        freeReplyObject(r);
    }
    char buf[128];
    cr_assert_str_eq(srv_cmd_raw(nc, buf, sizeof(buf), "REPLICAOF NO ONE"), "+OK\r\n");
    cr_assert_str_eq(srv_cmd_raw(oc, buf, sizeof(buf), "REPLICAOF 127.0.0.1 %d", N->port),
                     "+OK\r\n");
    write_some(nc, 0, 50);
    expect_caught_up(nc, oc);
    cr_expect_eq(info_num(oc, "atticdb_full_syncs"), 0, "the other replica resumed, no copy");
    redisFree(nc);
    redisFree(oc);
    srv_kill_all(&R);
    srv_kill_all(&R2);
}

Test(repl_stream, leader_killed_at_random_moments_loses_no_write_acked_on_a_replica)
{
    const char *env = getenv("ATTIC_SEED");
    unsigned seed = env ? (unsigned)strtoul(env, NULL, 10) : (unsigned)time(NULL);
    fprintf(stderr, "repl_stream: random kills, seed %u (ATTIC_SEED=%u to repeat)\n", seed, seed);
    for (unsigned round = 0; round < 4; round++)
        kill_leader_at_random(seed + round, round % 2);
}

/* A replica of a replica (chained replicas are not built, D33): the
 * second link is refused with the reason, the replica gets nothing and
 * serves what it has; the first pair goes on untouched. */
Test(repl_stream, a_replica_of_a_replica_is_refused_with_the_reason)
{
    static srv_t R2;
    redisContext *lc, *rc;
    start_synced_pair(&lc, &rc, 20);
    char extra[256];
    snprintf(extra, sizeof(extra), SMALL " --replicaof 127.0.0.1 %d", R.port);
    cr_assert(srv_start(&R2, extra) == 0, "the second replica did not start");
    redisContext *c2 = srv_connect(&R2);
    cr_assert(c2);
    char buf[256];
    int seen = 0;
    for (int i = 0; i < 1200 && !seen; i++) {
        seen = strstr(info_field(c2, "atticdb_link_error", buf, sizeof(buf)),
                      "replicas of replicas are not supported") != NULL;
        if (!seen) usleep(50000);
    }
    cr_assert(seen, "the link error says why: %s", buf);
    cr_expect_str_eq(info_field(c2, "master_link_status", buf, sizeof(buf)), "down");
    cr_expect_str_eq(srv_cmd_raw(c2, buf, sizeof(buf), "GET counter"), "$-1\r\n",
                     "nothing reached the second replica");
    cr_expect_str_eq(srv_cmd_raw(c2, buf, sizeof(buf), "SET x 1"),
                     "-READONLY You can't write against a read only replica.\r\n");
    write_some(lc, 100, 20);
    expect_caught_up(lc, rc);
    redisFree(c2);
    redisFree(lc);
    redisFree(rc);
    srv_kill_all(&R2);
}

/* Values larger than a record travel as chunk records of up to a quarter
 * of the ring (D31), far larger than a replication frame: they reach the
 * replica whole, and what follows them too (the receiver stopped reading
 * before such a record was whole, and replication stalled for good). */
Test(repl_stream, large_values_reach_the_replica_and_the_stream_goes_on)
{
    /* The default ring (16 MB): chunks of 4 MB. */
    cr_assert(srv_start(&L, "--frontends 2") == 0, "leader did not start");
    char extra[128];
    snprintf(extra, sizeof(extra), "--frontends 2 --replicaof 127.0.0.1 %d", L.port);
    cr_assert(srv_start(&R, extra) == 0, "replica did not start");
    redisContext *lc = srv_connect(&L), *rc = srv_connect(&R);
    cr_assert(lc && rc);
    write_some(lc, 0, 10);
    expect_caught_up(lc, rc);
    size_t sizes[] = {5u << 20, 12u << 20};
    for (int k = 0; k < 2; k++) {
        size_t n = sizes[k];
        char *v = malloc(n);
        cr_assert(v);
        for (size_t i = 0; i < n; i++)
            v[i] = (char)('a' + (i * 7 + (size_t)k) % 26);
        redisReply *r = redisCommand(lc, "SET big:%d %b", k, v, n);
        cr_assert(r && r->type == REDIS_REPLY_STATUS, "SET of %zu bytes", n);
        freeReplyObject(r);
        write_some(lc, 100 * (k + 1), 10); /* and the stream goes on after it */
        expect_caught_up(lc, rc);
        r = redisCommand(rc, "GET big:%d", k);
        cr_assert(r && r->type == REDIS_REPLY_STRING && r->len == n, "the replica has it");
        cr_expect(memcmp(r->str, v, n) == 0, "byte for byte");
        freeReplyObject(r);
        free(v);
    }
    redisFree(lc);
    redisFree(rc);
}

/* DEBUG PAGED key's first figure (paged 1/0) and its member count. */
static void paged_of(redisContext *c, const char *key, long long *paged, long long *members)
{
    redisReply *r = redisCommand(c, "DEBUG PAGED %s", key);
    cr_assert(r && r->type == REDIS_REPLY_ARRAY && r->elements == 7, "DEBUG PAGED %s", key);
    *paged = r->element[0]->integer;
    *members = r->element[6]->integer;
    freeReplyObject(r);
}

/* Large hashes, sets and lists in pages (D60, D63): the leader's store
 * writes the page records, the replica applies them from the stream (its
 * own pager writes nothing: its log is its leader's), so both hold the
 * same collections in pages, read alike, and the replica's restart from
 * its log and checkpoints comes back equal. */
Test(repl_stream, paged_collections_reach_the_replica_paged)
{
    const char *args = SMALL " --collection-paging-entries 300 --collection-page-size 1kb";
    cr_assert(srv_start(&L, args) == 0, "leader did not start");
    char extra[256];
    snprintf(extra, sizeof(extra), "%s --replicaof 127.0.0.1 %d", args, L.port);
    cr_assert(srv_start(&R, extra) == 0, "replica did not start");
    redisContext *lc = srv_connect(&L), *rc = srv_connect(&R);
    cr_assert(lc && rc);
    for (int i = 0; i < 3000; i++) {
        redisAppendCommand(lc, "HSET ph f:%d value-%d", i, i * 7);
        redisAppendCommand(lc, "SADD ps m:%d", i);
        redisAppendCommand(lc, "RPUSH pl element-%d", i);
    }
    for (int i = 0; i < 9000; i++) {
        redisReply *r;
        cr_assert(redisGetReply(lc, (void **)&r) == REDIS_OK && r->type == REDIS_REPLY_INTEGER);
        freeReplyObject(r);
    }
    long long paged = 0, n = 0;
    for (int i = 0; i < 600 && !paged; i++) {
        paged_of(lc, "ph", &paged, &n);
        if (!paged) usleep(20000);
    }
    cr_assert(paged, "the leader paged the hash");
    for (int i = 0; i < 3000; i += 3) { /* changes over pages */
        redisAppendCommand(lc, "HDEL ph f:%d", i);
        redisAppendCommand(lc, "SREM ps m:%d", i);
        redisAppendCommand(lc, "LSET pl %d changed-%d", i, i);
    }
    for (int i = 0; i < 3000; i++) {
        redisReply *r;
        cr_assert(redisGetReply(lc, (void **)&r) == REDIS_OK && r->type != REDIS_REPLY_ERROR);
        freeReplyObject(r);
    }
    write_some(lc, 0, 20);
    expect_caught_up(lc, rc);
    const char *keys[3] = {"ph", "ps", "pl"};
    for (int k = 0; k < 3; k++) {
        long long lp, ln, rp, rn;
        paged_of(lc, keys[k], &lp, &ln);
        paged_of(rc, keys[k], &rp, &rn);
        /* The leader's pager may write one more page record after the
         * catch-up: the replica has it once caught up again (10 s). */
        for (int t = 0; t < 200 && (rp != lp || rn != ln); t++) {
            usleep(50000);
            expect_caught_up(lc, rc);
            paged_of(lc, keys[k], &lp, &ln);
            paged_of(rc, keys[k], &rp, &rn);
        }
        cr_expect_eq(rp, lp, "%s: paged on the replica as on the leader", keys[k]);
        cr_expect_eq(rn, ln, "%s: the same members", keys[k]);
    }
    char buf[128];
    cr_expect_str_eq(srv_cmd_raw(rc, buf, sizeof(buf), "HGET ph f:1000"), "$10\r\nvalue-7000\r\n");
    cr_expect_str_eq(srv_cmd_raw(rc, buf, sizeof(buf), "LINDEX pl 999"), "$11\r\nchanged-999\r\n");
    redisFree(rc);
    srv_kill_all(&R);
    cr_assert(srv_restart(&R) == 0, "the replica restarts");
    rc = srv_connect(&R);
    cr_assert(rc);
    write_some(lc, 100, 5);
    expect_caught_up(lc, rc);
    redisFree(lc);
    redisFree(rc);
}

/* A torn point with valid records after it, made in a stopped server's
 * first segment at `off` (a power cut's lost pages in the middle of an
 * unsynced stretch: D56). */
static void tear_log_at(const srv_t *s, long off)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/log-0000000000000000.seg", s->dir);
    FILE *f = fopen(path, "r+");
    cr_assert_not_null(f, "%s", path);
    fseek(f, off, SEEK_SET);
    fwrite("\xde\xad\xbe\xef", 1, 4, f);
    fclose(f);
}

#define TORN_AT 300000 /* inside the first segment after 1000 rounds */

Test(repl_stream, a_replica_cuts_a_torn_point_its_leaders_records_prove_and_resumes)
{
    redisContext *lc, *rc;
    start_synced_pair(&lc, &rc, 1000);
    redisFree(rc);
    cr_assert(in_dir(&R, "SHIPPED"), "the replica notes that its log is the leader's");
    cr_assert_eq(srv_stop(&R), 0);
    /* The later records' durable_gap proves the torn point durable on the
     * leader; on the replica it proves nothing: cut, fetch again. */
    tear_log_at(&R, TORN_AT);
    char tail[2048];
    cr_assert_eq(srv_restart(&R), 0, "the replica did not start: %s",
                 srv_log_tail(&R, tail, sizeof(tail)));
    cr_expect(srv_log_contains(&R, "cut the log's torn tail", NULL), "the replica cut its tail");
    rc = srv_connect(&R);
    cr_assert(rc);
    write_some(lc, 1000, 200);
    expect_caught_up(lc, rc);
    cr_expect_eq(info_num(rc, "atticdb_full_syncs"), 0, "a resume, not a copy");
    redisFree(rc);
    redisFree(lc);
    /* The same shape on the leader is damage: its records speak of its own
     * fdatasyncs, so what it cut would include acknowledged writes. */
    cr_assert_eq(srv_stop(&L), 0);
    tear_log_at(&L, TORN_AT);
    cr_assert_neq(srv_restart(&L), 0, "the leader started on a damaged log");
    cr_expect(srv_log_contains(&L, "corrupt in the middle", "log-0000000000000000.seg"),
              "the leader names the damage");
}

Test(repl_stream, a_promoted_replica_trusts_its_own_records_again)
{
    redisContext *lc, *rc;
    start_synced_pair(&lc, &rc, 100);
    redisFree(lc);
    char buf[128];
    cr_assert_str_eq(srv_cmd_raw(rc, buf, sizeof(buf), "REPLICAOF NO ONE"), "+OK\r\n");
    long long promoted = info_num(rc, "master_repl_offset");
    write_some(rc, 100, 1000); /* its own records, from `promoted` on */
    redisFree(rc);
    cr_assert_eq(srv_stop(&R), 0);
    char path[512];
    snprintf(path, sizeof(path), "%s/SHIPPED", R.dir);
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f);
    unsigned long long from, to;
    cr_assert_eq(fscanf(f, "shipped %llu %llu", &from, &to), 2);
    fclose(f);
    cr_expect_eq(from, 0);
    cr_expect_leq(to, (unsigned long long)promoted, "own records from the promotion on");
    cr_assert_lt((long long)to, TORN_AT);
    /* A torn point its own later records prove durable: damage. */
    tear_log_at(&R, TORN_AT);
    snprintf(R.extra, sizeof(R.extra), "%s", SMALL);
    cr_assert_neq(srv_restart(&R), 0, "the promoted replica started on a damaged log");
    cr_expect(srv_log_contains(&R, "corrupt in the middle", NULL), "it names the damage");
}

/* The pid of s's process titled "atticdb-server: <role>". */
static pid_t role_pid(const srv_t *s, const char *role)
{
    char title[64];
    snprintf(title, sizeof(title), "atticdb-server: %s", role);
    pid_t pid;
    cr_assert_eq(srv_wait_children(s, title, &pid, 1, 1), 1, "no %s process", role);
    return pid;
}

/* Wait (up to 60 s) until L's INFO replication lists a replica in this
 * state; its slave0 line into line. */
static void wait_slave_state(const char *state, char *line, size_t n)
{
    char want[64];
    snprintf(want, sizeof(want), ",state=%s,", state);
    line[0] = 0;
    for (int i = 0; i < 1200 && !strstr(line, want); i++) {
        redisContext *c = srv_connect(&L);
        cr_assert(c);
        redisReply *r = redisCommand(c, "INFO replication");
        cr_assert(r && r->type == REDIS_REPLY_STRING);
        const char *p = strstr(r->str, "\r\nslave0:");
        snprintf(line, n, "%.*s", p ? (int)strcspn(p + 2, "\r") : 0, p ? p + 2 : "");
        freeReplyObject(r);
        redisFree(c);
        if (!strstr(line, want)) usleep(50000);
    }
    cr_assert(strstr(line, want), "no replica in state %s: \"%s\"", state, line);
}

/* As Redis 7.0's INFO replication: a replica getting a full copy is listed
 * while the copy is written (wait_bgsave: the leader's store is held with
 * SIGSTOP) and sent (send_bulk: the replica's replication process is held),
 * then online once it streams. */
Test(repl_stream, info_lists_a_replica_through_its_full_copy)
{
    cr_assert(srv_start(&L, SMALL) == 0);
    redisContext *lc = srv_connect(&L);
    cr_assert(lc);
    write_some(lc, 0, 300);
    cr_assert(srv_start(&R, SMALL) == 0);
    redisContext *rc = srv_connect(&R);
    cr_assert(rc);
    write_some(rc, 5000, 10); /* of its own: it needs a full copy */
    pid_t store = role_pid(&L, "store");
    cr_assert(kill(store, SIGSTOP) == 0);
    char cmd[64], line[256], want[128];
    snprintf(cmd, sizeof(cmd), "REPLICAOF 127.0.0.1 %d", L.port);
    cr_expect_str_eq(srv_cmd_raw(rc, (char[64]){0}, 64, cmd), "+OK\r\n");
    redisFree(rc);
    wait_slave_state("wait_bgsave", line, sizeof(line));
    snprintf(want, sizeof(want),
             "slave0:ip=127.0.0.1,port=%d,state=wait_bgsave,offset=0,lag=", R.port);
    cr_expect(strncmp(line, want, strlen(want)) == 0, "\"%s\"", line);
    cr_expect_eq(info_num_of(&L, "connected_slaves"), 1);
    pid_t repl = role_pid(&R, "replication");
    cr_assert(kill(repl, SIGSTOP) == 0);
    cr_assert(kill(store, SIGCONT) == 0);
    wait_slave_state("send_bulk", line, sizeof(line));
    snprintf(want, sizeof(want),
             "slave0:ip=127.0.0.1,port=%d,state=send_bulk,offset=0,lag=", R.port);
    cr_expect(strncmp(line, want, strlen(want)) == 0, "\"%s\"", line);
    cr_assert(kill(repl, SIGCONT) == 0);
    rc = wait_full_copy(&R);
    wait_slave_state("online", line, sizeof(line));
    snprintf(want, sizeof(want), "slave0:ip=127.0.0.1,port=%d,state=online,offset=", R.port);
    cr_expect(strncmp(line, want, strlen(want)) == 0, "\"%s\"", line);
    expect_caught_up(lc, rc);
    redisFree(rc);
    redisFree(lc);
}
