/*
 * diff_gen.h - the seeded command generator of the differential test: every
 * string, keyspace, expiry, database and transaction command of issue 5,
 * the hash commands of issue 13 (on the same keys, so WRONGTYPE comes both
 * ways), SORT and SORT_RO (D47), HELLO 2/3 switching the protocol, CONFIG SET of the hash encoding
 * limits,
 * over a small key space (so commands collide) in a few databases, with
 * random options, wrong arities, unknown names, bad numbers, binary and
 * empty strings, short and multi-kilobyte values. One seed gives one
 * sequence, whatever the servers reply (the generator never looks at
 * replies), so a run is reproduced exactly by its seed.
 *
 * The generator keeps the little connection state it must know without
 * replies: inside MULTI (how many more commands to queue before EXEC or
 * DISCARD) and whether keys are WATCHed.
 */
#ifndef ATTIC_DIFF_GEN_H
#define ATTIC_DIFF_GEN_H

#include <stddef.h>
#include <stdint.h>

#define DGEN_MAX_ARGS 48

/* How the runner must compare the replies to a command. */
typedef enum dgen_check {
    DGEN_EXACT = 0, /* byte for byte */
    DGEN_TIME,      /* TTL/PTTL/EXPIRETIME/PEXPIRETIME: see dgen_cmd_t.tolerance */
    DGEN_KEYS,      /* KEYS: the same set of keys, in any order */
    DGEN_SCAN,      /* a whole SCAN iteration: argv[1] is the cursor to replace */
    DGEN_RANDOMKEY, /* each side: a key that EXISTS there, or nil on an empty db */
    DGEN_UNORDERED, /* HKEYS, HVALS: the same elements in any order */
    DGEN_PAIRS,     /* HGETALL: the same field/value pairs in any order */
    DGEN_SHAPE,     /* HRANDFIELD: the same reply types and counts (values are random) */
    DGEN_HSCAN,     /* a whole HSCAN iteration: argv[2] is the cursor; pairs in any order */
    DGEN_SSCAN,     /* a whole SSCAN iteration: argv[2] is the cursor; members in any order */
    DGEN_HELLO,     /* HELLO 2|3: both a map/array (server facts differ), or the same error */
    DGEN_ENCODING,  /* OBJECT ENCODING after a SORT (or an EXEC that may hold one):
                     * exact, but Redis' "skiplist" may be AtticDB's "listpack"
                     * (Redis converts a zset it sorts, D47) */
} dgen_check_t;

typedef struct dgen_cmd {
    int argc;
    char *argv[DGEN_MAX_ARGS];
    size_t lens[DGEN_MAX_ARGS];
    dgen_check_t check;
    /* DGEN_TIME: integers >= 0 may differ by this much (the two servers
     * receive the command a few ms apart), except absolute times far in the
     * future (set by EXPIREAT and friends), which must be equal. */
    long long tolerance;
} dgen_cmd_t;

typedef struct dgen {
    uint64_t rng;
    int multi_left; /* > 0: inside MULTI, queue this many more, then EXEC/DISCARD */
    int in_multi;
    int watching;
    int sorted; /* a SORT was generated: zset encodings may differ since (D47) */
    char *skip; /* ",NAME,NAME," not to generate (upper case), or NULL */
    char *only; /* ",NAME,NAME," the only ones to generate, or NULL */
} dgen_t;

/* skip, only: comma-separated command names (any case) or NULL. */
void dgen_init(dgen_t *g, uint64_t seed, const char *skip, const char *only);
void dgen_done(dgen_t *g);

/* The next command; free it with dgen_cmd_free. */
void dgen_next(dgen_t *g, dgen_cmd_t *c);
void dgen_cmd_free(dgen_cmd_t *c);

/* The command as text for messages (binary escaped); malloc'd. */
char *dgen_cmd_text(const dgen_cmd_t *c);

/* Add one argument (the runner builds its own commands with it). */
void dgen_arg(dgen_cmd_t *c, const char *p, size_t n);
void dgen_args(dgen_cmd_t *c, const char *s);

/* Absolute times at or after this (seconds, or x1000 in ms) come from the
 * generator's *AT commands and must compare exactly. */
#define DGEN_ABS_EPOCH_S 4102444800LL /* 2100-01-01 */

#endif
