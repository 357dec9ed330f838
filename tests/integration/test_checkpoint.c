/*
 * test_checkpoint.c - the real server's checkpoints (D23): a restart (clean,
 * or after SIGKILL of the whole process group) starts from the newest
 * checkpoint and gives the same DEBUG DIGEST; damaged checkpoints are
 * skipped for older ones or a full replay; a checkpoint child killed at each
 * step, or failing with ENOSPC/EIO, or cut by a simulated power cut, never
 * stops the server and never costs an acknowledged write. atticdb-check
 * reports each checkpoint.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <signal.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

TestSuite(checkpoint, .fini = srv_cleanup_all, .timeout = 120);

#define ARGS "--frontends 2 --segment-size 1mb --ring-size 256kb --checkpoint-bytes 64kb"

static int count_log(const srv_t *s, const char *needle)
{
    FILE *f = fopen(s->log, "r");
    if (!f) return 0;
    char line[1024];
    int n = 0;
    while (fgets(line, sizeof(line), f))
        if (strstr(line, needle)) n++;
    fclose(f);
    return n;
}

/* Checkpoint files (.ckpt, or .tmp with tmp set) in the data directory. */
static int count_files(const srv_t *s, int tmp)
{
    DIR *d = opendir(s->dir);
    cr_assert_not_null(d);
    int n = 0;
    struct dirent *e;
    const char *ext = tmp ? ".tmp" : ".ckpt";
    while ((e = readdir(d)) != NULL) {
        size_t l = strlen(e->d_name), el = strlen(ext);
        if (!strncmp(e->d_name, "checkpoint-", 11) && l > el && !strcmp(e->d_name + l - el, ext))
            n++;
    }
    closedir(d);
    return n;
}

/* The store (a checkpoint child has the same title: the master's child). */
static pid_t store_pid(const srv_t *s)
{
    pid_t pids[8];
    int n = srv_find_children(s, "atticdb-server: store", pids, 8);
    for (int i = 0; i < n; i++) {
        char path[64], buf[512];
        snprintf(path, sizeof(path), "/proc/%d/stat", (int)pids[i]);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        size_t k = fread(buf, 1, sizeof(buf) - 1, f);
        fclose(f);
        buf[k] = 0;
        const char *rp = strrchr(buf, ')');
        int ppid = 0;
        if (rp && sscanf(rp + 2, "%*c %d", &ppid) == 1 && ppid == s->pid) return pids[i];
    }
    cr_assert_fail("no store process");
    return 0;
}

static void expect_ok(redisReply *r, const char *what)
{
    cr_assert_not_null(r, "%s: no reply", what);
    cr_assert_neq(r->type, REDIS_REPLY_ERROR, "%s: %s", what, r->str);
    freeReplyObject(r);
}

/*
 * Round `round` of a mixed write load (in the three first databases; every
 * value shape the store keeps: inline, one extent, appended pieces, zeros,
 * bits in RAM, INCRBYFLOAT results, TTLs far ahead, a WATCHed transaction),
 * pipelined and every reply checked. Returns 0, or -1 when the server went
 * away. *acked: the SETs k:<round>:0 .. *acked - 1 got their reply.
 */
