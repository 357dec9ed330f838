/*
 * test_cmds_tools.c - AtticDB driven by real tools and its own replies
 * (split from test_commands.c): redis-cli and redis-benchmark against
 * AtticDB (each skipped when not installed; redis-cli's output is also
 * checked on a redis-server when there is one), INFO persistence, COMMAND,
 * COMMAND COUNT, CONFIG GET, and keys read back after a restart.
 *
 * Environment: ATTICDB_SERVER (the server binary), REDIS_SERVER (default:
 * redis-server from PATH; the differential tests are skipped without it)
 * for the redis-cli check; the rest needs AtticDB only).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "redis_diff.h"

static int tool_exists(const char *name)
{
    char cmd[256];
    snprintf(cmd, sizeof(cmd), "command -v %s >/dev/null 2>&1", name);
    return system(cmd) == 0;
}

TestSuite(cmds, .fini = rdiff_teardown, .timeout = 60);

/* ------------------------------------------------------------------ */
/* real tools                                                          */

static char *run_capture(const char *cmd, int *status)
{
    FILE *f = popen(cmd, "r");
    cr_assert_not_null(f, "popen %s", cmd);
    wire_buf_t b = {0};
    char tmp[4096];
    size_t n;
    while ((n = fread(tmp, 1, sizeof(tmp), f)) > 0)
        wire_buf_add(&b, tmp, n);
    *status = pclose(f);
    return b.p ? b.p : strdup("");
}

Test(cmds, redis_cli)
{
    if (!tool_exists("redis-cli")) cr_skip_test("redis-cli not installed");
    int have_redis = wire_redis_path() != NULL;
    if (have_redis) cr_assert_eq(rdiff_redis_start(NULL), 0, "redis-server did not start");
    rdiff_start_atticdb();
    const char *scripts[][2] = {
        {"redis-cli -p %d set a b", "OK\n"},
        {"redis-cli -p %d get a", "b\n"},
        {"redis-cli -p %d get nope", "\n"},
        {"redis-cli -p %d incr a", "ERR value is not an integer or out of range\n\n"},
        {"redis-cli -p %d mget a nope", "b\n\n"},
        {"redis-cli -p %d del a a", "1\n"},
        {"printf 'set x 1\\nincr x\\nget x\\n' | redis-cli -p %d", "OK\n2\n2\n"},
        {"printf 'set y \"hello world\"\\nappend y !\\nget y\\nstrlen y\\nexists y x nope\\n' | "
         "redis-cli -p %d",
         "OK\n12\nhello world!\n12\n2\n"},
        {"printf 'ping\\necho hi\\nselect 0\\ndbsize\\n' | redis-cli -p %d", "PONG\nhi\nOK\n2\n"},
        {"redis-cli -p %d --no-raw ttl x", "(integer) -1\n"},
        {"echo value-from-stdin | redis-cli -p %d -x set z", "OK\n"},
        {"redis-cli -p %d get z", "value-from-stdin\n\n"},
    };
    for (size_t i = 0; i < sizeof(scripts) / sizeof(scripts[0]); i++) {
        char cmd[512];
        int st;
        snprintf(cmd, sizeof(cmd), scripts[i][0], rdiff_atticdb.port);
        char *out = run_capture(cmd, &st);
        char *e = wire_escape(out, strlen(out), 300);
        cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s: exit status %d", cmd, st);
        cr_expect_str_eq(out, scripts[i][1], "atticdb: %s -> %s", cmd, e);
        free(e);
        free(out);
        if (have_redis) {
            snprintf(cmd, sizeof(cmd), scripts[i][0], rdiff_redis.port);
            out = run_capture(cmd, &st);
            cr_expect_str_eq(out, scripts[i][1], "(test check) redis: %s", cmd);
            free(out);
        }
    }
}

