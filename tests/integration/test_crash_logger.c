/*
 * test_crash_logger.c - the logger killed at its awkward moments: on its way
 * out after a failed fdatasync, and while the segment it must continue in
 * does not exist yet. A respawned logger must neither undo a failure nor
 * stop the server over a segment its predecessor had not made (ARCHITECTURE.md,
 * contracts 5, 6 and 8; docs/OPERATIONS.md, "Disk faults").
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

TestSuite(crash_logger, .fini = srv_cleanup_all, .timeout = 90);

static unsigned long long durable_lsn(redisContext *c)
{
    char v[32];
    return strtoull(srv_info_persistence(c, "atticdb_durable_lsn", v, sizeof(v)), NULL, 10);
}

static void kill_logger(const srv_t *s)
{
    pid_t pid;
    cr_assert_eq(srv_wait_children(s, "atticdb-server: logger", &pid, 1, 1), 1);
    cr_assert_eq(kill(pid, SIGKILL), 0);
}

/* The logger sets LOGGER_FAILED after its 20th fdatasync fails and is killed
 * right then, before it could exit with EXIT_IOFAIL: to the master that is a
 * plain crash, and it respawns the logger. The new logger must leave the log
 * failed: the write whose fdatasync failed is never synced again, never
 * acked, never readable. */
Test(crash_logger, failed_log_stays_failed_when_the_logger_dies_on_its_way_out)
{
    srv_t s;
    cr_assert_eq(
        srv_start_faults(&s, "logger.fdatasync:20:EIO,logger.failed:1:KILL", "--frontends 1"), 0);
    redisContext *c = srv_connect(&s);
    cr_assert_not_null(c);
    int failed_at = -1;
    for (int i = 0; i < 100 && failed_at < 0; i++) {
        redisReply *r = redisCommand(c, "SET f:%d v%d", i, i);
        cr_assert_not_null(r, "%s", c->errstr);
        if (r->type == REDIS_REPLY_ERROR) {
            cr_assert(strstr(r->str, "durable") != NULL, "%s", r->str);
            failed_at = i;
        }
        freeReplyObject(r);
    }
    cr_assert_geq(failed_at, 0, "no write failed");
    /* Wait for the master to see the logger die, and for what follows: a
     * logger that runs again (the bug) or one that stops on the failure. */
    char state[64] = "";
    for (int i = 0; i < 1000; i++) {
        if (srv_log_contains(&s, "respawned logger", NULL) &&
            (srv_log_contains(&s, "exited with status 3", NULL) ||
             !strcmp(srv_info_persistence(c, "atticdb_log_state", state, sizeof(state)),
                     "running")))
            break;
        usleep(10 * 1000);
    }
    char tail[2048];
    cr_assert(srv_log_contains(&s, "respawned logger", NULL), "%s",
              srv_log_tail(&s, tail, sizeof(tail)));
    cr_assert_str_eq(srv_info_persistence(c, "atticdb_log_state", state, sizeof(state)), "failed",
                     "%s", srv_log_tail(&s, tail, sizeof(tail)));
    redisReply *r = redisCommand(c, "SET after x");
    cr_assert_not_null(r, "%s", c->errstr);
    cr_assert_eq(r->type, REDIS_REPLY_ERROR, "a write after the failure was acked");
    freeReplyObject(r);
    r = redisCommand(c, "GET f:%d", failed_at);
    cr_assert_not_null(r, "%s", c->errstr);
    cr_assert_eq(r->type, REDIS_REPLY_NIL, "the write whose fdatasync failed became readable");
    freeReplyObject(r);
    r = redisCommand(c, "GET f:0");
    cr_assert_not_null(r, "%s", c->errstr);
    cr_assert_eq(r->type, REDIS_REPLY_STRING, "reads of durable data stopped");
    freeReplyObject(r);
    redisFree(c);
    cr_assert_eq(srv_stop(&s), 1, "the failure is not reported on stop");
    srv_cleanup(&s);
}

