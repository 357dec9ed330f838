/*
 * io.h - the I/O seam. Every call that touches the data directory (its
 * files, its lock, its listing, the directory itself) goes through io_ops,
 * so tests can replace it to fail the Nth call with a chosen errno or to
 * simulate a power cut (STYLE.md, convention 7; common/io_fault.h). Each
 * entry behaves as the system call of the same name: same arguments, same
 * results, errno set on failure.
 */
#ifndef ATTIC_IO_H
#define ATTIC_IO_H

#include <dirent.h>
#include <sys/stat.h>
#include <sys/types.h>

typedef struct io_ops {
    int (*open)(const char *path, int flags, mode_t mode);
    int (*close)(int fd);
    ssize_t (*pwrite)(int fd, const void *buf, size_t n, off_t off);
    ssize_t (*pread)(int fd, void *buf, size_t n, off_t off);
    int (*fdatasync)(int fd);
    int (*fsync)(int fd);
    int (*fallocate)(int fd, int mode, off_t off, off_t len);
    int (*ftruncate)(int fd, off_t len);
    int (*rename)(const char *from, const char *to);
    int (*unlink)(const char *path);
    int (*mkdir)(const char *path, mode_t mode);
    int (*flock)(int fd, int op);
    int (*stat)(const char *path, struct stat *st);
    /* A write-back hint (the logger's gentle segment zero-fill). */
    int (*sync_file_range)(int fd, off_t off, off_t n, unsigned int flags);
    /* Listing a directory: readdir returns NULL at the end with errno
     * unchanged, or NULL with errno set on an error (set errno to 0 first
     * to tell them apart). */
    DIR *(*opendir)(const char *path);
    struct dirent *(*readdir)(DIR *d);
    int (*closedir)(DIR *d);
    /* An fdatasync that runs asynchronously (the logger's io_uring path,
     * log-sync uring): sync_begin is called just before one is submitted
     * for the writes made so far on `file` (the fd they were made on; the
     * sync itself may run on another fd of the same file), and fills a
     * token; sync_end is called with the token and the kernel's result (0
     * or -errno) when it completes, and returns the result to believe.
     * sync_begin returns 0, or an errno for a sync that must not be
     * submitted. The real seam passes results through. */
    int (*sync_begin)(int file, unsigned long long *token);
    int (*sync_end)(int file, unsigned long long token, int res);
    /* A read that ran asynchronously (the store's io_uring reads of
     * values, read-io uring): called with the kernel's result (bytes read,
     * or -errno) when it completes on fd; returns the result to believe.
     * The real seam passes it through. */
    int (*read_end)(int fd, int res);
} io_ops_t;

/* The table in use; io_real by default. */
extern const io_ops_t *io;
extern const io_ops_t io_real;

/* Replace the table (tests); returns the previous one. */
const io_ops_t *io_set(const io_ops_t *ops);

/* pwrite/pread all of n bytes (retrying short transfers and EINTR).
 * Return 0, or -1 with errno set. */
int io_pwrite_all(int fd, const void *buf, size_t n, off_t off);
int io_pread_all(int fd, void *buf, size_t n, off_t off);

/* fsync the directory at path (after creating or renaming a file in it). */
int io_fsync_dir(const char *path);

#endif
