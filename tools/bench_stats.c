/*
 * bench_stats.c - latency samples, exact percentiles, the summary histogram
 * and the seeded generators atticdb-bench draws think times and keys from.
 *
 * Runs inside the atticdb-bench process only (and in its unit test). No I/O,
 * no clocks, no globals: results depend on inputs alone, which is what lets a
 * test pin them down and lets two runs of an agent-shaped load sleep for the
 * very same sequence of pauses.
 */
#include "bench_stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void bench_samples_init(bench_samples_t *s)
{
    memset(s, 0, sizeof(*s));
}

void bench_samples_free(bench_samples_t *s)
{
    free(s->ns);
    memset(s, 0, sizeof(*s));
}

static int samples_reserve(bench_samples_t *s, size_t want)
{
    if (want <= s->cap) return 0;
    size_t cap = s->cap ? s->cap : 1024;
    while (cap < want) {
        if (cap > SIZE_MAX / 2 / sizeof(uint64_t)) return -1;
        cap *= 2;
    }
    uint64_t *p = realloc(s->ns, cap * sizeof(uint64_t));
    if (!p) return -1;
    s->ns = p;
    s->cap = cap;
    return 0;
}

int bench_samples_add(bench_samples_t *s, uint64_t ns)
{
    if (samples_reserve(s, s->count + 1) < 0) return -1;
    s->ns[s->count++] = ns;
    s->sorted = 0;
    return 0;
}

int bench_samples_merge(bench_samples_t *dst, const bench_samples_t *src)
{
    if (src->count == 0) return 0;
    if (samples_reserve(dst, dst->count + src->count) < 0) return -1;
    memcpy(dst->ns + dst->count, src->ns, src->count * sizeof(uint64_t));
    dst->count += src->count;
    dst->sorted = 0;
    return 0;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

void bench_samples_sort(bench_samples_t *s)
{
    if (!s->sorted && s->count > 1) qsort(s->ns, s->count, sizeof(uint64_t), cmp_u64);
    s->sorted = 1;
}

uint64_t bench_percentile(const bench_samples_t *s, double p)
{
    if (s->count == 0) return 0;
    if (p <= 0) return s->ns[0];
    if (p >= 100) return s->ns[s->count - 1];
    /* Nearest rank: rank = ceil(p/100 * N), 1-based. The epsilon keeps
     * p = 99 of N = 100 at rank 99 despite 0.99 * 100 = 99.00000000000001. */
    double exact = p / 100.0 * (double)s->count;
    size_t rank = (size_t)ceil(exact - 1e-9);
    if (rank < 1) rank = 1;
    if (rank > s->count) rank = s->count;
    return s->ns[rank - 1];
}

double bench_mean(const bench_samples_t *s)
{
    if (s->count == 0) return 0;
    long double sum = 0;
    for (size_t i = 0; i < s->count; i++)
        sum += s->ns[i];
    return (double)(sum / s->count);
}

int bench_hist_bucket(uint64_t ns)
{
    uint64_t us = ns / 1000;
    if (us < 2) return 0;
    int b = 63 - __builtin_clzll(us);
    return b < BENCH_HIST_BUCKETS ? b : BENCH_HIST_BUCKETS - 1;
}

void bench_hist_fill(bench_hist_t *h, const bench_samples_t *s)
{
    memset(h, 0, sizeof(*h));
    for (size_t i = 0; i < s->count; i++)
        h->bucket[bench_hist_bucket(s->ns[i])]++;
    h->total = s->count;
}

/* ---- generators ------------------------------------------------------- */

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void bench_rng_seed(bench_rng_t *r, uint64_t seed)
{
    uint64_t x = seed;
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix64(&x);
}

static inline uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

uint64_t bench_rng_next(bench_rng_t *r)
{
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

uint64_t bench_rng_below_incl(bench_rng_t *r, uint64_t bound)
{
    if (bound == UINT64_MAX) return bench_rng_next(r);
    uint64_t range = bound + 1;
    /* Reject the top partial block so every value is equally likely; the
     * loop ends with probability >= 1/2 per draw. */
    uint64_t limit = UINT64_MAX - (UINT64_MAX % range);
    for (;;) {
        uint64_t v = bench_rng_next(r);
        if (v < limit) return v % range;
    }
}

double bench_rng_unit(bench_rng_t *r)
{
    return (double)(bench_rng_next(r) >> 11) * 0x1.0p-53;
}

void bench_think_init(bench_think_t *t, uint64_t think_us, uint64_t writer_index, uint64_t run_seed)
{
    /* Mixing the run seed in with a multiplier keeps (writer 1, seed 0) and
     * (writer 0, seed 1) apart. */
    bench_rng_seed(&t->rng, writer_index + run_seed * 0x100000001b3ull);
    t->max_us = 2 * think_us;
}

uint64_t bench_think_next_us(bench_think_t *t)
{
    if (t->max_us == 0) return 0;
    return bench_rng_below_incl(&t->rng, t->max_us);
}

static double zeta(uint64_t n, double theta)
{
    double sum = 0;
    for (uint64_t i = 1; i <= n; i++)
        sum += 1.0 / pow((double)i, theta);
    return sum;
}

int bench_zipf_init(bench_zipf_t *z, uint64_t n, double theta)
{
    if (n == 0 || !(theta > 0 && theta < 1)) return -1;
    z->n = n;
    z->theta = theta;
    z->alpha = 1.0 / (1.0 - theta);
    z->zetan = zeta(n, theta);
    double zeta2 = zeta(2, theta);
    z->eta = (1.0 - pow(2.0 / (double)n, 1.0 - theta)) / (1.0 - zeta2 / z->zetan);
    z->half_pow_theta = 1.0 + pow(0.5, theta);
    return 0;
}

uint64_t bench_zipf_next(const bench_zipf_t *z, bench_rng_t *r)
{
    double u = bench_rng_unit(r);
    double uz = u * z->zetan;
    if (uz < 1.0) return 0;
    if (uz < z->half_pow_theta) return z->n > 1 ? 1 : 0;
    uint64_t v = (uint64_t)((double)z->n * pow(z->eta * u - z->eta + 1.0, z->alpha));
    return v < z->n ? v : z->n - 1;
}
