/*
 * bench.h - what the parts of atticdb-bench share: the run configuration
 * parsed from the command line, the result every mode fills in, and the entry
 * points of the modes (network, SQLite, floor).
 */
#ifndef ATTIC_BENCH_H
#define ATTIC_BENCH_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "bench_stats.h"

enum bench_command { CMD_SET, CMD_APPEND, CMD_RPUSH, CMD_XADD, CMD_GET };

/* --wake: which blocking read the readers park on (bench_wake.c). */
enum bench_wake { BENCH_WAKE_NONE, BENCH_WAKE_BLPOP, BENCH_WAKE_XREAD };

typedef struct bench_config {
    const char *host;   /* -h, default 127.0.0.1 */
    int port;           /* -p, default 6379 */
    const char *socket; /* -s: unix socket instead of TCP */
    const char *sqlite; /* --sqlite PATH: in-process SQLite instead of a server */
    const char *floor;  /* --floor FILE: measure the device instead */
    int sqlite_busy;    /* --sqlite-busy: writers contend via SQLite's lock */
    int writers;        /* -c: connections (writers, or readers with --get) */
    int threads;        /* --threads: event-loop threads sharing the connections */
    long requests;      /* -n: requests per connection, 0 = until --duration */
    double duration_s;  /* --duration: stop issuing after this long, 0 = none */
    double think_ms;    /* --think: mean pause before each request */
    uint64_t seed;      /* --seed: mixed into every think-time generator */
    int value_size;     /* -d */
    enum bench_command command;
    enum bench_wake wake; /* --wake: blocked readers woken by pushes */
    const char *key_prefix;
    long keys;           /* --keys: key space for --get / --load */
    int load;            /* --load: populate the key space first */
    int load_only;       /* --load-only: populate, then exit */
    double zipf_theta;   /* > 0: zipfian key choice for --get */
    long floor_count;    /* writes per floor method */
    const char *label;   /* --label: copied into the result line */
    double wait_ready_s; /* --wait-ready: PING until the server answers */
    int quiet;           /* -q: no human summary */
} bench_config_t;

typedef struct bench_result {
    bench_samples_t samples; /* one latency per acked request */
    uint64_t sent;           /* requests written */
    uint64_t acked;          /* replies received (errors included) */
    uint64_t errors;         /* error replies, I/O and protocol failures */
    uint64_t misses;         /* --get: nil replies */
    double elapsed_s;        /* first request written to last reply */
} bench_result_t;

/* Monotonic time in nanoseconds. */
static inline uint64_t bench_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Network modes (bench_net.c). Each returns 0 when the run completed (errors
 * are counted in `res`, not returned), -1 when it could not start (no
 * connection, no memory); it prints why on stderr. */
int bench_net_run(const bench_config_t *cfg, bench_result_t *res);
int bench_net_load(const bench_config_t *cfg);
int bench_net_wait_ready(const bench_config_t *cfg);
/* Connects a blocking socket (TCP with TCP_NODELAY, or -s's unix socket).
 * Returns the fd, or -1 (errno set). */
int bench_net_connect(const bench_config_t *cfg);
/* Writes all of p[0..len) to a blocking fd. Returns 0, or -1. */
int bench_write_all(int fd, const char *p, size_t len);

/* --wake (bench_wake.c): -c readers blocked on their own keys, one writer
 * serving them, -n rounds; one sample per wake-up = reader's reply time minus
 * the writer's ack time of the push that served it. *across = readers on
 * another frontend than the writer, *early = wake-ups read before the ack
 * (sampled as 0). Returns 0 when the run completed, -1 when it could not
 * start. */
int bench_wake_run(const bench_config_t *cfg, bench_result_t *res, long *across, long *early);

/* In-process SQLite (bench_sqlite.c); -1 also when built without SQLite. */
int bench_sqlite_run(const bench_config_t *cfg, bench_result_t *res);
const char *bench_sqlite_version(void);

/* The device floor (bench_floor.c): prints one result line per method.
 * Returns 0, or -1 on an I/O error. */
int bench_floor_run(const bench_config_t *cfg);

/* Fills `value` (size bytes) with printable pseudo-random bytes, so that no
 * layer can compress the payload away. */
void bench_fill_value(char *value, int size, uint64_t seed);

/* Formats "<prefix>:<kind><a>:<b>" keys (":<b>" left out when b < 0):
 * "bench:set:w3:17" is writer 3's 18th SET, "bench:k42" a key of the --get
 * key space. Returns the length, as snprintf. */
int bench_format_key(char *out, size_t cap, const char *prefix, const char *kind, long a, long b);
/* The <kind> part for a command: "set:w", "append:w", ..., "k" for GET. */
const char *bench_key_kind(enum bench_command c);

#endif
