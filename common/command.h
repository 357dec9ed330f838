/*
 * command.h - every command AtticDB knows, described as data.
 *
 * The registry (commands.def) gives each command its id, name, arity (Redis
 * convention: n = exactly n words including the name, -n = at least n), flags,
 * key positions, ACL categories, subcommands, route and handlers; command.c
 * makes the tables below from it, and COMMAND replies, ACL checks and arity
 * checks come from them. The frontend validates a command's arguments and, for
 * a write, encodes it in a canonical form: a record whose operation is one of
 * the CMD_* ids below and whose arguments are documented here. The store
 * applies canonical records and answers read requests. Several user commands
 * share one canonical form (INCR, DECR, INCRBY, DECRBY all become
 * CMD_INCRBY), so replay only ever meets the forms listed under "canonical".
 *
 * Ids are part of the log format: a record's payload starts with a u16 whose
 * low byte is the operation (a cmd_id_t, below 256) and whose high byte is the
 * database the command runs in (REC_OP_DB below). Never renumber an id; a
 * new one takes the next free number (CMD__COUNT) in its commands.def row.
 *
 * Canonical write forms (integers are 8-byte or 4-byte little-endian
 * arguments; "db" is the record's database unless an argument names another):
 *   CMD_SET        key, value, u32 set_flags, i64 expire_at_ms (0 = none)
 *                  (SET, SETNX, SETEX, PSETEX, GETSET)
 *   CMD_MSET       key, value, key, value, ...
 *   CMD_MSETNX     key, value, key, value, ...            reply :1 / :0
 *   CMD_DEL        key...                                 (DEL, UNLINK)
 *   CMD_INCRBY     key, i64 delta                         (INCR, DECR, INCRBY, DECRBY)
 *   CMD_INCRBYFLOAT key, increment as text (the store parses it, after the
 *                  key's type, as Redis does)
 *   CMD_APPEND     key, value, i64 proto-max-bulk-len when encoded (<= 0: no
 *                  limit; records without it use the store's setting)
 *   CMD_SETRANGE   key, u64 offset, value[, i64 proto-max-bulk-len when
 *                  encoded (<= 0: none; records without it, written before
 *                  hashes existed, were checked by the frontend: the
 *                  store's setting)]
 *   CMD_SETBIT     key, u64 bit offset, u32 bit (0 or 1)
 *   CMD_GETDEL     key
 *   CMD_GETEX      key, u32 getex_flags, i64 at_ms (GETEX; without an option
 *                  flags 0: a read that changes nothing; at_ms <= apply
 *                  clock deletes the key after replying)
 *   CMD_PEXPIREAT  key, i64 at_ms, u32 expire_flags
 *                  (EXPIRE, PEXPIRE, EXPIREAT become this; at_ms <= now deletes)
 *   CMD_PERSIST    key
 *   CMD_RENAME     key, newkey, u32 nx (RENAME: 0, reply +OK; RENAMENX: 1,
 *                  reply :1 / :0)
 *   CMD_COPY       source, destination, u32 destination db, u32 replace
 *   CMD_MOVE       key, u32 destination db
 *   CMD_SWAPDB     u32 db, u32 db
 *   CMD_FLUSHDB    (no arguments: the record's db)
 *   CMD_FLUSHALL   (no arguments)
 *   CMD_HSET       key, u64 limits, u32 hset_flags, field, value, ...
 *                  (HSET, HMSET, HSETNX; at least one pair). limits: the
 *                  frontend's hash-max-listpack-entries (u32, low half) and
 *                  hash-max-listpack-value (u32, high half) when encoded,
 *                  which decide when the hash becomes a hashtable (OBJECT
 *                  ENCODING), so replay decides the same whatever the
 *                  configuration is then (the same for HINCRBY*).
 *   CMD_HDEL       key, field...                          reply :n deleted
 *   CMD_HINCRBY    key, u64 limits, field, i64 delta
 *   CMD_HINCRBYFLOAT key, u64 limits, field, increment as text (the
 *                  frontend checked it parses as a finite long double); the
 *                  store computes and keeps the result's text
 *   CMD_SADD       key, u64 set-max-intset-entries when encoded, member...
 *   CMD_SREM       key, member...
 *   CMD_SPOP_AT    key, i64 count (-1: SPOP without a count), u32 resp3 (1:
 *                  the client speaks RESP3: a count's reply is a set); pop
 *                  j takes the member at XXH3(j) seeded with the record's
 *                  LSN, modulo the members left, in the set's order (a
 *                  function of the log: core/hash.c), the same on every
 *                  replay (D62)
 *   CMD_SPOP       the same arguments, written before D62: the members
 *                  popped are those whose XXH3 seeded with the record's
 *                  LSN is smallest, whatever order the set keeps them in
 *   CMD_SMOVE      source, destination, member, u64 set-max-intset-entries
 *   CMD_SINTERSTORE, CMD_SUNIONSTORE, CMD_SDIFFSTORE
 *                  destination, u64 set-max-intset-entries, key...
 *   CMD_ZADD       key, u64 limits, u32 mode, then the user's words after
 *                  the key (ZADD: options, score member ...; ZINCRBY:
 *                  increment member). limits: zset-max-listpack-entries
 *                  (low half) and -value (high half) when encoded; mode:
 *                  the client's protocol in the low byte, 0x100 for
 *                  ZINCRBY. The store parses the words (Redis' checks in
 *                  its order, before the key's type), so a refused ZADD is
 *                  a record that changes nothing.
 *   CMD_ZREM       key, member...
 *   CMD_ZREMRANGEBYRANK key, u32 kind (0 rank, 1 score, 2 lex), min, max
 *                  (ZREMRANGEBY* as the user wrote them)
 *   CMD_ZPOPMIN    key, u32 max (0 ZPOPMIN, 1 ZPOPMAX), i64 count (-1:
 *                  none given), u32 protocol
 *   CMD_ZMPOP      u32 numkeys, u32 max, i64 count, u32 protocol, key...
 *   CMD_ZRANGESTORE destination, u64 limits, source, the user's words
 *                  after the source (min max [BYSCORE|BYLEX] [REV] [LIMIT])
 *   CMD_ZUNIONSTORE destination, u64 limits, u32 op (0 ZUNIONSTORE, 1
 *                  ZINTERSTORE, 2 ZDIFFSTORE), the user's words from
 *                  numkeys on
 *   CMD_TICK       (no arguments) written by a frontend when the store asks
 *                  (shm tick_wanted): it only moves the apply clock, so keys
 *                  whose TTL ran out are reclaimed while no client writes,
 *                  at the same point of the log on replay.
 *   CMD_RELOCATE   key, value, u64 old_lsn: written by the store (never a
 *                  client) to move a value out of an old log segment: if
 *                  key (in the record's db) is one extent at old_lsn of the
 *                  value's length, it now points at this record's copy;
 *                  otherwise nothing changes. No reply, no WATCH signal,
 *                  the apply clock unchanged (its time is the store's).
 *   CMD_PAGEIN     key, u64 seed, u32 ranges: written by the store (D60):
 *                  the hashtable hash or set at key becomes paged, its
 *                  members in that many pageless ranges of equal width.
 *   CMD_PAGE       key, u64 objid, u64 as_of, u64 first_lo, u64 end_lo, u32
 *                  rest, versions (u64 page LSN per replaced range), page
 *                  images...: written by the store (D60): the paged object
 *                  objid's ranges from first_lo (end_lo: only up to it)
 *                  become these pages, built at as_of; a no-op when the
 *                  key holds another object or the ranges changed. Like
 *                  CMD_RELOCATE: no reply, no WATCH signal, no clock.
 *   CMD_LPAGE      key, stamps (u64 lsn, u32 seq per chunk), layout (u32 per
 *                  new chunk: an element count, high bit set for a pinned
 *                  run), list pages...: written by the store (D63): the
 *                  list's run of chunks with these stamps becomes these
 *                  pages and pinned runs; a no-op when the key holds no
 *                  such run (another list, or a chunk changed since). Like
 *                  CMD_PAGE: no reply, no WATCH signal, no clock.
 *   CMD_SPAGE      key, stamps, layout, stream pages...: CMD_LPAGE's form for
 *                  a stream's chunks (D64): the stream's run of chunks with
 *                  these stamps becomes these pages and pinned runs, or
 *                  nothing. Like CMD_PAGE: no reply, no WATCH signal, no
 *                  clock.
 *   CMD_CHUNK      u64 group, u32 seq, u64 owner, bytes: one part of a value
 *                  too large for one record (D31). group is the LSN of the
 *                  group's seq 0 chunk; owner the writing frontend's slot <<
 *                  32 | pid. Parts are kept aside (not visible), no reply.
 *   CMD_BIGFINAL   u64 group, layout, a nested payload (as
 *                  rec_encode_payload makes it): applied as that write
 *                  with the group's parts as its value arguments' bytes,
 *                  in one step. The layout is D31's u32 `which` (the whole
 *                  group is argument `which`), or (D58) one item per value,
 *                  in the group's order: u32 at, u32 arg, u64 off, u64
 *                  len: the group's bytes [off, off + len) are argument
 *                  `arg` of the nested write (at 0), or, when the nested
 *                  payload is a CMD_EXEC, of its argument `at` (a queued
 *                  write's value, or any argument of a queued read). Every
 *                  argument named is empty in the payload and one a large
 *                  value may be (cmd_big_value_arg); bytes no item names
 *                  are dropped. Its reply is the nested write's (EXEC's).
 *   CMD_BIGABORT   u64 group: the group's parts are dropped (the client
 *                  left, or the store saw its writer dead); no reply.
 *   CMD_EVICT      key: written by the store (never a client) when used
 *                  memory is over maxmemory and the policy chose the key
 *                  (store/evict.c): the key (in the record's db) is
 *                  removed if present, as DEL removes it (WATCH sees it),
 *                  and counted in INFO evicted_keys. No reply; the apply
 *                  clock unchanged (its time is the store's).
 *   CMD_EXEC       a transaction (MULTI ... EXEC), applied atomically:
 *                  arg 0: 24 bytes: u64 watch_lsn, i64 watch_time_ms,
 *                         u32 nwatch, u32 flags (0, or 1: see below)
 *                  args 1..nwatch: the watched keys, each u8 db + key bytes
 *                  [flags 2 = the client speaks RESP3: reads inside reply
 *                  maps and pairs as RESP3 (replies only, never state)]
 *                  [transactions helper: flags 1 = the keys were WATCHed at
 *                  different points, and each key is u8 db, u64 watch_lsn,
 *                  i64 watch_time_ms, key bytes (header's point unused)]
 *                  the rest: one queued command each, as a bare payload
 *                  (rec_encode_payload: op+db, argc, args) in canonical
 *                  form for writes, with the user's arguments for reads, or
 *                  CMD_LITERAL whose one argument is a finished RESP reply
 *                  (commands the frontend answered, errors found when the
 *                  frontend encoded the command at EXEC).
 *                  Reply: an array of the commands' replies, or the null
 *                  array when a watched key was changed by a record at or
 *                  after watch_lsn (or, still present, expired after
 *                  watch_time_ms), or its db was flushed or swapped.
 * Reads sent to the store (the registry's READ rows) carry the user's
 * arguments after the name, unchanged, and the connection's db in
 * store_req_t. The store parses their options and answers their syntax
 * errors.
 */
