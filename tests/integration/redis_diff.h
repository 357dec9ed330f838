/*
 * redis_diff.h - differential testing against a real Redis 7: the one module
 * behind every integration test that compares AtticDB's replies with
 * redis-server's (test_cmds_basic, test_cmds_expiry, test_cmds_pipeline,
 * test_cmds_tools, test_cmds_keyspace, test_cmds_strings, test_multi, and
 * the seeded random test_diff).
 *
 *   wire_*   a growable buffer, a printable escape of binary data, raw RESP
 *            connections whose replies are kept as the exact bytes received,
 *            a parser of those bytes, sorted sets of keys (KEYS, a whole SCAN
 *            iteration: the comparisons that cannot be byte-exact), and a
 *            redis-server of our own (free port, temporary directory, own
 *            process group).
 *   rdiff_*  the runner of the Criterion tests: one redis-server and one
 *            atticdb-server side by side, the same command to both, the
 *            replies compared and each difference reported with the step, the
 *            test's line, the command and both replies.
 *
 *   D(&d, "SET", "k", "v")        exact bytes (on connection 0)
 *   DC(&d, 1, "GET", "k")         the same on connection 1
 *   DT(&d, "TTL", "k")            any two positive integers agree
 *   DI(&d, "OBJECT", "IDLETIME", "k")  any two integers agree
 *   DS(&d, "KEYS", "*")           an array reply compared as a sorted set
 *   DSCAN(&d, "MATCH", "a*")      a whole SCAN iteration, as a sorted set
 *   DLEN(&d, argc, argv, lens)    arguments with explicit lengths (binary)
 *   DRAW(&d, 0, "PING\r\nPING\r\n", 2)  raw bytes (a pipeline), the next 2 replies
 *   ONE(conn, "GET", "k")         one command to one server, reply bytes
 *
 * The .c file has no Criterion in it (test_diff is a plain program); the
 * Criterion glue at the end of this header (rdiff_start_both, rdiff_end_both
 * ...) is compiled only in files that include <criterion/criterion.h> before
 * this header. Suites use rdiff_teardown as their .fini.
 * Environment: ATTICDB_SERVER, REDIS_SERVER (default: redis-server from
 * PATH; without one, rdiff_start_both skips the test, saying why).
 */
#ifndef ATTIC_TEST_REDIS_DIFF_H
#define ATTIC_TEST_REDIS_DIFF_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "harness.h"

/* ---- bytes -------------------------------------------------------------- */

typedef struct wire_buf {
    char *p; /* NUL-terminated once anything was added */
    size_t len, cap;
} wire_buf_t;

