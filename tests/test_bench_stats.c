/*
 * test_bench_stats.c - unit tests of atticdb-bench's numbers: exact
 * nearest-rank percentiles, the log2 histogram, and the seeded generators
 * (think time, uniform and zipfian key choice) that make runs repeat.
 * No clocks and no timing thresholds: every expectation follows from inputs.
 */
#include <criterion/criterion.h>
#include <stdint.h>

#include "bench_stats.h"

static void fill(bench_samples_t *s, const uint64_t *v, size_t n)
{
    bench_samples_init(s);
    for (size_t i = 0; i < n; i++)
        cr_assert_eq(bench_samples_add(s, v[i]), 0);
    bench_samples_sort(s);
}

Test(bench_percentile, empty_set_is_zero)
{
    bench_samples_t s;
    bench_samples_init(&s);
    bench_samples_sort(&s);
    cr_assert_eq(bench_percentile(&s, 50), 0);
    cr_assert_eq(bench_percentile(&s, 100), 0);
    cr_assert_eq(bench_mean(&s), 0);
    bench_samples_free(&s);
}

Test(bench_percentile, single_sample_is_every_percentile)
{
    bench_samples_t s;
    uint64_t v[] = {4242};
    fill(&s, v, 1);
    cr_assert_eq(bench_percentile(&s, 0), 4242);
    cr_assert_eq(bench_percentile(&s, 50), 4242);
    cr_assert_eq(bench_percentile(&s, 99.9), 4242);
    cr_assert_eq(bench_percentile(&s, 100), 4242);
    bench_samples_free(&s);
}

Test(bench_percentile, nearest_rank_on_one_to_hundred)
{
    /* Samples 100..1 inserted in reverse: sorting must happen, and with
     * N = 100 the nearest rank of p is exactly p. */
    bench_samples_t s;
    bench_samples_init(&s);
    for (uint64_t i = 100; i >= 1; i--)
        bench_samples_add(&s, i);
    bench_samples_sort(&s);
    cr_assert_eq(bench_percentile(&s, 0), 1);
    cr_assert_eq(bench_percentile(&s, 1), 1);
    cr_assert_eq(bench_percentile(&s, 50), 50);
    cr_assert_eq(bench_percentile(&s, 99), 99);
    cr_assert_eq(bench_percentile(&s, 99.9), 100);
    cr_assert_eq(bench_percentile(&s, 100), 100);
    cr_assert_float_eq(bench_mean(&s), 50.5, 1e-9);
    bench_samples_free(&s);
}

Test(bench_percentile, thousand_samples_p999_is_rank_999)
{
    bench_samples_t s;
    bench_samples_init(&s);
    for (uint64_t i = 1; i <= 1000; i++)
        bench_samples_add(&s, i * 1000);
    bench_samples_sort(&s);
    cr_assert_eq(bench_percentile(&s, 50), 500000);
    cr_assert_eq(bench_percentile(&s, 99), 990000);
    cr_assert_eq(bench_percentile(&s, 99.9), 999000);
    cr_assert_eq(bench_percentile(&s, 100), 1000000);
    bench_samples_free(&s);
}

Test(bench_percentile, ordered_on_skewed_data)
{
    /* A heavy tail: p50 <= p99 <= p99.9 <= max must hold whatever the shape. */
    bench_samples_t s;
    bench_samples_init(&s);
    bench_rng_t r;
    bench_rng_seed(&r, 7);
    for (int i = 0; i < 12345; i++) {
        uint64_t v = 100 + bench_rng_below_incl(&r, 100);
        if (i % 97 == 0) v *= 1000;
        bench_samples_add(&s, v);
    }
    bench_samples_sort(&s);
    uint64_t p50 = bench_percentile(&s, 50), p99 = bench_percentile(&s, 99);
    uint64_t p999 = bench_percentile(&s, 99.9), max = bench_percentile(&s, 100);
    cr_assert(p50 <= p99 && p99 <= p999 && p999 <= max);
    cr_assert(p50 >= 100 && p50 <= 200);
    cr_assert(max >= 100000);
    bench_samples_free(&s);
}

Test(bench_samples, merge_keeps_every_sample)
{
    bench_samples_t a, b;
    uint64_t va[] = {5, 1, 3};
    uint64_t vb[] = {4, 2};
    fill(&a, va, 3);
    fill(&b, vb, 2);
    cr_assert_eq(bench_samples_merge(&a, &b), 0);
    cr_assert_eq(a.count, 5);
    cr_assert_eq(a.sorted, 0);
    bench_samples_sort(&a);
    for (size_t i = 0; i < 5; i++)
        cr_assert_eq(a.ns[i], i + 1);
    bench_samples_free(&a);
    bench_samples_free(&b);
}

Test(bench_samples, grows_past_initial_capacity)
{
    bench_samples_t s;
    bench_samples_init(&s);
    for (uint64_t i = 0; i < 100000; i++)
        cr_assert_eq(bench_samples_add(&s, i), 0);
    cr_assert_eq(s.count, 100000);
    bench_samples_sort(&s);
    cr_assert_eq(bench_percentile(&s, 100), 99999);
    bench_samples_free(&s);
}

Test(bench_hist, bucket_bounds_are_powers_of_two_microseconds)
{
    cr_assert_eq(bench_hist_bucket(0), 0);
    cr_assert_eq(bench_hist_bucket(999), 0);
    cr_assert_eq(bench_hist_bucket(1999), 0);
    cr_assert_eq(bench_hist_bucket(2000), 1);
    cr_assert_eq(bench_hist_bucket(3999), 1);
    cr_assert_eq(bench_hist_bucket(4000), 2);
    cr_assert_eq(bench_hist_bucket(127999), 6);
    cr_assert_eq(bench_hist_bucket(128000), 7);
    cr_assert_eq(bench_hist_bucket(UINT64_MAX), BENCH_HIST_BUCKETS - 1);
}

