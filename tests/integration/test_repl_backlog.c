/*
 * test_repl_backlog.c - the log a leader keeps for its replicas (D67):
 * repl-backlog-size, repl-backlog-ttl and client-output-buffer-limit
 * replica, on a real leader and replica with small segments and frequent
 * checkpoints, so that compaction deletes segments within seconds. A
 * replica killed while the leader writes less than the backlog resumes
 * (INFO stats sync_partial_ok grows, sync_full does not) with the same
 * DEBUG DIGEST, though segments were deleted meanwhile; with a tiny
 * backlog it gets a full copy and the leader's log stays short; CONFIG
 * SET changes what is kept at once and INFO's repl_backlog_* fields say
 * so; a SIGSTOPped replica past the replica class' hard limit is dropped
 * and pins nothing; the store killed at "backlogtrim" and the replication
 * process at "replpinned" are respawned and replicas still resume. Waits
 * have generous deadlines; nothing asserts a duration.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

TestSuite(repl_backlog, .fini = srv_cleanup_all, .timeout = 240);

#define ARGS "--frontends 1 --ring-size 64kb --segment-size 128kb --checkpoint-bytes 128kb"

static srv_t L, R;

/* INFO's numeric field on a new connection to s (-1 when s does not
 * answer or has no such field). */
static long long info_of(const srv_t *s, const char *field)
{
    return srv_info_num(s, "everything", field);
}

static void digest_of(const srv_t *s, char out[64])
{
    redisContext *c = srv_connect(s);
    cr_assert(c, "connect to %d", s->port);
    redisReply *r = redisCommand(c, "DEBUG DIGEST");
    cr_assert(r && (r->type == REDIS_REPLY_STATUS || r->type == REDIS_REPLY_STRING), "DIGEST");
    snprintf(out, 64, "%s", r->str);
    freeReplyObject(r);
    redisFree(c);
}

/* Wait (up to 120 s) until the replica holds what the leader has. */
static void expect_caught_up(void)
{
    long long want = -1, got = -2;
    for (int i = 0; i < 2400; i++) {
        want = info_of(&L, "master_repl_offset");
        got = info_of(&R, "slave_repl_offset");
        if (want > 0 && got == want) break;
        usleep(50000);
    }
    cr_assert_eq(got, want, "the replica reached the leader's LSN; its log:\n%s",
                 srv_log_tail(&R, (char[2048]){0}, 2048));
    char a[64], b[64];
    digest_of(&L, a);
    digest_of(&R, b);
    cr_expect_str_eq(a, b, "same data on both");
}

/* n overwrites of 200 keys with 1 KiB values (about n KiB of log): old
 * segments die, checkpoints follow each other. */
static void overwrite(redisContext *c, int round, int n)
{
    for (int i = 0; i < n; i++)
        redisAppendCommand(c, "SET big:%d %01000d", i % 200, round * 1000 + i);
    for (int i = 0; i < n; i++) {
        redisReply *r;
        cr_assert(redisGetReply(c, (void **)&r) == REDIS_OK && r, "reply");
        cr_assert(r->type != REDIS_REPLY_ERROR, "write failed: %s", r->str);
        freeReplyObject(r);
    }
}

static redisContext *start_pair(const char *leader_extra)
{
    char extra[512];
    snprintf(extra, sizeof(extra), ARGS " %s", leader_extra);
    cr_assert(srv_start(&L, extra) == 0, "leader did not start");
    snprintf(extra, sizeof(extra), ARGS " --replicaof 127.0.0.1 %d", L.port);
    cr_assert(srv_start(&R, extra) == 0, "replica did not start");
    redisContext *c = srv_connect(&L);
    cr_assert(c);
    overwrite(c, 0, 400);
    expect_caught_up();
    return c;
}

/* Segment files in s's data directory. */
static int segments(const srv_t *s)
{
    DIR *d = opendir(s->dir);
    cr_assert(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        n += !strncmp(e->d_name, "log-", 4) && strstr(e->d_name, ".seg") != NULL;
    closedir(d);
    return n;
}

/* The names of s's segment files, for a failure's message. */
static const char *segment_names(const srv_t *s, char *out, size_t cap)
{
    size_t n = 0;
    out[0] = 0;
    DIR *d = opendir(s->dir);
    if (!d) return out;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && n + 64 < cap)
        if (!strncmp(e->d_name, "log-", 4) || strstr(e->d_name, "checkpoint"))
            n += (size_t)snprintf(out + n, cap - n, " %s", e->d_name);
    closedir(d);
    return out;
}

static long long log_start(const srv_t *s)
{
    return info_of(s, "atticdb_log_start_lsn");
}

