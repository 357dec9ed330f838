/*
 * test_backup.c - backups of the real server (D38): BGSAVE, SAVE and
 * tools/atticdb-backup under a concurrent write load restore into a data
 * directory whose server holds exactly the state at the backup's LSN (a
 * prefix of the writes holding every write acked before the backup began;
 * the same DEBUG DIGEST as the source's log cut at that LSN); LASTSAVE and
 * INFO persistence move as backups start and end; a backup child, a whole
 * server or the restore tool killed at each step leaves no directory that
 * verify or restore accepts, and the next backup works.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

TestSuite(backup, .fini = srv_cleanup_all, .timeout = 300);

#define ARGS      "--frontends 2 --segment-size 1mb --ring-size 256kb"
#define NKEYS     200
#define WAIT_SECS 120 /* generous: the machine is shared and slow */

/* ---- helpers ------------------------------------------------------------ */

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static long long info_num(redisContext *c, const char *field)
{
    char v[256];
    srv_info_persistence(c, field, v, sizeof(v));
    cr_assert(v[0] && strcmp(v, "<error>"), "INFO persistence has %s", field);
    return atoll(v);
}

/* Wait until no backup is in progress; the last one's status. */
static const char *wait_backup_end(redisContext *c, char *status, size_t n)
{
    for (int i = 0; i < WAIT_SECS * 20 && info_num(c, "rdb_bgsave_in_progress"); i++)
        sleep_ms(50);
    cr_assert_eq(info_num(c, "rdb_bgsave_in_progress"), 0, "the backup ended");
    return srv_info_persistence(c, "rdb_last_bgsave_status", status, n);
}

static void wait_changes(redisContext *c, long long want, const char *what)
{
    for (int i = 0; i < WAIT_SECS * 20 && info_num(c, "rdb_changes_since_last_save") != want; i++)
        sleep_ms(50);
    cr_assert_eq(info_num(c, "rdb_changes_since_last_save"), want, "%s", what);
}

/* cmd's words as arguments (no '%' in it). */
static const char *raw(redisContext *c, const char *cmd)
{
    static char buf[4096];
    return srv_cmd_raw(c, buf, sizeof(buf), cmd);
}

static int tool(const char *args, char *out, size_t n)
{
    return srv_run_tool("atticdb-backup", args, out, n);
}

static int file_exists(const char *dir, const char *name)
{
    char p[1024];
    struct stat st;
    snprintf(p, sizeof(p), "%s/%s", dir, name);
    return stat(p, &st) == 0;
}

/* Every directory in dir/backups: none verifies, none restores. Returns
 * how many there are. */
static int expect_no_backup_accepted(const srv_t *s, const char *why)
{
    char bdir[512];
    snprintf(bdir, sizeof(bdir), "%s/backups", s->dir);
    DIR *d = opendir(bdir);
    if (!d) return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        char args[1400], out[4096], target[600];
        snprintf(target, sizeof(target), "%s-restored", s->dir);
        snprintf(args, sizeof(args), "verify %s/%s", bdir, e->d_name);
        cr_expect_eq(tool(args, out, sizeof(out)), 1, "%s: verify accepted %s: %s", why, e->d_name,
                     out);
        snprintf(args, sizeof(args), "restore %s/%s %s", bdir, e->d_name, target);
        cr_expect_eq(tool(args, out, sizeof(out)), 1, "%s: restore accepted %s: %s", why, e->d_name,
                     out);
        struct stat st;
        cr_expect_neq(stat(target, &st), 0, "%s: %s was made", why, target);
        n++;
    }
    closedir(d);
    return n;
}

/* A child of parent (the first /proc finds), 0 when none. */
static pid_t child_of(pid_t parent)
{
    DIR *d = opendir("/proc");
    cr_assert_not_null(d);
    struct dirent *e;
    pid_t found = 0;
    while (!found && (e = readdir(d)) != NULL) {
        pid_t pid = (pid_t)atoi(e->d_name);
        if (pid <= 0) continue;
        char path[64];
        snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        int ppid = 0;
        if (fscanf(f, "%*d (%*[^)]) %*c %d", &ppid) == 1 && ppid == parent) found = pid;
        fclose(f);
    }
    closedir(d);
    return found;
}

/* A new server, stopped, its directory removed, the backup restored in its
 * place with atticdb-backup, then started on it. */
