/*
 * test_evict.c - unit tests of eviction's choice and its record
 * (store/core/evict.c, store/types/evict.c; D32), driven without processes
 * (store_harness.c): keys written and read at chosen times, the policy set
 * in the context, st_evict_pick asked for victims, each victim removed by
 * applying a CMD_EVICT record as the store process would write it, and the
 * log replayed into fresh contexts to the same digest. Also OBJECT FREQ
 * and IDLETIME, which read the same access data, and the store process's
 * pacing helpers (store/evict.c, D43): maxmemory-eviction-tenacity's time
 * limit and the accounting of time spent over maxmemory.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "command.h"
#include "config.h"
#include "record.h"
#include "store/core/entry.h"
#include "shm.h"
#include "store/core/evict.h"
#include "store/evict.h"
#include "store/store-internal.h"
#include "store_harness.h"

static void setup(void)
{
    sh_setup("evict", 0, 42);
    sh_canonical_only = 1;
}

TestSuite(evict, .init = setup, .fini = sh_teardown, .timeout = 120);

#define T0 1700000000000ll /* ms: a wall-clock-like time */
#define S  1000ll

static void set_key(int64_t t, const char *key, int64_t expire_at)
{
    cr_assert_str_eq(sh_put_key(t, CMD_SET, key, "bui", "v", (size_t)1, 0u, expire_at), "+OK\r\n");
}

static void policy(int p)
{
    ctx->access.policy = p;
    ctx->access.samples = 64; /* every key of these small tables in one round */
}

/* The next victim at now, removed by its CMD_EVICT record; its key into
 * out. Returns 0 when the policy gave none (*none set). */
static int evict_next(int64_t now, char *out, size_t n, int *none)
{
    st_victim_t v;
    if (!st_evict_pick(ctx, now, &v, none)) return 0;
    cr_assert_lt(v.klen, n);
    memcpy(out, v.key, v.klen);
    out[v.klen] = '\0';
    cr_assert_gt(v.bytes, 0);
    uint64_t before = store_evicted(ctx);
    sh_put_key(now, REC_OP_DB(CMD_EVICT, v.db), out, "");
    cr_assert_eq(store_evicted(ctx), before + 1, "%s: the record removed it", out);
    cr_assert_str_eq(sh_rd(now, 0, CMD_EXISTS, out, NULL), ":0\r\n");
    free(v.key);
    return 1;
}

Test(evict, volatile_ttl_takes_the_nearest_expiry_first_and_never_a_key_without_ttl)
{
    policy(CONFIG_POLICY_VOLATILE_TTL);
    /* Written in a shuffled order, so table order says nothing. */
    static const int order[] = {7, 2, 11, 0, 5, 9, 1, 13, 4, 8, 12, 3, 10, 6};
    for (unsigned i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
        char k[16];
        snprintf(k, sizeof(k), "t%02d", order[i]);
        set_key(T0, k, T0 + 1000 * S + order[i] * S);
    }
    for (int i = 0; i < 10; i++) {
        char k[16];
        snprintf(k, sizeof(k), "p%d", i);
        set_key(T0, k, 0);
    }
    char got[64];
    int none;
    for (int i = 0; i < 14; i++) {
        cr_assert(evict_next(T0 + S, got, sizeof(got), &none), "victim %d", i);
        char want[16];
        snprintf(want, sizeof(want), "t%02d", i);
        cr_expect_str_eq(got, want, "the nearest expiry goes first");
    }
    cr_assert_not(evict_next(T0 + S, got, sizeof(got), &none));
    cr_expect_eq(none, 1, "no key with a TTL is left: nothing to evict");
    cr_expect_str_eq(sh_rd(T0 + S, 0, CMD_DBSIZE, NULL), ":10\r\n");
    sh_check_replay("evictions");
}

