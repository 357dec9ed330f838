/*
 * segfile.c - creating and opening log segments. Run by the logger (its
 * main thread at recovery, its preparer thread ahead of the write position).
 *
 * A segment is pre-allocated by writing zeros, not with fallocate alone: an
 * ext4 extent that is allocated but unwritten turns "written" on first write,
 * a metadata change that every fdatasync would then have to journal. With the
 * blocks already written, the fdatasync of an append flushes data only.
 * A crash while creating leaves at most a `.tmp` file, removed next time.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io.h"
#include "logger.h"
#include "seg.h"

#define ZERO_CHUNK (1u << 20)

int segfile_create(const char *dir, uint64_t start_lsn, uint64_t size, int gentle)
{
    char path[4096], tmp[4200];
    seg_path(path, sizeof(path), dir, start_lsn);
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    io->unlink(tmp);
    int fd = io->open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) return -1;
    /* Reserve the space first so a full disk shows up here, before any
     * write, rather than halfway through the zeros. */
    if (io->fallocate(fd, 0, 0, (off_t)size) != 0 && errno != EOPNOTSUPP) goto fail;
    void *zeros = calloc(1, ZERO_CHUNK);
    if (!zeros) {
        errno = ENOMEM;
        goto fail;
    }
    for (uint64_t off = 0; off < size; off += ZERO_CHUNK) {
        size_t n = size - off < ZERO_CHUNK ? (size_t)(size - off) : ZERO_CHUNK;
        if (io_pwrite_all(fd, zeros, n, (off_t)off) != 0) {
            free(zeros);
            goto fail;
        }
        /* While the log is being written, push the zeros out a chunk at a
         * time: one fdatasync of a whole dirty segment at the end would
         * hold the device for tens of milliseconds, and every commit
         * behind it. (A hint only: the fdatasync below is what counts.) */
        if (gentle)
            io->sync_file_range(fd, (off_t)off, (off_t)n,
                                SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER);
    }
    free(zeros);
    if (io->fdatasync(fd) != 0) goto fail;
    if (io->close(fd) != 0) {
        fd = -1;
        goto fail;
    }
    fd = -1;
    if (io->rename(tmp, path) != 0) goto fail;
    if (io_fsync_dir(dir) != 0) goto fail;
    return 0;
fail:;
    int saved = errno;
    if (fd >= 0) io->close(fd);
    io->unlink(tmp);
    errno = saved;
    return -1;
}

int segfile_open(const char *dir, uint64_t start_lsn, int extra_flags)
{
    char path[4096];
    seg_path(path, sizeof(path), dir, start_lsn);
    return io->open(path, O_RDWR | extra_flags, 0);
}

int segfile_check(const char *dir, uint64_t start_lsn, uint64_t size)
{
    char path[4096];
    struct stat st;
    seg_path(path, sizeof(path), dir, start_lsn);
    if (io->stat(path, &st) != 0) return errno == ENOENT ? 0 : -1;
    if ((uint64_t)st.st_size != size) {
        errno = EFBIG; /* not a segment of this segment-size */
        return -1;
    }
    return 1;
}