#ifndef ATTIC_COMMAND_H
#define ATTIC_COMMAND_H

#include <stddef.h>
#include <stdint.h>

/* Command and operation ids, from the registry (commands.def), which gives
 * each its number: ids 1-29 were the first release's, 30 on were added for
 * Redis compatibility (issue 5); the numbers are in logs on disk. */
typedef enum cmd_id {
    CMD_NONE = 0,
#define CMD(ID, num, ...) CMD_##ID = num,
#define OP_ID(ID, num)    CMD_##ID = num,
#include "commands.def"
} cmd_id_t;

/* One past the largest id: the size of a union of char[id + 1] arrays is
 * the largest of them, so a new row moves it without another edit. */
union cmd__id_bound {
    char none[1];
#define CMD(ID, num, ...) char ID[num + 1];
#define OP_ID(ID, num)    char ID[num + 1];
#include "commands.def"
};
enum { CMD__COUNT = (int)sizeof(union cmd__id_bound) };

_Static_assert(CMD__COUNT <= 256, "an operation id is one byte of the record payload");

/* A record payload's first u16: operation in the low byte, database in the
 * high byte (databases are at most 256). */
#define REC_OP_DB(op, db) ((uint16_t)((unsigned)(op) | ((unsigned)(db) << 8)))
#define REC_OP(v)         ((cmd_id_t)((v)&0xffu))
#define REC_DB(v)         ((unsigned)((v) >> 8))

