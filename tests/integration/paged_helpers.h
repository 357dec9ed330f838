/*
 * paged_helpers.h - what the integration tests of collections in pages
 * (test_plist, D63; test_pstream, D64; test_pzset, D65) share: DEBUG
 * PAGED's figures, DEBUG DIGEST, and one command's reply compared byte for
 * byte between AtticDB and a redis-server.
 *
 * Uses Criterion's assertions: for Criterion test programs only.
 */
#ifndef ATTIC_TEST_PAGED_HELPERS_H
#define ATTIC_TEST_PAGED_HELPERS_H

#include <hiredis/hiredis.h>

#include "harness.h"
#include "redis_diff.h"

/* DEBUG PAGED key: [paged, chunks, pages, page bytes, in RAM, pinned,
 * elements]. */
void ph_paged_stats(redisContext *c, const char *key, long long out[7]);
/* DEBUG DIGEST into out. */
void ph_digest(redisContext *c, char out[64]);
/* The end of a test that killed a process: the server's digest (through
 * c, which is freed) must be the same after SIGKILL of the whole group and
 * a restart, the server must then stop cleanly and atticdb-check pass its
 * data directory, which is removed. what names the case in messages. */
void ph_same_after_kill(srv_t *s, redisContext *c, const char *what);
/* The same reply bytes from both connections for a command of words
 * separated by single spaces (at most 16). */
void ph_same(wire_conn_t *a, wire_conn_t *b, const char *cmd);

/* ph_same for each of n commands. */
void ph_same_each(wire_conn_t *a, wire_conn_t *b, const char *const *cmds, size_t n);
/* Rounds of writes to s, started with a fault point that SIGKILLs its
 * store: round(c, i, arg) for i = 0, 1, ... 100 ms apart, on a new
 * connection when the last one broke, until the store's death is in the
 * log or after max_rounds (then the test fails, naming fault). A new
 * connection to the respawned server. */
redisContext *ph_write_until_store_killed(srv_t *s, const char *fault, int max_rounds,
                                          void (*round)(redisContext *c, int i, void *arg),
                                          void *arg);

#endif
