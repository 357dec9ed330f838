/*
 * sort.h - SORT and SORT_RO's words and rules (D47), shared by the
 * frontends (which check a SORT ... STORE before it is logged, refuse
 * BY/GET patterns in cluster mode and route SORT without STORE as a read)
 * and the store (which parses the same words again and sorts).
 *
 * Everything here is a pure function of its arguments: the store's apply
 * of SORT ... STORE depends on nothing else (contract 4).
 *
 * Words are counted from the key: argv[0] is the key to sort, argv[1..]
 * the options, as the store's read and write arguments are.
 */
#ifndef ATTIC_SORT_H
#define ATTIC_SORT_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "record.h"

/* What a SORT line asks for. */
typedef struct sort_spec {
    int desc, alpha;
    int dontsort;          /* BY with a pattern without '*' (BY nosort) */
    long long limit_start; /* 0 unless LIMIT */
    long long limit_count; /* -1 unless LIMIT */
    int by;                /* the BY pattern's word, 0 = none */
    int store;             /* STORE's destination word, 0 = none */
    uint32_t ngets;        /* GET patterns, in order ... */
    uint16_t *gets;        /* ... their words (malloc'd: sort_spec_free) */
} sort_spec_t;

/* Parse flags. */
#define SORT_READONLY 1u /* SORT_RO: STORE is a syntax error */
#define SORT_CLUSTER  2u /* cluster mode: BY with '*', and GET, are refused */
#define SORT_KEYS_ACL 4u /* the user may not read every key: the same, ACL's texts */

/* Parse argv[0, argc) (argc >= 1) as Redis 7.0's sortCommandGeneric does,
 * left to right, the first error winning. Returns NULL, or the error's
 * text (static, without '-' and CRLF: "ERR syntax error", "ERR value is
 * not an integer or out of range", the cluster and ACL refusals); on
 * error nothing needs freeing. */
const char *sort_parse(const rec_arg_t *argv, int argc, unsigned flags, sort_spec_t *s);
void sort_spec_free(sort_spec_t *s);

/* The word after the last STORE of a SORT line counted from the command's
 * name (Redis' sortGetKeys: LIMIT skips two words, GET and BY one), or 0:
 * COMMAND GETKEYS, ACL key checks, cluster routing, and whether SORT is a
 * write (D47). */
int sort_store_key_at(int argc, const char *const *argv, const uint32_t *lens);

/* A BY or GET pattern, as Redis' lookupKeyByPattern reads it (as a C
 * string: its first NUL ends the search for '*' and "->"). */
enum sort_pat_kind {
    SORT_PAT_SELF,  /* "#": the element itself */
    SORT_PAT_NONE,  /* no '*': nothing, for every element */
    SORT_PAT_KEY,   /* a string key's value */
    SORT_PAT_FIELD, /* a hash field's value: key->field */
};
typedef struct sort_pattern {
    enum sort_pat_kind kind;
    const unsigned char *p; /* the pattern */
    size_t prefix_len;      /* bytes before the '*' */
    size_t post_len;        /* bytes after it, up to "->" or the end */
    const unsigned char *field;
    size_t field_len;
} sort_pattern_t;

void sort_pattern_compile(const rec_arg_t *pat, sort_pattern_t *out);
/* The key the pattern names for element sub (kinds KEY and FIELD), in out
 * (reset first). */
void sort_pattern_key(const sort_pattern_t *p, const unsigned char *sub, size_t sublen, buf_t *out);

/* The score of value p[0, n) for a numeric sort (strtod's rules, as Redis:
 * leading spaces, hex, inf; up to a NUL byte). Returns 0, or -1 when it
 * is not a number (trailing bytes, out of range, NaN). */
int sort_score(const unsigned char *p, size_t n, double *out);

/* One element to sort: its bytes, and what it sorts by. */
typedef struct sort_item {
    const unsigned char *p;
    size_t n;
    double score;              /* numeric sort */
    const unsigned char *by_p; /* ALPHA with BY: the BY value, NULL = none */
    size_t by_n;
    size_t origin; /* input position: equal items keep their order */
} sort_item_t;

/* Sort v[0, n) as Redis 7.0's sortCompare orders (numeric: by score,
 * equal scores by bytes; ALPHA: by bytes, or by the BY values, absent
 * first; `store` compares whole bytes, else up to a NUL as strcoll in the
 * C locale; DESC reversed), equal items in input order. */
void sort_items(sort_item_t *v, size_t n, const sort_spec_t *s);

/* The window [*start, *end] of n sorted elements LIMIT selects (Redis'
 * arithmetic: empty when *end < *start). */
void sort_window(const sort_spec_t *s, long long n, long long *start, long long *end);

#endif
