/*
 * test_reads.c - unit tests of the store's reads of values in flight
 * (store/reads.c, D59) on real segment files in a temporary directory:
 * holes the page cache lacks are read from the device (O_DIRECT, or
 * through the page cache with read-io buffered) into the right bytes of
 * their reply, across a segment boundary too; holes it holds are copied at
 * once; a read that fails fails its own reply only; a copy that faults
 * (SIGBUS: a segment cut under its mapping) fails over to a read instead
 * of killing the process; the lowest LSN in flight is what compaction is
 * told, and a forgotten segment's descriptors and mapping go.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io.h"
#include "seg.h"
#include "store/reads.h"

#define SEG   (1u << 20)
#define REPLY 20000u

static char dir[256];

static unsigned char pat(uint64_t lsn)
{
    return (unsigned char)((lsn * 2654435761u) >> 13);
}

/* A segment file starting at start, full of pat(lsn), synced. */
static void seg_write(uint64_t start)
{
    char path[512];
    seg_path(path, sizeof(path), dir, start);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    cr_assert_geq(fd, 0);
    unsigned char *b = malloc(SEG);
    for (uint64_t i = 0; i < SEG; i++)
        b[i] = pat(start + i);
    cr_assert_eq(write(fd, b, SEG), (ssize_t)SEG);
    cr_assert_eq(fdatasync(fd), 0);
    close(fd);
    free(b);
}

/* Drop the segments from the page cache (clean, unmapped pages go). */
static void evict(uint64_t start)
{
    char path[512];
    seg_path(path, sizeof(path), dir, start);
    int fd = open(path, O_RDONLY);
    cr_assert_geq(fd, 0);
    posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    close(fd);
}

/* Read a segment through the page cache, so that it holds it. */
static void warm(uint64_t start)
{
    char path[512], b[65536];
    seg_path(path, sizeof(path), dir, start);
    int fd = open(path, O_RDONLY);
    while (read(fd, b, sizeof(b)) > 0)
        ;
    close(fd);
}

static void setup(void)
{
    snprintf(dir, sizeof(dir), "/var/tmp/attic-reads-XXXXXX");
    /* Not /tmp: a tmpfs there would have no O_DIRECT (tested too, below,
     * by the fallback; the device path wants a real file system). */
    if (!mkdtemp(dir)) {
        snprintf(dir, sizeof(dir), "/tmp/attic-reads-XXXXXX");
        cr_assert_not_null(mkdtemp(dir));
    }
    seg_write(0);
    seg_write(SEG);
}

static void teardown(void)
{
    char cmd[600];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    (void)system(cmd);
}

TestSuite(reads, .init = setup, .fini = teardown, .timeout = 60);

typedef struct got {
    int n, fe, err;
    uint64_t id, tag;
    unsigned char bytes[REPLY];
} got_t;

static int on_done(void *arg, int fe, uint64_t id, uint64_t tag, const buf_t *reply, int err)
{
    got_t *g = arg;
    g->n++;
    g->fe = fe;
    g->id = id;
    g->tag = tag;
    g->err = err;
    if (!err) {
        cr_assert_eq(reply->len, REPLY);
        memcpy(g->bytes, reply->data, REPLY);
    }
    return 0;
}

/* Three holes: in segment 0, across the boundary, at the log's end. */
static st_hole_t holes[] = {
    {5, 100, 4096},
    {5000, SEG - 1000, 3000},
    {9000, 2 * SEG - 10, 10},
};

static void defer_init(st_defer_t *d)
{
    memset(d, 0, sizeof(*d));
    d->hole = holes;
    d->n = d->cap = d->max = 3;
    d->lowest = 100;
}

static void reply_init(buf_t *b)
{
    buf_init(b);
    buf_reserve(b, REPLY);
    memset(b->data, 0xEE, REPLY);
    b->len = REPLY;
}

