/*
 * test_pubsub.c - Pub/Sub against the real server (D37, docs/COMMANDS.md
 * "Pub/Sub"): replies byte for byte with a redis-server 7.0.15 (RESP2
 * subscribed mode, its errors and PING, RESP3 pushes, PUBSUB), then what
 * only AtticDB has: subscriber and publisher on different frontends,
 * each publisher's messages in order, PUBLISH's count over every
 * frontend, the pubsub class of client-output-buffer-limit closing a
 * subscriber that does not read, and a frontend SIGKILLed with
 * subscribers while the others go on.
 */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conn_helpers.h"
#include "redis_diff.h"

TestSuite(pubsub, .fini = teardown, .timeout = 180);

static void redis_or_skip(void)
{
    const char *path = wire_redis_path();
    if (!path)
        cr_skip_test(
            "redis-server not found (PATH or REDIS_SERVER): differential checks need Redis 7");
    const char *args[] = {"--bind", "127.0.0.1", "--save", "", "--appendonly", "no", NULL};
    cr_assert_eq(proc_start(&R, path, NULL, args, "+PONG"), 0, "redis-server did not start");
}

/* Replace the number after "id" in HELLO replies (client ids differ). */
static void mask_ids(char *s)
{
    for (char *p = s; (p = strstr(p, "$2\r\nid\r\n:")) != NULL;) {
        p += 9;
        char *e = strstr(p, "\r\n");
        if (!e) return;
        memset(p, 'N', (size_t)(e - p));
    }
}

/* One step of a script run on both servers: on connection `conn`, send
 * `bytes` and read `count` replies (messages included); the bytes must be
 * Redis'. */
typedef struct step {
    int conn;
    int count;
    const char *bytes;
} step_t;

static void same_script(const step_t *steps, int nconn)
{
    raw_t *r[4], *a[4];
    for (int i = 0; i < nconn; i++) {
        r[i] = raw_open(R.port);
        a[i] = raw_open(S.port);
        cr_assert(r[i] && a[i]);
    }
    for (const step_t *s = steps; s->bytes; s++) {
        raw_send(r[s->conn], s->bytes, strlen(s->bytes));
        raw_send(a[s->conn], s->bytes, strlen(s->bytes));
        char *rr = raw_read(r[s->conn], s->count), *ra = raw_read(a[s->conn], s->count);
        mask_ids(rr);
        mask_ids(ra);
        cr_expect(strcmp(rr, ra) == 0, "conn %d, for %s\nredis:   %s\natticdb: %s", s->conn,
                  s->bytes, rr, ra);
        free(rr);
        free(ra);
    }
    for (int i = 0; i < nconn; i++) {
        raw_close(r[i]);
        raw_close(a[i]);
    }
}

Test(pubsub, replies_as_redis_resp2)
{
    redis_or_skip();
    start("--frontends 1");
    static const step_t script[] = {
        {0, 3, "SUBSCRIBE ch1 ch2\r\nPSUBSCRIBE c*\r\n"},
        {0, 1, "GET x\r\n"},
        {0, 1, "SET x 1\r\n"},
        {0, 1, "CONFIG GET maxclients\r\n"},
        {0, 2, "PING\r\nPING hi\r\n"},
        {0, 1, "SSUBSCRIBE s1\r\n"},
        {0, 1, "UNSUBSCRIBE nothere\r\n"},
        {1, 3, "PUBLISH ch1 hello\r\nPUBLISH cx yo\r\nSPUBLISH s1 m\r\n"},
        {0, 4, ""}, /* message, 2 pmessages, smessage */
        {1, 2, "PUBLISH nobody x\r\nPUBLISH ch2 two\r\n"},
        {0, 2, ""},
        {1, 3, "MULTI\r\nPUBLISH ch2 three\r\nEXEC\r\n"},
        {0, 2, ""},
        {1, 4,
         "PUBSUB NUMSUB ch1 ch2 zz\r\nPUBSUB NUMPAT\r\nPUBSUB CHANNELS ch2\r\nPUBSUB CHANNELS "
         "*1\r\n"},
        {1, 3, "PUBSUB SHARDCHANNELS\r\nPUBSUB SHARDNUMSUB s1 s2\r\nPUBSUB NUMSUB\r\n"},
        {1, 4, "PUBSUB HELP\r\nPUBSUB CHANNELS a b\r\nPUBSUB NUMPAT x\r\nPUBSUB NOPE\r\n"},
        {1, 3, "SUBSCRIBE\r\nPUBLISH a\r\nSPUBLISH a\r\n"},
        {0, 2, "UNSUBSCRIBE ch1\r\nPUNSUBSCRIBE\r\n"},
        {0, 3, "SUNSUBSCRIBE\r\nUNSUBSCRIBE\r\nUNSUBSCRIBE\r\n"},
        {0, 2, "PUNSUBSCRIBE\r\nGET x\r\n"},
        /* RESET leaves subscribed mode */
        {0, 3, "SUBSCRIBE z\r\nRESET\r\nGET x\r\n"},
        {1, 1, "PUBLISH z 1\r\n"},
        {0, 0, NULL},
    };
    same_script(script, 2);
}

Test(pubsub, replies_as_redis_resp3)
{
    redis_or_skip();
    start("--frontends 1");
    static const step_t script[] = {
        {0, 1, "HELLO 3\r\n"},
        {0, 3, "SUBSCRIBE q\r\nGET x\r\nPING\r\n"},
        {0, 1, "PSUBSCRIBE q*\r\n"},
        {1, 1, "PUBLISH q 1\r\n"},
        {0, 2, ""},
        {0, 3, "UNSUBSCRIBE\r\nUNSUBSCRIBE\r\nPUNSUBSCRIBE\r\n"},
        {0, 2, "SSUBSCRIBE s\r\nSUNSUBSCRIBE s\r\n"},
        {1, 1, "PUBLISH q 2\r\n"},
        {1, 1, "HELLO 3\r\n"},
        {1, 4, "PUBSUB NUMSUB a b\r\nPUBSUB SHARDNUMSUB a\r\nPUBSUB CHANNELS\r\nPUBSUB NUMPAT\r\n"},
        {0, 0, NULL},
    };
    same_script(script, 2);
}

/* CLIENT REPLY OFF and SKIP silence replies, not the Pub/Sub family's
 * confirmations nor messages: Redis sends those whatever they say, in
 * RESP2 and RESP3 (Redis' unit/pubsub "PubSub messages with CLIENT REPLY
 * OFF" hung here: the confirmations were dropped). */
