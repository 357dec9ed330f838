/*
 * handlers.h - the store's command handlers (types/, and route.c's
 * EXEC): an st_apply_t per canonical write operation (the OP rows of
 * common/commands.def), an st_read_t per READ command. route.c indexes
 * them by command id.
 */
#ifndef ATTIC_STORE_HANDLERS_H
#define ATTIC_STORE_HANDLERS_H

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

/* Helpers the handlers share (keyspace.c). */

/* A SCAN-style cursor as Redis parses it (strtoul's rules). Returns 0, or
 * -1 when it is not one ("ERR invalid cursor"). */
int st_parse_cursor(const rec_arg_t *x, uint64_t *out);

#endif
