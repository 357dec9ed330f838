/*
 * notify.c - keyspace notifications (notify.h, D37), in the store process.
 *
 * Which event an operation publishes is decided here from its id and its
 * canonical arguments (common/command.h's forms), after its handler ran:
 * the handlers only say which keys they changed (st_key_changed, which
 * WATCH needs anyway), so a new write form gets its event name in one
 * table below. A key a collection command left empty also gets "del", a
 * *STORE with an empty result only "del", an EXPIRE in the past "del", as
 * Redis sends them. Replay publishes nothing (notify_flags is 0), so
 * events are published at most once, in log order.
 */
#include "store/core/notify.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "command.h"
#include "log.h"
#include "pubsub.h"

typedef struct st_notify_note {
    unsigned dbnum;
    rec_arg_t key;
    unsigned cls;      /* with event: its class */
    const char *event; /* NULL: the operation's (event_of) */
    int owned;         /* "new": told as the key was added, whatever followed */
    int copied;        /* key.ptr is a copy to free after the flush (always) */
} st_notify_note_t;

void st_notify(store_ctx_t *ctx, unsigned cls, const char *event, unsigned dbnum,
               const unsigned char *key, size_t klen)
{
    uint32_t f = ctx->notify_flags;
    if (!(f & cls) || !ctx->notify_out) return;
    size_t elen = strlen(event);
    char *chan = malloc(64 + (klen > elen ? klen : elen));
    if (!chan) return; /* an event lost, never the write */
    if (f & PS_NOTIFY_KEYSPACE) {
        int n = snprintf(chan, 64, "__keyspace@%u__:", dbnum);
        memcpy(chan + n, key, klen);
        ctx->notify_out(ctx->notify_arg, chan, (size_t)n + klen, event, elen);
    }
    if (f & PS_NOTIFY_KEYEVENT) {
        int n = snprintf(chan, 64, "__keyevent@%u__:", dbnum);
        memcpy(chan + n, event, elen);
        ctx->notify_out(ctx->notify_arg, chan, (size_t)n + elen, (const char *)key, klen);
    }
    free(chan);
}

static int note_add(store_ctx_t *ctx, st_notify_note_t note)
{
    if (ctx->nnotes == ctx->notes_cap) {
        uint32_t cap = ctx->notes_cap ? ctx->notes_cap * 2 : 16;
        void *n = realloc(ctx->notes, cap * sizeof(st_notify_note_t));
        if (!n) return -1;
        ctx->notes = n;
        ctx->notes_cap = cap;
    }
    ctx->notes[ctx->nnotes++] = note;
    return 0;
}

void st_notify_note(store_ctx_t *ctx, unsigned dbnum, const rec_arg_t *key, unsigned cls,
                    const char *event)
{
    if (!ctx->notify_flags) return;
    /* A copy: a client served inside this write names its key from the
     * waiter, which is freed before the flush (block.c). */
    unsigned char *copy = malloc(key->len ? key->len : 1);
    if (!copy) return; /* an event lost, never the write */
    memcpy(copy, key->ptr, key->len);
    if (note_add(ctx, (st_notify_note_t){dbnum, {copy, key->len}, cls, event, 0, 1})) free(copy);
}

/* db's number in ctx, or -1. */
static int db_number(const store_ctx_t *ctx, const st_db_t *db)
{
    for (int i = 0; i < ctx->ndb; i++)
        if (ctx->dbs[i] == db) return i;
    return -1;
}

void st_notify_new(store_ctx_t *ctx, st_db_t *db, const idx_entry_t *e)
{
    int dbnum = db_number(ctx, db);
    if (!(ctx->notify_flags & PS_NOTIFY_NEW) || dbnum < 0) return;
    unsigned char *copy = malloc(e->klen ? e->klen : 1);
    if (!copy) return; /* an event lost, never the write */
    memcpy(copy, idx_key(e), e->klen);
    st_notify_note_t n = {(unsigned)dbnum, {copy, e->klen}, PS_NOTIFY_NEW, "new", 1, 1};
    if (note_add(ctx, n)) free(copy);
}

static int same_key(const rec_arg_t *a, const rec_arg_t *b)
{
    return a->len == b->len && !memcmp(a->ptr, b->ptr, a->len);
}

/* What to publish for one key: the event of class cls, then "del" when
 * the key is gone and the operation empties collections (del_if_gone),
 * or only "del" (gone_is_del). */