/* The next segment is prepared once the current one is half full. A ring
 * larger than half a segment could hold records past the end of a segment
 * whose successor a full disk prevents: those writes would wait, with no
 * error, until space came back. Such a configuration is refused. */
Test(crash_logger, segment_smaller_than_twice_the_ring_is_refused)
{
    char out[4096];
    cr_assert_eq(srv_run_tool("atticdb-server",
                              "--port 0 --dir /tmp/attic-never --ring-size 64kb "
                              "--segment-size 64kb",
                              out, sizeof(out)),
                 1);
    cr_assert(strstr(out, "segment-size") && strstr(out, "twice"), "%s", out);
}

/* Segments of 128kb and a ring of 64kb; the faults, if any, make the
 * segment preparer hang on the second segment (as a slow zero-fill would). */
#define SMALL_LOG "--frontends 1 --ring-size 64kb --segment-size 128kb"
/* Each way of syncing (log-sync), whatever the default. */
#define SMALL_LOG_FDATASYNC SMALL_LOG " --log-sync fdatasync"
/* The same with fdatasyncs in flight (log-sync uring, D24): every sync of
 * the first segment completes before the logger waits for the second. */
#define SMALL_LOG_URING SMALL_LOG " --log-sync uring"
/* And with O_DIRECT|O_DSYNC writes of whole blocks (log-sync direct). */
#define SMALL_LOG_DIRECT SMALL_LOG " --log-sync direct"
#define SEG              131072ull
#define NSETS            160
#define VALLEN           1000

/* Pipeline NSETS SETs, which go past the end of the first segment, and wait
 * until the logger is stuck there. Returns the connection, its replies
 * pending. */
static redisContext *fill_to_segment_end(srv_t *s)
{
    redisContext *w = srv_connect(s), *c = srv_connect(s);
    cr_assert(w && c);
    /* Replies past the segment's end come when the logger moves on, however
     * long that takes (the suite's timeout bounds it). */
    redisSetTimeout(w, (struct timeval){0, 0});
    static char val[VALLEN + 1];
    memset(val, 'b', VALLEN);
    for (int i = 0; i < NSETS; i++)
        redisAppendCommand(w, "SET b:%d %s", i, val);
    int done = 0;
    while (!done)
        cr_assert_eq(redisBufferWrite(w, &done), REDIS_OK, "%s", w->errstr);
    /* Everything up to the end of the first segment is synced: it must be
     * acknowledged, not held back with the records the next segment waits
     * for. */
    unsigned long long d = 0;
    for (int i = 0; i < 1000 && (d = durable_lsn(c)) < SEG; i++)
        usleep(10 * 1000);
    cr_assert_eq(d, SEG, "the log did not become durable up to the segment's end");
    redisFree(c);
    return w;
}

/* The logger is killed; every pending reply of w must then come, as OK. */
static void kill_logger_then_all_acked(srv_t *s, redisContext *w)
{
    kill_logger(s);
    char tail[2048];
    for (int i = 0; i < NSETS; i++) {
        redisReply *r;
        cr_assert_eq(redisGetReply(w, (void **)&r), REDIS_OK, "reply %d: %s; log:\n%s", i,
                     w->errstr, srv_log_tail(s, tail, sizeof(tail)));
        cr_assert_eq(r->type, REDIS_REPLY_STATUS, "SET b:%d: %s", i,
                     r->type == REDIS_REPLY_ERROR ? r->str : "");
        freeReplyObject(r);
    }
    redisFree(w);
}

/* Every SET of fill_to_segment_end reads back. */
static void values_read_back(const srv_t *s, const char *when)
{
    redisContext *c = srv_connect(s);
    cr_assert_not_null(c);
    for (int i = 0; i < NSETS; i++) {
        redisReply *r = redisCommand(c, "STRLEN b:%d", i);
        cr_assert_not_null(r, "%s", c->errstr);
        cr_assert_eq(r->integer, VALLEN, "acked b:%d lost %s", i, when);
        freeReplyObject(r);
    }
    redisFree(c);
}

