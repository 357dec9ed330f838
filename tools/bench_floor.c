/*
 * bench_floor.c - the physical floor of one durable write on this device:
 * small overwrites of a pre-allocated, pre-zeroed file, each made durable
 * before the next starts (BENCHMARK.md, "The floor").
 *
 * Runs in the atticdb-bench process with --floor FILE. Three methods, each
 * writing consecutive records like a log would:
 *   fdatasync  256-byte pwrite, then fdatasync;
 *   odsync     256-byte pwrite on an O_DSYNC descriptor;
 *   odirect    4 KiB aligned pwrite on an O_DIRECT|O_DSYNC descriptor (the
 *              256-byte record padded to one block).
 * The file is written with zeros and synced first, so no write below
 * allocates blocks or converts unwritten extents: what is timed is the flush
 * alone. A method the filesystem refuses (O_DIRECT on tmpfs) is reported as
 * skipped, not failed. The file is removed at the end.
 */
#include "bench.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FLOOR_RECORD 256
#define FLOOR_BLOCK  4096

static int prezero(const char *path, off_t size)
{
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return -1;
    static char zeros[1 << 20];
    for (off_t off = 0; off < size; off += (off_t)sizeof(zeros)) {
        if (pwrite(fd, zeros, sizeof(zeros), off) != (ssize_t)sizeof(zeros)) {
            close(fd);
            return -1;
        }
    }
    int rc = fsync(fd);
    close(fd);
    return rc;
}

static void print_floor(const bench_config_t *cfg, const char *method, bench_samples_t *s,
                        const char *note)
{
    if (note) {
        printf("floor method=%s skipped=1 note=%s\n", method, note);
        if (!cfg->quiet) fprintf(stderr, "  %-10s skipped: %s\n", method, note);
        return;
    }
    bench_samples_sort(s);
    double p50 = bench_percentile(s, 50) / 1e3, p99 = bench_percentile(s, 99) / 1e3;
    double p999 = bench_percentile(s, 99.9) / 1e3, max = bench_percentile(s, 100) / 1e3;
    double mean = bench_mean(s) / 1e3;
    printf("floor method=%s count=%zu p50_us=%.1f p99_us=%.1f p999_us=%.1f max_us=%.1f "
           "mean_us=%.1f writes_per_s=%.0f\n",
           method, s->count, p50, p99, p999, max, mean, mean > 0 ? 1e6 / mean : 0);
    if (!cfg->quiet)
        fprintf(stderr, "  %-10s p50 %8.1f  p99 %8.1f  p99.9 %8.1f  max %8.1f us  (%zu writes)\n",
                method, p50, p99, p999, max, s->count);
}

int bench_floor_run(const bench_config_t *cfg)
{
    long count = cfg->floor_count > 0 ? cfg->floor_count : 2000;
    /* Room for `count` 4 KiB blocks, so no method wraps onto a block it has
     * already flushed in this run (capped at 256 MiB; beyond that it wraps). */
    off_t size = (off_t)count * FLOOR_BLOCK;
    if (size > (off_t)256 << 20) size = (off_t)256 << 20;
    size = (size + (1 << 20) - 1) & ~(off_t)((1 << 20) - 1);
    if (prezero(cfg->floor, size) < 0) {
        fprintf(stderr, "atticdb-bench: --floor %s: %s\n", cfg->floor, strerror(errno));
        return -1;
    }
    if (!cfg->quiet)
        fprintf(stderr, "atticdb-bench: floor of %s (%ld writes each)\n", cfg->floor, count);

    void *block = NULL;
    if (posix_memalign(&block, FLOOR_BLOCK, FLOOR_BLOCK) != 0) return -1;
    memset(block, 'f', FLOOR_BLOCK);
    int rc = 0;
    static const struct {
        const char *name;
        int flags;
        size_t len;
        int sync_after;
    } methods[] = {
        {"fdatasync", 0, FLOOR_RECORD, 1},
        {"odsync", O_DSYNC, FLOOR_RECORD, 0},
        {"odirect", O_DIRECT | O_DSYNC, FLOOR_BLOCK, 0},
    };
    for (size_t m = 0; m < sizeof(methods) / sizeof(methods[0]) && rc == 0; m++) {
        bench_samples_t s;
        bench_samples_init(&s);
        int fd = open(cfg->floor, O_RDWR | O_CLOEXEC | methods[m].flags);
        if (fd < 0) {
            print_floor(cfg, methods[m].name, &s, errno == EINVAL ? "EINVAL" : strerror(errno));
            continue;
        }
        size_t len = methods[m].len;
        const char *note = NULL;
        for (long i = 0; i < count; i++) {
            off_t off = (off_t)(((uint64_t)i * len) % (uint64_t)size);
            uint64_t t0 = bench_now_ns();
            ssize_t n = pwrite(fd, block, len, off);
            if (n == (ssize_t)len && methods[m].sync_after && fdatasync(fd) < 0) n = -1;
            uint64_t t1 = bench_now_ns();
            if (n != (ssize_t)len) {
                if (i == 0 && errno == EINVAL) {
                    note = "EINVAL";
                    break;
                }
                fprintf(stderr, "atticdb-bench: floor %s: %s\n", methods[m].name, strerror(errno));
                rc = -1;
                break;
            }
            if (bench_samples_add(&s, t1 - t0) < 0) rc = -1;
        }
        close(fd);
        if (rc == 0) print_floor(cfg, methods[m].name, &s, note);
        bench_samples_free(&s);
    }
    free(block);
    unlink(cfg->floor);
    return rc;
}
