/*
 * store-internal.h - the store's state machine without the process around it
 * (store/route.c, store/state.c; the layers below them are listed in
 * store/core/entry.h), so tests and tools can drive it record by record.
 *
 * A store_ctx_t holds the key index of each database and the apply clock. Records are applied
 * with store_apply() exactly as they lie in the ring or the log (header
 * first, the header's lsn giving their position); the same function serves
 * replay (reply == NULL: nothing is computed for a reply, no value is read
 * back) and live operation, which is what makes replay reproduce the live
 * state (ARCHITECTURE.md, contract 4).
 *
 * Values longer than STORE_INLINE_MAX bytes are not copied: the index keeps
 * where they are in the log, and reads fetch them from the segment files in
 * cfg->dir with pread. So a record must be in its segment file (written by
 * the logger; durable) before it is applied, and the file must outlive every
 * key that points into it.
 */
#ifndef ATTIC_STORE_INTERNAL_H
#define ATTIC_STORE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "config.h"

/* Values up to this many bytes live in the index (every INCR result fits). */
#define STORE_INLINE_MAX 24u

/* Replies (and old values) larger than the reply limit become this error. */
#define STORE_ERR_TOO_LARGE "ERR reply too large for the store channel"
/* A value could not be read back from its segment (logged with errno). */
#define STORE_ERR_IO "ERR I/O error reading the value from the log"

typedef struct store_ctx store_ctx_t;

/*
 * A fresh, empty state machine reading values from cfg->dir, with segments of
 * cfg->segment_size bytes and APPEND limited by cfg->proto_max_bulk_len (<= 0:
 * no limit). seed keys the index hash. Returns NULL when out of memory.
 */
store_ctx_t *store_ctx_create(const config_t *cfg, uint64_t seed);
void store_ctx_destroy(store_ctx_t *ctx);

/* Largest reply store_read/store_apply produce (0 = no limit): a value that
 * would exceed it is answered with STORE_ERR_TOO_LARGE instead of being read. */
void store_set_max_reply(store_ctx_t *ctx, uint64_t max_reply);

/* A large value's reply in parts (D48). While store_set_reply_parts(ctx,
 * 1), a GET or GETRANGE of at least ST_STREAM_MIN bytes (core/value.h)
 * writes only its bulk's header into the reply and leaves the bytes as a
 * snapshot, which store_take_reply_parts hands over (NULL when none):
 * store_vsnap_read reads bytes of it (0, or -1 on an I/O error), and the
 * log it reads stays while store_set_reply_pin holds an LSN at or below
 * store_vsnap_lowest (UINT64_MAX: none) for compaction (compact.c). */
typedef struct st_vsnap store_vsnap_t;
void store_set_reply_parts(store_ctx_t *ctx, int ok);
store_vsnap_t *store_take_reply_parts(store_ctx_t *ctx);
void store_set_reply_pin(store_ctx_t *ctx, uint64_t lsn);
uint64_t store_vsnap_len(const store_vsnap_t *v);
uint64_t store_vsnap_lowest(const store_vsnap_t *v);
int store_vsnap_read(store_ctx_t *ctx, store_vsnap_t *v, uint64_t off, uint64_t n, void *dst);
void store_vsnap_free(store_vsnap_t *v);
/* A reply made as it goes (HGETALL of a paged hash, D60): no length;
 * store_vsnap_next appends at most max bytes of it to out: 0 while more
 * remain, 1 when done, -1 on a read error. */
int store_vsnap_is_gen(const store_vsnap_t *v);
int store_vsnap_next(store_ctx_t *ctx, store_vsnap_t *v, buf_t *out, size_t max);

/*
 * Apply one record (REC_CMD or REC_PAD, as laid out in the ring or log).
 * When reply is not NULL, the command's RESP reply is appended to it.
 * Returns 0 when applied; 1 when the record is a well-formed REC_CMD the store
 * does not understand (logged, treated as a no-op so that replay meets the
 * same no-op, and an error reply is given); -1 when the record is not a
 * record at all (bad length or type: corruption or a bug upstream).
 */
int store_apply(store_ctx_t *ctx, const void *rec, buf_t *reply);

/*
 * Answer a read request: payload as rec_encode_payload() made it (CMD_GET,
 * CMD_MGET, CMD_EXISTS, CMD_STRLEN, CMD_TTL, CMD_PTTL, CMD_DBSIZE). Expiry is
 * judged at now_ms (store_read: the wall clock). Reads never change the state:
 * a key expired by the wall clock is hidden, not removed, because removal is
 * a state change and must happen at the same point on replay (by record time).
 * Appends the reply to *reply; an unknown or malformed request gets an error
 * reply. Returns 0.
 */