typedef struct ev {
    unsigned cls;
    const char *name;
    int del_if_gone, gone_is_del;
} ev_t;

#define U32(i) cmd_get_u32(a->argv[i].ptr)

/* ZADD's words (after key, limits, mode) name INCR among its options. */
static int zadd_incr(const apply_args_t *a)
{
    for (int i = 3; i < a->argc; i++) {
        const rec_arg_t *w = &a->argv[i];
        if (w->len == 4 && !strncasecmp((const char *)w->ptr, "incr", 4)) return 1;
        if (!w->len || !isalpha(w->ptr[0])) return 0; /* the first score: options end */
    }
    return 0;
}

static ev_t event_of(cmd_id_t op, const apply_args_t *a, const st_notify_note_t *n)
{
    const unsigned G = PS_NOTIFY_GENERIC, S = PS_NOTIFY_STRING, L = PS_NOTIFY_LIST,
                   SET = PS_NOTIFY_SET, H = PS_NOTIFY_HASH, Z = PS_NOTIFY_ZSET,
                   T = PS_NOTIFY_STREAM;
    int first = a->argc > 0 && same_key(&n->key, &a->argv[0]);
    switch (op) {
    case CMD_SET:
    case CMD_MSET:
    case CMD_MSETNX:
        return (ev_t){S, "set", 0, 0};
    case CMD_INCRBY:
        return (ev_t){S, "incrby", 0, 0};
    case CMD_INCRBYFLOAT:
        return (ev_t){S, "incrbyfloat", 0, 0};
    case CMD_APPEND:
        return (ev_t){S, "append", 0, 0};
    case CMD_SETRANGE:
        return (ev_t){S, "setrange", 0, 0};
    case CMD_SETBIT:
        return (ev_t){S, "setbit", 0, 0};
    case CMD_DEL:
    case CMD_GETDEL:
        return (ev_t){G, "del", 0, 0};
    case CMD_PEXPIREAT:
        return (ev_t){G, "expire", 0, 1};
    case CMD_PERSIST:
        return (ev_t){G, "persist", 0, 0};
    case CMD_GETEX:
        return (ev_t){G, (U32(1) & GETEXF_PERSIST) ? "persist" : "expire", 0, 1};
    case CMD_RENAME:
        return (ev_t){G, first ? "rename_from" : "rename_to", 0, 0};
    case CMD_MOVE:
        return (ev_t){G, n->dbnum == a->dbnum ? "move_from" : "move_to", 0, 0};
    case CMD_COPY:
        return (ev_t){G, "copy_to", 0, 0};
    case CMD_RESTORE:
        return (ev_t){G, "restore", 0, 0};
    case CMD_EVICT: /* maxmemory's eviction records (D32) */
        return (ev_t){PS_NOTIFY_EVICTED, "evicted", 0, 0};
    case CMD_HSET:
        return (ev_t){H, "hset", 0, 0};
    case CMD_HDEL:
        return (ev_t){H, "hdel", 1, 0};
    case CMD_HINCRBY:
        return (ev_t){H, "hincrby", 0, 0};
    case CMD_HINCRBYFLOAT:
        return (ev_t){H, "hincrbyfloat", 0, 0};
    case CMD_SADD:
        return (ev_t){SET, "sadd", 0, 0};
    case CMD_SREM:
        return (ev_t){SET, "srem", 1, 0};
    case CMD_SPOP:
    case CMD_SPOP_AT:
        return (ev_t){SET, "spop", 1, 0};
    case CMD_SMOVE:
        return (ev_t){SET, first ? "srem" : "sadd", first, 0};
    case CMD_SINTERSTORE:
        return (ev_t){SET, "sinterstore", 0, 1};
    case CMD_SUNIONSTORE:
        return (ev_t){SET, "sunionstore", 0, 1};
    case CMD_SDIFFSTORE:
        return (ev_t){SET, "sdiffstore", 0, 1};
    case CMD_LPUSH:
        return (ev_t){L, (U32(1) & 1u) ? "rpush" : "lpush", 0, 0};
    case CMD_LSET:
        return (ev_t){L, "lset", 0, 0};
    case CMD_LTRIM:
        return (ev_t){L, "ltrim", 1, 0};
    case CMD_LREM:
        return (ev_t){L, "lrem", 1, 0};
    case CMD_LINSERT:
        return (ev_t){L, "linsert", 0, 0};
    case CMD_ZADD: /* ZADD ... INCR and ZINCRBY (mode 0x100) say "zincr" */
        return (ev_t){Z, (U32(2) & 0x100u) || zadd_incr(a) ? "zincr" : "zadd", 0, 0};
    case CMD_ZREM:
        return (ev_t){Z, "zrem", 1, 0};
    case CMD_ZREMRANGEBYRANK: {
        static const char *const by[] = {"zremrangebyrank", "zremrangebyscore", "zremrangebylex"};
        return (ev_t){Z, by[U32(1) < 3 ? U32(1) : 0], 1, 0};
    }
    case CMD_ZRANGESTORE:
        return (ev_t){Z, "zrangestore", 0, 1};
    case CMD_SORT:
        return (ev_t){L, "sortstore", 0, 1};
    case CMD_ZUNIONSTORE: {
        static const char *const store[] = {"zunionstore", "zinterstore", "zdiffstore"};
        return (ev_t){Z, store[U32(2) < 3 ? U32(2) : 0], 0, 1};
    }
    case CMD_XADD:
        return (ev_t){T, "xadd", 0, 0};
    case CMD_XTRIM:
        return (ev_t){T, "xtrim", 0, 0};
    case CMD_XDEL:
        return (ev_t){T, "xdel", 0, 0};
    case CMD_XSETID:
        return (ev_t){T, "xsetid", 0, 0};
    default:
        return (ev_t){0, NULL, 0, 0}; /* FLUSH*, SWAPDB, TICK, RELOCATE: none */
    }
}

