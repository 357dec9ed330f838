/*
 * test_datadir.c - the data directory's lock and the cut of its log
 * (common/datadir.c), and the segment listing (common/seg.c, seg_list):
 * what they do, and a clean error when any call of theirs through the I/O
 * seam fails (common/io_fault.h). Criterion runs each test in its own
 * process, so the faults a test installs die with it.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "datadir.h"
#include "io.h"
#include "io_fault.h"
#include "seg.h"

#define SEG (64u * 1024)

static char dir[256];

static void make_dir(void)
{
    snprintf(dir, sizeof(dir), "/tmp/attic-test-datadir-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
}

static void remove_dir(void)
{
    io_fault_install("", NULL, 1); /* the real table again */
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
}

TestSuite(datadir, .init = make_dir, .fini = remove_dir);

static void install(const char *spec)
{
    cr_assert_eq(io_fault_install(spec, NULL, 1), 1, "%s", spec);
}

/* ---- the lock ---- */

Test(datadir, lock_is_exclusive_and_names_its_holder)
{
    char err[512];
    int fd = datadir_lock(dir, 0, err, sizeof(err));
    cr_assert_geq(fd, 0, "%s", err);
    /* flock locks belong to the open file: a second open conflicts, even
     * in the same process. */
    cr_assert_eq(datadir_lock(dir, 0, err, sizeof(err)), -1);
    cr_assert_eq(errno, EWOULDBLOCK);
    char want[64];
    snprintf(want, sizeof(want), "in use by another atticdb-server (pid %d)", (int)getpid());
    cr_assert(strstr(err, want), "%s", err);
    close(fd);
    fd = datadir_lock(dir, 0, err, sizeof(err));
    cr_assert_geq(fd, 0, "released with its fd: %s", err);
    close(fd);
}

Test(datadir, lock_creates_a_missing_directory)
{
    char sub[300], err[512];
    snprintf(sub, sizeof(sub), "%s/new", dir);
    cr_assert_eq(datadir_lock(sub, 0, err, sizeof(err)), -1, "made without DATADIR_CREATE");
    int fd = datadir_lock(sub, DATADIR_CREATE, err, sizeof(err));
    cr_assert_geq(fd, 0, "%s", err);
    struct stat st;
    cr_assert_eq(stat(sub, &st), 0);
    cr_assert(S_ISDIR(st.st_mode));
    close(fd);
}

/* Each call of the lock failing: no lock, errno from the call, a message
 * that says which step failed. */
