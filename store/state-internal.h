/*
 * state-internal.h - what the store's state-machine files share: the
 * context, the entry layout and its helpers, and the command handlers.
 *
 *   state.c     context, entries, reading values back from the log, the
 *               tables that route records and read requests to handlers,
 *               background maintenance
 *   value.c     values beyond one extent (piece lists), reading byte ranges
 *   strings.c   string commands (SET, INCRBY, APPEND, GET, ...)
 *   bits.c      bit commands (SETBIT, GETBIT, BITCOUNT, BITPOS)
 *   keyspace.c  key and database commands (DEL, EXPIRE, TTL, DBSIZE, ...)
 *   exec.c      transactions (CMD_EXEC) and the WATCH bookkeeping
 *
 * Private to store/: the public API is store-internal.h. See state.c's
 * banner for the value design (extents in the log) and the determinism rules
 * every handler follows: an apply handler uses ctx->now (the apply clock),
 * never the wall clock, and computes its reply only when r != NULL (live),
 * while changing the state identically either way (replay).
 */
#ifndef ATTIC_STATE_INTERNAL_H
#define ATTIC_STATE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "command.h"
#include "store/core/index.h"
#include "record.h"
#include "store-internal.h"

/*
 * Value representation (the design is in store/value.c's banner). An
 * entry's vkind byte holds two things:
 *   bits 0-1  how the bytes after the inline prefix are kept:
 *             VK_INLINE (none), VK_EXTENT (one extent in the log, 12 bytes
 *             in the entry), VK_LIST (a pointer to an st_pieces_t)
 *   bits 2-3  the string encoding OBJECT ENCODING reports (VENC_*)
 * Use st_ent_kind() / st_ent_enc(), never vkind directly: a raw or
 * float-made value has bits set above the kind.
 */
enum { VK_INLINE = 0, VK_EXTENT = 1, VK_LIST = 2 };
#define VK_KIND_MASK 0x03u
#define VK_ENC_SHIFT 2
enum {
    VENC_AUTO = 0, /* as SET leaves it: int, embstr or raw by the bytes */
    VENC_RAW = 1,  /* raw whatever the bytes (APPEND, SETRANGE, SETBIT) */
    VENC_STR = 2,  /* embstr or raw by length, never int (INCRBYFLOAT) */
};

#define EXT1_BYTES     12u
#define STORE_FD_CACHE 64u

/* Piece kinds of an st_pieces_t (value.c). */
enum { PIECE_LOG = 0, PIECE_ZERO = 1, PIECE_RAM = 2 };
#define PIECE_KIND_SHIFT 62
#define PIECE_END_MASK   ((UINT64_C(1) << PIECE_KIND_SHIFT) - 1)
/* Largest value the pieces can describe (ends are 62-bit). */
#define ST_VALUE_MAX PIECE_END_MASK

/* One piece of a value's tail: `end` (low 62 bits) is the offset just past
 * the piece, counted from the end of the inline prefix, so a piece starts
 * where the previous one ends and lookups are a binary search. */
typedef struct st_piece {
    uint64_t where; /* PIECE_LOG: LSN of the first byte; PIECE_RAM: the
                     * bytes (malloc'd, exactly the piece's length);
                     * PIECE_ZERO: 0 */
    uint64_t end;   /* kind << PIECE_KIND_SHIFT | end offset */
} st_piece_t;

typedef struct st_pieces {
    uint64_t ram_bytes; /* bytes held by PIECE_RAM pieces */
    uint32_t n, cap;
    st_piece_t p[];
} st_pieces_t;

static inline unsigned st_ent_kind(const idx_entry_t *e)
{
    return e->vkind & VK_KIND_MASK;
}
static inline unsigned st_ent_enc(const idx_entry_t *e)
{
    return (e->vkind >> VK_ENC_SHIFT) & 3u;
}
static inline void st_ent_set_enc(idx_entry_t *e, unsigned enc)
{
    e->vkind = (uint8_t)((e->vkind & VK_KIND_MASK) | (enc << VK_ENC_SHIFT));
}

/* One database: its index and counters. SWAPDB swaps the pointers in
 * ctx->dbs, so a database's number is its position there, not a field. */
typedef struct st_db {
    idx_t ix;
    struct store_ctx *ctx;
    uint64_t expires; /* entries with a TTL */
    /* No entry expires before this (a lower bound; INT64_MAX = none), so
     * DBSIZE knows in O(1) when no key is expired but not yet reclaimed.
     * Lowered whenever a TTL is set; raised to the true minimum by each
     * full active-expiry pass (state.c). */
    int64_t next_expiry;
    int64_t pass_min;  /* minimum TTL the current pass has seen */
    int64_t set_min;   /* minimum TTL set since the current pass began */
    unsigned watch_id; /* exec.c: identity of these contents for WATCH (moves with SWAPDB) */
} st_db_t;