Test(pubsub, confirmations_ignore_client_reply_off_as_redis)
{
    redis_or_skip();
    start("--frontends 1");
    static const step_t script[] = {
        {0, 2, "CLIENT REPLY OFF\r\nSUBSCRIBE a b\r\n"},
        {0, 1, "PSUBSCRIBE a*\r\n"},
        {1, 1, "PUBLISH a m\r\n"},
        {0, 2, ""},
        {0, 1, "UNSUBSCRIBE b\r\n"},
        {0, 2, "PUNSUBSCRIBE\r\nUNSUBSCRIBE\r\n"},
        {0, 1, "UNSUBSCRIBE\r\n"},
        {0, 1, "CLIENT REPLY ON\r\n"},
        {2, 1, "HELLO 3\r\n"},
        {2, 1, "CLIENT REPLY SKIP\r\nSSUBSCRIBE s\r\n"},
        {2, 1, "CLIENT REPLY OFF\r\nSUNSUBSCRIBE s\r\n"},
        {2, 2, "SUBSCRIBE c\r\nPING\r\nCLIENT REPLY ON\r\n"},
        {1, 1, "PUBLISH c n\r\n"},
        {2, 1, ""},
        {0, 0, NULL},
    };
    same_script(script, 3);
}

/* A RESP3 client subscribed to its own key's events gets each push
 * before the reply of the command that caused it, as from Redis: a read's
 * "keymiss" (D51) and the events of a write whose reply the store
 * computes, which reach the frontend by the Pub/Sub ring while the reply
 * comes by the store's channel. Repeated: before the frontend read the
 * ring first, 1 reply in 5 came first. (Only writes Redis tells before
 * replying: a write acked with +OK at durability, SET, replies before
 * the store applies it, and GETDEL and the pops reply first in Redis,
 * D51.) */
Test(pubsub, resp3_pushes_come_before_the_reply)
{
    redis_or_skip();
    start("--frontends 1");
    step_t script[64] = {
        {0, 1, "HELLO 3\r\n"},
        {0, 1, "CONFIG SET notify-keyspace-events K$gm\r\n"},
        {0, 1, "SUBSCRIBE __keyspace@0__:k\r\n"},
    };
    int n = 3;
    for (int i = 0; i < 14; i++) {
        script[n++] = (step_t){0, 2, "GET k\r\n"};  /* keymiss, nil */
        script[n++] = (step_t){0, 2, "INCR k\r\n"}; /* a reply the store computes */
        script[n++] = (step_t){0, 2, "DEL k\r\n"};
        script[n++] = (step_t){0, 2, i % 2 ? "GETDEL k\r\n" : "TYPE k\r\n"}; /* keymiss */
    }
    script[n++] = (step_t){0, 1, "CONFIG SET notify-keyspace-events \"\"\r\n"};
    script[n] = (step_t){0, 0, NULL};
    same_script(script, 1);
}

/* ACL channel rules as Redis 7.0 applies them: PUBLISH, SPUBLISH and the
 * subscribes checked against the user's &patterns (glob), a PSUBSCRIBE
 * pattern only if it is one of them literally, unsubscribes never, key
 * patterns not on shard channels; the error inside MULTI; ACL DRYRUN's
 * words; and a subscriber closed when ACL SETUSER takes one of its
 * channels or patterns away (one frontend: at once, as Redis). */
Test(pubsub, acl_channel_rules_as_redis)
{
    redis_or_skip();
    start("--frontends 1");
    static const step_t script[] = {
        {0, 2,
         "ACL SETUSER u reset on nopass +@all ~* &news.* &ex?ct\r\n"
         "ACL SETUSER k reset on nopass +@all ~k* &*\r\n"},
        {1, 5,
         "AUTH u x\r\nPUBLISH news.a m\r\nPUBLISH other m\r\nSPUBLISH other m\r\n"
         "SPUBLISH news.b m\r\n"},
        {1, 4, "PSUBSCRIBE news.x\r\nMULTI\r\nPUBLISH zz m\r\nEXEC\r\n"},
        {1, 2, "UNSUBSCRIBE zz\r\nPUNSUBSCRIBE zz*\r\n"},
        {1, 3, "AUTH k x\r\nSPUBLISH zz m\r\nPUBLISH kq m\r\n"},
        {0, 6,
         "ACL DRYRUN u PUBLISH zz m\r\nACL DRYRUN u PSUBSCRIBE news.* x*\r\n"
         "ACL DRYRUN u SUBSCRIBE news.1 x\r\nACL DRYRUN u SPUBLISH x m\r\n"
         "ACL DRYRUN u PUBLISH news.z m\r\nACL GETUSER u\r\n"},
        {2, 3, "AUTH u x\r\nSUBSCRIBE news.a other\r\nSUBSCRIBE news.a\r\n"},
        {3, 6,
         "AUTH u x\r\nPSUBSCRIBE ex*\r\nPSUBSCRIBE news.* ex?ct\r\nSSUBSCRIBE zz\r\n"
         "SSUBSCRIBE news.q\r\n"},
        /* more rights: nobody is closed */
        {0, 1, "ACL SETUSER u &other\r\n"},
        {1, 2, "AUTH u x\r\nPUBLISH news.a hi\r\n"},
        {2, 1, ""},
        {3, 1, ""},
        /* news.* is no longer one of u's patterns: its subscriber goes */
        {0, 1, "ACL SETUSER u resetchannels &news.a &news.q\r\n"},
        {2, 1, "PING\r\n"},
        {3, 1, "PING\r\n"},
        {0, 0, NULL},
    };
    same_script(script, 4);
}

/* ---- across frontends ---- */

static long long info_field(const char *text, const char *field)
{
    return srv_info_text_num(text, field);
}

/* Connections until one is on frontend `want` (2 frontends: the kernel
 * spreads them). */
static raw_t *open_on(int want)
{
    for (int i = 0; i < 200; i++) {
        raw_t *c = raw_open(S.port);
        cr_assert_not_null(c);
        if (info_field(cmd(c, "INFO server"), "frontend") == want) return c;
        raw_close(c);
    }
    cr_assert_fail("no connection reached frontend %d", want);
    return NULL;
}

/* Wait (bounded) until `command` on c answers `want`. */
static int wait_reply(raw_t *c, const char *command, const char *want)
{
    for (int i = 0; i < 3000; i++) {
        if (!strcmp(cmd(c, "%s", command), want)) return 1;
        usleep(10000);
    }
    return 0;
}

static char *expect_msg(raw_t *sub, const char *what)
{
    char *m = raw_read(sub, 1);
    cr_expect(strcmp(m, what) == 0, "got %s\nwant %s", m, what);
    return m;
}

/* Read n messages (and n pmessages too when `patterns`) published as
 * "a<i>" (even i) and "b<i>" (odd i) by two publishers: each publisher's
 * must come in its order; the two may interleave any way. */
static void read_in_order(raw_t *sub, int n, int patterns)
{
    int next[2][2] = {{0, 1}, {0, 1}}; /* [pattern][publisher] */
    for (int k = 0; k < n * (patterns ? 2 : 1); k++) {
        char *m = raw_read(sub, 1);
        const char *body = strrchr(m, '$');
        cr_assert_not_null(body, "message %d: %s", k, m);
        body = strstr(body, "\r\n") + 2;
        int pattern = strstr(m, "pmessage") != NULL, who = body[0] == 'b';
        cr_assert_eq(atoi(body + 1), next[pattern][who], "message %d out of order: %s", k, m);
        next[pattern][who] += 2;
        free(m);
    }
}

