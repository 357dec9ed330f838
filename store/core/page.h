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
 *
 * Reading a page back from the log (st_page_read) goes through the
 * store context's one-page cache.
 *
 * Lists (D63) and streams (D64) are chunked collections: runs of
 * consecutive elements, each chunk in RAM or a window of a page. What
 * their page records share is here: the stamp that names a chunk's
 * contents, the record being built (the replaced chunks' stamps, the new
 * chunks' layout, the page images) and the packer that fills it.
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

/* The next number of the record being applied (ctx->applied): 0, 1, ...
 * from each new record on. With ctx->applied, it names something a record
 * made uniquely, the same on every replay (paged objects' ids, list
 * chunks' stamps). */
uint32_t st_page_seq(struct store_ctx *ctx);

/* ---- chunked collections' page records (lists D63, streams D64) ---- */

/* A chunk's stamp: the record that last changed it (ctx->applied then)
 * and its number within that record (st_page_seq). Equal stamps mean
 * equal contents: every change takes a new one, a copy copies them with
 * the contents. lsn 0: not stamped yet; bit 63 set: stamped by its
 * contents (a chunk read from an older checkpoint: st_pgstamp_of). */
typedef struct st_pgstamp {
    uint64_t lsn;
    uint32_t seq;
} st_pgstamp_t;
#define ST_PGSTAMP_BYTES 12u /* in a record: u64 lsn, u32 seq */

/* A new stamp from the record ctx applies (NULL: unstamped). A chunk the
 * same record changed already keeps the stamp it took. */
void st_pgstamp_take(struct store_ctx *ctx, st_pgstamp_t *s);
/* A stamp by contents: the contents' hash and the chunk's place. */
static inline st_pgstamp_t st_pgstamp_of(uint64_t hash, uint32_t place)
{
    return (st_pgstamp_t){hash | (1ull << 63), place};
}
static inline int st_pgstamp_eq(st_pgstamp_t a, st_pgstamp_t b)
{
    return a.lsn == b.lsn && a.seq == b.seq;
}
st_pgstamp_t st_pgstamp_get(const unsigned char *p);
void st_pgstamp_put(buf_t *b, st_pgstamp_t s);

/* One page record's arguments after the key: the replaced run of chunks'
 * stamps, the layout (u32 per new chunk: the element count of the next
 * page, or ST_CPAGE_PIN | n for a run of n elements too long for a page,
 * kept in RAM as a chunk of their own), and the page images. A record
 * covers whole chunks, and one chunk (128 elements at most) may need a
 * page per element under tiny pages: room for twice that. */
#define ST_CPAGE_MAX_IMAGES 256u
#define ST_CPAGE_PIN        0x80000000u
typedef struct st_cpbuilt {
    buf_t stamps;
    buf_t layout;
    buf_t img[ST_CPAGE_MAX_IMAGES];
    uint32_t nimg;
} st_cpbuilt_t;
void st_cpbuilt_init(st_cpbuilt_t *b);
void st_cpbuilt_free(st_cpbuilt_t *b);

/* Filling a st_cpbuilt_t, element by element in order: st_cpack_start
 * empties it; st_cpack_room gives the page an element of n bytes (as the
 * page will hold it) goes into, ending the current page first when it
 * would pass page_bytes (begin writes a new page's header; arg is the
 * caller's); st_cpack_pin counts an element too long for any page;
 * st_cpack_end ends the last page or pinned run (their layout entries
 * are written as each ends). */
typedef struct st_cpack {
    st_cpbuilt_t *out;
    uint32_t page_bytes;
    void (*begin)(buf_t *img, void *arg);
    void *arg;
    buf_t *cur;     /* the page being filled, or NULL */
    uint32_t ncur;  /* its elements */
    uint32_t pin;   /* the pinned run being counted (0: none) */
    uint64_t bytes; /* the pages ended, with their argument headers */
} st_cpack_t;
void st_cpack_start(st_cpack_t *pk, st_cpbuilt_t *out, uint32_t page_bytes,
                    void (*begin)(buf_t *img, void *arg), void *arg);
buf_t *st_cpack_room(st_cpack_t *pk, uint32_t n);
void st_cpack_pin(st_cpack_t *pk);
void st_cpack_end(st_cpack_t *pk);
/* The record's bytes so far (the pages ended and the one being filled). */
uint64_t st_cpack_bytes(const st_cpack_t *pk);

#endif