/* Write until the leader's log starts past lsn (or 4 MiB were written),
 * then give its deletion time to follow: returns the log's start. A
 * segment goes after a checkpoint child covers it, which a loaded machine
 * may finish only after the writes (an idle log over its target takes
 * one more, D79). */
static long long write_until_start_past(redisContext *c, long long lsn, int *round)
{
    long long start = log_start(&L);
    for (int i = 0; i < 64 && start <= lsn; i++) {
        overwrite(c, (*round)++, 64);
        start = log_start(&L);
    }
    for (int i = 0; i < 300 && start <= lsn; i++) {
        usleep(50000);
        start = log_start(&L);
    }
    return start;
}

Test(repl_backlog, a_replica_back_within_the_backlog_resumes_though_segments_were_deleted)
{
    redisContext *c = start_pair("--repl-backlog-size 1mb");
    overwrite(c, 9, 1500); /* a log longer than the backlog */
    expect_caught_up();
    long long full = info_of(&L, "sync_full"), partial = info_of(&L, "sync_partial_ok");
    long long at = info_of(&L, "master_repl_offset");
    long long start0 = log_start(&L);
    srv_kill_all(&R);
    /* Less than the backlog: about 300 KiB, two checkpoints' worth. */
    int round = 1;
    long long start = start0;
    for (int i = 0; i < 5; i++) {
        overwrite(c, round++, 60);
        start = log_start(&L);
    }
    /* The deletion follows a checkpoint child, which a loaded machine may
     * not have finished yet; an idle log over its target takes one more
     * (D79): wait for it rather than write past the backlog. */
    for (int i = 0; i < 300 && start <= start0; i++) {
        usleep(50000);
        start = log_start(&L);
    }
    long long now = info_of(&L, "master_repl_offset");
    cr_assert_lt(now - at, 1024 * 1024, "the leader wrote less than the backlog");
    cr_expect_gt(start, start0, "segments were deleted while the replica was away");
    cr_expect_leq(start, at, "the backlog kept the replica's part of the log");
    cr_expect_eq(info_of(&L, "repl_backlog_active"), 1, "kept for repl-backlog-ttl");
    cr_assert(srv_restart(&R) == 0);
    expect_caught_up();
    cr_expect_eq(info_of(&L, "sync_partial_ok"), partial + 1, "it resumed");
    cr_expect_eq(info_of(&L, "sync_full"), full, "no full copy");
    cr_expect_eq(info_of(&R, "atticdb_full_syncs"), 0);
    redisFree(c);
}

Test(repl_backlog, with_a_tiny_backlog_a_replica_away_too_long_gets_a_full_copy)
{
    redisContext *c = start_pair("--repl-backlog-size 1");
    long long full = info_of(&L, "sync_full");
    long long at = info_of(&L, "master_repl_offset");
    cr_assert_eq(srv_stop(&R), 0);
    int round = 1;
    long long start = write_until_start_past(c, at, &round);
    cr_assert_gt(start, at, "the leader's log start passed the replica's LSN");
    /* The log is bounded by the checkpoints, not by the replica: once the
     * store caught up with its checkpoints (a loaded machine lags). */
    int n = segments(&L);
    for (int i = 0; i < 400 && n > 8; i++) {
        usleep(50000);
        n = segments(&L);
    }
    cr_expect_leq(n, 8,
                  "the leader keeps a short log: log start %lld, offset %lld, files%s; its "
                  "log:\n%s",
                  log_start(&L), info_of(&L, "master_repl_offset"),
                  segment_names(&L, (char[4096]){0}, 4096),
                  srv_log_tail(&L, (char[4096]){0}, 4096));
    cr_assert(srv_restart(&R) == 0);
    for (int i = 0; i < 2400 && info_of(&R, "atticdb_full_syncs") != 1; i++)
        usleep(50000);
    cr_assert_eq(info_of(&R, "atticdb_full_syncs"), 1, "a full copy");
    expect_caught_up();
    cr_expect_eq(info_of(&L, "sync_full"), full + 1);
    cr_expect(srv_log_contains(&L, "gets a full copy", "no longer has its log"),
              "the leader says why");
    redisFree(c);
}

/* INFO's fields agree with Redis' arithmetic: first + histlen = offset + 1.
 * All read from one reply: the server's own ticks move the offset between
 * two INFOs. */
