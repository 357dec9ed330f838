/*
 * io_fault.c - the fault-injecting I/O table (io_fault.h). Installed only
 * when a test asks (ATTICDB_TEST_FAULTS); otherwise never on the path.
 * Counters are per process and, where a process has threads (the logger's
 * segment preparer), updated atomically.
 */
#include "io_fault.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io.h"

enum { F_OPEN, F_PWRITE, F_PREAD, F_FDATASYNC, F_FSYNC, F_FALLOCATE, F_FTRUNCATE, F_RENAME,
       F_UNLINK, F_CLAIM, F_NOPS };

static const char *const op_names[F_NOPS] = {"open",      "pwrite",    "pread",
                                             "fdatasync", "fsync",     "fallocate",
                                             "ftruncate", "rename",    "unlink",
                                             "claim"};

#define MAX_FAULTS 8
static struct {
    int op;
    long nth;
    int err;
} faults[MAX_FAULTS];
static int nfaults;
static _Atomic long calls[F_NOPS];

/* Count this call of op; return the errno to fail it with, or 0. */
static int hit(int op)
{
    long n = atomic_fetch_add(&calls[op], 1) + 1;
    for (int i = 0; i < nfaults; i++)
        if (faults[i].op == op && faults[i].nth == n) return faults[i].err;
    return 0;
}

#define FAIL_IF(op)                                                                                \
    do {                                                                                           \
        int e_ = hit(op);                                                                          \
        if (e_) {                                                                                  \
            errno = e_;                                                                            \
            return -1;                                                                             \
        }                                                                                          \
    } while (0)

int io_fault_point(enum io_fault_point point)
{
    if (!nfaults) return 0;
    return point == IO_FAULT_CLAIM && hit(F_CLAIM) != 0;
}

static int f_open(const char *p, int fl, mode_t m)
{
    FAIL_IF(F_OPEN);
    return io_real.open(p, fl, m);
}
static ssize_t f_pwrite(int fd, const void *b, size_t n, off_t o)
{
    FAIL_IF(F_PWRITE);
    return io_real.pwrite(fd, b, n, o);
}
static ssize_t f_pread(int fd, void *b, size_t n, off_t o)
{
    FAIL_IF(F_PREAD);
    return io_real.pread(fd, b, n, o);
}
static int f_fdatasync(int fd)
{
    FAIL_IF(F_FDATASYNC);
    return io_real.fdatasync(fd);
}
static int f_fsync(int fd)
{
    FAIL_IF(F_FSYNC);
    return io_real.fsync(fd);
}
static int f_fallocate(int fd, int mode, off_t o, off_t l)
{
    FAIL_IF(F_FALLOCATE);
    return io_real.fallocate(fd, mode, o, l);
}
static int f_ftruncate(int fd, off_t l)
{
    FAIL_IF(F_FTRUNCATE);
    return io_real.ftruncate(fd, l);
}
static int f_rename(const char *a, const char *b)
{
    FAIL_IF(F_RENAME);
    return io_real.rename(a, b);
}
static int f_unlink(const char *p)
{
    FAIL_IF(F_UNLINK);
    return io_real.unlink(p);
}

static const io_ops_t io_faulty = {
    .open = f_open,
    .close = NULL, /* filled from io_real at install */
    .pwrite = f_pwrite,
    .pread = f_pread,
    .fdatasync = f_fdatasync,
    .fsync = f_fsync,
    .fallocate = f_fallocate,
    .ftruncate = f_ftruncate,
    .rename = f_rename,
    .unlink = f_unlink,
};
static io_ops_t io_installed;

static int parse_errno(const char *s)
{
    static const struct {
        const char *name;
        int value;
    } names[] = {{"EIO", EIO},     {"ENOSPC", ENOSPC}, {"EDQUOT", EDQUOT},
                 {"EROFS", EROFS}, {"KILL", EINTR}};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (!strcmp(s, names[i].name)) return names[i].value;
    char *end;
    long v = strtol(s, &end, 10);
    return (*s && !*end && v > 0 && v < 4096) ? (int)v : -1;
}

int io_fault_install(const char *spec, const char *role)
{
    char buf[512];
    if (!spec || strlen(spec) >= sizeof(buf)) return -1;
    strcpy(buf, spec);
    nfaults = 0;
    char *save;
    for (char *item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        char *dot = strchr(item, '.');
        char *colon = strchr(item, ':');
        if (dot && (!colon || dot < colon)) {
            *dot = '\0';
            if (role && strcmp(item, role) != 0) continue;
            item = dot + 1;
        }
        char op[32], err[32];
        long nth;
        if (sscanf(item, "%31[a-z]:%ld:%31s", op, &nth, err) != 3 || nth < 1) return -1;
        int o = -1;
        for (int i = 0; i < F_NOPS; i++)
            if (!strcmp(op, op_names[i])) o = i;
        int e = parse_errno(err);
        if (o < 0 || e < 0 || nfaults == MAX_FAULTS) return -1;
        faults[nfaults].op = o;
        faults[nfaults].nth = nth;
        faults[nfaults].err = e;
        nfaults++;
    }
    if (nfaults) {
        io_installed = io_faulty;
        io_installed.close = io_real.close;
        io_set(&io_installed);
    }
    return nfaults;
}
