/*
 * test_bigvalues.c - values larger than one log record (D31) with the real
 * server: SET and GET of 10 MB and 100 MB values byte for byte (hiredis
 * and redis-cli), the SET variants and APPEND across the record limit,
 * and a crash at each step of a large write: the frontend killed after a
 * chunk and before the final, the store killed while applying the chunks,
 * the logger killed during the write. After each: the old value whole if
 * the write was not acknowledged, the new one whole if it was, the parts
 * of an abandoned write no longer counted live, and a restart (clean or
 * SIGKILL of the whole group) reaching the same DEBUG DIGEST. With small
 * segments and frequent checkpoints, compaction and checkpoints run while
 * a large value is present and it reads back after every restart.
 *
 * The ring is 1 MB in most tests (a record holds at most 256 KB), so a few
 * MB make dozens of chunks; the disk written stays about 250 MB in all.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

TestSuite(bigvalues, .fini = srv_cleanup_all, .timeout = 600);

#define SMALL_RING "--frontends 1 --ring-size 1mb --segment-size 16mb"
#define MB         (1u << 20)

/* A value of n bytes that differs with seed and with every offset (a
 * piece out of place or a chunk twice changes it). */
static char *pattern(size_t n, unsigned seed)
{
    char *p = malloc(n);
    cr_assert_not_null(p);
    uint32_t x = 2463534242u ^ seed;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        p[i] = (char)x;
    }
    return p;
}

/* A connection with room for slow 100 MB round trips. */
static redisContext *conn(const srv_t *s)
{
    redisContext *c = srv_connect(s);
    cr_assert_not_null(c, "connect: %s", s->log);
    struct timeval tv = {120, 0};
    redisSetTimeout(c, tv);
    return c;
}

static void expect_status(redisContext *c, redisReply *r, const char *want, const char *what)
{
    cr_assert_not_null(r, "%s: no reply (%s)", what, c->errstr);
    cr_assert_eq(r->type, REDIS_REPLY_STATUS, "%s: type %d %s", what, r->type,
                 r->type == REDIS_REPLY_ERROR ? r->str : "");
    cr_assert_str_eq(r->str, want, "%s", what);
    freeReplyObject(r);
}

/* The reply of fmt, which must be of this type. */
static redisReply *typed_reply(redisContext *c, int type, const char *what, const char *fmt,
                               va_list ap)
{
    redisReply *r = redisvCommand(c, fmt, ap);
    cr_assert_not_null(r, "%s: no reply (%s)", what, c->errstr);
    cr_assert_eq(r->type, type, "%s: type %d %s", what, r->type,
                 r->type == REDIS_REPLY_ERROR ? r->str : "");
    return r;
}

static long long integer(redisContext *c, const char *what, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    redisReply *r = typed_reply(c, REDIS_REPLY_INTEGER, what, fmt, ap);
    va_end(ap);
    long long v = r->integer;
    freeReplyObject(r);
    return v;
}

/* The reply of fmt is the bulk string v[0, n). */
static void expect_bulk(redisContext *c, const char *v, size_t n, const char *what, const char *fmt,
                        ...)
{
    va_list ap;
    va_start(ap, fmt);
    redisReply *r = typed_reply(c, REDIS_REPLY_STRING, what, fmt, ap);
    va_end(ap);
    cr_assert_eq(r->len, n, "%s: %zu bytes, want %zu", what, r->len, n);
    cr_assert(memcmp(r->str, v, n) == 0, "%s: the bytes differ", what);
    freeReplyObject(r);
}

/* GET key is exactly v[0, n). */
static void expect_value(redisContext *c, const char *key, const char *v, size_t n,
                         const char *what)
{
    expect_bulk(c, v, n, what, "GET %s", key);
}

static void digest(const srv_t *s, char out[64])
{
    redisContext *c = conn(s);
    redisReply *r = redisCommand(c, "DEBUG DIGEST");
    cr_assert_not_null(r);
    cr_assert_eq(r->type, REDIS_REPLY_STATUS, "DEBUG DIGEST: %s", r->str);
    snprintf(out, 64, "%s", r->str);
    freeReplyObject(r);
    redisFree(c);
}

/* DEBUG SEGMENTS: the live table agrees with a recount; the live total. */
static long long live_total(const srv_t *s, const char *what)
{
    redisContext *c = conn(s);
    redisReply *r = redisCommand(c, "DEBUG SEGMENTS");
    cr_assert_not_null(r);
    cr_assert_eq(r->type, REDIS_REPLY_ARRAY, "%s: DEBUG SEGMENTS: %s", what, r->str);
    cr_assert_eq(r->element[0]->integer, 1, "%s: the live table disagrees with a recount", what);
    long long total = r->element[1]->integer;
    freeReplyObject(r);
    redisFree(c);
    return total;
}

/* Restart after a clean stop and after SIGKILL of the whole group: the
 * same digest each time. */
static void restarts_keep(srv_t *s, const char *what)
{
    char before[64], after[64];
    digest(s, before);
    cr_assert_eq(srv_stop(s), 0, "%s: clean stop", what);
    cr_assert_eq(srv_restart(s), 0, "%s: restart", what);
    digest(s, after);
    cr_assert_str_eq(after, before, "%s: digest after a clean restart", what);
    srv_kill_all(s);
    cr_assert_eq(srv_restart(s), 0, "%s: restart after SIGKILL", what);
    digest(s, after);
    cr_assert_str_eq(after, before, "%s: digest after SIGKILL and restart", what);
    live_total(s, what);
}

/* A server with a 1 MB ring (records of at most 256 KB), and a connection. */
static redisContext *start_small(srv_t *s)
{
    cr_assert_eq(srv_start(s, SMALL_RING), 0);
    return conn(s);
}

/* Stop and remove s. */
static void finish(srv_t *s)
{
    srv_kill_all(s);
    srv_cleanup(s);
}

Test(bigvalues, set_get_10mb_and_100mb)
{
    srv_t s;
    redisContext *c = start_small(&s);
    size_t n10 = 10 * MB, n100 = 100 * MB;
    char *v10 = pattern(n10, 10), *v100 = pattern(n100, 100);
    expect_status(c, redisCommand(c, "SET k10 %b", v10, n10), "OK", "SET 10 MB");
    expect_value(c, "k10", v10, n10, "10 MB");
    expect_status(c, redisCommand(c, "SET k100 %b", v100, n100), "OK", "SET 100 MB");
    expect_value(c, "k100", v100, n100, "100 MB");
    cr_assert_eq(integer(c, "STRLEN", "STRLEN k100"), (long long)n100);
    redisReply *r = redisCommand(c, "GETRANGE k100 %d %d", (int)(n100 - 5), -1);
    cr_assert_eq(r->len, 5);
    cr_assert(memcmp(r->str, v100 + n100 - 5, 5) == 0, "GETRANGE of the last part");
    freeReplyObject(r);
    /* A part boundary inside: 256 KB records hold less than 256 KB each. */
    r = redisCommand(c, "GETRANGE k10 %d %d", 250000, 270000);
    cr_assert_eq(r->len, 20001);
    cr_assert(memcmp(r->str, v10 + 250000, 20001) == 0, "GETRANGE across parts");
    freeReplyObject(r);
    r = redisCommand(c, "OBJECT ENCODING k10");
    cr_assert_str_eq(r->str, "raw");
    freeReplyObject(r);
    redisFree(c);
    free(v100);

    /* redis-cli, both ways: -x sends a file's bytes as the last argument. */
    char file[400], got[400], cmdline[1200];
    snprintf(file, sizeof(file), "%s/v10.bin", s.dir);
    snprintf(got, sizeof(got), "%s/got.bin", s.dir);
    FILE *f = fopen(file, "w");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(v10, 1, n10, f), n10);
    fclose(f);
    snprintf(cmdline, sizeof(cmdline), "redis-cli -p %d -x SET kcli < %s > /dev/null", s.port,
             file);
    cr_assert_eq(system(cmdline), 0);
    c = conn(&s);
    expect_value(c, "kcli", v10, n10, "redis-cli SET");
    redisFree(c);
    snprintf(cmdline, sizeof(cmdline), "redis-cli -p %d --raw GET kcli > %s", s.port, got);
    cr_assert_eq(system(cmdline), 0);
    struct stat st;
    cr_assert_eq(stat(got, &st), 0);
    cr_assert_eq((size_t)st.st_size, n10 + 1, "redis-cli GET: the value and a newline");
    snprintf(cmdline, sizeof(cmdline), "head -c %zu %s | cmp -s - %s", n10, got, file);
    cr_assert_eq(system(cmdline), 0, "redis-cli GET: the bytes differ");
    unlink(file);
    unlink(got);

    restarts_keep(&s, "10 MB and 100 MB");
    c = conn(&s);
    expect_value(c, "k10", v10, n10, "10 MB after restarts");
    cr_assert_eq(integer(c, "STRLEN", "STRLEN k100"), (long long)n100);
    redisFree(c);
    free(v10);
    finish(&s);
}

