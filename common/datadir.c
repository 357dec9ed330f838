/*
 * datadir.c - the data directory's lock and the cut of its log at an LSN
 * (datadir.h).
 *
 * Run by the master (the lock, before anything else touches the directory),
 * by the logger's recovery (the cut of a torn tail, before the ring opens)
 * and by atticdb-check (the lock, then --cut). The lock is what makes all of
 * these exclusive: while it is held, no other process writes the log.
 *
 * Invariants: a cut never leaves zeros followed by valid records in a later
 * segment (later segments go first, and their removal is made durable before
 * any byte is zeroed); a cut is synced (fdatasync, directory fsync) before it
 * reports success. A crash in the middle of either leaves a directory the
 * next start reads: the lock is released by the kernel with its process, a
 * half-done cut is done again by recovery (the log still ends at the same
 * LSN).
 */
#include "datadir.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "io.h"
#include "log.h"
#include "seg.h"
#include "strutil.h"

#define CUT_CHUNK (1u << 20)

/* mkdir dir if missing; a new directory's name lives in its parent, so the
 * parent is fsynced: without it, a power cut could take the directory, and
 * every acked write in it, away. */
static int make_dir(const char *dir, char *err, size_t errlen)
{
    if (io->mkdir(dir, 0755) == 0) {
        char parent[4096];
        snprintf(parent, sizeof(parent), "%s", dir);
        if (io_fsync_dir(dirname(parent)) != 0) {
            int e = errno;
            str_fail(err, errlen, "Can't fsync the parent of the new data directory %s: %s", dir,
                     strerror(e));
            errno = e;
            return -1;
        }
    } else if (errno != EEXIST) {
        int e = errno;
        str_fail(err, errlen, "Can't create data directory %s: %s", dir, strerror(e));
        errno = e;
        return -1;
    }
    return 0;
}

int datadir_lock(const char *dir, int flags, char *err, size_t errlen)
{
    if ((flags & DATADIR_CREATE) && make_dir(dir, err, errlen) != 0) return -1;
    char path[4096];
    snprintf(path, sizeof(path), "%s/LOCK", dir);
    int fd = io->open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
        int e = errno;
        str_fail(err, errlen, "Can't open %s: %s", path, strerror(e));
        errno = e;
        return -1;
    }
    if (io->flock(fd, LOCK_EX | LOCK_NB) != 0) {
        int e = errno;
        if (e == EWOULDBLOCK) {
            char other[32] = "";
            ssize_t n = io->pread(fd, other, sizeof(other) - 1, 0);
            if (n > 0) other[strcspn(other, "\n")] = '\0';
            str_fail(err, errlen, "data directory %s is in use by another atticdb-server%s%s%s",
                     dir, n > 0 ? " (pid " : "", n > 0 ? other : "", n > 0 ? ")" : "");
        } else {
            str_fail(err, errlen, "Can't lock %s: %s", path, strerror(e));
        }
        io->close(fd);
        errno = e;
        return -1;
    }
    char pid[32];
    int n = snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
    if (io->ftruncate(fd, 0) != 0 || io->pwrite(fd, pid, (size_t)n, 0) != n)
        log_warn("Can't write the pid into %s", path);
    return fd;
}

/* Zero [from, seg_start + seg_size) of the segment at seg_start where it is
 * not zero; fdatasync when anything was written. */
