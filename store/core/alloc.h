/*
 * alloc.h - the store's allocation helpers (core/alloc.c): malloc and
 * realloc that never return NULL. Included by every layer of the store.
 */
#ifndef ATTIC_STORE_ALLOC_H
#define ATTIC_STORE_ALLOC_H

#include <stddef.h>

/* As malloc / realloc; out of memory logs and aborts, as Redis does: a
 * half-applied record is worse than a restart that replays the log. */
void *st_xmalloc(size_t n);
void *st_xrealloc(void *old, size_t n);

/* Give memory freed since back to the system where the allocator can
 * (mimalloc's mi_collect): after a large collection went into pages, its
 * members' entries are freed but the process's RSS keeps them until then.
 * Returns 1 when asked, 0 when the allocator cannot be (tests). */
int st_alloc_release(void);

#endif