/* The events of one note (flush's loop body). */
static void flush_note(store_ctx_t *ctx, cmd_id_t op, const apply_args_t *a,
                       const st_notify_note_t *n)
{
    if (n->owned) {
        st_notify(ctx, n->cls, n->event, n->dbnum, n->key.ptr, n->key.len);
        return;
    }
    ev_t ev = n->event ? (ev_t){n->cls, n->event, 1, 0} : event_of(op, a, n);
    if (!ev.name) return;
    st_db_t *db = st_db(ctx, n->dbnum);
    int gone = !db || !st_find_live(db, &n->key, ctx->now, 0);
    if (gone && ev.gone_is_del) {
        st_notify(ctx, PS_NOTIFY_GENERIC, "del", n->dbnum, n->key.ptr, n->key.len);
        return;
    }
    st_notify(ctx, ev.cls, ev.name, n->dbnum, n->key.ptr, n->key.len);
    /* SET with a TTL (SETEX, SET EX) also says "expire", as Redis. */
    if (op == CMD_SET && !n->event && cmd_get_i64(a->argv[3].ptr))
        st_notify(ctx, PS_NOTIFY_GENERIC, "expire", n->dbnum, n->key.ptr, n->key.len);
    if (gone && ev.del_if_gone)
        st_notify(ctx, PS_NOTIFY_GENERIC, "del", n->dbnum, n->key.ptr, n->key.len);
}

void st_notify_flush(store_ctx_t *ctx, cmd_id_t op, const apply_args_t *a)
{
    uint32_t count = ctx->nnotes;
    ctx->nnotes = 0;
    for (uint32_t i = 0; i < count; i++) {
        const st_notify_note_t *n = &ctx->notes[i];
        flush_note(ctx, op, a, n);
        if (n->copied) free((void *)n->key.ptr);
    }
}

void st_notify_keymiss(store_ctx_t *ctx, st_db_t *db, const rec_arg_t *key)
{
    if (!(ctx->notify_flags & PS_NOTIFY_KEY_MISS)) return;
    int dbnum = db_number(ctx, db);
    if (dbnum >= 0)
        st_notify(ctx, PS_NOTIFY_KEY_MISS, "keymiss", (unsigned)dbnum, key->ptr, key->len);
}

void st_notify_expired(store_ctx_t *ctx, st_db_t *db, const idx_entry_t *e)
{
    if (!(ctx->notify_flags & PS_NOTIFY_EXPIRED)) return;
    int64_t at = st_ent_expire(e);
    if (at <= ctx->notify_expired_floor) return; /* published by our predecessor */
    int dbnum = db_number(ctx, db);
    if (dbnum < 0) return;
    st_notify(ctx, PS_NOTIFY_EXPIRED, "expired", (unsigned)dbnum, idx_key(e), e->klen);
    if (at > ctx->notify_expired_max) ctx->notify_expired_max = at;
}