Test(pubsub, across_frontends_in_order_with_counts)
{
    start("--frontends 2");
    raw_t *sub = open_on(0), *sub2 = open_on(1), *pub1 = open_on(1), *pub0 = open_on(0);
    raw_send(sub, "SUBSCRIBE ch\r\nPSUBSCRIBE c*\r\n", 29);
    free(raw_read(sub, 2));
    raw_send(sub2, "SUBSCRIBE ch\r\n", 14);
    free(raw_read(sub2, 1));
    /* seen from either frontend */
    cr_expect_str_eq(cmd(pub1, "PUBSUB NUMSUB ch"), "*2\r\n$2\r\nch\r\n:2\r\n");
    cr_expect_str_eq(cmd(pub0, "PUBSUB NUMPAT"), ":1\r\n");
    cr_expect_str_eq(cmd(pub0, "PUBSUB CHANNELS"), "*1\r\n$2\r\nch\r\n");
    const char *stats = cmd(pub1, "INFO stats");
    cr_expect_eq(info_field(stats, "pubsub_channels"), 1, "%s", stats);
    cr_expect_eq(info_field(stats, "pubsub_patterns"), 1);
    cr_expect_eq(info_field(stats, "pubsubshard_channels"), 0);
    /* CLIENT LIST on the subscriber's frontend */
    const char *cl = cmd(pub0, "CLIENT LIST");
    cr_expect(strstr(cl, " sub=1 psub=1 ssub=0 "), "%s", cl);
    /* three receivers (two channel subscribers, one pattern), on two
     * frontends; two publishers, one on each, interleaved */
    enum { N = 2000 };
    for (int i = 0; i < N; i++) {
        raw_t *p = i % 2 ? pub1 : pub0;
        cr_assert_str_eq(cmd(p, "PUBLISH ch %c%d", i % 2 ? 'b' : 'a', i), ":3\r\n", "message %d",
                         i);
    }
    /* each publisher's messages arrive in order, on both frontends */
    read_in_order(sub, N, 1);
    read_in_order(sub2, N, 0);
    /* SPUBLISH crosses too, to shard subscribers only */
    raw_send(sub2, "SSUBSCRIBE sh\r\n", 15);
    free(raw_read(sub2, 1));
    cr_expect_str_eq(cmd(pub0, "SPUBLISH sh x"), ":1\r\n");
    free(expect_msg(sub2, "*3\r\n$8\r\nsmessage\r\n$2\r\nsh\r\n$1\r\nx\r\n"));
    cr_expect_str_eq(cmd(pub0, "PUBSUB SHARDNUMSUB sh"), "*2\r\n$2\r\nsh\r\n:1\r\n");
    /* unsubscribing is seen by the other frontend */
    raw_send(sub, "UNSUBSCRIBE\r\nPUNSUBSCRIBE\r\n", 27);
    free(raw_read(sub, 2));
    cr_expect_str_eq(cmd(pub1, "PUBSUB NUMSUB ch"), "*2\r\n$2\r\nch\r\n:1\r\n");
    cr_expect_str_eq(cmd(pub1, "PUBSUB NUMPAT"), ":0\r\n");
    cr_expect_str_eq(cmd(pub1, "PUBLISH ch last"), ":1\r\n");
    /* a subscriber that closes is gone for everyone */
    raw_close(sub2);
    cr_expect(wait_reply(pub0, "PUBLISH ch gone", ":0\r\n"), "a closed subscriber still counted");
    cr_expect_str_eq(cmd(pub0, "PUBSUB CHANNELS"), "*0\r\n");
    raw_close(sub);
    raw_close(pub0);
    raw_close(pub1);
}

Test(pubsub, resp3_pushes_across_frontends)
{
    start("--frontends 2");
    raw_t *sub = open_on(1), *pub = open_on(0);
    raw_send(sub, "HELLO 3\r\n", 9);
    free(raw_read(sub, 1));
    raw_send(sub, "SUBSCRIBE news\r\n", 16);
    free(expect_msg(sub, ">3\r\n$9\r\nsubscribe\r\n$4\r\nnews\r\n:1\r\n"));
    /* normal commands are allowed with RESP3 */
    cr_expect_str_eq(cmd(sub, "SET k v"), "+OK\r\n");
    cr_expect_str_eq(cmd(pub, "PUBLISH news hi"), ":1\r\n");
    free(expect_msg(sub, ">3\r\n$7\r\nmessage\r\n$4\r\nnews\r\n$2\r\nhi\r\n"));
    cr_expect_str_eq(cmd(sub, "GET k"), "$1\r\nv\r\n");
    raw_close(sub);
    raw_close(pub);
}

/* A subscriber that never reads, on the other frontend: closed past the
 * pubsub class's limit; the publisher never waits for it. */
static void slow_subscriber(const char *limit)
{
    raw_t *sub = open_on(1), *pub = open_on(0);
    cr_expect_str_eq(cmd(pub, "CONFIG SET client-output-buffer-limit \"%s\"", limit), "+OK\r\n");
    raw_send(sub, "SUBSCRIBE flood\r\n", 17);
    free(raw_read(sub, 1));
    char *big = malloc(64 * 1024 + 64);
    memset(big, 'x', 64 * 1024);
    big[64 * 1024] = '\0';
    /* the normal class stays unbounded enough: the publisher is fine */
    int gone = 0;
    for (int i = 0; i < 2000 && !gone; i++) {
        const char *r = cmd(pub, "PUBLISH flood %s", big);
        cr_assert(r[0] == ':', "PUBLISH: %.60s", r);
        gone = !strcmp(r, ":0\r\n");
    }
    cr_expect(gone, "a subscriber that never reads outlived the pubsub limit %s", limit);
    cr_expect(raw_closed(sub), "the slow subscriber is closed");
    cr_expect_str_eq(cmd(pub, "PUBSUB NUMSUB flood"), "*2\r\n$5\r\nflood\r\n:0\r\n");
    free(big);
    raw_close(pub);
}

Test(pubsub, slow_subscriber_hard_limit)
{
    start("--frontends 2");
    slow_subscriber("pubsub 1mb 0 0");
}

Test(pubsub, slow_subscriber_soft_limit)
{
    start("--frontends 2");
    slow_subscriber("pubsub 0 512kb 0");
}

Test(pubsub, config_reports_the_pubsub_class)
{
    start("--frontends 1 --client-output-buffer-limit normal 1mb 512kb 10 pubsub 2mb 1mb 5");
    raw_t *c = raw_open(S.port);
    cr_expect_str_eq(cmd(c, "CONFIG GET client-output-buffer-limit"),
                     "*2\r\n$26\r\nclient-output-buffer-limit\r\n$77\r\nnormal 1048576 524288 10 "
                     "slave 268435456 67108864 60 pubsub 2097152 1048576 5\r\n");
    raw_close(c);
}

