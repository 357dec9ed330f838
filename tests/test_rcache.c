/*
 * test_rcache.c - unit tests of the read cache (common/rcache.c, D70):
 * fills, absences, invalidation by key and by database, a store's start,
 * a slot a killed store left half written, full buckets (never another
 * key's reply), the marks that tell a read of several keys that one of
 * them moved, replies too large for a slot, and a forked reader that
 * reads while the writer rewrites the same keys (never a torn reply).
 */
#include <criterion/criterion.h>

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rcache.h"

static rcache_t *rc;

static void setup(void)
{
    rc = rcache_create(RCACHE_MIN_BYTES);
    cr_assert_not_null(rc);
}

static void teardown(void)
{
    rcache_destroy(rc);
}

TestSuite(rcache, .init = setup, .fini = teardown, .timeout = 60);

static void fill(unsigned db, const char *key, const char *reply)
{
    rcache_fill(rc, db, key, strlen(key), reply, reply ? strlen(reply) : 0);
}

/* rcache_get of key as a string: its reply, "" when absent, NULL when
 * unknown (a static buffer). */
static const char *get(unsigned db, const char *key)
{
    static unsigned char out[RCACHE_SLOT_BYTES + 1];
    int n = rcache_get(rc, db, key, strlen(key), out, 5000);
    if (n < 0) return NULL;
    out[n] = '\0';
    return (const char *)out;
}

Test(rcache, a_fill_is_found_by_its_key_and_database_only)
{
    cr_assert_eq(rcache_create(RCACHE_MIN_BYTES - 1), NULL);
    cr_assert_null(get(0, "k"));
    fill(0, "k", "$1\r\nv\r\n");
    cr_assert_str_eq(get(0, "k"), "$1\r\nv\r\n");
    cr_assert_null(get(1, "k"));
    cr_assert_null(get(0, "K"));
    cr_assert_null(get(0, "k2"));
    fill(0, "k", "$2\r\nv2\r\n"); /* the key's own slot, rewritten */
    cr_assert_str_eq(get(0, "k"), "$2\r\nv2\r\n");
    fill(3, "gone", NULL);
    cr_assert_str_eq(get(3, "gone"), "");
    cr_assert_null(get(RCACHE_DBS, "k"));
    cr_assert_eq(atomic_load(&rc->fills), 3);
}

Test(rcache, invalidation_by_key_database_and_start)
{
    fill(0, "a", "$1\r\na\r\n");
    fill(0, "b", "$1\r\nb\r\n");
    fill(1, "a", "$2\r\na1\r\n");
    rcache_invalidate(rc, 0, "a", 1);
    cr_assert_null(get(0, "a"));
    cr_assert_str_eq(get(0, "b"), "$1\r\nb\r\n");
    cr_assert_str_eq(get(1, "a"), "$2\r\na1\r\n");
    rcache_invalidate(rc, 0, "never", 5); /* nothing to do */
    rcache_db_changed(rc, 1);
    cr_assert_null(get(1, "a"));
    cr_assert_str_eq(get(0, "b"), "$1\r\nb\r\n");
    fill(1, "a", "$1\r\nx\r\n"); /* filled after the change: current */
    cr_assert_str_eq(get(1, "a"), "$1\r\nx\r\n");
    rcache_store_begin(rc);
    cr_assert_null(get(0, "b"));
    cr_assert_null(get(1, "a"));
}

/* The slot holding key: the one whose key bytes match (test only). */
static rcache_slot_t *slot_of(const char *key)
{
    uint64_t n = rc->nbuckets * RCACHE_WAYS;
    for (uint64_t i = 0; i < n; i++) {
        rcache_slot_t *s = &rc->slots[i];
        if (s->hash && s->klen == strlen(key) && memcmp(s->data, key, s->klen) == 0) return s;
    }
    return NULL;
}

Test(rcache, a_slot_left_half_written_is_skipped_then_repaired)
{
    fill(0, "k", "$1\r\nv\r\n");
    rcache_slot_t *s = slot_of("k");
    cr_assert_not_null(s);
    /* A store killed between the two halves of a write. */
    atomic_fetch_add(&s->seq, 1);
    cr_assert_null(get(0, "k"));
    fill(0, "k", "$1\r\nw\r\n");
    cr_assert_eq(atomic_load(&s->seq) & 1, 0);
    cr_assert_str_eq(get(0, "k"), "$1\r\nw\r\n");
    atomic_fetch_add(&s->seq, 1);
    rcache_invalidate(rc, 0, "k", 1);
    cr_assert_eq(atomic_load(&s->seq) & 1, 0);
    cr_assert_null(get(0, "k"));
}

