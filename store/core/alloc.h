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

#endif
