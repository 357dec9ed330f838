/*
 * test_paged.c - large hashes and sets on disk (D60), on the real server:
 * a hash and a set far past collection-paging-entries are written
 * beside a real redis-server and compared reply for reply (HGETALL,
 * HSCAN, SMEMBERS, SSCAN, HLEN, point reads) while the store pages them;
 * they survive SIGKILL of the whole group, restarts from checkpoints, and
 * the store killed at each step of paging (fault points "pagein",
 * "pagewritten", "paged"), with every acknowledged write read back and the
 * same DEBUG DIGEST before and after; compaction rewrites old pages so
 * that the log's first segments go.
 */
#include <criterion/criterion.h>
#include <hiredis/hiredis.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "redis_diff.h"

#define ARGS                                                                                       \
    "--frontends 2 --collection-paging-entries 500 --collection-page-size 1kb "                    \
    "--segment-size 1mb --ring-size 256kb --checkpoint-bytes 512kb"

TestSuite(paged, .timeout = 600);

#define NF 6000

/* The model: field i's value (0 = absent), a counter that names it. */
static int hval[NF], sval[NF];

static void reset_model(void)
{
    memset(hval, 0, sizeof(hval));
    memset(sval, 0, sizeof(sval));
}

/* Field values: the counter, padded to 9..105 bytes (some inline, most in
 * the log). */
static void value_of(int v, char *out, size_t n)
{
    snprintf(out, n, "value-%d-%0*d", v, v % 97 + 1, 0);
}

/* Pipelined writes of both the hash and the set, `rounds` x 500 each, to
 * c (and to r, redis-server, when not NULL): HSET / HDEL / SADD / SREM at
 * random, seeded. Every reply must be OK-shaped; the model follows. */
static void write_random(redisContext *c, redisContext *r, unsigned seed, int rounds)
{
    srand(seed);
    for (int round = 0; round < rounds; round++) {
        int n = 500;
        int ops[500], fs[500], vs[500];
        for (int i = 0; i < n; i++) {
            ops[i] = rand() % 10;
            fs[i] = rand() % NF;
            vs[i] = 1 + rand() % 1000000;
            for (int side = 0; side < 2; side++) {
                redisContext *x = side ? r : c;
                if (!x) continue;
                char v[160];
                value_of(vs[i], v, sizeof(v));
                if (ops[i] < 5)
                    redisAppendCommand(x, "HSET h field:%d %s", fs[i], v);
                else if (ops[i] < 6)
                    redisAppendCommand(x, "HDEL h field:%d", fs[i]);
                else if (ops[i] < 9)
                    redisAppendCommand(x, "SADD s member:%d", fs[i]);
                else
                    redisAppendCommand(x, "SREM s member:%d", fs[i]);
            }
        }
        for (int side = 0; side < 2; side++) {
            redisContext *x = side ? r : c;
            if (!x) continue;
            for (int i = 0; i < n; i++) {
                redisReply *rep;
                cr_assert_eq(redisGetReply(x, (void **)&rep), REDIS_OK, "reply");
                cr_assert_eq(rep->type, REDIS_REPLY_INTEGER, "%s", rep->str ? rep->str : "");
                freeReplyObject(rep);
            }
        }
        for (int i = 0; i < n; i++) {
            if (ops[i] < 5)
                hval[fs[i]] = vs[i];
            else if (ops[i] < 6)
                hval[fs[i]] = 0;
            else if (ops[i] < 9)
                sval[fs[i]] = 1;
            else
                sval[fs[i]] = 0;
        }
    }
}

static long long integer(redisContext *c, const char *cmd)
{
    redisReply *r = redisCommand(c, cmd);
    cr_assert(r && r->type == REDIS_REPLY_INTEGER, "%s: %s", cmd, r && r->str ? r->str : "");
    long long v = r->integer;
    freeReplyObject(r);
    return v;
}

/* DEBUG PAGED's figures: paged, ranges, pages, page bytes, overlay, pinned, members. */
static void paged_stats(redisContext *c, const char *key, long long out[7])
{
    redisReply *r = redisCommand(c, "DEBUG PAGED %s", key);
    cr_assert(r && r->type == REDIS_REPLY_ARRAY && r->elements == 7, "DEBUG PAGED %s", key);
    for (int i = 0; i < 7; i++)
        out[i] = r->element[i]->integer;
    freeReplyObject(r);
}

/* Wait until both collections are paged, their RAM part (the overlay)
 * within the pager's bound: 1024 entries or a 32nd of the members
 * (store/pager.c, D60). */
