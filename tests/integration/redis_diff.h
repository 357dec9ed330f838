/*
 * redis_diff.h - differential testing against a real Redis 7, for the
 * integration tests: start a redis-server (on a free port, no persistence)
 * and an atticdb-server (harness.h), send both the same commands over raw
 * RESP connections and compare the reply bytes.
 *
 *   D(&d, "SET", "k", "v")     exact bytes
 *   DS(&d, "KEYS", "*")        an array reply compared as a sorted set
 *   DT(&d, "TTL", "k")         any two positive integers agree
 *   DSCAN(&d, "MATCH", "a*")   a whole SCAN iteration, as a sorted set
 *
 * A difference is reported with the step, the line, the command and both
 * replies (and d.seed, when set, for random tests); rdiff_end_both fails the
 * test when there was any. Suites use rdiff_teardown as their .fini.
 * Environment: ATTICDB_SERVER, REDIS_SERVER (default: redis-server from
 * PATH; without one, rdiff_start_both skips the test, saying why).
 */
#ifndef ATTIC_TEST_REDIS_DIFF_H
#define ATTIC_TEST_REDIS_DIFF_H

#include <stddef.h>
#include <stdint.h>

#include "harness.h"

/* A raw RESP2 connection. */
typedef struct peer {
    int fd;
    char *in; /* bytes received and not yet returned */
    size_t len, cap;
} peer_t;

/* Connect to 127.0.0.1:port (10 s timeouts); NULL on failure. */
peer_t *peer_open(int port);
void peer_close(peer_t *p);

/* Send one command (none when argc is 0: read the next reply of a
 * pipeline); returns its reply's bytes (malloc'd, NUL-terminated; "<...>"
 * on EOF, timeout or garbage) and sets *rlen. lens NULL: strlen each. */
char *peer_cmd(peer_t *p, int argc, const char *const *argv, const size_t *lens, size_t *rlen);

typedef struct diff {
    peer_t *r, *a; /* redis, atticdb */
    int step, mismatches;
    uint64_t seed; /* random tests: printed with each mismatch */
} diff_t;

/* The atticdb-server rdiff_start_atticdb / rdiff_start_both started. */
extern srv_t rdiff_atticdb;

/* Start atticdb-server alone (--frontends 2); asserts it started. */
void rdiff_start_atticdb(void);
/* Start both servers and connect to each. */
void rdiff_start_both(diff_t *d);
/* Close the connections; fail the test if any reply differed. */
void rdiff_end_both(diff_t *d);
/* Stop and remove both servers (a suite's .fini). */
void rdiff_teardown(void);

enum { CMP_EXACT, CMP_SORTED, CMP_TTL };

/* Send argv to both and compare (how: CMP_*). Returns 1 when equal. */
int rdiff_cmd(diff_t *d, int line, int how, int argc, const char *const *argv);
/* A whole SCAN iteration with these options after the cursor: the sorted
 * set of keys returned as an array reply, or the first error reply. */
char *rdiff_scan_all(peer_t *p, int nopt, const char *const *opts, size_t *len);
/* rdiff_scan_all on both, compared. */
int rdiff_scan(diff_t *d, int line, int nopt, const char *const *opts);
/* One command to one server; the reply in a buffer reused at each call. */
const char *rdiff_one(peer_t *p, int argc, const char *const *argv);

#define NARGS(...) ((int)(sizeof((const char *[]){__VA_ARGS__}) / sizeof(const char *)))
#define RDIFF_(d, how, ...)                                                                        \
    rdiff_cmd((d), __LINE__, (how), NARGS(__VA_ARGS__), (const char *[]){__VA_ARGS__})
#define D(d, ...)     RDIFF_(d, CMP_EXACT, __VA_ARGS__)
#define DS(d, ...)    RDIFF_(d, CMP_SORTED, __VA_ARGS__)
#define DT(d, ...)    RDIFF_(d, CMP_TTL, __VA_ARGS__)
#define DSCAN(d, ...) rdiff_scan((d), __LINE__, NARGS(__VA_ARGS__), (const char *[]){__VA_ARGS__})
#define DSCAN0(d)     rdiff_scan((d), __LINE__, 0, NULL)
#define ONE(p, ...)   rdiff_one((p), NARGS(__VA_ARGS__), (const char *[]){__VA_ARGS__})

#endif