int store_read(store_ctx_t *ctx, const unsigned char *payload, size_t len, buf_t *reply);
int store_read_at(store_ctx_t *ctx, const unsigned char *payload, size_t len, int64_t now_ms,
                  buf_t *reply);
/* The same in database dbnum (store_read and store_read_at use 0); a dbnum
 * out of range gets an error reply. */
int store_read_db(store_ctx_t *ctx, unsigned dbnum, const unsigned char *payload, size_t len,
                  int64_t now_ms, buf_t *reply);
/* The same for a client speaking protocol proto (2 or 3: HGETALL's map,
 * HRANDFIELD's pairs; store_read_db is proto 2). */
int store_read_proto(store_ctx_t *ctx, unsigned dbnum, int proto, const unsigned char *payload,
                     size_t len, int64_t now_ms, buf_t *reply);

/* Position after the last applied record (0 before any). */
uint64_t store_applied(const store_ctx_t *ctx);
/* Set the position replay starts from (before the first store_apply). */
void store_set_applied(store_ctx_t *ctx, uint64_t lsn);
/* The apply clock: max of every applied record's time_ms. */
int64_t store_now(const store_ctx_t *ctx);
uint64_t store_key_count(const store_ctx_t *ctx);
uint64_t store_expire_count(const store_ctx_t *ctx);
/* Whether the read cache is there and may be filled (D70): not under a
 * maxmemory-policy that chooses by access, which a frontend's hit would
 * not update. */
int store_cache_allowed(const store_ctx_t *ctx);
/* What GET key in database dbnum may leave in the read cache (D70): 1 when
 * the key is a string without a TTL, 0 when it is absent (or expired),
 * -1 otherwise (another type, a TTL, or !store_cache_allowed). */
int store_get_cacheable(store_ctx_t *ctx, unsigned dbnum, const void *key, uint32_t klen,
                        int64_t now);
/* Whether a read of key may leave its reply in the read cache (D71): the
 * key exists without a TTL and store_cache_allowed. */
int store_key_cacheable(store_ctx_t *ctx, unsigned dbnum, const void *key, uint32_t klen,
                        int64_t now);
/* Number of databases, and one database's key and TTL counts. */
int store_db_count(const store_ctx_t *ctx);
void store_db_stats(const store_ctx_t *ctx, int dbnum, uint64_t *keys, uint64_t *expires);

/*
 * Background work for idle moments, about `budget` buckets of it: move
 * buckets of a resize in progress, and remove keys that expired by the apply
 * clock (never the wall clock: see store_read). Returns 1 when more work is
 * pending, 0 when there is nothing to do until more records are applied.
 */
int store_maintain(store_ctx_t *ctx, int budget);

/*
 * An order-independent digest of the logical state (every live key at now_ms
 * with its value bytes and expiry), to compare two states in tests and
 * tools. Returns 0, or -1 when a value could not be read.
 */
int store_digest(store_ctx_t *ctx, int64_t now_ms, uint64_t *out);

/* Keyspace notifications (store/core/notify.c, D37): where events go
 * (one message to one channel), the notify-keyspace-events classes to
 * publish for what is applied from now on (0 = none, the default: replay
 * and tests publish nothing), keys expiring at or before floor count as
 * published already, and the latest expiry published. */
void store_set_notify_out(store_ctx_t *ctx,
                          void (*out)(void *arg, const char *chan, size_t clen, const char *msg,
                                      size_t mlen),
                          void *arg);
void store_set_notify_flags(store_ctx_t *ctx, uint32_t flags);
void store_set_notify_expired_floor(store_ctx_t *ctx, int64_t floor);
int64_t store_notify_expired_max(const store_ctx_t *ctx);

/* RAM held by the index: bucket arrays plus the entries' allocations as
 * requested (allocator rounding not included). */
uint64_t store_index_bytes(const store_ctx_t *ctx);
/* Of it, the bucket arrays (what Redis counts as its hash tables' overhead). */
uint64_t store_table_bytes(const store_ctx_t *ctx);
/* Keys CMD_EVICT records removed since ctx was created (INFO evicted_keys). */
uint64_t store_evicted(const store_ctx_t *ctx);
/* Keys removed by expiry, lazy or active, and read lookups that found
 * their key or not (INFO expired_keys, keyspace_hits, keyspace_misses). */
void store_stat_counts(const store_ctx_t *ctx, uint64_t *expired, uint64_t *hits, uint64_t *misses);

#endif