static void wait_paged(redisContext *c)
{
    const char *keys[2] = {"h", "s"};
    for (int k = 0; k < 2; k++) {
        long long st[7] = {0};
        time_t deadline = time(NULL) + 60;
        do {
            paged_stats(c, keys[k], st);
            if (st[0] && st[2] && st[4] <= 1024 + st[6] / 32) break;
            usleep(20000);
        } while (time(NULL) < deadline);
        cr_assert(st[0] && st[2], "%s paged: %lld pages", keys[k], st[2]);
        cr_assert_leq(st[4], 1024 + st[6] / 32, "%s: %lld of %lld members still in RAM", keys[k],
                      st[4], st[6]);
    }
}

/* The model read back: HLEN, SCARD, every field's value, every member. */
static void expect_model(redisContext *c, const char *when)
{
    long hn = 0, sn = 0;
    for (int i = 0; i < NF; i++) {
        hn += hval[i] != 0;
        sn += sval[i] != 0;
    }
    cr_assert_eq(integer(c, "HLEN h"), hn, "%s: HLEN", when);
    cr_assert_eq(integer(c, "SCARD s"), sn, "%s: SCARD", when);
    for (int i = 0; i < NF; i += 1) {
        redisAppendCommand(c, "HGET h field:%d", i);
        redisAppendCommand(c, "SISMEMBER s member:%d", i);
    }
    for (int i = 0; i < NF; i++) {
        redisReply *r;
        cr_assert_eq(redisGetReply(c, (void **)&r), REDIS_OK);
        if (!hval[i]) {
            cr_assert_eq(r->type, REDIS_REPLY_NIL, "%s: field:%d should be gone", when, i);
        } else {
            char want[160];
            value_of(hval[i], want, sizeof(want));
            cr_assert(r->type == REDIS_REPLY_STRING && strcmp(r->str, want) == 0,
                      "%s: field:%d is %s, not %s", when, i, r->str ? r->str : "(nil)", want);
        }
        freeReplyObject(r);
        cr_assert_eq(redisGetReply(c, (void **)&r), REDIS_OK);
        cr_assert_eq(r->integer, sval[i], "%s: member:%d", when, i);
        freeReplyObject(r);
    }
}

static void digest(redisContext *c, char out[64])
{
    redisReply *r = redisCommand(c, "DEBUG DIGEST");
    cr_assert(r && r->type == REDIS_REPLY_STATUS, "DEBUG DIGEST");
    snprintf(out, 64, "%s", r->str);
    freeReplyObject(r);
}

/* A reply's elements, sorted (a multiset as text). */
static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static char **sorted_elements(redisReply *r, size_t step, size_t *n)
{
    *n = r->elements / step;
    char **v = malloc((*n + 1) * sizeof(*v));
    for (size_t i = 0; i < *n; i++) {
        const redisReply *k = r->element[i * step];
        size_t len = strlen(k->str) + (step == 2 ? strlen(r->element[i * 2 + 1]->str) : 0) + 2;
        v[i] = malloc(len);
        snprintf(v[i], len, "%s=%s", k->str, step == 2 ? r->element[i * 2 + 1]->str : "");
    }
    qsort(v, *n, sizeof(*v), cmp_str);
    return v;
}

/* The same elements from a's cmd and b's cmd_b (any order). */
static void same_elements_of(redisContext *a, const char *cmd, redisContext *b, const char *cmd_b,
                             size_t step)
{
    redisReply *x = redisCommand(a, cmd), *y = redisCommand(b, cmd_b);
    cr_assert(x && y && x->type == REDIS_REPLY_ARRAY && y->type == REDIS_REPLY_ARRAY, "%s", cmd);
    size_t nx, ny;
    char **vx = sorted_elements(x, step, &nx), **vy = sorted_elements(y, step, &ny);
    cr_assert_eq(nx, ny, "%s: %zu vs %zu elements", cmd, nx, ny);
    for (size_t i = 0; i < nx; i++) {
        cr_assert_str_eq(vx[i], vy[i], "%s", cmd);
        free(vx[i]);
        free(vy[i]);
    }
    free(vx);
    free(vy);
    freeReplyObject(x);
    freeReplyObject(y);
}

/* The same elements from both servers (any order). */
static void same_elements(redisContext *a, redisContext *b, const char *cmd, size_t step)
{
    same_elements_of(a, cmd, b, cmd, step);
}

