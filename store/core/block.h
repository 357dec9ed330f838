/*
 * block.h - the clients blocked on keys (core/block.c): the store's waiter
 * queues for BLPOP BRPOP BLMOVE BRPOPLPUSH BLMPOP (and later BZPOPMIN
 * BZPOPMAX BZMPOP), a part of the state like the keys (docs/DECISIONS.md,
 * D36). Below the type handlers: types/t_list.c registers and serves
 * waiters through it, route.c runs st_block_serve_ready after each record,
 * store.c sends the replies it collected, checkpoint.c saves it.
 *
 * A waiter is added by the apply of its blocking record and leaves by
 * being served (a later record's apply made one of its keys ready), by an
 * UNBLOCK record (timeout, CLIENT UNBLOCK, its connection closed) or by a
 * DROP record (its frontend incarnation died). All of that is a function
 * of the applied records, so replay rebuilds the same queues (contract 4).
 */
#ifndef ATTIC_STORE_BLOCK_H
#define ATTIC_STORE_BLOCK_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "entry.h"

/* How a waiter is served: one serve function per kind (st_block_serve_fn,
 * the table in types/t_block.c). A new blocking command of another type
 * adds a kind and its function. */
enum st_block_kind {
    ST_BLOCK_LIST_POP = 1,  /* BLPOP BRPOP: [key, element] */
    ST_BLOCK_LIST_MPOP = 2, /* BLMPOP: [key, [elements]] */
    ST_BLOCK_LIST_MOVE = 3, /* BLMOVE BRPOPLPUSH: the element moved */
    ST_BLOCK_ZSET_POP = 4,  /* BZPOPMIN BZPOPMAX: [key, member, score] */
    ST_BLOCK_ZSET_MPOP = 5, /* BZMPOP: [key, [[member, score] ...]] */
    /* XREADGROUP ... BLOCK: [[key, entries]]; right is NOACK, count the
     * COUNT, dst the group and consumer (u32 group length, group,
     * consumer: types/t_stream_group.c) */
    ST_BLOCK_STREAM_GROUP = 6,
    /* XREAD ... BLOCK: [[key, entries]]; count the COUNT, dst the IDs
     * waited after, 16 bytes per key (types/t_stream.c) */
    ST_BLOCK_STREAM_READ = 7,
    ST_BLOCK_KINDS
};

/* Why a waiter leaves without being served (UNBLOCK records). */
enum st_unblock_mode {
    ST_UNBLOCK_DROP = 0,    /* its connection closed: no reply */
    ST_UNBLOCK_TIMEOUT = 1, /* timeout or CLIENT UNBLOCK TIMEOUT: the null reply */
    ST_UNBLOCK_ERROR = 2,   /* CLIENT UNBLOCK ERROR: -UNBLOCKED */
};

typedef struct st_waiter {
    uint64_t id;        /* its blocking record's LSN: the reply's id */
    uint64_t client_id; /* CLIENT ID of the connection (unique server-wide) */
    uint16_t origin;    /* frontend slot + 1 */
    uint8_t kind;       /* enum st_block_kind */
    uint8_t proto;      /* the client's protocol (null replies) */
    uint8_t right;      /* pop from the tail (a zset's highest scores) */
    uint8_t to_right;   /* BLMOVE: push at the tail of dst */
    uint32_t dbnum;
    int64_t count;  /* BLMPOP's COUNT */
    uint32_t nkeys; /* keys[0..nkeys) waited on */
    rec_arg_t *keys;
    rec_arg_t dst;                 /* BLMOVE's destination (len 0 otherwise) */
    struct st_waiter *prev, *next; /* all waiters, in registration order */
    struct st_wnode *nodes;        /* one per key, in that key's queue */
} st_waiter_t;

/* A waiter's fields as a blocking record gives them (keys point into the
 * record: st_block_add copies them). */
typedef struct st_waiter_spec {
    uint64_t id, client_id;
    uint16_t origin;
    uint8_t kind, proto, right, to_right;
    uint32_t dbnum;
    int64_t count;
    uint32_t nkeys;
    const rec_arg_t *keys;
    rec_arg_t dst;
} st_waiter_spec_t;

/* Serve w from key (ready: its key changed), its reply into r when r is
 * not NULL (live apply; replay passes NULL). Returns ST_SERVED (w leaves,
 * its reply made), ST_NOT_SERVED (nothing there for w: it stays, and so
 * do the waiters behind it on that key), ST_REFUSED (w leaves with an
 * error reply and the key unchanged: BLMOVE's destination of another
 * type) or ST_PASSED (nothing for w, but those behind it may have
 * something: XREADGROUP's waiters of other groups, D46). */