Test(bigvalues, set_variants_with_large_values)
{
    srv_t s;
    redisContext *c = start_small(&s);
    size_t n = 3 * MB + 12345;
    char *a = pattern(n, 1), *b = pattern(n, 2), *d = pattern(n + 7, 3);
    long long live0 = live_total(&s, "empty");
    expect_status(c, redisCommand(c, "SETEX k 1000 %b", a, n), "OK", "SETEX");
    long long ttl = integer(c, "TTL", "TTL k");
    cr_assert(ttl > 0 && ttl <= 1000, "SETEX's TTL %lld", ttl);
    expect_status(c, redisCommand(c, "PSETEX p 1000000 %b", b, n), "OK", "PSETEX");
    cr_assert_gt(integer(c, "PTTL", "PTTL p"), 0);
    /* GETSET answers the old large value and stores the new one. */
    redisReply *r = redisCommand(c, "GETSET k %b", b, n);
    cr_assert_eq(r->type, REDIS_REPLY_STRING);
    cr_assert_eq(r->len, n);
    cr_assert(memcmp(r->str, a, n) == 0, "GETSET's old value");
    freeReplyObject(r);
    expect_value(c, "k", b, n, "after GETSET");
    cr_assert_eq(integer(c, "TTL", "TTL k"), -1, "GETSET clears the TTL");
    /* NX not met: nil, nothing changes; XX GET: the old value, then set. */
    r = redisCommand(c, "SET k %b NX", d, n + 7);
    cr_assert_eq(r->type, REDIS_REPLY_NIL, "SET NX on a present key");
    freeReplyObject(r);
    expect_value(c, "k", b, n, "after SET NX");
    r = redisCommand(c, "SET k %b XX GET", d, n + 7);
    cr_assert_eq(r->type, REDIS_REPLY_STRING);
    cr_assert(r->len == n && memcmp(r->str, b, n) == 0, "SET XX GET's old value");
    freeReplyObject(r);
    expect_value(c, "k", d, n + 7, "after SET XX GET");
    r = redisCommand(c, "SET fresh %b XX", a, n);
    cr_assert_eq(r->type, REDIS_REPLY_NIL, "SET XX on an absent key");
    freeReplyObject(r);
    cr_assert_eq(integer(c, "EXISTS", "EXISTS fresh"), 0);
    cr_assert_eq(integer(c, "SETNX", "SETNX fresh %b", a, n), 1);
    cr_assert_eq(integer(c, "SETNX", "SETNX fresh %b", b, n), 0);
    expect_value(c, "fresh", a, n, "SETNX");
    /* SET ... GET on a hash: WRONGTYPE, the hash untouched. */
    cr_assert_eq(integer(c, "HSET", "HSET h f v"), 1);
    r = redisCommand(c, "SET h %b GET", a, n);
    cr_assert_eq(r->type, REDIS_REPLY_ERROR);
    cr_assert_str_eq(r->str, "WRONGTYPE Operation against a key holding the wrong kind of value");
    freeReplyObject(r);
    cr_assert_eq(integer(c, "HLEN", "HLEN h"), 1);
    /* An option error after the value: refused before anything is logged. */
    r = redisCommand(c, "SET k %b EX 0", a, n);
    cr_assert_eq(r->type, REDIS_REPLY_ERROR);
    cr_assert_str_eq(r->str, "ERR invalid expire time in 'set' command");
    freeReplyObject(r);
    expect_value(c, "k", d, n + 7, "after a refused SET");
    /* Live bytes: exactly the three values now held (refused and replaced
     * writes' parts are not counted). */
    long long live = live_total(&s, "variants");
    cr_assert_geq(live - live0, (long long)(3 * n + 7));
    cr_assert_lt(live - live0, (long long)(3 * n + 7) + 4096, "live %lld", live - live0);
    cr_assert_eq(integer(c, "DEL", "DEL k p fresh"), 3);
    cr_assert_lt(live_total(&s, "deleted") - live0, 4096);
    expect_status(c, redisCommand(c, "SET k %b", a, n), "OK", "SET again");
    redisFree(c);
    restarts_keep(&s, "variants");
    c = conn(&s);
    expect_value(c, "k", a, n, "after restarts");
    redisFree(c);
    free(a);
    free(b);
    free(d);
    finish(&s);
}

Test(bigvalues, append_across_the_record_limit)
{
    srv_t s;
    redisContext *c = start_small(&s);
    size_t total = 40 * MB + 999, have = 0;
    char *want = pattern(total, 7);
    cr_assert_eq(integer(c, "APPEND", "APPEND a %b", want, (size_t)10), 10);
    have = 10;
    /* Steps under and over the record limit (256 KB), mixed. */
    size_t steps[] = {300000, 100, 5 * MB, 262144, 3 * MB + 1};
    for (int i = 0; have < total; i++) {
        size_t n = steps[i % 5];
        if (n > total - have) n = total - have;
        cr_assert_eq(integer(c, "APPEND", "APPEND a %b", want + have, n), (long long)(have + n),
                     "APPEND step %d", i);
        have += n;
    }
    expect_value(c, "a", want, total, "40 MB by APPEND");
    /* A large APPEND to a new key, and to a key of another type. */
    cr_assert_eq(integer(c, "APPEND", "APPEND fresh %b", want, (size_t)(2 * MB)), 2 * MB);
    cr_assert_eq(integer(c, "RPUSH", "RPUSH l x"), 1);
    redisReply *r = redisCommand(c, "APPEND l %b", want, (size_t)(2 * MB));
    cr_assert_eq(r->type, REDIS_REPLY_ERROR);
    cr_assert_str_eq(r->str, "WRONGTYPE Operation against a key holding the wrong kind of value");
    freeReplyObject(r);
    cr_assert_eq(integer(c, "LLEN", "LLEN l"), 1);
    redisFree(c);
    restarts_keep(&s, "APPEND");
    c = conn(&s);
    expect_value(c, "a", want, total, "APPEND after restarts");
    expect_value(c, "fresh", want, 2 * MB, "APPEND to a new key after restarts");
    redisFree(c);
    free(want);
    finish(&s);
}

Test(bigvalues, setrange_and_mset_with_large_values)
{
    srv_t s;
    redisContext *c = start_small(&s);
    size_t n = 5 * MB + 1;
    char *v = pattern(n, 11), *want = calloc(1, n + 1000);
    cr_assert_not_null(want);
    /* SETRANGE past the end of a short value: zeros between. */
    expect_status(c, redisCommand(c, "SET r hello"), "OK", "SET r");
    memcpy(want, "hello", 5);
    cr_assert_eq(integer(c, "SETRANGE", "SETRANGE r 1000 %b", v, n), (long long)(n + 1000));
    memcpy(want + 1000, v, n);
    expect_value(c, "r", want, n + 1000, "SETRANGE past the end");
    /* Over the middle of itself, crossing its parts. */
    cr_assert_eq(integer(c, "SETRANGE", "SETRANGE r 3 %b", v + 7, (size_t)(2 * MB)),
                 (long long)(n + 1000));
    memcpy(want + 3, v + 7, 2 * MB);
    expect_value(c, "r", want, n + 1000, "SETRANGE over itself");
    /* MSET with one large value among short ones; MSETNX all or none. */
    expect_status(c, redisCommand(c, "MSET a 1 b %b c 3", v, n), "OK", "MSET");
    expect_value(c, "b", v, n, "MSET's large value");
    expect_value(c, "c", "3", 1, "MSET's short value after it");
    cr_assert_eq(integer(c, "MSETNX", "MSETNX fresh %b a x", v, n), 0);
    cr_assert_eq(integer(c, "EXISTS", "EXISTS fresh"), 0);
    cr_assert_eq(integer(c, "MSETNX", "MSETNX fresh %b new x", v, n), 1);
    expect_value(c, "fresh", v, n, "MSETNX");
    /* Two large values in one MSET: one record cannot hold the other. */
    redisReply *r = redisCommand(c, "MSET d %b e %b", v, n, v, n);
    cr_assert_eq(r->type, REDIS_REPLY_ERROR, "MSET of two large values");
    cr_assert(strstr(r->str, "request too large") != NULL, "%s", r->str);
    freeReplyObject(r);
    cr_assert_eq(integer(c, "EXISTS", "EXISTS d e"), 0);
    redisFree(c);
    restarts_keep(&s, "SETRANGE and MSET");
    c = conn(&s);
    expect_value(c, "r", want, n + 1000, "SETRANGE after restarts");
    expect_value(c, "b", v, n, "MSET after restarts");
    redisFree(c);
    free(v);
    free(want);
    finish(&s);
}

/* Wait (up to 60 s) until the live total is back to `want`: the parts of
 * an abandoned write dropped. */
static void live_back_to(const srv_t *s, long long want, const char *what)
{
    time_t deadline = time(NULL) + 60;
    long long now;
    while ((now = live_total(s, what)) != want) {
        cr_assert_lt(time(NULL), deadline, "%s: live bytes %lld, want %lld", what, now, want);
        usleep(50000);
    }
}

/* SET k (old) then a large SET k that a fault interrupts: the reply must
 * be OK with the new value whole, or no OK with the old value whole; a
 * dropped write's parts stop counting; restarts keep the state. */
