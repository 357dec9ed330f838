/*
 * pager.h - the store process's pager (store/pager.c, D60, D63, D64): it
 * writes the records that keep large hashes, sets, lists and streams on
 * disk (CMD_PAGEIN, CMD_PAGE: core/hash_paged.c has the design; CMD_LPAGE:
 * core/list.c; CMD_SPAGE: core/stream.c).
 */
#ifndef ATTIC_STORE_PAGER_H
#define ATTIC_STORE_PAGER_H

#include <stdint.h>

#include "compact.h"
#include "config.h"
#include "shm.h"
#include "store-internal.h"
#include "store/core/hash.h"
#include "store/core/list.h"
#include "store/core/chunked.h"

#define STORE_PAGER_QUEUE 256

/* A key the pager will look at: database, name. */
typedef struct store_pager_note {
    unsigned db;
    uint32_t klen;
    unsigned char *key;
    uint64_t pagein_end; /* a CMD_PAGEIN for it ends here in the ring (0: none) */
    uint64_t below;      /* compaction's line when its pass noted the key (0: none) */
} store_pager_note_t;

typedef struct store_pager {
    st_pgpolicy_t pol;
    store_pager_note_t q[STORE_PAGER_QUEUE];
    uint32_t nq, next; /* next: where the next turn starts in q */
    st_pgbuilt_t built;
    st_cpbuilt_t cbuilt;    /* a list's or stream's record (chunked collections) */
    uint64_t last_end;      /* ring position just past the last record written */
    uint64_t rng;           /* seeds for CMD_PAGEIN */
    uint64_t space_written; /* ring bytes of page records, ever */
    uint64_t records, pages, page_bytes, page_ins; /* counts, for the log and tests */
    int zset; /* the record being written is a sorted set's (its fault point) */
} store_pager_t;

/* Set up from cfg; ring_max is the ring's largest record. ctx's writes
 * are then noted (ctx->on_changed) when paging is on. */
void store_pager_init(store_pager_t *pg, store_ctx_t *ctx, const config_t *cfg, uint64_t ring_max,
                      uint64_t seed);
void store_pager_free(store_pager_t *pg);

/* Whether the collection at e wants the pager's work, with pages below
 * `below` (compaction's line, 0 = none) to rewrite. */
int store_pager_wants(const store_pager_t *pg, idx_entry_t *e, uint64_t below);

/* Note the collection at (db, key) for a later look; below is the line of
 * the compaction pass that notes one with pages below it (0: a write
 * noted it): the pager rewrites those pages however soon the pass ends. */
void store_pager_note_key(store_pager_t *pg, unsigned db, const void *key, uint32_t klen,
                          uint64_t below);

/*
 * One turn: for the noted keys, write the CMD_PAGEIN or CMD_PAGE records
 * they want, through the store's ring claimer, up to `budget` ring bytes;
 * pages below `below` (compaction's line, 0 = none) are rewritten too.
 * Returns the ring bytes written (0: nothing to do, no room, or a
 * replica: its log is its leader's).
 */
uint64_t store_pager_run(store_pager_t *pg, store_ctx_t *ctx, shm_t *shm, store_compact_t *c,
                         uint64_t below, uint64_t budget);

#endif
