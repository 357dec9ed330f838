/*
 * test_check.c - atticdb-check against data directories the real server
 * wrote: a whole log verifies; damage in the middle is found and named, the
 * server refuses to start on it, and a cut at the damage lets it start again.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ckpt.h"
#include "harness.h"

TestSuite(check, .fini = srv_cleanup_all, .timeout = 60);

static int run_check(const char *args, char *out, size_t outlen)
{
    return srv_run_tool("atticdb-check", args, out, outlen);
}

Test(check, whole_log_damage_and_cut)
{
    srv_t s;
    cr_assert_eq(srv_start(&s, "--frontends 1 --segment-size 1mb --ring-size 256kb"), 0);
    redisContext *c = srv_connect(&s);
    for (int i = 0; i < 500; i++) {
        redisReply *r = redisCommand(c, "SET key:%d value-%d", i, i);
        freeReplyObject(r);
    }
    redisFree(c);
    cr_assert_eq(srv_stop(&s), 0);

    char out[8192];
    cr_assert_eq(run_check(s.dir, out, sizeof(out)), 0, "%s", out);
    cr_assert(strstr(out, "records: 500 ") != NULL, "%s", out);

    /* Damage inside the log, with good records after it. */
    char path[512];
    snprintf(path, sizeof(path), "%s/log-0000000000000000.seg", s.dir);
    FILE *f = fopen(path, "r+");
    cr_assert_not_null(f);
    fseek(f, 5000, SEEK_SET);
    fwrite("\xde\xad\xbe\xef", 1, 4, f);
    fclose(f);
    cr_assert_eq(run_check(s.dir, out, sizeof(out)), 1, "%s", out);
    cr_assert(strstr(out, "DAMAGE") && strstr(out, "log-0000000000000000.seg offset"), "%s", out);
    const char *at = strstr(out, "no valid record at LSN ");
    cr_assert_not_null(at);
    unsigned long long lsn = strtoull(at + strlen("no valid record at LSN "), NULL, 10);
    cr_assert_leq(lsn, 5000);

    /* The server refuses to start on it, naming file and offset. */
    cr_assert_neq(srv_restart(&s), 0, "the server started on a damaged log");
    cr_assert(srv_log_contains(&s, "corrupt in the middle", "log-0000000000000000.seg"),
              "the server log does not name the damage");

    /* Cut there: the log verifies and the server starts with what precedes. */
    char args[600];
    snprintf(args, sizeof(args), "--cut %llu %s", lsn, s.dir);
    cr_assert_eq(run_check(args, out, sizeof(out)), 0, "%s", out);
    cr_assert_eq(run_check(s.dir, out, sizeof(out)), 0, "%s", out);
    cr_assert_eq(srv_restart(&s), 0);
    c = srv_connect(&s);
    redisReply *r = redisCommand(c, "GET key:0");
    cr_assert_eq(r->type, REDIS_REPLY_STRING);
    cr_assert_str_eq(r->str, "value-0");
    freeReplyObject(r);
    redisFree(c);
    /* --cut refuses while the server runs. */
    cr_assert_eq(run_check(args, out, sizeof(out)), 2, "%s", out);
    cr_assert(strstr(out, "in use") != NULL, "%s", out);
    srv_stop(&s);
    srv_cleanup(&s);
}

/* atticdb-check --cut through the I/O seam (role "check"): each of its
 * calls failing gives exit status 2 and names the step and the error,
 * the directory's fsync included (it used to be ignored). Cases go in the
 * order of the calls, so each failure leaves the later ones to come; a
 * clean cut afterwards still succeeds and the server starts. */
Test(check, cut_fails_cleanly_when_a_call_fails)
{
    static const struct {
        const char *spec, *msg;
    } cases[] = {
        {"check.opendir:1:EIO", "can't read"},
        {"check.stat:1:EIO", "can't stat"},
        {"check.open:1:EIO", "Can't open"},
        {"check.flock:1:EIO", "Can't lock"},
        {"check.unlink:1:EIO", "can't remove"},
        {"check.fsync:1:EIO", "can't fsync the data directory"},
        {"check.fdatasync:1:EIO", "can't fdatasync"},
    };
    srv_t s;
    cr_assert_eq(srv_start(&s, "--frontends 1 --segment-size 1mb --ring-size 256kb"), 0);
    redisContext *c = srv_connect(&s);
    char val[2048];
    memset(val, 'c', sizeof(val) - 1);
    val[sizeof(val) - 1] = '\0';
    for (int i = 0; i < 800; i++) /* into a second segment: one to remove */
        freeReplyObject(redisCommand(c, "SET c:%d %s", i, val));
    redisFree(c);
    cr_assert_eq(srv_stop(&s), 0);
    char args[600], out[8192];
    snprintf(args, sizeof(args), "--cut 65536 %s", s.dir);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        setenv("ATTICDB_TEST_FAULTS", cases[i].spec, 1);
        int status = run_check(args, out, sizeof(out));
        unsetenv("ATTICDB_TEST_FAULTS");
        cr_assert_eq(status, 2, "%s: exit status %d:\n%s", cases[i].spec, status, out);
        cr_assert(strstr(out, cases[i].msg) && strstr(out, "Input/output error"), "%s: %s",
                  cases[i].spec, out);
        cr_assert(!strstr(out, "log cut at"), "%s: %s", cases[i].spec, out);
    }
    cr_assert_eq(run_check(args, out, sizeof(out)), 0, "%s", out);
    cr_assert_eq(srv_restart(&s), 0);
    c = srv_connect(&s);
    redisReply *r = redisCommand(c, "STRLEN c:0");
    cr_assert_eq(r->integer, (long long)strlen(val));
    freeReplyObject(r);
    redisFree(c);
    cr_assert_eq(srv_stop(&s), 0);
    srv_cleanup(&s);
}

