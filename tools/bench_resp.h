/*
 * bench_resp.h - the client side of RESP2 that atticdb-bench needs: encode a
 * command as a multibulk request, and find where one reply ends.
 *
 * The benchmark never looks inside a reply beyond its type (error, nil, or
 * anything else), so the scanner only measures replies; it never allocates.
 */
#ifndef ATTIC_BENCH_RESP_H
#define ATTIC_BENCH_RESP_H

#include <stddef.h>

typedef struct bench_buf {
    char *data;
    size_t len;
    size_t cap;
} bench_buf_t;

void bench_buf_free(bench_buf_t *b);
/* Appends `argc` arguments as one multibulk request to `b`. Returns 0, or -1
 * on allocation failure (b is unchanged then). */
int bench_resp_append_cmd(bench_buf_t *b, int argc, const char *const *argv, const size_t *lens);

enum {
    BENCH_REPLY_VALUE = 0, /* status, integer, bulk or array */
    BENCH_REPLY_ERROR = 1, /* "-ERR ..." (top level) */
    BENCH_REPLY_NIL = 2,   /* "$-1" or "*-1" (top level) */
};

/* Looks for one complete reply at the start of buf[0..len).
 * Returns 1 and sets *used (bytes it spans) and *kind (BENCH_REPLY_*) when a
 * whole reply is there; 0 when more bytes are needed; -1 when the bytes are
 * not RESP2 (unknown type byte, bad length, arrays nested deeper than 16). */
int bench_resp_scan(const char *buf, size_t len, size_t *used, int *kind);

#endif
