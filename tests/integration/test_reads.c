/*
 * test_reads.c - read commands whose values the store reads in flight
 * (store/reads.c, docs/DECISIONS.md D59), against the real server: values
 * the page cache no longer holds come back whole from the device, in each
 * read-io (uring, buffered, pread) and across small segments, for GET,
 * MGET and GETRANGE of values of one record, of several (large values in
 * parts), and of pieces (APPEND, SETRANGE, SETBIT); replies on a
 * connection stay in request order whatever finishes first; a failed read
 * answers Redis-style for that command only; a store killed with reads in
 * flight answers them after its respawn; and compaction, deleting
 * segments while readers read old values, never serves bytes of a deleted
 * segment (contract 3: every reply is a value the key had).
 *
 * The test drops the data directory's pages from the page cache
 * (POSIX_FADV_DONTNEED) to make the store read from the device; INFO
 * atticdb_value_reads_device says it did.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

TestSuite(reads, .fini = srv_cleanup_all, .timeout = 240);

#define SMALL_LOG "--segment-size 1mb --ring-size 256kb"

/* Drop every file of the data directory from the page cache (the pages
 * the store has copied from stay: they are mapped). */
static void evict(const srv_t *s)
{
    DIR *d = opendir(s->dir);
    cr_assert_not_null(d);
    struct dirent *e;
    while ((e = readdir(d))) {
        char path[600];
        snprintf(path, sizeof(path), "%s/%s", s->dir, e->d_name);
        int fd = open(path, O_RDONLY);
        if (fd < 0) continue;
        posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
        close(fd);
    }
    closedir(d);
}

static unsigned long long info_num(redisContext *c, const char *field)
{
    char buf[64];
    return strtoull(srv_info_persistence(c, field, buf, sizeof(buf)), NULL, 10);
}

/* Key i's value in version v: len bytes, a header naming both, then bytes
 * that depend on them. */
static size_t value_of(int i, int v, size_t len, char *out)
{
    int h = snprintf(out, len + 1, "k%d:v%d:", i, v);
    for (size_t j = (size_t)h; j < len; j++)
        out[j] = (char)('a' + (i * 7 + v * 13 + (int)(j * 31 % 251)) % 26);
    return len;
}

static const size_t sizes[] = {25, 100, 4095, 4096, 4097, 10000, 70000, 300000};
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

typedef struct kv {
    char *v;
    size_t n;
} kv_t;

/* n keys of the sizes above; every fourth then grown by APPEND, every
 * fifth changed by SETRANGE inside, every seventh by SETBIT. */
static kv_t *fill(redisContext *c, int n)
{
    kv_t *kv = calloc((size_t)n, sizeof(*kv));
    int sent = 0;
    for (int i = 0; i < n; i++) {
        size_t len = sizes[i % NSIZES];
        kv[i].v = malloc(len + 400000);
        kv[i].n = value_of(i, 0, len, kv[i].v);
        redisAppendCommand(c, "SET k%d %b", i, kv[i].v, kv[i].n);
        sent++;
        if (i % 4 == 0) {
            char more[3000];
            size_t m = value_of(i, 1, 1000 + (size_t)i % 2000, more);
            memcpy(kv[i].v + kv[i].n, more, m);
            kv[i].n += m;
            redisAppendCommand(c, "APPEND k%d %b", i, more, m);
            sent++;
        }
        if (i % 5 == 0 && kv[i].n > 40) {
            memcpy(kv[i].v + 20, "SETRANGE", 8);
            redisAppendCommand(c, "SETRANGE k%d 20 SETRANGE", i);
            sent++;
        }
        if (i % 7 == 0) {
            kv[i].v[10] |= 0x01; /* bit 7 of byte 10 */
            redisAppendCommand(c, "SETBIT k%d 87 1", i);
            sent++;
        }
    }
    for (int k = 0; k < sent; k++) {
        redisReply *r;
        cr_assert_eq(redisGetReply(c, (void **)&r), REDIS_OK, "%s", c->errstr);
        cr_assert_neq(r->type, REDIS_REPLY_ERROR, "%s", r->str);
        freeReplyObject(r);
    }
    return kv;
}

