/*
 * io.c - the I/O seam's real implementation (io.h). Every process that
 * touches the data directory calls through `io`. Tests swap the table to
 * inject failures; nothing here keeps state.
 */
#include "io.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

static int real_open(const char *path, int flags, mode_t mode)
{
    return open(path, flags | O_CLOEXEC, mode);
}

static int real_sync_begin(int file, unsigned long long *token)
{
    *token = 0;
    return 0;
}

static int real_sync_end(int file, unsigned long long token, int res)
{
    return res;
}

static int real_read_end(int fd, int res)
{
    (void)fd;
    return res;
}

const io_ops_t io_real = {
    .open = real_open,
    .close = close,
    .pwrite = pwrite,
    .pread = pread,
    .fdatasync = fdatasync,
    .fsync = fsync,
    .fallocate = fallocate,
    .ftruncate = ftruncate,
    .rename = rename,
    .unlink = unlink,
    .mkdir = mkdir,
    .flock = flock,
    .stat = stat,
    .sync_file_range = sync_file_range,
    .opendir = opendir,
    .readdir = readdir,
    .closedir = closedir,
    .sync_begin = real_sync_begin,
    .sync_end = real_sync_end,
    .read_end = real_read_end,
};

const io_ops_t *io = &io_real;

const io_ops_t *io_set(const io_ops_t *ops)
{
    const io_ops_t *old = io;
    io = ops ? ops : &io_real;
    return old;
}

int io_pwrite_all(int fd, const void *buf, size_t n, off_t off)
{
    const char *p = buf;
    while (n > 0) {
        ssize_t w = io->pwrite(fd, p, n, off);
        if (w < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        if (w == 0) {
            errno = EIO;
            return -1;
        }
        p += w;
        n -= (size_t)w;
        off += w;
    }
    return 0;
}

int io_pread_all(int fd, void *buf, size_t n, off_t off)
{
    char *p = buf;
    while (n > 0) {
        ssize_t r = io->pread(fd, p, n, off);
        if (r < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        if (r == 0) {
            /* Short file: the caller asked for bytes that are not there. */
            memset(p, 0, n);
            errno = ENODATA;
            return -1;
        }
        p += r;
        n -= (size_t)r;
        off += r;
    }
    return 0;
}

int io_fsync_dir(const char *path)
{
    int fd = io->open(path, O_RDONLY | O_DIRECTORY, 0);
    if (fd < 0) return -1;
    int rc = io->fsync(fd);
    int saved = errno;
    io->close(fd);
    errno = saved;
    return rc;
}