static void acked_while_the_next_segment_is_not_ready(const char *args)
{
    srv_t s;
    cr_assert_eq(srv_start_faults(&s, "logger.fallocate:2:HANG", args), 0);
    redisContext *w = fill_to_segment_end(&s);
    /* The SETs of the first segment are applied, and acknowledged. */
    redisContext *c = srv_connect(&s);
    int applied = 0;
    for (; applied < NSETS; applied++) {
        redisReply *r = redisCommand(c, "STRLEN b:%d", applied);
        cr_assert_not_null(r, "%s", c->errstr);
        long long len = r->integer;
        freeReplyObject(r);
        if (len != VALLEN) break;
    }
    redisFree(c);
    cr_assert_gt(applied, NSETS / 2);
    cr_assert_lt(applied, NSETS, "records past the segment's end were applied");
    for (int i = 0; i < applied; i++) {
        redisReply *r;
        cr_assert_eq(redisGetReply(w, (void **)&r), REDIS_OK, "reply %d: %s", i, w->errstr);
        cr_assert_eq(r->type, REDIS_REPLY_STATUS, "SET b:%d", i);
        freeReplyObject(r);
    }
    redisFree(w);
    srv_kill_all(&s);
    srv_cleanup(&s);
}

Test(crash_logger, writes_before_a_segment_end_are_acked_while_the_next_is_not_ready)
{
    acked_while_the_next_segment_is_not_ready(SMALL_LOG_FDATASYNC);
}

Test(crash_logger, writes_before_a_segment_end_are_acked_with_syncs_in_flight)
{
    acked_while_the_next_segment_is_not_ready(SMALL_LOG_URING);
}

Test(crash_logger, writes_before_a_segment_end_are_acked_with_direct_writes)
{
    acked_while_the_next_segment_is_not_ready(SMALL_LOG_DIRECT);
}

/* The logger dies while the segment at durable_lsn does not exist (its
 * preparer never finished it). The next logger must make that segment and go
 * on, not stop the server over a missing file. */
static void killed_before_the_next_segment_exists(const char *args)
{
    srv_t s;
    cr_assert_eq(srv_start_faults(&s, "logger.fallocate:2:HANG", args), 0);
    kill_logger_then_all_acked(&s, fill_to_segment_end(&s));
    values_read_back(&s, "after the logger's death");
    cr_assert_eq(srv_stop(&s), 0);
    cr_assert_eq(srv_restart(&s), 0);
    values_read_back(&s, "after a restart");
    cr_assert_eq(srv_stop(&s), 0);
    srv_cleanup(&s);
}

Test(crash_logger, logger_killed_at_a_segment_end_before_the_next_exists)
{
    killed_before_the_next_segment_exists(SMALL_LOG_FDATASYNC);
}

Test(crash_logger, logger_killed_at_a_segment_end_with_syncs_in_flight)
{
    killed_before_the_next_segment_exists(SMALL_LOG_URING);
}

Test(crash_logger, logger_killed_at_a_segment_end_with_direct_writes)
{
    killed_before_the_next_segment_exists(SMALL_LOG_DIRECT);
}

/* log-sync direct rewrites the block where the log ends with the bytes it
 * already holds: a logger killed between batches leaves that block to its
 * successor, which must read it back from the disk (logger/direct.c), not
 * write zeros over acknowledged records. Records of 100-odd bytes, so the
 * log ends inside a block every time. */
