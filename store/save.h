/*
 * save.h - SAVE and BGSAVE in the store (store/save.c): a backup of the
 * state at one LSN (a checkpoint and the log segments it needs, format in
 * common/backup.h) written by a child forked from the store, while the
 * store goes on applying and answering (D38).
 */
#ifndef ATTIC_STORE_SAVE_H
#define ATTIC_STORE_SAVE_H

#include <stdint.h>

#include "checkpoint.h"
#include "config.h"
#include "shm.h"
#include "store-internal.h"

typedef struct store_backup {
    char dir[4096];            /* backup-dir, made absolute against dir */
    shm_t *shm;                /* where the state is published (NULL: tests) */
    store_ckpt_sched_t *sched; /* whose child writes it */
    int wanted;                /* BGSAVE asked for one; not started yet */
    int running;               /* a child writes one */
    int last_ok;               /* how the last one ended */
    int64_t asked_ms;          /* when the one wanted or running was asked for */
    uint64_t first;            /* the running one's first segment */
    uint64_t lsn;              /* and its LSN */
    uint64_t records;          /* client writes applied since the store started */
    uint64_t fork_records;     /* records at the running one's fork */
    uint64_t base_records;     /* records at the last good one's fork */
    /* A full copy for a replica (D50): the same backup, written into
     * repl_dir for the replication process, outside BGSAVE's counts. */
    char repl_dir[4096];  /* dir/repl-copy */
    int for_repl;         /* the running one is a replica's copy */
    uint32_t repl_serves; /* the copy_wanted it serves */
} store_backup_t;

/* Set b up for ctx (its SAVE and BGSAVE handlers find it there), with
 * cfg's backup-dir, written by sched's children, published in shm. A
 * backup a dead predecessor had in progress is reported failed. */
void store_backup_init(store_backup_t *b, const config_t *cfg, store_ckpt_sched_t *sched,
                       shm_t *shm, store_ctx_t *ctx);

/* Between batches (after store_ckpt_poll): start the backup BGSAVE asked
 * for once no child runs, else a replica's full copy the replication
 * process asked for (shm repl.copy_wanted); publish the count of writes
 * since the last one. */
void store_backup_poll(store_backup_t *b, store_ctx_t *ctx);

/*
 * Write a backup of ctx at store_applied(ctx) into dir: a new
 * dir/backup-<LSN>.tmp holding a checkpoint and the segments from the one
 * starting at `first` to the one holding the LSN's last record (the last
 * copied only up to the LSN), renamed to dir/backup-<LSN> once synced,
 * then its MANIFEST. Runs in the child (or a test). Returns 0, or -1
 * (logged; what is left has no MANIFEST, and the next one removes it).
 */
int store_backup_write(store_ctx_t *ctx, const char *dir, uint64_t first, int64_t asked_ms);

/* The first segment a backup of ctx needs: the one holding the lowest LSN
 * ctx refers to (the log's start when the live table broke), at most the
 * one holding its last record. */
uint64_t store_backup_first(const store_ctx_t *ctx, uint64_t log_start);

#endif
