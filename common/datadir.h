/*
 * datadir.h - the data directory as a whole: its lock, and cutting its log
 * at an LSN. Used by the master (the lock), the logger's recovery (the cut
 * of a torn tail) and atticdb-check (the lock and --cut). The segments'
 * names and their listing are common/seg.h's. Every call goes through the
 * I/O seam (common/io.h), so each can be failed by a test.
 */
#ifndef ATTIC_DATADIR_H
#define ATTIC_DATADIR_H

#include <stddef.h>
#include <stdint.h>

/* datadir_lock flags. */
#define DATADIR_CREATE 1 /* create the directory when missing */

/*
 * Take the data directory's lock for this process: dir/LOCK, an exclusive
 * flock taken without waiting, holding our pid as text. With DATADIR_CREATE
 * a missing directory is made first, and its parent fsynced so that the new
 * name survives a power cut. The lock lasts as long as the returned fd is
 * open (close-on-exec: children forked after keep it until they exit).
 * Returns the fd, or -1 with errno set and a message in err:
 *   EWOULDBLOCK   another process holds the lock: "data directory D is in use
 *                 by another atticdb-server (pid P)" (its pid when readable)
 *   anything else the mkdir, the parent's fsync, the open or the flock
 *                 failed ("Can't create data directory D: why", ...)
 * Failing to write the pid is only logged (log_warn): the lock is held.
 */
int datadir_lock(const char *dir, int flags, char *err, size_t errlen);

/*
 * Cut the log at lsn (a record boundary): remove every segment after the
 * one holding lsn, fsync the directory, then zero [lsn, end of its segment)
 * where it is not zero already and fdatasync it. segs[0, n) are the start
 * LSNs of the segments present (seg_list). Removal comes first so that a
 * crash half way leaves either the old log (its end found again at lsn)
 * or the cut one; never zeros before later records that would read as
 * damage in the middle of the log.
 * Returns 0 with *zeroed the bytes rewritten (0: the tail was already
 * zero), 1 when no segment in segs holds lsn (nothing is changed), or -1
 * with errno set and a message in err. What is cut is gone.
 */
int datadir_cut_log(const char *dir, uint64_t segment_size, const uint64_t *segs, size_t n,
                    uint64_t lsn, uint64_t *zeroed, char *err, size_t errlen);

/*
 * The shipped part of the log (docs/DECISIONS.md D56). A replica's log holds
 * its leader's records, whose durable_gap speaks of the leader's fsyncs,
 * not this server's: recovery must not take them as proof that a torn point
 * was durable here. The file SHIPPED in the data directory names the LSNs
 * [from, to) whose records may have come from a leader; to is
 * DATADIR_SHIPPED_OPEN while the server follows one. Written by the
 * replication process: before its first claim of a leader's record (from:
 * its durable LSN then, all below it durable), and at REPLICAOF NO ONE
 * (to: the end of the last record it claimed; what follows is the server's
 * own). Read by recovery and atticdb-check.
 */
#define DATADIR_SHIPPED      "SHIPPED"
#define DATADIR_SHIPPED_OPEN UINT64_MAX

/* 1 with the range read, 0 with from = to = DATADIR_SHIPPED_OPEN when there
 * is no file (nothing shipped), -1 with a message in err when unreadable. */
int datadir_shipped_read(const char *dir, uint64_t *from, uint64_t *to, char *err, size_t errlen);

/* Replace the file durably (write, fdatasync, rename, directory fsync).
 * 0, or -1 with errno set. */
int datadir_shipped_write(const char *dir, uint64_t from, uint64_t to);

#endif