/* Rewrite the checkpoint at path block by block (same header, same
 * blocks), with the ACCESS blocks' payloads through damage(): the CRCs are
 * right, so only the access data's sense can make it invalid. */
static void rewrite_access(const char *dir, const char *path,
                           void (*damage)(unsigned char *p, uint64_t *n, uint32_t *items))
{
    ckpt_reader_t r;
    cr_assert_eq(ckpt_reader_open(&r, path, 0), 0, "%s", r.err);
    ckpt_writer_t w;
    cr_assert_eq(ckpt_writer_open(&w, dir, &r.info), 0);
    int damaged = 0;
    for (;;) {
        uint32_t type, items;
        const unsigned char *p;
        uint64_t n;
        int k = ckpt_reader_next(&r, &type, &items, &p, &n);
        cr_assert_geq(k, 0, "%s", r.err);
        if (k == 0) break;
        unsigned char *copy = malloc(n ? n : 1);
        memcpy(copy, p, n);
        if (type == CKPT_BLK_ACCESS && !damaged++) damage(copy, &n, &items);
        ckpt_put(&w, type, copy, n);
        w.items = items; /* as read: ckpt_item_done would split a large block */
        cr_assert_eq(ckpt_flush_block(&w), 0);
        free(copy);
    }
    cr_assert(damaged, "the checkpoint has no access data");
    ckpt_reader_close(&r);
    cr_assert_eq(ckpt_writer_commit(&w), 0);
}

static void bits_past_24(unsigned char *p, uint64_t *n, uint32_t *items)
{
    (void)n, (void)items;
    uint32_t bits = 1u << 24;
    memcpy(p + 8, &bits, 4); /* the first item's bits */
}

static void one_item_less(unsigned char *p, uint64_t *n, uint32_t *items)
{
    uint32_t klen;
    memcpy(&klen, p + 4, 4);
    memmove(p, p + 12 + klen, *n - 12 - klen); /* the first item gone */
    *n -= 12 + klen;
    (*items)--;
}

static void trailing_bytes(unsigned char *p, uint64_t *n, uint32_t *items)
{
    (void)p, (void)items;
    (*n)--; /* the last item's key cut short by one byte */
}

/* atticdb-check lists a checkpoint's access data (block type 6, D49) with
 * its item and block counts, and refuses it as the store's loader does:
 * bits past 24, an item less than the keys, an item cut short; in each
 * case the server too skips the file ("malformed access data") and
 * replays the log instead, with every key there. */
Test(check, access_data_listed_and_verified_as_the_loader_does)
{
    void (*damages[])(unsigned char *, uint64_t *, uint32_t *) = {bits_past_24, one_item_less,
                                                                  trailing_bytes};
    const char *whys[] = {"an item cut short, past the last database or with bits past 24",
                          "not one item per key", "an item cut short"};
    for (size_t d = 0; d < sizeof damages / sizeof damages[0]; d++) {
        srv_t s;
        cr_assert_eq(srv_start(&s, "--frontends 1"), 0);
        redisContext *c = srv_connect(&s);
        for (int i = 0; i < 300; i++)
            freeReplyObject(redisCommand(c, "SET key:%d v", i));
        freeReplyObject(redisCommand(c, "SELECT 3"));
        for (int i = 0; i < 5; i++)
            freeReplyObject(redisCommand(c, "SET other:%d v", i));
        redisFree(c);
        cr_assert_eq(srv_stop(&s), 0); /* a clean stop writes a checkpoint */

        char out[8192];
        cr_assert_eq(run_check(s.dir, out, sizeof(out)), 0, "%s", out);
        cr_assert(strstr(out, "305 keys in 16 databases") &&
                      strstr(out, "access data: 305 items in 1 blocks"),
                  "%s", out);
        uint64_t *v;
        size_t n;
        cr_assert_eq(ckpt_list(s.dir, 0, &v, &n), 0);
        cr_assert_eq(n, 1);
        char path[4096];
        ckpt_path(path, sizeof(path), s.dir, v[0], 0);
        free(v);
        rewrite_access(s.dir, path, damages[d]);
        cr_assert_eq(run_check(s.dir, out, sizeof(out)), 1, "%s", out);
        char want[200];
        snprintf(want, sizeof(want), "INVALID (malformed access data (%s", whys[d]);
        cr_assert(strstr(out, want), "want \"%s\" in:\n%s", want, out);

        cr_assert_eq(srv_restart(&s), 0);
        c = srv_connect(&s);
        redisReply *r = redisCommand(c, "DBSIZE");
        cr_assert_eq(r->integer, 300, "the log replayed instead");
        freeReplyObject(r);
        redisFree(c);
        cr_assert(srv_log_contains(&s, "malformed access data", NULL),
                  "the server did not refuse the file too");
        srv_stop(&s);
        srv_cleanup(&s);
    }
}
