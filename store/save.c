/*
 * save.c - SAVE and BGSAVE (save.h): a backup of the live server, taken
 * without stopping writes (D38).
 *
 * Run by the store process (the handlers, the schedule) and by a child
 * forked from it (the writing, store_backup_write). The child is the
 * checkpoint child's kind (store/checkpoint.c: niced, dies with the
 * store, one child at a time): from its copy-on-write view of the state at
 * LSN X it writes a checkpoint into a new directory, copies beside it the
 * log segments the checkpoint refers to, the last one only up to X,
 * renames the directory to its final name and writes the MANIFEST into it
 * (common/backup.h), last. While it
 * runs, segment deletion keeps every segment from its first one on
 * (store_ckpt_start_job's min_ref, D27), so nothing it copies goes away.
 *
 * What a backup at X holds is exactly the state at X: every write
 * acknowledged before the BGSAVE or SAVE was read is below X (the request
 * reaches the store only once its connection's writes are durable, D19,
 * and the store applies what is durable first), and nothing above X is in
 * it: the last segment is zero after X, so a server started on the restored
 * directory recovers the log up to X and loads the checkpoint at X.
 *
 * A crash of the child, of the store or of the machine at any step leaves
 * at worst a backup-<X>.tmp directory, or a backup-<X> without MANIFEST:
 * the MANIFEST is written only once every other file is synced under the
 * final name, and a directory without one is never a backup (restore and
 * verify refuse it; the next backup of the same LSN removes it). The
 * server's own data directory is not touched.
 */
#include "save.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "backup.h"
#include "ckpt.h"
#include "io.h"
#include "io_fault.h"
#include "log.h"
#include "resp.h"
#include "seg.h"
#include "store/core/entry.h"
#include "store/core/live.h"
#include "store/types/handlers.h"

/* ---- the child's work ----------------------------------------------------- */

uint64_t store_backup_first(const store_ctx_t *ctx, uint64_t log_start)
{
    uint64_t ss = ctx->segment_size, x = ctx->applied;
    if (x == 0) return 0;
    uint64_t last = (x - 1) / ss * ss;
    /* A broken table protects the whole log (D27): so does the backup. */
    uint64_t low = ctx->live.broken ? log_start : st_live_lowest(&ctx->live);
    low = low / ss * ss;
    return low < last ? low : last;
}

static int fail(const char *what, const char *path, uint64_t lsn)
{
    log_warn("store: the backup at LSN %" PRIu64 " failed: %s %s: %s", lsn, what, path,
             strerror(errno));
    return -1;
}

/* Add dir/name to m with its size and CRC (the file was synced). */
static int add_file(backup_manifest_t *m, const char *dir, const char *name)
{
    char path[4096];
    int n = snprintf(path, sizeof(path), "%s/%s", dir, name);
    if (n < 0 || (size_t)n >= sizeof(path)) path[0] = '\0';
    uint64_t size;
    uint32_t crc;
    if (backup_file_crc(path, &size, &crc)) return fail("cannot read", path, m->lsn);
    if (backup_manifest_add(m, name, size, crc)) return fail("cannot list", path, m->lsn);
    return 0;
}

/* The checkpoint and the segments into tmp, each synced, listed in m. */
static int write_files(store_ctx_t *ctx, const char *tmp, uint64_t first, backup_manifest_t *m)
{
    uint64_t x = m->lsn, ss = m->segment_size;
    if (store_ckpt_save(ctx, tmp)) return -1; /* logged */
    char name[BACKUP_NAME_MAX];
    snprintf(name, sizeof(name), "checkpoint-%016" PRIx64 ".ckpt", x); /* ckpt_path's name */
    if (add_file(m, tmp, name)) return -1;
    for (uint64_t s = first; x > 0 && s <= (x - 1) / ss * ss; s += ss) {
        char src[4096], dst[4096];
        seg_path(src, sizeof(src), ctx->dir, s);
        seg_path(dst, sizeof(dst), tmp, s);
        /* Below X the segment is durable and never written again; the
         * logger may be appending above it right now. */
        uint64_t limit = x - s < ss ? x - s : ss, size;
        uint32_t crc;
        if (backup_copy_file(src, dst, limit, ss, &size, &crc)) return fail("cannot copy", src, x);
        snprintf(name, sizeof(name), "%s", strrchr(dst, '/') + 1);
        if (backup_manifest_add(m, name, size, crc)) return fail("cannot list", dst, x);
    }
    if (io_fsync_dir(tmp)) return fail("cannot fsync", tmp, x);
    return 0;
}

