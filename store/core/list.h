/*
 * list.h - the list type's data structure (core/list.c): a key's elements
 * in order, and the type's operations table (st_list_ops). The commands
 * are in types/t_list.c.
 *
 * An element is an idx_entry_t laid out as a string entry (entry.h) with
 * an empty name: its bytes inline (up to STORE_INLINE_MAX) or one log
 * extent (a record's argument, never copied into RAM), or, for a long
 * element RESTORE decoded from an LZF-compressed node (D40), one RAM
 * piece (st_ent_new_ram); core/value.c reads and replies an element as it
 * does a string.
 */
#ifndef ATTIC_STORE_LIST_H
#define ATTIC_STORE_LIST_H

#include <stdint.h>

#include "entry.h"
#include "object.h"

typedef struct st_list st_list_t;

extern const st_type_ops_t st_list_ops;

st_list_t *st_list_new(void);

static inline st_list_t *st_ent_list(idx_entry_t *e)
{
    return (st_list_t *)st_ent_obj(e);
}

uint32_t st_list_len(const st_list_t *l);
/* RAM held, requested bytes (st_list_ops.mem_usage). */
uint64_t st_list_bytes(const st_list_t *l);

/* A new element holding p[0, len); lsn is the log position of p's bytes
 * (a record's argument: a long element stays there as an extent). */
idx_entry_t *st_list_elem_new(const void *p, uint32_t len, uint64_t lsn);
void st_list_elem_free(idx_entry_t *e);

/* Element i (0 = head), i < st_list_len. */
idx_entry_t *st_list_at(const st_list_t *l, uint32_t i);
/* Put e (the list takes it) at i, 0 <= i <= len: O(1) at either end,
 * O(min(i, len - i)) inside. */
void st_list_insert(st_list_t *l, uint32_t i, idx_entry_t *e);
/* Take element i out (the caller owns it). */
idx_entry_t *st_list_take(st_list_t *l, uint32_t i);
/* Put e at i in place of the element there, which is returned. */
idx_entry_t *st_list_replace(st_list_t *l, uint32_t i, idx_entry_t *e);

#endif