static void start_restored(srv_t *dst, const char *backup)
{
    cr_assert_eq(srv_start(dst, ARGS " --checkpoint-bytes 0"), 0);
    cr_assert_eq(srv_stop(dst), 0);
    char cmd[600], out[4096], args[1400];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dst->dir);
    cr_assert_eq(system(cmd), 0);
    snprintf(args, sizeof(args), "restore %s %s", backup, dst->dir);
    cr_assert_eq(tool(args, out, sizeof(out)), 0, "restore: %s", out);
    cr_assert_eq(srv_restart(dst), 0, "a server starts on the restored directory");
}

/* n keys of `width` bytes, pipelined, every reply checked. */
static void fill(redisContext *c, int n, int width)
{
    char *v = malloc((size_t)width + 1);
    cr_assert_not_null(v);
    for (int i = 0; i < n; i++) {
        snprintf(v, (size_t)width + 1, "%0*d", width, i);
        redisAppendCommand(c, "SET key%d %s", i, v);
    }
    free(v);
    for (int i = 0; i < n; i++) {
        redisReply *r;
        cr_assert_eq(redisGetReply(c, (void **)&r), REDIS_OK);
        cr_assert(r && r->type == REDIS_REPLY_STATUS, "SET acknowledged");
        freeReplyObject(r);
    }
}

static void digest(redisContext *c, char *out)
{
    redisReply *r = redisCommand(c, "DEBUG DIGEST");
    cr_assert(r && r->type == REDIS_REPLY_STATUS, "DEBUG DIGEST");
    snprintf(out, 64, "%s", r->str);
    freeReplyObject(r);
}

/* ---- a write load ---------------------------------------------------------- */

/* A child process writing SET k:<n % NKEYS> <n> for n = 1, 2, ... one at a
 * time, publishing in shared memory the last n acknowledged. */
typedef struct load {
    pid_t pid;
    _Atomic long long *acked;
} load_t;

static void load_start(load_t *l, const srv_t *s)
{
    l->acked = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    cr_assert_neq(l->acked, MAP_FAILED);
    atomic_store(l->acked, 0);
    pid_t parent = getpid();
    l->pid = fork();
    cr_assert_geq(l->pid, 0);
    if (l->pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) _exit(1);
        redisContext *c = srv_connect(s);
        if (!c) _exit(1);
        for (long long n = 1;; n++) {
            redisReply *r = redisCommand(c, "SET k:%lld %lld", n % NKEYS, n);
            if (!r || r->type != REDIS_REPLY_STATUS) _exit(2);
            freeReplyObject(r);
            atomic_store(l->acked, n);
        }
    }
}

static long long load_wait(load_t *l, long long at_least)
{
    for (int i = 0; i < WAIT_SECS * 100 && atomic_load(l->acked) < at_least; i++)
        sleep_ms(10);
    long long n = atomic_load(l->acked);
    cr_assert_geq(n, at_least, "the load writes");
    return n;
}

static void load_stop(load_t *l)
{
    kill(l->pid, SIGKILL);
    waitpid(l->pid, NULL, 0);
    munmap((void *)l->acked, 4096);
}

/* The restored server holds the writes 1..m for one m >= acked_before:
 * each key's value is the last n <= m written to it. Returns m. */
static long long expect_prefix(redisContext *c, long long acked_before)
{
    long long vals[NKEYS], m = 0;
    for (int i = 0; i < NKEYS; i++) {
        redisReply *r = redisCommand(c, "GET k:%d", i);
        cr_assert_not_null(r);
        vals[i] = r->type == REDIS_REPLY_STRING ? atoll(r->str) : 0;
        if (vals[i] > m) m = vals[i];
        freeReplyObject(r);
    }
    cr_assert_geq(m, acked_before, "every write acknowledged before the backup is in it");
    for (int i = 0; i < NKEYS; i++) {
        long long want =
            m - ((m - i) % NKEYS + NKEYS) % NKEYS; /* last n <= m with n % NKEYS == i */
        if (want <= 0) want = 0;
        cr_expect_eq(vals[i], want, "k:%d is %lld, the prefix up to %lld has %lld", i, vals[i], m,
                     want);
    }
    return m;
}

/* ---- LASTSAVE and INFO ---------------------------------------------------- */