static int load_round(redisContext *c, int round, int *acked)
{
    enum { N = 300, MAXSENT = 2 * N + 16 };
    int kind[MAXSENT]; /* i for the reply to SET k:<round>:<i>, else -1 */
    char big[400];
    memset(big, 'a' + round % 26, sizeof(big) - 1);
    big[sizeof(big) - 1] = 0;
    int sent = 0;
    for (int i = 0; i < N; i++) {
        redisAppendCommand(c, "SET k:%d:%d %s-%d", round, i, i % 2 ? big : "v", i);
        kind[sent++] = i;
        switch (i % 10) {
        case 1:
            redisAppendCommand(c, "APPEND app:%d more-bytes-than-the-inline-prefix-%d", i % 17, i);
            kind[sent++] = -1;
            break;
        case 3:
            redisAppendCommand(c, "SETBIT bits:%d %d 1", i % 5, (round * 131 + i * 7) % 40000);
            kind[sent++] = -1;
            break;
        case 5:
            redisAppendCommand(c, "SETRANGE zr:%d %d tail", i % 3, (i * 97) % 5000);
            kind[sent++] = -1;
            break;
        case 7:
            redisAppendCommand(c, "INCRBYFLOAT fl 1.25");
            kind[sent++] = -1;
            break;
        case 9:
            redisAppendCommand(c, "SET ttl:%d:%d x PX 100000000", round, i);
            kind[sent++] = -1;
            break;
        }
    }
    redisAppendCommand(c, "SELECT %d", 1 + round % 2);
    redisAppendCommand(c, "SET other:%d %s", round, big);
    redisAppendCommand(c, "SELECT 0");
    redisAppendCommand(c, "WATCH k:%d:0", round);
    redisAppendCommand(c, "MULTI");
    redisAppendCommand(c, "SET tx:%d in-a-transaction", round);
    redisAppendCommand(c, "EXEC");
    for (int j = 0; j < 7; j++)
        kind[sent++] = -1;
    int got_sets = 0;
    for (int j = 0; j < sent; j++) {
        redisReply *r;
        if (redisGetReply(c, (void **)&r) != REDIS_OK) {
            if (acked) *acked = got_sets;
            return -1;
        }
        cr_assert_neq(r->type, REDIS_REPLY_ERROR, "round %d reply %d: %s", round, j, r->str);
        if (kind[j] >= 0) got_sets = kind[j] + 1;
        freeReplyObject(r);
    }
    if (acked) *acked = got_sets;
    return 0;
}

static void digest(redisContext *c, char out[41])
{
    redisReply *r = redisCommand(c, "DEBUG DIGEST");
    cr_assert_not_null(r);
    cr_assert_eq(r->type, REDIS_REPLY_STATUS, "DEBUG DIGEST: %s", r->str);
    cr_assert_eq(strlen(r->str), 40);
    strcpy(out, r->str);
    freeReplyObject(r);
}

static void expect_digest(const srv_t *s, const char *want, const char *what)
{
    redisContext *c = srv_connect(s);
    cr_assert_not_null(c);
    char d[41];
    digest(c, d);
    char tail[2048];
    cr_assert_str_eq(d, want, "%s: the digest changed\n%s", what,
                     srv_log_tail(s, tail, sizeof(tail)));
    redisFree(c);
}

/* Write rounds until `until` holds (or 30 s), returning the rounds done. */
static int load_until(const srv_t *s, redisContext *c, int round, int (*until)(const srv_t *))
{
    time_t deadline = time(NULL) + 30;
    while (!until(s)) {
        cr_assert_lt(time(NULL), deadline, "the awaited checkpoint did not happen");
        cr_assert_eq(load_round(c, round++, NULL), 0);
    }
    return round;
}

static int written_target; /* for more_written */

static int more_written(const srv_t *s)
{
    return count_log(s, "store: checkpoint at LSN") >= written_target;
}

/* Write until n more checkpoints were written (the log outlives restarts). */
static int load_until_written(const srv_t *s, redisContext *c, int round, int n)
{
    written_target = count_log(s, "store: checkpoint at LSN") + n;
    return load_until(s, c, round, more_written);
}

