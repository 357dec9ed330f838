/*
 * io_fault.c - the fault-injecting I/O table (io_fault.h). Installed only
 * when a test asks (ATTICDB_TEST_FAULTS); otherwise never on the path.
 * Counters are per process and, where a process has threads (the logger's
 * segment preparer), updated atomically.
 */
#include "io_fault.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "io.h"
#include "log.h"

enum {
    F_OPEN,
    F_PWRITE,
    F_PREAD,
    F_FDATASYNC,
    F_FSYNC,
    F_FALLOCATE,
    F_FTRUNCATE,
    F_RENAME,
    F_UNLINK,
    F_MKDIR,
    F_FLOCK,
    F_STAT,
    F_SYNC_FILE_RANGE,
    F_OPENDIR,
    F_READDIR,
    F_CLAIM,
    F_START,
    F_RELEASE,
    F_RELEASING,
    F_FAILED,
    F_CKPT_WRITTEN,
    F_CKPT_RENAMED,
    F_CKPT_DELETE,
    F_SEG_DELETE,
    F_SEG_DELETED,
    F_RELOCATED,
    F_BACKUP_COPIED,
    F_BACKUP_RENAMED,
    F_BACKUP_MANIFEST,
    F_RESTORE_COPIED,
    F_BIG_CHUNK,
    F_BIG_FINAL,
    F_BIG_APPLY,
    F_CKPT_ACCESS,
    F_ACCESS_LOAD,
    F_STREAM_WHOLE,
    F_BIG_REPLY,
    F_XRG_PARKED,
    F_XRG_SERVED,
    F_REPL_COPIED,
    F_REPL_SWAPPED,
    F_REQ_PART,
    F_REQ_PART_SENT,
    F_PAGE_IN,
    F_PAGED,
    F_PAGE_WRITTEN,
    F_LIST_PAGED,
    F_LIST_WRITTEN,
    F_LIST_DIRTY,
    F_STREAM_PAGED,
    F_STREAM_WRITTEN,
    F_STREAM_DIRTY,
    F_ZSET_PAGED,
    F_ZSET_WRITTEN,
    F_ZSET_DIRTY,
    F_BACKLOG_TRIM,
    F_REPL_PINNED,
    F_CACHE_SLOT,
    F_CACHE_INVAL,
    F_CACHE_MGET,
    F_CACHE_TAG,
    F_NOPS
};

static const char *const op_names[F_NOPS] = {"open",
                                             "pwrite",
                                             "pread",
                                             "fdatasync",
                                             "fsync",
                                             "fallocate",
                                             "ftruncate",
                                             "rename",
                                             "unlink",
                                             "mkdir",
                                             "flock",
                                             "stat",
                                             "sync_file_range",
                                             "opendir",
                                             "readdir",
                                             "claim",
                                             "start",
                                             "release",
                                             "releasing",
                                             "failed",
                                             "ckptwritten",
                                             "ckptrenamed",
                                             "ckptdelete",
                                             "segdelete",
                                             "segdeleted",
                                             "relocated",
                                             "backupcopied",
                                             "backuprenamed",
                                             "backupmanifest",
                                             "restorecopied",
                                             "bigchunk",
                                             "bigfinal",
                                             "bigapply",
                                             "ckptaccess",
                                             "accessload",
                                             "streamwhole",
                                             "bigreply",
                                             "xrgparked",
                                             "xrgserved",
                                             "replcopied",
                                             "replswapped",
                                             "reqpart",
                                             "reqpartsent",
                                             "pagein",
                                             "paged",
                                             "pagewritten",
                                             "listpaged",
                                             "listpagewritten",
                                             "listdirty",
                                             "streampaged",
                                             "streampagewritten",
                                             "streamdirty",
                                             "zsetpaged",
                                             "zsetwritten",
                                             "zsetdirty",
                                             "backlogtrim",
                                             "replpinned",
                                             "cacheslot",
                                             "cacheinval",
                                             "cachemget",
                                             "cachetag"};

#define MAX_FAULTS 8
static struct {
    int op;
    long nth;
    int err;
} faults[MAX_FAULTS];
static int nfaults;
/* Call counts. In memory shared with the processes this one forks after
 * installing (the store's checkpoint children), so "store.fdatasync:2:EIO"
 * means the store's second fdatasync whichever child makes it; a process
 * the master starts installs afresh, so its counts are its own. */
