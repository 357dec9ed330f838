/*
 * io_fault.h - a fault-injecting I/O seam for tests (STYLE.md, convention 7).
 *
 * A spec names calls to fail: "op:nth:errno[,op:nth:errno...]", e.g.
 * "fdatasync:30:EIO,fallocate:2:ENOSPC": the 30th fdatasync and the 2nd
 * fallocate this process makes through `io` fail with that errno (once; the
 * call is not performed). ops: open pwrite pread fdatasync fsync fallocate
 * ftruncate rename unlink mkdir flock stat sync_file_range opendir readdir
 * (a failing readdir returns NULL with errno set). errno: EIO, ENOSPC,
 * EDQUOT, EROFS, or a number; KILL makes the Nth call kill the process
 * (SIGKILL, before the call is made) instead of failing it.
 *
 * Besides I/O calls, named fault points in the code count too: "claim" is a
 * frontend's successful ring claim; when its Nth comes, the process kills
 * itself (SIGKILL) before committing the record, whatever errno says.
 * "start" is a child about to run its role: KILL makes it kill itself
 * (SIGKILL), a number N exit with status N instead ("*store.start:1:1": a
 * store that fails before it is ready, every time; 4 is KILL's number).
 * "release" is the store's Nth ring_release() that frees space: it dies
 * after rewriting the freed slots' commit markers and before moving tail;
 * "releasing" dies earlier in the same call, after publishing the tail it
 * is moving to and before rewriting anything (ring.c, two-phase release).
 * "failed" is the logger marking the log LOGGER_FAILED: it kills itself
 * right after, before it logs, wakes anyone or exits with EXIT_IOFAIL.
 * The store's checkpoint child (store/checkpoint.c) kills itself at
 * "ckptwritten" (its .tmp complete and synced, before the rename),
 * "ckptrenamed" (after the rename, before the directory fsync) and
 * "ckptdelete" (before each older checkpoint it removes). Counts are shared
 * with the processes forked after installing, so the Nth is the store's
 * Nth, whichever checkpoint child passes it.
 * A value larger than one record (D31): "bigchunk" is a frontend's Nth
 * committed CMD_CHUNK, "bigfinal" its Nth value whose chunks are all
 * committed and whose final record is not claimed yet, "bigapply" the
 * store's Nth applied CMD_CHUNK; KILL there kills the process.
 * XREADGROUP ... BLOCK (D46): "xrgparked" is the store's Nth waiter
 * queued by a live apply (its record applied, its reply deferred),
 * "xrgserved" its Nth waiter served inside the record that touched its
 * key (the PEL written, the reply built and not sent); KILL kills it.
 * A bulk taken as chunks while it arrives (D48): "streamwhole" is a frontend's
 * Nth such bulk whose chunks are all committed, before its request runs
 * (its final not claimed); "bigreply" the store's Nth part of a large
 * value's reply put in a frontend's channel, the rest not yet.
 * Access data in checkpoints (D49): "ckptaccess" is the checkpoint child
 * (a backup's too) with every entry written and none of the access
 * blocks, "accessload" the store loading a checkpoint with its entries in and its access data
 * not applied yet; KILL there kills the process.
 * A replica's full copy (D50): "replcopied" is the replication process
 * with the copy complete and synced in incoming/, not swapped in (KILL
 * there kills the whole server: the master first, so nothing finishes the
 * copy's restart); "replswapped" is the master's swap at its start, with
 * the copy's files in place and old/ not yet removed.
 * The replication backlog (D67): "backlogtrim" is the store's Nth pass
 * that published the bound it deletes below (shm repl.deleting_below)
 * and has not read the replicas' keep_lsn; "replpinned" the replication
 * process's Nth handshake whose LSN is published in keep_lsn and not
 * checked against the log's start yet; KILL there kills the process.
 * The read cache (D70): "cacheslot" is the store's Nth slot write (a
 * fill or an invalidation) with the slot's sequence odd and its bytes
 * half written; "cacheinval" the store's Nth invalidation done, with the
 * record that made it applied and the applied LSN not yet published;
 * KILL there kills the process. "cachemget" is a frontend's Nth MGET
 * answered from the cache with its first key read and the others not
 * yet; STALL there (below) holds it between the two. "cachetag" is the
 * store's Nth slot written or dropped whose bucket's tag line does not
 * show it yet (D75); KILL there kills the process.
 * A read request in parts (D58): "reqpart" is the store's Nth part of
 * one copied (more to come, the part not yet consumed), "reqpartsent" a
 * frontend's Nth part sent (more to come); KILL there kills the process.
 *
 * A slow step: errno "STALL" makes the Nth call wait 300 ms, then go on
 * as if no fault were set (a process descheduled at that point).
 * A stalled disk: errno "HANG" makes the Nth call never return (only the
 * thread that made it stops; e.g. "fallocate:2:HANG" leaves the logger's
 * segment preparer stuck on the next segment, as a slow zero-fill would).
 *
 * A power cut: "fdatasync:N:CUT" makes the Nth fdatasync, instead of
 * syncing, simulate losing power at that moment: every write made through
 * the seam since the last successful sync of its file is undone (its bytes
 * put back as they were), the last one torn (a random prefix of it
 * survives), and the whole process group is SIGKILLed. What a
 * restart then reads is what a disk would hold after the power came back.
 *
 * A write on an fd opened O_DSYNC (log-sync odsync and direct) is durable
 * when it returns, so it counts as an fdatasync: "fdatasync:N:EIO" fails it
 * before anything is written, "fdatasync:N:CUT" cuts the power during it
 * (a random prefix of it survives; the writes before it are durable).
 *
 * Asynchronous syncs (the logger's io_uring path, log-sync uring; io.h
 * sync_begin/sync_end) count as fdatasyncs: "fdatasync:N:EIO" fails the
 * Nth when it completes, after later ones may have succeeded, and
 * "fdatasync:N:CUT" cuts the power as the Nth is submitted, with earlier
 * ones still running. A sync that completed makes the writes made before
 * its submission durable, not the later ones. Once a process has used
 * them, a cut treats each 4 KiB page of the unsynced writes on its own:
 * lost, kept, or torn at 512-byte sectors, in any mix, as the kernel's
 * writeback and the syncs in flight could have left it.
 *
 * The server reads ATTICDB_TEST_FAULTS at start, as "role.op:nth:errno,..."
 * with role logger, store or frontend, and installs in each child the part
 * for its role; an entry without a role is for every child. The master
 * itself takes the entries of role "master" (its data-dir lock:
 * "master.flock:1:EIO"), atticdb-check those of role "check"; neither takes
 * entries without a role. It is a test hook: the master logs a warning when
 * it is set, atticdb-check prints one.
 */
