/*
 * fullcopy.c - the swap of a replica's full copy into its data directory
 * (fullcopy.h, docs/DECISIONS.md D50).
 *
 * Run by: the master, at its start, before it forks the logger: no process
 * has the log open. Invariant: the data directory holds either the old log
 * and checkpoints, or (once `incoming/MOVED` is synced) the copy's files
 * and nothing else of the log; `old/` is never read. A crash at any step
 * (the fault point "replswapped" kills the master once the copy is in place
 * and the old files are not yet removed) is finished by the next start.
 */
#include "fullcopy.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backup.h"
#include "ckpt.h"
#include "io.h"
#include "io_fault.h"
#include "log.h"
#include "seg.h"
#include "strutil.h"

void fullcopy_path(char *out, size_t outlen, const char *dir, int old)
{
    snprintf(out, outlen, "%s/%s", dir, old ? FULLCOPY_OLD : FULLCOPY_INCOMING);
}

static void join(char *out, size_t outlen, const char *dir, const char *name)
{
    int n = snprintf(out, outlen, "%s/%s", dir, name);
    if (n < 0 || (size_t)n >= outlen) out[0] = '\0';
}

/* Rename path into dir `to` under its own name. */
static int move_into(const char *path, const char *to)
{
    char dst[4096];
    join(dst, sizeof(dst), to, strrchr(path, '/') + 1);
    return io->rename(path, dst);
}

/* The old log and checkpoints (finished and .tmp) of dir into old. */
static int move_old(const char *dir, const char *old)
{
    uint64_t *lsns;
    size_t n;
    char path[4096];
    if (seg_list(dir, &lsns, &n)) return -1;
    int rc = 0;
    for (size_t i = 0; !rc && i < n; i++) {
        seg_path(path, sizeof(path), dir, lsns[i]);
        rc = move_into(path, old);
    }
    free(lsns);
    for (int tmp = 0; !rc && tmp < 2; tmp++) {
        if (ckpt_list(dir, tmp, &lsns, &n)) return -1;
        for (size_t i = 0; !rc && i < n; i++) {
            ckpt_path(path, sizeof(path), dir, lsns[i], tmp);
            rc = move_into(path, old);
        }
        free(lsns);
    }
    return rc;
}

/* Create dir/name, synced (a marker). */
static int write_marker(const char *dir, const char *name)
{
    char path[4096];
    join(path, sizeof(path), dir, name);
    int fd = io->open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return -1;
    int rc = io->fsync(fd);
    io->close(fd);
    return rc ? -1 : io_fsync_dir(dir);
}

/* 1 when dir/name exists, 0 when it does not, -1 when stat fails otherwise
 * (errno set): never taken for "absent", which would discard a copy. */
static int exists(const char *dir, const char *name)
{
    char path[4096];
    struct stat st;
    join(path, sizeof(path), dir, name);
    if (io->stat(path, &st) == 0) return 1;
    return errno == ENOENT ? 0 : -1;
}

/* No complete copy: remove what an unfinished one or a finished swap left. */
static int tidy(const char *dir, const char *incoming, const char *old, char *err, size_t errlen)
{
    int had = exists(dir, FULLCOPY_INCOMING) != 0 || exists(dir, FULLCOPY_OLD) != 0;
    if (backup_remove_dir(incoming) || backup_remove_dir(old) || (had && io_fsync_dir(dir)))
        return str_fail(err, errlen, "cannot remove %s or %s: %s", incoming, old, strerror(errno));
    return 0;
}

int fullcopy_swap(const char *dir, uint64_t segment_size, uint64_t *lsn, char *err, size_t errlen)
{
    char incoming[4096], old[4096], why[512];
    fullcopy_path(incoming, sizeof(incoming), dir, 0);
    fullcopy_path(old, sizeof(old), dir, 1);
    int has = exists(incoming, BACKUP_MANIFEST), moved = exists(incoming, FULLCOPY_MOVED);
    if (has < 0 || moved < 0)
        return str_fail(err, errlen, "cannot look into %s: %s", incoming, strerror(errno));
    if (!has) {
        if (exists(dir, FULLCOPY_INCOMING) > 0 && !moved)
            log_warn("an unfinished full copy in %s is removed", incoming);
        return tidy(dir, incoming, old, err, errlen);
    }
    backup_manifest_t m;
    int bad = backup_manifest_read(incoming, &m, why, sizeof(why)) != 0;
    /* Half swapped: the old files are gone, so the copy must be finished
     * (a failure stops the start; the next one tries again). */
    if (bad && moved)
        return str_fail(err, errlen, "cannot read the MANIFEST of the copy being swapped in: %s",
                        why);
    /* Before MOVED every file is in incoming/: check them all, since the old
     * data is kept unless the copy is whole (an I/O error reading it also
     * keeps the old data: the replica then asks for a copy again). */
    if (!bad && !moved && m.segment_size != segment_size) {
        snprintf(why, sizeof(why), "segment-size %" PRIu64 ", not %" PRIu64, m.segment_size,
                 segment_size);
        bad = 1;
    }
    if (!bad && !moved && backup_verify(incoming, NULL, why, sizeof(why)) != 0) bad = 1;
    if (bad) {
        log_warn("the full copy in %s is not usable (%s): starting on the old data", incoming, why);
        if (m.files) backup_manifest_free(&m);
        return tidy(dir, incoming, old, err, errlen);
    }
    int rc = 0;
    const char *step = "";
    if (!moved) {
        step = "move the old log into";
        rc = (io->mkdir(old, 0755) && errno != EEXIST) || move_old(dir, old) || io_fsync_dir(old) ||
             io_fsync_dir(dir) || write_marker(incoming, FULLCOPY_MOVED);
    }
    for (size_t i = 0; !rc && i < m.nfiles; i++) {
        step = "move the copy into";
        char path[4096];
        join(path, sizeof(path), incoming, m.files[i].name);
        int e = exists(incoming, m.files[i].name);
        rc = e < 0 ? -1 : e ? move_into(path, dir) : 0;
    }
    if (!rc) rc = io_fsync_dir(dir);
    /* The MANIFEST first: without it the rest of incoming/ is never read. */
    char path[4096];
    join(path, sizeof(path), incoming, BACKUP_MANIFEST);
    if (!rc) {
        step = "finish the swap in";
        rc = io->unlink(path) || io_fsync_dir(incoming);
    }
    if (!rc && io_fault_point(IO_FAULT_REPL_SWAPPED) == IO_FAULT_KILL) raise(SIGKILL);
    uint64_t at = m.lsn;
    backup_manifest_free(&m);
    if (rc) return str_fail(err, errlen, "cannot %s %s: %s", step, dir, strerror(errno));
    if (tidy(dir, incoming, old, err, errlen)) return -1;
    if (lsn) *lsn = at;
    log_info("the full copy of the leader at LSN %" PRIu64 " is now the data directory %s", at,
             dir);
    return 1;
}