static _Atomic long calls_private[F_NOPS];
static _Atomic long *calls = calls_private;

/* errno values standing for "simulate a power cut here" and "never return"
 * (not real errnos). */
#define FAULT_CUT   100000
#define FAULT_HANG  100001
#define FAULT_STALL 100002

/* Power-cut mode: the pre-image of every write not yet synced, per fd. */
typedef struct pending_write {
    struct pending_write *next;
    int fd;
    off_t off;
    size_t len;
    unsigned long long seq; /* order of the write, for asynchronous syncs */
    unsigned char *before;  /* the bytes the write replaced */
} pending_write_t;

static pthread_mutex_t pending_lock = PTHREAD_MUTEX_INITIALIZER;
static pending_write_t *pending; /* newest first */
static unsigned long long write_seq;
static int cut_armed;
/* Asynchronous syncs were used (log-sync uring): a cut then loses pages of
 * the unsynced writes at random rather than all of them (power_cut). */
static int cut_async;
/* fds opened O_DSYNC (log-sync odsync, direct): each write is also a sync. */
#define MAX_DSYNC_FD 1024
static _Atomic unsigned char dsync_fd[MAX_DSYNC_FD];

static int is_dsync(int fd)
{
    return fd >= 0 && fd < MAX_DSYNC_FD && atomic_load(&dsync_fd[fd]);
}

/* O_DIRECT wants aligned buffers and offsets; the seam's own reads and
 * undos are neither, so it lifts the flag around them. Returns the flags
 * to put back. */
static int lift_direct(int fd)
{
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0 && (fl & O_DIRECT)) fcntl(fd, F_SETFL, fl & ~O_DIRECT);
    return fl;
}

static void restore_direct(int fd, int fl)
{
    if (fl >= 0 && (fl & O_DIRECT)) fcntl(fd, F_SETFL, fl);
}

/* A sync of fd succeeded: writes made on it before `before` (in write_seq
 * order) are on the disk. */
static void forget_synced_before(int fd, unsigned long long before)
{
    pthread_mutex_lock(&pending_lock);
    for (pending_write_t **pp = &pending; *pp;) {
        pending_write_t *w = *pp;
        if (w->fd == fd && w->seq < before) {
            *pp = w->next;
            free(w->before);
            free(w);
        } else {
            pp = &w->next;
        }
    }
    pthread_mutex_unlock(&pending_lock);
}

static void forget_synced(int fd)
{
    forget_synced_before(fd, ~0ull);
}

static void remember_write(int fd, size_t len, off_t off)
{
    pending_write_t *w = malloc(sizeof(*w));
    unsigned char *before = malloc(len ? len : 1);
    if (!w || !before) abort();
    int fl = lift_direct(fd);
    ssize_t got = io_real.pread(fd, before, len, off);
    restore_direct(fd, fl);
    if (got < 0) got = 0;
    memset(before + got, 0, len - (size_t)got); /* past the end: it was not there */
    w->fd = fd;
    w->off = off;
    w->len = len;
    w->before = before;
    pthread_mutex_lock(&pending_lock);
    w->seq = write_seq++;
    w->next = pending;
    pending = w;
    pthread_mutex_unlock(&pending_lock);
}

/* The power goes: undo what was never synced (newest first, so the oldest
 * pre-image wins where writes overlap), tear the newest, and die with the
 * whole process group, as every process of a machine does. */
/* What the power cut left of a page of unsynced writes, the same for every
 * write that touches it (a hash of where it is and of the cut). */
enum { PAGE = 4096, SECTOR = 512 };
enum { PAGE_LOST, PAGE_KEPT, PAGE_TORN };
static unsigned long cut_salt;

static unsigned long mix(unsigned long x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdul;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ul;
    return x ^ (x >> 33);
}

static int page_fate(int fd, off_t page)
{
    return (int)(mix(cut_salt ^ ((unsigned long)fd << 48) ^ (unsigned long)page) % 3);
}

/* Whether a sector of a torn page reached the disk. */
static int sector_kept(int fd, off_t sector)
{
    return (int)(mix(~cut_salt ^ ((unsigned long)fd << 48) ^ (unsigned long)sector) & 1);
}