/* CMD_EXEC's decoded arguments (exec.c): the record's own, and those of the
 * nested command being applied, apart from ctx->args, which every decode
 * (a read inside the transaction included) reuses. */
typedef struct st_exec_bufs {
    rec_arg_t *outer, *nested;
    uint32_t outer_cap, nested_cap;
} st_exec_bufs_t;

struct store_ctx {
    st_db_t **dbs;
    int ndb;
    char *dir;
    uint64_t segment_size;
    int64_t max_bulk;   /* proto-max-bulk-len: APPEND's limit; <= 0 none */
    uint64_t max_reply; /* 0 = none */
    int64_t now;        /* apply clock */
    uint64_t applied;
    uint64_t expires;     /* entries with a TTL, all databases */
    uint64_t entry_bytes; /* requested bytes of entries and extent lists */
    rec_arg_t *args;
    uint32_t args_cap;
    struct {
        uint64_t start;
        int fd;
    } fds[STORE_FD_CACHE];
    int expire_db; /* database the active expiry pass is in */
    uint64_t expire_cursor;
    int64_t expire_pass_now; /* apply clock when the last full pass ended */
    int expire_pass_done;
    struct st_watch *watch; /* exec.c: recent changes, for WATCH */
    st_exec_bufs_t exec;
};

/* A write record's arguments, decoded in place (pointers into the record). */
typedef struct apply_args {
    const rec_arg_t *argv;
    uint16_t argc;
    const unsigned char *rec; /* for the log position of argument bytes */
    uint64_t lsn;             /* the record's LSN */
    unsigned dbnum;           /* the record's database */
    st_db_t *db;              /* ctx->dbs[dbnum] */
} apply_args_t;

/* A read request's arguments (the user's, after the command name). */
typedef struct read_args {
    const rec_arg_t *argv;
    uint16_t argc;
    unsigned dbnum;
    st_db_t *db;
    int64_t now; /* wall clock live; the apply clock inside EXEC */
} read_args_t;

typedef void st_apply_t(store_ctx_t *ctx, const apply_args_t *a, buf_t *r);
typedef void st_read_t(store_ctx_t *ctx, const read_args_t *a, buf_t *r);
typedef st_apply_t *st_apply_fn;
typedef st_read_t *st_read_fn;

/* The handlers, declared from the registry (common/commands.def): an
 * st_apply_t per canonical write operation (OP rows: strings.c, bits.c,
 * keyspace.c, exec.c, state.c), an st_read_t per READ command. state.c
 * indexes them by operation id. */
#define ST_DECL_LOCAL(handler)
#define ST_DECL_WRITE(handler)
#define ST_DECL_READ(handler) st_read_t handler;
#define ST_DECL_MULTI(handler)
#define CMD(ID, num, name, arity, flags, first, last, step, cats, route, handler, ...)             \
    ST_DECL_##route(handler)
#define OP(ID, handler, ...) st_apply_t handler;
#include "commands.def"

/* ---- state.c: memory ---- */
void *st_xmalloc(size_t n); /* aborts when out of memory */
void *st_xrealloc(void *old, size_t n);

/* ---- state.c: entries ---- */
size_t st_entry_size(uint32_t klen, uint8_t ilen, uint8_t vkind);
unsigned char *st_ent_inline(idx_entry_t *e);
unsigned char *st_ent_tail(idx_entry_t *e);
void st_ent_get_ext1(idx_entry_t *e, uint64_t *lsn, uint32_t *len);
void st_ent_set_ext1(idx_entry_t *e, uint64_t lsn, uint32_t len);
st_pieces_t *st_ent_pieces(idx_entry_t *e);
void st_ent_set_pieces(idx_entry_t *e, st_pieces_t *l);
uint64_t st_ent_vlen(idx_entry_t *e);
/* A new entry holding a SET-style value (inline when short, else one
 * extent at val_lsn), not yet in any index. */
idx_entry_t *st_ent_new(const rec_arg_t *key, const rec_arg_t *val, uint64_t val_lsn,
                        int64_t expire_at);
/* Put e into db, in place of *slot's entry when slot is not NULL. */
void st_ent_store(st_db_t *db, idx_entry_t **slot, idx_entry_t *e);
/* Resize *slot's entry for a new value shape; the caller fills it in. */
idx_entry_t *st_ent_resize(st_db_t *db, idx_entry_t **slot, uint8_t ilen, uint8_t vkind);
void st_ent_set_expire(st_db_t *db, idx_entry_t *e, int64_t at);
/* The slot of a key live at `now` in db, or NULL; with reap set, a key
 * found expired is removed (apply path only: now is the apply clock). */
idx_entry_t **st_find_live(st_db_t *db, const rec_arg_t *key, int64_t now, int reap);
/* Remove the entry *slot points at from db. */
void st_remove(st_db_t *db, idx_entry_t **slot);
/* Unlink *slot's entry from db without freeing it, its bytes and TTL taken
 * out of the counters (RENAME, MOVE: st_ent_store puts it back). */
