/*
 * test_compact.c - the real server deleting log segments (D27): an
 * overwrite load with small segments ends with the log's old segments
 * deleted, the log starting above 0, and every acknowledged write reading
 * back (and the same DEBUG DIGEST) after a clean restart and after SIGKILL
 * of the whole process group; the store killed before and after an unlink
 * loses nothing; a deleted segment that comes back (as a power cut between
 * unlink and directory fsync can bring it) is harmless; a power cut of the
 * logger during the load loses no acked write; the live-bytes table agrees
 * with a recount (DEBUG SEGMENTS) after every restart; atticdb-check reads
 * a log whose start was deleted, and the server refuses to start when no
 * checkpoint is left for it.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

TestSuite(compact, .fini = srv_cleanup_all, .timeout = 180);

#define ARGS    "--frontends 2 --segment-size 1mb --ring-size 256kb --checkpoint-bytes 1mb"
#define NKEYS   200
#define VALUE_N 1000

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

/* The lowest segment start present and the number of segments. */
static int segments(const srv_t *s, unsigned long long *first)
{
    DIR *d = opendir(s->dir);
    cr_assert_not_null(d);
    int n = 0;
    *first = ~0ull;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        unsigned long long at;
        size_t l = strlen(e->d_name);
        if (l != 24 || sscanf(e->d_name, "log-%16llx.seg", &at) != 1) continue;
        n++;
        if (at < *first) *first = at;
    }
    closedir(d);
    return n;
}

/* Hard links to every segment, in dir/keep, so a deleted one can be put
 * back (its name returning, as after a power cut before the fsync). */
static void keep_links(const srv_t *s)
{
    char keep[400];
    snprintf(keep, sizeof(keep), "%s/keep", s->dir);
    mkdir(keep, 0700);
    DIR *d = opendir(s->dir);
    cr_assert_not_null(d);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        unsigned long long at;
        if (strlen(e->d_name) != 24 || sscanf(e->d_name, "log-%16llx.seg", &at) != 1) continue;
        char from[700], to[700];
        snprintf(from, sizeof(from), "%s/%s", s->dir, e->d_name);
        snprintf(to, sizeof(to), "%s/%s", keep, e->d_name);
        /* Gone since readdir (a prepared segment's rename, a deletion):
         * nothing to keep; anything else is the test's failure. */
        if (link(from, to) != 0)
            cr_assert(errno == EEXIST || errno == ENOENT, "link %s: %s", from, strerror(errno));
    }
    closedir(d);
}

static int acked[NKEYS]; /* the round of each key's last acknowledged SET, -1: none */

/* One round: SET o:<i> to a value of round r, every key, pipelined. Returns
 * 0, or -1 when the server went away (acked[] says what was answered). */
static int round_of_sets(redisContext *c, int r)
{
    static char v[VALUE_N + 1];
    for (int i = 0; i < NKEYS; i++) {
        /* "<round>:" then the key's number, zero-padded to VALUE_N bytes */
        int n = snprintf(v, sizeof(v), "%d:", r);
        snprintf(v + n, sizeof(v) - (size_t)n, "%0*d", VALUE_N - n, i);
        redisAppendCommand(c, "SET o:%d %s", i, v);
    }
    for (int i = 0; i < NKEYS; i++) {
        redisReply *rep;
        if (redisGetReply(c, (void **)&rep) != REDIS_OK) return -1;
        cr_assert_eq(rep->type, REDIS_REPLY_STATUS, "SET o:%d: %s", i, rep->str);
        freeReplyObject(rep);
        acked[i] = r;
    }
    return 0;
}

/* Every key reads back the value of its last acknowledged round (or a
 * later one, sent but not answered before a crash). */