#ifndef ATTIC_IO_FAULT_H
#define ATTIC_IO_FAULT_H

/* Install the faults of spec (entries for other roles are skipped when role
 * is not NULL: "logger.fdatasync:3:EIO" applies to role "logger" only),
 * replacing whatever was installed before (counts start again at 0; with
 * none, the real table is back). An entry applies to a slot's first process
 * only, unless it starts with '*' ("*store.start:1:KILL": every
 * incarnation, to make a crash loop). Returns the number of faults
 * installed, or -1 when the spec is malformed. */
int io_fault_install(const char *spec, const char *role, int first_incarnation);

/* Fault points (not I/O calls). */
enum io_fault_point {
    IO_FAULT_CLAIM = 0,     /* "claim": a frontend's successful ring claim */
    IO_FAULT_START = 1,     /* "start": a child process about to run its role */
    IO_FAULT_RELEASE = 2,   /* "release": ring_release between invalidation and tail */
    IO_FAULT_RELEASING = 3, /* "releasing": ring_release between releasing and invalidation */
    IO_FAULT_FAILED = 4,    /* "failed": the logger just marked LOGGER_FAILED */
    /* The store's checkpoint child (common/ckpt.c, store/checkpoint.c): */
    IO_FAULT_CKPT_WRITTEN = 5, /* "ckptwritten": .tmp complete and synced, not renamed */
    IO_FAULT_CKPT_RENAMED = 6, /* "ckptrenamed": renamed, directory not yet fsynced */
    IO_FAULT_CKPT_DELETE = 7,  /* "ckptdelete": before removing each older checkpoint */
    /* The store deleting a log segment nothing refers to (store/compact.c): */
    IO_FAULT_SEG_DELETE = 8,  /* "segdelete": before unlinking a segment */
    IO_FAULT_SEG_DELETED = 9, /* "segdeleted": unlinked, directory not yet fsynced */
    IO_FAULT_RELOCATED = 10,  /* "relocated": a CMD_RELOCATE just moved a value */
    /* Backups (common/backup.c, store/backup.c; D38): */
    IO_FAULT_BACKUP_COPIED = 11,   /* "backupcopied": files synced in the .tmp dir, not renamed */
    IO_FAULT_BACKUP_RENAMED = 12,  /* "backuprenamed": the dir renamed, no MANIFEST yet */
    IO_FAULT_BACKUP_MANIFEST = 13, /* "backupmanifest": MANIFEST.tmp synced, not renamed */
    IO_FAULT_RESTORE_COPIED = 14,  /* "restorecopied": restore's copy synced, not renamed */
    /* A value larger than one record (D31): */
    IO_FAULT_BIG_CHUNK = 15, /* "bigchunk": a frontend committed one CMD_CHUNK */
    IO_FAULT_BIG_FINAL = 16, /* "bigfinal": every chunk committed, the final not claimed */
    IO_FAULT_BIG_APPLY = 17, /* "bigapply": the store applied a CMD_CHUNK */
    /* XREADGROUP ... BLOCK (D46), the store applying live: */
    IO_FAULT_XRG_PARKED = 18, /* "xrgparked": a waiter queued, its reply deferred */
    IO_FAULT_XRG_SERVED = 19, /* "xrgserved": a waiter served (PEL written), no reply sent */
    /* A large bulk taken as it arrives, a large value's reply in parts (D48): */
    IO_FAULT_STREAM_WHOLE = 20, /* "streamwhole": a streamed bulk all in chunks, request not run */
    IO_FAULT_BIG_REPLY = 21,    /* "bigreply": the store sent a part of a large value's reply */
    /* Access data in checkpoints (store/checkpoint.c, D49): */
    IO_FAULT_CKPT_ACCESS = 22, /* "ckptaccess": the child wrote the entries, not the access data */
    IO_FAULT_ACCESS_LOAD = 23, /* "accessload": entries loaded, the access data not yet applied */
    /* A replica's full copy (repl/copy.c, common/fullcopy.c; D50): */
    IO_FAULT_REPL_COPIED = 24,  /* "replcopied": incoming/ complete and synced, not swapped */
    IO_FAULT_REPL_SWAPPED = 25, /* "replswapped": the copy in place, old/ not yet removed */
    /* A read request in parts (D58): */
    IO_FAULT_REQ_PART = 26,      /* "reqpart": the store took a part, more are to come */
    IO_FAULT_REQ_PART_SENT = 27, /* "reqpartsent": a frontend sent a part, more are to come */
    /* Paged collections (store/core/hash_paged.c, store/pager.c; D60): */
    IO_FAULT_PAGE_IN = 28,      /* "pagein": a CMD_PAGEIN just made a collection paged */
    IO_FAULT_PAGED = 29,        /* "paged": a CMD_PAGE just replaced ranges (in RAM) */
    IO_FAULT_PAGE_WRITTEN = 30, /* "pagewritten": the store committed a page record */
    /* Lists in pages (store/core/list.c, store/core/list_page.c; D63): */
    IO_FAULT_LIST_PAGED = 31,   /* "listpaged": a CMD_LPAGE just replaced chunks (in RAM) */
    IO_FAULT_LIST_WRITTEN = 32, /* "listpagewritten": the store committed a CMD_LPAGE */
    IO_FAULT_LIST_DIRTY = 33,   /* "listdirty": a write copied a list page into RAM */
    /* Streams in pages (store/core/stream.c, store/core/stream_page.c; D64): */
    IO_FAULT_STREAM_PAGED = 34,   /* "streampaged": a CMD_SPAGE just replaced chunks (in RAM) */
    IO_FAULT_STREAM_WRITTEN = 35, /* "streampagewritten": the store committed a CMD_SPAGE */
    IO_FAULT_STREAM_DIRTY = 36,   /* "streamdirty": XDEL copied a stream page into RAM */
    /* Sorted sets in pages (store/core/zset.c, store/pager.c; D65): */
    IO_FAULT_ZSET_PAGED = 37,   /* "zsetpaged": a page record just changed a sorted set (in RAM) */
    IO_FAULT_ZSET_WRITTEN = 38, /* "zsetwritten": the store committed a sorted set's page record */
    IO_FAULT_ZSET_DIRTY = 39,   /* "zsetdirty": a write copied a sorted set's page into RAM */
    /* The replication backlog (store/compact.c, repl/backlog.c; D67): */
    IO_FAULT_BACKLOG_TRIM = 40, /* "backlogtrim": deleting_below published, keep_lsn not read */
    IO_FAULT_REPL_PINNED = 41,  /* "replpinned": a handshake's LSN in keep_lsn, not checked */
    /* The read cache (common/rcache.c, D70): */
    IO_FAULT_CACHE_SLOT = 42,  /* "cacheslot": the store is writing a slot (its sequence odd) */
    IO_FAULT_CACHE_INVAL = 43, /* "cacheinval": a key invalidated, the applied LSN not published */
    IO_FAULT_CACHE_MGET =
        44, /* "cachemget": an MGET's first key read from the cache, not the rest */
    IO_FAULT_CACHE_TAG = 45, /* "cachetag": a slot written or dropped, its tag not (D75) */
};

/* Count one pass through point; when a fault is due there, its errno
 * (IO_FAULT_KILL for KILL), else 0. */
#define IO_FAULT_KILL 4 /* "KILL" in a spec (EINTR's value) */
int io_fault_point(enum io_fault_point point);

#endif