Test(checkpoint, restart_from_checkpoints_keeps_the_digest)
{
    srv_t s;
    cr_assert_eq(srv_start(&s, ARGS), 0);
    redisContext *c = srv_connect(&s);
    char d0[41];
    digest(c, d0);
    cr_assert_str_eq(d0, "0000000000000000000000000000000000000000");
    int round = load_until_written(&s, c, 0, 3);
    cr_assert_eq(load_round(c, round++, NULL), 0);
    char d1[41];
    digest(c, d1);
    redisFree(c);

    /* A clean stop writes one at the final LSN: the restart replays nothing. */
    cr_assert_eq(srv_stop(&s), 0);
    cr_assert_eq(count_files(&s, 0), 2, "only the newest two are kept");
    int nothing = count_log(&s, "store: replayed 0 records");
    cr_assert_eq(srv_restart(&s), 0);
    expect_digest(&s, d1, "clean restart"); /* answered once the store is ready */
    cr_assert(srv_log_contains(&s, "store: loaded checkpoint", NULL));
    cr_assert_eq(count_log(&s, "store: replayed 0 records"), nothing + 1);

    /* SIGKILL of everything: the newest checkpoint, then the tail. */
    c = srv_connect(&s);
    for (int i = 0; i < 3; i++)
        cr_assert_eq(load_round(c, round++, NULL), 0);
    char d2[41];
    digest(c, d2);
    redisFree(c);
    srv_kill_all(&s);
    int loads = count_log(&s, "store: loaded checkpoint");
    cr_assert_eq(srv_restart(&s), 0);
    expect_digest(&s, d2, "restart after SIGKILL of the group");
    cr_assert_eq(count_log(&s, "store: loaded checkpoint"), loads + 1);

    /* A store killed alone is respawned from its checkpoint too. */
    kill(store_pid(&s), SIGKILL);
    time_t deadline = time(NULL) + 20;
    while (count_log(&s, "store: loaded checkpoint") < loads + 2) {
        cr_assert_lt(time(NULL), deadline, "the respawned store did not load a checkpoint");
        usleep(10000);
    }
    expect_digest(&s, d2, "respawned store");

    cr_assert_eq(srv_stop(&s), 0);
    char out[8192];
    cr_assert_eq(srv_run_tool("atticdb-check", s.dir, out, sizeof(out)), 0, "%s", out);
    cr_assert(strstr(out, "checkpoints: 2") && strstr(out, ": valid, "), "%s", out);
    srv_cleanup(&s);
}

/* Flip one byte at 1/part of checkpoint file number `which` (0 = the
 * oldest; -1 = every one) of the directory. */