static void expect_acked(const srv_t *s, const char *what)
{
    redisContext *c = srv_connect(s);
    cr_assert_not_null(c);
    for (int i = 0; i < NKEYS; i++) {
        if (acked[i] < 0) continue;
        redisReply *r = redisCommand(c, "GET o:%d", i);
        cr_assert_not_null(r);
        cr_assert_eq(r->type, REDIS_REPLY_STRING, "%s: o:%d lost", what, i);
        int round = atoi(r->str);
        cr_assert_geq(round, acked[i], "%s: o:%d went back from round %d to %d", what, i, acked[i],
                      round);
        cr_assert_eq(r->len, (size_t)VALUE_N, "%s: o:%d length", what, i);
        const char *colon = strchr(r->str, ':');
        cr_assert_not_null(colon);
        cr_assert_eq(atoi(colon + 1), i, "%s: o:%d holds another key's value", what, i);
        freeReplyObject(r);
    }
    redisFree(c);
}

static void digest(const srv_t *s, char out[41])
{
    redisContext *c = srv_connect(s);
    cr_assert_not_null(c);
    redisReply *r = redisCommand(c, "DEBUG DIGEST");
    cr_assert_not_null(r);
    cr_assert_eq(r->type, REDIS_REPLY_STATUS, "DEBUG DIGEST: %s", r->str);
    strcpy(out, r->str);
    freeReplyObject(r);
    redisFree(c);
}

/* DEBUG SEGMENTS: the table agrees with a recount; returns the live total
 * and the lowest segment with live bytes (~0 when none). */
static long long live_check(const srv_t *s, unsigned long long *lowest, const char *what)
{
    redisContext *c = srv_connect(s);
    cr_assert_not_null(c);
    redisReply *r = redisCommand(c, "DEBUG SEGMENTS");
    cr_assert_not_null(r);
    cr_assert_eq(r->type, REDIS_REPLY_ARRAY, "%s: DEBUG SEGMENTS: %s", what, r->str);
    cr_assert_geq(r->elements, 2);
    cr_assert_eq(r->element[0]->integer, 1, "%s: the live table disagrees with a recount", what);
    long long total = r->element[1]->integer;
    *lowest = r->elements > 2 ? (unsigned long long)r->element[2]->integer : ~0ull;
    freeReplyObject(r);
    redisFree(c);
    return total;
}

/* Write rounds until at least `want` segments were deleted (or 60 s). */
static int load_until_deleted(srv_t *s, redisContext *c, int r, int want, int links)
{
    time_t deadline = time(NULL) + 60;
    for (;;) {
        unsigned long long first;
        segments(s, &first);
        if (first != ~0ull && first >= (unsigned long long)want << 20) return r;
        cr_assert_lt(time(NULL), deadline, "segments were not deleted (first %llx)", first);
        cr_assert_eq(round_of_sets(c, r++), 0);
        if (links) keep_links(s);
    }
}

/* Keys written once before the load: they pin segment 0 until relocation
 * moves them. */
#define NCOLD 100
static void write_cold(const srv_t *s)
{
    redisContext *c = srv_connect(s);
    cr_assert_not_null(c);
    static char v[VALUE_N + 1];
    for (int i = 0; i < NCOLD; i++) {
        snprintf(v, sizeof(v), "cold:%0*d", VALUE_N - 5, i);
        redisAppendCommand(c, "SET c:%d %s", i, v);
    }
    for (int i = 0; i < NCOLD; i++) {
        redisReply *r;
        cr_assert_eq(redisGetReply(c, (void **)&r), REDIS_OK);
        cr_assert_eq(r->type, REDIS_REPLY_STATUS);
        freeReplyObject(r);
    }
    redisFree(c);
}

static void expect_cold(const srv_t *s, const char *what)
{
    redisContext *c = srv_connect(s);
    cr_assert_not_null(c);
    for (int i = 0; i < NCOLD; i++) {
        redisReply *r = redisCommand(c, "GET c:%d", i);
        cr_assert_not_null(r);
        cr_assert_eq(r->type, REDIS_REPLY_STRING, "%s: c:%d lost", what, i);
        cr_assert_eq(r->len, (size_t)VALUE_N);
        cr_assert_eq(strncmp(r->str, "cold:", 5), 0);
        cr_assert_eq(atoi(r->str + 5), i, "%s: c:%d holds %.20s", what, i, r->str);
        freeReplyObject(r);
    }
    redisFree(c);
}

