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
#define OOM CMDF_DENYOOM
#define LS (CMDF_LOADING | CMDF_STALE)
#define NS CMDF_NOSCRIPT
#define NA CMDF_NO_AUTH
#define AB CMDF_ALLOW_BUSY
#define NM CMDF_NO_MULTI
#define ADM CMDF_ADMIN

#define KS CAT_KEYSPACE
#define RD CAT_READ
#define WR CAT_WRITE
#define STR CAT_STRING
#define BM CAT_BITMAP
#define CF CAT_FAST
#define CS CAT_SLOW
#define DNG CAT_DANGEROUS
#define CONN CAT_CONNECTION
#define TX CAT_TRANSACTION
#define CADM CAT_ADMIN

/* Flags, key positions and categories as Redis 7.0 reports them (COMMAND
 * INFO), plus AtticDB's own: L (answered by a frontend) and NM (runs at once
 * inside MULTI instead of being queued). */
static const cmd_desc_t cmd_descs[] = {
    /* connection, server, transactions: answered by a frontend */
    {"ping", CMD_PING, -1, L | F, 0, 0, 0, CF | CONN},
    {"echo", CMD_ECHO, 2, L | LS | F, 0, 0, 0, CF | CONN},
    {"quit", CMD_QUIT, -1, L | NS | LS | F | NA | AB | NM, 0, 0, 0, CF | CONN},
    {"select", CMD_SELECT, 2, L | LS | F, 0, 0, 0, CF | CONN},
    {"command", CMD_COMMAND, -1, L | LS, 0, 0, 0, CS | CONN},
    {"info", CMD_INFO, -1, L | LS, 0, 0, 0, CS | DNG},
    {"config", CMD_CONFIG, -2, L | ADM | NS | LS, 0, 0, 0, CS | CADM | DNG},
    {"hello", CMD_HELLO, -1, L | NS | LS | F | NA | AB, 0, 0, 0, CF | CONN},
    {"auth", CMD_AUTH, -2, L | NS | LS | F | NA | AB, 0, 0, 0, CF | CONN},
    {"acl", CMD_ACL, -2, L | ADM | NS | LS, 0, 0, 0, CS | CADM | DNG},
    {"client", CMD_CLIENT, -2, L | NS | LS, 0, 0, 0, CS | CONN},
    {"reset", CMD_RESET, 1, L | NS | LS | F | NA | AB | NM, 0, 0, 0, CF | CONN},
    {"time", CMD_TIME, 1, L | LS | F, 0, 0, 0, CF},
    {"shutdown", CMD_SHUTDOWN, -1, L | ADM | NS | LS | AB | CMDF_REFUSED_IN_MULTI, 0, 0, 0, CS | CADM | DNG},
    {"slowlog", CMD_SLOWLOG, -2, L | ADM | LS, 0, 0, 0, CS | CADM | DNG},
    {"multi", CMD_MULTI, 1, L | NS | LS | F | AB | NM, 0, 0, 0, CF | TX},
    {"exec", CMD_EXEC, 1, NS | LS | CMDF_SKIP_SLOWLOG | NM, 0, 0, 0, CS | TX},
    {"discard", CMD_DISCARD, 1, L | NS | LS | F | AB | NM, 0, 0, 0, CF | TX},
    {"watch", CMD_WATCH, -2, L | NS | LS | F | AB | NM, 1, -1, 1, CF | TX},
    {"unwatch", CMD_UNWATCH, 1, L | NS | LS | F | AB, 0, 0, 0, CF | TX},
    /* reads: answered by the store */
    {"get", CMD_GET, 2, R | F, 1, 1, 1, RD | STR | CF},
    {"mget", CMD_MGET, -2, R | F, 1, -1, 1, RD | STR | CF},
    {"strlen", CMD_STRLEN, 2, R | F, 1, 1, 1, RD | STR | CF},
    {"getrange", CMD_GETRANGE, 4, R, 1, 1, 1, RD | STR | CS},
    {"substr", CMD_SUBSTR, 4, R, 1, 1, 1, RD | STR | CS},
    {"getbit", CMD_GETBIT, 3, R | F, 1, 1, 1, RD | BM | CF},
    {"bitcount", CMD_BITCOUNT, -2, R, 1, 1, 1, RD | BM | CS},
    {"bitpos", CMD_BITPOS, -3, R, 1, 1, 1, RD | BM | CS},
    {"exists", CMD_EXISTS, -2, R | F, 1, -1, 1, KS | RD | CF},
    {"type", CMD_TYPE, 2, R | F, 1, 1, 1, KS | RD | CF},
    {"ttl", CMD_TTL, 2, R | F, 1, 1, 1, KS | RD | CF},
    {"pttl", CMD_PTTL, 2, R | F, 1, 1, 1, KS | RD | CF},
    {"expiretime", CMD_EXPIRETIME, 2, R | F, 1, 1, 1, KS | RD | CF},
    {"pexpiretime", CMD_PEXPIRETIME, 2, R | F, 1, 1, 1, KS | RD | CF},
    {"touch", CMD_TOUCH, -2, R | F, 1, -1, 1, KS | RD | CF},
    {"keys", CMD_KEYS, 2, R, 0, 0, 0, KS | RD | CS | DNG},
    {"scan", CMD_SCAN, -2, R, 0, 0, 0, KS | RD | CS},
    {"randomkey", CMD_RANDOMKEY, 1, R, 0, 0, 0, KS | RD | CS},
    {"dbsize", CMD_DBSIZE, 1, R | F, 0, 0, 0, KS | RD | CF},
    {"object", CMD_OBJECT, -2, R, 2, 2, 1, KS | RD | CS},
    /* writes: through the ring and the log */
    {"set", CMD_SET, -3, W | OOM, 1, 1, 1, WR | STR | CS},
    {"setnx", CMD_SETNX, 3, W | OOM | F, 1, 1, 1, WR | STR | CF},
    {"setex", CMD_SETEX, 4, W | OOM, 1, 1, 1, WR | STR | CS},
    {"psetex", CMD_PSETEX, 4, W | OOM, 1, 1, 1, WR | STR | CS},
    {"getset", CMD_GETSET, 3, W | OOM | F, 1, 1, 1, WR | STR | CF},
    {"getex", CMD_GETEX, -2, W | F, 1, 1, 1, WR | STR | CF},
    {"getdel", CMD_GETDEL, 2, W | F, 1, 1, 1, WR | STR | CF},
    {"mset", CMD_MSET, -3, W | OOM, 1, -1, 2, WR | STR | CS},
    {"msetnx", CMD_MSETNX, -3, W | OOM, 1, -1, 2, WR | STR | CS},
    {"incr", CMD_INCR, 2, W | OOM | F, 1, 1, 1, WR | STR | CF},
    {"decr", CMD_DECR, 2, W | OOM | F, 1, 1, 1, WR | STR | CF},
    {"incrby", CMD_INCRBY, 3, W | OOM | F, 1, 1, 1, WR | STR | CF},
    {"decrby", CMD_DECRBY, 3, W | OOM | F, 1, 1, 1, WR | STR | CF},
    {"incrbyfloat", CMD_INCRBYFLOAT, 3, W | OOM | F, 1, 1, 1, WR | STR | CF},
    {"append", CMD_APPEND, 3, W | OOM | F, 1, 1, 1, WR | STR | CF},
    {"setrange", CMD_SETRANGE, 4, W | OOM, 1, 1, 1, WR | STR | CS},
    {"setbit", CMD_SETBIT, 4, W | OOM, 1, 1, 1, WR | BM | CS},
    {"del", CMD_DEL, -2, W, 1, -1, 1, KS | WR | CS},
    {"unlink", CMD_UNLINK, -2, W | F, 1, -1, 1, KS | WR | CF},
    {"rename", CMD_RENAME, 3, W, 1, 2, 1, KS | WR | CS},
    {"renamenx", CMD_RENAMENX, 3, W | F, 1, 2, 1, KS | WR | CF},
    {"copy", CMD_COPY, -3, W | OOM, 1, 2, 1, KS | WR | CS},
    {"move", CMD_MOVE, 3, W | F, 1, 1, 1, KS | WR | CF},
    {"swapdb", CMD_SWAPDB, 3, W | F, 0, 0, 0, KS | WR | CF | DNG},
    {"expire", CMD_EXPIRE, -3, W | F, 1, 1, 1, KS | WR | CF},
    {"pexpire", CMD_PEXPIRE, -3, W | F, 1, 1, 1, KS | WR | CF},
    {"expireat", CMD_EXPIREAT, -3, W | F, 1, 1, 1, KS | WR | CF},
    {"pexpireat", CMD_PEXPIREAT, -3, W | F, 1, 1, 1, KS | WR | CF},
    {"persist", CMD_PERSIST, 2, W | F, 1, 1, 1, KS | WR | CF},
    {"flushdb", CMD_FLUSHDB, -1, W, 0, 0, 0, KS | WR | CS | DNG},
    {"flushall", CMD_FLUSHALL, -1, W, 0, 0, 0, KS | WR | CS | DNG},
};

