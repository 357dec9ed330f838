/*
 * test_faults.c - disk faults injected into the real server through the I/O
 * seam (ATTICDB_TEST_FAULTS, common/io_fault.h): a failed fdatasync is never
 * retried and believed, and a full disk refuses writes, keeps reads, and
 * recovers when space comes back (ARCHITECTURE.md, contracts 6 and 8).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

TestSuite(faults, .fini = srv_cleanup_all, .timeout = 60);

static void failed_fdatasync(const char *args)
{
    setenv("ATTICDB_TEST_FAULTS", "logger.fdatasync:20:EIO", 1);
    srv_t s;
    int started = srv_start(&s, args);
    unsetenv("ATTICDB_TEST_FAULTS");
    cr_assert_eq(started, 0);
    redisContext *c = srv_connect(&s);
    int acked = 0;
    redisReply *r = NULL;
    for (int i = 0; i < 100; i++) {
        r = redisCommand(c, "SET f:%d v%d", i, i);
        cr_assert_not_null(r);
        if (r->type != REDIS_REPLY_STATUS) break;
        freeReplyObject(r);
        r = NULL;
        acked++;
    }
    cr_assert_not_null(r, "no write failed");
    cr_assert_eq(r->type, REDIS_REPLY_ERROR, "the write whose fdatasync failed is not OK");
    cr_assert(strstr(r->str, "durable") != NULL, "%s", r->str);
    freeReplyObject(r);
    cr_assert_gt(acked, 5);
    /* No later write is acked. */
    for (int i = 0; i < 5; i++) {
        r = redisCommand(c, "SET after:%d x", i);
        cr_assert_eq(r->type, REDIS_REPLY_ERROR, "a write after the failure was acked");
        freeReplyObject(r);
    }
    /* Reads of durable data go on, on this very connection too. */
    r = redisCommand(c, "GET f:0");
    cr_assert_eq(r->type, REDIS_REPLY_STRING);
    cr_assert_str_eq(r->str, "v0");
    freeReplyObject(r);
    char state[64];
    cr_assert_str_eq(srv_info_persistence(c, "atticdb_log_state", state, sizeof(state)), "failed");
    redisFree(c);
    /* Stopping reports the failure; a restart recovers from the disk. */
    cr_assert_eq(srv_stop(&s), 1);
    cr_assert_eq(srv_restart(&s), 0);
    c = srv_connect(&s);
    for (int i = 0; i < acked; i++) {
        char want[16];
        snprintf(want, sizeof(want), "v%d", i);
        r = redisCommand(c, "GET f:%d", i);
        cr_assert_eq(r->type, REDIS_REPLY_STRING, "acked write f:%d lost", i);
        cr_assert_str_eq(r->str, want);
        freeReplyObject(r);
    }
    r = redisCommand(c, "SET after-restart ok");
    cr_assert_eq(r->type, REDIS_REPLY_STATUS);
    freeReplyObject(r);
    redisFree(c);
    cr_assert_eq(srv_stop(&s), 0);
    srv_cleanup(&s);
}

Test(faults, failed_fdatasync_is_never_believed)
{
    failed_fdatasync("--frontends 2 --log-sync fdatasync");
}

/* The same with log-sync direct: the 20th O_DSYNC write fails. */
Test(faults, failed_direct_write_is_never_believed)
{
    failed_fdatasync("--frontends 2 --log-sync direct");
}

/* The same with log-sync uring: the failure shows when the sync completes. */
Test(faults, failed_fdatasync_in_flight_is_never_believed)
{
    failed_fdatasync("--frontends 2 --log-sync uring");
}

/* The LSN the logger's fail-stop message names ("... failed at LSN n:"). */
static unsigned long long failed_at(const srv_t *s)
{
    FILE *f = fopen(s->log, "r");
    cr_assert_not_null(f);
    char line[1024];
    unsigned long long at = ~0ull;
    while (fgets(line, sizeof(line), f)) {
        const char *p = strstr(line, "fdatasync failed at LSN ");
        if (p) at = strtoull(p + strlen("fdatasync failed at LSN "), NULL, 10);
    }
    fclose(f);
    cr_assert_neq(at, ~0ull, "no fail-stop in the log");
    return at;
}