enum cmd_flags {
    CMDF_WRITE = 1u << 0,    /* changes data: goes through the ring and the log */
    CMDF_READONLY = 1u << 1, /* reads data: answered by the store */
    CMDF_FAST = 1u << 2,     /* O(1) or O(log n) */
    CMDF_ADMIN = 1u << 3,
    CMDF_LOADING = 1u << 5, /* allowed while the store is loading */
    CMDF_STALE = 1u << 6,
    CMDF_DENYOOM = 1u << 7,
    CMDF_NOSCRIPT = 1u << 8,
    CMDF_NO_AUTH = 1u << 9, /* allowed before AUTH */
    CMDF_ALLOW_BUSY = 1u << 10,
    CMDF_SKIP_SLOWLOG = 1u << 11,
    CMDF_NO_MULTI = 1u << 12,         /* not queued inside MULTI: runs at once */
    CMDF_REFUSED_IN_MULTI = 1u << 13, /* Redis' no_multi: an error inside MULTI */
    CMDF_MOVABLEKEYS = 1u << 14,      /* keys past first/last/step: a KEYNUM row */
    CMDF_NO_ASYNC_LOADING = 1u << 15, /* Redis' no_async_loading (REPLICAOF): reported only */
    CMDF_BLOCKING = 1u << 16,         /* may block the client (BLPOP, XREAD ...): reported only */
    CMDF_PUBSUB = 1u << 17,           /* Redis' pubsub flag (D37) */
    /* AtticDB's (RC): a read of one key whose reply is a function of the
     * key's value, the words after it and the protocol only (no clock, no
     * randomness, no other key): the store leaves its reply in the read
     * cache and the frontends answer the same read from there (D71). */
    CMDF_REPLY_CACHE = 1u << 18,
};

