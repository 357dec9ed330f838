/*
 * logger.h - the logger process: the only writer of the log.
 */
#ifndef ATTIC_LOGGER_H
#define ATTIC_LOGGER_H

#include <stdint.h>

#include "config.h"
#include "shm.h"

/*
 * Body of the logger process. On the server's first start (logger_state
 * LOGGER_STARTING) it recovers the log: finds the end of the last valid
 * record, cuts a torn tail, and starts the ring there. A respawned logger
 * continues at durable_lsn: everything above it is still in the ring; one
 * that finds LOGGER_FAILED writes nothing and returns EXIT_IOFAIL at once.
 * Either first fsyncs the data directory. Then: group commit until shutdown. Returns the exit
 * status: 0, EXIT_FATAL (the log cannot be recovered) or EXIT_IOFAIL (a write or fdatasync failed;
 * never retried: contract 6).
 */
int logger_main(shm_t *shm, const config_t *cfg);

/* Segment files (logger/segfile.c). */

/*
 * Create the segment starting at start_lsn: written full of zeros under a
 * temporary name, fdatasync'ed, renamed into place, directory fsync'ed, so a
 * segment that exists under its real name is always whole. `gentle` (while
 * the log is being written) writes the zeros back a chunk at a time instead
 * of leaving one large flush to the end. Returns 0, or -1
 * with errno (ENOSPC when the disk is full: contract 8).
 */
int segfile_create(const char *dir, uint64_t start_lsn, uint64_t size, int gentle);

/* Open an existing segment for writing, with extra open flags (O_DSYNC).
 * Returns the fd or -1 with errno. */
int segfile_open(const char *dir, uint64_t start_lsn, int extra_flags);

/* Whether the segment starting at start_lsn exists under its name, with the
 * given size. Returns 1 (it does), 0 (no such file), or -1 with errno (EFBIG
 * for a file of another size, or stat's error). Only whole segments are
 * renamed into place (segfile_create), so one that exists is whole. */
int segfile_check(const char *dir, uint64_t start_lsn, uint64_t size);

/*
 * Recovery (logger/recover.c): scan the log in dir from its first segment,
 * return in *end the LSN after the last valid record and in *start the first
 * segment's LSN, cut (zero) whatever follows *end in its segment, and make
 * sure the segment holding *end exists. Returns 0, or -1 with a message in
 * err (a record that fails its check with valid records after it is
 * corruption in the middle of the log, not a torn tail).
 */
int logger_recover(const char *dir, uint64_t segment_size, uint64_t *start, uint64_t *end,
                   char *err, size_t errlen);

#endif
