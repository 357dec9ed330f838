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