/* ACL categories (Redis' names, "@keyspace" ...). */
enum cmd_cat {
    CAT_KEYSPACE = 1u << 0,
    CAT_READ = 1u << 1,
    CAT_WRITE = 1u << 2,
    CAT_STRING = 1u << 3,
    CAT_BITMAP = 1u << 4,
    CAT_ADMIN = 1u << 5,
    CAT_FAST = 1u << 6,
    CAT_SLOW = 1u << 7,
    CAT_DANGEROUS = 1u << 8,
    CAT_CONNECTION = 1u << 9,
    CAT_TRANSACTION = 1u << 10,
    CAT_HASH = 1u << 11,
    CAT_SET = 1u << 12,
    CAT_LIST = 1u << 13,
    CAT_SORTEDSET = 1u << 14,
    CAT_STREAM = 1u << 15,
    CAT_BLOCKING = 1u << 16,
    CAT_PUBSUB = 1u << 17,
    CAT_HYPERLOGLOG = 1u << 18,
    CAT__COUNT = 19,
};

/* The name of category bit i ("keyspace"), or NULL past the last. */
const char *cmd_cat_name(int i);

/* Where a frontend sends a command (commands.def explains each). */
typedef enum cmd_route {
    CMD_ROUTE_LOCAL,
    CMD_ROUTE_WRITE,
    CMD_ROUTE_READ,
    CMD_ROUTE_MULTI,
} cmd_route_t;

