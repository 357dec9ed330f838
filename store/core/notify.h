/*
 * notify.h - keyspace notifications (D37): the events a write applied live
 * publishes, as Redis 7.0 names them (__keyspace@<db>__:<key> with the
 * event, __keyevent@<db>__:<event> with the key), filtered by
 * notify-keyspace-events. The store process says where they go
 * (ctx->notify_out: the Pub/Sub ring) and, per record, whether they go at
 * all (ctx->notify_flags: 0 on replay of what was published already).
 */
#ifndef ATTIC_STORE_NOTIFY_H
#define ATTIC_STORE_NOTIFY_H

#include <stddef.h>

#include "command.h"
#include "store/core/entry.h"

/* Where events go: one message to one channel. */
typedef void st_notify_out_fn(void *arg, const char *chan, size_t clen, const char *msg,
                              size_t mlen);

/* Publish event (of class cls, enum ps_notify) for key in dbnum, if
 * ctx->notify_flags asks for that class and K or E. */
void st_notify(store_ctx_t *ctx, unsigned cls, const char *event, unsigned dbnum,
               const unsigned char *key, size_t klen);
/* A key the operation being applied changed (watch.c's st_key_changed):
 * its events are published once the handler returned (st_notify_flush),
 * so they see the state after the change. event (of class cls) names the
 * event when the change is not the operation's own (a pop served to a
 * blocked client inside a push, XADD's trimming), followed by "del" when
 * the key is gone; NULL: the operation's event (notify.c's table). */
void st_notify_note(store_ctx_t *ctx, unsigned dbnum, const rec_arg_t *key, unsigned cls,
                    const char *event);
/* The handler of operation op (args a) returned: publish the events of
 * the keys it noted. */
void st_notify_flush(store_ctx_t *ctx, cmd_id_t op, const apply_args_t *a);
/* e was added to db: "new" (class n), published in its place among the
 * operation's events, as Redis tells it when the key is added. */
void st_notify_new(store_ctx_t *ctx, st_db_t *db, const idx_entry_t *e);
/* A read lookup found no live key in db (entry.c's count_lookup,
 * st_find_read): "keymiss" (class m), published at once, before the
 * reply and before the events of the write it is part of, as Redis. */
void st_notify_keymiss(store_ctx_t *ctx, st_db_t *db, const rec_arg_t *key);
/* e, in db, is being removed because its TTL passed: "expired". */
void st_notify_expired(store_ctx_t *ctx, st_db_t *db, const idx_entry_t *e);

#endif