/* Subcommands as Redis 7.0.15 lists them, plus CLIENT SETINFO (7.2), which
 * clients send on connect. */
static const cmd_sub_t cmd_subs[] = {
    {CMD_OBJECT, "encoding", 3},   {CMD_OBJECT, "freq", 3},      {CMD_OBJECT, "help", 2},
    {CMD_OBJECT, "idletime", 3},   {CMD_OBJECT, "refcount", 3},
    {CMD_CONFIG, "get", -3},       {CMD_CONFIG, "set", -4},      {CMD_CONFIG, "resetstat", 2},
    {CMD_CONFIG, "rewrite", 2},    {CMD_CONFIG, "help", 2},
    {CMD_CLIENT, "caching", 3},    {CMD_CLIENT, "getname", 2},   {CMD_CLIENT, "getredir", 2},
    {CMD_CLIENT, "help", 2},       {CMD_CLIENT, "id", 2},        {CMD_CLIENT, "info", 2},
    {CMD_CLIENT, "kill", -3},      {CMD_CLIENT, "list", -2},     {CMD_CLIENT, "no-evict", 3},
    {CMD_CLIENT, "pause", -3},     {CMD_CLIENT, "reply", 3},     {CMD_CLIENT, "setname", 3},
    {CMD_CLIENT, "tracking", -3},  {CMD_CLIENT, "trackinginfo", 2}, {CMD_CLIENT, "unblock", -3},
    {CMD_CLIENT, "unpause", 2},    {CMD_CLIENT, "setinfo", 4},
    {CMD_ACL, "cat", -2},          {CMD_ACL, "deluser", -3},     {CMD_ACL, "dryrun", -4},
    {CMD_ACL, "genpass", -2},      {CMD_ACL, "getuser", 3},      {CMD_ACL, "help", 2},
    {CMD_ACL, "list", 2},          {CMD_ACL, "load", 2},         {CMD_ACL, "log", -2},
    {CMD_ACL, "save", 2},          {CMD_ACL, "setuser", -3},     {CMD_ACL, "users", 2},
    {CMD_ACL, "whoami", 2},
    {CMD_SLOWLOG, "get", -2},      {CMD_SLOWLOG, "help", 2},     {CMD_SLOWLOG, "len", 2},
    {CMD_SLOWLOG, "reset", 2},
    {CMD_COMMAND, "count", 2},     {CMD_COMMAND, "docs", -2},    {CMD_COMMAND, "getkeys", -4},
    {CMD_COMMAND, "getkeysandflags", -4}, {CMD_COMMAND, "help", 2}, {CMD_COMMAND, "info", -2},
    {CMD_COMMAND, "list", -2},
};