Test(rcache, full_buckets_never_answer_another_key)
{
    uint64_t slots = rc->nbuckets * RCACHE_WAYS;
    int n = (int)slots * 8, hits = 0;
    char key[32], reply[64];
    for (int i = 0; i < n; i++) {
        snprintf(key, sizeof(key), "key:%d", i);
        snprintf(reply, sizeof(reply), "$%zu\r\n%s\r\n", strlen(key), key);
        fill(0, key, reply);
    }
    for (int i = 0; i < n; i++) {
        snprintf(key, sizeof(key), "key:%d", i);
        snprintf(reply, sizeof(reply), "$%zu\r\n%s\r\n", strlen(key), key);
        const char *r = get(0, key);
        if (!r) continue;
        cr_assert_str_eq(r, reply, "key:%d answered another key's reply", i);
        hits++;
    }
    cr_assert_gt(hits, (int)slots / 2, "only %d of %llu slots kept a key", hits,
                 (unsigned long long)slots);
    cr_assert_leq(hits, (int)slots);
}

Test(rcache, a_read_of_several_keys_knows_when_one_moved)
{
    unsigned char out[RCACHE_SLOT_BYTES];
    rcache_mark_t ma, mb;
    fill(0, "a", "$1\r\n1\r\n");
    fill(0, "b", "$1\r\n1\r\n");
    /* a is read; then a transaction changes a and b, and b is filled
     * again before the reader gets to it: a's mark says so. */
    cr_assert_eq(rcache_get_marked(rc, 0, "a", 1, out, 0, &ma), 7);
    rcache_invalidate(rc, 0, "a", 1);
    rcache_invalidate(rc, 0, "b", 1);
    fill(0, "b", "$1\r\n2\r\n");
    cr_assert_eq(rcache_get_marked(rc, 0, "b", 1, out, 0, &mb), 7);
    cr_assert_not(rcache_unchanged(rc, &ma));
    cr_assert(rcache_unchanged(rc, &mb));
    /* A write that fills the slot again moves it too. */
    cr_assert_eq(rcache_get_marked(rc, 0, "b", 1, out, 0, &mb), 7);
    fill(0, "b", "$1\r\n3\r\n");
    cr_assert_not(rcache_unchanged(rc, &mb));
    /* So does a flush of the database, which touches no slot. */
    cr_assert_eq(rcache_get_marked(rc, 0, "b", 1, out, 0, &mb), 7);
    rcache_db_changed(rc, 0);
    cr_assert_not(rcache_unchanged(rc, &mb));
}

Test(rcache, too_large_for_a_slot_is_not_cached)
{
    static char big[RCACHE_SLOT_BYTES];
    memset(big, 'x', sizeof(big) - 1);
    fill(0, "k", big);
    cr_assert_null(get(0, "k"));
    big[rcache_room() - 1] = '\0'; /* with the one-byte key: exactly full */
    fill(0, "k", big);
    cr_assert_str_eq(get(0, "k"), big);
}

/* A reply that says which key and which version it is, with a check byte,
 * long enough to span several cache lines. */
static size_t versioned(char *out, int key, unsigned version)
{
    char body[300];
    memset(body, 'a' + (int)(version % 26), sizeof(body));
    int n = snprintf(out, 400, "$%zu\r\n%d:%u:", sizeof(body), key, version);
    memcpy(out + n, body, sizeof(body));
    memcpy(out + n + sizeof(body), "\r\n", 2);
    return (size_t)n + sizeof(body) + 2;
}

Test(rcache, a_reader_never_sees_a_torn_reply)
{
    enum { KEYS = 8 };
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        /* The reader: every hit must be one whole reply of its key. */
        unsigned char out[RCACHE_SLOT_BYTES];
        long seen = 0;
        for (long i = 0; i < 3000000 && seen < 200000; i++) {
            int k = (int)(i % KEYS);
            char key[16];
            snprintf(key, sizeof(key), "k%d", k);
            int n = rcache_get(rc, 0, key, strlen(key), out, 0);
            if (n <= 0) continue;
            seen++;
            int rk;
            unsigned v;
            char head[64];
            memcpy(head, out + 6, 40);
            head[40] = '\0';
            if (sscanf(head, "%d:%u:", &rk, &v) != 2 || rk != k) _exit(2);
            char want[400];
            size_t wn = versioned(want, k, v);
            if ((size_t)n != wn || memcmp(out, want, wn) != 0) _exit(3);
        }
        _exit(seen > 0 ? 0 : 4);
    }
    char reply[400];
    int status;
    for (unsigned v = 0;; v++) {
        int k = (int)(v % KEYS);
        char key[16];
        snprintf(key, sizeof(key), "k%d", k);
        size_t n = versioned(reply, k, v);
        rcache_fill(rc, 0, key, strlen(key), reply, n);
        if (v % 7 == 0) rcache_invalidate(rc, 0, key, strlen(key));
        if (waitpid(pid, &status, WNOHANG) == pid) break;
    }
    cr_assert(WIFEXITED(status), "the reader died");
    cr_assert_eq(WEXITSTATUS(status), 0, "the reader saw a torn or foreign reply (%d)",
                 WEXITSTATUS(status));
}