Test(pubsub, frontend_killed_with_subscribers)
{
    start("--frontends 2");
    raw_t *doomed = open_on(1), *sub = open_on(0), *pub = open_on(0);
    raw_send(doomed, "SUBSCRIBE ch\r\nPSUBSCRIBE *\r\n", 28);
    free(raw_read(doomed, 2));
    raw_send(sub, "SUBSCRIBE ch\r\n", 14);
    free(raw_read(sub, 1));
    cr_expect_str_eq(cmd(pub, "PUBLISH ch before"), ":3\r\n");
    pid_t pids[2];
    cr_assert_eq(srv_wait_children(&S, "atticdb-server: frontend 1", pids, 2, 1), 1);
    cr_assert_eq(kill(pids[0], SIGKILL), 0);
    cr_expect(raw_closed(doomed), "the killed frontend's subscriber keeps its connection");
    /* the other frontend's subscriber still gets every message, and the
     * count drops to it once the successor cleared its predecessor's */
    cr_expect(wait_reply(pub, "PUBSUB NUMPAT", ":0\r\n"), "the dead frontend's pattern stayed");
    cr_expect_str_eq(cmd(pub, "PUBLISH ch after"), ":1\r\n");
    free(expect_msg(sub, "*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$6\r\nbefore\r\n"));
    for (int i = 0; i < 1000; i++) {
        char *m = raw_read(sub, 1);
        int last = strstr(m, "after") != NULL;
        free(m);
        if (last) break;
    }
    /* the successor serves subscribers again */
    raw_t *again = open_on(1);
    raw_send(again, "SUBSCRIBE ch\r\n", 14);
    free(raw_read(again, 1));
    cr_expect_str_eq(cmd(pub, "PUBLISH ch new"), ":2\r\n");
    free(expect_msg(again, "*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$3\r\nnew\r\n"));
    raw_close(again);
    raw_close(sub);
    raw_close(pub);
}

/* ---- keyspace notifications (the store as a publisher) ---- */

/* Messages on sub until `want` events of the key "__end__" (keyspace and
 * keyevent: 2) came, concatenated. */
static char *events_until_end(raw_t *sub, int want)
{
    size_t n = 0;
    char *all = calloc(1, 1);
    for (int ends = 0, i = 0; ends < want && i < 10000; i++) {
        char *m = raw_read(sub, 1);
        if (!m[0]) { /* nothing within raw_read's wait: wait again (bounded) */
            free(m);
            if (i > 20) break;
            continue;
        }
        if (strstr(m, "__end__")) ends++;
        size_t k = strlen(m);
        all = realloc(all, n + k + 1);
        memcpy(all + n, m, k + 1);
        n += k;
        free(m);
    }
    return all;
}

static const char *const KEYSPACE_SCRIPT[] = {"SET a 1",
                                              "SET b 2 EX 100",
                                              "INCR a",
                                              "DECRBY a 3",
                                              "APPEND a x",
                                              "DEL a zz",
                                              "SETNX b 3",
                                              "EXPIRE b 200",
                                              "PERSIST b",
                                              "RENAME b c",
                                              "LPUSH l 1 2",
                                              "RPUSH l 3",
                                              "LPOP l",
                                              "RPOP l",
                                              "LPOP l",
                                              "HSET h f v",
                                              "HINCRBY h n 2",
                                              "HDEL h f n",
                                              "SADD s a b",
                                              "SREM s a",
                                              "SPOP s",
                                              "SADD s1 x",
                                              "SMOVE s1 s2 x",
                                              "MSET m1 1 m2 2",
                                              "GETDEL m1",
                                              "EXPIRE m2 -1",
                                              "SETRANGE k 2 ab",
                                              "INCRBYFLOAT f 1.5",
                                              "LPUSH q a b c",
                                              "LTRIM q 5 10",
                                              "SADD t1 x",
                                              "SINTERSTORE t2 t1 nothing",
                                              "RPUSH r a b",
                                              "LMOVE r r LEFT RIGHT",
                                              "LMOVE r r2 RIGHT LEFT",
                                              "MULTI",
                                              "SET x 1",
                                              "INCR x",
                                              "EXEC",
                                              "SELECT 1",
                                              "SET z 1",
                                              "SELECT 0",
                                              "SET __end__ 1",
                                              NULL};

/* Sorted sets, streams, pops served to blocked clients, new keys and
 * every other write family, for the differential runs below. */