/* Undo the part of w in [from, to), if any. */
static void undo_range(const pending_write_t *w, off_t from, off_t to)
{
    lift_direct(w->fd);
    off_t a = w->off > from ? w->off : from;
    off_t b = w->off + (off_t)w->len < to ? w->off + (off_t)w->len : to;
    if (a >= b) return;
    ssize_t r = io_real.pwrite(w->fd, w->before + (a - w->off), (size_t)(b - a), a);
    (void)r;
}

/*
 * The cut with asynchronous syncs in flight: the kernel writes dirty pages
 * back in any order, and a sync that was running may have carried some of
 * them to the disk before the power went. So each 4 KiB page touched by an
 * unsynced write is lost (back to what was synced), kept (what the file
 * holds now), or torn (each 512-byte sector one or the other), and pages of
 * one batch fare differently: later pages may survive earlier ones.
 * Newest first, so the oldest pre-image wins where writes overlap.
 */
static void undo_pages(const pending_write_t *w)
{
    for (off_t page = w->off & ~(off_t)(PAGE - 1); page < w->off + (off_t)w->len; page += PAGE) {
        int fate = page_fate(w->fd, page);
        if (fate == PAGE_LOST) undo_range(w, page, page + PAGE);
        if (fate != PAGE_TORN) continue;
        for (off_t s = page; s < page + PAGE; s += SECTOR)
            if (!sector_kept(w->fd, s)) undo_range(w, s, s + SECTOR);
    }
}

static void power_cut(void)
{
    pthread_mutex_lock(&pending_lock);
    cut_salt = (unsigned long)random();
    int first = 1;
    for (pending_write_t *w = pending; w; w = w->next) {
        if (cut_async) {
            undo_pages(w);
            continue;
        }
        size_t keep = 0;
        /* Any prefix, not only whole sectors: batches are often smaller
         * than one, and the CRC must catch a record cut anywhere. */
        if (first) keep = (size_t)(random() % (long)w->len);
        first = 0;
        lift_direct(w->fd); /* the process dies next: nothing to restore */
        ssize_t r = io_real.pwrite(w->fd, w->before + keep, w->len - keep, w->off + (off_t)keep);
        (void)r;
    }
    /* The last line of the log: a test tells a cut from a failure by it
     * (a cut can come before the server is ready: the store's own records,
     * compaction's relocations at start, are synced too). */
    log_warn("I/O fault: simulated power cut (ATTICDB_TEST_FAULTS): every process dies now");
    kill(0, SIGKILL);
    _exit(137); /* not reached */
}

/* Count this call of op; return the errno to fail it with, or 0. A HANG
 * fault does not return: the calling thread waits for the process to die.
 * Fault points get KILL back as IO_FAULT_KILL and act on it themselves. */
static int hit(int op)
{
    long n = atomic_fetch_add(&calls[op], 1) + 1;
    for (int i = 0; i < nfaults; i++) {
        if (faults[i].op != op || faults[i].nth != n) continue;
        while (faults[i].err == FAULT_HANG)
            pause();
        if (faults[i].err == FAULT_STALL) {
            struct timespec ts = {0, 300 * 1000 * 1000};
            nanosleep(&ts, NULL);
            return 0;
        }
        return faults[i].err;
    }
    return 0;
}

/* hit() for an I/O call: a KILL fault kills the process right there,
 * before the call is made, as a crash at that instruction would (it is not
 * EINTR, which the callers would retry). */
static int hit_io(int op)
{
    int e = hit(op);
    if (e == IO_FAULT_KILL) {
        kill(getpid(), SIGKILL);
        pause(); /* not reached: SIGKILL can't be blocked */
    }
    return e;
}

#define FAIL_IF(op)                                                                                \
    do {                                                                                           \
        int e_ = hit_io(op);                                                                       \
        if (e_) {                                                                                  \
            errno = e_;                                                                            \
            return -1;                                                                             \
        }                                                                                          \
    } while (0)

