/*
 * hash-internal.h - what core/hash.c (the listpack, intset and hashtable
 * encodings), core/hash_paged.c (the paged form of a large hashtable, D60)
 * and core/hash_pgrec.c (its records) share: the structure itself, the
 * field helpers (hash_field.c) and the paged form's internals. Private to
 * those files; everything else goes through hash.h. Calls go one way:
 * hash.c and hash_pgrec.c -> hash_paged.c -> hash_field.c.
 */
#ifndef ATTIC_STORE_HASH_INTERNAL_H
#define ATTIC_STORE_HASH_INTERNAL_H

#include <stdint.h>

#include "hash.h"
#include "index.h"
#include "page.h"

/* One range of a paged hash's directory: the members whose hash (XXH3
 * with the paged seed) is in [lo, the next range's lo), 2^64 for the last.
 * Their image is the page at lsn (len bytes of a CMD_PAGE record), or none
 * (lsn 0: every member of the range is in the overlay). */
typedef struct st_pgdir {
    uint64_t lo;
    uint64_t lsn;
    uint32_t len;
    uint32_t count;   /* members in the image */
    uint32_t live;    /* members of the range: the image's not overlaid, and the overlay's live */
    uint32_t ovl;     /* overlay entries in the range that a page record would take */
    uint32_t busy;    /* the pager has a record for this range in flight (not state) */
    idx_entry_t **ov; /* the range's overlay entries (in h->ix too), in no order */
    uint32_t nov, capov;
} st_pgdir_t;

/* An overlay entry with its hash (st_pg_range_refs sorts them). */
typedef struct st_pgref {
    uint64_t h;
    idx_entry_t *f;
} st_pgref_t;

typedef struct st_paged {
    store_ctx_t *ctx; /* to read pages and stamp writes (bound when loaded) */
    uint64_t seed;    /* the members' hash: from the CMD_PAGEIN record */
    uint64_t objid;   /* which object page records are for (hash_paged.c) */
    st_pgdir_t *dir;
    uint32_t ndir, cap;
    uint32_t ovl;     /* overlay entries a page record would take (sum of ovl) */
    uint32_t scan_at; /* where the pager's next look at the ranges starts (not state) */
    uint32_t pinned;  /* overlay entries no page takes (PGF_PIN) */
    /* Not state (recounted when loaded or copied): ranges that want a
     * page (st_pg_range_wants), ranges with a record in flight. */
    uint32_t nwant, nbusy;
    uint64_t *fen; /* a Fenwick tree over dir[].live, for picks by position */
    uint32_t fen_cap;
    int fen_ok;
} st_paged_t;

struct st_hash {
    st_obj_t obj;
    uint32_t n;        /* fields */
    uint32_t cap;      /* listpack: room in vec */
    int table;         /* 1: hashtable encoding, fields in ix */
    int sorted;        /* sets' intset: vec in integer order, members integers */
    int ordered;       /* a set's hashtable: vec holds the members too (hash.c) */
    uint64_t seed;     /* ix's, kept for a conversion later */
    uint64_t bytes;    /* RAM held (hash.c's banner) */
    idx_entry_t **vec; /* listpack: fields in insertion order */
    idx_t ix;          /* hashtable; paged: the overlay */
    st_paged_t *pg;    /* paged (hash_paged.c), else NULL */
};

/* A field made, measured and freed by every encoding (hash_field.c); the
 * table's RAM accounting after ix changed (before: its bytes then). */
uint64_t st_hash_field_bytes(idx_entry_t *f);
void st_hash_field_free(st_hash_t *h, idx_entry_t *f);
/* st_hash_peek's copy of field f's value: 1, or -1 when it is longer than
 * cap or in the log. */
int st_hash_field_copy(idx_entry_t *f, unsigned char *val, uint32_t cap, uint32_t *vlen);
idx_entry_t *st_hash_field_new(const void *f, uint32_t n, const unsigned char *v, uint64_t vlen,
                               uint64_t vlsn);
void st_hash_table_bytes(st_hash_t *h, uint64_t before);

/* ---- the paged form, shared by hash_paged.c and hash_pgrec.c (D60) ---- */

/* An overlay entry's flags (in its entry's owner bits) and stamp (the
 * record that wrote it: ctx->applied then, in its aux word); hash_paged.c's
 * banner says what they mean. */
#define PGF_TOMB 1u
#define PGF_MASK 2u
#define PGF_PIN  4u
static inline unsigned st_pg_flags(const idx_entry_t *f)
{
    return idx_access(f);
}
/* After idx_insert or idx_relink, which set meta. */
static inline void st_pg_set_flags(idx_entry_t *f, unsigned v)
{
    idx_set_access(f, v);
}
static inline uint64_t st_pg_stamp(const idx_entry_t *f)
{
    return (uint64_t)st_ent_aux(f);
}

