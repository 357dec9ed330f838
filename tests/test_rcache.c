/*
 * test_rcache.c - unit tests of the read cache (common/rcache.c, D70):
 * fills, absences, invalidation by key and by database, a store's start,
 * a slot a killed store left half written, full buckets (never another
 * key's reply), the marks that tell a read of several keys that one of
 * them moved, replies too large for a slot, and a forked reader that
 * reads while the writer rewrites the same keys (never a torn reply);
 * other reads of a key (D71): the query both sides make, found only by
 * the same key, words and protocol, the big table, every read of a key
 * dropped at its change; a half-full cache keeping nearly every key (D75).
 */
#include <criterion/criterion.h>

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rcache.h"
#include "record.h"

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
    uint64_t n = rc->tab[RCACHE_SMALL].nbuckets * RCACHE_WAYS;
    for (uint64_t i = 0; i < n; i++) {
        rcache_slot_t *s = rcache_slot(rc, RCACHE_SMALL, i);
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

/* Key i's name, and a reply that is its own name as a bulk string. */
static void key_and_reply(int i, char key[32], char reply[64])
{
    snprintf(key, 32, "key:%012d", i);
    snprintf(reply, 64, "$%zu\r\n%s\r\n", strlen(key), key);
}

/* Fill keys 0 .. n-1 (key_and_reply) in database 0. */
static void fill_keys(int n)
{
    char key[32], reply[64];
    for (int i = 0; i < n; i++) {
        key_and_reply(i, key, reply);
        fill(0, key, reply);
    }
}

Test(rcache, full_buckets_never_answer_another_key)
{
    uint64_t slots = rc->tab[RCACHE_SMALL].nbuckets * RCACHE_WAYS;
    int n = (int)slots * 8, hits = 0;
    char key[32], reply[64];
    fill_keys(n);
    for (int i = 0; i < n; i++) {
        key_and_reply(i, key, reply);
        const char *r = get(0, key);
        if (!r) continue;
        cr_assert_str_eq(r, reply, "key:%d answered another key's reply", i);
        hits++;
    }
    cr_assert_gt(hits, (int)slots / 2, "only %d of %llu slots kept a key", hits,
                 (unsigned long long)slots);
    cr_assert_leq(hits, (int)slots);
}

/* D75: with 16 ways behind one tag line, a cache filled to half its
 * slots keeps nearly every key (with 4 ways, about 4% of the keys share a
 * bucket with four others and are evicted by them, then read from the
 * store and filled again, in turn). */
Test(rcache, a_half_full_cache_keeps_nearly_every_key)
{
    rcache_t *small = rc;
    rc = rcache_create(8u << 20);
    cr_assert_not_null(rc);
    uint64_t slots = rc->tab[RCACHE_SMALL].nbuckets * RCACHE_WAYS;
    int n = (int)(slots / 2), lost = 0;
    char key[32], reply[64];
    fill_keys(n);
    for (int i = 0; i < n; i++) {
        key_and_reply(i, key, reply);
        const char *r = get(0, key);
        if (!r)
            lost++;
        else
            cr_assert_str_eq(r, reply);
    }
    cr_assert_leq(lost, n / 200, "%d of %d keys evicted at half the slots", lost, n);
    /* Every one of them is dropped by its change, found through the tags. */
    for (int i = 0; i < n; i++) {
        snprintf(key, sizeof(key), "key:%012d", i);
        rcache_invalidate(rc, 0, key, strlen(key));
        cr_assert_null(get(0, key));
    }
    cr_assert_eq(atomic_load(&rc->invalidations), (uint64_t)(n - lost));
    rcache_destroy(rc);
    rc = small;
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

/* ---- other reads of one key (D71) ---- */

/* The query of "CMD key words..." in protocol proto, as a frontend makes it. */
static size_t query_of(unsigned char *q, int proto, unsigned op, int n, const char *const *words)
{
    uint32_t lens[8];
    for (int i = 0; i < n; i++)
        lens[i] = (uint32_t)strlen(words[i]);
    return rcache_query(q, RCACHE_QUERY_MAX, proto, op, n, (const unsigned char *const *)words,
                        lens);
}

Test(rcache, the_store_and_a_frontend_make_the_same_query)
{
    const char *argv[] = {"mylist", "0", "99"};
    uint32_t lens[] = {6, 1, 2};
    unsigned char payload[128], a[RCACHE_QUERY_MAX], b[RCACHE_QUERY_MAX];
    size_t n = rec_encode_payload(payload, 149, 3, (const unsigned char *const *)argv, lens);
    size_t at = 4 + 4 + 6; /* the op and count, then the key's length and bytes */
    size_t qa = rcache_query_tail(a, sizeof(a), 3, 149, payload + at, n - at);
    size_t qb = query_of(b, 3, 149, 2, argv + 1);
    cr_assert_gt(qa, 2);
    cr_assert_eq(qa, qb);
    cr_assert_eq(memcmp(a, b, qa), 0);
    /* The protocol and the command are part of it. */
    cr_assert_neq(memcmp(a, b, query_of(b, 2, 149, 2, argv + 1)), 0);
    cr_assert_neq(memcmp(a, b, query_of(b, 3, 150, 2, argv + 1)), 0);
    /* Too long for the buffer: none. */
    static char big[RCACHE_QUERY_MAX];
    memset(big, 'w', sizeof(big) - 1);
    const char *words[] = {big};
    cr_assert_eq(query_of(b, 2, 149, 1, words), 0);
}

static void fill_q(unsigned db, const char *key, const unsigned char *q, size_t qn,
                   const char *reply)
{
    rcache_fill_query(rc, db, key, strlen(key), q, qn, reply, strlen(reply));
}

static const char *get_q(unsigned db, const char *key, const unsigned char *q, size_t qn)
{
    static unsigned char out[RCACHE_BIG_SLOT_BYTES + 1];
    int n = rcache_get_query(rc, db, key, strlen(key), q, qn, out, 5000);
    if (n < 0) return NULL;
    out[n] = '\0';
    return (const char *)out;
}

Test(rcache, a_read_is_found_by_its_key_words_and_protocol)
{
    const char *w1[] = {"0", "-1"}, *w2[] = {"0", "1"};
    unsigned char q1[RCACHE_QUERY_MAX], q2[RCACHE_QUERY_MAX], q3[RCACHE_QUERY_MAX];
    size_t n1 = query_of(q1, 2, 149, 2, w1), n2 = query_of(q2, 2, 149, 2, w2),
           n3 = query_of(q3, 3, 149, 2, w1);
    fill_q(0, "l", q1, n1, "*2\r\n$1\r\na\r\n$1\r\nb\r\n");
    fill_q(0, "l", q2, n2, "*1\r\n$1\r\na\r\n");
    cr_assert_str_eq(get_q(0, "l", q1, n1), "*2\r\n$1\r\na\r\n$1\r\nb\r\n");
    cr_assert_str_eq(get_q(0, "l", q2, n2), "*1\r\n$1\r\na\r\n");
    cr_assert_null(get_q(0, "l", q3, n3)); /* RESP3: another query */
    cr_assert_null(get_q(1, "l", q1, n1));
    cr_assert_null(get_q(0, "l2", q1, n1));
    cr_assert_null(get(0, "l")); /* GET's reply is not a query's */
    /* A reply too large for a small slot is kept in the big table; one
     * too large for that is not kept. */
    static char reply[RCACHE_BIG_SLOT_BYTES];
    memset(reply, 'r', 1500);
    reply[1500] = '\0';
    fill_q(0, "l", q3, n3, reply);
    cr_assert_str_eq(get_q(0, "l", q3, n3), reply);
    memset(reply, 's', sizeof(reply) - 1);
    fill_q(0, "big", q1, n1, reply);
    cr_assert_null(get_q(0, "big", q1, n1));
    /* A change of the key drops every read of it, in both tables. */
    fill(0, "l", "$1\r\nv\r\n");
    cr_assert_eq(rcache_invalidate(rc, 0, "l", 1), 1);
    cr_assert_null(get_q(0, "l", q1, n1));
    cr_assert_null(get_q(0, "l", q2, n2));
    cr_assert_null(get_q(0, "l", q3, n3));
    cr_assert_null(get(0, "l"));
    cr_assert_eq(rcache_invalidate(rc, 0, "l", 1), 0);
    /* So does a change of its database. */
    fill_q(0, "l", q3, n3, reply + sizeof(reply) - 1501);
    cr_assert_not_null(get_q(0, "l", q3, n3));
    rcache_db_changed(rc, 0);
    cr_assert_null(get_q(0, "l", q3, n3));
}

Test(rcache, idle_time_counts_hits_of_every_read_of_a_key)
{
    const char *w[] = {"f"};
    unsigned char q[RCACHE_QUERY_MAX];
    size_t n = query_of(q, 2, 102, 1, w);
    fill_q(0, "h", q, n, "$1\r\nv\r\n");
    fill(0, "s", "$1\r\nv\r\n");
    cr_assert_eq(rcache_hit_ms(rc, 0, "h", 1), 0);
    unsigned char out[RCACHE_BIG_SLOT_BYTES];
    cr_assert_eq(rcache_get_query(rc, 0, "h", 1, q, n, out, 7000), 7);
    cr_assert_eq(rcache_hit_ms(rc, 0, "h", 1), 7000);
    cr_assert_eq(rcache_hit_ms(rc, 0, "s", 1), 0);
}
