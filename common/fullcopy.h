/*
 * fullcopy.h - a replica's full copy in its data directory (docs/DECISIONS.md
 * D50): where the copy is written (`incoming/`), and the swap that turns a
 * complete copy into the data directory's log and checkpoint. Shared by the
 * replication process (repl/copy.c writes `incoming/`) and the master (the
 * swap, at its start, before any child runs); neither knows the other's code.
 *
 * A copy is complete when `incoming/MANIFEST` verifies (common/backup.h's
 * format: the leader's backup, byte for byte): it is written last, after
 * every file and the directory were synced, so it is the copy's fsync'd
 * marker. The swap then moves the old log and checkpoints into `old/`,
 * writes `incoming/MOVED` (synced), moves the copy's files into the data
 * directory, removes the MANIFEST, MOVED and `incoming/`, then `old/`. A
 * swap cut at any step is finished by the next one (MOVED says the old files
 * are gone, so the next swap moves only the copy's); an `incoming/` without a
 * MANIFEST is an unfinished copy and is removed: the server starts on its
 * old data or on the complete copy, never on a mix.
 */
#ifndef ATTIC_FULLCOPY_H
#define ATTIC_FULLCOPY_H

#include <stddef.h>
#include <stdint.h>

#define FULLCOPY_INCOMING "incoming"
#define FULLCOPY_OLD      "old"
#define FULLCOPY_MOVED    "MOVED"

/* "<dir>/incoming" (or "<dir>/old" with old set). */
void fullcopy_path(char *out, size_t outlen, const char *dir, int old);

/*
 * Finish what a full copy left in dir: swap in a complete copy (above),
 * remove an unfinished one and the old files of an earlier swap. Runs in
 * the master before the logger recovers the log. Returns 1 when a copy was
 * swapped in (its LSN in *lsn when not NULL), 0 when there was none to swap,
 * -1 with the reason in err (an I/O error: the server must not start, since
 * the next attempt finishes the swap).
 */
int fullcopy_swap(const char *dir, uint64_t segment_size, uint64_t *lsn, char *err, size_t errlen);

#endif
