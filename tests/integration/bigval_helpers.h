/*
 * bigval_helpers.h - what the integration tests of values larger than a
 * record share (test_bigvalues: D31, D45, D48, D55; test_bigmulti: D58):
 * values that differ at every offset, hiredis calls whose reply type and
 * bytes are checked, DEBUG DIGEST and DEBUG SEGMENTS (the live bytes),
 * restarts that must keep the digest, a request's large bulk sent by hand
 * on the socket, a process's RSS, and the checkpoint files of a data
 * directory. Every function fails the running Criterion test on a
 * surprise.
 */
#ifndef ATTIC_TEST_BIGVAL_HELPERS_H
#define ATTIC_TEST_BIGVAL_HELPERS_H

#include <hiredis/hiredis.h>
#include <stddef.h>
#include <sys/types.h>

#include "harness.h"

/* A 1 MB ring: a record holds at most 256 KB, so a few MB make dozens of
 * chunks. */
#define BV_SMALL_RING "--frontends 1 --ring-size 1mb --segment-size 16mb"
#define BV_MB         (1u << 20)

/* A value of n bytes (malloc'd) that differs with seed and with every
 * offset (a piece out of place or a chunk twice changes it). */
char *bv_pattern(size_t n, unsigned seed);
/* A connection with room for slow 100 MB round trips (120 s timeout). */
redisContext *bv_conn(const srv_t *s);
/* r (consumed) is the status want. */
void bv_expect_status(redisContext *c, redisReply *r, const char *want, const char *what);
/* The integer reply of fmt. */
long long bv_integer(redisContext *c, const char *what, const char *fmt, ...);
/* The reply of fmt is the bulk string v[0, n). */
void bv_expect_bulk(redisContext *c, const char *v, size_t n, const char *what, const char *fmt,
                    ...);
/* GET key is exactly v[0, n). */
void bv_expect_value(redisContext *c, const char *key, const char *v, size_t n, const char *what);
/* The reply of fmt is the error want. */
void bv_expect_error(redisContext *c, const char *want, const char *fmt, ...);
/* DEBUG DIGEST of s, into out. */
void bv_digest(const srv_t *s, char out[64]);
/* DEBUG SEGMENTS: the live table agrees with a recount; the live total. */
long long bv_live_total(const srv_t *s, const char *what);
/* Wait (up to 60 s) until the live total is want. */
void bv_live_back_to(const srv_t *s, long long want, const char *what);
/* Restart after a clean stop and after SIGKILL of the whole group: the
 * same digest each time. */
void bv_restarts_keep(srv_t *s, const char *what);
/* A server with BV_SMALL_RING, and a connection to it. */
redisContext *bv_start_small(srv_t *s);
/* Stop and remove s. */
void bv_finish(srv_t *s);
/* Send the start of a request whose last argument is a bulk of n bytes
 * (its header only), on c's socket. */
void bv_send_head(redisContext *c, int argc, const char *const *args, size_t n);
/* Write bytes [from, to) of a value that repeats v[0, vn) on c's socket. */
void bv_send_bytes(redisContext *c, const char *v, size_t vn, size_t from, size_t to);
/* A kB figure of /proc/<pid>/status ("VmHWM:", "VmRSS:"). */
long bv_proc_kb(pid_t pid, const char *field);
/* The pid of s's only frontend. */
pid_t bv_the_frontend(const srv_t *s);
/* The highest LSN of a checkpoint file in s's directory (0: none). */
unsigned long long bv_newest_checkpoint(const srv_t *s);
/* The digest of s now equals the one a replay of its whole log reaches
 * (after a clean stop, its checkpoints removed). */
void bv_expect_replay_digest(srv_t *s, const char *what);

/* RSS growth within 64 MB, where the bounds mean anything (harness.h's
 * SRV_RSS_BOUNDS: not under AddressSanitizer). */
#define bv_expect_rss_within(grown, ...)                                                           \
    do {                                                                                           \
        if (SRV_RSS_BOUNDS) cr_assert_lt((grown), 64 * 1024, __VA_ARGS__);                         \
    } while (0)

#endif