enum { FAIL_WRITERS = 6, FAIL_PIPELINE = 4, FAIL_ROUNDS = 60 };

/* With log-sync uring and writers in parallel, syncs overlap; the 30th
 * fails when it completes, maybe after later ones succeeded. durable_lsn
 * must stop below the failed batch, no reply after an error is OK, and
 * every acked write survives a restart. */
Test(faults, failed_fdatasync_among_syncs_in_flight_stops_the_prefix)
{
    srv_t s;
    cr_assert_eq(srv_start_faults(&s, "logger.fdatasync:30:EIO", "--frontends 2 --log-sync uring"),
                 0);
    redisContext *cs[FAIL_WRITERS];
    int acked[FAIL_WRITERS] = {0}, failed[FAIL_WRITERS] = {0};
    for (int w = 0; w < FAIL_WRITERS; w++)
        cr_assert_not_null(cs[w] = srv_connect(&s));
    for (int round = 0; round < FAIL_ROUNDS; round++) {
        for (int w = 0; w < FAIL_WRITERS; w++)
            for (int k = 0; k < FAIL_PIPELINE; k++)
                redisAppendCommand(cs[w], "SET p:%d:%d v%d", w, round * FAIL_PIPELINE + k, round);
        for (int w = 0; w < FAIL_WRITERS; w++)
            for (int k = 0; k < FAIL_PIPELINE; k++) {
                redisReply *r;
                cr_assert_eq(redisGetReply(cs[w], (void **)&r), REDIS_OK, "%s", cs[w]->errstr);
                if (r->type == REDIS_REPLY_STATUS) {
                    cr_assert(!failed[w], "writer %d: a write after an error was acked", w);
                    cr_assert_eq(acked[w], round * FAIL_PIPELINE + k, "writer %d acks out of order",
                                 w);
                    acked[w]++;
                } else {
                    failed[w] = 1;
                }
                freeReplyObject(r);
            }
    }
    redisContext *c = srv_connect(&s);
    char buf[64];
    cr_assert_str_eq(srv_info_persistence(c, "atticdb_log_state", buf, sizeof(buf)), "failed");
    unsigned long long durable =
        strtoull(srv_info_persistence(c, "atticdb_durable_lsn", buf, sizeof(buf)), NULL, 10);
    cr_assert_leq(durable, failed_at(&s), "durable_lsn passed the failed sync's batch");
    redisFree(c);
    for (int w = 0; w < FAIL_WRITERS; w++) {
        cr_assert(failed[w], "writer %d never saw the failure", w);
        redisFree(cs[w]);
    }
    cr_assert_eq(srv_stop(&s), 1);
    cr_assert_eq(srv_restart(&s), 0);
    c = srv_connect(&s);
    for (int w = 0; w < FAIL_WRITERS; w++)
        for (int i = 0; i < acked[w]; i++) {
            redisReply *r = redisCommand(c, "EXISTS p:%d:%d", w, i);
            cr_assert_eq(r->integer, 1, "acked write p:%d:%d lost", w, i);
            freeReplyObject(r);
        }
    redisFree(c);
    cr_assert_eq(srv_stop(&s), 0);
    srv_cleanup(&s);
}

