/*
 * dump.h - Redis 7.0's DUMP payload format (types/t_dump.c, D34): RDB
 * type bytes, the version DUMP writes, CRC64 and the encoders other types'
 * DUMP writers share.
 */
#ifndef ATTIC_STORE_DUMP_H
#define ATTIC_STORE_DUMP_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "store/core/entry.h"

#define ST_RDB_VERSION 10
enum {
    ST_RDB_STRING = 0,
    ST_RDB_LIST = 1,
    ST_RDB_SET = 2,
    ST_RDB_ZSET = 3,
    ST_RDB_HASH = 4,
    ST_RDB_ZSET_2 = 5,
    ST_RDB_LIST_ZIPLIST = 10,
    ST_RDB_SET_INTSET = 11,
    ST_RDB_LIST_QUICKLIST = 14,
    ST_RDB_HASH_LISTPACK = 16,
    ST_RDB_ZSET_LISTPACK = 17,
    ST_RDB_LIST_QUICKLIST_2 = 18,
};

/* crc64-jones (reflected, no final xor); start with crc = 0. */
uint64_t st_crc64(uint64_t crc, const unsigned char *p, size_t n);
void st_rdb_len(buf_t *b, uint64_t len);
/* A string as Redis 7.0's rdbSaveRawString writes it: integer form, LZF
 * when compress (rdbcompression) and it pays (D57), else plain. */
void st_rdb_string(buf_t *b, const unsigned char *p, size_t n, int compress);
void st_lp_entry(buf_t *b, const unsigned char *p, size_t n);
/* 0 when p[0, n) ends in a known RDB version and a right CRC64. */
int st_dump_verify(const unsigned char *p, size_t n);
/* RESTORE's record flags (2 and 4 are the TTL's verdicts, frontend/cmd/
 * t_dump.c). IDLETIME or FREQ given: the record's eighth argument is its
 * value (D52). */
#define ST_RESTORE_REPLACE  1u
#define ST_RESTORE_IDLETIME 8u
#define ST_RESTORE_FREQ     16u

/* Append e's payload to out: 0, -1 on an I/O error, -2 for a type with no
 * writer yet (out unchanged on error). */
int st_dump_payload(store_ctx_t *ctx, idx_entry_t *e, buf_t *out);

#endif