/* mkdir -p: backup-dir and the directories above it. */
static int make_dirs(const char *dir)
{
    char p[4096];
    snprintf(p, sizeof(p), "%s", dir);
    for (char *slash = strchr(p + 1, '/');; slash = strchr(slash + 1, '/')) {
        if (slash) *slash = '\0';
        if (io->mkdir(p, 0755) && errno != EEXIST) return -1;
        if (!slash) return 0;
        *slash = '/';
    }
}

int store_backup_write(store_ctx_t *ctx, const char *dir, uint64_t first, int64_t asked_ms)
{
    uint64_t t0 = shm_mono_ns();
    backup_manifest_t m = {
        .lsn = ctx->applied, .segment_size = ctx->segment_size, .time_ms = asked_ms};
    char tmp[4096], final[4096], err[512];
    backup_dir_path(tmp, sizeof(tmp), dir, m.lsn, 1);
    backup_dir_path(final, sizeof(final), dir, m.lsn, 0);
    /* The same LSN twice (no write in between): the first one is it, if
     * it still verifies; else it is made again. */
    backup_manifest_t old;
    if (backup_verify(final, &old, err, sizeof(err)) == 0) {
        int same = old.lsn == m.lsn;
        backup_manifest_free(&old);
        if (same) {
            log_info("store: backup at LSN %" PRIu64 ": %s is already complete", m.lsn, final);
            return 0;
        }
    }
    if (make_dirs(dir)) return fail("cannot make", dir, m.lsn);
    /* Leftovers of an interrupted one at this LSN: never a backup. */
    if (backup_remove_dir(tmp) || backup_remove_dir(final) || io->mkdir(tmp, 0755))
        return fail("cannot make", tmp, m.lsn);
    int rc = write_files(ctx, tmp, first, &m);
    if (!rc && io_fault_point(IO_FAULT_BACKUP_COPIED) == IO_FAULT_KILL) raise(SIGKILL);
    if (!rc && io->rename(tmp, final)) rc = fail("cannot rename", tmp, m.lsn);
    if (!rc && io_fsync_dir(dir)) rc = fail("cannot fsync", dir, m.lsn);
    if (!rc && io_fault_point(IO_FAULT_BACKUP_RENAMED) == IO_FAULT_KILL) raise(SIGKILL);
    /* Last: from here on it is a backup. */
    if (!rc && backup_manifest_write(final, &m))
        rc = fail("cannot write the manifest in", final, m.lsn);
    size_t nfiles = m.nfiles;
    backup_manifest_free(&m);
    if (rc) return -1;
    log_info("store: backup at LSN %" PRIu64 " written to %s: %zu files in %.3f s", ctx->applied,
             final, nfiles, (double)(shm_mono_ns() - t0) / 1e9);
    return 0;
}

/* ---- the schedule (in the store) ------------------------------------------ */

static int backup_job(store_ctx_t *ctx, void *arg)
{
    store_backup_t *b = arg;
    return store_backup_write(ctx, b->for_repl ? b->repl_dir : b->dir, b->first, b->asked_ms);
}

/* A replica's copy ended: the replication process takes it from here
 * (repl/sender.c); BGSAVE's counts and LASTSAVE are the operator's. */
static void copy_done(store_backup_t *b, int ok)
{
    b->running = 0;
    b->for_repl = 0;
    if (ok)
        log_info("store: the full copy for a replica at LSN %" PRIu64 " is written", b->lsn);
    else
        log_warn("store: the full copy for a replica at LSN %" PRIu64 " failed", b->lsn);
    if (!b->shm) return;
    atomic_store(&b->shm->repl.copy_lsn, b->lsn);
    atomic_store(&b->shm->repl.copy_failed, !ok);
    atomic_store(&b->shm->repl.copy_done, b->repl_serves);
}

/* rdb_changes_since_last_save: published on each turn of the loop, and
 * when a backup ends, before it is reported ended (a client that sees
 * the end sees the count it reset). */
static void publish_changes(store_backup_t *b)
{
    if (b->shm)
        atomic_store_explicit(&b->shm->backup_changes, b->records - b->base_records,
                              memory_order_relaxed);
}

static void publish_start(store_backup_t *b)
{
    if (!b->shm) return;
    atomic_store(&b->shm->backup_started_ms, b->asked_ms);
    atomic_store(&b->shm->backup_in_progress, 1);
}

static void backup_done(void *arg, int ok)
{
    store_backup_t *b = arg;
    if (b->for_repl) {
        copy_done(b, ok);
        return;
    }
    int64_t now = shm_now_ms();
    b->running = 0;
    b->last_ok = ok;
    if (ok) b->base_records = b->fork_records;
    if (ok)
        log_info("store: backup at LSN %" PRIu64 " complete", b->lsn);
    else
        log_warn("store: the backup at LSN %" PRIu64 " failed (the server's log says why)", b->lsn);
    if (!b->shm) return;
    shm_t *s = b->shm;
    atomic_store(&s->backup_last_failed, !ok);
    atomic_store(&s->backup_last_secs, (now - b->asked_ms + 500) / 1000);
    publish_changes(b);
    if (ok) {
        atomic_store(&s->backup_last_lsn, b->lsn);
        atomic_store(&s->backup_last_ms, now);
        atomic_fetch_add(&s->backup_saves, 1);
    }
    atomic_store(&s->backup_in_progress, b->wanted);
}