/* n keys PREFIX<i> of len bytes (value_of(i, 0)), pipelined, all acked. */
static void set_many(redisContext *c, const char *prefix, int n, size_t len)
{
    char *val = malloc(len);
    for (int i = 0; i < n; i++)
        redisAppendCommand(c, "SET %s%d %b", prefix, i, val, value_of(i, 0, len, val));
    for (int i = 0; i < n; i++) {
        redisReply *r;
        cr_assert_eq(redisGetReply(c, (void **)&r), REDIS_OK, "%s", c->errstr);
        cr_assert_neq(r->type, REDIS_REPLY_ERROR, "%s", r->str);
        freeReplyObject(r);
    }
    free(val);
}

static void kv_free(kv_t *kv, int n)
{
    for (int i = 0; i < n; i++)
        free(kv[i].v);
    free(kv);
}

static void expect_value(redisReply *r, const kv_t *kv, int i, const char *what)
{
    cr_assert_not_null(r);
    cr_assert_eq(r->type, REDIS_REPLY_STRING, "%s k%d: type %d %s", what, i, r->type,
                 r->type == REDIS_REPLY_ERROR ? r->str : "");
    cr_assert_eq((size_t)r->len, kv[i].n, "%s k%d: %zu bytes, not %zu", what, i, (size_t)r->len,
                 kv[i].n);
    cr_assert_eq(memcmp(r->str, kv[i].v, kv[i].n), 0, "%s k%d: other bytes", what, i);
}

/* Every key by GET (pipelined, in a shuffled order), MGET of five, and
 * GETRANGE of a slice, all on one connection. */
static void check_all(redisContext *c, const kv_t *kv, int n)
{
    int *order = malloc(sizeof(int) * (size_t)n);
    for (int i = 0; i < n; i++)
        order[i] = (i * 37) % n;
    for (int i = 0; i < n; i++)
        redisAppendCommand(c, "GET k%d", order[i]);
    for (int i = 0; i + 5 <= n; i += 5)
        redisAppendCommand(c, "MGET k%d k%d nokey k%d k%d k%d", i, i + 1, i + 2, i + 3, i + 4);
    for (int i = 0; i < n; i++)
        redisAppendCommand(c, "GETRANGE k%d %lld %lld", i, (long long)(kv[i].n / 3),
                           (long long)(kv[i].n / 3 + 5000));
    for (int i = 0; i < n; i++) {
        redisReply *r;
        cr_assert_eq(redisGetReply(c, (void **)&r), REDIS_OK, "%s", c->errstr);
        expect_value(r, kv, order[i], "GET");
        freeReplyObject(r);
    }
    for (int i = 0; i + 5 <= n; i += 5) {
        redisReply *r;
        cr_assert_eq(redisGetReply(c, (void **)&r), REDIS_OK, "%s", c->errstr);
        cr_assert_eq(r->type, REDIS_REPLY_ARRAY);
        cr_assert_eq(r->elements, 6);
        int keys[] = {i, i + 1, -1, i + 2, i + 3, i + 4};
        for (int k = 0; k < 6; k++)
            if (keys[k] < 0)
                cr_assert_eq(r->element[k]->type, REDIS_REPLY_NIL);
            else
                expect_value(r->element[k], kv, keys[k], "MGET");
        freeReplyObject(r);
    }
    for (int i = 0; i < n; i++) {
        redisReply *r;
        cr_assert_eq(redisGetReply(c, (void **)&r), REDIS_OK, "%s", c->errstr);
        size_t from = kv[i].n / 3, to = from + 5000 < kv[i].n ? from + 5001 : kv[i].n;
        cr_assert_eq(r->type, REDIS_REPLY_STRING);
        cr_assert_eq((size_t)r->len, to - from, "GETRANGE k%d", i);
        cr_assert_eq(memcmp(r->str, kv[i].v + from, to - from), 0, "GETRANGE k%d", i);
        freeReplyObject(r);
    }
    free(order);
}