Test(datadir, lock_fails_cleanly_at_each_call)
{
    static const struct {
        const char *spec, *msg;
    } cases[] = {
        {"mkdir:1:EIO", "Can't create data directory"},
        {"fsync:1:EIO", "Can't fsync the parent of the new data directory"},
        {"open:2:EIO", "Can't open"}, /* open 1 is the parent's, for its fsync */
        {"flock:1:EIO", "Can't lock"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char sub[300], err[512] = "";
        snprintf(sub, sizeof(sub), "%s/d%zu", dir, i);
        install(cases[i].spec);
        int fd = datadir_lock(sub, DATADIR_CREATE, err, sizeof(err));
        int e = errno;
        io_fault_install("", NULL, 1);
        cr_assert_eq(fd, -1, "%s: the lock was taken", cases[i].spec);
        cr_assert_eq(e, EIO, "%s: errno %d", cases[i].spec, e);
        cr_assert(strstr(err, cases[i].msg) && strstr(err, "Input/output error"), "%s: %s",
                  cases[i].spec, err);
    }
}

Test(datadir, failing_to_write_the_pid_keeps_the_lock)
{
    char err[512], path[300];
    install("pwrite:1:EIO");
    int fd = datadir_lock(dir, 0, err, sizeof(err));
    cr_assert_geq(fd, 0, "%s", err);
    io_fault_install("", NULL, 1);
    snprintf(path, sizeof(path), "%s/LOCK", dir);
    struct stat st;
    cr_assert_eq(stat(path, &st), 0);
    cr_assert_eq(st.st_size, 0, "no pid written");
    cr_assert_eq(datadir_lock(dir, 0, err, sizeof(err)), -1);
    cr_assert_eq(errno, EWOULDBLOCK);
    close(fd);
}

/* ---- the cut ---- */

/* Segments at 0, SEG and 2 * SEG, each full of 0xab. */
static void make_segments(uint64_t *segs)
{
    unsigned char *fill = malloc(SEG);
    cr_assert_not_null(fill);
    memset(fill, 0xab, SEG);
    for (int i = 0; i < 3; i++) {
        char path[300];
        segs[i] = (uint64_t)i * SEG;
        seg_path(path, sizeof(path), dir, segs[i]);
        int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
        cr_assert_geq(fd, 0);
        cr_assert_eq(write(fd, fill, SEG), (ssize_t)SEG);
        close(fd);
    }
    free(fill);
}

static int segment_exists(uint64_t start)
{
    char path[300];
    seg_path(path, sizeof(path), dir, start);
    return access(path, F_OK) == 0;
}

Test(datadir, cut_removes_later_segments_and_zeroes_the_tail)
{
    uint64_t segs[3], zeroed;
    char err[512];
    make_segments(segs);
    uint64_t lsn = SEG + 4096;
    cr_assert_eq(datadir_cut_log(dir, SEG, segs, 3, lsn, &zeroed, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(zeroed, SEG - 4096);
    cr_assert(segment_exists(0) && segment_exists(SEG) && !segment_exists(2 * SEG));
    char path[300];
    seg_path(path, sizeof(path), dir, SEG);
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f);
    unsigned char buf[SEG];
    cr_assert_eq(fread(buf, 1, SEG, f), SEG);
    fclose(f);
    cr_assert_eq(buf[4095], 0xab, "the bytes before the cut are kept");
    for (size_t i = 4096; i < SEG; i++)
        cr_assert_eq(buf[i], 0, "byte %zu not zeroed", i);
    /* Again: nothing left to zero, nothing to remove. */
    uint64_t left[2] = {0, SEG};
    cr_assert_eq(datadir_cut_log(dir, SEG, left, 2, lsn, &zeroed, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(zeroed, 0);
}

Test(datadir, cut_in_a_missing_segment_changes_nothing)
{
    uint64_t segs[3], zeroed;
    char err[512];
    make_segments(segs);
    uint64_t some[2] = {0, 2 * SEG}; /* as if SEG were missing */
    cr_assert_eq(datadir_cut_log(dir, SEG, some, 2, SEG + 64, &zeroed, err, sizeof(err)), 1);
    cr_assert(segment_exists(2 * SEG), "a later segment was removed");
}

Test(datadir, cut_fails_cleanly_at_each_call)
{
    static const struct {
        const char *spec, *msg;
    } cases[] = {
        {"unlink:1:EIO", "can't remove"},       {"fsync:1:EIO", "can't fsync the data directory"},
        {"open:2:EIO", "can't open"}, /* open 1 is the directory's, for its fsync */
        {"pread:1:EIO", "can't read"},          {"pwrite:1:EIO", "can't zero"},
        {"fdatasync:1:EIO", "can't fdatasync"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        uint64_t segs[3], zeroed;
        char err[512] = "";
        make_segments(segs);
        install(cases[i].spec);
        int rc = datadir_cut_log(dir, SEG, segs, 3, 100 * 64, &zeroed, err, sizeof(err));
        int e = errno;
        io_fault_install("", NULL, 1);
        cr_assert_eq(rc, -1, "%s: the cut succeeded", cases[i].spec);
        cr_assert_eq(e, EIO, "%s: errno %d", cases[i].spec, e);
        cr_assert(strstr(err, cases[i].msg) && strstr(err, "Input/output error"), "%s: %s",
                  cases[i].spec, err);
    }
}

/* ---- the segment listing ---- */

Test(datadir, segment_listing_fails_cleanly)
{
    uint64_t segs[3], *got;
    size_t n;
    make_segments(segs);
    cr_assert_eq(seg_list(dir, &got, &n), 0);
    cr_assert_eq(n, 3);
    free(got);
    install("opendir:1:EIO");
    cr_assert_eq(seg_list(dir, &got, &n), -1);
    cr_assert_eq(errno, EIO);
    /* A readdir that fails part way is an error, not a shorter listing. */
    install("readdir:2:EIO");
    cr_assert_eq(seg_list(dir, &got, &n), -1);
    cr_assert_eq(errno, EIO);
}

/* ---- the shipped part of the log (D56) ---- */

Test(datadir, shipped_note_reads_back_and_none_means_nothing_shipped)
{
    uint64_t from = 1, to = 1;
    char err[512] = "";
    cr_assert_eq(datadir_shipped_read(dir, &from, &to, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(from, DATADIR_SHIPPED_OPEN);
    cr_assert_eq(to, DATADIR_SHIPPED_OPEN);
    cr_assert_eq(datadir_shipped_write(dir, 4096, DATADIR_SHIPPED_OPEN), 0);
    cr_assert_eq(datadir_shipped_read(dir, &from, &to, err, sizeof(err)), 1, "%s", err);
    cr_assert_eq(from, 4096);
    cr_assert_eq(to, DATADIR_SHIPPED_OPEN);
    cr_assert_eq(datadir_shipped_write(dir, 4096, 8192), 0); /* a promotion closes it */
    cr_assert_eq(datadir_shipped_read(dir, &from, &to, err, sizeof(err)), 1, "%s", err);
    cr_assert_eq(from, 4096);
    cr_assert_eq(to, 8192);
}

Test(datadir, a_malformed_shipped_note_is_an_error_naming_the_file)
{
    static const char *const bad[] = {"", "shipped 10\n", "shipped 20 10\n", "shipped 1 2",
                                      "garbage 1 2\n"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char path[512], err[512] = "";
        snprintf(path, sizeof(path), "%s/" DATADIR_SHIPPED, dir);
        FILE *f = fopen(path, "w");
        cr_assert_not_null(f);
        fputs(bad[i], f);
        fclose(f);
        uint64_t from, to;
        cr_assert_eq(datadir_shipped_read(dir, &from, &to, err, sizeof(err)), -1, "\"%s\"", bad[i]);
        cr_assert(strstr(err, DATADIR_SHIPPED), "\"%s\": %s", bad[i], err);
    }
}

Test(datadir, a_failed_shipped_note_leaves_the_old_one)
{
    static const char *const specs[] = {"open:1:EIO", "pwrite:1:EIO", "fdatasync:1:EIO",
                                        "rename:1:EIO"};
    cr_assert_eq(datadir_shipped_write(dir, 100, DATADIR_SHIPPED_OPEN), 0);
    for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
        install(specs[i]);
        int rc = datadir_shipped_write(dir, 100, 200);
        int e = errno;
        io_fault_install("", NULL, 1);
        cr_assert_eq(rc, -1, "%s: the write succeeded", specs[i]);
        cr_assert_eq(e, EIO, "%s: errno %d", specs[i], e);
        uint64_t from, to;
        char err[512] = "";
        cr_assert_eq(datadir_shipped_read(dir, &from, &to, err, sizeof(err)), 1, "%s", err);
        cr_assert_eq(to, DATADIR_SHIPPED_OPEN, "%s: the old note stays", specs[i]);
    }
}
