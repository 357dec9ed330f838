/*
 * streamid.h - stream entry IDs and the trimming options of XADD and
 * XTRIM as Redis 7.0 parses them, shared by the frontend (which refuses
 * bad input before it reaches the ring, contract 7) and the store (which
 * reads the same arguments from the record). Pure functions, no state.
 */
#ifndef ATTIC_STREAMID_H
#define ATTIC_STREAMID_H

#include <stddef.h>
#include <stdint.h>

#define SID_ERR_INVALID "ERR Invalid stream ID specified as stream command argument"

/* Longest text of an ID: two 20-digit numbers and the dash, plus NUL. */
#define SID_TEXT_MAX 42

/* Parse an ID "<ms>" or "<ms>-<seq>" (decimal digits, leading zeros
 * allowed, each within 64 bits; a missing seq is missing_seq). Unless
 * strict, "-" is 0-0 and "+" the largest ID. When seq_given is not NULL,
 * "<ms>-*" is accepted and clears *seq_given (XADD); else it is set to 1.
 * Returns 0, or -1 (SID_ERR_INVALID). */
int sid_parse(const char *p, size_t n, int strict, uint64_t missing_seq, uint64_t *ms,
              uint64_t *seq, int *seq_given);

/* "<ms>-<seq>" into buf (SID_TEXT_MAX bytes); returns its length. */
int sid_format(char *buf, uint64_t ms, uint64_t seq);

enum { STRIM_NONE = 0, STRIM_MAXLEN = 1, STRIM_MINID = 2 };

/* XADD's and XTRIM's options (Redis 7.0's streamParseAddOrTrimArgs). */
typedef struct sid_trim_args {
    int strategy; /* STRIM_* */
    int approx;   /* '~' */
    long long maxlen;
    uint64_t minid_ms, minid_seq;
    long long limit; /* entries an approximate trim may remove; 0: no bound */
    int nomkstream;
    int id_given, seq_given; /* XADD: an explicit ID, and its seq */
    uint64_t id_ms, id_seq;
    int id_at; /* XADD: the index of the ID argument */
} sid_trim_args_t;

/* The default LIMIT of an approximate trim (100 * stream-node-max-entries
 * at its default of 100). */
#define SID_TRIM_LIMIT 10000

/* Parse argv[1, argc) (argv[0] is the key; the command's name is not
 * there) as XADD's (xadd set: up to the ID) or XTRIM's options. Returns 0,
 * or -1 with *err set to Redis' text (without the leading '-'); XADD's
 * odd or missing field-value pairs are "ERR wrong number of arguments for
 * 'xadd' command". */
int sid_trim_parse(int argc, const char *const *argv, const uint32_t *lens, int xadd,
                   sid_trim_args_t *out, const char **err);

/* XREAD's and XREADGROUP's options (Redis 7.0.15's xreadCommand, its
 * first loop): what comes before the keys' lookup. */
typedef struct sid_xread_args {
    long long count;    /* 0: no limit */
    long long block_ms; /* -1: no BLOCK; 0: forever */
    int noack;
    int group_at;   /* the index of the group's name (the consumer's follows); 0: none */
    int streams_at; /* the index of the first key */
    int nstreams;
} sid_xread_args_t;

/* Parse argv[0, argc) (the words after the command's name) as XREAD's
 * (group 0) or XREADGROUP's options, in Redis' order (7.0.15 takes any
 * BLOCK that is not negative). Returns 0, or -1 with *err set to Redis'
 * text. */
int sid_xread_parse(int argc, const char *const *argv, const uint32_t *lens, int group,
                    sid_xread_args_t *out, const char **err);

#endif