static const char *const FAMILIES_SCRIPT[] = {"ZADD z 1 a 2 b 3 c",
                                              "ZADD z INCR 5 a",
                                              "ZINCRBY z 1 b",
                                              "ZADD z XX 9 nosuch",
                                              "ZADD z NX 1 a",
                                              "ZADD z GT CH 10 c",
                                              "ZREM z nosuch",
                                              "ZREM z a",
                                              "ZADD z 1 a 4 d 5 e",
                                              "ZREMRANGEBYSCORE z 100 200",
                                              "ZREMRANGEBYSCORE z 1 1",
                                              "ZREMRANGEBYRANK z 0 0",
                                              "ZADD lz 0 a 0 b 0 c 0 d",
                                              "ZREMRANGEBYLEX lz [a [b",
                                              "ZREMRANGEBYLEX lz - +",
                                              "ZADD p 1 a 2 b 3 c",
                                              "ZPOPMIN p",
                                              "ZPOPMAX p 5",
                                              "ZPOPMIN p",
                                              "ZADD m1 1 a 2 b",
                                              "ZMPOP 2 nosuch m1 MIN COUNT 1",
                                              "ZMPOP 1 m1 MAX COUNT 10",
                                              "ZADD u1 1 a 2 b",
                                              "ZADD u2 3 b 4 c",
                                              "ZUNIONSTORE zu 2 u1 u2",
                                              "ZINTERSTORE zi 2 u1 u2",
                                              "ZDIFFSTORE zd 2 u1 u2",
                                              "ZINTERSTORE zi 2 u1 nosuch",
                                              "ZINTERSTORE none 2 u1 nosuch",
                                              "ZRANGESTORE zr u1 0 -1",
                                              "ZRANGESTORE zr u1 5 10",
                                              "ZRANGESTORE none u1 5 10",
                                              "RPUSH sl 3 1 2",
                                              "SORT sl STORE sls",
                                              "SORT sl",
                                              "SORT sl BY nosort STORE sls",
                                              "SORT nosuch STORE sls",
                                              "SORT nosuch STORE sls",
                                              "SORT sl LIMIT 5 1 STORE none",
                                              "SORT sl GET # STORE sl",
                                              "DEL nosuch z zu",
                                              "XADD s 1-1 f v",
                                              "XADD s 2-1 f v",
                                              "XADD s MAXLEN 1 3-1 f v",
                                              "XADD s NOMKSTREAM 4-1 f v",
                                              "XADD nos NOMKSTREAM 4-1 f v",
                                              "XADD s 5-1 f v",
                                              "XTRIM s MAXLEN 10",
                                              "XTRIM s MAXLEN 1",
                                              "XDEL s 1-1",
                                              "XDEL s 5-1",
                                              "XSETID s 9-9",
                                              "XADD s2 1-1 f v",
                                              "XDEL s2 1-1",
                                              "XGROUP CREATE s g1 $",
                                              "XGROUP CREATE s g1 $",
                                              "XGROUP CREATE sg g2 0 MKSTREAM",
                                              "XGROUP CREATE nosg g3 0",
                                              "XGROUP SETID s g1 0",
                                              "XGROUP CREATECONSUMER s g1 c1",
                                              "XGROUP CREATECONSUMER s g1 c1",
                                              "XGROUP DELCONSUMER s g1 c1",
                                              "XGROUP DELCONSUMER s g1 c1",
                                              "XGROUP DESTROY s g1",
                                              "XGROUP DESTROY s g1",
                                              "XACK s g1 1-1",
                                              "XGROUP CREATE xr g 0 MKSTREAM",
                                              "XADD xr 1-1 f v",
                                              "XREADGROUP GROUP g c1 STREAMS xr >",
                                              "XREADGROUP GROUP g c1 STREAMS xr >",
                                              "XREADGROUP GROUP g c2 STREAMS xr 0",
                                              "XREADGROUP GROUP nog c9 STREAMS xr >",
                                              "XCLAIM xr g c3 3600000 1-1",
                                              "XCLAIM xr g c3 0 1-1",
                                              "XCLAIM xr g c3 0 1-1 JUSTID",
                                              "XAUTOCLAIM xr g c4 3600000 0",
                                              "XAUTOCLAIM xr g c4 0 0",
                                              "XDEL xr 1-1",
                                              "XAUTOCLAIM xr g c5 0 0",
                                              "&XREADGROUP GROUP g c6 BLOCK 0 STREAMS xr >",
                                              "XADD xr 2-1 f v",
                                              "&XREADGROUP GROUP g c7 BLOCK 0 STREAMS xr >",
                                              "XGROUP DESTROY xr g",
                                              "&BLPOP bl 0",
                                              "RPUSH bl a",
                                              "&BLPOP bl 0",
                                              "RPUSH bl a b",
                                              "&BLMOVE bm bmd LEFT RIGHT 0",
                                              "LPUSH bm x",
                                              "&BZPOPMIN bz 0",
                                              "ZADD bz 1 a",
                                              "&BZPOPMAX bz 0",
                                              "ZADD bz 1 a 2 b",
                                              "&BRPOPLPUSH br brd 0",
                                              "RPUSH br x",
                                              "&BLMPOP 0 2 nosuch bq LEFT COUNT 3",
                                              "RPUSH bq a b",
                                              "&BZMPOP 0 1 bzm MAX COUNT 2",
                                              "ZADD bzm 1 a",
                                              "SET str v",
                                              "SET str w",
                                              "SETEX ex 100 v",
                                              "GETSET str x",
                                              "SETNX str y",
                                              "HSETNX h f v",
                                              "HMSET h g w",
                                              "LPUSHX nol x",
                                              "RPUSH lx a",
                                              "RPUSHX lx b",
                                              "RPOPLPUSH lx lx2",
                                              "LINSERT lx2 BEFORE b c",
                                              "LREM lx2 0 b",
                                              "LSET lx2 0 z",
                                              "COPY lx2 cp",
                                              "MOVE cp 1",
                                              "RENAMENX lx2 rn",
                                              "RENAME rn str",
                                              "UNLINK str",
                                              "SETBIT bits 7 1",
                                              "PFADD hll a b",
                                              "PFADD hll a",
                                              "PFMERGE hll2 hll",
                                              "PFCOUNT hll hll2",
                                              "PFDEBUG TODENSE hll",
                                              "PEXPIRE bits 100000",
                                              "EXPIREAT bits 1",
                                              "SET t v",
                                              "GETEX t EX 100",
                                              "GETEX t PERSIST",
                                              "SADD su1 a b",
                                              "SADD su2 b c",
                                              "SUNIONSTORE su su1 su2",
                                              "SDIFFSTORE sd su1 su2",
                                              "SINTERSTORE su su1 nothing",
                                              "SPOP su1 5",
                                              "HSET hd a 1",
                                              "HINCRBYFLOAT hd a 1.5",
                                              "HDEL hd a",
                                              "SELECT 1",
                                              "DEL cp",
                                              "SELECT 0",
                                              "MSETNX n1 1 n2 2",
                                              "MSETNX n1 1 n3 3",
                                              "SET n1 v KEEPTTL GET",
                                              "SET n1 v PXAT 99999999999999",
                                              "EXPIRE n1 100 NX",
                                              "EXPIRE n1 100 NX",
                                              "GETEX n1 PXAT 1",
                                              "INCRBYFLOAT fl 2.5",
                                              "DECR dc",
                                              "SADD sm1 a",
                                              "SADD sm2 b",
                                              "SMOVE sm1 sm2 a",
                                              "SINTERSTORE sm2 sm2 sm2",
                                              "RPUSH rot a b",
                                              "RPOPLPUSH rot rot",
                                              "LPOP rot 5",
                                              "SADD sp a b c",
                                              "SPOP sp 3",
                                              "XADD xm 1-1 f v",
                                              "XADD xm MINID 2 2-1 f v",
                                              "XTRIM xm MINID 3",
                                              "&BLPOP ml 0",
                                              "MULTI",
                                              "RPUSH ml a b",
                                              "LPUSH ml c",
                                              "EXEC",
                                              "SET sw 1",
                                              "SWAPDB 0 1",
                                              "SWAPDB 0 1",
                                              "SELECT 2",
                                              "SET f1 1",
                                              "FLUSHDB",
                                              "SELECT 0",
                                              NULL};

/* The events a server (port) publishes on "__key*__:*" while one client
 * with notify-keyspace-events `flags` runs script; a line starting with
 * "&" is sent on a second connection (a blocking pop) without waiting for
 * its reply, which the next plain line's write serves. */
static char *events_of(int port, const char *flags, const char *const *script, const char *end)
{
    raw_t *w = raw_open(port), *sub = raw_open(port), *blocker = raw_open(port);
    cr_assert_str_eq(cmd(w, "CONFIG SET notify-keyspace-events %s", flags), "+OK\r\n");
    raw_send(sub, "PSUBSCRIBE __key*__:*\r\n", 23);
    free(raw_read(sub, 1));
    int blocked = 0;
    for (int i = 0; script[i]; i++) {
        if (script[i][0] != '&') {
            cmd(w, "%s", script[i]);
            if (blocked) free(raw_read(blocker, 1)); /* served by that write */
            blocked = 0;
            continue;
        }
        char line[256];
        int n = snprintf(line, sizeof(line), "%s\r\n", script[i] + 1);
        raw_send(blocker, line, (size_t)n);
        /* blocked once CLIENT LIST says so (bounded) */
        for (int k = 0; k < 500 && !strstr(cmd(w, "INFO clients"), "blocked_clients:1"); k++)
            usleep(2000);
        blocked = 1;
    }
    if (end) cmd(w, "%s", end);
    /* the script ends with a write to "__end__" that flags publish: one
     * message each for K and E, twice with "new" */
    int ends = (strchr(flags, 'K') && strchr(flags, 'E') ? 2 : 1) * (strchr(flags, 'n') ? 2 : 1);
    char *got = events_until_end(sub, ends);
    cmd(w, "CONFIG SET notify-keyspace-events \"\"");
    cmd(w, "FLUSHALL");
    raw_close(w);
    raw_close(sub);
    raw_close(blocker);
    return got;
}