Test(evict, allkeys_lru_takes_the_longest_idle_and_reads_count_as_use)
{
    policy(CONFIG_POLICY_ALLKEYS_LRU);
    char k[16];
    for (int i = 0; i < 10; i++) {
        snprintf(k, sizeof(k), "a%d", i);
        set_key(T0, k, 0);
    }
    for (int i = 0; i < 10; i++) {
        snprintf(k, sizeof(k), "b%d", i);
        set_key(T0 + 100 * S, k, 0);
    }
    /* a0..a4 read at +200 s: now the most recently used. */
    for (int i = 0; i < 5; i++) {
        snprintf(k, sizeof(k), "a%d", i);
        cr_assert_str_eq(sh_rd(T0 + 200 * S, 0, CMD_GET, k, NULL), "$1\r\nv\r\n");
    }
    char got[64];
    int none;
    for (int i = 0; i < 5; i++) {
        cr_assert(evict_next(T0 + 200 * S, got, sizeof(got), &none));
        cr_expect(got[0] == 'a' && got[1] >= '5', "idle 200 s first: %s", got);
    }
    for (int i = 0; i < 10; i++) {
        cr_assert(evict_next(T0 + 200 * S, got, sizeof(got), &none));
        cr_expect(got[0] == 'b', "idle 100 s next: %s", got);
    }
    cr_assert(evict_next(T0 + 200 * S, got, sizeof(got), &none));
    cr_expect(got[0] == 'a' && got[1] < '5', "the used ones last: %s", got);
    sh_check_replay("evictions");
}

Test(evict, allkeys_lfu_keeps_keys_used_more_and_object_freq_reports_the_counter)
{
    policy(CONFIG_POLICY_ALLKEYS_LFU);
    ctx->access.lfu_decay_time = 0;
    char k[16];
    for (int i = 0; i < 12; i++) {
        snprintf(k, sizeof(k), "%c%d", i < 4 ? 'h' : 'c', i);
        set_key(T0, k, 0);
    }
    cr_expect_str_eq(sh_rd(T0, 0, CMD_OBJECT, "FREQ", "c5", NULL), ":5\r\n", "a new key's counter");
    for (int n = 0; n < 3; n++)
        for (int i = 0; i < 4; i++) {
            snprintf(k, sizeof(k), "h%d", i);
            sh_rd(T0 + S, 0, CMD_GET, k, NULL);
        }
    /* The first use always counts (probability 1 at the initial value). */
    cr_expect_str_neq(sh_rd(T0, 0, CMD_OBJECT, "FREQ", "h0", NULL), ":5\r\n");
    cr_expect_str_eq(sh_rd(T0, 0, CMD_OBJECT, "IDLETIME", "h0", NULL),
                     "-ERR An LFU maxmemory policy is selected, idle time not tracked. Please "
                     "note that when switching between policies at runtime LRU and LFU data will "
                     "take some time to adjust.\r\n");
    char got[64];
    int none;
    for (int i = 0; i < 8; i++) {
        cr_assert(evict_next(T0 + S, got, sizeof(got), &none));
        cr_expect(got[0] == 'c', "the unused first: %s", got);
    }
    sh_check_replay("evictions");
}

Test(evict, random_policies_and_an_empty_store)
{
    char got[64];
    int none;
    policy(CONFIG_POLICY_ALLKEYS_RANDOM);
    cr_assert_not(evict_next(T0, got, sizeof(got), &none));
    cr_expect_eq(none, 1, "no key at all");
    for (int i = 0; i < 20; i++) {
        char k[16];
        snprintf(k, sizeof(k), "%c%d", i % 2 ? 'v' : 'n', i);
        set_key(T0, k, i % 2 ? T0 + 1000 * S : 0);
    }
    policy(CONFIG_POLICY_VOLATILE_RANDOM);
    for (int i = 0; i < 10; i++) {
        cr_assert(evict_next(T0, got, sizeof(got), &none));
        cr_expect_eq(got[0], 'v', "volatile-random takes only keys with a TTL: %s", got);
    }
    cr_assert_not(evict_next(T0, got, sizeof(got), &none));
    cr_expect_eq(none, 1);
    policy(CONFIG_POLICY_NOEVICTION);
    cr_assert_not(evict_next(T0, got, sizeof(got), &none));
    policy(CONFIG_POLICY_ALLKEYS_RANDOM);
    for (int i = 0; i < 10; i++)
        cr_assert(evict_next(T0, got, sizeof(got), &none));
    cr_expect_str_eq(sh_rd(T0, 0, CMD_DBSIZE, NULL), ":0\r\n");
    sh_check_replay("evictions");
}