static void expect_backlog_fields(const srv_t *s)
{
    redisContext *c = srv_connect(s);
    cr_assert(c, "connect to %d", s->port);
    redisReply *r = redisCommand(c, "INFO everything");
    cr_assert(r && r->type == REDIS_REPLY_STRING, "INFO");
    long long first = srv_info_text_num(r->str, "repl_backlog_first_byte_offset");
    long long histlen = srv_info_text_num(r->str, "repl_backlog_histlen");
    long long off = srv_info_text_num(r->str, "master_repl_offset");
    long long start = srv_info_text_num(r->str, "atticdb_log_start_lsn");
    freeReplyObject(r);
    redisFree(c);
    cr_expect_eq(first, start + 1, "the first byte is the log's start");
    cr_expect_eq(first + histlen, off + 1, "first + histlen = master_repl_offset + 1");
}

Test(repl_backlog, config_set_changes_what_is_kept_and_info_says_so)
{
    cr_assert(srv_start(&L, ARGS) == 0);
    redisContext *c = srv_connect(&L);
    cr_assert(c);
    char buf[256];
    cr_expect_eq(info_of(&L, "repl_backlog_active"), 0, "no replica yet: as Redis");
    cr_expect_eq(info_of(&L, "repl_backlog_size"), 1048576, "Redis' default");
    expect_backlog_fields(&L);
    cr_expect_str_eq(srv_cmd_raw(c, buf, sizeof(buf), "CONFIG SET repl-backlog-size 0"),
                     "-ERR CONFIG SET failed (possibly related to argument 'repl-backlog-size') - "
                     "argument must be between 1 and 9223372036854775807 inclusive\r\n");
    cr_expect_str_eq(srv_cmd_raw(c, buf, sizeof(buf), "CONFIG SET repl-backlog-size 16kb"),
                     "+OK\r\n");
    cr_expect_str_eq(srv_cmd_raw(c, buf, sizeof(buf), "CONFIG GET repl-backlog-size"),
                     "*2\r\n$17\r\nrepl-backlog-size\r\n$5\r\n16384\r\n");
    cr_expect_eq(info_of(&L, "repl_backlog_size"), 16384);
    /* A replica makes it active; gone, it stays so for the ttl. */
    char extra[256];
    snprintf(extra, sizeof(extra), ARGS " --replicaof 127.0.0.1 %d", L.port);
    cr_assert(srv_start(&R, extra) == 0);
    overwrite(c, 0, 100);
    expect_caught_up();
    cr_expect_eq(info_of(&L, "repl_backlog_active"), 1);
    cr_expect_eq(info_of(&R, "repl_backlog_active"), 1, "a replica keeps one, as Redis'");
    srv_kill_all(&R);
    /* A large backlog holds the log while the leader writes... */
    cr_expect_str_eq(srv_cmd_raw(c, buf, sizeof(buf), "CONFIG SET repl-backlog-size 100mb"),
                     "+OK\r\n");
    long long start0 = log_start(&L);
    for (int round = 1; round < 8; round++)
        overwrite(c, round, 100);
    cr_expect_eq(log_start(&L), start0, "nothing deleted under a 100mb backlog");
    cr_expect_eq(info_of(&L, "repl_backlog_active"), 1, "kept after the replica left");
    expect_backlog_fields(&L);
    /* ...and a small one lets it go at once, without another write. */
    cr_expect_str_eq(srv_cmd_raw(c, buf, sizeof(buf), "CONFIG SET repl-backlog-size 64kb"),
                     "+OK\r\n");
    long long start = start0;
    for (int i = 0; i < 200 && start == start0; i++) {
        usleep(50000);
        start = log_start(&L);
    }
    cr_expect_gt(start, start0, "segments deleted once the backlog shrank");
    long long off = info_of(&L, "master_repl_offset");
    cr_expect_geq(off - start, 64 * 1024, "but the last 64kb are kept");
    expect_backlog_fields(&L);
    /* repl-backlog-ttl: released that long after the last replica left. */
    cr_expect_str_eq(srv_cmd_raw(c, buf, sizeof(buf), "CONFIG SET repl-backlog-ttl 1"), "+OK\r\n");
    for (int i = 0; i < 200 && info_of(&L, "repl_backlog_active") != 0; i++)
        usleep(50000);
    cr_expect_eq(info_of(&L, "repl_backlog_active"), 0, "released after the ttl");
    cr_expect(srv_log_contains(&L, "the backlog is released", NULL));
    redisFree(c);
}

/* The offset its first replica last acked, as leader s knows it (INFO's
 * slave0 line), -1 without one. */
static long long replica_offset(const srv_t *s)
{
    redisContext *c = srv_connect(s);
    cr_assert(c);
    redisReply *r = redisCommand(c, "INFO replication");
    long long v = -1;
    const char *p = r && r->type == REDIS_REPLY_STRING ? strstr(r->str, "\r\nslave0:") : NULL;
    if (p && (p = strstr(p, ",offset=")) != NULL) v = strtoll(p + 8, NULL, 10);
    if (r) freeReplyObject(r);
    redisFree(c);
    return v;
}