/* Every hole holds the log's bytes, everything else is untouched. */
static void check_bytes(const unsigned char *p)
{
    size_t at = 0;
    for (size_t i = 0; i < 3; i++) {
        for (; at < holes[i].off; at++)
            cr_assert_eq(p[at], 0xEE, "byte %zu outside the holes changed", at);
        for (uint64_t k = 0; k < holes[i].len; k++, at++)
            cr_assert_eq(p[at], pat(holes[i].lsn + k), "hole %zu byte %llu", i,
                         (unsigned long long)k);
    }
    for (; at < REPLY; at++)
        cr_assert_eq(p[at], 0xEE, "byte %zu outside the holes changed", at);
}

static store_reads_t *open_or_skip(int direct)
{
    store_reads_t *r = store_reads_open(dir, SEG, 16, direct, -1);
    if (!r && (errno == ENOSYS || errno == EPERM)) cr_skip_test("no io_uring here");
    cr_assert_not_null(r, "store_reads_open: %s", strerror(errno));
    return r;
}

/* The holes, all in the page cache: filled at once, with the log's bytes. */
static void filled_at_once(store_reads_t *r, uint64_t id, const char *why)
{
    st_defer_t d;
    defer_init(&d);
    buf_t b;
    reply_init(&b);
    cr_assert_eq(store_reads_start(r, &d, &b, 3, id, 0), 1, "%s", why);
    check_bytes((const unsigned char *)b.data);
    cr_assert_eq(store_reads_inflight(r), 0);
    buf_free(&b);
}

/* One read in flight to its end: returns what was reported. */
static void read_in_flight(store_reads_t *r, got_t *g)
{
    st_defer_t d;
    defer_init(&d);
    buf_t b;
    reply_init(&b);
    char *mine = b.data;
    cr_assert_eq(store_reads_start(r, &d, &b, 3, 77, 5), 0, "the holes are read in flight");
    cr_assert_neq(b.data, mine, "the reply was taken");
    cr_assert_eq(store_reads_inflight(r), 1);
    cr_assert_eq(store_reads_lowest(r), 100);
    memset(g, 0, sizeof(*g));
    for (int i = 0; i < 50 && !g->n; i++)
        cr_assert_geq(store_reads_wait(r, 100, on_done, g), 0);
    cr_assert_eq(g->n, 1);
    cr_assert_eq(store_reads_inflight(r), 0);
    cr_assert_eq(store_reads_lowest(r), UINT64_MAX);
    buf_free(&b);
}

static void device_then_cache(int direct)
{
    store_reads_t *r = open_or_skip(direct);
    evict(0);
    evict(SEG);
    got_t *g = malloc(sizeof(*g));
    read_in_flight(r, g);
    cr_assert_eq(g->err, 0);
    cr_assert_eq(g->fe, 3);
    cr_assert_eq(g->id, 77);
    cr_assert_eq(g->tag, 5);
    check_bytes(g->bytes);
    cr_assert_eq(store_reads_stats(r)->device, 4, "a piece per segment a hole spans");
    cr_assert_eq(store_reads_stats(r)->copied, 0);

    /* Once the page cache holds them, they are copied at once. */
    warm(0);
    warm(SEG);
    filled_at_once(r, 78, "the page cache holds them");
    cr_assert_eq(store_reads_stats(r)->copied, 4);
    free(g);
    store_reads_close(r);
}

Test(reads, direct_reads_what_the_page_cache_lacks)
{
    device_then_cache(1);
}

Test(reads, buffered_reads_through_the_page_cache)
{
    device_then_cache(0);
}

/* A value read from the device again soon after is read through the page
 * cache the second time (admitted), and copied from it the third. */
Test(reads, a_value_read_again_is_admitted_to_the_page_cache)
{
    store_reads_t *r = open_or_skip(1);
    evict(0);
    evict(SEG);
    got_t *g = malloc(sizeof(*g));
    read_in_flight(r, g);
    check_bytes(g->bytes);
    cr_assert_eq(store_reads_stats(r)->admitted, 0, "read once: not admitted");
    read_in_flight(r, g);
    check_bytes(g->bytes);
    cr_assert_eq(store_reads_stats(r)->admitted, 4, "read again: through the page cache");
    filled_at_once(r, 79, "now in the page cache: copied");
    free(g);
    store_reads_close(r);
}