Test(bench_hist, fill_counts_every_sample_once)
{
    bench_samples_t s;
    uint64_t v[] = {500, 1500, 2500, 3500, 100000, 200000};
    fill(&s, v, 6);
    bench_hist_t h;
    bench_hist_fill(&h, &s);
    cr_assert_eq(h.total, 6);
    cr_assert_eq(h.bucket[0], 2);
    cr_assert_eq(h.bucket[1], 2);
    cr_assert_eq(h.bucket[6], 1); /* 100 us is in [64, 128) */
    cr_assert_eq(h.bucket[7], 1); /* 200 us is in [128, 256) */
    uint64_t sum = 0;
    for (int i = 0; i < BENCH_HIST_BUCKETS; i++)
        sum += h.bucket[i];
    cr_assert_eq(sum, 6);
    bench_samples_free(&s);
}

Test(bench_think, same_writer_same_sequence)
{
    bench_think_t a, b;
    bench_think_init(&a, 5000, 3, 0);
    bench_think_init(&b, 5000, 3, 0);
    for (int i = 0; i < 1000; i++)
        cr_assert_eq(bench_think_next_us(&a), bench_think_next_us(&b));
}

Test(bench_think, fixed_values_for_writer_zero)
{
    /* Pins the generator itself: if this changes, agent-shaped runs made
     * before and after the change no longer sleep the same pauses, and the
     * change must be called out in docs/BENCHMARKS.md. */
    bench_rng_t r;
    bench_rng_seed(&r, 0);
    uint64_t first = bench_rng_next(&r), second = bench_rng_next(&r);
    bench_rng_seed(&r, 0);
    cr_assert_eq(bench_rng_next(&r), first);
    cr_assert_eq(bench_rng_next(&r), second);
    cr_assert_neq(first, second);
    /* splitmix64(0) is a published constant: the seeding is the reference one. */
    bench_rng_t z;
    bench_rng_seed(&z, 0);
    cr_assert_eq(z.s[0], 0xe220a8397b1dcdafull);
}

Test(bench_think, writers_differ)
{
    bench_think_t a, b;
    bench_think_init(&a, 5000, 0, 0);
    bench_think_init(&b, 5000, 1, 0);
    int same = 0;
    for (int i = 0; i < 100; i++)
        same += bench_think_next_us(&a) == bench_think_next_us(&b);
    cr_assert_lt(same, 5);
}

Test(bench_think, run_seed_changes_sequence)
{
    bench_think_t a, b;
    bench_think_init(&a, 5000, 0, 0);
    bench_think_init(&b, 5000, 0, 1);
    int same = 0;
    for (int i = 0; i < 100; i++)
        same += bench_think_next_us(&a) == bench_think_next_us(&b);
    cr_assert_lt(same, 5);
}

Test(bench_think, uniform_in_zero_to_twice_think)
{
    bench_think_t t;
    bench_think_init(&t, 5000, 11, 0);
    uint64_t min = UINT64_MAX, max = 0;
    double sum = 0;
    const int n = 200000;
    for (int i = 0; i < n; i++) {
        uint64_t v = bench_think_next_us(&t);
        cr_assert_leq(v, 10000);
        if (v < min) min = v;
        if (v > max) max = v;
        sum += (double)v;
    }
    /* Deterministic for this seed; the bounds are loose enough to hold for
     * any decent generator, tight enough to catch [0, think] or [0, 4*think]. */
    cr_assert_lt(min, 100);
    cr_assert_gt(max, 9900);
    cr_assert_float_eq(sum / n, 5000.0, 100.0);
}

Test(bench_think, zero_think_is_zero)
{
    bench_think_t t;
    bench_think_init(&t, 0, 5, 0);
    for (int i = 0; i < 10; i++)
        cr_assert_eq(bench_think_next_us(&t), 0);
}

Test(bench_rng, below_incl_covers_small_range)
{
    bench_rng_t r;
    bench_rng_seed(&r, 99);
    int seen[4] = {0};
    for (int i = 0; i < 4000; i++) {
        uint64_t v = bench_rng_below_incl(&r, 3);
        cr_assert_leq(v, 3);
        seen[v]++;
    }
    for (int i = 0; i < 4; i++)
        cr_assert_gt(seen[i], 800);
    for (int i = 0; i < 1000; i++) {
        double u = bench_rng_unit(&r);
        cr_assert(u >= 0 && u < 1);
    }
}

Test(bench_zipf, rejects_bad_parameters)
{
    bench_zipf_t z;
    cr_assert_eq(bench_zipf_init(&z, 0, 0.99), -1);
    cr_assert_eq(bench_zipf_init(&z, 10, 0), -1);
    cr_assert_eq(bench_zipf_init(&z, 10, 1.0), -1);
}

Test(bench_zipf, in_range_skewed_and_deterministic)
{
    bench_zipf_t z;
    cr_assert_eq(bench_zipf_init(&z, 1000, 0.99), 0);
    bench_rng_t r1, r2;
    bench_rng_seed(&r1, 5);
    bench_rng_seed(&r2, 5);
    long hot = 0, cold = 0;
    for (int i = 0; i < 100000; i++) {
        uint64_t k = bench_zipf_next(&z, &r1);
        cr_assert_lt(k, 1000);
        cr_assert_eq(k, bench_zipf_next(&z, &r2));
        if (k < 10) hot++;
        if (k >= 990) cold++;
    }
    /* With theta 0.99 the 10 hottest of 1,000 keys draw about 39% of
     * requests, the 10 coldest well under 1%. */
    cr_assert_gt(hot, 30000);
    cr_assert_lt(cold, 1000);
}
