/*
 * entry.h - what every layer of the store's state machine shares: the
 * context (struct store_ctx), the databases, the entry layout and the
 * functions that put entries into, change them in, and take them out of a
 * database's index (core/entry.c), and the arguments a handler is given.
 *
 * The layers, bottom up (docs/ARCHITECTURE.md, "The store"):
 *   core/     alloc.c, index.c, pieces.c, access.c, entry.c, evict.c,
 *             value.c, watch.c
 *   types/    the command handlers, one file per type (t_string.c,
 *             t_bitmap.c, keyspace.c)
 *   store/    route.c (records and requests to handlers, EXEC),
 *             state.c (the context as a whole), store.c (the process)
 * A file calls only into its own layer's lower files and the layers below.
 * Private to store/: the public API is store-internal.h. Handlers follow
 * the determinism rules of route.c's banner: an apply handler uses ctx->now
 * (the apply clock), never the wall clock, and computes its reply only when
 * r != NULL (live), while changing the state identically either way.
 */
#ifndef ATTIC_STORE_ENTRY_H
#define ATTIC_STORE_ENTRY_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "access.h"
#include "command.h"
#include "groups.h"
#include "index.h"
#include "live.h"
#include "record.h"
#include "store/store-internal.h"

/*
 * Value representation (the design is in core/value.c's banner). An
 * entry's vkind byte holds three things:
 *   bits 0-1  how the bytes after the inline prefix are kept:
 *             VK_INLINE (none), VK_EXTENT (one extent in the log, 12 bytes
 *             in the entry), VK_LIST (a pointer to an st_pieces_t), or
 *             VK_OBJ: a collection (hash, ...), the tail a pointer to its
 *             st_obj_t (core/object.h), ilen 0
 *   bits 2-3  the string encoding OBJECT ENCODING reports (VENC_*)
 *   bits 4-7  the type (enum st_type, core/object.h): 0 = string for
 *             every kind but VK_OBJ, else the object's type
 * Use st_ent_kind() / st_ent_enc() / st_ent_type(), never vkind directly:
 * a raw or float-made value has bits set above the kind.
 */
enum { VK_INLINE = 0, VK_EXTENT = 1, VK_LIST = 2, VK_OBJ = 3 };
#define VK_KIND_MASK 0x03u
#define VK_ENC_SHIFT 2
enum {
    VENC_AUTO = 0, /* as SET leaves it: int, embstr or raw by the bytes */
    VENC_RAW = 1,  /* raw whatever the bytes (APPEND, SETRANGE, SETBIT) */
    VENC_STR = 2,  /* embstr or raw by length, never int (INCRBYFLOAT) */
};

#define EXT1_BYTES     12u
#define STORE_FD_CACHE 64u

typedef struct st_pieces st_pieces_t; /* a piece list (pieces.h) */

/*
 * The aux word (D74): 8 bytes after the value's tail, present when
 * eflags has ENT_AUX. A key's is its TTL (absolute ms), and a key without
 * one has no room for it: most keys have none, and 8 bytes is a sixth of
 * a short key's entry. A hash's member (field, set or sorted-set member)
 * always has the room: core/hash.c keeps its place in the ordered vector
 * there, hash_paged.c its stamp. A list's elements never do.
 * Giving a key a TTL, or taking it away, reallocates the entry
 * (st_ent_set_expire, through its slot).
 */
#define ENT_AUX 0x01u
/* A list element that lives in a block of its page's elements (core/list.c's
 * elem_block, named by its `next`): freed by st_list_elem_free only, never by
 * free(). A copy (st_ent_dup) is an allocation of its own: st_ent_alloc does
 * not take it. */
#define ENT_INBLOCK 0x02u
#define ST_AUX_ROOM INT64_MIN /* as an entry's aux at creation: the room, holding 0 */

static inline size_t st_ent_tail_bytes(uint8_t vkind)
{
    unsigned kind = vkind & VK_KIND_MASK; /* the encoding bits don't count */
    return kind == VK_EXTENT ? EXT1_BYTES : kind == VK_INLINE ? 0 : sizeof(void *);
}

/* Bytes of an entry without its aux word. */
static inline size_t st_entry_size(uint32_t klen, uint8_t ilen, uint8_t vkind)
{
    return IDX_ENTRY_HDR + klen + ilen + st_ent_tail_bytes(vkind);
}

/* Bytes of e's allocation, its aux word included. */
static inline size_t st_ent_alloc_size(const idx_entry_t *e)
{
    return st_entry_size(e->klen, e->ilen, e->vkind) + ((e->eflags & ENT_AUX) ? 8 : 0);
}

