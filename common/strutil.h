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

#endif