static void values_come_back_whole(const char *mode)
{
    srv_t s;
    char extra[256];
    snprintf(extra, sizeof(extra), "--frontends 2 %s --read-io %s", SMALL_LOG, mode);
    cr_assert_eq(srv_start(&s, extra), 0);
    redisContext *c = srv_connect(&s);
    const int n = 120;
    kv_t *kv = fill(c, n);
    char io[32];
    cr_assert_str_eq(srv_info_persistence(c, "atticdb_read_io", io, sizeof(io)), mode);
    evict(&s);
    check_all(c, kv, n);
    if (strcmp(mode, "pread"))
        cr_assert_gt(info_num(c, "atticdb_value_reads_device"), 0, "%s: nothing read in flight",
                     mode);
    /* Again, some from the page cache now, some not. */
    check_all(c, kv, n);
    redisFree(c);
    cr_assert_eq(srv_stop(&s), 0);
    cr_assert_eq(srv_restart(&s), 0); /* a restart reads the same log */
    c = srv_connect(&s);
    evict(&s);
    check_all(c, kv, n);
    redisFree(c);
    kv_free(kv, n);
    cr_assert_eq(srv_stop(&s), 0);
    srv_cleanup(&s);
}

Test(reads, values_read_in_flight_come_back_whole)
{
    values_come_back_whole("uring");
}

Test(reads, values_read_through_the_page_cache_come_back_whole)
{
    values_come_back_whole("buffered");
}

Test(reads, values_read_one_at_a_time_come_back_whole)
{
    values_come_back_whole("pread");
}

/* Reads of the device and of the page cache, and writes, interleaved on
 * one connection: replies in request order, each the value at its point
 * in the pipeline (a GET after a SET on the same connection sees it). */
Test(reads, replies_keep_request_order_whatever_finishes_first)
{
    srv_t s;
    cr_assert_eq(srv_start(&s, "--frontends 1 " SMALL_LOG), 0);
    redisContext *c = srv_connect(&s);
    const int n = 200;
    kv_t *kv = fill(c, n), *after = calloc((size_t)n, sizeof(*after));
    evict(&s);
    for (int i = 0; i < n; i++) {
        redisAppendCommand(c, "GET k%d", i);
        if (i % 10 == 3) {
            /* A new value written and read back in the same pipeline. */
            after[i].v = malloc(kv[i].n + 1);
            after[i].n = value_of(i, 9, kv[i].n, after[i].v);
            redisAppendCommand(c, "SET k%d %b", i, after[i].v, after[i].n);
            redisAppendCommand(c, "GET k%d", i);
        }
    }
    for (int i = 0; i < n; i++) {
        redisReply *r;
        cr_assert_eq(redisGetReply(c, (void **)&r), REDIS_OK, "%s", c->errstr);
        expect_value(r, kv, i, "GET");
        freeReplyObject(r);
        if (i % 10 == 3) {
            cr_assert_eq(redisGetReply(c, (void **)&r), REDIS_OK);
            cr_assert_str_eq(r->str, "OK");
            freeReplyObject(r);
            cr_assert_eq(redisGetReply(c, (void **)&r), REDIS_OK);
            expect_value(r, after, i, "GET after SET");
            freeReplyObject(r);
        }
    }
    redisFree(c);
    kv_free(kv, n);
    kv_free(after, n);
    cr_assert_eq(srv_stop(&s), 0);
    srv_cleanup(&s);
}

/* The 3rd read of the log fails (EIO): that GET gets Redis-style error
 * text, every other one its value, and the server serves on. */