Test(crash_logger, logger_killed_mid_block_with_direct_writes)
{
    srv_t s;
    cr_assert_eq(srv_start(&s, SMALL_LOG_DIRECT), 0);
    redisContext *c = srv_connect(&s);
    cr_assert_not_null(c);
    enum { ROUNDS = 5, PER_ROUND = 7 };
    for (int round = 0; round < ROUNDS; round++) {
        for (int i = 0; i < PER_ROUND; i++) {
            redisReply *r = NULL;
            /* The first write after a kill waits for the new logger. */
            for (int tries = 0; tries < 500 && !r; tries++) {
                r = redisCommand(c, "SET m:%d:%d value-%d-%d-padding-padding", round, i, round, i);
                if (!r) {
                    redisFree(c);
                    usleep(10000);
                    c = srv_connect(&s);
                    cr_assert_not_null(c);
                }
            }
            cr_assert_not_null(r);
            cr_assert_eq(r->type, REDIS_REPLY_STATUS, "SET m:%d:%d: %s", round, i,
                         r->type == REDIS_REPLY_ERROR ? r->str : "");
            freeReplyObject(r);
        }
        kill_logger(&s);
    }
    redisFree(c);
    cr_assert_eq(srv_stop(&s), 0);
    cr_assert_eq(srv_restart(&s), 0);
    c = srv_connect(&s);
    for (int round = 0; round < ROUNDS; round++)
        for (int i = 0; i < PER_ROUND; i++) {
            char want[64];
            snprintf(want, sizeof(want), "value-%d-%d-padding-padding", round, i);
            redisReply *r = redisCommand(c, "GET m:%d:%d", round, i);
            cr_assert(r && r->type == REDIS_REPLY_STRING && !strcmp(r->str, want),
                      "acked m:%d:%d lost after the logger's deaths", round, i);
            freeReplyObject(r);
        }
    redisFree(c);
    cr_assert_eq(srv_stop(&s), 0);
    srv_cleanup(&s);
}

/* The same, and the disk is full when the next logger makes the segment: it
 * says so (writes refused meanwhile), tries again a second later, and goes
 * on. On a data directory made before, so that the first fallocate of the
 * first logger is the second segment's (it hangs), and the first of its
 * successor too (ENOSPC, once). */
Test(crash_logger, logger_killed_at_a_segment_end_on_a_full_disk)
{
    srv_t s;
    cr_assert_eq(srv_start(&s, SMALL_LOG), 0);
    cr_assert_eq(srv_stop(&s), 0);
    setenv("ATTICDB_TEST_FAULTS", "logger.fallocate:1:HANG,*logger.fallocate:1:ENOSPC", 1);
    int started = srv_restart(&s);
    unsetenv("ATTICDB_TEST_FAULTS");
    cr_assert_eq(started, 0);
    kill_logger_then_all_acked(&s, fill_to_segment_end(&s));
    cr_assert(srv_log_contains(&s, "No space for the next log segment", NULL),
              "the respawned logger did not meet the full disk");
    values_read_back(&s, "after the logger's death on a full disk");
    cr_assert_eq(srv_stop(&s), 0);
    srv_cleanup(&s);
}

/*
 * Issue 12: when a fresh server answers PING, its first segment is whole,
 * and its zeros are on the disk: no extent is delayed (still in the page
 * cache) or unwritten (an append's sync would then journal its
 * conversion), so the first commits pay for no preparation (D5).
 */
Test(crash_logger, first_segment_is_written_before_the_server_answers)
{
    srv_t s;
    cr_assert_eq(srv_start(&s, "--frontends 1 --segment-size 1mb --ring-size 256kb"), 0);
    char path[600];
    snprintf(path, sizeof(path), "%s/log-%016llx.seg", s.dir, 0ull);
    int fd = open(path, O_RDONLY);
    cr_assert_geq(fd, 0, "no first segment when the server answers");
    struct stat st;
    cr_assert_eq(fstat(fd, &st), 0);
    cr_assert_eq(st.st_size, 1 << 20);
    struct {
        struct fiemap map;
        struct fiemap_extent extents[64];
    } fm;
    memset(&fm, 0, sizeof(fm));
    fm.map.fm_length = ~0ull;
    fm.map.fm_extent_count = 64;
    if (ioctl(fd, FS_IOC_FIEMAP, &fm) == 0) { /* not every file system has it */
        unsigned long long covered = 0;
        for (unsigned i = 0; i < fm.map.fm_mapped_extents; i++) {
            const struct fiemap_extent *e = &fm.map.fm_extents[i];
            cr_assert_eq(e->fe_flags & (FIEMAP_EXTENT_UNWRITTEN | FIEMAP_EXTENT_DELALLOC), 0,
                         "extent %u of the first segment is not written (flags %#x)", i,
                         e->fe_flags);
            covered += e->fe_length;
        }
        cr_assert_geq(covered, 1ull << 20, "the first segment has holes");
    }
    close(fd);
    cr_assert_eq(srv_stop(&s), 0);
    srv_cleanup(&s);
}

