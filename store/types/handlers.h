/*
 * handlers.h - the store's command handlers (types/, and route.c's
 * EXEC): an st_apply_t per canonical write operation (the OP rows of
 * common/commands.def), an st_read_t per READ command. route.c indexes
 * them by command id.
 */
#ifndef ATTIC_STORE_HANDLERS_H
#define ATTIC_STORE_HANDLERS_H

#include <string.h>
#include <strings.h>

#include "buf.h"
#include "command.h"
#include "store/core/entry.h"

typedef void st_apply_t(store_ctx_t *ctx, const apply_args_t *a, buf_t *r);
typedef void st_read_t(store_ctx_t *ctx, const read_args_t *a, buf_t *r);
typedef st_apply_t *st_apply_fn;
typedef st_read_t *st_read_fn;

/* The handlers, declared from the registry (common/commands.def): an
 * st_apply_t per canonical write operation (OP rows: t_string.c,
 * t_bitmap.c, keyspace.c, route.c), an st_read_t per READ command. */
#define ST_DECL_LOCAL(handler)
#define ST_DECL_WRITE(handler)
#define ST_DECL_READ(handler) st_read_t handler;
#define ST_DECL_MULTI(handler)
#define CMD(ID, num, name, arity, flags, first, last, step, cats, route, handler, ...)             \
    ST_DECL_##route(handler)
#define OP(ID, handler, ...) st_apply_t handler;
#include "commands.def"

/* Blocked clients (core/block.h): each kind's serve function, indexed by
 * enum st_block_kind (t_block.c), and the lists' (t_list.c). */
#include "store/core/block.h"
extern const st_block_serve_fn st_block_serve_table[ST_BLOCK_KINDS];
int st_zset_serve(store_ctx_t *ctx, const apply_args_t *a, st_waiter_t *w, const rec_arg_t *key,
                  buf_t *r);
int st_list_serve(store_ctx_t *ctx, const apply_args_t *a, st_waiter_t *w, const rec_arg_t *key,
                  buf_t *r);
int st_stream_group_serve(store_ctx_t *ctx, const apply_args_t *a, st_waiter_t *w,
                          const rec_arg_t *key, buf_t *r);
int st_stream_read_serve(store_ctx_t *ctx, const apply_args_t *a, st_waiter_t *w,
                         const rec_arg_t *key, buf_t *r);

/* The answer to a frontend's probe before a write (D68, keyspace.c): ":0"
 * when key is not in db's index, ":1" when it is and live at now, ":2"
 * when it is there but expired; no statistics, no events. Not a command:
 * route.c calls it for CMD_PROBE. */
void st_read_probe(st_db_t *db, const rec_arg_t *key, int64_t now, buf_t *r);

/* Helpers the handlers share (keyspace.c). */

/* Whether argument x is word, in any case (options, subcommands). */
static inline int st_arg_is(const rec_arg_t *x, const char *word)
{
    size_t n = strlen(word);
    return x->len == n && strncasecmp((const char *)x->ptr, word, n) == 0;
}

/* An array of n elements whose bytes are in body, or STORE_ERR_TOO_LARGE
 * when the whole would pass the reply limit (channel-size). */
void st_reply_array_of(store_ctx_t *ctx, buf_t *r, uint64_t n, const buf_t *body);

/* A SCAN-style cursor as Redis parses it (strtoul's rules). Returns 0, or
 * -1 when it is not one ("ERR invalid cursor"). */
int st_parse_cursor(const rec_arg_t *x, uint64_t *out);

/* The SCAN family's options from argv[from] on: COUNT n (default 10; not
 * an integer, or below 1, is an error) and MATCH p (*pat NULL for "*" or
 * none), and TYPE t when type is not NULL (else TYPE is a syntax error).
 * Returns 0, or -1 with the error replied. */
int st_scan_options(const read_args_t *a, uint16_t from, long long *count, const rec_arg_t **pat,
                    const rec_arg_t **type, buf_t *r);

/* What a SCAN-family walk collected: the reply's elements, the items kept
 * (each per_item elements: 1 for keys, 2 for field/value pairs) and the
 * entries visited, kept or not. */