Test(cmds, redis_benchmark, .timeout = 90)
{
    if (!tool_exists("redis-benchmark")) cr_skip_test("redis-benchmark not installed");
    rdiff_start_atticdb();
    char cmd[256];
    snprintf(
        cmd, sizeof(cmd),
        "timeout 60 redis-benchmark -h 127.0.0.1 -p %d -t set,get -n 20000 -c 16 -d 256 -q 2>&1",
        rdiff_atticdb.port);
    int st;
    char *out = run_capture(cmd, &st);
    char *e = wire_escape(out, strlen(out), 2000);
    cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "redis-benchmark exit status %d; output %s",
              st, e);
    cr_expect(strstr(out, "SET: ") != NULL, "no SET line in %s", e);
    cr_expect(strstr(out, "GET: ") != NULL, "no GET line in %s", e);
    cr_expect(strstr(out, "rror") == NULL && strstr(out, "ERR") == NULL, "errors in %s", e);
    free(e);
    free(out);
    /* the server is still fine */
    wire_conn_t *c = wire_open(rdiff_atticdb.port, 10);
    cr_assert_not_null(c);
    cr_expect_str_eq(ONE(c, "DBSIZE"), ":1\r\n",
                     "redis-benchmark -t set,get uses the one key key:__rand_int__");
    cr_expect_eq(reply_int(ONE(c, "STRLEN", "key:__rand_int__")), 256);
    wire_close(c);
}

/* ------------------------------------------------------------------ */
/* AtticDB only                                                        */

static long long info_field(wire_conn_t *c, const char *section, const char *field)
{
    const char *r = ONE(c, "INFO", section);
    cr_assert(r[0] == '$', "INFO %s: %s", section, r);
    char pat[128];
    snprintf(pat, sizeof(pat), "\r\n%s:", field);
    const char *p = strstr(r, pat);
    cr_assert_not_null(p, "INFO %s has no %s: %s", section, field, r);
    return strtoll(p + strlen(pat), NULL, 10);
}

Test(cmds, info_persistence)
{
    rdiff_start_atticdb();
    wire_conn_t *c = wire_open(rdiff_atticdb.port, 10);
    cr_assert_not_null(c);
    const char *r = ONE(c, "INFO", "persistence");
    cr_expect(strstr(r, "# Persistence\r\n") != NULL, "INFO persistence: %s", r);
    cr_expect(strstr(r, "\r\natticdb_fsyncs:") != NULL, "INFO persistence: %s", r);
    cr_expect(strstr(r, "\r\natticdb_records:") != NULL, "INFO persistence: %s", r);
    long long rec0 = info_field(c, "persistence", "atticdb_records");
    long long fs0 = info_field(c, "persistence", "atticdb_fsyncs");
    for (int i = 0; i < 10; i++) {
        char k[16];
        snprintf(k, sizeof(k), "k%d", i);
        cr_assert_str_eq(ONE(c, "SET", k, "v"), "+OK\r\n");
    }
    cr_assert_str_eq(ONE(c, "INCR", "n"), ":1\r\n");
    long long rec1 = info_field(c, "persistence", "atticdb_records");
    long long fs1 = info_field(c, "persistence", "atticdb_fsyncs");
    cr_expect(rec1 > rec0, "atticdb_records %lld -> %lld after 11 acknowledged writes", rec0, rec1);
    cr_expect(fs1 > fs0, "atticdb_fsyncs %lld -> %lld after 11 acknowledged writes", fs0, fs1);
    /* The counters may trail the acknowledgement a little; within 2 s
     * they count all 11 records. */
    for (int i = 0; i < 200 && rec1 < rec0 + 11; i++) {
        usleep(10000);
        rec1 = info_field(c, "persistence", "atticdb_records");
    }
    cr_expect(rec1 >= rec0 + 11, "atticdb_records %lld -> %lld after 11 acknowledged writes", rec0,
              rec1);
    /* reads log nothing */
    cr_assert_str_eq(ONE(c, "GET", "k1"), "$1\r\nv\r\n");
    usleep(50000);
    long long rec2 = info_field(c, "persistence", "atticdb_records");
    cr_expect_eq(rec2, rec1, "a GET added log records: %lld -> %lld", rec1, rec2);
    /* whole INFO works too, and is a bulk string */
    r = ONE(c, "INFO");
    cr_expect(r[0] == '$' && strstr(r, "atticdb_records:") != NULL, "INFO: %.200s", r);
    wire_close(c);
}