/* A whole SCAN-family iteration returns every member of the model. */
static void whole_scan(redisContext *c, const char *cmd, const char *key, int hash)
{
    static char seen[NF];
    memset(seen, 0, sizeof(seen));
    unsigned long long cursor = 0;
    int calls = 0;
    do {
        redisReply *r = redisCommand(c, "%s %s %llu COUNT 50", cmd, key, cursor);
        cr_assert(r && r->type == REDIS_REPLY_ARRAY && r->elements == 2, "%s %llu: %s", cmd, cursor,
                  r && r->str ? r->str : "");
        cursor = strtoull(r->element[0]->str, NULL, 10);
        redisReply *el = r->element[1];
        for (size_t i = 0; i < el->elements; i += hash ? 2 : 1) {
            int f = atoi(strchr(el->element[i]->str, ':') + 1);
            seen[f] = 1;
        }
        freeReplyObject(r);
        cr_assert_lt(++calls, 100000, "%s does not end", cmd);
    } while (cursor);
    for (int i = 0; i < NF; i++)
        cr_assert(!(hash ? hval[i] : sval[i]) || seen[i], "%s missed %d", cmd, i);
}

Test(paged, large_collections_match_redis_while_paged)
{
    reset_model();
    srv_t s;
    wire_redis_t ref;
    cr_assert_eq(srv_start(&s, ARGS), 0);
    cr_assert_eq(wire_redis_start(&ref, NULL), 0, "redis-server did not start");
    redisContext *c = srv_connect(&s), *r = redisConnect("127.0.0.1", ref.port);
    cr_assert(c && r && !r->err);
    write_random(c, r, 7, 40);
    wait_paged(c);
    write_random(c, r, 8, 10); /* changes over pages: the overlay */
    same_elements(c, r, "HGETALL h", 2);
    same_elements(c, r, "SMEMBERS s", 1);
    same_elements(c, r, "HKEYS h", 1);
    same_elements(c, r, "SINTER s", 1);
    cr_assert_eq(integer(c, "HLEN h"), integer(r, "HLEN h"));
    cr_assert_eq(integer(c, "SCARD s"), integer(r, "SCARD s"));
    cr_assert_eq(integer(c, "HSTRLEN h field:17"), integer(r, "HSTRLEN h field:17"));
    whole_scan(c, "HSCAN", "h", 1);
    whole_scan(c, "SSCAN", "s", 0);
    expect_model(c, "live");
    /* SPOP from the paged set: distinct members it had, removed (the same
     * removed from redis-server keeps the two equal). */
    redisReply *p = redisCommand(c, "SPOP s 50");
    cr_assert(p && p->type == REDIS_REPLY_ARRAY && p->elements == 50);
    for (size_t i = 0; i < p->elements; i++) {
        int f = atoi(strchr(p->element[i]->str, ':') + 1);
        cr_assert(sval[f], "SPOP gave member:%d, which the set did not have", f);
        sval[f] = 0;
        freeReplyObject(redisCommand(r, "SREM s %s", p->element[i]->str));
    }
    freeReplyObject(p);
    same_elements(c, r, "SMEMBERS s", 1);
    /* HRANDFIELD / SRANDMEMBER: distinct fields that exist. */
    p = redisCommand(c, "HRANDFIELD h 100");
    cr_assert(p && p->type == REDIS_REPLY_ARRAY && p->elements == 100);
    for (size_t i = 0; i < p->elements; i++)
        cr_assert(hval[atoi(strchr(p->element[i]->str, ':') + 1)], "HRANDFIELD: %s",
                  p->element[i]->str);
    freeReplyObject(p);
    /* DUMP of a paged hash restores into redis-server equal. */
    redisReply *d = redisCommand(c, "DUMP h");
    cr_assert(d && d->type == REDIS_REPLY_STRING);
    redisReply *ok = redisCommand(r, "RESTORE h2 0 %b", d->str, d->len);
    cr_assert(ok && ok->type == REDIS_REPLY_STATUS, "RESTORE: %s", ok ? ok->str : "");
    freeReplyObject(ok);
    freeReplyObject(d);
    same_elements_of(c, "HGETALL h", r, "HGETALL h2", 2);
    cr_assert_eq(integer(r, "HLEN h2"), integer(c, "HLEN h"));
    /* COPY of a paged hash: an equal, separate hash. */
    cr_assert_eq(integer(c, "COPY h hcopy"), 1);
    same_elements_of(c, "HGETALL hcopy", r, "HGETALL h", 2);
    cr_assert_eq(integer(c, "HDEL hcopy field:1 field:2 field:3 field:4 field:5") >= 0, 1);
    expect_model(c, "after COPY");
    redisFree(c);
    redisFree(r);
    wire_redis_stop(&ref);
    cr_assert_eq(srv_stop(&s), 0);
    srv_cleanup(&s);
}