Test(backup, lastsave_and_info_persistence_follow_the_backups)
{
    srv_t s;
    cr_assert_eq(srv_start(&s, ARGS), 0);
    redisContext *c = srv_connect(&s);
    cr_assert_not_null(c);
    char v[512], status[32];
    long long start = info_num(c, "rdb_last_save_time");
    redisReply *r = redisCommand(c, "LASTSAVE");
    cr_assert(r && r->type == REDIS_REPLY_INTEGER);
    cr_assert_eq(r->integer, start, "LASTSAVE is rdb_last_save_time: the start before any");
    freeReplyObject(r);
    cr_assert_eq(info_num(c, "rdb_saves"), 0);
    cr_assert_eq(info_num(c, "rdb_last_bgsave_time_sec"), -1);
    cr_assert_str_eq(srv_info_persistence(c, "atticdb_last_backup_path", v, sizeof(v)), "");
    for (int i = 0; i < 5; i++)
        freeReplyObject(redisCommand(c, "SET a%d x", i));
    /* SET is acknowledged once durable, maybe before the store applied
     * it (and counted it): the count catches up. */
    wait_changes(c, 5, "five writes since the start");

    cr_assert_str_eq(raw(c, "BGSAVE x"), "-ERR syntax error\r\n");
    cr_assert_str_eq(raw(c, "BGSAVE SCHEDULE x"), "-ERR syntax error\r\n");
    cr_assert_str_eq(raw(c, "LASTSAVE x"),
                     "-ERR wrong number of arguments for 'lastsave' command\r\n");
    cr_assert_str_eq(raw(c, "SAVE x"), "-ERR wrong number of arguments for 'save' command\r\n");
    cr_assert_str_eq(raw(c, "BGSAVE"), "+Background saving started\r\n");
    cr_assert_str_eq(wait_backup_end(c, status, sizeof(status)), "ok");
    cr_assert_eq(info_num(c, "rdb_saves"), 1);
    cr_assert_geq(info_num(c, "rdb_last_save_time"), start);
    cr_assert_geq(info_num(c, "rdb_last_bgsave_time_sec"), 0);
    cr_assert_eq(info_num(c, "rdb_current_bgsave_time_sec"), -1);
    cr_assert_eq(info_num(c, "rdb_changes_since_last_save"), 0, "all in the backup");
    long long lsn = info_num(c, "atticdb_last_backup_lsn");
    cr_assert_eq(lsn, info_num(c, "atticdb_applied_lsn"), "nothing written since");
    srv_info_persistence(c, "atticdb_last_backup_path", v, sizeof(v));
    char want[600], args[700], out[4096];
    snprintf(want, sizeof(want), "backups/backup-%016llx", lsn);
    cr_assert(strstr(v, want), "%s names %s", v, want);
    snprintf(args, sizeof(args), "verify %s", v);
    cr_assert_eq(tool(args, out, sizeof(out)), 0, "%s", out);

    freeReplyObject(redisCommand(c, "SET after 1"));
    wait_changes(c, 1, "one write since");
    cr_assert_str_eq(raw(c, "SAVE"), "+OK\r\n");
    cr_assert_eq(info_num(c, "rdb_saves"), 2, "SAVE answered once complete");
    cr_assert_eq(info_num(c, "rdb_changes_since_last_save"), 0);
    cr_assert_gt(info_num(c, "atticdb_last_backup_lsn"), lsn);
    /* Redis' no_multi: SAVE is refused inside MULTI. */
    freeReplyObject(redisCommand(c, "MULTI"));
    r = redisCommand(c, "SAVE");
    cr_assert(r && r->type == REDIS_REPLY_ERROR, "SAVE inside MULTI is refused");
    freeReplyObject(r);
    freeReplyObject(redisCommand(c, "DISCARD"));
    redisFree(c);
    srv_cleanup(&s);
}

/* While the child hangs after copying: reported, refused twice, and a
 * killed child is a failure that leaves nothing restore accepts. */
