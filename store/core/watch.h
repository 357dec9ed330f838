/*
 * watch.h - the WATCH bookkeeping (core/watch.c): the table of recent
 * changes EXEC judges watched keys by. Below the type handlers, which
 * report every change here; route.c's EXEC asks whether a watched key is
 * dirty.
 */
#ifndef ATTIC_STORE_WATCH_H
#define ATTIC_STORE_WATCH_H

#include <stddef.h>
#include <stdint.h>

#include "entry.h"

/* Every apply handler that changes a key (value, TTL, existence) calls
 * st_key_changed; FLUSHDB and FLUSHALL call st_db_flushed for each database
 * they empty, SWAPDB st_db_swapped for each of the two databases (partner:
 * the other one). */
void st_key_changed(store_ctx_t *ctx, const apply_args_t *a, unsigned dbnum, const rec_arg_t *key);
/* st_key_changed, with the keyspace event (of class cls, enum ps_notify)
 * the change publishes instead of the operation's (notify.h). */
void st_key_changed_as(store_ctx_t *ctx, const apply_args_t *a, unsigned dbnum,
                       const rec_arg_t *key, unsigned cls, const char *event);
/* Only the read cache's copy of the key's reply is dropped (D70): for a
 * value whose bytes change without a change Redis reports (BITFIELD's
 * growth, PFDEBUG's dense form). st_key_changed does this too. */
void st_rcache_drop(store_ctx_t *ctx, unsigned dbnum, const rec_arg_t *key);
void st_db_flushed(store_ctx_t *ctx, const apply_args_t *a, unsigned dbnum);
void st_db_swapped(store_ctx_t *ctx, const apply_args_t *a, unsigned dbnum, unsigned partner);
void st_watch_free(store_ctx_t *ctx);
/* Create the table now if there is none yet. The store process does,
 * before its replay (store.c), so the first write does not pay for it;
 * EXEC does too, first thing (a context of the tests). When the table is
 * made fixes the databases' identities (st_db_t.watch_id), so it must
 * happen at the same record on every replay. */
void st_watch_ensure(store_ctx_t *ctx);
/* Must this watched key abort EXEC? 1 or 0 by the rules of watch.c's banner,
 * for the key watched in database dbnum (in range) at watch_lsn and
 * watch_time (the wall clock then). */
int st_watch_dirty(store_ctx_t *ctx, unsigned dbnum, const unsigned char *key, size_t klen,
                   uint64_t watch_lsn, int64_t watch_time);
/* (st_key_changed reads the key's TTL: call it after the change.) Tests:
 * size the table of recent changes at 2^bucket_bits buckets (before the
 * first record; small tables force collisions). */
void st_watch_configure(store_ctx_t *ctx, unsigned bucket_bits);
/* Checkpoints (store/checkpoint.c): the table's state as bytes. size is 0
 * while no table exists; save writes size bytes; load replaces the table
 * (the databases' watch_id are set by the caller) and returns 0, or -1
 * when the bytes are not a table. */
size_t st_watch_state_size(const store_ctx_t *ctx);
void st_watch_state_save(const store_ctx_t *ctx, unsigned char *out);
int st_watch_state_load(store_ctx_t *ctx, const unsigned char *p, size_t n);

#endif