void wire_buf_add(wire_buf_t *b, const void *p, size_t n);
void wire_buf_printf(wire_buf_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void wire_buf_free(wire_buf_t *b);

/* Printable form of bytes ("\r\n", "\x00" ...) in quotes, cut after max
 * bytes with the total length noted; malloc'd. */
char *wire_escape(const char *p, size_t n, size_t max);

/* Append one command (a RESP array of bulk strings) to b; lens NULL:
 * strlen of each argument. */
void wire_encode(wire_buf_t *b, int argc, const char *const *argv, const size_t *lens);

/* A command for messages: each argument escaped (60 bytes at most), space
 * separated; malloc'd. */
char *wire_cmd_text(int argc, const char *const *argv, const size_t *lens);

/* ---- a raw RESP connection ---------------------------------------------- */

typedef struct wire_conn {
    int fd;
    wire_buf_t in; /* received, not yet returned */
} wire_conn_t;

/* Connect to 127.0.0.1:port; reads and writes time out after timeout_s
 * seconds. NULL on failure. */
wire_conn_t *wire_open(int port, int timeout_s);
void wire_close(wire_conn_t *c);

/* Write all of p[0..n) (a pipeline, inline commands ...). 0 or -1. */
int wire_write(wire_conn_t *c, const char *p, size_t n);

/* Send one command (lens NULL: strlen of each). 0 or -1. */
int wire_send(wire_conn_t *c, int argc, const char *const *argv, const size_t *lens);

/* Read one whole reply: its exact bytes, malloc'd and NUL-terminated, length
 * in *len. On EOF, timeout or bytes that are not RESP: a description that
 * starts with '<' (wire_is_failure). */
char *wire_reply(wire_conn_t *c, size_t *len);

/* wire_send, then wire_reply ("<write failed>" if the send failed). */
char *wire_cmd(wire_conn_t *c, int argc, const char *const *argv, const size_t *lens, size_t *len);

/* 1 if the peer closes the connection within ms (and sends nothing more). */
int wire_closed_within(wire_conn_t *c, int ms);

static inline int wire_is_failure(const char *reply)
{
    return reply[0] == '<';
}

/* ---- parsed replies and sets of keys ------------------------------------ */

/* A parsed reply; strings point into the bytes parsed (keep them). */
typedef struct wire_val {
    char type;         /* '+', '-', ':', '$', '*', '_' (RESP3 null) ... */
    long long integer; /* ':' */
    const char *str;   /* '+', '-', '$' (NULL for a null bulk) */
    size_t len;
    long long n; /* '*': element count, -1 for a null array */
    struct wire_val *elem;
} wire_val_t;

/* Parse one reply from p[0..n); 0 on success, -1 if it is not one
 * complete RESP value. Free with wire_val_free. */
int wire_parse(const char *p, size_t n, wire_val_t *out);
void wire_val_free(wire_val_t *v);

/* A set of keys (byte strings), sorted by wire_keys_sort. */
typedef struct wire_keys {
    size_t n;
    char **k;
    size_t *len;
} wire_keys_t;

void wire_keys_add(wire_keys_t *s, const char *p, size_t n);
void wire_keys_free(wire_keys_t *s);
/* Sort by bytes and drop duplicates. */
void wire_keys_sort(wire_keys_t *s);
int wire_keys_equal(const wire_keys_t *a, const wire_keys_t *b);
/* Add the elements of an array of bulk strings; -1 if v is not one. */
int wire_keys_from_array(const wire_val_t *v, wire_keys_t *s);
/* The sorted keys of a reply that is an array of bulk strings: 0, or -1
 * if it is not one (s then holds what was read, sorted). */
int wire_keys_of_reply(const char *p, size_t n, wire_keys_t *s);
/* The set as RESP (an array of bulks, for comparing and for messages);
 * malloc'd, length in *len. */
char *wire_keys_render(const wire_keys_t *s, size_t *len);

/* A whole SCAN iteration on one connection: argv is a SCAN command whose
 * argv[1], the cursor, is replaced at each round by the one returned.
 * 0 and the sorted keys, or -1 and in *bad the first reply that was not a
 * proper SCAN reply (malloc'd, length in *bad_len). */
int wire_scan_all(wire_conn_t *c, int argc, const char *const *argv, const size_t *lens,
                  wire_keys_t *keys, char **bad, size_t *bad_len);
/* The same for a command whose cursor is argv[cursor_arg] (HSCAN: 2);
 * with pairs set, each field/value pair is one element of *keys
 * (wire_pairs_from_array). */
int wire_scan_all_at(wire_conn_t *c, int argc, const char *const *argv, const size_t *lens,
                     int cursor_arg, int pairs, wire_keys_t *keys, char **bad, size_t *bad_len);
/* An array (or RESP3 map) of 2n bulks as n elements "<len>:name" + value,
 * so pairs compare as a set. 0, or -1 when v is not such a reply. */
int wire_pairs_from_array(const wire_val_t *v, wire_keys_t *s);

/* ---- a redis-server of our own ------------------------------------------ */

typedef struct wire_redis {
    pid_t pid; /* also its process group */
    int port;
    char dir[64];
} wire_redis_t;

/* REDIS_SERVER, else redis-server on PATH; NULL when there is none. */
const char *wire_redis_path(void);

/* Start on a free port with a fresh temporary directory, no persistence,
 * with extra arguments (space separated, may be NULL); wait until it
 * answers PING (10 s). 0, or -1 (and nothing left behind). */
int wire_redis_start(wire_redis_t *r, const char *extra);

/* SIGKILL its group, reap it, remove its directory. Idempotent. */
void wire_redis_stop(wire_redis_t *r);

/* ---- seeds -------------------------------------------------------------- */

/* ATTIC_SEED (any base strtoull reads); unset: 1, a fixed sequence;
 * "random": one from the clock and pid. */
uint64_t rdiff_seed(void);
/* splitmix64: the next number of the sequence kept in *state. */
uint64_t rdiff_splitmix(uint64_t *state);
/* The next number of that sequence modulo n. */
unsigned rdiff_below(uint64_t *state, unsigned n);

/* ---- the differential runner -------------------------------------------- */

#define RDIFF_CONNS 3

typedef struct diff {
    wire_conn_t *r[RDIFF_CONNS], *a[RDIFF_CONNS]; /* redis, atticdb: connection i of each */
    int nconn;                                    /* connections open on each side */
    int step, mismatches;
    const char *label;             /* when set: the prefix of each difference reported */
    uint64_t seed;                 /* when set: ", ATTIC_SEED=<seed>" in each difference */
    void (*fail)(const char *msg); /* reports a difference (default: stderr) */
} diff_t;

/* The two servers of the runner (one of each at a time). */
extern srv_t rdiff_atticdb;
extern wire_redis_t rdiff_redis;

enum { RDIFF_NO_REDIS = -2 };

/* Start redis-server (extra arguments may be NULL): 0, -1, or
 * RDIFF_NO_REDIS when there is no redis-server to start. */
int rdiff_redis_start(const char *extra);
/* Start atticdb-server with these arguments: 0 or -1. */
int rdiff_atticdb_start(const char *args);
/* Open n connections to each server: 0 or -1. */
int rdiff_connect(diff_t *d, int n);
/* Close the connections; returns the number of differences. */
int rdiff_disconnect(diff_t *d);
/* Stop and remove both servers (a suite's .fini). */
void rdiff_teardown(void);

enum { RDIFF_EXACT, RDIFF_POSITIVE, RDIFF_ANY_INT, RDIFF_SORTED };

/* The normal form of a reply for a comparison that is not exact (how:
 * RDIFF_POSITIVE, RDIFF_ANY_INT: ":<positive>"; RDIFF_SORTED: the sorted
 * set of keys); *r is replaced, *n updated. */
void rdiff_normalize(char **r, size_t *n, int how);
/* Count a step; when the replies differ (or either is a failure) count and
 * report a difference, with what as the command. Returns 1 when equal. */
int rdiff_compare(diff_t *d, int line, const char *what, const char *rr, size_t rn, const char *ar,
                  size_t an);
/* Send argv to both on connection ci and compare (how: RDIFF_*; lens
 * NULL: strlen of each). Returns 1 when equal. */
int rdiff_cmd(diff_t *d, int line, int ci, int how, int argc, const char *const *argv,
              const size_t *lens);
/* A whole SCAN iteration (cursor 0, these options after it) on both,
 * compared as sorted sets of keys (or as the error replies). */
int rdiff_scan(diff_t *d, int line, int nopt, const char *const *opts);
/* Write bytes (a pipeline) to both on connection ci and compare the next n
 * replies, each labelled what (NULL: "[conn ci] pipeline reply i").
 * Returns the number of replies that differed. */
int rdiff_pipeline(diff_t *d, int line, int ci, const char *bytes, size_t len, int n,
                   const char *what);
/* Poll PTTL on connection 0 of both servers until key has expired on both
 * (":-2"): 0, or -1 after timeout_ms. What a test waits for before it looks
 * at an expired key, instead of a fixed sleep that a loaded machine
 * outlasts. */
int rdiff_wait_expired(diff_t *d, const char *key, int timeout_ms);
/* One command to one server; the reply in a buffer reused at each call. */
const char *rdiff_one(wire_conn_t *c, int argc, const char *const *argv);
/* HELLO 3 on connection 0 of both servers (its map is not compared: the
 * ids differ): the replies that follow are RESP3. */
void rdiff_hello3(diff_t *d);

#define NARGS(...) ((int)(sizeof((const char *[]){__VA_ARGS__}) / sizeof(const char *)))
#define RDIFF_(d, ci, how, ...)                                                                    \
    rdiff_cmd((d), __LINE__, (ci), (how), NARGS(__VA_ARGS__), (const char *[]){__VA_ARGS__}, NULL)
#define D(d, ...)                 RDIFF_(d, 0, RDIFF_EXACT, __VA_ARGS__)
#define DC(d, ci, ...)            RDIFF_(d, ci, RDIFF_EXACT, __VA_ARGS__)
#define DT(d, ...)                RDIFF_(d, 0, RDIFF_POSITIVE, __VA_ARGS__)
#define DI(d, ...)                RDIFF_(d, 0, RDIFF_ANY_INT, __VA_ARGS__)
#define DS(d, ...)                RDIFF_(d, 0, RDIFF_SORTED, __VA_ARGS__)
#define DLEN(d, argc, argv, lens) rdiff_cmd((d), __LINE__, 0, RDIFF_EXACT, (argc), (argv), (lens))
#define DSCAN(d, ...)             rdiff_scan((d), __LINE__, NARGS(__VA_ARGS__), (const char *[]){__VA_ARGS__})
#define DSCAN0(d)                 rdiff_scan((d), __LINE__, 0, NULL)
#define DRAW(d, ci, bytes, n)     rdiff_pipeline((d), __LINE__, (ci), (bytes), strlen(bytes), (n), NULL)
#define ONE(c, ...)               rdiff_one((c), NARGS(__VA_ARGS__), (const char *[]){__VA_ARGS__})

/* ---- Criterion glue (only where criterion.h was included first) --------- */
#ifdef CRITERION_H_

static inline void rdiff_cr_fail(const char *msg)
{
    cr_expect_fail("%s", msg);
}

/* Asserts that each key expires on both servers within 10 s. */
#define RDIFF_AWAIT_EXPIRED(d, ...)                                                                \
    do {                                                                                           \
        const char *keys_[] = {__VA_ARGS__};                                                       \
        for (size_t i_ = 0; i_ < sizeof(keys_) / sizeof(keys_[0]); i_++)                           \
            cr_assert_eq(rdiff_wait_expired((d), keys_[i_], 10000), 0,                             \
                         "%s did not expire on both servers within 10 s", keys_[i_]);              \
    } while (0)

/* Start atticdb-server alone with these arguments; asserts it started. */
static inline void rdiff_start_atticdb_args(const char *args)
{
    cr_assert_eq(rdiff_atticdb_start(args), 0, "atticdb-server (%s) did not start",
                 getenv("ATTICDB_SERVER") ? getenv("ATTICDB_SERVER") : "./atticdb-server");
}

/* Start atticdb-server alone (--frontends 2). */
static inline void rdiff_start_atticdb(void)
{
    rdiff_start_atticdb_args("--frontends 2");
}

/* Start both servers (redis_args may be NULL) and open conns connections
 * to each; skips the test when there is no redis-server. */
static inline void rdiff_start_both_with(diff_t *d, const char *atticdb_args,
                                         const char *redis_args, int conns)
{
    int rc = rdiff_redis_start(redis_args);
    if (rc == RDIFF_NO_REDIS)
        cr_skip_test(
            "redis-server not found (PATH or REDIS_SERVER): differential tests need Redis 7");
    cr_assert_eq(rc, 0, "redis-server did not start");
    rdiff_start_atticdb_args(atticdb_args);
    cr_assert_eq(rdiff_connect(d, conns), 0, "connect to both servers");
    d->fail = rdiff_cr_fail;
}

/* Both servers, atticdb-server with --frontends 2, one connection each. */
/* kill -9 of atticdb-server's whole group, a restart on the same data,
 * and connection 0 to it again: what follows compares the replayed state. */
static inline void rdiff_kill9_restart(diff_t *d)
{
    wire_close(d->a[0]);
    srv_kill_all(&rdiff_atticdb);
    cr_assert_eq(srv_restart(&rdiff_atticdb), 0, "atticdb restarts after kill -9");
    d->a[0] = wire_open(rdiff_atticdb.port, 10);
    cr_assert(d->a[0]);
}

/* HELLO 3 on connection 0 of both servers (its reply is not compared:
 * the client ids differ). */
static inline void rdiff_resp3(diff_t *d)
{
    const char *hello[] = {"HELLO", "3"};
    const size_t lens[] = {5, 1};
    size_t n1, n2;
    free(wire_cmd(d->r[0], 2, hello, lens, &n1));
    free(wire_cmd(d->a[0], 2, hello, lens, &n2));
}

static inline void rdiff_start_both(diff_t *d)
{
    rdiff_start_both_with(d, "--frontends 2", NULL, 1);
}

/* The value of an integer reply (as ONE returns it); asserts it is one. */
static inline long long reply_int(const char *r)
{
    cr_assert(r[0] == ':', "expected an integer reply, got %s", r);
    return strtoll(r + 1, NULL, 10);
}

/* Close the connections; fail the test if any reply differed. */
static inline void rdiff_end_both(diff_t *d)
{
    int n = rdiff_disconnect(d);
    cr_assert_eq(n, 0, "%d differences from Redis (see above)", n);
}

#endif /* CRITERION_H_ */

#endif
