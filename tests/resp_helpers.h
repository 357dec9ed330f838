/*
 * resp_helpers.h - what the RESP codec's unit tests (test_resp: the parser;
 * test_resp_reply: the writers, RESP3 conversions and buf) share: the
 * default limits, exact-size heap copies (so ASan sees a read past the
 * end) and a seeded pseudo-random sequence (a failure reproduces).
 */
#ifndef ATTIC_TEST_RESP_HELPERS_H
#define ATTIC_TEST_RESP_HELPERS_H

#include <stddef.h>
#include <stdint.h>

#include "resp.h"

extern const resp_limits_t default_limits; /* RESP_LIMITS_DEFAULT */

/* A heap copy of exactly n bytes, so that ASan sees any read past the end
 * (asserts the allocation worked). The caller frees it. */
char *exact_copy(const char *s, size_t n);

/* xorshift64*: the next number of the sequence kept in rng_state (set it
 * to a fixed seed first). */
extern uint64_t rng_state;
uint64_t rng(void);

#endif
