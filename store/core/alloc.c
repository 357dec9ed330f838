/*
 * alloc.c - allocation for the store's state machine (alloc.h): malloc and
 * realloc that abort when out of memory. The bottom of the store: it calls
 * nothing else of it.
 *
 * Store process only (and tests and tools); single-threaded. Aborting
 * loses nothing: the master restarts the store, which rebuilds its state
 * from the durable log, whereas going on after a failed allocation in the
 * middle of a record would leave a state no replay reproduces.
 */
#include <stdbool.h>
#include <stdlib.h>

#include "alloc.h"
#include "log.h"

/* mimalloc's, when it is the process's allocator (the server links it;
 * the unit tests do not): weak, so that this file links without it. */
extern void mi_collect(bool force) __attribute__((weak));

int st_alloc_release(void)
{
    if (!mi_collect) return 0;
    mi_collect(true);
    return 1;
}

void *st_xmalloc(size_t n)
{
    void *p = malloc(n);
    if (!p) {
        log_warn("store: out of memory allocating %zu bytes", n);
        abort(); /* as Redis does: a half-applied record is worse */
    }
    return p;
}

void *st_xrealloc(void *old, size_t n)
{
    void *p = realloc(old, n);
    if (!p) {
        log_warn("store: out of memory allocating %zu bytes", n);
        abort();
    }
    return p;
}
