/*
 * test_io_fault.c - the fault-injecting I/O seam (common/io_fault.c): which
 * entries of ATTICDB_TEST_FAULTS a process takes (its role's; the master and
 * atticdb-check only those naming them), that installing again starts from
 * nothing, and that a KILL entry on an I/O call kills the process at that
 * call instead of turning into an error the caller would retry.
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
