/*
 * command.c - the command table (see command.h). Shared by the frontends
 * (lookup, arity, COMMAND replies) and the store (canonical ids). Read-only
 * data: nothing here can fail at run time.
 */
#include "command.h"

#include <string.h>
#include <strings.h>

#define W CMDF_WRITE
#define R CMDF_READONLY
#define F CMDF_FAST
#define L CMDF_LOCAL

static const cmd_desc_t cmd_descs[] = {
    {"ping", CMD_PING, -1, L | F, 0, 0, 0},
    {"echo", CMD_ECHO, 2, L | F, 0, 0, 0},
    {"quit", CMD_QUIT, -1, L | F, 0, 0, 0},
    {"select", CMD_SELECT, 2, L | F, 0, 0, 0},
    {"command", CMD_COMMAND, -1, L, 0, 0, 0},
    {"info", CMD_INFO, -1, L, 0, 0, 0},
    {"config", CMD_CONFIG, -2, L | CMDF_ADMIN, 0, 0, 0},
    {"get", CMD_GET, 2, R | F, 1, 1, 1},
    {"mget", CMD_MGET, -2, R | F, 1, -1, 1},
    {"exists", CMD_EXISTS, -2, R | F, 1, -1, 1},
    {"strlen", CMD_STRLEN, 2, R | F, 1, 1, 1},
    {"ttl", CMD_TTL, 2, R | F, 1, 1, 1},
    {"pttl", CMD_PTTL, 2, R | F, 1, 1, 1},
    {"dbsize", CMD_DBSIZE, 1, R | F, 0, 0, 0},
    {"set", CMD_SET, -3, W, 1, 1, 1},
    {"mset", CMD_MSET, -3, W, 1, -1, 2},
    {"del", CMD_DEL, -2, W, 1, -1, 1},
    {"incr", CMD_INCR, 2, W | F, 1, 1, 1},
    {"incrby", CMD_INCRBY, 3, W | F, 1, 1, 1},
    {"decr", CMD_DECR, 2, W | F, 1, 1, 1},
    {"decrby", CMD_DECRBY, 3, W | F, 1, 1, 1},
    {"append", CMD_APPEND, 3, W | F, 1, 1, 1},
    {"getdel", CMD_GETDEL, 2, W | F, 1, 1, 1},
    {"expire", CMD_EXPIRE, -3, W | F, 1, 1, 1},
    {"pexpire", CMD_PEXPIRE, -3, W | F, 1, 1, 1},
    {"expireat", CMD_EXPIREAT, -3, W | F, 1, 1, 1},
    {"pexpireat", CMD_PEXPIREAT, -3, W | F, 1, 1, 1},
    {"persist", CMD_PERSIST, 2, W | F, 1, 1, 1},
    {"flushall", CMD_FLUSHALL, -1, W, 0, 0, 0},
};

#define NCMDS (sizeof(cmd_descs) / sizeof(cmd_descs[0]))

const cmd_desc_t *cmd_lookup(const char *name, size_t len)
{
    /* A linear scan of ~30 names costs less than hashing them would save;
     * revisit when the table grows past a hundred. */
    for (size_t i = 0; i < NCMDS; i++) {
        /* Length first: a name with a NUL inside ("GETDEL\0") is not a
         * command, and we must not read past the end of a table name.
         * (Redis 7 hashes the whole name but compares up to the NUL, so
         * whether it finds such a name depends on its hash seed.) */
        const char *n = cmd_descs[i].name;
        if (strlen(n) == len && strncasecmp(n, name, len) == 0) return &cmd_descs[i];
    }
    return NULL;
}

const cmd_desc_t *cmd_by_id(cmd_id_t id)
{
    for (size_t i = 0; i < NCMDS; i++)
        if (cmd_descs[i].id == id) return &cmd_descs[i];
    return NULL;
}

const cmd_desc_t *cmd_table(size_t *n)
{
    *n = NCMDS;
    return cmd_descs;
}
