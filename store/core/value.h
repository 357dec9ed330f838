/*
 * value.h - string values (core/value.c): reading them back, whole or a
 * byte range, from the entry, RAM or the log's segment files; the replies
 * that carry them; and changing a range of one while applying a record.
 * Used by the type handlers and by state.c's digest.
 */
#ifndef ATTIC_STORE_VALUE_H
#define ATTIC_STORE_VALUE_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "entry.h"

/*
 * Deferred log reads (D59). While ctx->defer is set and names the reply
 * buffer, st_reply_range_deferred leaves the log's bytes of a value as
 * holes in that buffer: the room is reserved (its bytes undefined) and each
 * hole {off, lsn, len} says which log bytes go at reply byte off. The
 * store process reads them (several reads in flight at once) before it
 * sends the reply. The log is append-only, so the bytes read later are the
 * bytes the reply would have had now, as long as their segment is not
 * deleted meanwhile (the store process pins the lowest LSN, as for a
 * reply in parts). At most `max` holes: past it, bytes are read at once.
 */
typedef struct st_hole {
    uint64_t off, lsn, len;
} st_hole_t;
typedef struct st_defer {
    const buf_t *buf; /* the reply buffer whose holes may be left */
    st_hole_t *hole;
    uint32_t n, cap, max;
    uint64_t lowest;           /* the lowest LSN a hole reads (UINT64_MAX: none) */
    const unsigned char *base; /* private: buf's bytes while a value is copied */
} st_defer_t;
/* Holes at or after reply byte mark are dropped (a handler cut its reply
 * back to mark). */
void st_defer_cut(store_ctx_t *ctx, const buf_t *b, size_t mark);

/* Largest value a string can hold (piece ends are 62-bit: pieces.h). */
#define ST_VALUE_MAX ((UINT64_C(1) << 62) - 1)

/* Copy e's whole value (st_ent_vlen bytes) to dst. Returns 0 or -1 (logged). */
int st_read_value(store_ctx_t *ctx, idx_entry_t *e, unsigned char *dst);
/* Append e's value as a bulk string, or an error reply (too large, I/O). */
void st_reply_value(store_ctx_t *ctx, idx_entry_t *e, buf_t *b);
/* The same for bytes [off, off + len) of e's value (within its length). */
void st_reply_range(store_ctx_t *ctx, idx_entry_t *e, uint64_t off, uint64_t len, buf_t *b);
/* st_reply_range whose log bytes may be left as holes (above) when b is
 * ctx->defer's buffer: GET, GETRANGE and MGET. */
void st_reply_range_deferred(store_ctx_t *ctx, idx_entry_t *e, uint64_t off, uint64_t len,
                             buf_t *b);
/* st_reply_range for a read that may send its bytes in parts (GET,
 * GETRANGE; D48): when ctx->reply_stream_ok and len is at least
 * ST_STREAM_MIN, only the bulk's header goes into b and the range is left
 * in ctx->reply_stream as a snapshot (store_vsnap_read reads it). */
#define ST_STREAM_MIN (4u << 20)
void st_reply_range_parts(store_ctx_t *ctx, idx_entry_t *e, uint64_t off, uint64_t len, buf_t *b);
struct st_vsnap;
/* A snapshot's length, the lowest LSN it reads (UINT64_MAX: none), bytes
 * [off, off + n) of it into dst (0, or -1 on a read error), and freeing
 * it. Reads are cheapest in order. */
uint64_t st_vsnap_len(const struct st_vsnap *v);
uint64_t st_vsnap_lowest(const struct st_vsnap *v);
int st_vsnap_read(store_ctx_t *ctx, struct st_vsnap *v, uint64_t off, uint64_t n,
                  unsigned char *dst);
void st_vsnap_free(struct st_vsnap *v);
/* A reply in parts made as it goes (a large collection's members, D60,
 * D65; a stream's entries, D64): next appends whole elements of the reply
 * to out until it has appended at least max bytes or is done, and returns
 * 0 while more remain, 1 when it is done, -1 on a read error
 * (st_vsnap_gen_next keeps what passed max for the next part); lowest is
 * the lowest LSN it will still read (UINT64_MAX: none); free frees the
 * state.
 * st_vsnap_gen wraps one (NULL: out of memory; the state is then the
 * caller's); its st_vsnap_len is 0 and st_vsnap_read is not for it. */