Test(reads, a_failed_read_answers_that_command_only)
{
    srv_t s;
    cr_assert_eq(srv_start_faults(&s, "store.pread:3:EIO", "--frontends 1 " SMALL_LOG), 0);
    redisContext *c = srv_connect(&s);
    char val[5000];
    for (int i = 0; i < 40; i++) {
        size_t n = value_of(i, 0, sizeof(val), val);
        redisReply *r = redisCommand(c, "SET f%d %b", i, val, n);
        freeReplyObject(r);
    }
    evict(&s);
    int errors = 0;
    for (int i = 0; i < 40; i++) {
        redisReply *r = redisCommand(c, "GET f%d", i);
        cr_assert_not_null(r, "%s", c->errstr);
        if (r->type == REDIS_REPLY_ERROR) {
            cr_assert_str_eq(r->str, "ERR I/O error reading the value from the log");
            errors++;
            freeReplyObject(r);
            r = redisCommand(c, "GET f%d", i); /* the fault fired once */
        }
        value_of(i, 0, sizeof(val), val);
        cr_assert_eq(r->type, REDIS_REPLY_STRING);
        cr_assert_eq(r->len, (int)sizeof(val));
        cr_assert_eq(memcmp(r->str, val, sizeof(val)), 0, "f%d", i);
        freeReplyObject(r);
    }
    cr_assert_eq(errors, 1);
    redisFree(c);
    cr_assert_eq(srv_stop(&s), 0);
    srv_cleanup(&s);
}

/* The same for BITFIELD_RO, whose reply is one entry per GET: the failed
 * read answers that command's error alone, never half an array, and the
 * store serves on (it stopped there, before: a read is not an apply). */
Test(reads, a_failed_read_of_bitfield_ro_answers_that_command_only)
{
    srv_t s;
    cr_assert_eq(srv_start_faults(&s, "store.pread:3:EIO", "--frontends 1 " SMALL_LOG), 0);
    redisContext *c = srv_connect(&s);
    char val[5000];
    for (int i = 0; i < 40; i++) {
        value_of(i, 0, sizeof(val), val);
        redisReply *r = redisCommand(c, "SET f%d %b", i, val, sizeof(val));
        freeReplyObject(r);
    }
    pid_t store[2], after[2];
    cr_assert_eq(srv_wait_children(&s, "atticdb-server: store", store, 2, 1), 1);
    evict(&s);
    int errors = 0;
    for (int i = 0; i < 40; i++) {
        const char *cmd = "BITFIELD_RO f%d GET u8 0 GET u16 39000 GET u8 80000";
        redisReply *r = redisCommand(c, cmd, i);
        cr_assert_not_null(r, "%s", c->errstr);
        if (r->type == REDIS_REPLY_ERROR) {
            cr_assert_str_eq(r->str, "ERR I/O error reading the value from the log");
            errors++;
            freeReplyObject(r);
            r = redisCommand(c, cmd, i); /* the fault fired once */
        }
        value_of(i, 0, sizeof(val), val);
        cr_assert_eq(r->type, REDIS_REPLY_ARRAY);
        cr_assert_eq(r->elements, 3);
        const unsigned char *u = (const unsigned char *)val;
        cr_expect_eq(r->element[0]->integer, u[0], "f%d", i);
        cr_expect_eq(r->element[1]->integer, u[4875] << 8 | u[4876], "f%d", i);
        cr_expect_eq(r->element[2]->integer, 0, "past the end");
        freeReplyObject(r);
    }
    cr_assert_eq(errors, 1);
    cr_assert_eq(srv_wait_children(&s, "atticdb-server: store", after, 2, 1), 1);
    cr_expect_eq(after[0], store[0], "the store did not stop");
    redisFree(c);
    cr_assert_eq(srv_stop(&s), 0);
    srv_cleanup(&s);
}

/* Reads in flight when the store is SIGKILLed: their requests are still
 * in the channel, and the respawned store answers every one. */