int io_fault_point(enum io_fault_point point)
{
    static const int ops[] = {[IO_FAULT_CLAIM] = F_CLAIM,
                              [IO_FAULT_START] = F_START,
                              [IO_FAULT_RELEASE] = F_RELEASE,
                              [IO_FAULT_RELEASING] = F_RELEASING,
                              [IO_FAULT_FAILED] = F_FAILED,
                              [IO_FAULT_CKPT_WRITTEN] = F_CKPT_WRITTEN,
                              [IO_FAULT_CKPT_RENAMED] = F_CKPT_RENAMED,
                              [IO_FAULT_CKPT_DELETE] = F_CKPT_DELETE,
                              [IO_FAULT_SEG_DELETE] = F_SEG_DELETE,
                              [IO_FAULT_SEG_DELETED] = F_SEG_DELETED,
                              [IO_FAULT_RELOCATED] = F_RELOCATED,
                              [IO_FAULT_BACKUP_COPIED] = F_BACKUP_COPIED,
                              [IO_FAULT_BACKUP_RENAMED] = F_BACKUP_RENAMED,
                              [IO_FAULT_BACKUP_MANIFEST] = F_BACKUP_MANIFEST,
                              [IO_FAULT_RESTORE_COPIED] = F_RESTORE_COPIED,
                              [IO_FAULT_BIG_CHUNK] = F_BIG_CHUNK,
                              [IO_FAULT_BIG_FINAL] = F_BIG_FINAL,
                              [IO_FAULT_BIG_APPLY] = F_BIG_APPLY,
                              [IO_FAULT_CKPT_ACCESS] = F_CKPT_ACCESS,
                              [IO_FAULT_ACCESS_LOAD] = F_ACCESS_LOAD,
                              [IO_FAULT_STREAM_WHOLE] = F_STREAM_WHOLE,
                              [IO_FAULT_BIG_REPLY] = F_BIG_REPLY,
                              [IO_FAULT_XRG_PARKED] = F_XRG_PARKED,
                              [IO_FAULT_XRG_SERVED] = F_XRG_SERVED,
                              [IO_FAULT_REPL_COPIED] = F_REPL_COPIED,
                              [IO_FAULT_REPL_SWAPPED] = F_REPL_SWAPPED,
                              [IO_FAULT_REQ_PART] = F_REQ_PART,
                              [IO_FAULT_REQ_PART_SENT] = F_REQ_PART_SENT,
                              [IO_FAULT_PAGE_IN] = F_PAGE_IN,
                              [IO_FAULT_PAGED] = F_PAGED,
                              [IO_FAULT_PAGE_WRITTEN] = F_PAGE_WRITTEN,
                              [IO_FAULT_LIST_PAGED] = F_LIST_PAGED,
                              [IO_FAULT_LIST_WRITTEN] = F_LIST_WRITTEN,
                              [IO_FAULT_LIST_DIRTY] = F_LIST_DIRTY,
                              [IO_FAULT_STREAM_PAGED] = F_STREAM_PAGED,
                              [IO_FAULT_STREAM_WRITTEN] = F_STREAM_WRITTEN,
                              [IO_FAULT_STREAM_DIRTY] = F_STREAM_DIRTY,
                              [IO_FAULT_ZSET_PAGED] = F_ZSET_PAGED,
                              [IO_FAULT_ZSET_WRITTEN] = F_ZSET_WRITTEN,
                              [IO_FAULT_ZSET_DIRTY] = F_ZSET_DIRTY,
                              [IO_FAULT_BACKLOG_TRIM] = F_BACKLOG_TRIM,
                              [IO_FAULT_REPL_PINNED] = F_REPL_PINNED,
                              [IO_FAULT_CACHE_SLOT] = F_CACHE_SLOT,
                              [IO_FAULT_CACHE_INVAL] = F_CACHE_INVAL,
                              [IO_FAULT_CACHE_MGET] = F_CACHE_MGET,
                              [IO_FAULT_CACHE_TAG] = F_CACHE_TAG};
    /* A number with no point here (0: F_OPEN, never a point) counts nothing. */
    if (!nfaults || (unsigned)point >= sizeof(ops) / sizeof(ops[0]) || !ops[point]) return 0;
    return hit(ops[point]);
}