idx_entry_t *st_ent_take(st_db_t *db, idx_entry_t **slot);

/* ---- state.c: values ---- */
/* Copy e's whole value (st_ent_vlen bytes) to dst. Returns 0 or -1 (logged). */
int st_read_value(store_ctx_t *ctx, idx_entry_t *e, unsigned char *dst);
/* Append e's value as a bulk string, or an error reply (too large, I/O). */
void st_reply_value(store_ctx_t *ctx, idx_entry_t *e, buf_t *b);
/* The same for bytes [off, off + len) of e's value (within its length). */
void st_reply_range(store_ctx_t *ctx, idx_entry_t *e, uint64_t off, uint64_t len, buf_t *b);
/* Copy len bytes of the log at lsn to dst. Returns 0 or -1 (logged). */
int st_read_log(store_ctx_t *ctx, uint64_t lsn, uint64_t len, unsigned char *dst);
/* The log position of argument i's bytes. */
static inline uint64_t st_arg_lsn(const apply_args_t *a, int i)
{
    return a->lsn + (uint64_t)(a->argv[i].ptr - a->rec);
}
/* Redis' "wrong number of arguments for '<name>' command". */
void st_reply_arity(buf_t *b, cmd_id_t id);

/* ---- value.c: values beyond one extent (piece lists), byte ranges ---- */
uint64_t st_pieces_len(const st_pieces_t *l);   /* bytes in the tail */
uint64_t st_pieces_bytes(const st_pieces_t *l); /* RAM it holds */
void st_pieces_free(st_pieces_t *l);
/* Copy bytes [off, off + len) of e's value (within its length) to dst.
 * Returns 0 or -1 (I/O error, logged). */
int st_read_range(store_ctx_t *ctx, idx_entry_t *e, uint64_t off, uint64_t len, unsigned char *dst);
/* Pass bytes [off, off + len) of e's value to fn in order, in chunks; p is
 * NULL for a run of n zero bytes. fn returns nonzero to stop. Returns 1
 * when fn stopped, 0 at the end, -1 on an I/O error (logged). */
typedef int (*st_chunk_fn)(void *arg, const unsigned char *p, size_t n);
int st_scan_range(store_ctx_t *ctx, idx_entry_t *e, uint64_t off, uint64_t len, st_chunk_fn fn,
                  void *arg);
/* Apply path (reads of the log failing there are fatal). Overwrite value
 * bytes [off, off + len) of *slot's entry with src, which are the log's
 * bytes at src_lsn (a record's argument), zero-filling from the old end to
 * off; the entry may move (*slot follows). len == 0 changes nothing. */
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
/* A new entry named key with a deep copy of e's value, encoding and expiry
 * (COPY), not yet in any index. */
idx_entry_t *st_ent_dup(idx_entry_t *e, const rec_arg_t *key);

/* ---- state.c: routing (used by exec.c for queued commands) ---- */
/* The handler of canonical write `op` when argc and the fixed-width
 * arguments have the canonical shape, else NULL. */
st_apply_fn st_write_handler(cmd_id_t op, uint16_t argc, const rec_arg_t *argv);
/* The handler of read `op`, or NULL. */
st_read_fn st_read_handler(cmd_id_t op);
/* Database number n, or NULL when out of range. */
st_db_t *st_db(store_ctx_t *ctx, unsigned n);

/* ---- exec.c: WATCH bookkeeping. Every apply handler that changes a key
 * (value, TTL, existence) calls st_key_changed; FLUSHDB and FLUSHALL call
 * st_db_flushed for each database they empty, SWAPDB st_db_swapped for
 * each of the two databases (partner: the other one). ---- */
void st_key_changed(store_ctx_t *ctx, const apply_args_t *a, unsigned dbnum, const rec_arg_t *key);
void st_db_flushed(store_ctx_t *ctx, const apply_args_t *a, unsigned dbnum);
void st_db_swapped(store_ctx_t *ctx, const apply_args_t *a, unsigned dbnum, unsigned partner);
void st_watch_free(store_ctx_t *ctx);
/* Create the table now if there is none yet. EXEC does, first thing: when
 * the table is made fixes the databases' identities (st_db_t.watch_id), so
 * it must happen at the same record on every replay. */
void st_watch_ensure(store_ctx_t *ctx);
/* Must this watched key abort EXEC? 1 or 0 by the rules of exec.c's banner,
 * for the key watched in database dbnum (in range) at watch_lsn and
 * watch_time (the wall clock then). */
int st_watch_dirty(store_ctx_t *ctx, unsigned dbnum, const unsigned char *key, size_t klen,
                   uint64_t watch_lsn, int64_t watch_time);
/* (st_key_changed reads the key's TTL: call it after the change.) Tests:
 * size the table of recent changes at 2^bucket_bits buckets (before the
 * first record; small tables force collisions). */
void st_watch_configure(store_ctx_t *ctx, unsigned bucket_bits);

#endif