/* The seam's read_end fails the first read that completes. */
static int fail_next = 1;
static int failing_read_end(int fd, int res)
{
    (void)fd;
    if (fail_next) {
        fail_next = 0;
        return -EIO;
    }
    return res;
}

Test(reads, a_failed_read_fails_its_reply_only)
{
    store_reads_t *r = open_or_skip(1);
    evict(0);
    evict(SEG);
    io_ops_t ops = io_real;
    ops.read_end = failing_read_end;
    const io_ops_t *was = io_set(&ops);
    got_t *g = malloc(sizeof(*g));
    read_in_flight(r, g);
    cr_assert_eq(g->err, EIO);
    read_in_flight(r, g);
    cr_assert_eq(g->err, 0, "the next read is whole");
    check_bytes(g->bytes);
    io_set(was);
    free(g);
    store_reads_close(r);
}

/* A segment cut under its mapping while holes are copied without asking
 * (trusted): the copy faults, the read goes to the file, finds its end,
 * and the reply fails with EIO; the process lives on. */
Test(reads, a_copy_that_faults_fails_over_to_a_read)
{
    store_reads_t *r = open_or_skip(1);
    warm(0);
    warm(SEG);
    st_hole_t small = {0, 4096 * 3 + 7, 100};
    st_defer_t d = {.hole = &small, .n = 1, .cap = 1, .max = 1, .lowest = small.lsn};
    buf_t b;
    reply_init(&b);
    /* Enough holes found in the page cache to be trusted. */
    for (int i = 0; i < 600; i++)
        cr_assert_eq(store_reads_start(r, &d, &b, 0, (uint64_t)i, 0), 1);
    uint64_t probes = store_reads_stats(r)->probes;
    for (int i = 0; i < 64; i++)
        cr_assert_eq(store_reads_start(r, &d, &b, 0, (uint64_t)i, 0), 1);
    cr_assert_lt(store_reads_stats(r)->probes - probes, 64, "trusted: not every hole probed");
    char path[512];
    seg_path(path, sizeof(path), dir, 0);
    cr_assert_eq(truncate(path, 4096), 0);
    got_t *g = malloc(sizeof(*g));
    int failed = 0;
    for (int i = 0; i < 40; i++) {
        buf_free(&b); /* the last one was taken: a reply of the right size again */
        reply_init(&b);
        int rc = store_reads_start(r, &d, &b, 0, (uint64_t)i, 0);
        cr_assert_eq(rc, 0, "past the file's end nothing is copied");
        memset(g, 0, sizeof(*g));
        for (int k = 0; k < 50 && !g->n; k++)
            cr_assert_geq(store_reads_wait(r, 100, on_done, g), 0);
        cr_assert_eq(g->n, 1);
        cr_assert_eq(g->err, EIO);
        failed++;
    }
    cr_assert_eq(failed, 40);
    buf_free(&b);
    free(g);
    store_reads_close(r);
}

Test(reads, a_forgotten_segment_is_let_go)
{
    store_reads_t *r = open_or_skip(1);
    got_t *g = malloc(sizeof(*g));
    evict(0);
    evict(SEG);
    read_in_flight(r, g);
    cr_assert_eq(g->err, 0);
    /* Segment 0 is deleted: forgotten, its file unlinked, then made again
     * with other bytes under the same name (a test's liberty: the log never
     * reuses a name); the next read must open the new file, not keep the
     * old mapping. */
    store_reads_forget(r, SEG);
    char path[512];
    seg_path(path, sizeof(path), dir, 0);
    cr_assert_eq(unlink(path), 0);
    /* Nothing of the deleted file is held: no mapping, no descriptor. */
    char line[1024];
    FILE *maps = fopen("/proc/self/maps", "r");
    while (fgets(line, sizeof(line), maps))
        cr_assert(!strstr(line, dir) || !strstr(line, "(deleted)"), "still mapped: %s", line);
    fclose(maps);
    seg_write(0);
    evict(0);
    read_in_flight(r, g);
    cr_assert_eq(g->err, 0);
    check_bytes(g->bytes);
    free(g);
    store_reads_close(r);
}