Test(backup, a_running_backup_is_reported_and_a_killed_one_leaves_nothing)
{
    srv_t s;
    cr_assert_eq(srv_start_faults(&s, "store.backupcopied:1:HANG", ARGS " --checkpoint-bytes 0"),
                 0);
    redisContext *c = srv_connect(&s);
    cr_assert_not_null(c);
    fill(c, 50, 500);
    cr_assert_str_eq(raw(c, "BGSAVE"), "+Background saving started\r\n");
    cr_assert_eq(info_num(c, "rdb_bgsave_in_progress"), 1, "reported at once");
    cr_assert_geq(info_num(c, "rdb_current_bgsave_time_sec"), 0);
    cr_assert_str_eq(raw(c, "BGSAVE"), "-ERR Background save already in progress\r\n");
    cr_assert_str_eq(raw(c, "SAVE"), "-ERR Background save already in progress\r\n");
    /* The backup child: the store's only child. */
    pid_t store, child = 0;
    cr_assert_eq(srv_wait_children(&s, "atticdb-server: store", &store, 1, 1), 1);
    for (int t = 0; t < WAIT_SECS * 10 && !(child = child_of(store)); t++)
        sleep_ms(100);
    cr_assert_neq(child, 0, "the backup child runs");
    /* Hanging after the copy: the .tmp directory, complete but unnamed. */
    for (int t = 0; t < WAIT_SECS * 10 && !expect_no_backup_accepted(&s, "hanging"); t++)
        sleep_ms(100);
    cr_assert_eq(kill(child, SIGKILL), 0);
    char status[32];
    cr_assert_str_eq(wait_backup_end(c, status, sizeof(status)), "err");
    cr_assert_eq(info_num(c, "rdb_saves"), 0);
    cr_assert_geq(expect_no_backup_accepted(&s, "child killed"), 1, "the .tmp is left");
    redisReply *r = redisCommand(c, "GET key7");
    cr_assert(r && r->type == REDIS_REPLY_STRING, "the server serves on");
    freeReplyObject(r);
    /* After a restart without the fault (the child may have been killed
     * before it reached the hang, and a second child would hang there),
     * the next one works and removes the leftover of its LSN. */
    redisFree(c);
    cr_assert_eq(srv_stop(&s), 0);
    cr_assert_eq(srv_restart(&s), 0);
    c = srv_connect(&s);
    cr_assert_not_null(c);
    cr_assert_str_eq(raw(c, "BGSAVE"), "+Background saving started\r\n");
    cr_assert_str_eq(wait_backup_end(c, status, sizeof(status)), "ok");
    char bdir[512];
    snprintf(bdir, sizeof(bdir), "%s/backups", s.dir);
    char tmpname[64];
    snprintf(tmpname, sizeof(tmpname), "backup-%016llx.tmp",
             info_num(c, "atticdb_last_backup_lsn"));
    cr_assert(!file_exists(bdir, tmpname), "the leftover of the same LSN is gone");
    redisFree(c);
    srv_cleanup(&s);
}

/* A backup child killed at each step: a failure, nothing accepted; the
 * server serves; the next backup restores to the live digest. */
Test(backup, a_child_killed_at_any_step_leaves_nothing_restore_accepts)
{
    static const char *const faults[] = {
        "store.backupcopied:1:KILL", "store.backuprenamed:1:KILL", "store.backupmanifest:1:KILL",
        "store.pwrite:1:KILL",       "store.pwrite:3:KILL",        "store.fdatasync:2:KILL",
        "store.rename:1:KILL",
    };
    for (size_t f = 0; f < sizeof(faults) / sizeof(faults[0]); f++) {
        srv_t s;
        cr_assert_eq(srv_start_faults(&s, faults[f], ARGS " --checkpoint-bytes 0"), 0);
        redisContext *c = srv_connect(&s);
        cr_assert_not_null(c);
        fill(c, 3000, 700);
        char status[32], live[64], again[64];
        cr_assert_str_eq(raw(c, "BGSAVE"), "+Background saving started\r\n");
        cr_assert_str_eq(wait_backup_end(c, status, sizeof(status)), "err", "%s", faults[f]);
        cr_assert_geq(expect_no_backup_accepted(&s, faults[f]), 1, "%s leaves a directory",
                      faults[f]);
        cr_assert_str_eq(raw(c, "SAVE"), "+OK\r\n", "%s: the next one works", faults[f]);
        digest(c, live);
        char path[512];
        srv_info_persistence(c, "atticdb_last_backup_path", path, sizeof(path));
        srv_t r;
        start_restored(&r, path);
        redisContext *rc = srv_connect(&r);
        cr_assert_not_null(rc);
        digest(rc, again);
        cr_assert_str_eq(again, live, "%s: the restored digest", faults[f]);
        redisFree(rc);
        srv_cleanup(&r);
        redisFree(c);
        srv_cleanup(&s);
    }
}

/* The whole server killed while its backup child hangs: it restarts,
 * reports no backup in progress, and what was left is not a backup. */