static void interrupted_set(const char *faults, const char *role, const char *what, int must_ack)
{
    srv_t s;
    cr_assert_eq(srv_start_faults(&s, faults, SMALL_RING), 0, "%s", what);
    redisContext *c = conn(&s);
    size_t n = 6 * MB + 3;
    char *v = pattern(n, 42);
    expect_status(c, redisCommand(c, "SET k old"), "OK", "SET old");
    long long live0 = live_total(&s, what);
    redisReply *r = redisCommand(c, "SET k %b", v, n);
    int acked = r && r->type == REDIS_REPLY_STATUS && strcmp(r->str, "OK") == 0;
    if (r) freeReplyObject(r);
    redisFree(c);
    if (must_ack >= 0) cr_assert_eq(acked, must_ack, "%s: acknowledged %d", what, acked);
    /* The killed process is respawned; the server answers again. */
    time_t deadline = time(NULL) + 60;
    for (;;) {
        c = srv_connect(&s);
        if (c) {
            r = redisCommand(c, "PING");
            int ok = r && r->type == REDIS_REPLY_STATUS;
            if (r) freeReplyObject(r);
            if (ok) break;
            redisFree(c);
        }
        cr_assert_lt(time(NULL), deadline, "%s: no answer after the fault", what);
        usleep(50000);
    }
    struct timeval tv = {120, 0};
    redisSetTimeout(c, tv);
    char tail[2048];
    cr_assert(srv_log_contains(&s, role, "killed by signal 9"), "%s: the fault did not fire: %s",
              what, srv_log_tail(&s, tail, sizeof(tail)));
    if (acked) {
        expect_value(c, "k", v, n, what);
    } else {
        r = redisCommand(c, "GET k");
        cr_assert_not_null(r);
        cr_assert_eq(r->type, REDIS_REPLY_STRING);
        /* Not acknowledged may still have happened (the final durable,
         * its reply lost with the frontend), but only whole. */
        if (r->len == n)
            cr_assert(memcmp(r->str, v, n) == 0, "%s: the new value is not whole", what);
        else
            cr_assert_str_eq(r->str, "old", "%s: the old value is gone", what);
        int kept_old = r->len == 3;
        freeReplyObject(r);
        if (kept_old) live_back_to(&s, live0, what);
        /* A frontend's parts are dropped by the store, which saw it gone
         * (on its own round: the GET above may come first). */
        time_t gone_by = time(NULL) + 60;
        while (kept_old && strstr(role, "frontend") &&
               !srv_log_contains(&s, "value group", "is gone")) {
            cr_assert_lt(time(NULL), gone_by, "%s: no abort", what);
            usleep(20000);
        }
    }
    redisFree(c);
    restarts_keep(&s, what);
    free(v);
    /* atticdb-check reads the log: the chunks, and the abort a dropped
     * write got. */
    srv_kill_all(&s);
    static char out[16384];
    char args[300];
    snprintf(args, sizeof(args), "%s", s.dir);
    cr_assert_eq(srv_run_tool("atticdb-check", args, out, sizeof(out)), 0, "%s: %s", what, out);
    cr_assert(strstr(out, "(chunk)") != NULL, "%s: %s", what, out);
    if (!acked && strstr(role, "frontend"))
        cr_assert(strstr(out, "(bigabort)") != NULL, "%s: %s", what, out);
    srv_cleanup(&s);
}

Test(bigvalues, frontend_killed_after_a_chunk)
{
    interrupted_set("frontend.bigchunk:5:KILL", "frontend 0", "frontend killed after its 5th chunk",
                    0);
}

Test(bigvalues, frontend_killed_before_the_final)
{
    interrupted_set("frontend.bigfinal:1:KILL", "frontend 0", "frontend killed before the final",
                    0);
}

Test(bigvalues, frontend_killed_holding_a_chunk_claim)
{
    /* The 3rd claim: SET old, then the big SET's 2nd chunk, claimed and
     * never committed (the logger pads it; the chunks after never come). */
    interrupted_set("frontend.claim:3:KILL", "frontend 0",
                    "frontend killed holding a chunk's claim", 0);
}

Test(bigvalues, store_killed_while_applying_chunks)
{
    /* The write goes on: the respawned store replays the chunks. */
    interrupted_set("store.bigapply:4:KILL", "store", "store killed after applying its 4th chunk",
                    1);
}

Test(bigvalues, logger_killed_during_the_write)
{
    interrupted_set("logger.fdatasync:4:KILL", "logger", "logger killed at its 4th sync", -1);
}

/* A power cut (the logger's 25th sync simulates one: the whole group
 * dies, unsynced writes are lost or torn) during a run of large SETs:
 * after the restart k holds the last acknowledged value or the one in
 * flight, whole, never a mix; the parts of a cut write stop counting. */
Test(bigvalues, power_cut_during_large_sets)
{
    srv_t s;
    cr_assert_eq(srv_start_faults(&s, "logger.fdatasync:25:CUT", SMALL_RING), 0);
    redisContext *c = conn(&s);
    size_t n = 2 * MB;
    int acked = -1, round = 0;
    for (;; round++) {
        cr_assert_lt(round, 200, "the power cut did not happen");
        char *v = pattern(n, (unsigned)round);
        redisReply *r = redisCommand(c, "SET k %b", v, n);
        free(v);
        int ok = r && r->type == REDIS_REPLY_STATUS;
        if (r) freeReplyObject(r);
        if (!ok) break;
        acked = round;
    }
    redisFree(c);
    srv_kill_all(&s);
    cr_assert_eq(srv_restart(&s), 0);
    c = conn(&s);
    redisReply *r = redisCommand(c, "GET k");
    cr_assert_not_null(r);
    if (acked < 0) {
        cr_assert(r->type == REDIS_REPLY_NIL || r->len == n, "k after a cut before any ack");
    } else {
        cr_assert_eq(r->type, REDIS_REPLY_STRING, "k lost (round %d was acknowledged)", acked);
        cr_assert_eq(r->len, n);
        char *want = pattern(n, (unsigned)acked), *next = pattern(n, (unsigned)round);
        cr_assert(memcmp(r->str, want, n) == 0 || memcmp(r->str, next, n) == 0,
                  "k is neither round %d (acknowledged) nor round %d (in flight), whole", acked,
                  round);
        free(want);
        free(next);
    }
    int has = r->type == REDIS_REPLY_STRING;
    freeReplyObject(r);
    redisFree(c);
    live_back_to(&s, has ? (long long)n : 0, "after the power cut");
    cr_log_info("power cut in round %d (round %d acknowledged); a cut write's parts dropped: %d",
                round, acked, srv_log_contains(&s, "value group", "is gone"));
    restarts_keep(&s, "power cut");
    finish(&s);
}

/* ---- large bulks taken from the socket as they arrive (D48) ---- */

/* Send the start of a request whose last argument is a bulk of n bytes
 * (its header only), on c's socket. */
static void send_head(redisContext *c, int argc, const char *const *args, size_t n)
{
    char head[512];
    int hl = snprintf(head, sizeof(head), "*%d\r\n", argc);
    for (int i = 0; i < argc - 1; i++)
        hl += snprintf(head + hl, sizeof(head) - (size_t)hl, "$%zu\r\n%s\r\n", strlen(args[i]),
                       args[i]);
    hl += snprintf(head + hl, sizeof(head) - (size_t)hl, "$%zu\r\n", n);
    cr_assert_eq(write(c->fd, head, (size_t)hl), hl);
}

/* Write bytes [from, to) of a value that repeats v[0, vn) on c's socket. */
static void send_bytes(redisContext *c, const char *v, size_t vn, size_t from, size_t to)
{
    while (from < to) {
        size_t at = from % vn, n = vn - at < to - from ? vn - at : to - from;
        ssize_t w = write(c->fd, v + at, n);
        cr_assert_gt(w, 0, "write: the server closed the connection");
        from += (size_t)w;
    }
}

#define expect_rss_within(grown, ...)                                                              \
    do {                                                                                           \
        if (SRV_RSS_BOUNDS) cr_assert_lt((grown), 64 * 1024, __VA_ARGS__);                         \
    } while (0)

/* A kB figure of /proc/<pid>/status ("VmHWM:", "VmRSS:"). */
static long proc_kb(pid_t pid, const char *field)
{
    char path[64], line[256];
    snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "%s", path);
    long kb = -1;
    while (fgets(line, sizeof(line), f))
        if (strncmp(line, field, strlen(field)) == 0) kb = atol(line + strlen(field));
    fclose(f);
    cr_assert_geq(kb, 0, "%s has no %s", path, field);
    return kb;
}

static pid_t the_frontend(const srv_t *s)
{
    pid_t fe;
    cr_assert_eq(srv_wait_children(s, "atticdb-server: frontend", &fe, 1, 1), 1, "no frontend");
    return fe;
}

/* A server holding k = "old", and a connection that has sent half of a
 * SET k of n bytes (v), whose chunks the store has taken (pending parts,
 * counted live: the value goes out as it arrives, it is not held).
 * *live0 is the live total before. */
static redisContext *half_sent_set_opts(srv_t *s, const char *opts, const char *v, size_t n,
                                        long long *live0)
{
    cr_assert_eq(srv_start(s, opts), 0);
    redisContext *c = conn(s);
    expect_status(c, redisCommand(c, "SET k old"), "OK", "SET old");
    *live0 = live_total(s, "before");
    redisFree(c);
    redisContext *raw = conn(s);
    const char *args[] = {"SET", "k"};
    send_head(raw, 3, args, n);
    send_bytes(raw, v, n, 0, n / 2);
    time_t deadline = time(NULL) + 60;
    while (live_total(s, "streaming") < *live0 + (long long)MB) {
        cr_assert_lt(time(NULL), deadline, "the value's chunks never counted");
        usleep(20000);
    }
    return raw;
}

static redisContext *half_sent_set(srv_t *s, const char *v, size_t n, long long *live0)
{
    return half_sent_set_opts(s, SMALL_RING, v, n, live0);
}

Test(bigvalues, client_leaves_in_the_middle_of_a_value)
{
    srv_t s;
    size_t n = 4 * MB;
    char *v = pattern(n, 5);
    long long live0;
    redisContext *raw = half_sent_set(&s, v, n, &live0);
    redisFree(raw); /* half of the bulk sent, then the connection closes */
    redisContext *c = conn(&s);
    expect_value(c, "k", "old", 3, "after the client left");
    live_back_to(&s, live0, "nothing of the half value is counted");
    free(v);
    redisFree(c);
    finish(&s);
}

/* SET o:0..199 to v, pipelined. */
static void overwrite_round(redisContext *c, const char *v, size_t n)
{
    for (int i = 0; i < 200; i++)
        redisAppendCommand(c, "SET o:%d %b", i, v, n);
    for (int i = 0; i < 200; i++) {
        redisReply *r;
        cr_assert_eq(redisGetReply(c, (void **)&r), REDIS_OK);
        cr_assert_eq(r->type, REDIS_REPLY_STATUS);
        freeReplyObject(r);
    }
}