Test(faults, full_disk_refuses_writes_keeps_reads_and_recovers)
{
    /* fallocate #1 makes the first segment at start; #2 is the next one,
     * prepared once the first is half full. It fails once: then space is
     * "back", and the logger's retry a second later succeeds. */
    setenv("ATTICDB_TEST_FAULTS", "logger.fallocate:2:ENOSPC", 1);
    srv_t s;
    int started = srv_start(&s, "--frontends 1 --segment-size 1mb --ring-size 256kb");
    unsetenv("ATTICDB_TEST_FAULTS");
    cr_assert_eq(started, 0);
    redisContext *c = srv_connect(&s);
    char val[2048];
    memset(val, 'd', sizeof(val) - 1);
    val[sizeof(val) - 1] = '\0';
    int acked = 0, refused = 0;
    redisReply *r;
    for (int i = 0; i < 2000 && !refused; i++) {
        r = redisCommand(c, "SET d:%d %s", i, val);
        cr_assert_not_null(r, "%s", c->errstr);
        if (r->type == REDIS_REPLY_STATUS)
            acked++;
        else {
            cr_assert(strstr(r->str, "disk full") != NULL, "%s", r->str);
            refused = 1;
        }
        freeReplyObject(r);
    }
    cr_assert(refused, "no write was refused although the next segment could not be made");
    char flag[16];
    cr_assert_str_eq(srv_info_persistence(c, "atticdb_log_no_space", flag, sizeof(flag)), "1");
    /* Reads work while writes are refused. */
    r = redisCommand(c, "STRLEN d:0");
    cr_assert_eq(r->integer, (long long)strlen(val));
    freeReplyObject(r);
    /* Space comes back (the fault fired once): writes resume by themselves. */
    int resumed = 0;
    for (int i = 0; i < 50 && !resumed; i++) {
        usleep(100 * 1000);
        r = redisCommand(c, "SET resumed yes");
        resumed = r->type == REDIS_REPLY_STATUS;
        freeReplyObject(r);
    }
    cr_assert(resumed, "writes did not resume once space was back");
    /* And carry on into the new segment. */
    for (int i = 0; i < 400; i++) {
        r = redisCommand(c, "SET e:%d %s", i, val);
        cr_assert_eq(r->type, REDIS_REPLY_STATUS);
        freeReplyObject(r);
    }
    for (int i = 0; i < acked; i++) {
        r = redisCommand(c, "STRLEN d:%d", i);
        cr_assert_eq(r->integer, (long long)strlen(val), "acked d:%d", i);
        freeReplyObject(r);
    }
    redisFree(c);
    cr_assert_eq(srv_stop(&s), 0);
    srv_cleanup(&s);
}

/* A frontend dies holding a ring claim (the fault point kills it after its
 * 50th claim, before it commits): the logger must pad the abandoned claim,
 * so the ring is not blocked and no acked write is lost (contract 5). */
Test(faults, frontend_killed_holding_a_claim_does_not_block_the_ring)
{
    setenv("ATTICDB_TEST_FAULTS", "frontend.claim:50:KILL", 1);
    srv_t s;
    /* One frontend: with two, one might get no claims before the check
     * below and die at its 50th in the middle of it. */
    int started = srv_start(&s, "--frontends 1");
    unsetenv("ATTICDB_TEST_FAULTS");
    cr_assert_eq(started, 0);
    /* The frontend dies at its 50th write, holding the claim. */
    enum { N = 8 };
    redisContext *cs[N];
    int acked[N] = {0};
    for (int i = 0; i < N; i++)
        cr_assert_not_null(cs[i] = srv_connect(&s));
    int alive = N;
    for (int round = 0; round < 100 && alive; round++) {
        for (int i = 0; i < N; i++) {
            if (!cs[i]) continue;
            redisReply *r = redisCommand(cs[i], "SET c:%d:%d v", i, round);
            if (!r) {
                redisFree(cs[i]);
                cs[i] = NULL;
                alive--;
                continue;
            }
            cr_assert_eq(r->type, REDIS_REPLY_STATUS);
            freeReplyObject(r);
            acked[i] = round + 1;
        }
    }
    for (int i = 0; i < N; i++)
        if (cs[i]) redisFree(cs[i]);
    /* The ring goes on: new clients (on the respawned frontends) write. */
    redisContext *c = NULL;
    for (int i = 0; i < 200 && !c; i++) {
        c = srv_connect(&s);
        if (!c) usleep(10000);
    }
    cr_assert_not_null(c);
    for (int i = 0; i < 200; i++) {
        redisReply *r = redisCommand(c, "SET after:%d x", i);
        cr_assert_not_null(r, "%s", c->errstr);
        cr_assert_eq(r->type, REDIS_REPLY_STATUS, "write %d after the deaths", i);
        freeReplyObject(r);
    }
    redisFree(c);
    cr_assert(srv_log_contains(&s, "abandoned ring claim", NULL),
              "the logger did not report padding an abandoned claim");
    cr_assert_eq(srv_stop(&s), 0);
    cr_assert_eq(srv_restart(&s), 0);
    c = srv_connect(&s);
    for (int i = 0; i < N; i++)
        for (int k = 0; k < acked[i]; k++) {
            redisReply *r = redisCommand(c, "EXISTS c:%d:%d", i, k);
            cr_assert_eq(r->integer, 1, "acked write c:%d:%d lost", i, k);
            freeReplyObject(r);
        }
    redisFree(c);
    srv_stop(&s);
    srv_cleanup(&s);
}

