/*
 * test_pubsub.c - unit tests of Pub/Sub's shared part (common/pubsub.c,
 * D37): subscriber counts per frontend and their sums, entries freed and
 * reused, patterns matched, a slot's counts cleared for its successor,
 * long names refused; the broadcast ring's round trip, wrap-around, a
 * reader overrun (it is told and moved to head, never handed a torn
 * message), and a forked publisher killed while holding the ring's lock.
 */
#include <criterion/criterion.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pubsub.h"

static ps_shm_t *ps_new(void)
{
    void *m = mmap(NULL, ps_shm_size(), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    cr_assert_neq(m, MAP_FAILED);
    ps_shm_init(m);
    return m;
}

static void ps_free(ps_shm_t *ps)
{
    munmap(ps, ps_shm_size());
}

#define S(x) x, strlen(x)

Test(pubsub_table, counts_per_frontend)
{
    ps_shm_t *ps = ps_new();
    cr_assert_eq(ps_set_count(ps, PS_CHANNEL, S("news"), 0, 2), 0);
    cr_assert_eq(ps_set_count(ps, PS_CHANNEL, S("news"), 3, 1), 0);
    cr_expect_eq(ps_channel_subscribers(ps, PS_CHANNEL, S("news"), 4, -1), 3);
    cr_expect_eq(ps_channel_subscribers(ps, PS_CHANNEL, S("news"), 4, 0), 1, "without slot 0");
    cr_expect_eq(ps_channel_subscribers(ps, PS_CHANNEL, S("news"), 1, -1), 2, "slot 0 only");
    /* kinds are apart: a shard channel of the same name is another */
    cr_expect_eq(ps_channel_subscribers(ps, PS_SHARD, S("news"), 4, -1), 0);
    cr_expect_eq(ps_channel_subscribers(ps, PS_CHANNEL, S("new"), 4, -1), 0);
    cr_assert_eq(ps_set_count(ps, PS_CHANNEL, S("news"), 0, 0), 0);
    cr_expect_eq(ps_channel_subscribers(ps, PS_CHANNEL, S("news"), 4, -1), 1);
    cr_assert_eq(ps_set_count(ps, PS_CHANNEL, S("news"), 3, 0), 0);
    cr_expect_eq(ps_channel_subscribers(ps, PS_CHANNEL, S("news"), 4, -1), 0);
    cr_expect(ps_slot_empty(ps, 0) && ps_slot_empty(ps, 3));
    ps_free(ps);
}

static void count_visit(void *arg, const char *name, size_t len, uint64_t subscribers)
{
    (void)name;
    (void)len;
    *(uint64_t *)arg += subscribers;
}

Test(pubsub_table, entries_freed_and_reused)
{
    ps_shm_t *ps = ps_new();
    /* many names in, all out, then again: the table never fills up */
    char name[32];
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < PS_SLOTS - 1; i++) {
            snprintf(name, sizeof(name), "c%d-%d", round, i);
            cr_assert_eq(ps_set_count(ps, PS_CHANNEL, S(name), 0, 1), 0, "%s", name);
        }
        uint64_t sum = 0;
        ps_each(ps, PS_CHANNEL, 1, count_visit, &sum);
        cr_expect_eq(sum, PS_SLOTS - 1);
        snprintf(name, sizeof(name), "c%d-%d", round, 77);
        cr_expect_eq(ps_channel_subscribers(ps, PS_CHANNEL, S(name), 1, -1), 1);
        for (int i = 0; i < PS_SLOTS - 1; i++) {
            snprintf(name, sizeof(name), "c%d-%d", round, i);
            cr_assert_eq(ps_set_count(ps, PS_CHANNEL, S(name), 0, 0), 0);
        }
        sum = 0;
        ps_each(ps, PS_CHANNEL, 1, count_visit, &sum);
        cr_expect_eq(sum, 0);
    }
    /* full: the next new name is refused (it stays on its frontend) */
    for (int i = 0; i < PS_SLOTS; i++) {
        snprintf(name, sizeof(name), "f%d", i);
        cr_assert_eq(ps_set_count(ps, PS_CHANNEL, S(name), 0, 1), 0);
    }
    cr_expect_eq(ps_set_count(ps, PS_CHANNEL, S("one-too-many"), 0, 1), -1);
    ps_free(ps);
}

Test(pubsub_table, patterns_and_long_names)
{
    ps_shm_t *ps = ps_new();
    cr_assert_eq(ps_set_count(ps, PS_PATTERN, S("news.*"), 0, 2), 0);
    cr_assert_eq(ps_set_count(ps, PS_PATTERN, S("news.*"), 1, 1), 0);
    cr_assert_eq(ps_set_count(ps, PS_PATTERN, S("*"), 1, 1), 0);
    cr_assert_eq(ps_set_count(ps, PS_PATTERN, S("sport"), 1, 1), 0);
    cr_expect_eq(ps_pattern_matches(ps, S("news.tech"), 2, -1), 4);
    cr_expect_eq(ps_pattern_matches(ps, S("news.tech"), 2, 1), 2, "frontend 0's only");
    cr_expect_eq(ps_pattern_matches(ps, S("weather"), 2, -1), 1);
    uint64_t distinct = 0;
    ps_each(ps, PS_PATTERN, 2, count_visit, &distinct);
    cr_expect_eq(distinct, 5);
    cr_expect_eq(atomic_load(&ps->npatterns), 3);
    /* a slot's successor: its counts are gone, entries it alone held too */
    ps_slot_reset(ps, 1);
    cr_expect_eq(ps_pattern_matches(ps, S("news.tech"), 2, -1), 2);
    cr_expect_eq(atomic_load(&ps->npatterns), 1);
    cr_expect(ps_slot_empty(ps, 1));
    char name[PS_NAME_MAX + 1];
    memset(name, 'n', sizeof(name));
    cr_expect_eq(ps_set_count(ps, PS_CHANNEL, name, PS_NAME_MAX, 0, 1), 0);
    cr_expect_eq(ps_set_count(ps, PS_CHANNEL, name, PS_NAME_MAX + 1, 0, 1), -1);
    cr_expect_eq(ps_channel_subscribers(ps, PS_CHANNEL, name, PS_NAME_MAX + 1, 2, -1), 0);
    ps_free(ps);
}