/* The lowest LSN a log segment in s's directory starts at. */
static unsigned long long first_segment(const srv_t *s)
{
    DIR *d = opendir(s->dir);
    cr_assert_not_null(d);
    unsigned long long first = ~0ull;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        unsigned long long at;
        if (strlen(e->d_name) == 24 && sscanf(e->d_name, "log-%16llx.seg", &at) == 1 && at < first)
            first = at;
    }
    closedir(d);
    return first;
}

Test(bigvalues, compaction_and_checkpoints_with_a_large_value)
{
    srv_t s;
    cr_assert_eq(srv_start(&s, "--frontends 1 --ring-size 256kb --segment-size 1mb "
                               "--checkpoint-bytes 1mb"),
                 0);
    redisContext *c = conn(&s);
    size_t n = 6 * MB + 17;
    char *v = pattern(n, 9), *w = pattern(n, 10), small[1000];
    memset(small, 'o', sizeof(small));
    /* Small values first, so that the log's first segments can go. */
    for (int round = 0; round < 10; round++)
        overwrite_round(c, small, sizeof(small));
    expect_status(c, redisCommand(c, "SET big %b", v, n), "OK", "SET big");
    /* An overwrite load: checkpoints come every 1 MB, relocation moves the
     * small values, and the old segments go up to the big value's, whose
     * parts pin theirs (not relocated, D31) and read back. */
    for (int round = 0; round < 40; round++) {
        overwrite_round(c, small, sizeof(small));
        if (round == 20)
            expect_status(c, redisCommand(c, "SET big2 %b", w, n), "OK", "SET big2 mid-load");
    }
    expect_value(c, "big", v, n, "big during compaction");
    cr_assert_gt(first_segment(&s), 0, "no segment was deleted under the load");
    cr_assert(srv_log_contains(&s, "checkpoint", "written") ||
                  srv_log_contains(&s, "writing a checkpoint", NULL),
              "no checkpoint was written");
    live_total(&s, "under load");
    redisFree(c);
    restarts_keep(&s, "compaction");
    c = conn(&s);
    expect_value(c, "big", v, n, "big after restarts");
    expect_value(c, "big2", w, n, "big2 after restarts");
    /* Replaced, the first value's segments can go. */
    expect_status(c, redisCommand(c, "SET big small-now"), "OK", "replace big");
    time_t deadline = time(NULL) + 120;
    while (first_segment(&s) < 9ull * MB) {
        cr_assert_lt(time(NULL), deadline,
                     "the first value's segments were not deleted (log "
                     "starts at %llx)",
                     first_segment(&s));
        overwrite_round(c, small, sizeof(small));
    }
    expect_value(c, "big2", w, n, "big2 after more compaction");
    redisFree(c);
    restarts_keep(&s, "compaction after replacing");
    free(v);
    free(w);
    finish(&s);
}

/* Hash field values and list elements past the record limit (D45): they
 * read back whole, beside small ones; HSETNX and LPUSHX that do not write
 * drop the parts; WRONGTYPE changes nothing; checkpoints and replay keep
 * them (the clean stop writes a checkpoint holding them, the SIGKILL
 * restart replays). */
static void expect_collections(redisContext *c, const char *v, const char *w, size_t n,
                               const char *what)
{
    expect_bulk(c, v, n, what, "HGET h big");
    expect_bulk(c, w, n, what, "HGET h big2");
    expect_bulk(c, "x", 1, what, "HGET h small");
    cr_assert_eq(integer(c, what, "HLEN h"), 3, "%s: HLEN", what);
    cr_assert_eq(integer(c, what, "LLEN l"), 4, "%s: LLEN", what);
    expect_bulk(c, w, n, what, "LINDEX l 0");
    expect_bulk(c, "a", 1, what, "LINDEX l 1");
    expect_bulk(c, v, n, what, "LINDEX l 2");
    expect_bulk(c, "b", 1, what, "LINDEX l 3");
    cr_assert_eq(integer(c, what, "LLEN m"), 3, "%s: LLEN m", what);
    expect_bulk(c, v, n, what, "LINDEX m 0");
    expect_bulk(c, "y", 1, what, "LINDEX m 1");
    expect_bulk(c, w, n, what, "LINDEX m 2");
}

/* The reply of fmt is the error want. */
static void expect_error(redisContext *c, const char *want, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    redisReply *r = typed_reply(c, REDIS_REPLY_ERROR, fmt, fmt, ap);
    va_end(ap);
    cr_assert_str_eq(r->str, want, "%s", fmt);
    freeReplyObject(r);
}

Test(bigvalues, hash_fields_and_list_elements)
{
    srv_t s;
    redisContext *c = start_small(&s);
    size_t n = 3 * MB + 17;
    char *v = pattern(n, 21), *w = pattern(n, 22);
    cr_assert_eq(integer(c, "HSET", "HSET h small x big %b", v, n), 2);
    cr_assert_eq(integer(c, "HSETNX", "HSETNX h big %b", w, n), 0);
    expect_status(c, redisCommand(c, "HMSET h big2 %b", w, n), "OK", "HMSET");
    cr_assert_eq(integer(c, "HSTRLEN", "HSTRLEN h big"), (long long)n);
    cr_assert_eq(integer(c, "RPUSH", "RPUSH l a %b b", v, n), 3);
    cr_assert_eq(integer(c, "LPUSH", "LPUSH l %b", w, n), 4);
    cr_assert_eq(integer(c, "LPUSHX", "LPUSHX none %b", v, n), 0);
    cr_assert_eq(integer(c, "EXISTS", "EXISTS none"), 0);
    expect_status(c, redisCommand(c, "SET str s"), "OK", "SET str");
    const char *wrongtype = "WRONGTYPE Operation against a key holding the wrong kind of value";
    expect_error(c, wrongtype, "RPUSH str %b", v, n);
    expect_error(c, wrongtype, "HSET str f %b", v, n);
    expect_error(c, wrongtype, "LSET str 0 %b", v, n);
    /* LSET and LINSERT replace and insert one large element. */
    cr_assert_eq(integer(c, "RPUSH", "RPUSH m x y"), 2);
    expect_status(c, redisCommand(c, "LSET m 0 %b", v, n), "OK", "LSET");
    expect_error(c, "ERR index out of range", "LSET m 5 %b", w, n);
    expect_error(c, "ERR no such key", "LSET none 0 %b", w, n);
    cr_assert_eq(integer(c, "LINSERT", "LINSERT m AFTER y %b", w, n), 3);
    cr_assert_eq(integer(c, "LINSERT", "LINSERT m AFTER nopivot %b", w, n), -1);
    expect_bulk(c, "s", 1, "WRONGTYPE changes nothing", "GET str");
    expect_collections(c, v, w, n, "written");
    live_total(&s, "collections");
    redisFree(c);
    restarts_keep(&s, "collections");
    /* The clean stop's checkpoint holds the elements; it was loaded, not
     * skipped for a full replay. */
    cr_assert(srv_log_contains(&s, "loaded checkpoint", NULL), "no checkpoint was loaded");
    cr_assert(!srv_log_contains(&s, "skipped", NULL), "a checkpoint was refused");
    c = conn(&s);
    expect_collections(c, v, w, n, "after restarts");
    redisFree(c);
    free(v);
    free(w);
    finish(&s);
}

/* The DUMP payload of key (the caller frees it). */
static redisReply *dump_of(redisContext *c, const char *key)
{
    redisReply *r = redisCommand(c, "DUMP %s", key);
    cr_assert_not_null(r, "DUMP %s: no reply (%s)", key, c->errstr);
    cr_assert_eq(r->type, REDIS_REPLY_STRING, "DUMP %s: type %d", key, r->type);
    return r;
}

/* RESTORE of payloads past the record limit (D45): a large string and a
 * hash holding a large field come back whole; BUSYKEY, REPLACE and a
 * damaged payload answer as Redis; restarts keep them. */
Test(bigvalues, restore_of_a_large_payload)
{
    srv_t s;
    redisContext *c = start_small(&s);
    size_t n = 3 * MB + 5;
    char *v = pattern(n, 31);
    expect_status(c, redisCommand(c, "SET str %b", v, n), "OK", "SET str");
    cr_assert_eq(integer(c, "HSET", "HSET h small x big %b", v, n), 2);
    redisReply *ds = dump_of(c, "str"), *dh = dump_of(c, "h");
    cr_assert_gt(ds->len, n);
    expect_status(c, redisCommand(c, "RESTORE str2 0 %b", ds->str, ds->len), "OK", "RESTORE");
    expect_value(c, "str2", v, n, "restored string");
    expect_error(c, "BUSYKEY Target key name already exists.", "RESTORE str2 0 %b", dh->str,
                 dh->len);
    expect_status(c, redisCommand(c, "RESTORE str2 0 %b REPLACE", dh->str, dh->len), "OK",
                  "RESTORE REPLACE");
    expect_bulk(c, v, n, "restored hash", "HGET str2 big");
    expect_bulk(c, "x", 1, "restored hash", "HGET str2 small");
    ds->str[n / 2] ^= 1;
    expect_error(c, "ERR DUMP payload version or checksum are wrong", "RESTORE bad 0 %b", ds->str,
                 ds->len);
    cr_assert_eq(integer(c, "EXISTS", "EXISTS bad"), 0);
    freeReplyObject(ds);
    freeReplyObject(dh);
    live_total(&s, "RESTORE");
    redisFree(c);
    restarts_keep(&s, "RESTORE");
    c = conn(&s);
    expect_bulk(c, v, n, "restored hash after restarts", "HGET str2 big");
    redisFree(c);
    free(v);
    finish(&s);
}