Test(repl_backlog, a_stopped_replica_past_the_replica_limit_is_dropped_and_pins_nothing)
{
    redisContext *c = start_pair("--repl-backlog-size 64kb");
    cr_expect_str_eq(srv_cmd_raw(c, (char[64]){0}, 64, "CONFIG SET client-output-buffer-limit %s",
                                 "replica 256kb 0 0"),
                     "+OK\r\n");
    kill(-R.pid, SIGSTOP); /* the whole replica: its acks stop, its socket stays */
    /* Where it stopped: its last ack as the leader saw it, which is what
     * pins the log (the leader writes on by itself, relocations among it,
     * and the replica may have acked some of that before it stopped). */
    usleep(300000);
    long long at = replica_offset(&L);
    cr_assert_gt(at, 0, "the leader knows the replica's offset");
    int round = 1;
    long long start = write_until_start_past(c, at, &round);
    cr_expect_gt(start, at, "the stopped replica held nothing past the limit");
    /* (Failed once in CI under load, start past at without the line: the
     * leader's log tail says how the replica left.) */
    cr_expect(
        srv_log_contains(&L, "past the hard limit of client-output-buffer-limit replica", NULL),
        "the leader says why it dropped it; its log:\n%s", srv_log_tail(&L, (char[3000]){0}, 3000));
    kill(-R.pid, SIGCONT);
    /* It comes back through a full copy (its log is gone on the leader). */
    for (int i = 0; i < 600 && info_of(&R, "atticdb_full_syncs") != 1; i++)
        usleep(50000);
    cr_assert_eq(info_of(&R, "atticdb_full_syncs"), 1,
                 "a full copy; the replica's log:\n%s\nthe leader's:\n%s",
                 srv_log_tail(&R, (char[3000]){0}, 3000), srv_log_tail(&L, (char[3000]){0}, 3000));
    expect_caught_up();
    redisFree(c);
}

/* The leader started with fault (a process killed at a backlog step); a
 * replica killed after the respawn resumes from its LSN. */
static void killed_at(const char *fault, const char *who)
{
    char extra[512];
    cr_assert(srv_start_faults(&L, fault, ARGS " --repl-backlog-size 1mb") == 0);
    snprintf(extra, sizeof(extra), ARGS " --replicaof 127.0.0.1 %d", L.port);
    cr_assert(srv_start(&R, extra) == 0);
    redisContext *c = srv_connect(&L);
    cr_assert(c);
    int round = 0;
    time_t deadline = time(NULL) + 60;
    while (!srv_log_contains(&L, "killed by signal 9", who)) {
        cr_assert_lt(time(NULL), deadline, "%s: never reached", fault);
        overwrite(c, round++, 64);
        /* The replica reconnecting is a handshake (replpinned). */
        if (round % 4 == 0) {
            srv_kill_all(&R);
            cr_assert(srv_restart(&R) == 0);
            /* Let it through its handshake before it is killed again (a
             * fast leader made rounds of 30 ms, too short for any). */
            for (int i = 0; i < 100 && !srv_log_contains(&L, "killed by signal 9", who) &&
                            info_of(&R, "slave_repl_offset") != info_of(&L, "master_repl_offset");
                 i++)
                usleep(50000);
        }
    }
    for (int i = 0; i < 200 && !srv_log_contains(&L, "respawned", who); i++)
        usleep(50000);
    cr_assert(srv_log_contains(&L, "respawned", who), "%s: respawned", fault);
    expect_caught_up();
    long long full = info_of(&L, "sync_full"), partial = info_of(&L, "sync_partial_ok");
    srv_kill_all(&R);
    for (int i = 0; i < 4; i++)
        overwrite(c, round++, 50);
    cr_assert(srv_restart(&R) == 0);
    expect_caught_up();
    cr_expect_eq(info_of(&L, "sync_partial_ok"), partial + 1, "%s: it resumed", fault);
    cr_expect_eq(info_of(&L, "sync_full"), full, "%s: no full copy", fault);
    redisFree(c);
}

Test(repl_backlog, a_store_killed_in_a_pass_with_its_bound_published_is_respawned)
{
    killed_at("store.backlogtrim:1:KILL", "store");
}

Test(repl_backlog, a_replication_process_killed_with_a_handshake_pinned_is_respawned)
{
    killed_at("repl.replpinned:2:KILL", "replication");
}
