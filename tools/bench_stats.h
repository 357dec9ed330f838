/*
 * bench_stats.h - the numbers behind atticdb-bench: latency samples with exact
 * percentiles, a log2 histogram for the human summary, and the deterministic
 * generators (think time, key choice) that make a run repeatable.
 *
 * Nothing here does I/O or reads a clock, so tests/test_bench_stats.c can
 * check every function with fixed inputs. All functions are plain C with no
 * globals; each generator carries its own state, one per writer.
 */
#ifndef ATTIC_BENCH_STATS_H
#define ATTIC_BENCH_STATS_H

#include <stddef.h>
#include <stdint.h>

/* ---- latency samples -------------------------------------------------- */

/* Every sample is kept (8 bytes each), so percentiles are exact rather than
 * bucketed: 3 million acks cost 24 MiB, far below what any run here makes. */
typedef struct bench_samples {
    uint64_t *ns; /* latencies in nanoseconds */
    size_t count;
    size_t cap;
    int sorted; /* set by bench_samples_sort(), cleared by every add */
} bench_samples_t;

void bench_samples_init(bench_samples_t *s);
void bench_samples_free(bench_samples_t *s);
/* Appends one latency. Returns 0, or -1 when memory runs out (the sample is
 * dropped and the caller should count an error). */
int bench_samples_add(bench_samples_t *s, uint64_t ns);
/* Appends all of `src` to `dst`. Returns 0 or -1 on allocation failure. */
int bench_samples_merge(bench_samples_t *dst, const bench_samples_t *src);
/* Sorts ascending; the percentile functions require it. */
void bench_samples_sort(bench_samples_t *s);

/* Nearest-rank percentile of sorted samples: the smallest sample such that at
 * least p percent of all samples are <= it (p in [0, 100]; p = 0 gives the
 * minimum, 100 the maximum). Returns 0 for an empty set. */
uint64_t bench_percentile(const bench_samples_t *s, double p);
/* Arithmetic mean in nanoseconds, 0 for an empty set. */
double bench_mean(const bench_samples_t *s);

/* ---- histogram -------------------------------------------------------- */

/* Bucket i holds latencies in [2^i, 2^(i+1)) microseconds; bucket 0 also holds
 * everything below 1 us, the last bucket everything above its lower bound. */
#define BENCH_HIST_BUCKETS 32

typedef struct bench_hist {
    uint64_t bucket[BENCH_HIST_BUCKETS];
    uint64_t total;
} bench_hist_t;

/* Index of the bucket a latency of `ns` nanoseconds falls in. */
int bench_hist_bucket(uint64_t ns);
/* Fills `h` from `s` (sorted or not). */
void bench_hist_fill(bench_hist_t *h, const bench_samples_t *s);

/* ---- deterministic generators ----------------------------------------- */

/* xoshiro256** seeded through splitmix64, so that nearby seeds (writer 0, 1,
 * 2, ...) give unrelated streams. Same seed, same sequence, on every
 * platform: that is what makes agent-shaped runs repeat. */
typedef struct bench_rng {
    uint64_t s[4];
} bench_rng_t;

void bench_rng_seed(bench_rng_t *r, uint64_t seed);
uint64_t bench_rng_next(bench_rng_t *r);
/* Uniform integer in [0, bound] inclusive, without modulo bias. */
uint64_t bench_rng_below_incl(bench_rng_t *r, uint64_t bound);
/* Uniform double in [0, 1). */
double bench_rng_unit(bench_rng_t *r);

/* Agent think time: uniform in [0, 2 * think_us] microseconds, so the mean is
 * think_us. The generator for writer w is seeded by w (plus a run seed,
 * 0 by default). */
typedef struct bench_think {
    bench_rng_t rng;
    uint64_t max_us; /* 2 * think_us */
} bench_think_t;

void bench_think_init(bench_think_t *t, uint64_t think_us, uint64_t writer_index,
                      uint64_t run_seed);
/* The next pause, in microseconds. */
uint64_t bench_think_next_us(bench_think_t *t);

/* Zipfian key choice over [0, n) (Gray et al., "Quickly generating
 * billion-record synthetic databases", as in YCSB); theta in (0, 1), 0.99 is
 * YCSB's default. Rank 0 is the hottest key. */
typedef struct bench_zipf {
    uint64_t n;
    double theta, alpha, zetan, eta, half_pow_theta;
} bench_zipf_t;

/* Returns 0, or -1 if n == 0 or theta is outside (0, 1). Costs O(n) once. */
int bench_zipf_init(bench_zipf_t *z, uint64_t n, double theta);
uint64_t bench_zipf_next(const bench_zipf_t *z, bench_rng_t *r);

#endif
