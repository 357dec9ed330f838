/*
 * page.h - the page image of a paged collection (core/page.c, D60): the
 * members of one range of hash values, sorted by (hash, name), as bytes in
 * a CMD_PAGE record and so in the log. Little-endian:
 *   u32 magic ("PGv1"), u32 count, u64 lo (the range's first hash), then
 *   count entries, each u64 hash, u16 name length, u16 value length, the
 *   name, the value.
 * A list's page (D63: consecutive elements of a list, in a CMD_LPAGE
 * record) has the same header with its own magic ("PLv1") and lo 0, then
 * count entries, each u16 length and the element's bytes.
 * A stream's page (D64: consecutive entries of a stream, in a CMD_SPAGE
 * record; core/stream_page.c reads and writes it) has the header with
 * magic "PSv1" and lo 0, then count entries, each (varints: LEB128,
 * unsigned) the ID as a delta (ms minus the previous entry's ms; the seq,
 * or when the ms is the previous one's, seq minus the previous seq minus
 * 1; the first entry's absolute), then npairs << 1 | same, then the
 * pairs' items as a varint length and the bytes each: field, value, ...,
 * or when `same` only the values, the field names being the previous
 * entry's (a stream's entries mostly repeat their fields, as Redis'
 * master entry assumes).
 *
 * Reading a page back from the log (st_page_read) goes through the
 * store context's one-page cache.
 */
#ifndef ATTIC_STORE_PAGE_H
#define ATTIC_STORE_PAGE_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"

struct store_ctx;

#define ST_PGIMG_MAGIC   0x31764750u /* "PGv1" */
#define ST_PGIMG_HDR     16u
#define ST_PGIMG_ENT_HDR 12u
#define ST_LPIMG_MAGIC   0x31764c50u /* "PLv1" */
#define ST_LPIMG_ENT_HDR 2u
#define ST_SPIMG_MAGIC   0x31765350u /* "PSv1" */

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

/* A list's page: begin (header, count 0), put each element (at most
 * UINT16_MAX bytes), then st_pgimg_finish. st_lpimg_next: the element at
 * *off (start at ST_PGIMG_HDR): 1 with *p, *n set and *off moved, 0 at the
 * end, -1 when malformed. st_lpimg_check: the whole image is a list page
 * whose entries fill it exactly and agree with its count, each at most
 * max bytes: its count, or -1. */
void st_lpimg_begin(buf_t *b);
void st_lpimg_put(buf_t *b, const void *p, uint32_t n);
int st_lpimg_next(const unsigned char *img, size_t len, size_t *off, const unsigned char **p,
                  uint32_t *n);
long st_lpimg_check(const unsigned char *img, size_t len, uint32_t max);

/* The page of len bytes at lsn, read from the log: into *dst (grown to
 * *cap), or through ctx's one-page cache (valid until the next
 * st_page_read). A read that fails stops the store (EXIT_FATAL): the state
 * could no longer follow the log. */
const unsigned char *st_page_read_into(struct store_ctx *ctx, uint64_t lsn, uint32_t len,
                                       unsigned char **dst, size_t *cap);
const unsigned char *st_page_read(struct store_ctx *ctx, uint64_t lsn, uint32_t len);
/* Element k (from the image's first) of the list page of len bytes at lsn,
 * read through st_page_read's cache: p[0, *n), valid as its page is. The
 * first such call for a page walks it once and keeps each element's
 * offset, so a list popped at either end of a page does not walk it again
 * per pop. Returns 0, or -1 when the page has no element k. */
int st_lpimg_at(struct store_ctx *ctx, uint64_t lsn, uint32_t len, uint32_t k,
                const unsigned char **p, uint32_t *n);

/* The next number of the record being applied (ctx->applied): 0, 1, ...
 * from each new record on. With ctx->applied, it names something a record
 * made uniquely, the same on every replay (paged objects' ids, list
 * chunks' stamps). */
uint32_t st_page_seq(struct store_ctx *ctx);

#endif