/* The same events, message for message, from redis-server and AtticDB. */
static void same_events(const char *flags, const char *const *script, const char *end)
{
    char *want = events_of(R.port, flags, script, end),
         *got = events_of(S.port, flags, script, end);
    cr_expect(strstr(want, "__end__"), "redis sent its events: %s", want);
    cr_expect(strcmp(want, got) == 0, "keyspace events (%s)\nredis:   %s\natticdb: %s", flags, want,
              got);
    free(want);
    free(got);
}

/* One script under each run's flags, ended by a command those flags
 * publish, on redis-server and on AtticDB with two frontends. */
typedef struct flags_run {
    const char *flags, *end;
} flags_run_t;

static void same_events_runs(const char *const *script, const flags_run_t *runs)
{
    redis_or_skip();
    start("--frontends 2");
    for (; runs->flags; runs++)
        same_events(runs->flags, script, runs->end);
}

Test(pubsub, keyspace_notifications_as_redis)
{
    redis_or_skip();
    start("--frontends 2");
    same_events("KEA", KEYSPACE_SCRIPT, NULL);
    /* the classes filter: only keyevent, only strings */
    raw_t *w = raw_open(S.port), *sub = raw_open(S.port);
    cr_assert_str_eq(cmd(w, "CONFIG SET notify-keyspace-events E$"), "+OK\r\n");
    cr_expect_str_eq(cmd(w, "CONFIG GET notify-keyspace-events"),
                     "*2\r\n$22\r\nnotify-keyspace-events\r\n$2\r\n$E\r\n");
    raw_send(sub, "PSUBSCRIBE __key*__:*\r\n", 23);
    free(raw_read(sub, 1));
    cmd(w, "DEL gone");
    cmd(w, "SET gone 1");
    cmd(w, "SET __end__ 2");
    char *only = events_until_end(sub, 1);
    cr_expect_str_eq(
        only, "*4\r\n$8\r\npmessage\r\n$10\r\n__key*__:*\r\n$18\r\n__keyevent@0__:set\r\n$4\r\n"
              "gone\r\n*4\r\n$8\r\npmessage\r\n$10\r\n__key*__:*\r\n$18\r\n__keyevent@0__:"
              "set\r\n$7\r\n__end__\r\n");
    free(only);
    raw_close(w);
    raw_close(sub);
}

/* Every write family, on two frontends, with the flags each class and
 * "n" (new keys) select; the last write to "__end__" is one the flags
 * publish. */
Test(pubsub, every_write_family_notifies_as_redis)
{
    static const flags_run_t runs[] = {{"KEA", "SET __end__ 1"},
                                       {"KEAn", "SET __end__ 1"},
                                       {"Kz", "ZADD __end__ 1 a"},
                                       {"Et", "XADD __end__ 1-1 f v"},
                                       {"Elgn", "RPUSH __end__ a"},
                                       {"KE$sh", "SET __end__ 1"},
                                       {NULL, NULL}};
    same_events_runs(FAMILIES_SCRIPT, runs);
}

/* Reads over missing and present keys of every type, and the writes
 * that read a key first as Redis' lookupKeyRead does (GETSET, GETDEL,
 * GETEX, SET GET, COPY, the *STORE commands, SORT, XACK): what "keymiss"
 * (m, D51) Redis 7.0.15 sends, and where among a write's own events.
 * OBJECT, MEMORY USAGE and DEBUG look quietly; pops, DEL, RENAME and the
 * other writes look up without a miss event. */
static const char *const READS_SCRIPT[] = {"SET s v",
                                           "RPUSH l b a c",
                                           "HSET h f v",
                                           "SADD st a",
                                           "ZADD z 1 a",
                                           "XADD x 1-1 f v",
                                           "SET w_a 3",
                                           "SET w_b 1",
                                           "HSET h_b f 2",
                                           "GET nx",
                                           "GET s",
                                           "GET l",
                                           "MGET nx s nx2 l",
                                           "STRLEN nx",
                                           "GETRANGE nx 0 1",
                                           "SUBSTR s 0 1",
                                           "GETBIT nx 1",
                                           "BITCOUNT nx",
                                           "BITPOS s 1",
                                           "EXISTS nx s l h st z x nx",
                                           "TYPE nx",
                                           "TYPE h",
                                           "TTL nx",
                                           "PTTL s",
                                           "EXPIRETIME nx",
                                           "PEXPIRETIME nx",
                                           "TOUCH nx s nx3",
                                           "DUMP nx",
                                           "DUMP h",
                                           "KEYS nx*",
                                           "SCAN 0",
                                           "RANDOMKEY",
                                           "DBSIZE",
                                           "OBJECT ENCODING nx",
                                           "OBJECT ENCODING s",
                                           "MEMORY USAGE nx",
                                           "DEBUG DIGEST-VALUE nx",
                                           "HGET nx f",
                                           "HGET h nofield",
                                           "HGET s f",
                                           "HMGET nx f g",
                                           "HEXISTS h f",
                                           "HLEN nx",
                                           "HSTRLEN nx f",
                                           "HKEYS nx",
                                           "HVALS h",
                                           "HGETALL nx",
                                           "HRANDFIELD nx",
                                           "HSCAN nx 0",
                                           "SMEMBERS nx",
                                           "SMEMBERS z",
                                           "SISMEMBER nx a",
                                           "SMISMEMBER st a b",
                                           "SCARD nx",
                                           "SRANDMEMBER nx",
                                           "SINTER st nx st",
                                           "SINTERCARD 3 st nx nx2",
                                           "SUNION nx st",
                                           "SDIFF nx st nx2",
                                           "SSCAN nx 0",
                                           "LLEN nx",
                                           "LINDEX l 0",
                                           "LRANGE nx 0 -1",
                                           "LPOS nx a",
                                           "LPOS l a",
                                           "ZCARD nx",
                                           "ZSCORE z nx",
                                           "ZMSCORE nx a",
                                           "ZRANK nx a",
                                           "ZREVRANK z a",
                                           "ZCOUNT nx 0 1",
                                           "ZLEXCOUNT nx - +",
                                           "ZRANGE nx 0 -1",
                                           "ZRANGE st 0 -1",
                                           "ZREVRANGE nx 0 -1",
                                           "ZRANGEBYSCORE nx 0 1",
                                           "ZREVRANGEBYSCORE z 1 0",
                                           "ZRANGEBYLEX nx - +",
                                           "ZREVRANGEBYLEX nx + -",
                                           "ZRANDMEMBER nx",
                                           "ZSCAN nx 0",
                                           "ZUNION 3 st z nx",
                                           "ZINTER 3 nx st z",
                                           "ZINTERCARD 2 nx z",
                                           "ZDIFF 3 z nx nx2",
                                           "XRANGE nx - +",
                                           "XRANGE s - +",
                                           "XREVRANGE x + -",
                                           "XLEN nx",
                                           "XREAD STREAMS nx x 0 0",
                                           "XREAD COUNT 1 STREAMS x nx nx2 0 0 0",
                                           "XINFO STREAM nx",
                                           "XINFO GROUPS nx",
                                           "XPENDING nx g",
                                           "SORT nx",
                                           "SORT_RO nx BY w_* GET h_*->f",
                                           "SORT l BY w_* GET h_*->f GET # ALPHA",
                                           "SORT l BY h_*->f ALPHA",
                                           "SORT l BY nosort GET w_*",
                                           "SORT l ALPHA LIMIT 0 2 GET w_*",
                                           "SORT l BY w_* GET h_*->f GET w_* STORE d1",
                                           "SORT nx STORE d1",
                                           "GETSET nx1 v",
                                           "GETEX nx",
                                           "GETEX s PERSIST",
                                           "GETDEL nx",
                                           "GETDEL l",
                                           "SET nx2 v GET",
                                           "SET nx3 v NX GET",
                                           "SET s w GET",
                                           "SETNX nx4 v",
                                           "INCR nx5",
                                           "DEL nx",
                                           "RENAME nx y",
                                           "MOVE nx 1",
                                           "EXPIRE nx 10",
                                           "LPOP nx",
                                           "LMOVE nx l LEFT RIGHT",
                                           "HDEL nx f",
                                           "SREM nx a",
                                           "SMOVE nx st a",
                                           "ZPOPMIN nx",
                                           "XDEL nx 1-1",
                                           "COPY nx d2",
                                           "COPY s d2",
                                           "SINTERSTORE d3 nx st",
                                           "SUNIONSTORE d3 nx st",
                                           "SDIFFSTORE d3 st nx",
                                           "ZRANGESTORE d4 nx 0 -1",
                                           "ZUNIONSTORE d5 2 nx z",
                                           "ZINTERSTORE d5 2 z nx",
                                           "ZDIFFSTORE d5 2 z nx",
                                           "XACK nx g 1-1",
                                           "XACK x g 1-1",
                                           "MULTI",
                                           "GET nx",
                                           "SET nx v",
                                           "GET nx",
                                           "GETDEL nx6",
                                           "EXEC",
                                           "SELECT 1",
                                           "GET s",
                                           "SET nx v GET",
                                           "SELECT 0",
                                           NULL};