/* SIGKILL of the whole group, a restart: the same DEBUG DIGEST and the
 * model read back; *c is the new connection. */
static void kill_restart_same(srv_t *s, redisContext **c, const char *what)
{
    char d1[64], d2[64];
    digest(*c, d1);
    redisFree(*c);
    srv_kill_all(s);
    cr_assert_eq(srv_restart(s), 0);
    *c = srv_connect(s);
    cr_assert(*c);
    digest(*c, d2);
    cr_assert_str_eq(d1, d2, "%s: the same state after SIGKILL and a restart", what);
    expect_model(*c, what);
}

Test(paged, paged_collections_survive_sigkill_and_checkpoints)
{
    reset_model();
    srv_t s;
    cr_assert_eq(srv_start(&s, ARGS), 0);
    redisContext *c = srv_connect(&s);
    write_random(c, NULL, 11, 40);
    wait_paged(c);
    write_random(c, NULL, 12, 6);
    kill_restart_same(&s, &c, "SIGKILL of the group");
    long long st[7];
    paged_stats(c, "h", st);
    cr_assert(st[0], "still paged after the restart");
    /* Many more writes: checkpoints come and go, compaction rewrites old
     * pages and the log's first segments are deleted. */
    for (int i = 0; i < 12; i++)
        write_random(c, NULL, 100 + (unsigned)i, 10);
    char d1[64], d2[64];
    digest(c, d1);
    redisFree(c);
    cr_assert_eq(srv_stop(&s), 0); /* a clean stop writes a checkpoint */
    cr_assert_eq(srv_restart(&s), 0);
    c = srv_connect(&s);
    digest(c, d2);
    cr_assert_str_eq(d1, d2, "clean restart from a checkpoint: the same state");
    expect_model(c, "after a clean restart");
    cr_assert(srv_log_contains(&s, "store: loaded checkpoint", NULL) ||
                  srv_log_contains(&s, "checkpoint at LSN", NULL),
              "a checkpoint was used");
    redisFree(c);
    cr_assert_eq(srv_stop(&s), 0);
    char out[8192];
    cr_assert_eq(srv_run_tool("atticdb-check", s.dir, out, sizeof(out)), 0, "%s", out);
    srv_cleanup(&s);
}

/* HGETALL and SMEMBERS of paged collections go in parts (D60): 40,000
 * fields of 200 bytes (an 8.6 MB reply, parts of at most 1 MB). A client
 * that asks and does not read while another writes gets the collection as
 * it was when asked (a snapshot), whatever the writes between its parts. */
Test(paged, large_replies_go_in_parts_as_of_the_request)
{
    srv_t s;
    cr_assert_eq(srv_start(&s, ARGS), 0);
    redisContext *c = srv_connect(&s), *w = srv_connect(&s);
    cr_assert(c && w);
    enum { N = 40000 };
    char v[201];
    memset(v, 'v', 200);
    v[200] = 0;
    for (int i = 0; i < N; i++) {
        redisAppendCommand(c, "HSET big f:%06d %s", i, v);
        redisAppendCommand(c, "SADD bigset m:%06d", i);
    }
    for (int i = 0; i < 2 * N; i++) {
        redisReply *r;
        cr_assert_eq(redisGetReply(c, (void **)&r), REDIS_OK);
        freeReplyObject(r);
    }
    long long st[7];
    for (int i = 0; i < 600; i++) {
        paged_stats(c, "big", st);
        if (st[0] && st[4] <= 1024 + st[6] / 32) break;
        usleep(20000);
    }
    cr_assert(st[0], "the hash is paged");
    /* Ask, then change everything before reading the answer. */
    redisAppendCommand(c, "HGETALL big");
    redisAppendCommand(c, "SMEMBERS bigset");
    int done = 0;
    while (!done)
        cr_assert_eq(redisBufferWrite(c, &done), REDIS_OK);
    usleep(200000);
    for (int i = 0; i < N; i += 2) {
        redisAppendCommand(w, "HDEL big f:%06d", i);
        redisAppendCommand(w, "SREM bigset m:%06d", i);
        redisAppendCommand(w, "HSET big new:%06d x", i);
    }
    for (int i = 0; i < 3 * (N / 2); i++) {
        redisReply *r;
        cr_assert_eq(redisGetReply(w, (void **)&r), REDIS_OK);
        freeReplyObject(r);
    }
    redisReply *h, *m;
    cr_assert_eq(redisGetReply(c, (void **)&h), REDIS_OK);
    cr_assert_eq(redisGetReply(c, (void **)&m), REDIS_OK);
    cr_assert_eq(h->type, REDIS_REPLY_ARRAY);
    cr_assert_eq(h->elements, 2 * (size_t)N, "HGETALL: the hash as it was asked for");
    static char seen[N];
    memset(seen, 0, sizeof(seen));
    for (size_t i = 0; i < h->elements; i += 2) {
        cr_assert_eq(strncmp(h->element[i]->str, "f:", 2), 0, "%s", h->element[i]->str);
        int k = atoi(h->element[i]->str + 2);
        cr_assert(k >= 0 && k < N && !seen[k], "field %s once", h->element[i]->str);
        seen[k] = 1;
        cr_assert_str_eq(h->element[i + 1]->str, v);
    }
    cr_assert_eq(m->elements, (size_t)N, "SMEMBERS: the set as it was asked for");
    freeReplyObject(h);
    freeReplyObject(m);
    /* And now the writes are there. */
    cr_assert_eq(integer(c, "HLEN big"), N);
    cr_assert_eq(integer(c, "SCARD bigset"), N / 2);
    redisFree(c);
    redisFree(w);
    cr_assert_eq(srv_stop(&s), 0);
    srv_cleanup(&s);
}

