/*
 * fuzz_recovery.c - libFuzzer harness for recovery from an arbitrary data
 * directory: the input becomes the first log segment; the logger's recovery
 * must either find an end and cut the tail or refuse with a message, and the
 * store must replay whatever recovery accepted, without crashing.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "io.h"
#include "log.h"
#include "logger/logger.h"
#include "seg.h"
#include "store/store-internal.h"

#define SEG (64u * 1024)

static char dir[512];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!dir[0]) {
        /* Inside the run's own directory when the script gives one, so that
         * two runs at once can't remove each other's files. */
        const char *base = getenv("ATTIC_FUZZ_DIR");
        snprintf(dir, sizeof(dir), "%s/attic-fuzz-XXXXXX", base ? base : "/tmp");
        if (!mkdtemp(dir)) abort();
        log_set_level(LOG_WARNING + 1); /* quiet */
    }
    char path[256];
    /* Fresh directory contents: one segment holding the input, zero-padded. */
    seg_path(path, sizeof(path), dir, SEG);
    unlink(path);
    seg_path(path, sizeof(path), dir, 0);
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) abort();
    size_t n = size < SEG ? size : SEG;
    if (n && io_pwrite_all(fd, data, n, 0) != 0) abort();
    if (ftruncate(fd, SEG) != 0) abort();
    close(fd);

    uint64_t start, end;
    char err[512];
    if (logger_recover(dir, SEG, &start, &end, err, sizeof(err)) != 0) return 0;
    config_t cfg;
    config_defaults(&cfg);
    free(cfg.dir);
    cfg.dir = strdup(dir);
    cfg.segment_size = SEG;
    store_ctx_t *ctx = store_ctx_create(&cfg, 1);
    seg_reader_t r;
    if (seg_reader_open(&r, dir, SEG, start) != 0) abort();
    const void *rec;
    while (r.lsn < end && seg_reader_next(&r, &rec) > 0)
        store_apply(ctx, rec, NULL);
    seg_reader_close(&r);
    store_ctx_destroy(ctx);
    free(cfg.dir);
    return 0;
}