static int f_open(const char *p, int fl, mode_t m)
{
    FAIL_IF(F_OPEN);
    int fd = io_real.open(p, fl, m);
    if (fd >= 0 && fd < MAX_DSYNC_FD) atomic_store(&dsync_fd[fd], (fl & O_DSYNC) == O_DSYNC);
    return fd;
}
static int f_close(int fd)
{
    if (fd >= 0 && fd < MAX_DSYNC_FD) atomic_store(&dsync_fd[fd], 0);
    return io_real.close(fd);
}
/* A write on an O_DSYNC fd is durable when it returns: it counts as an
 * fdatasync too, so fdatasync:N:EIO fails it (nothing written) and
 * fdatasync:N:CUT cuts the power during it (a prefix of it survives). */
static ssize_t f_pwrite(int fd, const void *b, size_t n, off_t o)
{
    FAIL_IF(F_PWRITE);
    if (is_dsync(fd)) {
        int e = hit_io(F_FDATASYNC);
        if (e == FAULT_CUT) {
            remember_write(fd, n, o);
            ssize_t r = io_real.pwrite(fd, b, n, o);
            (void)r;
            power_cut();
        }
        if (e) {
            errno = e;
            return -1;
        }
        return io_real.pwrite(fd, b, n, o);
    }
    if (cut_armed) remember_write(fd, n, o);
    return io_real.pwrite(fd, b, n, o);
}
static ssize_t f_pread(int fd, void *b, size_t n, off_t o)
{
    FAIL_IF(F_PREAD);
    return io_real.pread(fd, b, n, o);
}
static int f_fdatasync(int fd)
{
    int e = hit_io(F_FDATASYNC);
    if (e == FAULT_CUT) power_cut();
    if (e) {
        errno = e;
        return -1;
    }
    int rc = io_real.fdatasync(fd);
    if (rc == 0 && cut_armed) forget_synced(fd);
    return rc;
}
static int f_fsync(int fd)
{
    FAIL_IF(F_FSYNC);
    int rc = io_real.fsync(fd);
    if (rc == 0 && cut_armed) forget_synced(fd);
    return rc;
}
/* Asynchronous syncs (io.h): counted with the fdatasyncs, so one spec
 * works for both ways of syncing. The Nth fails at its completion (out of
 * order with the others in flight), or is a power cut at its submission,
 * with the syncs before it possibly still running. The token is the write
 * order at submission and the errno to fail with. */
#define TOKEN_SEQ_BITS 40
static int f_sync_begin(int file, unsigned long long *token)
{
    pthread_mutex_lock(&pending_lock);
    cut_async = 1;
    pthread_mutex_unlock(&pending_lock);
    int e = hit_io(F_FDATASYNC);
    if (e == FAULT_CUT) power_cut();
    pthread_mutex_lock(&pending_lock);
    *token = write_seq | ((unsigned long long)e << TOKEN_SEQ_BITS);
    pthread_mutex_unlock(&pending_lock);
    return 0;
}
static int f_sync_end(int file, unsigned long long token, int res)
{
    int e = (int)(token >> TOKEN_SEQ_BITS);
    if (e) return -e;
    if (res == 0 && cut_armed) forget_synced_before(file, token & ((1ull << TOKEN_SEQ_BITS) - 1));
    return res;
}
/* Asynchronous reads (io.h): counted with the preads, so "store.pread:N:EIO"
 * fails the Nth read of a value however it was made. */
