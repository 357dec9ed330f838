/*
 * resp_helpers.c - helpers shared by the RESP codec's unit tests; see
 * resp_helpers.h.
 */
#include <criterion/criterion.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "resp_helpers.h"

const resp_limits_t default_limits = RESP_LIMITS_DEFAULT;

/* A heap copy of exactly n bytes, so that ASan sees any read past the end. */
char *exact_copy(const char *s, size_t n)
{
    char *p = malloc(n ? n : 1);
    cr_assert_not_null(p);
    if (n) memcpy(p, s, n);
    return p;
}

uint64_t rng_state;

uint64_t rng(void)
{
    /* xorshift64*: fixed seed, so a failure reproduces. */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 2685821657736338717ull;
}