Test(reads, store_killed_with_reads_in_flight_answers_them_after)
{
    srv_t s;
    cr_assert_eq(srv_start(&s, "--frontends 1 " SMALL_LOG), 0);
    redisContext *c = srv_connect(&s);
    struct timeval patient = {30, 0}; /* a respawn with back-off */
    redisSetTimeout(c, patient);
    const int n = 400;
    char *val = malloc(8192);
    set_many(c, "d", n, 8192);
    pid_t store;
    cr_assert_eq(srv_wait_children(&s, "atticdb-server: store", &store, 1, 1), 1);
    for (int round = 0; round < 3; round++) {
        evict(&s);
        for (int i = 0; i < n; i++)
            redisAppendCommand(c, "GET d%d", i);
        int wdone = 0;
        cr_assert_eq(redisBufferWrite(c, &wdone), REDIS_OK); /* sent before the kill */
        while (!wdone)
            cr_assert_eq(redisBufferWrite(c, &wdone), REDIS_OK);
        usleep(1000 * (unsigned)round);
        cr_assert_eq(kill(store, SIGKILL), 0);
        for (int i = 0; i < n; i++) {
            redisReply *r;
            cr_assert_eq(redisGetReply(c, (void **)&r), REDIS_OK, "%s", c->errstr);
            value_of(i, 0, 8192, val);
            cr_assert_eq(r->type, REDIS_REPLY_STRING, "round %d d%d: %s", round, i,
                         r->type == REDIS_REPLY_ERROR ? r->str : "");
            cr_assert_eq(memcmp(r->str, val, 8192), 0, "round %d d%d", round, i);
            freeReplyObject(r);
        }
        pid_t again;
        for (int k = 0; k < 200; k++) {
            if (srv_find_children(&s, "atticdb-server: store", &again, 1) == 1 && again != store)
                break;
            usleep(10000);
        }
        cr_assert_neq(again, store, "the store was respawned");
        store = again;
    }
    free(val);
    redisFree(c);
    cr_assert_eq(srv_stop(&s), 0);
    srv_cleanup(&s);
}

/* Writers overwrite keys while a reader reads them from the device, with
 * small segments, frequent checkpoints and compaction on: segments are
 * deleted under reads in flight, and every GET still answers one of the
 * values its key had, whole (a deleted segment's bytes would not be). */
Test(reads, compaction_never_deletes_what_a_read_in_flight_reads)
{
    srv_t s;
    cr_assert_eq(srv_start(&s, "--frontends 2 " SMALL_LOG " --checkpoint-bytes 2mb "
                               "--space-amplification-target 1.5"),
                 0);
    redisContext *w = srv_connect(&s), *rd = srv_connect(&s);
    const int n = 100, len = 6000;
    char *val = malloc((size_t)len), *want = malloc((size_t)len);
    int version[100] = {0};
    for (int i = 0; i < n; i++) { /* every key exists before the reader starts */
        redisReply *r = redisCommand(w, "SET c%d %b", i, val, value_of(i, 0, (size_t)len, val));
        freeReplyObject(r);
    }
    for (int round = 1; round < 60; round++) {
        /* A round of overwrites, pipelined... */
        for (int i = 0; i < n; i++)
            redisAppendCommand(w, "SET c%d %b", i, val,
                               value_of(i, round * 1000 + i, (size_t)len, val));
        int wdone = 0;
        while (!wdone)
            cr_assert_eq(redisBufferWrite(w, &wdone), REDIS_OK);
        /* ...while the reader reads every key from the device. */
        evict(&s);
        for (int i = 0; i < n; i++)
            redisAppendCommand(rd, "GET c%d", i);
        for (int i = 0; i < n; i++) {
            redisReply *r;
            cr_assert_eq(redisGetReply(rd, (void **)&r), REDIS_OK, "%s", rd->errstr);
            cr_assert_eq(r->type, REDIS_REPLY_STRING, "c%d: %s", i,
                         r->type == REDIS_REPLY_ERROR ? r->str : "nil");
            int ki, v;
            cr_assert_eq(sscanf(r->str, "k%d:v%d:", &ki, &v), 2, "c%d: a value's head", i);
            cr_assert_eq(ki, i);
            cr_assert_geq(v, version[i], "c%d went back in time", i);
            value_of(i, v, (size_t)len, want);
            cr_assert_eq(r->len, len);
            cr_assert_eq(memcmp(r->str, want, (size_t)len), 0, "c%d v%d: other bytes", i, v);
            version[i] = v;
            freeReplyObject(r);
        }
        for (int i = 0; i < n; i++) {
            redisReply *r;
            cr_assert_eq(redisGetReply(w, (void **)&r), REDIS_OK, "%s", w->errstr);
            freeReplyObject(r);
        }
    }
    cr_assert_gt(info_num(rd, "atticdb_log_start_lsn"), 0, "segments were deleted");
    cr_assert_gt(info_num(rd, "atticdb_value_reads_device"), 0);
    free(val);
    free(want);
    redisFree(w);
    redisFree(rd);
    cr_assert_eq(srv_stop(&s), 0);
    srv_cleanup(&s);
}