static int f_read_end(int fd, int res)
{
    (void)fd;
    int e = hit_io(F_PREAD);
    return e ? -e : res;
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

static int f_mkdir(const char *p, mode_t m)
{
    FAIL_IF(F_MKDIR);
    return io_real.mkdir(p, m);
}
static int f_flock(int fd, int op)
{
    FAIL_IF(F_FLOCK);
    return io_real.flock(fd, op);
}
static int f_stat(const char *p, struct stat *st)
{
    FAIL_IF(F_STAT);
    return io_real.stat(p, st);
}
static int f_sync_file_range(int fd, off_t o, off_t n, unsigned int fl)
{
    FAIL_IF(F_SYNC_FILE_RANGE);
    return io_real.sync_file_range(fd, o, n, fl);
}
static DIR *f_opendir(const char *p)
{
    int e = hit_io(F_OPENDIR);
    if (e) {
        errno = e;
        return NULL;
    }
    return io_real.opendir(p);
}
/* A failing readdir returns NULL with errno set, as a real one does; the
 * listing in progress is cut short there. */
static struct dirent *f_readdir(DIR *d)
{
    int e = hit_io(F_READDIR);
    if (e) {
        errno = e;
        return NULL;
    }
    return io_real.readdir(d);
}

static const io_ops_t io_faulty = {
    .open = f_open,
    .close = f_close,
    .pwrite = f_pwrite,
    .pread = f_pread,
    .fdatasync = f_fdatasync,
    .fsync = f_fsync,
    .fallocate = f_fallocate,
    .ftruncate = f_ftruncate,
    .rename = f_rename,
    .unlink = f_unlink,
    .mkdir = f_mkdir,
    .flock = f_flock,
    .stat = f_stat,
    .sync_file_range = f_sync_file_range,
    .opendir = f_opendir,
    .readdir = f_readdir,
    .closedir = NULL, /* filled from io_real at install */
    .sync_begin = f_sync_begin,
    .sync_end = f_sync_end,
    .read_end = f_read_end,
};
static io_ops_t io_installed;

static int parse_errno(const char *s)
{
    static const struct {
        const char *name;
        int value;
    } names[] = {{"EIO", EIO},         {"ENOSPC", ENOSPC},      {"EDQUOT", EDQUOT},
                 {"EROFS", EROFS},     {"KILL", IO_FAULT_KILL}, {"CUT", FAULT_CUT},
                 {"HANG", FAULT_HANG}, {"STALL", FAULT_STALL}};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (!strcmp(s, names[i].name)) return names[i].value;
    char *end;
    long v = strtol(s, &end, 10);
    return (*s && !*end && v > 0 && v < 4096) ? (int)v : -1;
}

/* Forget every fault and count, and go back to the real table: a child
 * starts from what its role asks, not from what the master installed. */
static void reset(void)
{
    io_set(NULL);
    nfaults = 0;
    for (int i = 0; i < F_NOPS; i++)
        atomic_store(&calls[i], 0);
    cut_armed = 0;
    pthread_mutex_lock(&pending_lock);
    while (pending) {
        pending_write_t *w = pending;
        pending = w->next;
        free(w->before);
        free(w);
    }
    pthread_mutex_unlock(&pending_lock);
}

/* Entries that name no role are the children's (logger, store, frontend),
 * as before the master, atticdb-check and atticdb-backup took faults of
 * their own. */
static int takes_unnamed(const char *role)
{
    return !role || (strcmp(role, "master") != 0 && strcmp(role, "check") != 0 &&
                     strcmp(role, "backup") != 0);
}

int io_fault_install(const char *spec, const char *role, int first_incarnation)
{
    char buf[512];
    reset();
    if (!spec || strlen(spec) >= sizeof(buf)) return -1;
    strcpy(buf, spec);
    char *save;
    for (char *item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        int every = item[0] == '*';
        if (every) item++;
        if (!every && !first_incarnation) continue;
        char *dot = strchr(item, '.');
        char *colon = strchr(item, ':');
        if (dot && (!colon || dot < colon)) {
            *dot = '\0';
            if (role && strcmp(item, role) != 0) continue;
            item = dot + 1;
        } else if (!takes_unnamed(role)) {
            continue;
        }
        char op[32], err[32];
        long nth;
        if (sscanf(item, "%31[a-z_]:%ld:%31s", op, &nth, err) != 3 || nth < 1) return -1;
        int o = -1;
        for (int i = 0; i < F_NOPS; i++)
            if (!strcmp(op, op_names[i])) o = i;
        int e = parse_errno(err);
        if (o < 0 || e < 0 || nfaults == MAX_FAULTS) return -1;
        if (e == FAULT_CUT) {
            if (o != F_FDATASYNC) return -1;
            cut_armed = 1;
            srandom((unsigned)(nth * 2654435761u));
        }
        faults[nfaults].op = o;
        faults[nfaults].nth = nth;
        faults[nfaults].err = e;
        nfaults++;
    }
    if (nfaults) {
        void *m = mmap(NULL, sizeof(calls_private), PROT_READ | PROT_WRITE,
                       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (m != MAP_FAILED) calls = m;
        io_installed = io_faulty;
        io_installed.closedir = io_real.closedir;
        io_set(&io_installed);
    }
    return nfaults;
}
