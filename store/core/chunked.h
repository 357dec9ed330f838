/*
 * chunked.h - what the chunked collections share (core/chunked.c): a list
 * (D63; a keyed one is a sorted set's order, D65) and a stream (D64) keep
 * their elements in chunks of consecutive elements, each in RAM or a
 * window of a page of the log that the store's pager wrote as a record
 * (CMD_LPAGE, CMD_SPAGE). Both name a chunk's contents by a stamp, count
 * their chunks the same way for the pager's O(1) answers, choose and
 * build their records the same way and find a record's run of chunks by
 * its stamps; the elements, the page image and what a chunk holds in RAM
 * are each type's own (core/list*.c, core/stream*.c).
 */
#ifndef ATTIC_STORE_CHUNKED_H
#define ATTIC_STORE_CHUNKED_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "entry.h"
#include "hash.h"

struct store_ctx;

/* ---- stamps ---- */

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

/* ---- chunks ---- */

/* The fields every chunk has. A type's chunk struct begins with
 *     union { st_cchunk_t c; struct { ST_CCHUNK_FIELDS; }; };
 * so that its own code names them directly (ch->lsn) and this module's
 * through c (a common initial sequence of the union's members). */
#define ST_CCHUNK_FIELDS                                                                           \
    uint64_t lsn; /* clean: the page's LSN; 0: in RAM */                                           \
    st_pgstamp_t stamp;                                                                            \
    uint32_t n;      /* elements */                                                                \
    uint32_t first;  /* clean: the window's first element in the page */                           \
    uint32_t len;    /* clean: the image's bytes */                                                \
    uint32_t cap;    /* RAM: the element array's slots */                                          \
    uint32_t vbytes; /* RAM: element bytes, as the type's chunk limit counts them */               \
    uint32_t npin;   /* RAM: elements too long for a page */                                       \
    uint32_t busy    /* the pager has a record for it in flight (not state) */
typedef struct st_cchunk {
    ST_CCHUNK_FIELDS;
} st_cchunk_t;

/* Whether chunk ch is in RAM with an element a page would take. */
static inline int st_cch_wants(const st_cchunk_t *ch)
{
    return !ch->lsn && ch->n > ch->npin;
}

/* A collection's chunks as this module sees them: chunk j at base + j *
 * stride, nc of them. mergeable (NULL: none) tells a clean chunk worth
 * rewriting with its wanted neighbours into fuller pages (a keyed list's
 * sparse pages, a sorted set's order: D65); owner is its argument. */
typedef struct st_chunks {
    char *base;
    size_t stride;
    uint32_t nc;
    int (*mergeable)(const void *owner, const struct st_cchunk *ch, const st_pgpolicy_t *pol);
    const void *owner;
} st_chunks_t;

static inline st_cchunk_t *st_chunks_at(const st_chunks_t *v, uint32_t j)
{
    return (st_cchunk_t *)(v->base + (size_t)j * v->stride);
}

/* Counts kept as chunks change (O(1) answers for the pager): RAM chunks
 * with an element a page would take and their element bytes, clean
 * chunks, pinned elements; chunks with a record in flight and where the
 * pager's next look starts (neither is state). */
typedef struct st_ccounts {
    uint32_t nwram, npages, npin, nbusy;
    uint64_t wbytes;
    uint32_t scan_at;
    /* No page of the collection lies below it (0: not known): pages come
     * at the log's head and leave from anywhere, so it stays a lower
     * bound; compaction's line is compared with it before the pages are. */
    uint64_t low;
} st_ccounts_t;

/* Take chunk ch's part out of the counts (sign -1) or put it back (+1),
 * around a change of it. */
void st_ccounts_add(st_ccounts_t *cc, const st_cchunk_t *ch, int sign);
/* Tests: NULL when cc is what v's chunks add up to, else what is not. */
const char *st_ccounts_check(const st_chunks_t *v, const st_ccounts_t *cc);

/* ---- the pager's choice (store/pager.c) ---- */

/* Chunks a record is built for once they hold a page's worth of elements
 * (writes at an end leave one full chunk at a time: one record each would
 * make pages of one chunk), or when this many wait (chunks a write inside
 * copied into RAM, each alone; a keyed list's sparse pages, D65). */
#define ST_CHUNKED_WANT_CHUNKS 4u

/* What the pager does with the collection under pol, its elements
 * counted: 0, or ST_PAGE_WANT_BUILD (core/hash.h) when chunks want a
 * record: RAM chunks between the first and the last (those take the
 * writes) once they hold a page's worth or a few of them wait, or pages
 * below pol->below. O(1) unless pol->below is above cc->low, when the
 * pages are looked at (and cc->low refreshed). */
int st_chunked_wanted(const st_chunks_t *v, st_ccounts_t *cc, uint64_t elements,
                      const st_pgpolicy_t *pol);
/* Whether more than max RAM chunks wait: the pager is behind the writes
 * and catches up past its rate. */
int st_chunked_behind(const st_chunks_t *v, const st_ccounts_t *cc, uint32_t max);
/* The first chunk of the next record (ST_PAGE_BUILT, *j0 set: the start
 * of a run of chunks that want one; a mergeable page starts one only
 * beside another wanted chunk), else ST_PAGE_NONE, ST_PAGE_INFLIGHT
 * (only chunks with a record in flight want one) or ST_PAGE_MORE (not
 * found among the ST_PAGE_SCAN looked at: the next call goes on). */
int st_chunked_pick(const st_chunks_t *v, st_ccounts_t *cc, const st_pgpolicy_t *pol, uint32_t *j0);
/* Chunk j was packed into the record being built: busy until
 * st_chunked_unbusy (the record applied or given up). */
void st_chunked_took(const st_chunks_t *v, st_ccounts_t *cc, uint32_t j);
void st_chunked_unbusy(const st_chunks_t *v, st_ccounts_t *cc);
/* Whether the record may take chunk j too: it wants one, is not busy,
 * and the record has room for a chunk's pages (at most chunk_bytes of
 * them, chunk_pages images) besides the bytes and images it has. */
int st_chunked_more(const st_chunks_t *v, uint32_t j, const st_pgpolicy_t *pol, uint64_t bytes,
                    uint32_t nimg, uint32_t chunk_bytes, uint32_t chunk_pages);
/* A page record's run (arguments 1 and 2: stamps, layout): 0 with the
 * first chunk *j0, *k chunks of *total elements and *m new chunks, or -1
 * when the collection holds no such run (the record is a no-op). hint is
 * where the type guesses the run starts (UINT32_MAX: no guess); a wrong
 * guess costs a scan, never another answer. */
int st_chunked_run(const st_chunks_t *v, const rec_arg_t *stamps, const rec_arg_t *layout,
                   uint32_t hint, uint32_t *j0, uint32_t *k, uint64_t *total, uint32_t *m);
/* DEBUG PAGED's figures: [paged, chunks, pages, page bytes, elements in
 * RAM, pinned, elements]. */
void st_chunked_stats(const st_chunks_t *v, const st_ccounts_t *cc, uint64_t elements,
                      long long out[7]);

/* ---- the record being built ---- */

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
