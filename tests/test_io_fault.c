/*
 * test_io_fault.c - the fault-injecting I/O seam (common/io_fault.c): which
 * entries of ATTICDB_TEST_FAULTS a process takes (its role's; the master and
 * atticdb-check only those naming them), that installing again starts from
 * nothing, and that a KILL entry on an I/O call kills the process at that
 * call instead of turning into an error the caller would retry. And the
 * asynchronous syncs (io.h, sync_begin/sync_end; the logger's log-sync
 * uring): they count with the fdatasyncs, a failure shows at completion,
 * and a power cut with syncs in flight keeps what a completed sync covered
 * and leaves each page of the rest lost, kept or torn at sector bounds.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include "io.h"
#include "io_fault.h"

TestSuite(io_fault);

Test(io_fault, entries_go_to_their_role)
{
    cr_assert_eq(io_fault_install("logger.fsync:1:EIO,store.fsync:1:EIO", "logger", 1), 1);
    cr_assert_eq(io_fault_install("fsync:1:EIO", "store", 1), 1, "no role: every child's");
    /* The master and atticdb-check take only the entries naming them, so
     * a spec written for the children counts the same calls as before. */
    cr_assert_eq(io_fault_install("fsync:1:EIO", "master", 1), 0);
    cr_assert_eq(io_fault_install("fsync:1:EIO", "check", 1), 0);
    cr_assert_eq(io_fault_install("master.flock:1:EIO,logger.fsync:1:EIO", "master", 1), 1);
    cr_assert_eq(io_fault_install("check.fdatasync:1:EIO", "check", 1), 1);
    cr_assert_eq(io_fault_install("logger.sync_file_range:1:EIO", "logger", 1), 1);
    cr_assert_eq(io_fault_install("logger.nosuchcall:1:EIO", "logger", 1), -1);
    io_fault_install("", NULL, 1);
}

/* A child inherits the master's table and counts; its own install must
 * start again from its role's entries alone. */
Test(io_fault, installing_again_starts_from_nothing)
{
    int fd = open("/dev/null", O_RDONLY);
    cr_assert_geq(fd, 0);
    cr_assert_eq(io_fault_install("flock:2:EIO", NULL, 1), 1);
    cr_assert_eq(io->flock(fd, LOCK_SH), 0, "call 1 is made");
    cr_assert_eq(io_fault_install("flock:2:EIO", NULL, 1), 1);
    cr_assert_eq(io->flock(fd, LOCK_SH), 0, "call 1 again after the new install: counts reset");
    cr_assert_eq(io->flock(fd, LOCK_SH), -1, "call 2 fails");
    cr_assert_eq(errno, EIO);
    cr_assert_eq(io_fault_install("", NULL, 1), 0);
    cr_assert_eq(io, &io_real, "no fault: the real table");
    close(fd);
}

/* In a child: install spec, make one call of the op; returns how the child
 * ended (the status from waitpid). */
static int child_calls(const char *spec, int which)
{
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        if (io_fault_install(spec, NULL, 1) != 1) _exit(10);
        int rc;
        if (which == 0) {
            rc = io->open("/dev/null", O_RDONLY, 0);
        } else if (which == 1) {
            rc = io->fdatasync(-1);
        } else {
            DIR *d = io->opendir("/");
            rc = d ? 0 : -1;
        }
        (void)rc;
        _exit(0); /* reached only when the call returned */
    }
    int status;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    return status;
}

Test(io_fault, kill_on_an_io_call_kills_the_process_there)
{
    static const struct {
        const char *spec;
        int which;
    } cases[] = {{"open:1:KILL", 0}, {"fdatasync:1:KILL", 1}, {"opendir:1:KILL", 2}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int status = child_calls(cases[i].spec, cases[i].which);
        cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "%s: status %d",
                  cases[i].spec, status);
    }
    /* The call before the Nth one is made as usual. */
    int status = child_calls("open:2:KILL", 0);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %d", status);
}