/* Key misses as Redis tells them, with m alone for either kind of
 * channel, not in A, and with A. */
Test(pubsub, key_misses_notify_as_redis)
{
    static const flags_run_t runs[] = {{"Km", "GET __end__"},
                                       {"Em", "GET __end__"},
                                       {"KEA", "SET __end__ 1"},
                                       {"KEAm", "SET __end__ 1"},
                                       {NULL, NULL}};
    same_events_runs(READS_SCRIPT, runs);
}

/* Writes of every family over five keys that change type. */
static const char *const WRITE_FORMS[] = {
    "SET %s v",
    "DEL %s",
    "INCR %s",
    "APPEND %s x",
    "LPUSH %s a",
    "RPOP %s",
    "LMOVE %s %s LEFT RIGHT",
    "SADD %s m%d",
    "SREM %s m%d",
    "HSET %s f%d v",
    "HDEL %s f%d",
    "ZADD %s %d m",
    "ZREM %s m%d",
    "ZPOPMIN %s",
    "ZINCRBY %s 1 m%d",
    "XADD %s MAXLEN 2 * f v",
    "XTRIM %s MAXLEN 1",
    "ZUNIONSTORE %s 2 %s %s",
    "SUNIONSTORE %s %s %s",
    "RENAME %s %s",
    "COPY %s %s",
    "EXPIRE %s 1000",
    "PERSIST %s",
    "LTRIM %s 1 -1",
    "SETRANGE %s 1 x",
    "GETDEL %s",
    "SPOP %s",
    "HINCRBY %s f%d 1",
};

enum { RANDOM_N = 400 };

/* n seeded lines of forms (each takes keys, %s, and at most one number,
 * %d) over k0..k4, NULL-terminated in script. */
static void random_script(const char *const *forms, unsigned nforms, uint64_t x, char (*lines)[64],
                          const char **script, int n)
{
    for (int i = 0; i < n; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        char k[3][4];
        for (int j = 0; j < 3; j++)
            snprintf(k[j], sizeof(k[j]), "k%u", (unsigned)(x >> (8 * j + 16)) % 5);
        const char *f = forms[x % nforms];
        unsigned num = (unsigned)(x >> 40) % 3;
        const char *d = strstr(f, "%d");
        int nkeys = 0;
        for (const char *p = f; (p = strstr(p, "%s")) != NULL; p++)
            nkeys++;
        if (d && nkeys == 1)
            snprintf(lines[i], sizeof(lines[i]), f, k[0], num);
        else if (nkeys == 1)
            snprintf(lines[i], sizeof(lines[i]), f, k[0]);
        else if (nkeys == 2)
            snprintf(lines[i], sizeof(lines[i]), f, k[0], k[1]);
        else
            snprintf(lines[i], sizeof(lines[i]), f, k[0], k[1], k[2]);
        script[i] = lines[i];
    }
    script[n] = NULL;
}

/* A random mix (fixed seed) of writes of every family over five keys
 * that change type, so errors (WRONGTYPE) and emptied keys come too; no
 * short TTLs, whose "expired" would depend on timing. With m, the writes
 * that read first (COPY, GETDEL, the *STORE sources) tell their misses. */
Test(pubsub, random_writes_notify_as_redis)
{
    enum { NFORMS = sizeof(WRITE_FORMS) / sizeof(WRITE_FORMS[0]) };
    static char lines[RANDOM_N][64];
    static const char *script[RANDOM_N + 1];
    random_script(WRITE_FORMS, NFORMS, 0x2545F4914F6CDD1Dull, lines, script, RANDOM_N);
    static const flags_run_t runs[] = {{"KEA", "SET __end__ 1"},
                                       {"KEAn", "SET __end__ 1"},
                                       {"KEAm", "SET __end__ 1"},
                                       {NULL, NULL}};
    same_events_runs(script, runs);
}

/* The same writes mixed with reads of every type over the same keys:
 * the misses (D51) among the writes' events, as Redis tells them. */