static void damage_checkpoint(const srv_t *s, int which, int part)
{
    struct dirent **names;
    int n = scandir(s->dir, &names, NULL, alphasort), seen = 0;
    cr_assert_geq(n, 0);
    for (int i = 0; i < n; i++) {
        const char *f = names[i]->d_name;
        size_t l = strlen(f);
        if (strncmp(f, "checkpoint-", 11) || l < 5 || strcmp(f + l - 5, ".ckpt")) continue;
        if (seen++ != which && which >= 0) continue;
        char path[600];
        snprintf(path, sizeof(path), "%s/%s", s->dir, f);
        int fd = open(path, O_RDWR);
        struct stat st;
        cr_assert_eq(fstat(fd, &st), 0);
        unsigned char b;
        cr_assert_eq(pread(fd, &b, 1, st.st_size / part), 1);
        b ^= 0x10;
        cr_assert_eq(pwrite(fd, &b, 1, st.st_size / part), 1);
        close(fd);
    }
    for (int i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

Test(checkpoint, damaged_checkpoints_fall_back_to_older_then_to_the_log)
{
    srv_t s;
    cr_assert_eq(srv_start(&s, ARGS), 0);
    redisContext *c = srv_connect(&s);
    int round = load_until_written(&s, c, 0, 3);
    cr_assert_eq(load_round(c, round++, NULL), 0);
    char d[41];
    digest(c, d);
    redisFree(c);
    srv_kill_all(&s);
    /* Two, or three when the kill came between a child's rename and its
     * pruning. */
    int files = count_files(&s, 0);
    cr_assert_geq(files, 2);

    damage_checkpoint(&s, files - 1, 2); /* the newest */
    char out[8192];
    cr_assert_eq(srv_run_tool("atticdb-check", s.dir, out, sizeof(out)), 1, "%s", out);
    cr_assert(strstr(out, "INVALID (block CRC mismatch"), "%s", out);
    cr_assert_eq(srv_restart(&s), 0);
    expect_digest(&s, d, "from the older checkpoint");
    cr_assert(srv_log_contains(&s, "is damaged (block CRC mismatch", NULL));
    cr_assert(srv_log_contains(&s, "store: loaded checkpoint", NULL), "the older one");
    srv_kill_all(&s);

    /* That store may have written one at once (the tail it replayed was
     * longer than checkpoint-bytes): damage every one there is now. */
    damage_checkpoint(&s, -1, 3);
    cr_assert_eq(srv_restart(&s), 0);
    expect_digest(&s, d, "from the whole log");
    cr_assert(srv_log_contains(&s, "no usable checkpoint: replaying the whole log", NULL));
    /* And the server goes on writing good ones, pruning the bad (the
     * newest two are kept, whatever they hold). */
    c = srv_connect(&s);
    round = load_until_written(&s, c, round, 3);
    redisFree(c);
    cr_assert_eq(srv_stop(&s), 0);
    cr_assert_eq(srv_run_tool("atticdb-check", s.dir, out, sizeof(out)), 0, "%s", out);
    srv_cleanup(&s);
}

/* A restart that refuses its checkpoint (damaged here; one of another
 * format is refused the same way) replays the whole log: the frontends
 * answer PING meanwhile, and a read waits for the replay. srv_restart
 * returns only once the store serves (INFO loading:0), so a test's first
 * read gets its reply within a 2 s client timeout, not none; the state
 * is the one before the stop. */
Test(checkpoint, restart_replaying_the_whole_log_returns_once_the_store_serves)
{
    srv_t s;
    cr_assert_eq(srv_start(&s, "--frontends 1"), 0);
    redisContext *c = srv_connect(&s);
    struct timeval tv = {60, 0};
    redisSetTimeout(c, tv);
    enum { KEYS = 200000, BATCH = 1000 };
    for (int i = 0; i < KEYS; i += BATCH) {
        for (int j = i; j < i + BATCH; j++)
            redisAppendCommand(c, "SET key:%d value-%d", j, j);
        for (int j = i; j < i + BATCH; j++) {
            redisReply *r;
            cr_assert_eq(redisGetReply(c, (void **)&r), REDIS_OK, "%s", c->errstr);
            freeReplyObject(r);
        }
    }
    char d[41];
    digest(c, d);
    redisFree(c);
    cr_assert_eq(srv_stop(&s), 0);
    cr_assert_eq(count_files(&s, 0), 1, "the clean stop's checkpoint");
    damage_checkpoint(&s, -1, 2);
    cr_assert_eq(srv_restart(&s), 0);
    c = srv_connect(&s);
    char loading[8];
    cr_assert_str_eq(srv_info_persistence(c, "loading", loading, sizeof(loading)), "0",
                     "srv_restart returned before the store served");
    redisFree(c);
    cr_assert(srv_log_contains(&s, "no usable checkpoint: replaying the whole log", NULL));
    expect_digest(&s, d, "after replaying the whole log");
    srv_kill_all(&s);
    srv_cleanup(&s);
}

/* ---- faults in the checkpoint child --------------------------------------- */

static const char *awaited; /* the log line a fault run waits for */

static int fault_seen_and_one_more_written(const srv_t *s)
{
    return count_log(s, awaited) >= 1 && count_log(s, "store: checkpoint at LSN") >= 3;
}

/* Start with the fault, write until it happened and a later checkpoint
 * worked, check the server still takes writes, SIGKILL everything, restart
 * without faults: the digest is the one before the kill. */
static void fault_run(const char *fault, const char *line)
{
    srv_t s;
    cr_assert_eq(srv_start_faults(&s, fault, ARGS), 0, "%s", fault);
    redisContext *c = srv_connect(&s);
    awaited = line;
    int round = load_until(&s, c, 0, fault_seen_and_one_more_written);
    cr_assert_eq(load_round(c, round++, NULL), 0, "%s: the server stopped taking writes", fault);
    expect_ok(redisCommand(c, "PING"), "PING");
    char d[41];
    digest(c, d);
    redisFree(c);
    srv_kill_all(&s);
    cr_assert_eq(srv_restart(&s), 0, "%s", fault);
    expect_digest(&s, d, fault);
    cr_assert(srv_log_contains(&s, "store: loaded checkpoint", NULL), "%s", fault);
    srv_stop(&s);
    char out[8192];
    cr_assert_eq(srv_run_tool("atticdb-check", s.dir, out, sizeof(out)), 0, "%s: %s", fault, out);
    srv_cleanup(&s);
}

Test(checkpoint, child_killed_before_the_rename)
{
    fault_run("store.ckptwritten:2:KILL", "failed (pid");
}

Test(checkpoint, child_killed_after_the_rename)
{
    fault_run("store.ckptrenamed:2:KILL", "failed (pid");
}

Test(checkpoint, child_killed_while_removing_old_checkpoints)
{
    fault_run("store.ckptdelete:1:KILL", "failed (pid");
}

Test(checkpoint, enospc_while_writing)
{
    fault_run("store.pwrite:3:ENOSPC", "failed: No space left on device; abandoned");
}

Test(checkpoint, eio_on_fdatasync)
{
    fault_run("store.fdatasync:2:EIO", "failed: Input/output error; abandoned");
}

Test(checkpoint, eio_on_rename)
{
    fault_run("store.rename:2:EIO", "failed: Input/output error; abandoned");
}

/* A power cut while a checkpoint is being synced: the .tmp is undone and
 * torn, the whole server dies; every acknowledged write is there after the
 * restart, from the older checkpoint and the log. */
Test(checkpoint, power_cut_during_a_checkpoint)
{
    srv_t s;
    cr_assert_eq(srv_start_faults(&s, "store.fdatasync:3:CUT", ARGS), 0);
    redisContext *c = srv_connect(&s);
    int round = 0, acked = 0;
    time_t deadline = time(NULL) + 30;
    while (load_round(c, round, &acked) == 0) {
        cr_assert_lt(time(NULL), deadline, "the power cut did not happen");
        round++;
    }
    redisFree(c);
    srv_kill_all(&s); /* reap what the cut left */
    cr_assert_eq(srv_restart(&s), 0);
    c = srv_connect(&s);
    /* Every SET of the complete rounds, and the acked ones of the last. */
    for (int r = 0; r <= round; r++)
        for (int i = 0; i < 300; i++) {
            if (r == round && i >= acked) break;
            redisReply *g = redisCommand(c, "EXISTS k:%d:%d", r, i);
            cr_assert_not_null(g);
            cr_assert_eq(g->integer, 1, "acked k:%d:%d lost", r, i);
            freeReplyObject(g);
        }
    redisFree(c);
    srv_stop(&s);
    srv_cleanup(&s);
}

/* atticdb-check --cut removes the checkpoints after the cut: once the log
 * grew past them again they would be loaded, with a state the log no longer
 * leads to. */
Test(checkpoint, cut_removes_the_checkpoints_after_it)
{
    srv_t s;
    cr_assert_eq(srv_start(&s, ARGS), 0);
    redisContext *c = srv_connect(&s);
    int round = load_until_written(&s, c, 0, 3);
    redisFree(c);
    cr_assert_eq(srv_stop(&s), 0);
    char out[8192];
    cr_assert_eq(srv_run_tool("atticdb-check", s.dir, out, sizeof(out)), 0, "%s", out);
    const char *first = strstr(out, "checkpoint at LSN ");
    cr_assert_not_null(first, "%s", out);
    unsigned long long older = strtoull(first + strlen("checkpoint at LSN "), NULL, 10);
    char args[600];
    snprintf(args, sizeof(args), "--cut %llu %s", older, s.dir);
    cr_assert_eq(srv_run_tool("atticdb-check", args, out, sizeof(out)), 0, "%s", out);
    cr_assert(strstr(out, "removed ") && strstr(out, "(after the cut)"), "%s", out);
    cr_assert_eq(count_files(&s, 0), 1);
    cr_assert_eq(srv_restart(&s), 0);
    c = srv_connect(&s);
    for (int i = 0; i < 4; i++)
        cr_assert_eq(load_round(c, round++, NULL), 0);
    char d[41];
    digest(c, d);
    redisFree(c);
    srv_kill_all(&s);
    cr_assert_eq(srv_restart(&s), 0);
    expect_digest(&s, d, "after a cut and more writes");
    srv_stop(&s);
    srv_cleanup(&s);
}