Test(backup, the_server_killed_during_a_backup_leaves_nothing_restore_accepts)
{
    srv_t s;
    cr_assert_eq(srv_start_faults(&s, "store.backuprenamed:1:HANG", ARGS), 0);
    redisContext *c = srv_connect(&s);
    cr_assert_not_null(c);
    fill(c, 100, 300);
    cr_assert_str_eq(raw(c, "BGSAVE"), "+Background saving started\r\n");
    for (int t = 0; t < WAIT_SECS * 10 && !expect_no_backup_accepted(&s, "hanging"); t++)
        sleep_ms(100);
    redisFree(c);
    srv_kill_all(&s);
    cr_assert_geq(expect_no_backup_accepted(&s, "server killed"), 1);
    cr_assert_eq(srv_restart(&s), 0);
    c = srv_connect(&s);
    cr_assert_not_null(c);
    cr_assert_eq(info_num(c, "rdb_bgsave_in_progress"), 0);
    cr_assert_str_eq(raw(c, "SAVE"), "+OK\r\n");
    redisFree(c);
    srv_cleanup(&s);
}

/* ---- under load ------------------------------------------------------------ */

/* atticdb-backup take while a client writes, with checkpoints and
 * compaction deleting segments meanwhile: each backup restores to a
 * prefix of the writes holding every one acked before it was asked for. */
Test(backup, backups_under_load_restore_to_a_prefix_holding_every_acked_write)
{
    srv_t s;
    cr_assert_eq(srv_start(&s, ARGS " --checkpoint-bytes 256kb"), 0);
    load_t l;
    load_start(&l, &s);
    char out[4096], args[256], path[1024];
    snprintf(args, sizeof(args), "take -p %d", s.port);
    for (int round = 0; round < 3; round++) {
        long long before = load_wait(&l, 2000 * (round + 1));
        cr_assert_eq(tool(args, out, sizeof(out)), 0, "take: %s", out);
        long long after = load_wait(&l, 0);
        cr_assert_gt(after, before);
        sscanf(out, "%1023s", path);
        srv_t r;
        start_restored(&r, path);
        redisContext *c = srv_connect(&r);
        cr_assert_not_null(c);
        long long m = expect_prefix(c, before);
        cr_assert_leq(m, atomic_load(l.acked) + 1, "nothing the source had not written");
        redisFree(c);
        srv_cleanup(&r);
    }
    load_stop(&l);
    redisContext *c = srv_connect(&s);
    cr_assert_not_null(c);
    char v[64];
    cr_assert_geq(info_num(c, "rdb_saves"), 3);
    cr_assert_str_eq(srv_info_persistence(c, "rdb_last_bgsave_status", v, sizeof(v)), "ok");
    redisFree(c);
    srv_cleanup(&s);
}

/* The digest of the restored server equals that of the source's own log
 * cut at the backup's LSN (atticdb-check --cut on a copy of it). */
Test(backup, the_restored_digest_is_the_sources_at_the_backups_lsn)
{
    srv_t s;
    cr_assert_eq(srv_start(&s, ARGS " --checkpoint-bytes 0"), 0);
    load_t l;
    load_start(&l, &s);
    load_wait(&l, 3000);
    char out[4096], args[1400], path[1024];
    snprintf(args, sizeof(args), "take -p %d", s.port);
    cr_assert_eq(tool(args, out, sizeof(out)), 0, "take: %s", out);
    sscanf(out, "%1023s", path);
    load_wait(&l, atomic_load(l.acked) + 500); /* the log goes on past it */
    load_stop(&l);
    redisContext *c = srv_connect(&s);
    cr_assert_not_null(c);
    long long lsn = info_num(c, "atticdb_last_backup_lsn");
    cr_assert_gt(info_num(c, "atticdb_applied_lsn"), lsn, "written after the backup");
    redisFree(c);
    cr_assert_eq(srv_stop(&s), 0);
    /* The source at the LSN: its directory copied, cut there. */
    srv_t cut;
    cr_assert_eq(srv_start(&cut, ARGS " --checkpoint-bytes 0"), 0);
    cr_assert_eq(srv_stop(&cut), 0);
    char cmd[1200];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s' && cp -a '%s' '%s' && rm -rf '%s/backups'", cut.dir,
             s.dir, cut.dir, cut.dir);
    cr_assert_eq(system(cmd), 0);
    snprintf(args, sizeof(args), "--cut %lld %s", lsn, cut.dir);
    cr_assert_eq(srv_run_tool("atticdb-check", args, out, sizeof(out)), 0, "cut: %s", out);
    cr_assert_eq(srv_restart(&cut), 0);
    srv_t r;
    start_restored(&r, path);
    redisContext *a = srv_connect(&cut), *b = srv_connect(&r);
    cr_assert(a && b);
    char da[64], db[64];
    digest(a, da);
    digest(b, db);
    cr_assert_str_eq(db, da, "the restored state is the source's at LSN %lld", lsn);
    cr_assert_eq(info_num(b, "atticdb_applied_lsn"), lsn, "it ends at the backup's LSN");
    redisFree(a);
    redisFree(b);
    srv_cleanup(&r);
    srv_cleanup(&cut);
    srv_cleanup(&s);
}