/* 64 MB through the default ring (records of 4 MB): SET, GET, the bytes. */
Test(bigvalues, streamed_64mb_round_trip)
{
    srv_t s;
    cr_assert_eq(srv_start(&s, "--frontends 1"), 0);
    redisContext *c = conn(&s);
    size_t n = 64 * MB + 17;
    char *v = pattern(n, 64);
    expect_status(c, redisCommand(c, "SET k64 %b", v, n), "OK", "SET 64 MB");
    expect_value(c, "k64", v, n, "64 MB");
    redisReply *r = redisCommand(c, "GETRANGE k64 %d %d", (int)(4 * MB - 3), (int)(4 * MB + 3));
    cr_assert_eq(r->len, 7);
    cr_assert(memcmp(r->str, v + 4 * MB - 3, 7) == 0, "GETRANGE across a chunk's end");
    freeReplyObject(r);
    redisFree(c);
    restarts_keep(&s, "64 MB");
    c = conn(&s);
    expect_value(c, "k64", v, n, "64 MB after restarts");
    redisFree(c);
    free(v);
    finish(&s);
}

/* APPEND past 100 MB in 30 MB steps, each streamed. */
Test(bigvalues, append_past_100mb)
{
    srv_t s;
    cr_assert_eq(srv_start(&s, "--frontends 1"), 0);
    redisContext *c = conn(&s);
    size_t step = 30 * MB + 1, total = 4 * step;
    char *v = pattern(total, 101);
    for (size_t have = 0; have < total; have += step)
        cr_assert_eq(integer(c, "APPEND", "APPEND a %b", v + have, step), (long long)(have + step));
    cr_assert_eq(integer(c, "STRLEN", "STRLEN a"), (long long)total);
    expect_value(c, "a", v, total, "120 MB by APPEND");
    redisFree(c);
    restarts_keep(&s, "APPEND past 100 MB");
    free(v);
    finish(&s);
}

/* Three clients send 200 MB values at once, interleaved: the frontend's
 * peak RSS stays within 64 MB of its idle RSS (each connection holds at
 * most one chunk of its value: big-value-buffer, 4 MB), where holding the
 * values would take 600 MB. Each value reads back whole. */
Test(bigvalues, frontend_rss_bounded_while_clients_set_200mb)
{
    srv_t s;
    cr_assert_eq(srv_start(&s, "--frontends 1"), 0);
    pid_t fe = the_frontend(&s);
    enum { NCLIENTS = 3 };
    size_t n = 200 * MB, vn = MB + 7;
    char *v = pattern(vn, 200);
    redisContext *cl[NCLIENTS];
    for (int i = 0; i < NCLIENTS; i++) {
        cl[i] = conn(&s);
        expect_status(cl[i], redisCommand(cl[i], "PING"), "PONG", "PING");
    }
    long idle = proc_kb(fe, "VmRSS:");
    for (int i = 0; i < NCLIENTS; i++) {
        char key[16];
        snprintf(key, sizeof(key), "v%d", i);
        const char *args[] = {"SET", key};
        send_head(cl[i], 3, args, n);
    }
    for (size_t off = 0; off < n; off += 4 * MB)
        for (int i = 0; i < NCLIENTS; i++)
            send_bytes(cl[i], v, vn, off, off + 4 * MB < n ? off + 4 * MB : n);
    for (int i = 0; i < NCLIENTS; i++) {
        cr_assert_eq(write(cl[i]->fd, "\r\n", 2), 2);
        redisReply *r = NULL;
        cr_assert_eq(redisGetReply(cl[i], (void **)&r), REDIS_OK, "client %d: %s", i,
                     cl[i]->errstr);
        expect_status(cl[i], r, "OK", "SET 200 MB");
    }
    long peak = proc_kb(fe, "VmHWM:");
    cr_log_info("frontend RSS idle %ld kB, peak %ld kB while %d clients SET 200 MB", idle, peak,
                NCLIENTS);
    expect_rss_within(peak - idle, "frontend peak RSS %ld kB, idle %ld kB", peak, idle);
    for (int i = 0; i < NCLIENTS; i++) {
        cr_assert_eq(integer(cl[i], "STRLEN", "STRLEN v%d", i), (long long)n);
        /* Probes across the value, each against the pattern it repeats. */
        for (size_t at = 0; at < n; at += 37 * MB + 5) {
            size_t len = n - at < 4096 ? n - at : 4096;
            redisReply *r = redisCommand(cl[i], "GETRANGE v%d %lld %lld", i, (long long)at,
                                         (long long)(at + len - 1));
            cr_assert_not_null(r, "GETRANGE: %s", cl[i]->errstr);
            cr_assert_eq(r->len, len);
            for (size_t j = 0; j < len; j++)
                cr_assert_eq(r->str[j], v[(at + j) % vn], "v%d byte %zu", i, at + j);
            freeReplyObject(r);
        }
        redisFree(cl[i]);
    }
    free(v);
    finish(&s);
}

/* A streamed value whose request turns out wrong after it: Redis' error,
 * nothing written, the parts dropped (no live bytes left). */
Test(bigvalues, streamed_value_then_a_bad_argument)
{
    srv_t s;
    redisContext *c = start_small(&s);
    expect_status(c, redisCommand(c, "SET k old"), "OK", "SET old");
    long long live0 = live_total(&s, "before");
    size_t n = 3 * MB;
    char *v = pattern(n, 9);
    redisReply *r = redisCommand(c, "SET k %b BADOPT", v, n);
    cr_assert_eq(r->type, REDIS_REPLY_ERROR);
    cr_assert_str_eq(r->str, "ERR syntax error");
    freeReplyObject(r);
    r = redisCommand(c, "SET k %b EX 0", v, n);
    cr_assert_eq(r->type, REDIS_REPLY_ERROR);
    cr_assert_str_eq(r->str, "ERR invalid expire time in 'set' command");
    freeReplyObject(r);
    r = redisCommand(c, "MSET k %b k2", v, n);
    cr_assert_eq(r->type, REDIS_REPLY_ERROR);
    cr_assert_str_eq(r->str, "ERR wrong number of arguments for 'mset' command");
    freeReplyObject(r);
    r = redisCommand(c, "SETRANGE k -1 %b", v, n);
    cr_assert_eq(r->type, REDIS_REPLY_ERROR);
    cr_assert_str_eq(r->str, "ERR offset is out of range");
    freeReplyObject(r);
    r = redisCommand(c, "SET k %b NX", v, n);
    cr_assert_eq(r->type, REDIS_REPLY_NIL, "SET NX on a key present");
    freeReplyObject(r);
    expect_value(c, "k", "old", 3, "after the refused writes");
    live_back_to(&s, live0, "the refused writes' parts");
    /* The same connection goes on: a streamed write that is good. */
    expect_status(c, redisCommand(c, "SET k %b XX", v, n), "OK", "SET XX");
    expect_value(c, "k", v, n, "the good write");
    redisFree(c);
    restarts_keep(&s, "refused streamed writes");
    free(v);
    finish(&s);
}

/* The frontend of raw, which has sent half of a SET k, SIGKILLed: the
 * store drops the parts (its log says so), k stays "old", the live bytes
 * go back to live. */
static void frontend_dies_mid_value(srv_t *s, redisContext *raw, long long live)
{
    kill(the_frontend(s), SIGKILL);
    redisFree(raw);
    time_t deadline = time(NULL) + 60;
    while (!srv_log_contains(s, "value group", "is gone")) {
        cr_assert_lt(time(NULL), deadline, "the dead frontend's parts were not dropped");
        usleep(20000);
    }
    redisContext *c = conn(s);
    expect_value(c, "k", "old", 3, "after the frontend died");
    redisFree(c);
    live_back_to(s, live, "the dead frontend's parts");
}

/* The frontend SIGKILLed while half of a value has arrived: the old value
 * stays, the parts are dropped, restarts agree. */
Test(bigvalues, frontend_sigkilled_mid_stream)
{
    srv_t s;
    size_t n = 8 * MB;
    char *v = pattern(n, 11);
    long long live0;
    redisContext *raw = half_sent_set(&s, v, n, &live0);
    frontend_dies_mid_value(&s, raw, live0);
    restarts_keep(&s, "frontend killed mid-stream");
    free(v);
    finish(&s);
}

/* The logger SIGKILLed while a value streams in: the write goes on after
 * its respawn or fails, never leaving part of it; after restarts k is the
 * old value or the new one, whole. */
Test(bigvalues, logger_sigkilled_mid_stream)
{
    srv_t s;
    size_t n = 8 * MB;
    char *v = pattern(n, 12);
    long long live0;
    redisContext *raw = half_sent_set(&s, v, n, &live0);
    pid_t lg;
    cr_assert_eq(srv_wait_children(&s, "atticdb-server: logger", &lg, 1, 1), 1);
    kill(lg, SIGKILL);
    /* The rest may find the connection closed (then not acknowledged). */
    int acked = 0;
    size_t off = n / 2;
    while (off < n) {
        ssize_t w = write(raw->fd, v + off, n - off);
        if (w <= 0) break;
        off += (size_t)w;
    }
    if (off == n && write(raw->fd, "\r\n", 2) == 2) {
        redisReply *r = NULL;
        if (redisGetReply(raw, (void **)&r) == REDIS_OK && r) {
            acked = r->type == REDIS_REPLY_STATUS && strcmp(r->str, "OK") == 0;
            freeReplyObject(r);
        }
    }
    redisFree(raw);
    time_t deadline = time(NULL) + 60;
    for (;;) {
        redisContext *c = srv_connect(&s);
        redisReply *r = c ? redisCommand(c, "GET k") : NULL;
        if (r && r->type == REDIS_REPLY_STRING) {
            if (acked || r->len == n)
                cr_assert(r->len == n && memcmp(r->str, v, n) == 0, "k is not the new value whole");
            else
                cr_assert_str_eq(r->str, "old", "k is neither old nor new");
            freeReplyObject(r);
            redisFree(c);
            break;
        }
        if (r) freeReplyObject(r);
        if (c) redisFree(c);
        cr_assert_lt(time(NULL), deadline, "no answer after the logger died");
        usleep(50000);
    }
    cr_assert(srv_log_contains(&s, "logger", "killed by signal 9"), "the logger did not die");
    cr_assert_leq(live_total(&s, "after"), live0 + (long long)n, "parts left counted");
    cr_log_info("logger killed mid-stream: acknowledged %d", acked);
    restarts_keep(&s, "logger killed mid-stream");
    free(v);
    finish(&s);
}