/* SIGKILL of the whole server, a restart: the same DEBUG DIGEST, and every
 * acknowledged write reads back. */
static void restart_after_sigkill(srv_t *s)
{
    char d[41], d2[41];
    digest(s, d);
    srv_kill_all(s);
    cr_assert_eq(srv_restart(s), 0);
    digest(s, d2);
    cr_assert_str_eq(d, d2, "restart after SIGKILL");
    expect_acked(s, "restart after SIGKILL");
}

static void reset_model(void)
{
    for (int i = 0; i < NKEYS; i++)
        acked[i] = -1;
}

Test(compact, overwrites_delete_old_segments_and_restarts_keep_every_write)
{
    reset_model();
    srv_t s;
    cr_assert_eq(srv_start(&s, ARGS), 0);
    redisContext *c = srv_connect(&s);
    int r = load_until_deleted(&s, c, 0, 4, 0);
    redisFree(c);
    unsigned long long first, lowest;
    /* ~1.2 MB of values live, written r rounds over (r * 200 KB of log).
     * The loop above saw the first deletion of a pass, which unlinks one
     * segment and syncs the directory before the next: on a loaded
     * machine it was caught with the pass's later segments still there
     * (18 after 85 rounds), so the bound is taken once the pass is over. */
    int n = segments(&s, &first);
    for (int i = 0; i < 300 && n >= r / 5 + 1; i++) {
        usleep(100000);
        n = segments(&s, &first);
    }
    cr_assert_lt(n, r / 5 + 1, "%d segments after %d rounds", n, r);
    long long live = live_check(&s, &lowest, "live");
    cr_assert_eq(live, (long long)NKEYS * VALUE_N, "every value is one extent");
    cr_assert_geq(lowest, first);
    char d[41], d2[41];
    digest(&s, d);
    expect_acked(&s, "live");

    cr_assert_eq(srv_stop(&s), 0);
    segments(&s, &first); /* the store may have deleted more meanwhile */
    char out[8192];
    cr_assert_eq(srv_run_tool("atticdb-check", s.dir, out, sizeof(out)), 0, "%s", out);
    char want[64];
    snprintf(want, sizeof(want), "(LSN %llu to ", first);
    cr_assert(strstr(out, want), "atticdb-check reads the log from its first segment: %s", out);
    cr_assert_eq(srv_restart(&s), 0);
    digest(&s, d2);
    cr_assert_str_eq(d, d2, "clean restart");
    expect_acked(&s, "clean restart");
    live_check(&s, &lowest, "clean restart");

    c = srv_connect(&s);
    r = load_until_deleted(&s, c, r, (int)(first >> 20) + 3, 0);
    redisFree(c);
    digest(&s, d);
    srv_kill_all(&s);
    cr_assert_eq(srv_restart(&s), 0);
    digest(&s, d2);
    cr_assert_str_eq(d, d2, "restart after SIGKILL of the group");
    expect_acked(&s, "restart after SIGKILL");
    live_check(&s, &lowest, "restart after SIGKILL");
    cr_assert_eq(srv_stop(&s), 0);
    srv_cleanup(&s);
}

/* The store killed at a fault point; the respawned one finishes the work. */
static void killed_at(const char *fault)
{
    reset_model();
    srv_t s;
    cr_assert_eq(srv_start_faults(&s, fault, ARGS), 0, "%s", fault);
    write_cold(&s);
    redisContext *c = srv_connect(&s);
    int r = 0;
    time_t deadline = time(NULL) + 60;
    while (count_log(&s, "store: deleted") < 2) {
        cr_assert_lt(time(NULL), deadline, "%s: no deletion after the kill", fault);
        if (round_of_sets(c, r++)) {
            redisFree(c);
            c = srv_connect(&s);
            cr_assert_not_null(c);
        }
    }
    redisFree(c);
    cr_assert(srv_log_contains(&s, "killed by signal 9", "store"), "%s: the store was killed",
              fault);
    expect_acked(&s, fault);
    expect_cold(&s, fault);
    char d[41], d2[41];
    digest(&s, d);
    srv_kill_all(&s);
    cr_assert_eq(srv_restart(&s), 0);
    digest(&s, d2);
    cr_assert_str_eq(d, d2, "%s", fault);
    expect_acked(&s, fault);
    expect_cold(&s, fault);
    unsigned long long lowest;
    live_check(&s, &lowest, fault);
    cr_assert_eq(srv_stop(&s), 0);
    char out[8192];
    cr_assert_eq(srv_run_tool("atticdb-check", s.dir, out, sizeof(out)), 0, "%s: %s", fault, out);
    srv_cleanup(&s);
}

