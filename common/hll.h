/*
 * hll.h - HyperLogLog values in Redis' own string format (PFADD, PFCOUNT,
 * PFMERGE: store/types/t_hll.c), so that GET, DUMP and RESTORE move them
 * between AtticDB and Redis and both give the same estimates.
 *
 * The string: a 16-byte header ("HYLL", the encoding byte, three zero
 * bytes, the cached estimate as 8 bytes little-endian whose top bit set
 * means "not valid"), then the 16,384 registers of 6 bits each, either
 * dense (12,288 bytes, register i at bit 6i, least significant bits first)
 * or sparse: opcodes ZERO (00xxxxxx: 1-64 zero registers), XZERO
 * (01xxxxxx yyyyyyyy: 1-16,384 zero registers) and VAL (1vvvvvxx: 1-4
 * registers of value 1-32). An element's register and value come from its
 * 64-bit MurmurHash2 (seed 0xadc83b19): the low 14 bits pick the register,
 * the position of the lowest set bit above them (from 1) is the value.
 * The estimate is Ertl's improved estimator over the registers' histogram
 * (arXiv:1702.01284), as Redis 5 and later compute it.
 *
 * Pure functions over bytes, no process's state: the store's commands
 * (store/types/t_hll.c), a frontend's PFSELFTEST and tests/test_hll.c
 * use them.
 */
#ifndef ATTIC_HLL_H
#define ATTIC_HLL_H

#include <stddef.h>
#include <stdint.h>

#define HLL_REGISTERS  16384
#define HLL_HDR_SIZE   16
#define HLL_DENSE_SIZE (HLL_HDR_SIZE + HLL_REGISTERS * 6 / 8)
/* No valid sparse string is longer: each opcode covers a register at
 * least, and takes two bytes at most. */
#define HLL_SPARSE_MAX_SIZE (HLL_HDR_SIZE + 2 * HLL_REGISTERS)

enum { HLL_DENSE = 0, HLL_SPARSE = 1 };

/* A HyperLogLog's string while it changes; p is malloc'ed. */
typedef struct hll_buf {
    unsigned char *p;
    size_t len, cap;
} hll_buf_t;

/* 1 when p[0, len) has a HyperLogLog's header (Redis' isHLLObject): the
 * magic, a known encoding, and a dense one exactly HLL_DENSE_SIZE long.
 * The sparse opcodes are checked as they are read. */
int hll_is_valid(const unsigned char *p, size_t len);

/* An empty HyperLogLog: sparse, one XZERO, the cached estimate 0. */
void hll_new(hll_buf_t *b);

/* Count element ele[0, n) into b: 1 when a register rose (the estimate
 * may have changed), 0 when none did, -1 when b's sparse opcodes are
 * corrupt. A sparse b becomes dense when a register needs a value above
 * 32 or when growing it would pass sparse_max bytes in all. */
int hll_add(hll_buf_t *b, const unsigned char *ele, size_t n, int64_t sparse_max);

/* Raise register idx of b to count if lower (same results as hll_add). */
int hll_set(hll_buf_t *b, long idx, int count, int64_t sparse_max);

/* Make a sparse b dense (a dense one stays): 0, or -1 when corrupt. */
int hll_to_dense(hll_buf_t *b);

/* Mark b's cached estimate as not valid (after any change). */
void hll_invalidate(hll_buf_t *b);

/* 1 with *card set when the header's cached estimate is valid. */
int hll_cached(const unsigned char *p, uint64_t *card);

/* max[i] = MAX(max[i], register i of the HyperLogLog p[0, len)), which
 * hll_is_valid accepted: 0, or -1 when its sparse opcodes are corrupt. */
int hll_merge(uint8_t max[HLL_REGISTERS], const unsigned char *p, size_t len);

/* The estimate of the HyperLogLog p[0, len), which hll_is_valid
 * accepted; *invalid set to 1 when its sparse opcodes are corrupt. */
uint64_t hll_count(const unsigned char *p, size_t len, int *invalid);

/* The estimate of one register per byte (PFCOUNT of several keys). */
uint64_t hll_count_raw(const uint8_t regs[HLL_REGISTERS]);

/* Register i of dense registers (HLL_DENSE_SIZE - HLL_HDR_SIZE bytes). */
int hll_dense_get(const unsigned char *regs, long i);

/* PFSELFTEST: every register of a dense string set and read back, 1000
 * times over, then 10,000,000 elements counted into a dense and a sparse
 * HyperLogLog (sparse_max: hll-sparse-max-bytes) whose estimates must
 * agree, stay sparse while small, and be within 6 standard errors at each
 * power of 10. 0, or -1 with Redis' TESTFAILED text in err. Seconds. */
int hll_selftest(int64_t sparse_max, uint64_t seed, char *err, size_t errlen);

/* MurmurHash2, 64-bit (MurmurHash64A), reading the bytes little-endian. */
uint64_t hll_murmur64a(const void *key, size_t len, uint64_t seed);

/* ele's register (*idx) and value, as hll_add uses them. */
int hll_pattern(const unsigned char *ele, size_t n, long *idx);

#endif