/* Fault point "streamwhole" (20): the frontend dies with the whole value
 * in chunks, its terminator read, and its request not yet run (no final
 * claimed): nothing of it is applied, the store drops the parts. */
Test(bigvalues, frontend_killed_with_a_streamed_value_whole)
{
    interrupted_set("frontend.streamwhole:1:KILL", "frontend 0",
                    "frontend killed with the streamed value whole", 0);
}

/* A set member past the record limit (D48: read into RAM at the final,
 * as Redis holds it): SADD, SREM, WRONGTYPE, SMEMBERS returns it whole,
 * restarts keep it. A large SET
 * queued in MULTI is refused as the transaction is (one record, D15):
 * EXEC answers EXECABORT and nothing changes. */
Test(bigvalues, set_members_and_a_transaction_with_large_values)
{
    srv_t s;
    redisContext *c = start_small(&s);
    size_t n = 3 * MB + 1;
    char *v = pattern(n, 13), *w = pattern(n, 14);
    cr_assert_eq(integer(c, "SADD", "SADD s small %b", v, n), 2);
    cr_assert_eq(integer(c, "SADD again", "SADD s %b", v, n), 0);
    cr_assert_eq(integer(c, "SADD w", "SADD s %b", w, n), 1);
    cr_assert_eq(integer(c, "SREM", "SREM s %b", w, n), 1);
    cr_assert_eq(integer(c, "SREM absent", "SREM s %b", w, n), 0);
    cr_assert_eq(integer(c, "SCARD", "SCARD s"), 2);
    expect_status(c, redisCommand(c, "SET str x"), "OK", "SET str");
    expect_error(c, "WRONGTYPE Operation against a key holding the wrong kind of value",
                 "SADD str %b", v, n);
    redisReply *r = redisCommand(c, "SMEMBERS s");
    cr_assert_eq(r->type, REDIS_REPLY_ARRAY);
    cr_assert_eq(r->elements, 2);
    int found = 0;
    for (size_t i = 0; i < 2; i++)
        found += r->element[i]->len == n && memcmp(r->element[i]->str, v, n) == 0;
    cr_assert_eq(found, 1, "SMEMBERS: the large member whole");
    freeReplyObject(r);
    /* MULTI: the queued write is refused, the transaction discarded. */
    expect_status(c, redisCommand(c, "MULTI"), "OK", "MULTI");
    r = redisCommand(c, "SET str %b", v, n);
    cr_assert_eq(r->type, REDIS_REPLY_ERROR);
    cr_assert(strncmp(r->str, "ERR transaction too large", 25) == 0, "%s", r->str);
    freeReplyObject(r);
    expect_error(c, "EXECABORT Transaction discarded because of previous errors.", "EXEC");
    expect_value(c, "str", "x", 1, "after the refused transaction");
    redisFree(c);
    restarts_keep(&s, "large set members");
    c = conn(&s);
    cr_assert_eq(integer(c, "SCARD after restarts", "SCARD s"), 2);
    cr_assert_eq(integer(c, "SREM", "SREM s %b", v, n), 1);
    redisFree(c);
    free(v);
    free(w);
    finish(&s);
}

/* ---- a large value's reply in parts (D48) ---- */

/* The reply to a GET (or GETRANGE) of n bytes that repeat v[0, vn) from
 * offset `from`, read from c's socket and checked byte by byte as it
 * arrives (nothing is held whole here either). */
typedef struct bulk_reader {
    redisContext *c;
    const char *v;
    size_t vn, from, n, hl, got;
    char head[32];
} bulk_reader_t;

static void bulk_reader_init(bulk_reader_t *b, redisContext *c, const char *v, size_t vn,
                             size_t from, size_t n)
{
    *b = (bulk_reader_t){.c = c, .v = v, .vn = vn, .from = from, .n = n};
    b->hl = (size_t)snprintf(b->head, sizeof(b->head), "$%zu\r\n", n);
}

/* Read and check up to `step` more bytes: 1 when the reply is complete,
 * 0 when not, -1 when the connection closed first. */
static int bulk_reader_step(bulk_reader_t *b, size_t step)
{
    static char buf[1 << 16];
    size_t total = b->hl + b->n + 2, lim = b->got + step < total ? b->got + step : total;
    while (b->got < lim) {
        size_t room = lim - b->got < sizeof(buf) ? lim - b->got : sizeof(buf);
        ssize_t r = read(b->c->fd, buf, room);
        if (r <= 0) return -1;
        for (ssize_t i = 0; i < r; i++, b->got++) {
            size_t at = b->got;
            char want = at < b->hl           ? b->head[at]
                        : at < b->hl + b->n  ? b->v[(b->from + at - b->hl) % b->vn]
                        : at == b->hl + b->n ? '\r'
                                             : '\n';
            cr_assert_eq(buf[i], want, "reply byte %zu", at);
        }
    }
    return b->got == total;
}

static void expect_bulk_read(redisContext *c, const char *v, size_t vn, size_t from, size_t n)
{
    bulk_reader_t b;
    bulk_reader_init(&b, c, v, vn, from, n);
    int rc;
    while ((rc = bulk_reader_step(&b, 4 * MB)) == 0)
        ;
    cr_assert_eq(rc, 1, "the connection closed after %zu bytes", b.got);
}

static void send_command(redisContext *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *cmd;
    int n = redisvFormatCommand(&cmd, fmt, ap);
    va_end(ap);
    cr_assert_gt(n, 0);
    cr_assert_eq(write(c->fd, cmd, (size_t)n), n);
    redisFreeCommand(cmd);
}

/* Three clients GET 200 MB values at once: neither the store nor the
 * frontend holds one (each reply goes in parts of 1 MB that the frontend
 * asks for as its client reads): both stay within 64 MB of their RSS
 * before the GETs, where a whole reply would take 200 MB in each. */
Test(bigvalues, rss_bounded_while_clients_get_200mb)
{
    srv_t s;
    cr_assert_eq(srv_start(&s, "--frontends 1"), 0);
    enum { NCLIENTS = 3 };
    size_t n = 200 * MB, vn = MB + 7;
    char *v = pattern(vn, 201);
    redisContext *cl[NCLIENTS];
    for (int i = 0; i < NCLIENTS; i++) {
        cl[i] = conn(&s);
        const char *args[] = {"SET", i == 0 ? "g0" : i == 1 ? "g1" : "g2"};
        send_head(cl[i], 3, args, n);
        send_bytes(cl[i], v, vn, 0, n);
        cr_assert_eq(write(cl[i]->fd, "\r\n", 2), 2);
        redisReply *r = NULL;
        cr_assert_eq(redisGetReply(cl[i], (void **)&r), REDIS_OK);
        expect_status(cl[i], r, "OK", "SET 200 MB");
    }
    pid_t fe = the_frontend(&s), st;
    cr_assert_eq(srv_wait_children(&s, "atticdb-server: store", &st, 1, 1), 1);
    long fe0 = proc_kb(fe, "VmRSS:"), st0 = proc_kb(st, "VmRSS:");
    for (int i = 0; i < NCLIENTS; i++)
        send_command(cl[i], "GET g%d", i);
    /* Read them interleaved, 4 MB at a time each, bytes checked. */
    bulk_reader_t br[NCLIENTS];
    for (int i = 0; i < NCLIENTS; i++)
        bulk_reader_init(&br[i], cl[i], v, vn, 0, n);
    for (int left = NCLIENTS; left > 0;) {
        left = 0;
        for (int i = 0; i < NCLIENTS; i++) {
            int rc = bulk_reader_step(&br[i], 4 * MB);
            cr_assert_geq(rc, 0, "client %d: the connection closed", i);
            left += rc == 0;
        }
    }
    long fe1 = proc_kb(fe, "VmHWM:"), st1 = proc_kb(st, "VmHWM:");
    cr_log_info("3 x GET 200 MB: frontend RSS %ld kB before, peak %ld kB; store %ld kB before, "
                "peak %ld kB",
                fe0, fe1, st0, st1);
    expect_rss_within(fe1 - fe0, "frontend peak %ld kB, %ld kB before", fe1, fe0);
    expect_rss_within(st1 - st0, "store peak %ld kB, %ld kB before", st1, st0);
    for (int i = 0; i < NCLIENTS; i++)
        redisFree(cl[i]);
    /* GETRANGE in parts, from an offset inside a part. */
    redisContext *c = conn(&s);
    send_command(c, "GETRANGE g2 %d %d", 3 * MB + 5, 3 * MB + 5 + 9 * MB - 1);
    expect_bulk_read(c, v, vn, 3 * MB + 5, 9 * MB);
    redisFree(c);
    free(v);
    finish(&s);
}

/* A reply in parts is the value as it was when the GET ran: the key
 * overwritten, deleted and its log made dead meanwhile change nothing of
 * what the rest of the reply carries (the snapshot pins its log). Replies
 * after it on the connection keep their order; a RESP3 client gets the
 * same bulk; a client that leaves mid-reply leaves the server serving. */