typedef struct cmd_desc {
    const char *name; /* lower case, as COMMAND reports it */
    cmd_id_t id;
    int arity;
    uint32_t flags;
    int first_key; /* 0 = no keys */
    int last_key;  /* -1 = last argument */
    int key_step;
    uint32_t cats; /* enum cmd_cat */
    cmd_route_t route;
    const char *summary, *complexity; /* COMMAND DOCS' texts */
} cmd_desc_t;

/* 1 when argc words (the name included) fit arity: n = exactly n, -n = at
 * least n. The one arity check, for commands and subcommands alike. */
static inline int cmd_arity_ok(int arity, int argc)
{
    return arity >= 0 ? argc == arity : argc >= -arity;
}

/* The keys of a command line (argv[0] its name, argc words): the row's
 * fixed positions first_key..last_key by key_step, then, for a command
 * with movable keys (KEYNUM row), the numkeys keys after its numkeys
 * argument. cmd_key_count is how many there are, or -1 when the line names
 * none it can be sure of (a numkeys that is not an integer, below 1 or
 * more than the words after it; no keys at all: COMMAND GETKEYS' "Invalid
 * arguments"). cmd_key_next is the position after prev (0 for the first),
 * or 0 when none is left; it assumes cmd_key_count was not -1. Positions
 * are ascending and below argc. */
int cmd_key_count(const cmd_desc_t *d, int argc, const char *const *argv, const uint32_t *lens);
int cmd_key_next(const cmd_desc_t *d, int argc, const char *const *argv, const uint32_t *lens,
                 int prev);

/* The row a command line of d runs as: SORT without a STORE key runs as
 * SORT_RO, a read the store answers (D47); every other line as d. Flags
 * (a write's refusals, denyoom), ACL and statistics stay d's. */
const cmd_desc_t *cmd_runs_as(const cmd_desc_t *d, int argc, const char *const *argv,
                              const uint32_t *lens);

/* Whether argument `which` of the canonical write `op` (of argc
 * arguments) may stand for a large value's bytes, logged as chunk records
 * and named by a CMD_BIGFINAL (D31, D45, D58): SET's value (the form SETNX,
 * SETEX, PSETEX and GETSET share), APPEND's, SETRANGE's, every value of
 * MSET and MSETNX, every field value of HSET, every element of LPUSH,
 * every member of SADD and SREM, LSET's and LINSERT's element, RESTORE's
 * payload. Never a key, a field name or a fixed-width argument. The
 * frontend moves only these into a group; the store takes only these. */
int cmd_big_value_arg(cmd_id_t op, uint32_t which, uint32_t argc);

/* Flags of SET's canonical u32 argument. */
enum set_flags {
    SETF_NX = 1u << 0,
    SETF_XX = 1u << 1,
    SETF_GET = 1u << 2,
    SETF_KEEPTTL = 1u << 3,
    SETF_REPLY_INT = 1u << 4, /* reply :1 when set, :0 when not (SETNX) */
};

/* Flags of HSET's canonical u32 argument. */
enum hset_flags {
    HSETF_NX = 1u << 0,       /* HSETNX: only a new field; reply :1 / :0 */
    HSETF_REPLY_OK = 1u << 1, /* HMSET: reply +OK (else :fields added) */
};