/* e's aux word, 0 without the room. */
static inline int64_t st_ent_aux(const idx_entry_t *e)
{
    int64_t v = 0;
    if (e->eflags & ENT_AUX)
        memcpy(&v, (const unsigned char *)e + st_entry_size(e->klen, e->ilen, e->vkind), 8);
    return v;
}

/* A key's TTL: the absolute expiry in ms, 0 = none. */
static inline int64_t st_ent_expire(const idx_entry_t *e)
{
    return st_ent_aux(e);
}

/* Whether e's TTL has passed at now (by whichever clock the caller reads). */
static inline int st_ent_expired(const idx_entry_t *e, int64_t now)
{
    int64_t at = st_ent_expire(e);
    return at && at <= now;
}

/* Set e's aux word; e must have the room (aborts otherwise: a member made
 * without it is a bug that would corrupt memory). */
void st_ent_set_aux(idx_entry_t *e, int64_t v);

/* A new entry of klen key bytes and a value of this shape, key copied
 * (unless NULL: the caller's then), the value left to the caller. aux:
 * 0 = no room; ST_AUX_ROOM = the room, holding 0; else the room holding
 * aux. Not yet in any index. */
idx_entry_t *st_ent_alloc(const void *key, uint32_t klen, uint8_t ilen, uint8_t vkind, int64_t aux);
/* The same in room the caller gives (at least st_entry_size, plus 8 with
 * aux): an element block's (core/list.c). Returns at as an entry. */
idx_entry_t *st_ent_init(void *at, const void *key, uint32_t klen, uint8_t ilen, uint8_t vkind,
                         int64_t aux);

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
    e->vkind = (uint8_t)((e->vkind & ~(3u << VK_ENC_SHIFT)) | (enc << VK_ENC_SHIFT));
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
     * full active-expiry pass (store/state.c). */
    int64_t next_expiry;
    int64_t pass_min;  /* minimum TTL the current pass has seen */
    int64_t set_min;   /* minimum TTL set since the current pass began */
    unsigned watch_id; /* watch.c: identity of these contents for WATCH (moves with SWAPDB) */
} st_db_t;

/* CMD_EXEC's decoded arguments (store/route.c): the record's own, and
 * those of the nested command being applied, apart from ctx->args, which
 * every decode (a read inside the transaction included) reuses. */
typedef struct st_exec_bufs {
    rec_arg_t *outer, *nested;
    uint32_t outer_cap, nested_cap;
} st_exec_bufs_t;

/* Paged collections' buffers (core/hash_paged.c, D60): the entries
 * handed out from pages during the current record or request (members and
 * list elements as entries, v; stream entries as plain blocks, blk, D64),
 * and the last page read. */