Test(cmds, command_count_and_config)
{
    rdiff_start_atticdb();
    redisContext *c = srv_connect(&rdiff_atticdb);
    cr_assert_not_null(c);
    redisReply *cnt = redisCommand(c, "COMMAND COUNT");
    cr_assert_not_null(cnt);
    cr_assert_eq(cnt->type, REDIS_REPLY_INTEGER, "COMMAND COUNT type %d", cnt->type);
    redisReply *all = redisCommand(c, "COMMAND");
    cr_assert_not_null(all);
    cr_assert_eq(all->type, REDIS_REPLY_ARRAY, "COMMAND type %d", all->type);
    cr_expect_eq((long long)all->elements, cnt->integer,
                 "COMMAND has %zu entries, COMMAND COUNT says %lld", all->elements, cnt->integer);
    /* every command the README lists is there, with a name */
    const char *want[] = {"ping",    "echo",     "quit",    "select",  "dbsize",   "set",
                          "get",     "del",      "exists",  "mset",    "mget",     "incr",
                          "incrby",  "decr",     "decrby",  "append",  "strlen",   "getdel",
                          "ttl",     "pttl",     "expire",  "pexpire", "expireat", "pexpireat",
                          "persist", "flushall", "command", "info",    "config"};
    for (size_t w = 0; w < sizeof(want) / sizeof(want[0]); w++) {
        int found = 0;
        for (size_t i = 0; i < all->elements; i++) {
            redisReply *e = all->element[i];
            if (e->type == REDIS_REPLY_ARRAY && e->elements > 0 &&
                e->element[0]->type == REDIS_REPLY_STRING &&
                strcasecmp(e->element[0]->str, want[w]) == 0)
                found = 1;
        }
        cr_expect(found, "COMMAND has no entry for %s", want[w]);
    }
    freeReplyObject(cnt);
    freeReplyObject(all);

    char buf[4096];
    srv_cmd_raw(c, buf, sizeof(buf), "CONFIG GET save");
    redisReply *r = redisCommand(c, "CONFIG GET save");
    cr_assert_not_null(r);
    cr_expect_eq(r->type, REDIS_REPLY_ARRAY, "CONFIG GET save: %s", buf);
    cr_expect_eq(r->elements, 2, "CONFIG GET save: %s", buf);
    if (r->type == REDIS_REPLY_ARRAY && r->elements == 2)
        cr_expect_str_eq(r->element[0]->str, "save", "CONFIG GET save: %s", buf);
    freeReplyObject(r);
    /* CONFIG SET save, as tools and Redis' own test suite send it, is
     * accepted and changes nothing: no snapshots are taken (save ""). */
    const char *saves[] = {"", "900 1", "3600 1 300 100"};
    for (size_t i = 0; i < sizeof saves / sizeof saves[0]; i++) {
        r = redisCommand(c, "CONFIG SET save %s", saves[i]);
        cr_assert_not_null(r);
        cr_expect(r->type == REDIS_REPLY_STATUS && !strcmp(r->str, "OK"),
                  "CONFIG SET save '%s': %s", saves[i], r->str ? r->str : "");
        freeReplyObject(r);
        r = redisCommand(c, "CONFIG GET save");
        cr_assert(r && r->type == REDIS_REPLY_ARRAY && r->elements == 2);
        cr_expect_str_eq(r->element[1]->str, "", "CONFIG GET save after '%s'", saves[i]);
        freeReplyObject(r);
    }
    r = redisCommand(c, "CONFIG SET save %s", "900");
    cr_assert_not_null(r);
    cr_expect(r->type == REDIS_REPLY_ERROR && strstr(r->str, "Invalid save parameters"),
              "CONFIG SET save 900: %s", r->str ? r->str : "");
    freeReplyObject(r);
    /* what redis-benchmark asks at start */
    r = redisCommand(c, "CONFIG GET appendonly");
    cr_assert_not_null(r);
    cr_expect_eq(r->type, REDIS_REPLY_ARRAY, "CONFIG GET appendonly: type %d", r->type);
    freeReplyObject(r);
    srv_cmd_raw(c, buf, sizeof(buf), "COMMAND INFO get");
    cr_expect(buf[0] == '*', "COMMAND INFO get: %s", buf);
    redisFree(c);
}