Test(bigvalues, a_reply_in_parts_is_the_value_when_read)
{
    srv_t s;
    cr_assert_eq(srv_start(&s, "--frontends 1 --segment-size 32mb --checkpoint-bytes 8mb"), 0);
    redisContext *c = conn(&s), *w = conn(&s);
    size_t n = 40 * MB, vn = MB + 3;
    char *v = pattern(n, 300), *v2 = pattern(vn, 301);
    expect_status(c, redisCommand(c, "SET big %b", v, n), "OK", "SET 40 MB");
    /* Pipelined: the large GET, then a small one and a write. */
    send_command(c, "GET big");
    send_command(c, "SET small after");
    send_command(c, "GET small");
    bulk_reader_t b;
    bulk_reader_init(&b, c, v, n, 0, n);
    cr_assert_eq(bulk_reader_step(&b, 6 * MB), 0);
    /* Meanwhile: overwritten, deleted, and 100 MB of other writes. */
    expect_status(w, redisCommand(w, "SET big %b", v2, vn), "OK", "overwrite");
    cr_assert_eq(integer(w, "DEL", "DEL big"), 1);
    for (int i = 0; i < 25; i++)
        expect_status(w, redisCommand(w, "SET filler %b", v2, vn), "OK", "filler");
    int rc;
    while ((rc = bulk_reader_step(&b, 4 * MB)) == 0)
        ;
    cr_assert_eq(rc, 1, "the reply was cut");
    redisReply *r = NULL;
    cr_assert_eq(redisGetReply(c, (void **)&r), REDIS_OK);
    expect_status(c, r, "OK", "the SET after it");
    cr_assert_eq(redisGetReply(c, (void **)&r), REDIS_OK);
    cr_assert_eq(r->type, REDIS_REPLY_STRING);
    cr_assert_str_eq(r->str, "after");
    freeReplyObject(r);
    /* RESP3: the same bulk. */
    expect_status(c, redisCommand(c, "SET big %b", v, n), "OK", "SET again");
    /* HELLO's RESP3 map read raw (hiredis here may not parse it), up to
     * the PING after it. */
    send_command(c, "HELLO 3");
    send_command(c, "PING");
    char hello[4096];
    size_t hn = 0;
    while (hn < 7 || memcmp(hello + hn - 7, "+PONG\r\n", 7) != 0) {
        cr_assert_lt(hn, sizeof(hello) - 1, "HELLO 3's reply");
        ssize_t k = read(c->fd, hello + hn, 1);
        cr_assert_eq(k, 1);
        hn++;
    }
    cr_assert_eq(hello[0], '%', "HELLO 3 answers a map");
    send_command(c, "GET big");
    expect_bulk_read(c, v, n, 0, n);
    redisFree(c);
    /* A client that leaves after the first parts. */
    redisContext *gone = conn(&s);
    send_command(gone, "GET big");
    bulk_reader_init(&b, gone, v, n, 0, n);
    cr_assert_eq(bulk_reader_step(&b, 3 * MB), 0);
    redisFree(gone);
    expect_value(w, "big", v, n, "after a reader left");
    redisFree(w);
    free(v);
    free(v2);
    finish(&s);
}

/* c was sent a command whose reply is v[0, n) in parts, and the store
 * dies (fault point 21) with some sent: c gets the first parts, then the
 * close, never the whole; c is freed once the store's death is logged. */
static void reply_cut_by_the_store(const srv_t *s, redisContext *c, const char *v, size_t n)
{
    bulk_reader_t b;
    bulk_reader_init(&b, c, v, n, 0, n);
    int rc;
    while ((rc = bulk_reader_step(&b, 4 * MB)) == 0)
        ;
    cr_assert_eq(rc, -1, "the client got the whole reply though the store died");
    cr_assert_gt(b.got, 2 * MB, "the parts before the kill arrived");
    redisFree(c);
    time_t deadline = time(NULL) + 60;
    while (!srv_log_contains(s, "store", "killed by signal 9")) {
        cr_assert_lt(time(NULL), deadline, "the fault did not fire");
        usleep(20000);
    }
}

/* Fault point "bigreply" (21): the store dies with a part of a reply
 * sent. Its client, which has part of a bulk, is disconnected (never given
 * bytes of another value); the respawned store serves the value whole. */
Test(bigvalues, store_killed_mid_reply)
{
    srv_t s;
    cr_assert_eq(srv_start_faults(&s, "store.bigreply:3:KILL", "--frontends 1"), 0);
    redisContext *c = conn(&s);
    size_t n = 12 * MB;
    char *v = pattern(n, 400);
    expect_status(c, redisCommand(c, "SET big %b", v, n), "OK", "SET 12 MB");
    send_command(c, "GET big");
    reply_cut_by_the_store(&s, c, v, n);
    c = conn(&s);
    expect_value(c, "big", v, n, "after the store's respawn");
    redisFree(c);
    free(v);
    finish(&s);
}

/* The frontend SIGKILLed while a reply in parts is half read: its client
 * loses the connection; the store drops the reply (its frontend is gone)
 * and serves the value whole to the respawned frontend's clients. */
Test(bigvalues, frontend_killed_mid_reply)
{
    srv_t s;
    cr_assert_eq(srv_start(&s, "--frontends 1"), 0);
    redisContext *c = conn(&s);
    /* Far more than the socket buffers and the frontend's 3 MB hold. */
    size_t n = 48 * MB;
    char *v = pattern(n, 500);
    expect_status(c, redisCommand(c, "SET big %b", v, n), "OK", "SET 48 MB");
    send_command(c, "GET big");
    bulk_reader_t b;
    bulk_reader_init(&b, c, v, n, 0, n);
    cr_assert_eq(bulk_reader_step(&b, 5 * MB), 0);
    kill(the_frontend(&s), SIGKILL);
    int rc;
    while ((rc = bulk_reader_step(&b, 4 * MB)) == 0)
        ;
    cr_assert_eq(rc, -1, "the whole reply came from a killed frontend");
    redisFree(c);
    time_t deadline = time(NULL) + 60;
    for (;;) {
        c = srv_connect(&s);
        redisReply *r = c ? redisCommand(c, "PING") : NULL;
        int ok = r && r->type == REDIS_REPLY_STATUS;
        if (r) freeReplyObject(r);
        if (ok) break;
        if (c) redisFree(c);
        cr_assert_lt(time(NULL), deadline, "no frontend after the kill");
        usleep(50000);
    }
    struct timeval tv = {120, 0};
    redisSetTimeout(c, tv);
    expect_value(c, "big", v, n, "after the frontend's respawn");
    redisFree(c);
    free(v);
    finish(&s);
}

/* ---- a checkpoint while a value is pending (D55) ---- */

/* The highest LSN of a checkpoint file in s's directory (0: none). */
static unsigned long long newest_checkpoint(const srv_t *s)
{
    DIR *d = opendir(s->dir);
    cr_assert_not_null(d);
    unsigned long long newest = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        unsigned long long at;
        if (strlen(e->d_name) == 32 && sscanf(e->d_name, "checkpoint-%16llx.ckpt", &at) == 1 &&
            at > newest)
            newest = at;
    }
    closedir(d);
    return newest;
}

/* Remove every checkpoint file of the stopped s: its restart replays the
 * whole log. */
static void remove_checkpoints(const srv_t *s)
{
    unsigned long long at;
    while ((at = newest_checkpoint(s)) != 0) {
        char path[512];
        snprintf(path, sizeof(path), "%s/checkpoint-%016llx.ckpt", s->dir, at);
        cr_assert_eq(unlink(path), 0, "%s", path);
    }
}

/* The digest of s now equals the one a replay of its whole log reaches
 * (after a clean stop whose checkpoint is removed with the others). */
static void expect_replay_digest(srv_t *s, const char *what)
{
    char before[64], after[64];
    digest(s, before);
    cr_assert_eq(srv_stop(s), 0, "%s: clean stop", what);
    remove_checkpoints(s);
    cr_assert_eq(srv_restart(s), 0, "%s: restart", what);
    digest(s, after);
    cr_assert_str_eq(after, before, "%s: the state a replay of the whole log reaches", what);
}

/* A client stops halfway through a large SET; another writes past
 * checkpoint-bytes: a checkpoint is written while the group is pending
 * (before D55 none was until the value ended); the store is SIGKILLed and
 * its respawn loads that checkpoint. Returns the half-sent connection. */
static redisContext *stalled_across_a_checkpoint(srv_t *s, const char *v, size_t n,
                                                 long long *live0)
{
    redisContext *raw = half_sent_set_opts(s, SMALL_RING " --checkpoint-bytes 1mb", v, n, live0);
    unsigned long long before = newest_checkpoint(s);
    redisContext *c = conn(s);
    char *filler = pattern(64 * 1024, 7);
    for (int i = 0; i < 40; i++)
        expect_status(c, redisCommand(c, "SET filler:%d %b", i, filler, (size_t)64 * 1024), "OK",
                      "SET filler");
    free(filler);
    time_t deadline = time(NULL) + 60;
    while (newest_checkpoint(s) <= before) {
        cr_assert_lt(time(NULL), deadline, "no checkpoint while the value is pending");
        usleep(20000);
    }
    cr_assert_gt(live_total(s, "at the checkpoint"), *live0 + (long long)MB,
                 "the value is still pending");
    redisFree(c);
    pid_t st;
    cr_assert_eq(srv_wait_children(s, "atticdb-server: store", &st, 1, 1), 1, "no store");
    kill(st, SIGKILL);
    deadline = time(NULL) + 60;
    while (!srv_log_contains(s, "loaded checkpoint", NULL)) {
        cr_assert_lt(time(NULL), deadline, "the respawned store loaded no checkpoint");
        usleep(20000);
    }
    return raw;
}

