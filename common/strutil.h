/* strutil.h - string helpers shared by the frontends and the store. */
#ifndef ATTIC_STRUTIL_H
#define ATTIC_STRUTIL_H

#include <stddef.h>

/*
 * Parse s[0, n) as Redis' string2ll does: the canonical decimal form only
 * (no spaces, no '+', no leading zeros, no "-0"), within long long.
 * Returns 0 and sets *out, or -1.
 */
int str_to_ll(const char *s, size_t n, long long *out);

/* Write a printf-style message into err (errlen bytes) and return -1: the
 * usual tail of a function that reports why it failed. */
int str_fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Format v in decimal into out (at least 21 bytes); returns its length. */
size_t str_from_ll(char *out, long long v);

/* ---- long doubles as INCRBYFLOAT sees them (added for issue 5's strings) */

/* Longest text of a long double Redis accepts, plus one (its
 * MAX_LONG_DOUBLE_CHARS); str_from_ld needs this much room at most. */
#define STR_LD_MAX 5120

/* Parse s[0, n) as Redis' string2ld does: strtold on the whole text, no
 * leading space, no NUL inside, shorter than STR_LD_MAX; NaN, overflow and
 * underflow to zero are refused, "inf" is accepted. Returns 0 or -1. */
int str_to_ld(const char *s, size_t n, long double *out);

/* Format a finite v as Redis' INCRBYFLOAT does ("%.17Lf", trailing zeros
 * and a trailing '.' removed, "-0" becomes "0") into out (cap bytes, at
 * least STR_LD_MAX for any value); returns its length, 0 when out is too
 * small. Deterministic for a given C library. */
size_t str_from_ld(char *out, size_t cap, long double v);

#endif
