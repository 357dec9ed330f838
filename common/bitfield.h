/*
 * bitfield.h - BITFIELD's and BITFIELD_RO's words, parsed once for both
 * sides (common/bitfield.c): the frontend checks them and encodes the
 * operations into the record (or sends a line of GETs to the store as
 * BITFIELD_RO: cmd_runs_as), the store parses BITFIELD_RO's again.
 * Errors are Redis 7.0's, in its order.
 */
#ifndef ATTIC_BITFIELD_H
#define ATTIC_BITFIELD_H

#include <stddef.h>
#include <stdint.h>

enum { BF_GET, BF_SET, BF_INCRBY };
enum { BF_WRAP, BF_SAT, BF_FAIL };

typedef struct bf_op {
    uint64_t offset; /* in bits, the #n form already multiplied */
    int64_t value;   /* SET's value, INCRBY's increment */
    uint8_t opcode;  /* BF_GET ... */
    uint8_t owtype;  /* the OVERFLOW in force for this operation */
    uint8_t sign;    /* 1: iN, 0: uN */
    uint8_t bits;    /* 1-64 (i), 1-63 (u) */
} bf_op_t;

/* Bytes of one operation in a record (bf_put / bf_get). */
#define BF_OP_BYTES 20

/*
 * Parse the words after the key (argv[0..argc)). max_bulk (> 0) limits
 * the offsets' bytes, as proto-max-bulk-len does in Redis. Returns the
 * number of operations with *ops allocated (free() it; NULL for none), or
 * -1 with *err a Redis error text. *writes: whether any is SET or INCRBY.
 */
int bf_parse(int argc, const char *const *argv, const uint32_t *lens, int64_t max_bulk,
             bf_op_t **ops, int *writes, const char **err);

/* One operation into / out of BF_OP_BYTES bytes. */
void bf_put(unsigned char *p, const bf_op_t *op);
void bf_get(const unsigned char *p, bf_op_t *op);

/* Whether a BITFIELD line (its name and key first) writes: a SET or
 * INCRBY among its operations; 1 also for a line bf_parse refuses, so that
 * the encoder gives the error. A line of GETs runs as BITFIELD_RO. */
int bf_line_writes(int argc, const char *const *argv, const uint32_t *lens);

#endif