Test(bigvalues, a_value_pending_across_a_checkpoint_completes_after_a_restart_from_it)
{
    srv_t s;
    size_t n = 8 * MB;
    char *v = pattern(n, 21);
    long long live0;
    redisContext *raw = stalled_across_a_checkpoint(&s, v, n, &live0);
    send_bytes(raw, v, n, n / 2, n);
    cr_assert_eq(write(raw->fd, "\r\n", 2), 2);
    redisReply *r;
    cr_assert_eq(redisGetReply(raw, (void **)&r), REDIS_OK, "%s", raw->errstr);
    cr_assert_eq(r->type, REDIS_REPLY_STATUS, "the SET: %s", r->str);
    cr_assert_str_eq(r->str, "OK");
    freeReplyObject(r);
    redisFree(raw);
    redisContext *c = conn(&s);
    expect_value(c, "k", v, n, "the value whose first half was in the checkpoint");
    redisFree(c);
    cr_assert(!srv_log_contains(&s, "names no pending group", NULL), "the final found its parts");
    expect_replay_digest(&s, "completed after the restart");
    free(v);
    finish(&s);
}

Test(bigvalues, a_value_pending_across_a_checkpoint_is_dropped_when_its_frontend_dies)
{
    srv_t s;
    size_t n = 8 * MB;
    char *v = pattern(n, 22);
    long long live0;
    redisContext *raw = stalled_across_a_checkpoint(&s, v, n, &live0);
    frontend_dies_mid_value(&s, raw, live0 + 40 * 64 * 1024); /* the filler stays */
    expect_replay_digest(&s, "dropped after the restart");
    free(v);
    finish(&s);
}

/* ---- a large value's write reply in parts: GETDEL, GETEX, SET GET ---- */

/* Read one reply of c (hiredis) and check it: a null, or a status. */
static void expect_null(redisContext *c, const char *what)
{
    redisReply *r = NULL;
    cr_assert_eq(redisGetReply(c, (void **)&r), REDIS_OK, "%s", what);
    cr_assert_eq(r->type, REDIS_REPLY_NIL, "%s: type %d", what, r->type);
    freeReplyObject(r);
}

static void expect_next_status(redisContext *c, const char *want, const char *what)
{
    redisReply *r = NULL;
    cr_assert_eq(redisGetReply(c, (void **)&r), REDIS_OK, "%s", what);
    expect_status(c, r, want, what);
}

/* GETDEL of a 200 MB value replies in parts as GET does (D48): neither
 * the store nor the frontend holds the value (both stay within 64 MB of
 * their RSS before it, where a whole reply takes 200 MB in each); the
 * bytes are the value as it was at the apply, though it is deleted and
 * 100 MB of other writes, checkpoints and compaction run meanwhile (the
 * snapshot pins its log); the pipelined replies after it keep their
 * order; a restart replays to the same state. */
Test(bigvalues, getdel_of_200mb_replies_in_parts)
{
    srv_t s;
    cr_assert_eq(srv_start(&s, "--frontends 1 --segment-size 32mb --checkpoint-bytes 8mb"), 0);
    size_t n = 200 * MB, vn = MB + 11;
    char *v = pattern(vn, 600), *v2 = pattern(MB, 601);
    redisContext *c = conn(&s), *w = conn(&s);
    const char *args[] = {"SET", "big"};
    send_head(c, 3, args, n);
    send_bytes(c, v, vn, 0, n);
    cr_assert_eq(write(c->fd, "\r\n", 2), 2);
    expect_next_status(c, "OK", "SET 200 MB");
    pid_t fe = the_frontend(&s), st;
    cr_assert_eq(srv_wait_children(&s, "atticdb-server: store", &st, 1, 1), 1);
    long fe0 = proc_kb(fe, "VmRSS:"), st0 = proc_kb(st, "VmRSS:");
    send_command(c, "GETDEL big");
    send_command(c, "GET big");
    send_command(c, "SET small after");
    send_command(c, "GET small");
    bulk_reader_t b;
    bulk_reader_init(&b, c, v, vn, 0, n);
    cr_assert_eq(bulk_reader_step(&b, 6 * MB), 0);
    /* Meanwhile: the key is gone, and 100 MB of other writes. */
    cr_assert_eq(integer(w, "EXISTS mid-reply", "EXISTS big"), 0);
    for (int i = 0; i < 100; i++)
        expect_status(w, redisCommand(w, "SET filler%d %b", i % 4, v2, (size_t)MB), "OK", "filler");
    int rc;
    while ((rc = bulk_reader_step(&b, 4 * MB)) == 0)
        ;
    cr_assert_eq(rc, 1, "the GETDEL reply was cut after %zu bytes", b.got);
    long fe1 = proc_kb(fe, "VmHWM:"), st1 = proc_kb(st, "VmHWM:");
    cr_log_info("GETDEL 200 MB: frontend RSS %ld kB before, peak %ld kB; store %ld kB before, "
                "peak %ld kB",
                fe0, fe1, st0, st1);
    expect_rss_within(fe1 - fe0, "frontend peak %ld kB, %ld kB before", fe1, fe0);
    expect_rss_within(st1 - st0, "store peak %ld kB, %ld kB before", st1, st0);
    expect_null(c, "GET after GETDEL");
    expect_next_status(c, "OK", "the SET after it");
    redisReply *r = NULL;
    cr_assert_eq(redisGetReply(c, (void **)&r), REDIS_OK);
    cr_assert_eq(r->type, REDIS_REPLY_STRING);
    cr_assert_str_eq(r->str, "after");
    freeReplyObject(r);
    redisFree(c);
    redisFree(w);
    restarts_keep(&s, "after a GETDEL in parts");
    free(v);
    free(v2);
    finish(&s);
}

/* GETEX and SET GET (GETSET) of a large value reply in parts too; a
 * client that leaves mid-reply leaves the write done and the server
 * serving; inside MULTI a large GETDEL replies whole (the transaction is
 * one record, its reply one message). */
Test(bigvalues, getex_getset_and_a_transaction_with_large_replies)
{
    srv_t s;
    cr_assert_eq(srv_start(&s, "--frontends 1"), 0);
    redisContext *c = conn(&s);
    size_t n = 40 * MB;
    char *v = pattern(n, 700), *v2 = pattern(n, 701);
    expect_status(c, redisCommand(c, "SET big %b", v, n), "OK", "SET 40 MB");
    cr_assert_eq(integer(c, "EXPIRE", "EXPIRE big 1000"), 1);
    send_command(c, "GETEX big PERSIST");
    send_command(c, "TTL big");
    expect_bulk_read(c, v, n, 0, n);
    redisReply *r = NULL;
    cr_assert_eq(redisGetReply(c, (void **)&r), REDIS_OK);
    cr_assert_eq(r->type, REDIS_REPLY_INTEGER);
    cr_assert_eq(r->integer, -1, "TTL after GETEX PERSIST: %lld", r->integer);
    freeReplyObject(r);
    /* GETSET, then SET ... GET: the old value in parts, the new one set. */
    send_command(c, "GETSET big %b", v2, n);
    expect_bulk_read(c, v, n, 0, n);
    send_command(c, "SET big small GET");
    expect_bulk_read(c, v2, n, 0, n);
    expect_bulk(c, "small", 5, "after SET GET", "GET big");
    /* A client that leaves after the first parts of a GETDEL. */
    expect_status(c, redisCommand(c, "SET big %b", v, n), "OK", "SET again");
    redisContext *gone = conn(&s);
    send_command(gone, "GETDEL big");
    bulk_reader_t b;
    bulk_reader_init(&b, gone, v, n, 0, n);
    cr_assert_eq(bulk_reader_step(&b, 3 * MB), 0);
    redisFree(gone);
    cr_assert_eq(integer(c, "EXISTS after the reader left", "EXISTS big"), 0);
    /* Inside MULTI: whole. */
    expect_status(c, redisCommand(c, "SET big %b", v2, n), "OK", "SET for MULTI");
    expect_status(c, redisCommand(c, "MULTI"), "OK", "MULTI");
    expect_status(c, redisCommand(c, "GETDEL big"), "QUEUED", "GETDEL queued");
    r = redisCommand(c, "EXEC");
    cr_assert_not_null(r);
    cr_assert_eq(r->type, REDIS_REPLY_ARRAY);
    cr_assert_eq(r->elements, 1);
    cr_assert_eq(r->element[0]->len, n);
    cr_assert(memcmp(r->element[0]->str, v2, n) == 0, "EXEC's GETDEL: the bytes differ");
    freeReplyObject(r);
    cr_assert_eq(integer(c, "EXISTS after EXEC", "EXISTS big"), 0);
    redisFree(c);
    restarts_keep(&s, "after GETEX, GETSET and GETDEL in parts");
    free(v);
    free(v2);
    finish(&s);
}

/* Fault point "bigreply" (21) in a GETDEL's reply: the store dies with a
 * part sent. The client, which has part of a bulk, is disconnected (as
 * D48's GET); the deletion is durable and stays after the respawn; a
 * pipelined GETDEL on a new connection then replies in order. */
Test(bigvalues, store_killed_mid_getdel_reply)
{
    srv_t s;
    cr_assert_eq(srv_start_faults(&s, "store.bigreply:3:KILL", "--frontends 1"), 0);
    redisContext *c = conn(&s);
    size_t n = 12 * MB;
    char *v = pattern(n, 800);
    expect_status(c, redisCommand(c, "SET big %b", v, n), "OK", "SET 12 MB");
    expect_status(c, redisCommand(c, "SET big2 %b", v, n), "OK", "SET 12 MB");
    send_command(c, "GETDEL big");
    send_command(c, "PING");
    reply_cut_by_the_store(&s, c, v, n);
    c = conn(&s);
    cr_assert_eq(integer(c, "EXISTS after the respawn", "EXISTS big"), 0);
    send_command(c, "GETDEL big2");
    send_command(c, "GET big2");
    send_command(c, "PING");
    expect_bulk_read(c, v, n, 0, n);
    expect_null(c, "GET after GETDEL");
    expect_next_status(c, "PONG", "PING after it");
    redisFree(c);
    restarts_keep(&s, "after a store killed mid-GETDEL");
    free(v);
    finish(&s);
}