Test(io_fault, async_syncs_count_with_fdatasyncs_and_fail_at_completion)
{
    cr_assert_eq(io_fault_install("fdatasync:3:EIO", NULL, 1), 1);
    char path[] = "/tmp/attic-test-io-fault-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    cr_assert_eq(io->fdatasync(fd), 0); /* the 1st */
    unsigned long long t2, t3, t4;
    cr_assert_eq(io->sync_begin(fd, &t2), 0);
    cr_assert_eq(io->sync_begin(fd, &t3), 0); /* the 3rd: fails when it completes */
    cr_assert_eq(io->sync_begin(fd, &t4), 0);
    /* Completions come in any order; the kernel's result is replaced for
     * the 3rd only. */
    cr_assert_eq(io->sync_end(fd, t4, 0), 0);
    cr_assert_eq(io->sync_end(fd, t3, 0), -EIO);
    cr_assert_eq(io->sync_end(fd, t2, 0), 0);
    cr_assert_eq(io->sync_end(fd, t2, -ENOSPC), -ENOSPC, "a real failure passes through");
    close(fd);
    unlink(path);
}

enum { PAGE = 4096, SECTOR = 512, FILE_SIZE = 8 * PAGE };

static void fill(int fd, int c, size_t len, off_t off)
{
    unsigned char buf[FILE_SIZE];
    memset(buf, c, len);
    cr_assert_eq(io_pwrite_all(fd, buf, len, off), 0);
}

/*
 * In a child of its own process group (a cut kills the group): write pages
 * 0-1 ('a'), start sync 1, write pages 2-3 ('b'), start sync 2, complete
 * sync 1 (it covers 'a' only), write pages 4-6 ('c') and 'd' over the first
 * sector of page 2, and cut at sync 3 with sync 2 still in flight.
 */
static void cut_child(const char *path, int nth)
{
    setpgid(0, 0);
    char spec[64];
    snprintf(spec, sizeof(spec), "fdatasync:%d:CUT", nth);
    if (io_fault_install(spec, NULL, 1) != 1) _exit(2);
    int fd = io->open(path, O_RDWR, 0);
    if (fd < 0) _exit(3);
    unsigned long long t;
    for (int i = 1; i < nth - 2; i++) { /* move the cut along: another salt */
        if (io->sync_begin(fd, &t) || io->sync_end(fd, t, 0)) _exit(4);
    }
    fill(fd, 'a', 2 * PAGE, 0);
    unsigned long long t1, t2;
    if (io->sync_begin(fd, &t1)) _exit(4);
    fill(fd, 'b', 2 * PAGE, 2 * PAGE);
    if (io->sync_begin(fd, &t2)) _exit(4);
    if (io->sync_end(fd, t1, 0) != 0) _exit(5);
    fill(fd, 'c', 3 * PAGE, 4 * PAGE);
    fill(fd, 'd', SECTOR, 2 * PAGE);
    io->sync_begin(fd, &t); /* the cut: does not return */
    _exit(6);
}

Test(io_fault, power_cut_with_syncs_in_flight_loses_pages_not_synced)
{
    int lost = 0, kept = 0, mixed_pages = 0;
    for (int nth = 3; nth < 23; nth++) {
        char path[] = "/tmp/attic-test-io-fault-XXXXXX";
        int fd = mkstemp(path);
        cr_assert_geq(fd, 0);
        fill(fd, 0, FILE_SIZE, 0);
        pid_t pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0) cut_child(path, nth);
        int status;
        cr_assert_eq(waitpid(pid, &status, 0), pid);
        cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "status %d", status);
        unsigned char buf[FILE_SIZE];
        cr_assert_eq(io_pread_all(fd, buf, FILE_SIZE, 0), 0);
        for (int i = 0; i < 2 * PAGE; i++)
            cr_assert_eq(buf[i], 'a', "byte %d, synced before the cut, is lost (cut %d)", i, nth);
        for (int page = 2; page < 8; page++) {
            int page_lost = 0, page_kept = 0;
            for (int s = 0; s < PAGE / SECTOR; s++) {
                off_t off = (off_t)page * PAGE + s * SECTOR;
                int now = page == 2 && s == 0 ? 'd' : page < 4 ? 'b' : page < 7 ? 'c' : 0;
                /* A sector holds what the file held at the cut or what was
                 * synced, never a mix within it. */
                for (int i = 1; i < SECTOR; i++)
                    cr_assert_eq(buf[off + i], buf[off], "sector torn inside (cut %d)", nth);
                cr_assert(buf[off] == now || buf[off] == 0, "page %d sector %d holds %c (cut %d)",
                          page, s, buf[off], nth);
                if (now && buf[off] == now) page_kept = kept = 1;
                if (now && buf[off] == 0) page_lost = lost = 1;
            }
            if (page_lost && page_kept) mixed_pages = 1;
        }
        close(fd);
        unlink(path);
    }
    cr_assert(lost && kept && mixed_pages,
              "over 20 cuts, some unsynced sectors must be lost, some kept, and some pages torn");
}