Test(evict, an_evict_record_for_a_missing_key_changes_nothing_and_object_idletime_counts)
{
    policy(CONFIG_POLICY_ALLKEYS_LRU);
    set_key(T0, "k", 0);
    sh_put_key(T0, CMD_EVICT, "gone", "");
    cr_expect_eq(store_evicted(ctx), 0);
    cr_expect_str_eq(sh_rd(T0 + 42 * S, 0, CMD_OBJECT, "IDLETIME", "k", NULL), ":42\r\n");
    /* OBJECT does not touch: the idle time keeps growing. */
    cr_expect_str_eq(sh_rd(T0 + 50 * S, 0, CMD_OBJECT, "IDLETIME", "k", NULL), ":50\r\n");
    sh_rd(T0 + 60 * S, 0, CMD_GET, "k", NULL);
    cr_expect_str_eq(sh_rd(T0 + 61 * S, 0, CMD_OBJECT, "IDLETIME", "k", NULL), ":1\r\n");
    cr_expect_str_eq(sh_rd(T0, 0, CMD_OBJECT, "FREQ", "k", NULL),
                     "-ERR An LFU maxmemory policy is not selected, access frequency not "
                     "tracked. Please note that when switching between policies at runtime LRU "
                     "and LFU data will take some time to adjust.\r\n");
    sh_check_replay("evictions");
}

Test(evict, tenacity_time_limit_follows_redis_progression)
{
    /* Redis 7.0's evictionTimeLimitUs: linear to 500 us, then +15% a step. */
    cr_expect_eq(store_evict_time_limit_us(0), 0);
    cr_expect_eq(store_evict_time_limit_us(1), 50);
    cr_expect_eq(store_evict_time_limit_us(10), 500);
    cr_expect_eq(store_evict_time_limit_us(11), 575);
    cr_expect_eq(store_evict_time_limit_us(20), 2022); /* 500 * 1.15^10 = 2022.7 */
    uint64_t at99 = store_evict_time_limit_us(99);
    cr_expect(at99 > 110000000u && at99 < 130000000u, "about two minutes at 99: %lu",
              (unsigned long)at99);
    cr_expect_eq(store_evict_time_limit_us(100), UINT64_MAX);
    for (int t = 1; t < 100; t++)
        cr_expect(store_evict_time_limit_us(t) > store_evict_time_limit_us(t - 1), "%d", t);
}

Test(evict, time_over_maxmemory_is_summed_per_spell)
{
    shm_t *shm = calloc(1, sizeof(*shm));
    cr_assert(shm);
    store_evict_exceeded(shm, 0, 1000);
    cr_expect_eq(atomic_load(&shm->evict_exceeded_since_ms), 0, "under the bound: no spell");
    store_evict_exceeded(shm, 1, 1000);
    store_evict_exceeded(shm, 1, 1500); /* still over: the spell keeps its start */
    cr_expect_eq(atomic_load(&shm->evict_exceeded_since_ms), 1000);
    cr_expect_eq(atomic_load(&shm->evict_exceeded_total_ms), 0);
    store_evict_exceeded(shm, 0, 1700);
    cr_expect_eq(atomic_load(&shm->evict_exceeded_since_ms), 0);
    cr_expect_eq(atomic_load(&shm->evict_exceeded_total_ms), 700);
    store_evict_exceeded(shm, 1, 2000);
    store_evict_exceeded(shm, 0, 2050);
    cr_expect_eq(atomic_load(&shm->evict_exceeded_total_ms), 750, "the second spell adds");
    free(shm);
}