/* ---- the ring ---- */

static int read_one(ps_shm_t *ps, uint64_t *cur, char **buf, size_t *cap, ps_msg_t *h,
                    const char **chan, const char **msg)
{
    int r = ps_read(ps, cur, buf, cap);
    if (r != 1) return r;
    memcpy(h, *buf, sizeof(*h));
    *chan = *buf + sizeof(*h);
    *msg = *chan + h->chan_len;
    return 1;
}

Test(pubsub_ring, round_trip_and_wrap)
{
    ps_shm_t *ps = ps_new();
    uint64_t cur = 0;
    char *buf = NULL;
    size_t cap = 0;
    ps_msg_t h = {0};
    const char *chan = NULL, *msg = NULL;
    cr_expect_eq(ps_read(ps, &cur, &buf, &cap), 0, "empty");
    /* past the ring's end several times, reading as it goes */
    char body[5000];
    for (int i = 0; i < 10000; i++) {
        int n = snprintf(body, sizeof(body), "%d:", i);
        memset(body + n, 'a' + i % 26, (size_t)(i * 7 % 4000));
        n += i * 7 % 4000;
        cr_assert_neq(ps_publish(ps, i % 2 ? PS_SHARD : PS_CHANNEL, (unsigned)i % 3, S("chan"),
                                 body, (size_t)n),
                      0);
        cr_assert_eq(read_one(ps, &cur, &buf, &cap, &h, &chan, &msg), 1, "message %d", i);
        cr_assert_eq(h.kind, i % 2 ? PS_SHARD : PS_CHANNEL);
        cr_assert_eq(h.origin, (unsigned)i % 3);
        cr_assert_eq(h.chan_len, 4);
        cr_assert(!memcmp(chan, "chan", 4));
        cr_assert_eq(h.msg_len, (uint32_t)n);
        cr_assert(!memcmp(msg, body, (size_t)n), "message %d's bytes", i);
    }
    cr_expect_gt(atomic_load(&ps->head), 2ull * PS_RING_SIZE, "wrapped");
    cr_expect_eq(ps_read(ps, &cur, &buf, &cap), 0);
    /* too large for the ring */
    cr_expect_eq(ps_publish(ps, PS_CHANNEL, 0, S("c"), body, PS_MSG_MAX), 0);
    free(buf);
    ps_free(ps);
}

Test(pubsub_ring, overrun_reader_is_told)
{
    ps_shm_t *ps = ps_new();
    uint64_t cur = 0;
    char *buf = NULL;
    size_t cap = 0;
    static char big[64 * 1024];
    memset(big, 'z', sizeof(big));
    /* more than a ring's worth while the reader sleeps */
    for (unsigned i = 0; i < 2 * PS_RING_SIZE / sizeof(big); i++)
        cr_assert_neq(ps_publish(ps, PS_CHANNEL, 1, S("c"), big, sizeof(big)), 0);
    cr_expect_eq(ps_read(ps, &cur, &buf, &cap), -1);
    cr_expect_eq(cur, atomic_load(&ps->head), "moved to head");
    cr_expect_eq(ps_read(ps, &cur, &buf, &cap), 0);
    cr_assert_neq(ps_publish(ps, PS_CHANNEL, 1, S("c"), S("after")), 0);
    cr_expect_eq(ps_read(ps, &cur, &buf, &cap), 1, "reads again from there");
    free(buf);
    ps_free(ps);
}

Test(pubsub_ring, publisher_killed_holding_the_lock)
{
    ps_shm_t *ps = ps_new();
    uint64_t head0 = atomic_load(&ps->head);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        /* as if killed mid-copy: the lock taken, bytes half written */
        pidlock_take(&ps->ring_lock);
        atomic_store(&ps->reserved, head0 + 64);
        memset(ps->ring, 0x5a, 32);
        pause();
        _exit(0);
    }
    while (atomic_load(&ps->ring_lock) != pid)
        usleep(1000);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    uint64_t cur = head0;
    char *buf = NULL;
    size_t cap = 0;
    cr_expect_eq(ps_read(ps, &cur, &buf, &cap), 0, "nothing committed");
    /* the next publisher takes the lock over */
    cr_assert_neq(ps_publish(ps, PS_CHANNEL, 0, S("c"), S("m")), 0);
    ps_msg_t h = {0};
    const char *chan = NULL, *msg = NULL;
    cr_expect_eq(read_one(ps, &cur, &buf, &cap, &h, &chan, &msg), 1);
    cr_expect_eq(h.msg_len, 1);
    cr_expect_eq(msg[0], 'm');
    free(buf);
    ps_free(ps);
}
