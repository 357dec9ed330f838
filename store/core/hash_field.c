/*
 * hash_field.c - a hash's (or set's) fields as entries (hash-internal.h):
 * made, measured and freed the same way by every encoding, core/hash.c's
 * and the paged one's (core/hash_paged.c), which is why they are here,
 * below both. Store process only; single-threaded.
 */
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "hash-internal.h"
#include "pieces.h"
#include "value.h"

uint64_t st_hash_field_bytes(idx_entry_t *f)
{
    uint64_t n = st_ent_alloc_size(f);
    if (st_ent_kind(f) == VK_LIST) n += st_pieces_bytes(st_ent_pieces(f));
    return n;
}

int st_hash_field_copy(idx_entry_t *f, unsigned char *val, uint32_t cap, uint32_t *vlen)
{
    uint64_t n = st_ent_vlen(f);
    *vlen = (uint32_t)n;
    if (n > cap || st_ent_kind(f) == VK_EXTENT) return -1;
    return st_read_value(NULL, f, val) ? -1 : 1; /* in RAM: no I/O */
}

void st_hash_field_free(st_hash_t *h, idx_entry_t *f)
{
    h->bytes -= st_hash_field_bytes(f);
    if (st_ent_kind(f) == VK_LIST) st_pieces_free(st_ent_pieces(f));
    free(f);
}

idx_entry_t *st_hash_field_new(const void *f, uint32_t n, const unsigned char *v, uint64_t vlen,
                               uint64_t vlsn)
{
    rec_arg_t name = {f, n};
    if (vlsn || vlen <= STORE_INLINE_MAX) {
        rec_arg_t val = {v, (uint32_t)vlen};
        return st_ent_new(&name, &val, vlsn, ST_AUX_ROOM);
    }
    return st_ent_new_ram(&name, v, (size_t)vlen, ST_AUX_ROOM);
}

idx_entry_t *st_hash_field_new_ram(const void *f, uint32_t n, const unsigned char *v, uint64_t vlen)
{
    if (vlen > UINT8_MAX) return st_hash_field_new(f, n, v, vlen, 0);
    /* One allocation: the whole value as the entry's inline prefix. */
    idx_entry_t *e = st_ent_alloc(f, n, (uint8_t)vlen, VK_INLINE, ST_AUX_ROOM);
    if (vlen) memcpy(st_ent_inline(e), v, (size_t)vlen);
    return e;
}

void st_hash_table_bytes(st_hash_t *h, uint64_t before)
{
    h->bytes = h->bytes - before + idx_table_bytes(&h->ix);
}
