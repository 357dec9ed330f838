/*
 * command.h - every command AtticDB knows, described as data.
 *
 * The table (command.c) gives each command its name, arity (Redis
 * convention: n = exactly n words including the name, -n = at least n), flags
 * and key positions; COMMAND replies and arity checks come from it. The
 * frontend validates a command's arguments and, for a write, encodes it in a
 * canonical form: a record whose cmd_id is one of the CMD_* ids below and
 * whose arguments are documented here. The store applies canonical records and
 * answers canonical read requests. Several user commands share one canonical
 * form (INCR, DECR, INCRBY, DECRBY all become CMD_INCRBY), so replay only ever
 * meets the forms listed under "canonical".
 *
 * Canonical forms (integers are 8-byte or 4-byte little-endian arguments):
 *   CMD_SET       key, value, u32 set_flags, i64 expire_at_ms (0 = none)
 *   CMD_MSET      key, value, key, value, ...
 *   CMD_DEL       key...
 *   CMD_INCRBY    key, i64 delta
 *   CMD_APPEND    key, value
 *   CMD_GETDEL    key
 *   CMD_PEXPIREAT key, i64 at_ms, u32 expire_flags
 *                 (EXPIRE, PEXPIRE, EXPIREAT become this; at_ms <= now deletes)
 *   CMD_PERSIST   key
 *   CMD_FLUSHALL  (no arguments)
 * Reads sent to the store use the user's argument bytes unchanged:
 *   CMD_GET key | CMD_MGET key... | CMD_EXISTS key... | CMD_STRLEN key |
 *   CMD_TTL key | CMD_PTTL key | CMD_DBSIZE
 */
#ifndef ATTIC_COMMAND_H
#define ATTIC_COMMAND_H

#include <stddef.h>
#include <stdint.h>

typedef enum cmd_id {
    CMD_NONE = 0,
    /* answered by the frontend alone */
    CMD_PING, CMD_ECHO, CMD_QUIT, CMD_SELECT, CMD_COMMAND, CMD_INFO, CMD_CONFIG,
    /* reads, answered by the store */
    CMD_GET, CMD_MGET, CMD_EXISTS, CMD_STRLEN, CMD_TTL, CMD_PTTL, CMD_DBSIZE,
    /* writes (user-facing names; the canonical ones are marked above) */
    CMD_SET, CMD_MSET, CMD_DEL, CMD_INCR, CMD_INCRBY, CMD_DECR, CMD_DECRBY, CMD_APPEND,
    CMD_GETDEL, CMD_EXPIRE, CMD_PEXPIRE, CMD_EXPIREAT, CMD_PEXPIREAT, CMD_PERSIST,
    CMD_FLUSHALL,
    CMD__COUNT
} cmd_id_t;

enum cmd_flags {
    CMDF_WRITE = 1u << 0,    /* changes data: goes through the ring and the log */
    CMDF_READONLY = 1u << 1, /* reads data: answered by the store */
    CMDF_FAST = 1u << 2,     /* O(1) or O(log n) */
    CMDF_ADMIN = 1u << 3,
    CMDF_LOCAL = 1u << 4,    /* answered by the frontend alone, no state */
    CMDF_LOADING = 1u << 5,  /* allowed while the store is loading */
    CMDF_STALE = 1u << 6,
};

typedef struct cmd_desc {
    const char *name; /* lower case, as COMMAND reports it */
    cmd_id_t id;
    int arity;
    uint32_t flags;
    int first_key; /* 0 = no keys */
    int last_key;  /* -1 = last argument */
    int key_step;
} cmd_desc_t;

/* Flags of SET's canonical u32 argument. */
enum set_flags {
    SETF_NX = 1u << 0,
    SETF_XX = 1u << 1,
    SETF_GET = 1u << 2,
    SETF_KEEPTTL = 1u << 3,
};

/* Flags of PEXPIREAT's canonical u32 argument (EXPIRE's NX/XX/GT/LT). */
enum expire_flags {
    EXPF_NX = 1u << 0,
    EXPF_XX = 1u << 1,
    EXPF_GT = 1u << 2,
    EXPF_LT = 1u << 3,
};

/* The command named by the first len bytes of name (any case), or NULL. */
const cmd_desc_t *cmd_lookup(const char *name, size_t len);

/* The table entry of a command id. */
const cmd_desc_t *cmd_by_id(cmd_id_t id);

/* Every entry, for COMMAND and COMMAND COUNT; *n receives the count. */
const cmd_desc_t *cmd_table(size_t *n);

/* Little-endian helpers for canonical integer arguments. */
static inline void cmd_put_i64(unsigned char *p, int64_t v)
{
    uint64_t u = (uint64_t)v;
    for (int i = 0; i < 8; i++) p[i] = (unsigned char)(u >> (8 * i));
}
static inline int64_t cmd_get_i64(const unsigned char *p)
{
    uint64_t u = 0;
    for (int i = 0; i < 8; i++) u |= (uint64_t)p[i] << (8 * i);
    return (int64_t)u;
}
static inline void cmd_put_u32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}
static inline uint32_t cmd_get_u32(const unsigned char *p)
{
    uint32_t u = 0;
    for (int i = 0; i < 4; i++) u |= (uint32_t)p[i] << (8 * i);
    return u;
}

#endif