enum { ST_NOT_SERVED = 0, ST_SERVED = 1, ST_REFUSED = 2, ST_PASSED = 3 };
typedef int (*st_block_serve_fn)(store_ctx_t *ctx, const apply_args_t *a, st_waiter_t *w,
                                 const rec_arg_t *key, buf_t *r);

/* Queue a new waiter behind those already waiting on each of its keys.
 * Returns 0, or -1 when out of memory (fatal for the caller: the state
 * would no longer follow the log). */
int st_block_add(store_ctx_t *ctx, const st_waiter_spec_t *spec);
/* Remove the waiter of client_id (a connection blocks once at a time):
 * with mode TIMEOUT or ERROR its reply goes out (live apply). Returns 1
 * when there was one, 0 when not. */
int st_block_unblock(store_ctx_t *ctx, uint64_t client_id, int mode);
/* Remove every waiter of frontend slot + 1 == origin (0: of every
 * frontend), no replies. Returns how many. */
uint32_t st_block_drop_origin(store_ctx_t *ctx, uint16_t origin);
/* A key changed (watch.c's st_key_changed calls this): when somebody
 * waits on it, it is served after the record (st_block_serve_ready). */
void st_block_key_touched(store_ctx_t *ctx, unsigned dbnum, const rec_arg_t *key);
/* The apply clock moved (store_apply, before a record's handler): each key
 * an XREADGROUP waiter waits on whose TTL the new clock passed is made
 * ready, as a DEL of it would, so that record's apply answers the waiter
 * -UNBLOCKED (Redis 7.0.15 signals an expired key as deleted; XREAD's and
 * the pops' waiters keep waiting there too). Walks the waiters only while
 * one of that kind exists. */
void st_block_clock_moved(store_ctx_t *ctx);
/* Every key with waiters in databases a and b is looked at (SWAPDB). */
void st_block_db_touched(store_ctx_t *ctx, unsigned a, unsigned b);
/* After a record's handler: serve the waiters of the keys it touched, in
 * the order the keys were touched, each key's waiters oldest first, as
 * long as the key has what they wait for (a serve that touches another
 * key, BLMOVE's destination, queues that key too). a is the record's;
 * serve[kind] serves a waiter of that kind (st_block_serve_table). */
/* A blocking command found nothing to pop: queue its waiter (the reply
 * deferred until a write serves it), or, inside a transaction or for a
 * record no client waits on, answer as the non-blocking form does: null. */
void st_block_wait(store_ctx_t *ctx, const apply_args_t *a, st_waiter_spec_t *sp, buf_t *r);
void st_block_serve_ready(store_ctx_t *ctx, const apply_args_t *a, const st_block_serve_fn *serve);

/* Live apply (store.c after its replay) builds the replies of waiters
 * served or unblocked; replay does not (they were sent already). */
void st_block_set_live(store_ctx_t *ctx, int live);
/* The replies built since the last call: each a (origin, id, body) to send
 * to frontend origin - 1 as a write reply with that id. fn is called for
 * each in order, then they are forgotten. */
typedef void (*st_block_reply_fn)(void *arg, uint16_t origin, uint64_t id, const buf_t *body);
void st_block_take_replies(store_ctx_t *ctx, st_block_reply_fn fn, void *arg);
/* Set by a blocking record's apply that queued its waiter: that record has
 * no reply now (it comes when the waiter leaves). Reading clears it. */
int st_block_take_deferred(store_ctx_t *ctx);
void st_block_defer_reply(store_ctx_t *ctx);

/* Waiters in all, and those of frontend slot + 1 == origin. */
uint32_t st_block_count(const store_ctx_t *ctx);
uint32_t st_block_count_origin(const store_ctx_t *ctx, uint16_t origin);
/* The oldest waiter on key in dbnum, or NULL (tests). */
const st_waiter_t *st_block_first(store_ctx_t *ctx, unsigned dbnum, const rec_arg_t *key);
/* Checkpoints (store/checkpoint.c): every waiter in registration order,
 * as bytes (size 0 when none); load adds them back in that order, so each
 * key's queue is the same. load returns 0, or -1 when the bytes are not
 * waiters. */
size_t st_block_state_size(const store_ctx_t *ctx);
void st_block_state_save(const store_ctx_t *ctx, unsigned char *out);
int st_block_state_load(store_ctx_t *ctx, const unsigned char *p, size_t n);
void st_block_free(store_ctx_t *ctx);

#endif
