/*
 * page.h - the page image of a paged collection (core/page.c, D60): the
 * members of one range of hash values, sorted by (hash, name), as bytes in
 * a CMD_PAGE record and so in the log. Little-endian:
 *   u32 magic ("PGv1"), u32 count, u64 lo (the range's first hash), then
 *   count entries, each u64 hash, u16 name length, u16 value length, the
 *   name, the value.
 */
#ifndef ATTIC_STORE_PAGE_H
#define ATTIC_STORE_PAGE_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"

#define ST_PGIMG_MAGIC   0x31764750u /* "PGv1" */
#define ST_PGIMG_HDR     16u
#define ST_PGIMG_ENT_HDR 12u

/* One member of an image: pointers into the image's bytes. */
typedef struct st_pgent {
    uint64_t h;
    const unsigned char *name, *val;
    uint32_t nlen, vlen;
} st_pgent_t;

/* The member order: by hash, then name bytes, then length. */
int st_pgimg_key_cmp(uint64_t ha, const void *a, uint32_t na, uint64_t hb, const void *b,
                     uint32_t nb);
/* The entry at *off (start at ST_PGIMG_HDR) of image p[0, len): 1 (and
 * *off moved past it), 0 at the end, -1 when the bytes are not an entry. */
int st_pgimg_next(const unsigned char *p, size_t len, size_t *off, st_pgent_t *e);
/* The count in an image's header (at least ST_PGIMG_HDR bytes). */
uint32_t st_pgimg_count(const unsigned char *p);
/* A whole image checked: its magic and lo, entries that fill it exactly,
 * sorted without repeats, every hash in [lo, end) (has_end 0: no end), the
 * count its header says. Returns 0 or -1. */
int st_pgimg_check(const unsigned char *p, size_t len, uint64_t lo, int has_end, uint64_t end);
/* Search image p for (h, name): 1 with *e set when there, else 0. */
int st_pgimg_find(const unsigned char *p, size_t len, uint64_t h, const void *name, uint32_t n,
                  st_pgent_t *e);
/* Build an image into b: begin (header, count 0), put each entry in
 * order, finish (the count into the header). */
void st_pgimg_begin(buf_t *b, uint64_t lo);
void st_pgimg_put(buf_t *b, uint64_t h, const void *name, uint32_t nlen, const void *val,
                  uint32_t vlen);
void st_pgimg_finish(buf_t *b, uint32_t count);

#endif
