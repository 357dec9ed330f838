/*
 * state-internal.h - what the store's state-machine files share: the
 * context, the entry layout and its helpers, and the command handlers.
 *
 *   state.c     context, entries, reading values back from the log, the
 *               tables that route records and read requests to handlers,
 *               background maintenance
 *   strings.c   string commands (SET, INCRBY, APPEND, GET, ...)
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
#include "index.h"
#include "record.h"
#include "store-internal.h"

enum { VK_INLINE = 0, VK_EXTENT = 1, VK_LIST = 2 };

#define EXT1_BYTES     12u
#define STORE_FD_CACHE 64u

typedef struct store_extent {
    uint64_t lsn;
    uint64_t len;
} store_extent_t;

typedef struct ext_list {
    uint64_t ext_bytes; /* sum of the extents' lengths */
    uint32_t n, cap;
    store_extent_t ext[];
} ext_list_t;

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
    int64_t pass_min;    /* minimum TTL the current pass has seen */
    int64_t set_min;     /* minimum TTL set since the current pass began */
    unsigned watch_id;   /* exec.c: identity of these contents for WATCH (moves with SWAPDB) */
} st_db_t;

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
    int expire_db;           /* database the active expiry pass is in */
    uint64_t expire_cursor;
    int64_t expire_pass_now; /* apply clock when the last full pass ended */
    int expire_pass_done;
    struct st_watch *watch;  /* exec.c: recent changes, for WATCH */
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

typedef void (*st_apply_fn)(store_ctx_t *ctx, const apply_args_t *a, buf_t *r);
typedef void (*st_read_fn)(store_ctx_t *ctx, const read_args_t *a, buf_t *r);

/* ---- state.c: memory ---- */
void *st_xmalloc(size_t n);             /* aborts when out of memory */
void *st_xrealloc(void *old, size_t n);

/* ---- state.c: entries ---- */
size_t st_entry_size(uint32_t klen, uint8_t ilen, uint8_t vkind);
unsigned char *st_ent_inline(idx_entry_t *e);
unsigned char *st_ent_tail(idx_entry_t *e);
void st_ent_get_ext1(idx_entry_t *e, uint64_t *lsn, uint32_t *len);
void st_ent_set_ext1(idx_entry_t *e, uint64_t lsn, uint32_t len);
ext_list_t *st_ent_list(idx_entry_t *e);
void st_ent_set_list(idx_entry_t *e, ext_list_t *l);
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

/* ---- state.c: values ---- */
/* Copy e's whole value (st_ent_vlen bytes) to dst. Returns 0 or -1 (logged). */
int st_read_value(store_ctx_t *ctx, idx_entry_t *e, unsigned char *dst);
/* Append e's value as a bulk string, or an error reply (too large, I/O). */
void st_reply_value(store_ctx_t *ctx, idx_entry_t *e, buf_t *b);
/* The log position of argument i's bytes. */
static inline uint64_t st_arg_lsn(const apply_args_t *a, int i)
{
    return a->lsn + (uint64_t)(a->argv[i].ptr - a->rec);
}
/* Redis' "wrong number of arguments for '<name>' command". */
void st_reply_arity(buf_t *b, cmd_id_t id);

/* ---- state.c: routing (used by exec.c for queued commands) ---- */
/* The handler of canonical write `op` when argc and the fixed-width
 * arguments have the canonical shape, else NULL. */
st_apply_fn st_write_handler(cmd_id_t op, uint16_t argc, const rec_arg_t *argv);
/* The handler of read `op`, or NULL. */
st_read_fn st_read_handler(cmd_id_t op);
/* Database number n, or NULL when out of range. */
st_db_t *st_db(store_ctx_t *ctx, unsigned n);

/* ---- exec.c: WATCH bookkeeping. Every apply handler that changes a key
 * (value, TTL, existence) calls st_key_changed; FLUSHDB, FLUSHALL and
 * SWAPDB call st_db_changed. ---- */
void st_key_changed(store_ctx_t *ctx, const apply_args_t *a, unsigned dbnum,
                    const rec_arg_t *key);
void st_db_changed(store_ctx_t *ctx, const apply_args_t *a, unsigned dbnum);
void st_watch_free(store_ctx_t *ctx);
void st_apply_exec(store_ctx_t *ctx, const apply_args_t *a, buf_t *r);
/* (st_key_changed reads the key's TTL: call it after the change.) Tests:
 * size the table of recent changes at 2^bucket_bits buckets (before the
 * first record; small tables force collisions). */
void st_watch_configure(store_ctx_t *ctx, unsigned bucket_bits);

/* ---- strings.c ---- */
void st_apply_set(store_ctx_t *ctx, const apply_args_t *a, buf_t *r);
void st_apply_mset(store_ctx_t *ctx, const apply_args_t *a, buf_t *r);
void st_apply_incrby(store_ctx_t *ctx, const apply_args_t *a, buf_t *r);
void st_apply_append(store_ctx_t *ctx, const apply_args_t *a, buf_t *r);
void st_apply_getdel(store_ctx_t *ctx, const apply_args_t *a, buf_t *r);
void st_read_get(store_ctx_t *ctx, const read_args_t *a, buf_t *r);
void st_read_mget(store_ctx_t *ctx, const read_args_t *a, buf_t *r);
void st_read_strlen(store_ctx_t *ctx, const read_args_t *a, buf_t *r);

/* ---- keyspace.c ---- */
void st_apply_del(store_ctx_t *ctx, const apply_args_t *a, buf_t *r);
void st_apply_pexpireat(store_ctx_t *ctx, const apply_args_t *a, buf_t *r);
void st_apply_persist(store_ctx_t *ctx, const apply_args_t *a, buf_t *r);
void st_apply_flushall(store_ctx_t *ctx, const apply_args_t *a, buf_t *r);
void st_apply_tick(store_ctx_t *ctx, const apply_args_t *a, buf_t *r);
void st_read_exists(store_ctx_t *ctx, const read_args_t *a, buf_t *r);
void st_read_ttl(store_ctx_t *ctx, const read_args_t *a, buf_t *r);
void st_read_pttl(store_ctx_t *ctx, const read_args_t *a, buf_t *r);
void st_read_dbsize(store_ctx_t *ctx, const read_args_t *a, buf_t *r);
void st_apply_rename(store_ctx_t *ctx, const apply_args_t *a, buf_t *r);
void st_apply_copy(store_ctx_t *ctx, const apply_args_t *a, buf_t *r);
void st_apply_move(store_ctx_t *ctx, const apply_args_t *a, buf_t *r);
void st_apply_swapdb(store_ctx_t *ctx, const apply_args_t *a, buf_t *r);
void st_apply_flushdb(store_ctx_t *ctx, const apply_args_t *a, buf_t *r);
void st_read_expiretime(store_ctx_t *ctx, const read_args_t *a, buf_t *r);
void st_read_pexpiretime(store_ctx_t *ctx, const read_args_t *a, buf_t *r);
void st_read_type(store_ctx_t *ctx, const read_args_t *a, buf_t *r);
void st_read_touch(store_ctx_t *ctx, const read_args_t *a, buf_t *r);
void st_read_keys(store_ctx_t *ctx, const read_args_t *a, buf_t *r);
void st_read_scan(store_ctx_t *ctx, const read_args_t *a, buf_t *r);
void st_read_randomkey(store_ctx_t *ctx, const read_args_t *a, buf_t *r);

#endif