/* Flags of GETEX's canonical u32 argument. */
enum getex_flags {
    GETEXF_PERSIST = 1u << 0, /* remove the TTL */
    GETEXF_AT = 1u << 1,      /* set the TTL to the i64 argument */
    /* (strings, issue 5) Redis checks GETEX's time only once it found the
     * key, so an invalid one travels to the store, which replies this
     * error when the key exists (and the null reply when not): */
    GETEXF_ERR_NOT_INT = 1u << 2, /* "value is not an integer or out of range" */
    GETEXF_ERR_EXPIRE = 1u << 3,  /* "invalid expire time in 'getex' command" */
};

/* Flags of PEXPIREAT's canonical u32 argument (EXPIRE's NX/XX/GT/LT). */
enum expire_flags {
    EXPF_NX = 1u << 0,
    EXPF_XX = 1u << 1,
    EXPF_GT = 1u << 2,
    EXPF_LT = 1u << 3,
};

/* A subcommand of a container command (CONFIG GET, OBJECT ENCODING, ...):
 * Redis checks its name and arity before running anything, so an unknown
 * subcommand or a wrong count fails a MULTI at queue time. */
typedef struct cmd_sub {
    cmd_id_t parent;
    const char *name;     /* "get": lower case */
    const char *fullname; /* "config|get" */
    int arity;            /* counting the parent's name, as Redis does */
    uint32_t flags;       /* enum cmd_flags */
    int first_key, last_key, key_step;
    uint32_t cats;                    /* enum cmd_cat */
    const char *summary, *complexity; /* NULL for a Redis-only one */
} cmd_sub_t;

/* 1 when id has subcommands (checked before the command runs). */
int cmd_has_subs(cmd_id_t id);

/* The subcommand `name` (any case) of container `parent`, or NULL: one
 * AtticDB runs (cmd_subs), or else one only Redis runs (REDIS_SUB rows). */
const cmd_sub_t *cmd_lookup_sub(cmd_id_t parent, const char *name, size_t len);

/* The subcommands AtticDB runs, grouped by parent in the registry's order;
 * *n receives the count. Their positions are stable for a build (ACL and
 * statistics index by them). */
const cmd_sub_t *cmd_subs(size_t *n);

/* The position in cmd_subs() of the subcommand `name` (any case) of parent
 * that AtticDB runs, or -1. */
int cmd_sub_index(cmd_id_t parent, const char *name, size_t len);

/* How many subcommands of parent AtticDB runs (0 for a plain command). */
int cmd_sub_count(cmd_id_t parent);

/* The command named by the first len bytes of name (any case), or NULL.
 * A hash lookup: the dispatch of every request starts here. */
const cmd_desc_t *cmd_lookup(const char *name, size_t len);

/* The table entry of a user command id, or NULL (an operation only the log
 * has, like CMD_TICK, or no id at all). */
const cmd_desc_t *cmd_by_id(cmd_id_t id);

/* Every entry, in the registry's order, for COMMAND and COMMAND COUNT; *n
 * receives the count. */
const cmd_desc_t *cmd_table(size_t *n);

/* Little-endian helpers for canonical integer arguments. */
static inline void cmd_put_i64(unsigned char *p, int64_t v)
{
    uint64_t u = (uint64_t)v;
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(u >> (8 * i));
}
static inline int64_t cmd_get_i64(const unsigned char *p)
{
    uint64_t u = 0;
    for (int i = 0; i < 8; i++)
        u |= (uint64_t)p[i] << (8 * i);
    return (int64_t)u;
}
static inline void cmd_put_u32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}
static inline uint32_t cmd_get_u32(const unsigned char *p)
{
    uint32_t u = 0;
    for (int i = 0; i < 4; i++)
        u |= (uint32_t)p[i] << (8 * i);
    return u;
}

#endif