/* Thread tid of process pid: its nice (field 19 of its stat), or 99. */
static int thread_nice(pid_t pid, pid_t tid)
{
    char path[96], buf[1024];
    snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)pid, (int)tid);
    FILE *f = fopen(path, "r");
    if (!f) return 99;
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = 0;
    const char *p = strrchr(buf, ')'); /* the name may hold spaces */
    int field = 2, nice = 99;
    for (; p && *p; p++)
        if (*p == ' ' && ++field == 19) {
            nice = atoi(p + 1);
            break;
        }
    return nice;
}

/* Threads of pid other than its main one at nice 0 (the segment preparer). */
static int others_at_zero(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
    DIR *d = opendir(path);
    cr_assert(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        pid_t tid = (pid_t)atoi(e->d_name);
        if (tid > 0 && tid != pid && thread_nice(pid, tid) == 0) n++;
    }
    closedir(d);
    return n;
}

/* Whether this process may lower a nice value (CAP_SYS_NICE or RLIMIT_NICE):
 * tried in a child, which exits with the answer. */
static int may_lower_nice(void)
{
    pid_t p = fork();
    if (p == 0) _exit(setpriority(PRIO_PROCESS, 0, -1) == 0 ? 0 : 1);
    int st = 0;
    waitpid(p, &st, 0);
    return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

/* logger-nice (D80): the logger's own thread runs at it, and so does a
 * logger respawned after SIGKILL; its segment preparer stays at 0. Where
 * the nice cannot be lowered the server runs anyway and says so. */
Test(crash_logger, the_logger_runs_at_logger_nice_and_so_does_its_successor)
{
    srv_t s;
    cr_assert_eq(srv_start(&s, "--frontends 1 --logger-nice -7"), 0);
    int want = may_lower_nice() ? -7 : 0;
    redisContext *c = srv_connect(&s);
    cr_assert(c);
    char buf[64];
    cr_assert_str_eq(srv_cmd_raw(c, buf, sizeof(buf), "SET k v1"), "+OK\r\n");
    pid_t first;
    cr_assert_eq(srv_wait_children(&s, "atticdb-server: logger", &first, 1, 1), 1);
    cr_expect_eq(thread_nice(first, first), want);
    cr_expect_geq(others_at_zero(first), 1, "the segment preparer keeps the default");
    if (!want) cr_expect(srv_log_contains(&s, "logger-nice -7 refused", NULL));
    cr_assert_eq(kill(first, SIGKILL), 0);
    pid_t next = first;
    for (int i = 0; i < 200 && (next == first || thread_nice(next, next) == 99); i++) {
        usleep(20000);
        if (srv_find_children(&s, "atticdb-server: logger", &next, 1) != 1) next = first;
    }
    cr_assert_neq(next, first, "a new logger");
    cr_assert_str_eq(srv_cmd_raw(c, buf, sizeof(buf), "SET k v2"), "+OK\r\n");
    cr_expect_eq(thread_nice(next, next), want, "the successor runs at logger-nice too");
    cr_assert_str_eq(srv_cmd_raw(c, buf, sizeof(buf), "GET k"), "$2\r\nv2\r\n");
    redisFree(c);
    cr_assert_eq(srv_stop(&s), 0);
    srv_cleanup(&s);
}