/* ---- the restore tool killed ------------------------------------------ */

Test(backup, a_restore_killed_before_its_rename_leaves_no_data_directory)
{
    srv_t s;
    cr_assert_eq(srv_start(&s, ARGS), 0);
    redisContext *c = srv_connect(&s);
    cr_assert_not_null(c);
    fill(c, 500, 100);
    cr_assert_str_eq(raw(c, "SAVE"), "+OK\r\n");
    char path[512], target[600], args[1400], out[4096];
    srv_info_persistence(c, "atticdb_last_backup_path", path, sizeof(path));
    redisFree(c);
    snprintf(target, sizeof(target), "%s-restored", s.dir);
    snprintf(args, sizeof(args), "restore %s %s", path, target);
    static const char *const faults[] = {"backup.restorecopied:1:KILL", "backup.pwrite:2:KILL",
                                         "backup.fdatasync:1:KILL"};
    struct stat st;
    for (size_t f = 0; f < sizeof(faults) / sizeof(faults[0]); f++) {
        setenv("ATTICDB_TEST_FAULTS", faults[f], 1);
        int rc = tool(args, out, sizeof(out));
        unsetenv("ATTICDB_TEST_FAULTS");
        cr_assert_neq(rc, 0, "%s: killed", faults[f]);
        cr_assert_neq(stat(target, &st), 0, "%s: no data directory", faults[f]);
    }
    cr_assert_eq(tool(args, out, sizeof(out)), 0, "then it works: %s", out);
    cr_assert_eq(stat(target, &st), 0);
    char stale[700];
    snprintf(stale, sizeof(stale), "%s.restore", target);
    cr_assert_neq(stat(stale, &st), 0, "the leftover is gone");
    char cmd[1400];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", target);
    cr_assert_eq(system(cmd), 0);
    srv_cleanup(&s);
}

/* ---- the take tool ---------------------------------------------------------- */

/* take says so when the backup fails (exit 1, nothing printed on stdout
 * to mistake for a path), authenticates with -a, and works the next time. */
Test(backup, take_reports_a_failed_backup_and_authenticates)
{
    srv_t s;
    /* The third rename of the store's: the MANIFEST's (the checkpoint's in
     * the .tmp directory, then the directory's). */
    cr_assert_eq(srv_start_faults(&s, "store.rename:3:EIO", ARGS " --checkpoint-bytes 0"), 0);
    redisContext *c = srv_connect(&s);
    cr_assert_not_null(c);
    cr_assert_str_eq(raw(c, "CONFIG SET requirepass sesame"), "+OK\r\n");
    redisFree(c);
    char args[256], out[4096];
    snprintf(args, sizeof(args), "take -p %d", s.port);
    cr_assert_eq(tool(args, out, sizeof(out)), 1, "no password: %s", out);
    cr_assert(strstr(out, "NOAUTH") || strstr(out, "Authentication"), "%s", out);
    snprintf(args, sizeof(args), "take -p %d -a sesame", s.port);
    cr_assert_eq(tool(args, out, sizeof(out)), 1, "the MANIFEST's rename failed: %s", out);
    cr_assert(strstr(out, "the backup failed (rdb_last_bgsave_status:err)"), "%s", out);
    cr_assert(out[0] != '/' && !strstr(out, "\n/"), "no path printed: %s", out);
    cr_assert_eq(expect_no_backup_accepted(&s, "manifest not renamed"), 1);
    snprintf(args, sizeof(args), "take -p %d -a sesame", s.port);
    cr_assert_eq(tool(args, out, sizeof(out)), 0, "then it works: %s", out);
    cr_assert(strstr(out, "/backups/backup-"), "%s", out);
    srv_cleanup(&s);
}