typedef struct st_pgmat {
    idx_entry_t **v;
    uint32_t n, cap;
    void **blk;
    uint32_t nblk, blkcap;
} st_pgmat_t;
typedef struct st_pgio {
    unsigned char *buf;
    size_t cap;
    uint64_t lsn; /* the page in buf (0: none) */
    uint32_t len;
    /* The offset of each of the nel elements of the list page in buf,
     * built by st_lpimg_at (D72); eidx 0 until it is built for this page
     * (every page read clears it). ecap: eoff's capacity. */
    uint32_t *eoff;
    uint32_t nel, ecap;
    int eidx;
} st_pgio_t;

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
    struct st_watch *watch; /* watch.c: recent changes, for WATCH */
    st_exec_bufs_t exec;
    struct st_block *block; /* block.c: clients blocked on keys, NULL = none yet */
    int in_exec; /* applying CMD_EXEC's nested commands: blocking ones (and blocking reads) do not
                    block */
    /* Values larger than one record (D31): the parts logged and not yet
     * made visible (groups.c), and, while a CMD_BIGFINAL's nested write is
     * applied, its values kept as piece lists: big[0, nbig), each the parts
     * standing for one of its arguments (taken by the handler with
     * st_big_take; their l NULL once taken). */
    st_groups_t groups;
    st_bigval_t *big;
    uint32_t nbig;
    /* A read's large value sent in parts as its frontend asks (D48):
     * reply_stream_ok is set by the store process around a read request
     * (never inside EXEC), and GET / GETRANGE then leave the bulk's
     * bytes as a snapshot here instead of in the reply. */
    int reply_stream_ok;
    struct st_vsnap *reply_stream;
    uint64_t reply_pin; /* the lowest LSN an open streamed reply reads (UINT64_MAX: none) */
    /* A read's log bytes left for the store process to read later (D59):
     * set by the store process around a read request, NULL otherwise
     * (value.h, st_reply_range_deferred). */
    struct st_defer *defer;
    st_live_t live;     /* live.c: bytes of each log segment entries refer to */
    st_access_t access; /* access.c: the policy, access data's meaning, evict.c's pool */
    /* DUMP's settings as CONFIG SET left them (t_dump.c): list-max-
     * listpack-size splits a list into nodes (D40), list-compress-depth
     * says which nodes Redis would hold compressed, rdbcompression whether
     * strings are LZF-compressed (D57). Nothing a list or a string holds
     * depends on them. */
    int64_t list_fill, list_compress_depth;
    int rdb_compression;
    uint64_t evicted; /* keys CMD_EVICT removed (INFO evicted_keys) */
    /* INFO expired_keys (removed by lazy or active expiry), keyspace_hits
     * and keyspace_misses (lookups of read commands: `reading` is set
     * while one runs, store_read_proto). */
    uint64_t stat_expired, stat_hits, stat_misses;
    int reading;
    /* Set inside st_find_quiet: a miss publishes no "keymiss". */
    int lookup_quiet;
    /* Keyspace notifications (notify.c, D37): the classes to publish for
     * what is applied now (0 = none: replay, tests), where they go, the
     * keys the running handler changed, and the expiries published. */
    uint32_t notify_flags;
    void (*notify_out)(void *arg, const char *chan, size_t clen, const char *msg, size_t mlen);
    void *notify_arg;
    struct st_notify_note *notes;
    uint32_t nnotes, notes_cap;
    int64_t notify_expired_floor; /* keys expiring at or before it were published */
    int64_t notify_expired_max;   /* the latest expiry published */
    /* A key reaped because its TTL passed (st_find_live): notify.c's
     * st_notify_expired, set by store_ctx_create (a hook, so entry.c
     * names nothing above it). */
    void (*on_expired)(struct store_ctx *ctx, st_db_t *db, const idx_entry_t *e);
    /* A key added to db (st_ent_store without a slot): notify.c's
     * st_notify_new ("new" keys, notify-keyspace-events n). */
    void (*on_new)(struct store_ctx *ctx, st_db_t *db, const idx_entry_t *e);
    /* A read's lookup (or a write's st_find_read) found no live key:
     * notify.c's st_notify_keymiss ("keymiss", notify-keyspace-events m). */
    void (*on_miss)(struct store_ctx *ctx, st_db_t *db, const rec_arg_t *key);
    /* The static cluster topology (CLUSTER's replies, store/cluster.c),
     * NULL unless cluster-enabled. */
    struct cluster *cluster;
    /* SAVE and BGSAVE's schedule (store/save.c), set by the store process;
     * NULL where tests and tools drive the state machine alone. */
    struct store_backup *backup;
    /* The shared memory, set by the store process (MEMORY STATS reads the
     * clients' buffers and the peak there, as INFO does); NULL where tests
     * and tools drive the state machine alone. */
    struct shm *shm;
    /* Paged collections (D60): object ids from the apply clock (pg_seq
     * numbers those made by one record), and the buffers above. */
    uint64_t pg_stamp;
    uint32_t pg_seq;
    st_pgmat_t pgmat;
    st_pgio_t pgio;
    /* The last stream page read, indexed (core/stream_view.c, D64): one
     * for every stream, as pgio is one page for the other types. */
    struct st_spview *spview;
    /* A key changed by a write (core/watch.c calls it with the key's
     * entry, or NULL when gone): store/pager.c's note, set by the store
     * process; NULL elsewhere. */
    void (*on_changed)(struct store_ctx *ctx, unsigned dbnum, idx_entry_t *e);
    void *pager;
    /* The read cache the frontends answer GET from (common/rcache.h,
     * D70), set by the store process once its replay is done: every
     * change core/watch.c is told of invalidates the key there. NULL
     * elsewhere. */
    struct rcache *rcache;
    /* Whether the last change core/watch.c was told of dropped its key
     * from the read cache: a SET then puts the new value there. */
    int rcache_dropped;
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
    int64_t now;  /* wall clock live; the apply clock inside EXEC */
    int proto;    /* the client's protocol: 3 for RESP3 maps and pairs */
    cmd_id_t cmd; /* the command: one handler may serve several (ZRANGE's family) */
} read_args_t;

/* The log position of argument i's bytes, or 0 when they are not in the
 * record: a large value's parts read into RAM at its final (D45, D58),
 * which have no one log position. */
