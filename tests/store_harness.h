/*
 * store_harness.h - the harness of the store's unit tests (test_store.c,
 * test_store_strings.c, test_store_exec.c, test_store_keyspace.c): a
 * miniature logger that drives the store's state machine (store-internal.h) without
 * processes. Each record is encoded, written into a real segment file in a
 * temporary directory at its LSN offset (as the logger would; a pad record
 * where it would cross a segment, as the ring does), applied with
 * store_apply, and then poisoned in memory, so every value byte that is not
 * in RAM must come back from the files. Every record written is also kept
 * in log_copy, for replay into a fresh context; every write's reply in
 * live_replies. Reads go through store_read_at / store_read_db. Replies are
 * kept, NUL-terminated, in reply.
 *
 * Uses Criterion's assertions: for Criterion test programs only.
 */
#ifndef ATTIC_TEST_STORE_HARNESS_H
#define ATTIC_TEST_STORE_HARNESS_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "config.h"
#include "store/store-internal.h"

/* ---- the state a test reads (set up by sh_setup) ------------------------- */

extern char dir[256];           /* the temporary data directory */
extern config_t cfg;            /* the store's configuration */
extern store_ctx_t *ctx;        /* the live context */
extern uint64_t lsn;            /* the next record's position */
extern int seg_fd;              /* the segment file written last (-1: none) */
extern unsigned char *log_copy; /* every record written, in order */
extern size_t log_len;
extern buf_t live_replies;  /* every write's reply, in order */
extern char reply[1 << 21]; /* the last reply, NUL-terminated */
extern size_t reply_len;

/* When set, put() asserts that each record is a canonical write
 * (store_apply returns 0); otherwise a record the store ignores with an
 * error reply (1) is allowed. sh_setup clears it. */
extern int sh_canonical_only;
/* When set, called before each record is encoded (live only). sh_setup
 * clears it. */
extern void (*sh_before_put)(void);

/* A fresh directory /tmp/attic-<name>-XXXXXX, an empty log, and a store of
 * 1 MiB segments with `databases` databases (0: the default), keyed by
 * seed. */
void sh_setup(const char *name, int databases, uint64_t seed);
/* Destroy the context, remove the directory. */
void sh_teardown(void);
/* Replace the live context by a fresh one (the log stays): a new cfg with
 * this segment size and number of databases. */
void sh_new_store(uint64_t segment_size, int databases, uint64_t seed);

/* Write bytes at lsn where the logger would put them (and into log_copy);
 * lsn does not move. */
void sh_write_log(const unsigned char *rec, uint32_t space);
/* Apply log_copy, record by record, to c (replies into *all when not
 * NULL); returns c. */
store_ctx_t *sh_replay(store_ctx_t *c, buf_t *all);
/* The same from the record at LSN from (a checkpoint's: the log starts at
 * 0). */
store_ctx_t *sh_replay_from(store_ctx_t *c, uint64_t from, buf_t *all);
/* Replay: log_copy applied to two fresh stores (index seeds 7 and 9, one
 * keeping its replies) must reach ctx's digest, and the replies must equal
 * live_replies byte for byte (the first difference is printed); what
 * names the state in the messages ("hashes"). */
void sh_check_replay(const char *what);

/* ---- records ------------------------------------------------------------- */

/* Encode, write and apply one record (opdb: REC_OP_DB(op, db) or a plain
 * op for db 0) at time t; returns its reply. */
const char *sh_put(int64_t t, uint16_t opdb, uint16_t argc, const unsigned char *const *argv,
                   const uint32_t *lens);

/* A read request in database db, answered at now; returns its reply. */
const char *sh_read(int64_t now, unsigned db, uint16_t op, uint16_t argc,
                    const unsigned char *const *argv, const uint32_t *lens);

/* Arguments of a varargs call up to a NULL: strings, or "#u32:<n>" /
 * "#i64:<n>" for fixed-width integers (at most 64). */
typedef struct sh_args {
    const unsigned char *argv[64];
    uint32_t lens[64];
    unsigned char ints[64][8];
    uint16_t argc;
} sh_args_t;

void sh_collect(sh_args_t *x, va_list ap);

/* sh_put / sh_read with the arguments of sh_collect. */
const char *sh_wr(int64_t t, uint16_t opdb, ...);
const char *sh_rd(int64_t now, unsigned db, uint16_t op, ...);

/* The arguments of a record that are a key and then typed values, one
 * for each letter of fmt: 'u' a uint32_t, 'i' an int64_t, 'b' bytes (a
 * const void * and a size_t). E.g. the canonical SET: key, "bui", value,
 * length, flags, expire_at. */
void sh_key_args(sh_args_t *x, const char *key, const char *fmt, ...);
/* sh_put of such a record. */
const char *sh_put_key(int64_t t, uint16_t opdb, const char *key, const char *fmt, ...);

#endif