typedef struct st_vgen_ops {
    int (*next)(store_ctx_t *ctx, void *state, buf_t *out, size_t max);
    uint64_t (*lowest)(const void *state);
    void (*free)(void *state);
} st_vgen_ops_t;
struct st_vsnap *st_vsnap_gen(const st_vgen_ops_t *ops, void *state);
int st_vsnap_is_gen(const struct st_vsnap *v);
int st_vsnap_gen_next(store_ctx_t *ctx, struct st_vsnap *v, buf_t *out, size_t max);
/* All of l's bytes in one new buffer (the caller frees it), *len set to
 * their count; read while applying, so an I/O error stops the store. */
unsigned char *st_pieces_read(store_ctx_t *ctx, const st_pieces_t *l, uint64_t *len);
/* Close the cached descriptor of the segment starting at start, if any
 * (it was deleted: its space comes back only once no descriptor is open). */
void st_log_forget(store_ctx_t *ctx, uint64_t start);
/* Copy len bytes of the log at lsn to dst. Returns 0 or -1 (logged). */
int st_read_log(store_ctx_t *ctx, uint64_t lsn, uint64_t len, unsigned char *dst);
/* Copy bytes [off, off + len) of e's value (within its length) to dst.
 * Returns 0 or -1 (I/O error, logged). */
int st_read_range(store_ctx_t *ctx, idx_entry_t *e, uint64_t off, uint64_t len, unsigned char *dst);
/* Apply path: a value could not be read back while applying `what` (a
 * command's name): the store stops, as its state would no longer follow
 * the log; the respawned store replays the record. */
_Noreturn void st_apply_unreadable(const char *what);
/* Apply path: st_read_range, or st_apply_unreadable(what). */
void st_apply_read(store_ctx_t *ctx, idx_entry_t *e, uint64_t off, uint64_t len, unsigned char *dst,
                   const char *what);
/* Pass bytes [off, off + len) of e's value to fn in order, in chunks; p is
 * NULL for a run of n zero bytes. fn returns nonzero to stop. Returns 1
 * when fn stopped, 0 at the end, -1 on an I/O error (logged). */
typedef int (*st_chunk_fn)(void *arg, const unsigned char *p, size_t n);
int st_scan_range(store_ctx_t *ctx, idx_entry_t *e, uint64_t off, uint64_t len, st_chunk_fn fn,
                  void *arg);
/* Apply path (reads of the log failing there are fatal). Overwrite value
 * bytes [off, off + len) of *slot's entry with src, which are the log's
 * bytes at src_lsn (a record's argument), zero-filling from the old end to
 * off; the entry may move (*slot follows). len == 0 changes nothing.
 * src may be NULL: the bytes are then read from the log where RAM must
 * hold them (a large value's parts, D31). */
idx_entry_t *st_val_write(store_ctx_t *ctx, st_db_t *db, idx_entry_t **slot, uint64_t off,
                          const unsigned char *src, uint64_t src_lsn, uint64_t len);
/* Apply path: the RAM address of value byte `byte` of *slot's entry, to
 * change it, growing the value with zeros to byte + 1 bytes if shorter.
 * Valid until the entry is next changed. */
unsigned char *st_val_byte(store_ctx_t *ctx, st_db_t *db, idx_entry_t **slot, uint64_t byte);
/* A new entry whose value is a copy of p[0, len) (inline when short, else
 * held in RAM: INCRBYFLOAT's results), not yet in any index. */
idx_entry_t *st_ent_new_ram(const rec_arg_t *key, const unsigned char *p, size_t len,
                            int64_t expire_at);
/* A new entry whose value is the piece list l (taken: the entry owns it;
 * its log bytes are counted when the entry is stored), not yet in any
 * index. For values longer than STORE_INLINE_MAX (D31's parts). */
idx_entry_t *st_ent_new_pieces(const rec_arg_t *key, st_pieces_t *l, int64_t expire_at);
/* A new entry named key with a deep copy of e's value, encoding and expiry
 * (COPY), not yet in any index. */
idx_entry_t *st_ent_dup(idx_entry_t *e, const rec_arg_t *key);

#endif