Test(pubsub, random_reads_tell_key_misses_as_redis)
{
    static const char *const reads[] = {
        "GET %s",         "MGET %s %s",           "HGET %s f%d",   "HGETALL %s",
        "LRANGE %s 0 -1", "LINDEX %s 0",          "SMEMBERS %s",   "SISMEMBER %s m%d",
        "ZRANGE %s 0 -1", "ZSCORE %s m",          "XRANGE %s - +", "XREAD STREAMS %s %s 0 0",
        "TYPE %s",        "EXISTS %s %s %s",      "TTL %s",        "SINTER %s %s",
        "ZUNION 2 %s %s", "SORT_RO %s BY nosort", "STRLEN %s",     "OBJECT ENCODING %s",
    };
    enum {
        NW = sizeof(WRITE_FORMS) / sizeof(WRITE_FORMS[0]),
        NR = sizeof(reads) / sizeof(reads[0])
    };
    static const char *forms[NW + NR];
    for (unsigned i = 0; i < NW + NR; i++)
        forms[i] = i < NW ? WRITE_FORMS[i] : reads[i - NW];
    static char lines[RANDOM_N][64];
    static const char *script[RANDOM_N + 1];
    random_script(forms, NW + NR, 0x9E3779B97F4A7C15ull, lines, script, RANDOM_N);
    static const flags_run_t runs[] = {
        {"KEAm", "SET __end__ 1"}, {"Km", "GET __end__"}, {"Em", "GET __end__"}, {NULL, NULL}};
    same_events_runs(script, runs);
}

Test(pubsub, notify_setting_as_redis)
{
    redis_or_skip();
    start("--frontends 1");
    static const step_t script[] = {
        {0, 2, "CONFIG SET notify-keyspace-events KEA\r\nCONFIG GET notify-keyspace-events\r\n"},
        {0, 2, "CONFIG SET notify-keyspace-events Kx\r\nCONFIG GET notify-keyspace-events\r\n"},
        {0, 2,
         "CONFIG SET notify-keyspace-events $lshzxetdmn\r\nCONFIG GET "
         "notify-keyspace-events\r\n"},
        {0, 2, "CONFIG SET notify-keyspace-events An\r\nCONFIG GET notify-keyspace-events\r\n"},
        {0, 2, "CONFIG SET notify-keyspace-events KEAmn\r\nCONFIG GET notify-keyspace-events\r\n"},
        {0, 2, "CONFIG SET notify-keyspace-events Kq\r\nCONFIG GET notify-keyspace-events\r\n"},
        {0, 2, "CONFIG SET notify-keyspace-events \"\"\r\nCONFIG GET notify-keyspace-events\r\n"},
        {0, 0, NULL},
    };
    same_script(script, 1);
}

/* The next message on sub, waiting for it (raw_read waits 2 s; up to 30
 * of those: the store's clock moves by ticks on a loaded machine), or
 * NULL. */
static char *next_message(raw_t *sub)
{
    for (int i = 0; i < 30; i++) {
        char *m = raw_read(sub, 1);
        if (m[0]) return m;
        free(m);
    }
    return NULL;
}

Test(pubsub, expired_keys_are_notified)
{
    start("--frontends 2");
    raw_t *sub = open_on(1), *w = open_on(0);
    cr_assert_str_eq(cmd(w, "CONFIG SET notify-keyspace-events Ex"), "+OK\r\n");
    raw_send(sub, "SUBSCRIBE __keyevent@0__:expired\r\n", 34);
    free(raw_read(sub, 1));
    cr_assert_str_eq(cmd(w, "SET short v PX 50"), "+OK\r\n");
    cr_assert_str_eq(cmd(w, "SET long v EX 1000"), "+OK\r\n");
    /* nobody writes: the store's tick moves its clock (D14) and the
     * active expiry reclaims the key */
    char *m = next_message(sub);
    cr_assert_not_null(m, "no expired event");
    cr_expect_str_eq(m, "*3\r\n$7\r\nmessage\r\n$22\r\n__keyevent@0__:expired\r\n$5\r\nshort\r\n");
    free(m);
    raw_close(sub);
    raw_close(w);
}

Test(pubsub, respawned_store_does_not_publish_again)
{
    start("--frontends 1");
    raw_t *sub = raw_open(S.port), *w = raw_open(S.port);
    cr_assert_str_eq(cmd(w, "CONFIG SET notify-keyspace-events KE$"), "+OK\r\n");
    raw_send(sub, "SUBSCRIBE __keyevent@0__:set\r\n", 30);
    free(raw_read(sub, 1));
    enum { N = 200 };
    for (int i = 0; i < N; i++)
        cr_assert_str_eq(cmd(w, "SET k%d v", i), "+OK\r\n");
    for (int i = 0; i < N; i++) {
        char *m = raw_read(sub, 1), want[32];
        snprintf(want, sizeof(want), "\r\nk%d\r\n", i);
        cr_assert(strstr(m, want), "event %d: %s", i, m);
        free(m);
    }
    /* the store replays the log again; what it published is not sent twice */
    pid_t pids[2];
    cr_assert_eq(srv_wait_children(&S, "atticdb-server: store", pids, 2, 1), 1);
    cr_assert_eq(kill(pids[0], SIGKILL), 0);
    for (int i = 0; i < 1000 && strcmp(cmd(w, "GET k0"), "$1\r\nv\r\n"); i++)
        usleep(10000);
    cr_assert_str_eq(cmd(w, "SET after v"), "+OK\r\n");
    char *m = raw_read(sub, 1);
    cr_expect_str_eq(m, "*3\r\n$7\r\nmessage\r\n$18\r\n__keyevent@0__:set\r\n$5\r\nafter\r\n");
    free(m);
    raw_close(sub);
    raw_close(w);
}

Test(pubsub, evicted_keys_are_notified)
{
    start("--frontends 1 --maxmemory-policy allkeys-random");
    raw_t *sub = raw_open(S.port), *w = raw_open(S.port);
    for (int i = 0; i < 300; i++)
        cr_assert_str_eq(cmd(w, "SET key:%d %0100d", i, i), "+OK\r\n");
    cr_assert_str_eq(cmd(w, "CONFIG SET notify-keyspace-events Ee"), "+OK\r\n");
    raw_send(sub, "SUBSCRIBE __keyevent@0__:evicted\r\n", 34);
    free(raw_read(sub, 1));
    cmd(w, "DBSIZE"); /* applied: used_memory includes every key (D19) */
    /* what maxmemory bounds: used_memory less the shared memory (D43) */
    long long used = info_field(cmd(w, "INFO memory"), "used_memory") -
                     info_field(cmd(w, "INFO memory"), "mem_not_counted_for_evict");
    cr_assert_gt(used, 0);
    cr_assert_str_eq(cmd(w, "CONFIG SET maxmemory %lld", used / 2), "+OK\r\n");
    /* the store evicts on its own (CMD_EVICT records): one event each */
    char *m = next_message(sub);
    cr_assert_not_null(m, "no evicted event");
    cr_expect(strstr(m, "*3\r\n$7\r\nmessage\r\n$22\r\n__keyevent@0__:evicted\r\n$") == m &&
                  strstr(m, "\r\nkey:"),
              "%s", m);
    free(m);
    cr_assert_str_eq(cmd(w, "CONFIG SET maxmemory 0"), "+OK\r\n");
    raw_close(sub);
    raw_close(w);
}