/* The calls recovery makes before the ring opens (logger/recover.c,
 * common/seg.c) failing: the logger stops the start with the call and the
 * error named (EXIT_FATAL: not respawned), and nothing on disk changes, so
 * a start without the fault finds every acked write. */
Test(faults, recovery_failing_to_stat_or_list_segments_stops_the_start_cleanly)
{
    static const struct {
        const char *spec, *msg;
    } cases[] = {
        {"logger.stat:1:EIO", "can't stat"},
        {"logger.opendir:1:EIO", "can't list"},
        {"logger.readdir:2:EIO", "can't list"}, /* part way: not a shorter listing */
    };
    srv_t s;
    cr_assert_eq(srv_start(&s, "--frontends 1"), 0);
    redisContext *c = srv_connect(&s);
    for (int i = 0; i < 20; i++)
        freeReplyObject(redisCommand(c, "SET r:%d v%d", i, i));
    redisFree(c);
    cr_assert_eq(srv_stop(&s), 0);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        setenv("ATTICDB_TEST_FAULTS", cases[i].spec, 1);
        int rc = srv_restart(&s);
        unsetenv("ATTICDB_TEST_FAULTS");
        char tail[4096];
        cr_assert_neq(rc, 0, "%s: the server started", cases[i].spec);
        cr_assert(srv_log_contains(&s, "FATAL: log recovery failed", cases[i].msg), "%s: log:\n%s",
                  cases[i].spec, srv_log_tail(&s, tail, sizeof(tail)));
        cr_assert(srv_log_contains(&s, cases[i].msg, "Input/output error"), "%s", cases[i].spec);
    }
    cr_assert_eq(srv_restart(&s), 0);
    c = srv_connect(&s);
    redisReply *r = redisCommand(c, "GET r:19");
    cr_assert_eq(r->type, REDIS_REPLY_STRING);
    cr_assert_str_eq(r->str, "v19");
    freeReplyObject(r);
    redisFree(c);
    cr_assert_eq(srv_stop(&s), 0);
    srv_cleanup(&s);
}

/* sync_file_range is a hint while a segment is zero-filled ahead of the
 * writer (logger/segfile.c): its failure is ignored there by design, since
 * the fdatasync after it is what counts. The writes go on into the new
 * segment and survive a restart. */
Test(faults, failed_sync_file_range_hint_is_harmless)
{
    srv_t s;
    cr_assert_eq(srv_start_faults(&s, "logger.sync_file_range:1:EIO",
                                  "--frontends 1 --segment-size 1mb --ring-size 256kb"),
                 0);
    redisContext *c = srv_connect(&s);
    char val[2048];
    memset(val, 'h', sizeof(val) - 1);
    val[sizeof(val) - 1] = '\0';
    for (int i = 0; i < 800; i++) { /* about 1.6 MB: into the second segment */
        redisReply *r = redisCommand(c, "SET h:%d %s", i, val);
        cr_assert_not_null(r, "%s", c->errstr);
        cr_assert_eq(r->type, REDIS_REPLY_STATUS, "SET h:%d: %s", i,
                     r->type == REDIS_REPLY_ERROR ? r->str : "?");
        freeReplyObject(r);
    }
    redisFree(c);
    cr_assert(!srv_log_contains(&s, "Can't create log segment", NULL));
    cr_assert_eq(srv_stop(&s), 0);
    cr_assert_eq(srv_restart(&s), 0);
    c = srv_connect(&s);
    redisReply *r = redisCommand(c, "STRLEN h:799");
    cr_assert_eq(r->integer, (long long)strlen(val));
    freeReplyObject(r);
    redisFree(c);
    cr_assert_eq(srv_stop(&s), 0);
    srv_cleanup(&s);
}
