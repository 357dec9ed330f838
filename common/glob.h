/*
 * glob.h - Redis-style glob matching (KEYS, SCAN MATCH, ACL key patterns,
 * CONFIG GET), on binary strings.
 *
 *   *        any run of bytes, including none
 *   ?        exactly one byte
 *   [abc]    one of the bytes listed; [^abc] one byte not listed;
 *            [a-z] a range (reversed ends are swapped); \x inside brackets
 *            is the literal x; a set left open at the end of the pattern
 *            ends there
 *   \x       the literal byte x
 * Everything else matches itself (ASCII case folded when nocase is set).
 * As in Redis, the empty string matches only the empty pattern.
 */
#ifndef ATTIC_GLOB_H
#define ATTIC_GLOB_H

#include <stddef.h>

/* 1 when s[0, slen) matches pat[0, plen), else 0. */
int glob_match(const char *pat, size_t plen, const char *s, size_t slen, int nocase);

#endif