int cmd_has_subs(cmd_id_t id)
{
    return id == CMD_OBJECT || id == CMD_CONFIG || id == CMD_CLIENT || id == CMD_ACL ||
           id == CMD_SLOWLOG || id == CMD_COMMAND;
}

const cmd_sub_t *cmd_lookup_sub(cmd_id_t parent, const char *name, size_t len)
{
    for (size_t i = 0; i < sizeof(cmd_subs) / sizeof(cmd_subs[0]); i++) {
        const cmd_sub_t *s = &cmd_subs[i];
        if (s->parent == parent && strlen(s->name) == len && strncasecmp(s->name, name, len) == 0)
            return s;
    }
    return NULL;
}

static const char *const cat_names[CAT__COUNT] = {
    "keyspace", "read", "write", "string", "bitmap", "admin",
    "fast", "slow", "dangerous", "connection", "transaction",
};

const char *cmd_cat_name(int i)
{
    return i >= 0 && i < CAT__COUNT ? cat_names[i] : NULL;
}

#define NCMDS (sizeof(cmd_descs) / sizeof(cmd_descs[0]))

const cmd_desc_t *cmd_lookup(const char *name, size_t len)
{
    /* A linear scan of ~70 names, length first, costs about what hashing
     * would; revisit when the table grows past a few hundred. */
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