typedef struct st_scan_out {
    buf_t body;
    uint64_t n, visited;
    int per_item;
} st_scan_out_t;

/* One step of a walk: visit what is at cursor into the st_scan_out_t the
 * caller gave, return the next cursor (0: done). */
typedef uint64_t (*st_scan_step_fn)(void *arg, uint64_t cursor);

/* Redis 7.0's SCAN loop and reply: steps until count entries were visited
 * (before filtering), 10 * count steps were made or the cursor came back to
 * 0; then [cursor, elements]. When the reply limit would be passed the
 * reply stops at the last whole step and returns its cursor (an error if
 * the first step alone passes it). */
void st_scan_reply(store_ctx_t *ctx, uint64_t cursor, long long count, st_scan_step_fn step,
                   void *arg, st_scan_out_t *out, buf_t *r);

/* The start every collection's scan shares (HSCAN, SSCAN, ZSCAN key cursor
 * [MATCH pattern] [COUNT count], Redis 7.0's order): the cursor, the key
 * (of type `type`), the options. Returns the key's entry, or NULL when the
 * reply is already made: an error, WRONGTYPE, or an absent key's empty
 * page. */
idx_entry_t *st_scan_key_begin(const read_args_t *a, unsigned type, uint64_t *cursor,
                               long long *count, const rec_arg_t **pat, buf_t *r);

/* Value arguments that may be a large value's parts (t_bigval.c, D31,
 * D58): inside a CMD_BIGFINAL, the arguments ctx->big[0, nbig) name stand
 * for the parts each holds. A handler that takes values this way uses
 * these instead of argv[i] directly; elsewhere they are the plain
 * argument. */
/* The parts standing for argument i (the caller owns them), or NULL. */
st_pieces_t *st_big_take(store_ctx_t *ctx, int i);
/* Argument i's length, the parts' when it stands for them. */
uint64_t st_arg_vlen(const store_ctx_t *ctx, const apply_args_t *a, int i);
/* st_ent_new with argument i as the value. */
idx_entry_t *st_ent_new_arg(store_ctx_t *ctx, const apply_args_t *a, int i, const rec_arg_t *key,
                            int64_t expire_at);
/* st_val_write of argument i's bytes at off into *slot's entry. */
idx_entry_t *st_val_write_arg(store_ctx_t *ctx, const apply_args_t *a, int i, idx_entry_t **slot,
                              uint64_t off);

/* A final's values (D58, t_bigval.c; route.c applies the final). */
/* Parse a final's layout argument against a group of `total` bytes: *out
 * (allocated, the caller frees it) holds *n values in the group's order.
 * D31's 4-byte form (u32 which) is one value, the whole group, of payload
 * 0. Returns 0, or -1 when malformed (empty, overlapping, out of order,
 * past the group, longer than 4 GB). */
int st_big_layout(const rec_arg_t *layout, uint64_t total, st_bigval_t **out, uint32_t *n);
/* Sort split values by (at, arg). Returns 0, or -1 when two name the same
 * argument. */
int st_big_by_place(st_bigval_t *v, uint32_t n);
/* Free the lists of v[0, n) not taken. */
void st_big_free(st_bigval_t *v, uint32_t n);
/* Read each value's parts into RAM and make it argument v[k].arg of argv
 * (its list freed); returns the buffers, for st_big_ram_free once the
 * arguments are used. */
unsigned char **st_big_to_ram(store_ctx_t *ctx, rec_arg_t *argv, st_bigval_t *v, uint32_t n);
void st_big_ram_free(unsigned char **bufs, uint32_t n);
/* Apply the nested write fn (op, arguments na, whose argv is argv) with
 * the values v[0, n) standing for its arguments: read into RAM for the
 * collections and RESTORE, handed over as piece lists (st_big_take) for
 * the strings; its keyspace events told as op's. Every list is used or
 * freed. */
void st_big_apply(store_ctx_t *ctx, st_apply_fn fn, cmd_id_t op, const apply_args_t *na,
                  rec_arg_t *argv, st_bigval_t *v, uint32_t n, buf_t *r);

#endif
