/*
 * route.h - the routing tables of the store (store/route.c): which handler
 * a canonical write or a read request goes to. store_apply and store_read
 * (store-internal.h) use them; tests check them against the registry.
 */
#ifndef ATTIC_STORE_ROUTE_H
#define ATTIC_STORE_ROUTE_H

#include <stdint.h>

#include "buf.h"
#include "command.h"
#include "record.h"
#include "store/types/handlers.h"

/* The handler of canonical write `op` when argc and the fixed-width
 * arguments have the canonical shape, else NULL. */
st_apply_fn st_write_handler(cmd_id_t op, uint16_t argc, const rec_arg_t *argv);
/* The handler of read `op`, or NULL. */
st_read_fn st_read_handler(cmd_id_t op);
/* Redis' "wrong number of arguments for '<name>' command". */
void st_reply_arity(buf_t *b, cmd_id_t id);

#endif