/* A kB figure of /proc/<pid>/status ("RssFile:"). */
static long proc_kb(pid_t pid, const char *field)
{
    char path[64], line[256];
    snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f);
    long v = -1;
    while (fgets(line, sizeof(line), f))
        if (strncmp(line, field, strlen(field)) == 0) v = strtol(line + strlen(field), NULL, 10);
    fclose(f);
    return v;
}

static long long info_memory(redisContext *c, const char *field)
{
    redisReply *r = redisCommand(c, "INFO memory");
    cr_assert_eq(r->type, REDIS_REPLY_STRING);
    const char *p = strstr(r->str, field);
    cr_assert_not_null(p, "INFO lacks %s", field);
    long long v = strtoll(p + strlen(field), NULL, 10);
    freeReplyObject(r);
    return v;
}

/* Values copied out of the page cache map the log's pages into the store
 * (its RssFile grows by what was read); used_memory_rss counts what the
 * server holds, not the kernel's cache, so it does not grow with them. */
Test(reads, used_memory_rss_leaves_out_the_log_pages_the_store_maps)
{
    srv_t s;
    cr_assert_eq(srv_start(&s, "--frontends 1"), 0);
    redisContext *c = srv_connect(&s);
    const int n = 12000, len = 4096;
    set_many(c, "m", n, (size_t)len);
    pid_t store;
    cr_assert_eq(srv_wait_children(&s, "atticdb-server: store", &store, 1, 1), 1);
    long file0 = proc_kb(store, "RssFile:");
    long long rss0 = info_memory(c, "used_memory_rss:");
    /* 100 at a time: replies waiting in buffers are not what is measured. */
    for (int i = 0; i < n; i += 100) {
        for (int k = i; k < i + 100; k++)
            redisAppendCommand(c, "GET m%d", k);
        for (int k = i; k < i + 100; k++) {
            redisReply *r;
            cr_assert_eq(redisGetReply(c, (void **)&r), REDIS_OK);
            cr_assert_eq(r->len, len);
            freeReplyObject(r);
        }
    }
    long file1 = proc_kb(store, "RssFile:");
    long long rss1 = info_memory(c, "used_memory_rss:");
    cr_log_info("store RssFile %ld -> %ld kB; used_memory_rss %lld -> %lld", file0, file1, rss0,
                rss1);
    cr_assert_gt(file1 - file0, 30 * 1024, "the values were copied from the mapping");
    if (SRV_RSS_BOUNDS)
        cr_assert_lt(rss1 - rss0, 16ll << 20, "used_memory_rss grew with the log's pages");
    redisFree(c);
    cr_assert_eq(srv_stop(&s), 0);
    srv_cleanup(&s);
}