/* A member's hash; the range holding hash h; range i's end (0: the last
 * range, no end); a new object id from ctx's apply clock. */
uint64_t st_pg_hash(const st_paged_t *p, const void *f, uint32_t n);
uint32_t st_pg_locate(const st_paged_t *p, uint64_t h);
/* The same over any directory array: the last of dir[0, n) whose lo <= h. */
uint32_t st_pg_dir_find(const st_pgdir_t *dir, uint32_t n, uint64_t h);
int st_pg_range_end(const st_paged_t *p, uint32_t i, uint64_t *end);
uint64_t st_pg_new_objid(store_ctx_t *ctx);
/* A range's image: into *dst (grown to *cap), or through the context's
 * one-page cache (valid until the next read); whether range i's image has
 * (h, name). A read that fails stops the store. */
const unsigned char *st_pg_read_into(st_paged_t *p, const st_pgdir_t *d, unsigned char **dst,
                                     size_t *cap);
const unsigned char *st_pg_read(st_paged_t *p, const st_pgdir_t *d);
int st_pg_image_has(st_paged_t *p, uint32_t i, uint64_t h, const void *name, uint32_t n,
                    st_pgent_t *e);
/* Range i's overlay entries at or above hash `from`, sorted (a new array
 * of *n, the caller's to free); their order; a range's entries grown by
 * one and freed (RAM counted in h->bytes); the directory's RAM as it
 * grows or shrinks. */
st_pgref_t *st_pg_range_refs(const st_paged_t *p, uint32_t i, uint64_t from, uint32_t *n);
int st_pg_by_key(const void *x, const void *y);
void st_pg_vec_add(st_hash_t *h, st_pgdir_t *d, idx_entry_t *f);
void st_pg_vec_free(st_hash_t *h, st_pgdir_t *d);
void st_pg_dir_bytes(st_hash_t *h, uint32_t old_cap, uint32_t new_cap);
/* Whether range d wants a new page whatever the overlay's size: it has no
 * page and overlay entries, or ST_PAGE_RANGE_MIN of them. */
static inline int st_pg_range_wants(const st_pgdir_t *d)
{
    return (!d->lsn && d->ovl) || d->ovl >= ST_PAGE_RANGE_MIN;
}
/* Recount nwant and nbusy from the ranges. */
void st_pg_recount(st_paged_t *p);
/* Count an overlay entry with flags fl into range i (sign 1) or out (-1). */
void st_pg_ovl_count(st_hash_t *h, uint32_t i, unsigned fl, int sign);
/* Range i's members at or above `from`, in order, the first *skip passed
 * over; fn's nonzero return stops (returned). once: a member from a page
 * is a copy that lives for the call only (else to the request's end). */
int st_pg_visit_range(st_hash_t *h, uint32_t i, uint64_t from, idx_visit_fn fn, void *arg,
                      uint64_t *skip, int once);

/* The paged form (hash_paged.c), called by hash.c when h->pg is set. */
idx_entry_t *st_pg_find(st_hash_t *h, const void *f, uint32_t n);
int st_pg_peek(st_hash_t *h, const void *f, uint32_t n, unsigned char *val, uint32_t cap,
               uint32_t *vlen);
int st_pg_set(st_hash_t *h, st_live_t *live, const void *f, uint32_t n, const unsigned char *v,
              uint64_t vlen, uint64_t vlsn);
int st_pg_del(st_hash_t *h, st_live_t *live, const void *f, uint32_t n);
int st_pg_foreach(st_hash_t *h, idx_visit_fn fn, void *arg, int once);
uint64_t st_pg_scan(st_hash_t *h, uint64_t cursor, idx_visit_fn fn, void *arg);
idx_entry_t *st_pg_at(st_hash_t *h, uint32_t i);
void st_pg_free(st_hash_t *h);
void st_pg_dup(const st_hash_t *h, st_hash_t *c);
void st_pg_count_log(const st_hash_t *h, st_live_t *t, int sign);
void st_pg_bind(st_hash_t *h, store_ctx_t *ctx);
/* A checkpoint's paged hash (hash.c reads the stream): h, an empty table,
 * becomes paged with this directory (dir is taken, whatever the result);
 * then, once its overlay entries are in h->ix, st_pg_loaded checks the
 * whole and counts the overlay into the ranges. Each returns 0 or -1
 * (not a paged hash AtticDB wrote). */
int st_pg_adopt(st_hash_t *h, uint64_t seed, uint64_t objid, st_pgdir_t *dir, uint32_t ndir);
int st_pg_loaded(st_hash_t *h);

#endif
