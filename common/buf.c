/*
 * buf.c - a growable byte buffer (buf.h).
 *
 * Runs in every process that builds replies or requests; the frontends use it
 * most (input and output buffers of every connection, replies built by the
 * RESP writers). Plain malloc/realloc: mimalloc is linked in as the process
 * allocator, so there is nothing to gain from calling it by name.
 *
 * Invariants: len <= cap; data is NULL exactly when cap == 0. The contents
 * are bytes, not a C string: nothing here NUL-terminates them.
 *
 * Out of memory aborts the process with a message, as Redis does: a
 * frontend that cannot allocate a reply buffer cannot keep its connections'
 * reply order, and the master respawns it. A crash here means exactly that,
 * or a caller that corrupted a buf_t.
 */
#include "buf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void buf_oom(size_t want)
{
    fprintf(stderr, "atticdb: out of memory allocating %zu bytes for a buffer\n", want);
    abort();
}

void buf_init(buf_t *b)
{
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
}

void buf_free(buf_t *b)
{
    free(b->data);
    buf_init(b);
}

void buf_reset(buf_t *b)
{
    b->len = 0;
}

void buf_reserve(buf_t *b, size_t extra)
{
    if (b->cap - b->len >= extra) return;
    /* Overflow here can only come from an absurd request; treat it like an
     * allocation failure rather than wrapping round to a small buffer. */
    if (extra > SIZE_MAX - b->len) buf_oom(SIZE_MAX);
    size_t want = b->len + extra;
    /* Doubling keeps appends amortised O(1); 64 avoids a string of tiny
     * reallocations for the first few bytes of a reply. */
    size_t cap = b->cap < 64 ? 64 : b->cap;
    while (cap < want)
        cap = cap > SIZE_MAX / 2 ? want : cap * 2;
    char *p = realloc(b->data, cap);
    if (p == NULL) buf_oom(cap);
    b->data = p;
    b->cap = cap;
}

void buf_append(buf_t *b, const void *p, size_t n)
{
    /* n == 0 may come with p == NULL; memcpy must not see that. */
    if (n == 0) return;
    buf_reserve(b, n);
    memcpy(b->data + b->len, p, n);
    b->len += n;
}

void buf_appendf(buf_t *b, const char *fmt, ...)
{
    va_list ap, again;
    va_start(ap, fmt);
    va_copy(again, ap);
    /* First try in the space we already have: most formatted pieces are
     * short and fit, so one vsnprintf is the common cost. */
    size_t avail = b->cap - b->len;
    int n = vsnprintf(avail ? b->data + b->len : NULL, avail, fmt, ap);
    va_end(ap);
    if (n < 0) {
        /* Only an invalid format or a result over INT_MAX gets here: a
         * programming error, not something input can cause. */
        fprintf(stderr, "atticdb: buf_appendf: formatting failed for \"%s\"\n", fmt);
        abort();
    }
    if ((size_t)n >= avail) {
        /* vsnprintf needs room for its NUL, which we then drop. */
        buf_reserve(b, (size_t)n + 1);
        vsnprintf(b->data + b->len, (size_t)n + 1, fmt, again);
    }
    va_end(again);
    b->len += (size_t)n;
}
