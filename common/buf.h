/* buf.h - a growable byte buffer (mimalloc-backed), used to build replies. */
#ifndef ATTIC_BUF_H
#define ATTIC_BUF_H

#include <stddef.h>
#include <stdint.h>

typedef struct buf {
    char *data;
    size_t len;
    size_t cap;
} buf_t;

/* All functions abort the process on out-of-memory (as Redis does). */
void buf_init(buf_t *b);
void buf_free(buf_t *b);
void buf_reset(buf_t *b);                 /* len = 0, keeps memory */
void buf_reserve(buf_t *b, size_t extra); /* make room for extra more bytes */
void buf_append(buf_t *b, const void *p, size_t n);
void buf_appendf(buf_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