static inline uint64_t st_arg_lsn(const apply_args_t *a, int i)
{
    uint32_t len;
    memcpy(&len, a->rec + offsetof(rec_hdr_t, len), sizeof(len));
    uintptr_t p = (uintptr_t)a->argv[i].ptr, rec = (uintptr_t)a->rec;
    if (p < rec || p >= rec + len) return 0;
    return a->lsn + (uint64_t)(p - rec);
}

/* Database number n, or NULL when out of range. Inline: every record's
 * routing and every WATCH report looks its database up. */
static inline st_db_t *st_db(store_ctx_t *ctx, unsigned n)
{
    return n < (unsigned)ctx->ndb ? ctx->dbs[n] : NULL;
}

unsigned char *st_ent_inline(idx_entry_t *e);
unsigned char *st_ent_tail(idx_entry_t *e);
void st_ent_get_ext1(idx_entry_t *e, uint64_t *lsn, uint32_t *len);
void st_ent_set_ext1(idx_entry_t *e, uint64_t lsn, uint32_t len);
st_pieces_t *st_ent_pieces(idx_entry_t *e);
void st_ent_set_pieces(idx_entry_t *e, st_pieces_t *l);
uint64_t st_ent_vlen(idx_entry_t *e);
/* A new entry holding a SET-style value (inline when short, else one
 * extent at val_lsn), not yet in any index. expire_at: its aux word, as
 * st_ent_alloc's (a TTL, 0, or ST_AUX_ROOM for a hash's member). */
idx_entry_t *st_ent_new(const rec_arg_t *key, const rec_arg_t *val, uint64_t val_lsn,
                        int64_t expire_at);
/* Put e into db, in place of *slot's entry when slot is not NULL. */
void st_ent_store(st_db_t *db, idx_entry_t **slot, idx_entry_t *e);
/* Resize *slot's entry for a new value shape; the caller fills it in. */
idx_entry_t *st_ent_resize(st_db_t *db, idx_entry_t **slot, uint8_t ilen, uint8_t vkind);
/* Give *slot's key the TTL at (0: none), reallocating the entry when it
 * gains or loses the room for it (*slot then points at the new one). */
idx_entry_t *st_ent_set_expire(st_db_t *db, idx_entry_t **slot, int64_t at);
/* The slot of a key live at `now` in db, or NULL; with reap set, a key
 * found expired is removed (apply path only: now is the apply clock). A
 * key found counts as used at `now` (its access data, core/access.c), as
 * Redis' lookupKey; st_find_peek does not touch it (OBJECT, TYPE, TTL,
 * MEMORY USAGE, DEBUG DIGEST-VALUE and WATCH look without using). */
idx_entry_t **st_find_live(st_db_t *db, const rec_arg_t *key, int64_t now, int reap);
idx_entry_t **st_find_peek(st_db_t *db, const rec_arg_t *key, int64_t now);
/* st_find_peek publishing no "keymiss" (Redis' LOOKUP_NONOTIFY: OBJECT;
 * MEMORY USAGE and DEBUG DIGEST-VALUE, which Redis answers from the dict). */
idx_entry_t **st_find_quiet(st_db_t *db, const rec_arg_t *key, int64_t now);
/* st_find_live for the lookups Redis makes with lookupKeyRead inside a
 * write (GETSET, GETDEL, GETEX, SET GET, COPY's source, the *STORE
 * commands' sources, SORT's keys, XACK): a miss publishes "keymiss" as a
 * read's lookup does (ctx->on_miss; replay publishes nothing, D51). */
idx_entry_t **st_find_read(st_db_t *db, const rec_arg_t *key, int64_t now, int reap);
/* RAM e holds (requested bytes: the entry, its piece list or object). */
uint64_t st_ent_bytes(idx_entry_t *e);
/* Remove the entry *slot points at from db. */
void st_remove(st_db_t *db, idx_entry_t **slot);
/* Unlink *slot's entry from db without freeing it, its bytes and TTL taken
 * out of the counters (RENAME, MOVE: st_ent_store puts it back). */
idx_entry_t *st_ent_take(st_db_t *db, idx_entry_t **slot);

/* Count (sign > 0) or uncount (sign < 0) the log bytes e's value refers
 * to (its extent or LOG pieces; a collection's, through its ops'
 * count_log) in ctx->live. */
void st_ent_count_log(store_ctx_t *ctx, idx_entry_t *e, int sign);
/* The same for a string-shaped entry (a key's or a collection's field)
 * into table t. */
void st_ent_live_add(st_live_t *t, idx_entry_t *e, int sign);

/* The index's free callback (idx_init's free_entry; arg is the st_db_t):
 * takes e out of the counters and frees it with its piece list. */
void st_ent_free(void *arg, idx_entry_t *e);

#endif