Test(compact, store_killed_before_an_unlink)
{
    killed_at("store.segdelete:2:KILL");
}

Test(compact, store_killed_after_an_unlink_before_the_fsync)
{
    killed_at("store.segdeleted:2:KILL");
}

/* The store killed right after applying a relocation (the record durable,
 * the move in RAM only): the respawned store replays it. */
Test(compact, store_killed_after_a_relocation)
{
    killed_at("store.relocated:150:KILL");
}

/* Keys written once pin the first segment: only relocation moves them,
 * and they read back after restarts. */
Test(compact, relocation_frees_segments_that_cold_keys_pinned)
{
    reset_model();
    srv_t s;
    cr_assert_eq(srv_start(&s, ARGS), 0);
    write_cold(&s);
    redisContext *c = srv_connect(&s);
    int r = load_until_deleted(&s, c, 0, 6, 0);
    redisFree(c);
    cr_assert(count_log(&s, "store: relocating the values below LSN") >= 1);
    unsigned long long first, lowest;
    segments(&s, &first);
    live_check(&s, &lowest, "live");
    cr_assert_geq(lowest, first);
    expect_cold(&s, "live");
    restart_after_sigkill(&s);
    expect_cold(&s, "restart after SIGKILL");
    live_check(&s, &lowest, "restart after SIGKILL");
    cr_assert_eq(srv_stop(&s), 0);
    cr_assert_eq(srv_restart(&s), 0);
    expect_cold(&s, "clean restart");
    cr_assert_eq(srv_stop(&s), 0);
    (void)r;
    srv_cleanup(&s);
}

/* A burst of writes while the first checkpoint's child is held (fault
 * point ckptwritten, STALL: 300 ms) leaves the two kept checkpoints at the
 * burst's start and its end, and the log far over its target with nothing
 * to relocate: segments go only below the older one. With no write after
 * the burst the idle store takes one more checkpoint, and the log's start
 * moves up to the newest's references (D79); before, the older one's
 * references from LSN 0 kept all 25 segments until the next writes. */
Test(compact, an_idle_log_over_its_target_shrinks_without_another_write)
{
    reset_model();
    srv_t s;
    cr_assert_eq(srv_start_faults(&s, "store.ckptwritten:1:STALL",
                                  "--frontends 1 --segment-size 128kb --ring-size 64kb "
                                  "--checkpoint-bytes 128kb"),
                 0);
    redisContext *c = srv_connect(&s);
    cr_assert_not_null(c);
    for (int r = 0; r < 8; r++) /* 1.6 MB: 8 x 200 keys of 1 KB */
        cr_assert_eq(round_of_sets(c, r), 0);
    redisFree(c);
    /* 200 KB live, target 1.5: 300 KB of log, 3 segments, with the one
     * being written and the one prepared ahead. */
    unsigned long long first;
    int n = segments(&s, &first);
    for (int i = 0; i < 600 && n > 5; i++) {
        usleep(50000);
        n = segments(&s, &first);
    }
    cr_expect_leq(n, 5, "the idle log shrank to its target (%d segments from %llx)", n, first);
    expect_acked(&s, "live");
    restart_after_sigkill(&s);
    cr_assert_eq(srv_stop(&s), 0);
    srv_cleanup(&s);
}