/* Fork the child. Returns 0, or -1 (the failure published). */
static int start(store_backup_t *b, store_ctx_t *ctx)
{
    uint64_t log_start = b->shm ? atomic_load(&b->shm->log_start_lsn) : 0;
    if (!b->for_repl) b->wanted = 0;
    b->first = store_backup_first(ctx, log_start);
    b->lsn = store_applied(ctx);
    b->fork_records = b->records;
    b->running = 1;
    log_info("store: writing a backup at LSN %" PRIu64 " into %s", b->lsn,
             b->for_repl ? b->repl_dir : b->dir);
    if (store_ckpt_start_job(b->sched, ctx, backup_job, backup_done, b, b->first) == 0) return 0;
    backup_done(b, 0);
    return -1;
}

void store_backup_init(store_backup_t *b, const config_t *cfg, store_ckpt_sched_t *sched,
                       shm_t *shm, store_ctx_t *ctx)
{
    memset(b, 0, sizeof(*b));
    backup_dir_resolve(cfg, b->dir, sizeof(b->dir));
    snprintf(b->repl_dir, sizeof(b->repl_dir), "%s/repl-copy", cfg->dir);
    b->sched = sched;
    b->shm = shm;
    b->last_ok = 1;
    ctx->backup = b;
    /* A copy asked for and not served (its writer died with a store) is
     * written again. */
    if (shm) b->repl_serves = atomic_load(&shm->repl.copy_done);
    /* A predecessor's child died with it (PR_SET_PDEATHSIG). */
    if (shm && atomic_exchange(&shm->backup_in_progress, 0)) {
        log_warn("store: the backup in progress when the store died was not finished");
        atomic_store(&shm->backup_last_failed, 1);
    }
}

void store_backup_poll(store_backup_t *b, store_ctx_t *ctx)
{
    if (b->wanted && !b->sched->child) start(b, ctx);
    uint32_t copy = b->shm ? atomic_load(&b->shm->repl.copy_wanted) : 0;
    if (!b->running && !b->sched->child && copy != b->repl_serves) {
        b->for_repl = 1;
        b->repl_serves = copy;
        start(b, ctx);
    }
    publish_changes(b);
}

/* ---- the commands --------------------------------------------------------- */

#define BACKUP_NO_PROCESS "ERR SAVE and BGSAVE need the store process"
#define BACKUP_RUNNING    "ERR Background save already in progress"

/* Without a store process, or while a backup is written: the error. */
static int refused(const store_backup_t *b, buf_t *r)
{
    if (!b || b->running) resp_error(r, b ? BACKUP_RUNNING : BACKUP_NO_PROCESS);
    return !b || b->running;
}

/* SAVE: write a backup now and answer once it is complete, as Redis'
 * SAVE answers once its file is written. The store waits meanwhile (reads
 * and stateful writes too, as Redis' SAVE blocks the whole server): BGSAVE
 * is the command for a live server. */
void st_read_save(store_ctx_t *ctx, const read_args_t *a, buf_t *r)
{
    (void)a;
    store_backup_t *b = ctx->backup;
    if (refused(b, r)) return;
    store_ckpt_wait(b->sched); /* a checkpoint child finishes first */
    if (!b->wanted) b->asked_ms = shm_now_ms();
    publish_start(b);
    if (start(b, ctx) == 0) store_ckpt_wait(b->sched);
    if (b->last_ok)
        resp_simple(r, "OK");
    else
        resp_error(r, "ERR");
}

/* BGSAVE [SCHEDULE]: started at the next turn of the store's loop, or
 * once the checkpoint child that runs ends. */
void st_read_bgsave(store_ctx_t *ctx, const read_args_t *a, buf_t *r)
{
    store_backup_t *b = ctx->backup;
    if (a->argc > 1 ||
        (a->argc == 1 &&
         !(a->argv[0].len == 8 && strncasecmp((const char *)a->argv[0].ptr, "schedule", 8) == 0))) {
        resp_error(r, "ERR syntax error");
        return;
    }
    if (refused(b, r)) return;
    int queued = b->wanted || b->sched->child;
    if (!b->wanted) {
        b->wanted = 1;
        b->asked_ms = shm_now_ms();
        publish_start(b);
    }
    resp_simple(r, queued ? "Background saving scheduled" : "Background saving started");
}
