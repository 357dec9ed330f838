/*
 * checkpoint.h - the store's checkpoints (store/checkpoint.c): its state at
 * one LSN written to a file (format: common/ckpt.h), loaded at start so that
 * only the log after it is replayed; and the schedule that writes them from
 * a forked child while the store goes on applying.
 */
#ifndef ATTIC_STORE_CHECKPOINT_H
#define ATTIC_STORE_CHECKPOINT_H

#include <stdint.h>
#include <sys/types.h>

#include "config.h"
#include "store-internal.h"

/* Checkpoints kept: the newest and one before it, so a damaged newest still
 * leaves one to start from. */
#define STORE_CKPT_KEEP 2

/*
 * Write a checkpoint of ctx at store_applied(ctx) into dir, in this process
 * (the schedule calls it in a forked child). Returns 0 once the file is
 * durable under its final name; -1 (logged) when any step failed: then no
 * .ckpt of that LSN exists, or (only when the directory fsync failed) one
 * that is complete but whose name may not be durable.
 */
int store_ckpt_save(store_ctx_t *ctx, const char *dir);

/* Remove every checkpoint but the newest `keep`, and every .tmp (a
 * checkpoint that was never finished). Returns the number of files that
 * could not be removed. */
int store_ckpt_prune(const char *dir, unsigned keep);

/*
 * Load the checkpoint at path into ctx, which must be fresh (no record
 * applied). On success ctx is the state at the checkpoint's LSN (applied,
 * the apply clock, every database, the WATCH table) and 0 is returned. On
 * failure (-1, the reason in err) ctx holds part of it: destroy it.
 */
int store_ckpt_load(store_ctx_t *ctx, const char *path, char *err, size_t errlen);

/*
 * The state replay starts from: a new context loaded from the newest
 * checkpoint in cfg->dir that verifies and whose LSN lies in [min_lsn,
 * max_lsn] (the log present) and whose entries refer to nothing below
 * min_lsn, or an empty one. Checkpoints that are damaged or out of range
 * are logged and skipped. *from is where replay must start (the
 * checkpoint's LSN, or min_lsn). NULL when out of memory, or (*from ==
 * UINT64_MAX, logged) when min_lsn > 0 and no checkpoint can be loaded:
 * the log's start was deleted, and replaying what is left would lose data.
 */
store_ctx_t *store_ckpt_restore(const config_t *cfg, uint64_t seed, uint64_t min_lsn,
                                uint64_t max_lsn, uint64_t *from);

/*
 * The lowest LSN the entries of the checkpoint at path refer to
 * (UINT64_MAX: none), read from its first block without reading the rest.
 * Returns 0, or -1 when the file has no such block (written before D27) or
 * cannot be read: the caller must then assume it needs the whole log.
 */
int store_ckpt_min_ref(const char *path, uint64_t segment_size, uint64_t *min_ref);

/* ---- the schedule (store.c) ---- */

typedef struct store_ckpt_sched {
    const char *dir;
    uint64_t every;    /* checkpoint-bytes; 0 = no checkpoints written */
    uint64_t last_lsn; /* LSN of the newest checkpoint written or loaded */
    uint64_t next_lsn; /* start one once applied reaches this */
    pid_t child;       /* the child writing one, 0 = none */
    uint64_t child_lsn;
    uint64_t child_min_ref; /* lowest LSN its entries refer to (0: unknown) */
    uint64_t last_min_ref;  /* the same for the newest written by this process */
    uint64_t last_bytes;    /* its file's size */
    uint64_t child_start_ns;
    uint64_t last_poll_ns;
    uint64_t written, failed; /* counts, for the log and tests */
    /* A child running another job than a checkpoint of the data
     * directory (a backup, store/backup.c): its end is reported to
     * job_done instead of counting as a checkpoint. */
    void (*job_done)(void *arg, int ok);
    void *job_arg;
} store_ckpt_sched_t;

/* from: the LSN the state was restored at (a checkpoint's, or the log's
 * start). */
void store_ckpt_sched_init(store_ckpt_sched_t *s, const config_t *cfg, uint64_t from);
/* Between batches: reap a finished child (at most every few ms), and fork
 * a new one once `every` bytes were applied since the last one started. */
void store_ckpt_poll(store_ckpt_sched_t *s, store_ctx_t *ctx);
/*
 * Fork a child that runs job(ctx, arg) on its copy-on-write view of ctx
 * (nice, dying with the store, leaving with _exit(job's result != 0)),
 * when no child runs; done(arg, ok) is called once it is reaped (by
 * store_ckpt_poll or store_ckpt_wait). min_ref: the lowest LSN it reads in
 * the log, which segment deletion keeps while it runs (D27). Returns 0, or
 * -1 (a child already runs, or fork failed: logged).
 */
int store_ckpt_start_job(store_ckpt_sched_t *s, store_ctx_t *ctx, int (*job)(store_ctx_t *, void *),
                         void (*done)(void *, int), void *arg, uint64_t min_ref);
/* Wait until no child runs (reaping it). */
void store_ckpt_wait(store_ckpt_sched_t *s);
/* Stopping. clean: wait for a running child, then write a last checkpoint
 * at the final LSN (in a child, waited for); otherwise kill the child. */
void store_ckpt_finish(store_ckpt_sched_t *s, store_ctx_t *ctx, int clean);

#endif
