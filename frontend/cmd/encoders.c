/*
 * encoders.c - the table of write encoders (encode.h's fe_encoder), in a
 * frontend process: the registry's WRITE rows (common/commands.def), by
 * command id. It sits above the per-type files (t_string.c, t_keys.c)
 * whose functions it names, and below dispatch.c and multi.c, which look
 * encoders up here; the helpers the encoders share are in encode.c.
 */
#include "frontend/cmd/encode.h"

/* ---- the table: the registry's WRITE rows, by command id ---- */

#define ENC_ROW_LOCAL(ID, handler)
#define ENC_ROW_WRITE(ID, handler) [CMD_##ID] = handler,
#define ENC_ROW_READ(ID, handler)
#define ENC_ROW_MULTI(ID, handler)
static fe_encode_fn const encoders[CMD__COUNT] = {
#define CMD(ID, num, name, arity, flags, first, last, step, cats, route, handler, ...)             \
    ENC_ROW_##route(ID, handler)
#include "commands.def"
};

fe_encode_fn fe_encoder(cmd_id_t id)
{
    return (unsigned)id < (unsigned)CMD__COUNT ? encoders[id] : NULL;
}