static int zero_tail(const char *dir, uint64_t seg_start, uint64_t seg_size, uint64_t from,
                     uint64_t *zeroed, char *err, size_t errlen)
{
    char path[4096];
    seg_path(path, sizeof(path), dir, seg_start);
    int fd = io->open(path, O_RDWR, 0);
    if (fd < 0) {
        int e = errno;
        str_fail(err, errlen, "can't open %s: %s", path, strerror(e));
        errno = e;
        return -1;
    }
    unsigned char *chunk = malloc(CUT_CHUNK);
    unsigned char *zeros = calloc(1, CUT_CHUNK);
    int rc = -1, dirty = 0;
    const char *what = "zero";
    *zeroed = 0;
    if (!chunk || !zeros) {
        errno = ENOMEM;
        goto out;
    }
    for (uint64_t off = from - seg_start; off < seg_size; off += CUT_CHUNK) {
        size_t n = seg_size - off < CUT_CHUNK ? (size_t)(seg_size - off) : CUT_CHUNK;
        if (io_pread_all(fd, chunk, n, (off_t)off) != 0 && errno != ENODATA) {
            what = "read";
            goto out;
        }
        if (memcmp(chunk, zeros, n) == 0) continue;
        if (io_pwrite_all(fd, zeros, n, (off_t)off) != 0) goto out;
        dirty = 1;
        *zeroed += n;
    }
    if (dirty && io->fdatasync(fd) != 0) {
        what = "fdatasync";
        goto out;
    }
    rc = 0;
out:;
    int saved = errno;
    if (rc != 0) str_fail(err, errlen, "can't %s %s: %s", what, path, strerror(saved));
    free(chunk);
    free(zeros);
    io->close(fd);
    errno = saved;
    return rc;
}

int datadir_cut_log(const char *dir, uint64_t segment_size, const uint64_t *segs, size_t n,
                    uint64_t lsn, uint64_t *zeroed, char *err, size_t errlen)
{
    uint64_t seg = lsn & ~(segment_size - 1);
    int have = 0;
    for (size_t i = 0; i < n; i++)
        if (segs[i] == seg) have = 1;
    *zeroed = 0;
    if (!have) return 1;
    int removed = 0;
    for (size_t i = 0; i < n; i++) {
        if (segs[i] <= seg) continue;
        char path[4096];
        seg_path(path, sizeof(path), dir, segs[i]);
        if (io->unlink(path) != 0 && errno != ENOENT) {
            int e = errno;
            str_fail(err, errlen, "can't remove %s: %s", path, strerror(e));
            errno = e;
            return -1;
        }
        removed = 1;
    }
    if (removed && io_fsync_dir(dir) != 0) {
        int e = errno;
        str_fail(err, errlen, "can't fsync the data directory %s: %s", dir, strerror(e));
        errno = e;
        return -1;
    }
    return zero_tail(dir, seg, segment_size, lsn, zeroed, err, errlen) == 0 ? 0 : -1;
}

int datadir_shipped_read(const char *dir, uint64_t *from, uint64_t *to, char *err, size_t errlen)
{
    char path[4096], text[128];
    snprintf(path, sizeof(path), "%s/%s", dir, DATADIR_SHIPPED);
    *from = *to = DATADIR_SHIPPED_OPEN;
    int fd = io->open(path, O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0) {
        if (errno == ENOENT) return 0;
        return str_fail(err, errlen, "can't open %s: %s", path, strerror(errno));
    }
    ssize_t n = io->pread(fd, text, sizeof(text) - 1, 0);
    int e = errno;
    io->close(fd);
    if (n < 0) return str_fail(err, errlen, "can't read %s: %s", path, strerror(e));
    text[n] = 0;
    unsigned long long f, t;
    char tail;
    if (sscanf(text, "shipped %llu %llu%c", &f, &t, &tail) != 3 || tail != '\n' || f > t)
        return str_fail(err, errlen, "%s is not \"shipped FROM TO\"", path);
    *from = f;
    *to = t;
    return 1;
}

int datadir_shipped_write(const char *dir, uint64_t from, uint64_t to)
{
    char path[4096], tmp[4200], text[128];
    snprintf(path, sizeof(path), "%s/%s", dir, DATADIR_SHIPPED);
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    int len = snprintf(text, sizeof(text), "shipped %llu %llu\n", (unsigned long long)from,
                       (unsigned long long)to);
    int fd = io->open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int rc = fd < 0 ? -1 : io_pwrite_all(fd, text, (size_t)len, 0);
    if (!rc) rc = io->fdatasync(fd);
    if (fd >= 0) io->close(fd);
    if (!rc) rc = io->rename(tmp, path);
    if (rc) {
        int e = errno;
        io->unlink(tmp);
        errno = e;
        return -1;
    }
    return io_fsync_dir(dir);
}