/* A deleted segment whose name comes back (a power cut between the unlink
 * and the directory fsync): recovery reads it, nothing uses it, and the
 * next pass deletes it again. */
Test(compact, a_deleted_segment_coming_back_is_harmless)
{
    reset_model();
    srv_t s;
    cr_assert_eq(srv_start(&s, ARGS), 0);
    redisContext *c = srv_connect(&s);
    keep_links(&s);
    int r = load_until_deleted(&s, c, 0, 3, 1);
    redisFree(c);
    char d[41], d2[41];
    digest(&s, d);
    srv_kill_all(&s);
    unsigned long long first;
    segments(&s, &first);
    char from[700], to[700];
    snprintf(from, sizeof(from), "%s/keep/log-%016llx.seg", s.dir, first - (1ull << 20));
    snprintf(to, sizeof(to), "%s/log-%016llx.seg", s.dir, first - (1ull << 20));
    cr_assert_eq(link(from, to), 0, "%s", from);
    cr_assert_eq(srv_restart(&s), 0);
    digest(&s, d2);
    cr_assert_str_eq(d, d2, "with a deleted segment back");
    expect_acked(&s, "with a deleted segment back");
    c = srv_connect(&s);
    r = load_until_deleted(&s, c, r, (int)(first >> 20) + 1, 0);
    redisFree(c);
    expect_acked(&s, "after more writes");
    cr_assert_eq(srv_stop(&s), 0);
    srv_cleanup(&s);
}

/* A power cut of the logger in the middle of the load (deletions going
 * on): every acknowledged SET reads back. */
Test(compact, power_cut_during_an_overwrite_load)
{
    reset_model();
    srv_t s;
    cr_assert_eq(srv_start_faults(&s, "logger.fdatasync:3000:CUT", ARGS), 0);
    redisContext *c = srv_connect(&s);
    int r = 0;
    time_t deadline = time(NULL) + 90;
    while (round_of_sets(c, r) == 0) {
        cr_assert_lt(time(NULL), deadline, "the power cut did not happen");
        r++;
    }
    redisFree(c);
    srv_kill_all(&s);
    cr_assert(count_log(&s, "store: deleted") >= 1, "segments were deleted before the cut");
    cr_assert_eq(srv_restart(&s), 0);
    expect_acked(&s, "after the power cut");
    unsigned long long lowest;
    live_check(&s, &lowest, "after the power cut");
    cr_assert_eq(srv_stop(&s), 0);
    srv_cleanup(&s);
}

/* Without its checkpoints, a log whose start was deleted cannot be
 * replayed: the server refuses to start and says why. */
Test(compact, no_checkpoint_for_a_deleted_start_refuses_to_start)
{
    reset_model();
    srv_t s;
    cr_assert_eq(srv_start(&s, ARGS), 0);
    redisContext *c = srv_connect(&s);
    load_until_deleted(&s, c, 0, 2, 0);
    redisFree(c);
    cr_assert_eq(srv_stop(&s), 0);
    DIR *d = opendir(s.dir);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, "checkpoint-", 11)) continue;
        char path[700];
        snprintf(path, sizeof(path), "%s/%s", s.dir, e->d_name);
        cr_assert_eq(unlink(path), 0);
    }
    closedir(d);
    char out[8192];
    cr_assert_eq(srv_run_tool("atticdb-check", s.dir, out, sizeof(out)), 1, "%s", out);
    cr_assert(strstr(out, "the server refuses to start"), "%s", out);
    /* Frontends may answer PING before the store refused: wait for the
     * master to stop the server (the store's status 2 before ready). */
    if (srv_restart(&s) == 0) {
        int status, gone = 0;
        for (int i = 0; i < 2000 && !gone; i++) {
            gone = waitpid(s.pid, &status, WNOHANG) == s.pid;
            if (!gone) usleep(10000);
        }
        cr_assert(gone, "the server went on without the state of the deleted segments");
        s.pid = 0;
    }
    cr_assert(srv_log_contains(&s, "refusing to start rather than lose data", NULL));
    srv_cleanup(&s);
}