Test(cmds, keys_read_back_after_restart)
{
    rdiff_start_atticdb();
    wire_conn_t *c = wire_open(rdiff_atticdb.port, 10);
    cr_assert_not_null(c);
    char big[3000];
    memset(big, 'z', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    cr_assert_str_eq(ONE(c, "SET", "small", "v"), "+OK\r\n");
    cr_assert_str_eq(ONE(c, "SET", "big", big), "+OK\r\n");
    cr_assert_str_eq(ONE(c, "INCRBY", "n", "41"), ":41\r\n");
    cr_assert_str_eq(ONE(c, "APPEND", "small", "w"), ":2\r\n");
    cr_assert_str_eq(ONE(c, "SET", "t", "v", "EX", "1000"), "+OK\r\n");
    cr_assert_str_eq(ONE(c, "SET", "gone", "v"), "+OK\r\n");
    cr_assert_str_eq(ONE(c, "DEL", "gone"), ":1\r\n");
    wire_close(c);
    cr_assert_eq(srv_stop(&rdiff_atticdb), 0, "clean shutdown exits 0");
    cr_assert_eq(srv_restart(&rdiff_atticdb), 0, "restart");
    c = wire_open(rdiff_atticdb.port, 10);
    cr_assert_not_null(c);
    cr_expect_str_eq(ONE(c, "DBSIZE"), ":4\r\n");
    cr_expect_str_eq(ONE(c, "GET", "small"), "$2\r\nvw\r\n");
    cr_expect_str_eq(ONE(c, "INCR", "n"), ":42\r\n");
    cr_expect_str_eq(ONE(c, "EXISTS", "gone"), ":0\r\n");
    cr_expect_str_eq(ONE(c, "STRLEN", "big"), ":2999\r\n");
    const char *r = ONE(c, "GET", "big");
    cr_expect(strncmp(r, "$2999\r\n", 7) == 0 && strncmp(r + 7, big, 2999) == 0,
              "GET big after restart");
    long long t = reply_int(ONE(c, "TTL", "t"));
    cr_expect(t > 990 && t <= 1000, "TTL after restart: %lld", t);
    wire_close(c);
}

/* Every setting CONFIG SET takes reads back through CONFIG GET as Redis
 * reads it back (a setting answered OK and then forgotten is the bug this
 * catches: list-max-listpack-size and list-compress-depth were). The list
 * must name every mutable setting: each one CONFIG GET * reports is set
 * to its own value, and one that takes it must be in the list. */
Test(cmds, every_mutable_setting_reads_back_as_redis)
{
    static const char *const set[][2] = {
        {"loglevel", "verbose"},
        {"maxclients", "500"},
        {"maxmemory", "100mb"},
        {"maxmemory-policy", "allkeys-lfu"},
        {"maxmemory-samples", "7"},
        {"maxmemory-eviction-tenacity", "50"},
        {"lfu-log-factor", "3"},
        {"lfu-decay-time", "4"},
        {"timeout", "30"},
        {"protected-mode", "no"},
        {"proto-max-bulk-len", "2mb"},
        {"client-query-buffer-limit", "2mb"},
        {"notify-keyspace-events", "KEA"},
        /* the normal class named: AtticDB's default bounds it (COMMANDS.md) */
        {"client-output-buffer-limit", "normal 0 0 0 slave 256mb 64mb 60 pubsub 16mb 4mb 30"},
        {"slowlog-log-slower-than", "777"},
        {"slowlog-max-len", "55"},
        {"latency-monitor-threshold", "9"},
        {"hash-max-listpack-entries", "99"},
        {"hash-max-ziplist-entries", "98"},
        {"hash-max-listpack-value", "33"},
        {"hash-max-ziplist-value", "34"},
        {"set-max-intset-entries", "99"},
        {"hll-sparse-max-bytes", "2kb"},
        {"zset-max-listpack-entries", "77"},
        {"zset-max-ziplist-entries", "76"},
        {"zset-max-listpack-value", "22"},
        {"zset-max-ziplist-value", "23"},
        {"list-max-listpack-size", "7"},
        {"list-max-ziplist-size", "-3"},
        {"list-compress-depth", "2"},
        {"rdbcompression", "no"},
        {"min-replicas-to-write", "0"},
        {"min-slaves-to-write", "0"},
        {"min-replicas-max-lag", "20"},
        {"min-slaves-max-lag", "21"},
        {"repl-backlog-size", "2mb"},
        {"repl-backlog-ttl", "1800"},
    };
    /* Set elsewhere (test_conn_protocol's differential_requirepass), or
     * AtticDB's own with no Redis to compare with. */
    static const char *const apart[] = {"requirepass", "save", "appendonly", "appendfsync"};
    diff_t d;
    rdiff_start_both(&d);
    for (size_t i = 0; i < sizeof set / sizeof set[0]; i++) {
        D(&d, "CONFIG", "SET", set[i][0], set[i][1]);
        D(&d, "CONFIG", "GET", set[i][0]);
    }
    redisContext *c = srv_connect(&rdiff_atticdb);
    cr_assert_not_null(c);
    redisReply *all = redisCommand(c, "CONFIG GET *");
    cr_assert(all && all->type == REDIS_REPLY_ARRAY && all->elements % 2 == 0);
    for (size_t i = 0; i + 1 < all->elements; i += 2) {
        const char *name = all->element[i]->str;
        int listed = 0;
        for (size_t j = 0; j < sizeof set / sizeof set[0]; j++)
            listed |= !strcmp(set[j][0], name);
        for (size_t j = 0; j < sizeof apart / sizeof apart[0]; j++)
            listed |= !strcmp(apart[j], name);
        if (listed) continue;
        redisReply *r = redisCommand(c, "CONFIG SET %s %b", name, all->element[i + 1]->str,
                                     all->element[i + 1]->len);
        cr_assert_not_null(r);
        cr_expect(r->type == REDIS_REPLY_ERROR, "%s is mutable but not in this test's list", name);
        freeReplyObject(r);
    }
    freeReplyObject(all);
    redisFree(c);
    rdiff_end_both(&d);
}

/* cmd's calls and failed_calls in an INFO commandstats text (its time
 * differs between the servers), "none" when it has no line. */
static void calls_of(const char *info, const char *cmd, char *out, size_t n)
{
    char head[64];
    snprintf(head, sizeof(head), "cmdstat_%s:calls=", cmd);
    const char *p = info ? strstr(info, head) : NULL;
    if (!p) {
        snprintf(out, n, "none");
        return;
    }
    long long calls = atoll(p + strlen(head)), failed = -1;
    const char *eol = strchr(p, '\r'), *f = strstr(p, "failed_calls=");
    if (f && (!eol || f < eol)) failed = atoll(f + strlen("failed_calls="));
    snprintf(out, n, "calls=%lld failed_calls=%lld", calls, failed);
}

/* INFO total_reads_processed and total_writes_processed as Redis counts
 * them: a read of a client's socket each, a write of its replies each (a
 * pipeline read at once and answered at once is one of each), zeroed by
 * CONFIG RESETSTAT. */
Test(cmds, reads_and_writes_processed_as_redis)
{
    diff_t d;
    rdiff_start_both(&d);
    D(&d, "CONFIG", "RESETSTAT");
    for (int i = 0; i < 5; i++)
        D(&d, "PING");
    const char req[] = "PING\r\nECHO a\r\nPING\r\n";
    rdiff_pipeline(&d, __LINE__, 0, req, strlen(req), 3, "pipelined PING, ECHO, PING");
    static const char *const fields[] = {"total_reads_processed", "total_writes_processed"};
    for (int i = 0; i < 2; i++) {
        char want[32], got[32];
        snprintf(want, sizeof(want), "%lld", info_field(d.r[0], "stats", fields[i]));
        snprintf(got, sizeof(got), "%lld", info_field(d.a[0], "stats", fields[i]));
        rdiff_compare(&d, __LINE__, fields[i], want, strlen(want), got, strlen(got));
    }
    rdiff_end_both(&d);
}

/* INFO errorstats as Redis 7.0 counts it: each error reply by its code
 * (the word after '-', or ERR), in the codes' byte order, unknown commands
 * and arity errors included, EXECABORT for a failed transaction; reset by
 * CONFIG RESETSTAT. The errors come from the frontend (arity, syntax), the
 * store (WRONGTYPE, NOGROUP) and the transaction. */
Test(cmds, errorstats_as_redis)
{
    diff_t d;
    rdiff_start_both(&d);
    D(&d, "CONFIG", "RESETSTAT");
    D(&d, "INFO", "errorstats");
    D(&d, "NOSUCH");
    D(&d, "GET");
    D(&d, "RPUSH", "l", "x");
    D(&d, "GET", "l");
    D(&d, "INCR", "l");
    D(&d, "SET", "s", "abc");
    D(&d, "INCR", "s");
    D(&d, "SET", "a", "b", "c");
    D(&d, "XGROUP", "CREATE", "nokey", "g", "$");
    D(&d, "XADD", "st", "1-1", "f", "v");
    D(&d, "XREADGROUP", "GROUP", "g", "c", "STREAMS", "st", ">");
    D(&d, "MULTI");
    D(&d, "NOSUCH");
    D(&d, "EXEC");
    /* Errors inside EXEC's array count, each (a store's EXEC, then one
     * the frontend answers alone). */
    D(&d, "MULTI");
    D(&d, "INCR", "s");
    D(&d, "GET", "l");
    D(&d, "SET", "t", "1");
    D(&d, "LPUSH", "s", "x");
    D(&d, "EXEC");
    D(&d, "MULTI");
    D(&d, "CLIENT", "SETNAME", "a b");
    D(&d, "ECHO", "x");
    D(&d, "EXEC");
    D(&d, "ZADD", "z", "x", "m");
    D(&d, "INFO", "errorstats");
    /* ... and each in its own command's failed_calls (calls as before) */
    static const char *const counted[] = {"incr",           "get",  "set", "lpush", "echo",
                                          "client|setname", "exec", "zadd"};
    for (size_t i = 0; i < sizeof(counted) / sizeof(counted[0]); i++) {
        char want[96], got[96];
        calls_of(rdiff_one(d.r[0], 2, (const char *const[]){"INFO", "commandstats"}), counted[i],
                 want, sizeof(want));
        calls_of(rdiff_one(d.a[0], 2, (const char *const[]){"INFO", "commandstats"}), counted[i],
                 got, sizeof(got));
        rdiff_compare(&d, __LINE__, counted[i], want, strlen(want), got, strlen(got));
    }
    D(&d, "CONFIG", "RESETSTAT");
    D(&d, "INFO", "errorstats");
    D(&d, "LPOP", "s");
    D(&d, "INFO", "errorstats");
    rdiff_end_both(&d);
}
