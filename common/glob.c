/*
 * glob.c - Redis-style glob matching (see glob.h). Used by the store (KEYS,
 * SCAN) and the frontends (ACL key patterns, CONFIG GET). Pure function.
 *
 * Stars are handled by backtracking to the most recent star only: when the
 * rest of the pattern fails after a star, the star swallows one more byte
 * and the rest is tried again. Earlier stars never need revisiting (a later
 * star can absorb whatever they would), so the cost is O(plen * slen) at
 * worst, never exponential, whatever a client sends as a pattern.
 */
#include "glob.h"

#include <ctype.h>

static int fold(int c, int nocase)
{
    return nocase ? tolower(c) : c;
}

/* Match one byte against the set starting after '[' at *pp; advances *pp
 * past the closing ']' (or to the end). */
static int match_set(const unsigned char **pp, const unsigned char *pend, int c, int nocase)
{
    const unsigned char *p = *pp;
    int negate = 0, found = 0;
    if (p < pend && *p == '^') {
        negate = 1;
        p++;
    }
    while (p < pend && *p != ']') {
        if (*p == '\\' && p + 1 < pend) {
            p++;
            if (fold(*p, nocase) == fold(c, nocase)) found = 1;
            p++;
        } else if (p + 2 < pend && p[1] == '-') {
            int lo = fold(p[0], nocase), hi = fold(p[2], nocase), x = fold(c, nocase);
            if (lo > hi) {
                int t = lo;
                lo = hi;
                hi = t;
            }
            if (x >= lo && x <= hi) found = 1;
            p += 3;
        } else {
            if (fold(*p, nocase) == fold(c, nocase)) found = 1;
            p++;
        }
    }
    if (p < pend) p++; /* the ']' */
    *pp = p;
    return negate ? !found : found;
}

int glob_match(const char *pat, size_t plen, const char *str, size_t slen, int nocase)
{
    const unsigned char *p = (const unsigned char *)pat, *pend = p + plen;
    const unsigned char *s = (const unsigned char *)str, *send = s + slen;
    const unsigned char *star_p = NULL, *star_s = NULL;
    /* Redis' matcher never matches the empty string against a non-empty
     * pattern, not even "*" (KEYS * lists the empty key only because it
     * skips matching for "*"): the same here, for identical replies. */
    if (slen == 0) return plen == 0;
    for (;;) {
        if (p < pend && *p == '*') {
            while (p < pend && *p == '*')
                p++;
            if (p == pend) return 1;
            star_p = p;
            star_s = s;
            continue;
        }
        if (s < send && p < pend) {
            const unsigned char *next = p;
            int ok;
            if (*p == '?') {
                ok = 1;
                next = p + 1;
            } else if (*p == '[') {
                next = p + 1;
                ok = match_set(&next, pend, *s, nocase);
            } else if (*p == '\\' && p + 1 < pend) {
                ok = fold(p[1], nocase) == fold(*s, nocase);
                next = p + 2;
            } else {
                ok = fold(*p, nocase) == fold(*s, nocase);
                next = p + 1;
            }
            if (ok) {
                p = next;
                s++;
                continue;
            }
        } else if (s == send && p == pend) {
            return 1;
        }
        /* Mismatch: let the last star take one more byte, if it can. */
        if (!star_p || star_s >= send) return 0;
        p = star_p;
        s = ++star_s;
    }
}