/* INFO's atticdb_log_start_lsn: the first LSN still on disk. */
static long long log_start(redisContext *c)
{
    redisReply *r = redisCommand(c, "INFO persistence");
    cr_assert(r && r->type == REDIS_REPLY_STRING);
    const char *p = strstr(r->str, "atticdb_log_start_lsn:");
    cr_assert(p, "INFO has atticdb_log_start_lsn");
    long long v = atoll(p + strlen("atticdb_log_start_lsn:"));
    freeReplyObject(r);
    return v;
}

/* A paged hash written once and then left alone pins the segments its
 * pages are in: compaction's pass has the pager rewrite them at the log's
 * head (D60), so the log's first segments go while overwrites of other
 * keys churn the log, and the hash reads back whole. */
Test(paged, compaction_moves_a_cold_paged_hashs_pages)
{
    reset_model();
    srv_t s;
    cr_assert_eq(srv_start(&s, ARGS), 0);
    redisContext *c = srv_connect(&s);
    write_random(c, NULL, 21, 12); /* h and s, paged, then cold */
    wait_paged(c);
    char v[257];
    memset(v, 'x', 256);
    v[256] = 0;
    long long start = log_start(c);
    time_t deadline = time(NULL) + 90;
    while (log_start(c) < 4 * (1 << 20) && time(NULL) < deadline) {
        for (int i = 0; i < 200; i++)
            redisAppendCommand(c, "SET churn:%d %s", i % 50, v);
        for (int i = 0; i < 200; i++) {
            redisReply *r;
            cr_assert_eq(redisGetReply(c, (void **)&r), REDIS_OK);
            freeReplyObject(r);
        }
        usleep(10000); /* the store's compaction and pager get their turns */
    }
    cr_assert_geq(log_start(c), 4 * (1 << 20),
                  "segments were deleted under the cold hash's pages"
                  " (the log started at %lld)",
                  start);
    expect_model(c, "after compaction");
    kill_restart_same(&s, &c, "compaction, then SIGKILL");
    redisFree(c);
    cr_assert_eq(srv_stop(&s), 0);
    srv_cleanup(&s);
}

/* The store killed at one step of paging; the respawned store finishes. */
static void killed_at(const char *fault)
{
    reset_model();
    srv_t s;
    cr_assert_eq(srv_start_faults(&s, fault, ARGS), 0, "%s", fault);
    redisContext *c = srv_connect(&s);
    for (int i = 0; i < 60 && !srv_log_contains(&s, "killed by signal 9", "store"); i++) {
        /* A write cut by the kill is retried on a new connection. */
        if (c->err) {
            redisFree(c);
            c = srv_connect(&s);
            cr_assert(c);
        }
        write_random(c, NULL, 300 + (unsigned)i, 4);
    }
    cr_assert(srv_log_contains(&s, "killed by signal 9", "store"), "%s: the store was killed",
              fault);
    redisFree(c);
    c = srv_connect(&s);
    wait_paged(c);
    expect_model(c, fault);
    kill_restart_same(&s, &c, fault);
    redisFree(c);
    cr_assert_eq(srv_stop(&s), 0);
    srv_cleanup(&s);
}

Test(paged, store_killed_as_a_collection_becomes_paged)
{
    killed_at("store.pagein:1:KILL");
}

Test(paged, store_killed_with_a_page_record_in_the_ring)
{
    killed_at("store.pagewritten:5:KILL");
}

Test(paged, store_killed_after_applying_a_page_record)
{
    killed_at("store.paged:7:KILL");
}
