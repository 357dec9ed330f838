/*
 * test_durability.c - the real server under restarts and kills: every write
 * that got its reply survives a clean restart, a SIGKILL of the whole
 * process group, and a torn log tail; a killed frontend is respawned while
 * clients of the other frontends see no error.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

TestSuite(durability, .fini = srv_cleanup_all);

static void expect_value(redisContext *c, const char *key, const char *want)
{
    redisReply *r = redisCommand(c, "GET %s", key);
    cr_assert_not_null(r, "GET %s: %s", key, c->errstr);
    cr_assert_eq(r->type, REDIS_REPLY_STRING, "GET %s: type %d", key, r->type);
    cr_assert_str_eq(r->str, want, "GET %s", key);
    freeReplyObject(r);
}

Test(durability, pipelined_writes_survive_restart, .timeout = 120)
{
    srv_t s;
    cr_assert_eq(srv_start(&s, "--frontends 2"), 0, "server did not start");
    enum { CLIENTS = 16, PER = 2000 };
    redisContext *cs[CLIENTS];
    for (int i = 0; i < CLIENTS; i++)
        cr_assert_not_null(cs[i] = srv_connect(&s));
    for (int i = 0; i < CLIENTS; i++)
        for (int j = 0; j < PER; j++)
            redisAppendCommand(cs[i], "SET k:%d:%d v:%d:%d", i, j, i, j);
    for (int i = 0; i < CLIENTS; i++) {
        for (int j = 0; j < PER; j++) {
            redisReply *r;
            cr_assert_eq(redisGetReply(cs[i], (void **)&r), REDIS_OK);
            cr_assert_eq(r->type, REDIS_REPLY_STATUS);
            cr_assert_str_eq(r->str, "OK");
            freeReplyObject(r);
        }
        redisFree(cs[i]);
    }
    cr_assert_eq(srv_stop(&s), 0, "clean shutdown exits 0");
    cr_assert_eq(srv_restart(&s), 0, "restart");
    redisContext *c = srv_connect(&s);
    redisReply *r = redisCommand(c, "DBSIZE");
    cr_assert_eq(r->integer, CLIENTS * PER);
    freeReplyObject(r);
    char key[64], val[64];
    for (int i = 0; i < CLIENTS; i++)
        for (int j = 0; j < PER; j++) {
            snprintf(key, sizeof(key), "k:%d:%d", i, j);
            snprintf(val, sizeof(val), "v:%d:%d", i, j);
            expect_value(c, key, val);
        }
    redisFree(c);
    srv_stop(&s);
    srv_cleanup(&s);
}

/* ---- SIGKILL of everything while clients write ---- */

enum { WRITERS = 8, MAX_WRITES = 200000 };

typedef struct writer {
    int port;
    int id;
    int acked;            /* writes 0 .. acked-1 got their reply */
    long counter_ok;      /* last acked INCR result */
    volatile int stopped; /* the writer saw an error (or finished) */
} writer_t;

/* Writer w's i-th value: big enough to live in the log, not inline. */
static void writer_value(char *val, size_t len, int w, int i)
{
    int n = snprintf(val, len, "value-%d-%d-", w, i);
    memset(val + n, 'x', 200);
    val[n + 200] = '\0';
}

static void expect_value(redisContext *c, const char *key, const char *want);

/* Every write each writer got a reply for is there, with its value. */
static void expect_writers(redisContext *c, const writer_t *ws)
{
    for (int w = 0; w < WRITERS; w++) {
        for (int i = 0; i < ws[w].acked; i++) {
            char key[64], val[300];
            snprintf(key, sizeof(key), "w:%d:%d", w, i);
            writer_value(val, sizeof(val), w, i);
            expect_value(c, key, val);
        }
        /* The counter holds at least the last acked value, at most one more
         * (an INCR that became durable but whose reply was lost). */
        redisReply *r = redisCommand(c, "GET counter:%d", w);
        long v = r->type == REDIS_REPLY_STRING ? atol(r->str) : 0;
        cr_assert(v >= ws[w].counter_ok && v <= ws[w].counter_ok + 1,
                  "counter %d: %ld, last acked %ld", w, v, ws[w].counter_ok);
        freeReplyObject(r);
    }
}

static void *writer_main(void *arg)
{
    writer_t *w = arg;
    srv_t tmp = {.port = w->port};
    redisContext *c = srv_connect(&tmp);
    if (!c) return NULL;
    for (int i = 0; i < MAX_WRITES; i++) {
        char val[300];
        writer_value(val, sizeof(val), w->id, i);
        redisReply *r = redisCommand(c, "SET w:%d:%d %s", w->id, i, val);
        if (!r || r->type != REDIS_REPLY_STATUS) {
            if (r) freeReplyObject(r);
            break;
        }
        freeReplyObject(r);
        r = redisCommand(c, "INCR counter:%d", w->id);
        if (!r || r->type != REDIS_REPLY_INTEGER) {
            if (r) freeReplyObject(r);
            w->acked = i + 1;
            break;
        }
        w->counter_ok = r->integer;
        freeReplyObject(r);
        w->acked = i + 1;
    }
    w->stopped = 1;
    redisFree(c);
    return NULL;
}

Test(durability, acked_writes_survive_sigkill_of_everything, .timeout = 120)
{
    srv_t s;
    cr_assert_eq(srv_start(&s, "--frontends 2 --ring-size 1mb --segment-size 4mb"), 0);
    pthread_t th[WRITERS];
    writer_t ws[WRITERS];
    for (int i = 0; i < WRITERS; i++) {
        ws[i] = (writer_t){.port = s.port, .id = i};
        pthread_create(&th[i], NULL, writer_main, &ws[i]);
    }
    usleep(1500 * 1000);
    srv_kill_all(&s); /* power cut, as far as the processes know */
    for (int i = 0; i < WRITERS; i++)
        pthread_join(th[i], NULL);
    int total = 0;
    for (int i = 0; i < WRITERS; i++)
        total += ws[i].acked;
    cr_assert_gt(total, 0, "some writes were acked before the kill");

    cr_assert_eq(srv_restart(&s), 0, "restart after SIGKILL");
    redisContext *c = srv_connect(&s);
    cr_assert_not_null(c);
    expect_writers(c, ws);
    redisFree(c);
    srv_stop(&s);
    srv_cleanup(&s);
}

/* ---- one frontend killed ---- */

Test(durability, killed_frontend_is_respawned_others_unaffected, .timeout = 60)
{
    srv_t s;
    cr_assert_eq(srv_start(&s, "--frontends 2"), 0);
    /* Connections are spread by the kernel; open enough to have some on
     * each frontend. */
    enum { N = 24 };
    redisContext *cs[N];
    int fe[N];
    int on1 = 0;
    for (int i = 0; i < N; i++) {
        cs[i] = srv_connect(&s);
        cr_assert_not_null(cs[i]);
        fe[i] = srv_frontend_of(cs[i]);
        cr_assert_geq(fe[i], 0, "INFO server has no frontend: field");
        on1 += fe[i] == 1;
    }
    cr_assert_gt(on1, 0, "no connection landed on frontend 1");
    pid_t pids[4];
    char title[64];
    snprintf(title, sizeof(title), "atticdb-server: frontend 0");
    int found = srv_wait_children(&s, title, pids, 4, 1);
    cr_assert_eq(found, 1);
    pid_t old = pids[0];
    kill(old, SIGKILL);
    /* Clients of frontend 1 keep working, with no error, while it happens. */
    for (int round = 0; round < 50; round++) {
        for (int i = 0; i < N; i++) {
            if (fe[i] != 1) continue;
            redisReply *r = redisCommand(cs[i], "SET during:%d:%d x", i, round);
            cr_assert_not_null(r, "client on frontend 1 lost: %s", cs[i]->errstr);
            cr_assert_eq(r->type, REDIS_REPLY_STATUS);
            freeReplyObject(r);
        }
        usleep(10000);
    }
    /* The master respawned frontend 0. */
    pid_t now = 0;
    for (int i = 0; i < 200 && !now; i++) {
        if (srv_find_children(&s, title, pids, 4) == 1 && pids[0] != old)
            now = pids[0];
        else
            usleep(10000);
    }
    cr_assert_neq(now, 0, "frontend 0 was not respawned");
    /* The master said which child died, its pid, and how. */
    char want[128];
    snprintf(want, sizeof(want), "frontend 0 (pid %d) killed by signal 9", (int)old);
    cr_assert(srv_log_contains(&s, want, NULL), "server log lacks \"%s\"", want);
    /* Clients of the dead frontend lost their connection. */
    for (int i = 0; i < N; i++) {
        if (fe[i] != 0) continue;
        redisReply *r = redisCommand(cs[i], "PING");
        cr_assert_null(r, "a client of the killed frontend still answered");
    }
    for (int i = 0; i < N; i++)
        redisFree(cs[i]);
    /* New connections work, whichever frontend takes them. */
    for (int i = 0; i < 8; i++) {
        redisContext *c = srv_connect(&s);
        cr_assert_not_null(c);
        redisReply *r = redisCommand(c, "SET after %d", i);
        cr_assert_eq(r->type, REDIS_REPLY_STATUS);
        freeReplyObject(r);
        redisFree(c);
    }
    cr_assert_eq(srv_stop(&s), 0);
    srv_cleanup(&s);
}

Test(durability, second_server_on_same_dir_refuses, .timeout = 30)
{
    srv_t s;
    cr_assert_eq(srv_start(&s, NULL), 0);
    char args[512], out[4096];
    snprintf(args, sizeof(args), "--port %d --dir %s", srv_free_port(), s.dir);
    int status = srv_run_tool("atticdb-server", args, out, sizeof(out));
    cr_assert(status > 0, "second server must fail");
    cr_assert(strstr(out, "in use") != NULL, "message: %s", out);
    srv_stop(&s);
    srv_cleanup(&s);
}

Test(durability, clean_stop_leaves_no_process, .timeout = 30)
{
    srv_t s;
    cr_assert_eq(srv_start(&s, "--frontends 3"), 0);
    pid_t pids[8];
    int n = srv_wait_children(&s, "atticdb-server: ", pids, 8, 6);
    cr_assert_eq(n, 6, "logger, store, replication, 3 frontends");
    pid_t group = s.pid;
    cr_assert_eq(srv_stop(&s), 0);
    /* Children that exited with the master may stay zombies until init
     * reaps them: poll, with a deadline, rather than sleep and hope. */
    int alive = 1;
    for (int i = 0; i < 500 && alive; i++) {
        if (i) usleep(10 * 1000);
        alive = kill(-group, 0) == 0;
    }
    cr_assert(!alive, "a process of the server outlived the master by 5 s");
    srv_cleanup(&s);
}

Test(durability, torn_tail_is_cut_on_restart, .timeout = 60)
{
    srv_t s;
    cr_assert_eq(srv_start(&s, "--segment-size 1mb --ring-size 256kb"), 0);
    redisContext *c = srv_connect(&s);
    for (int i = 0; i < 100; i++) {
        redisReply *r = redisCommand(c, "SET t:%d %d", i, i);
        freeReplyObject(r);
    }
    redisReply *r = redisCommand(c, "INFO persistence");
    const char *p = strstr(r->str, "atticdb_durable_lsn:");
    cr_assert_not_null(p);
    unsigned long long end = strtoull(p + 20, NULL, 10);
    freeReplyObject(r);
    redisFree(c);
    srv_kill_all(&s);
    /* Garbage where the next record would go: a write torn by power loss. */
    char path[512];
    snprintf(path, sizeof(path), "%s/log-%016llx.seg", s.dir, end & ~((1ull << 20) - 1));
    FILE *f = fopen(path, "r+");
    cr_assert_not_null(f, "%s", path);
    fseek(f, (long)(end & ((1ull << 20) - 1)), SEEK_SET);
    fwrite("\x01\x02garbage-torn-record", 1, 21, f);
    fclose(f);
    cr_assert_eq(srv_restart(&s), 0);
    c = srv_connect(&s);
    for (int i = 0; i < 100; i++) {
        char key[16], val[16];
        snprintf(key, sizeof(key), "t:%d", i);
        snprintf(val, sizeof(val), "%d", i);
        expect_value(c, key, val);
    }
    r = redisCommand(c, "SET after-cut yes");
    cr_assert_eq(r->type, REDIS_REPLY_STATUS);
    freeReplyObject(r);
    redisFree(c);
    cr_assert_eq(srv_stop(&s), 0);
    cr_assert_eq(srv_restart(&s), 0);
    c = srv_connect(&s);
    expect_value(c, "after-cut", "yes");
    redisFree(c);
    srv_stop(&s);
    srv_cleanup(&s);
}

/* ---- back-pressure: a full ring stalls writers, never overwrites ---- */

Test(durability, full_ring_is_back_pressure_not_loss, .timeout = 60)
{
    srv_t s;
    cr_assert_eq(srv_start(&s, "--frontends 1 --ring-size 64kb --segment-size 1mb"), 0);
    pid_t store[2];
    int n = srv_wait_children(&s, "atticdb-server: store", store, 2, 1);
    cr_assert_eq(n, 1);
    /* The store releases ring space as it applies; stopped, it can't. */
    kill(store[0], SIGSTOP);
    redisContext *c = srv_connect(&s);
    enum { N = 600 };
    char val[1024];
    memset(val, 'b', sizeof(val) - 1);
    val[sizeof(val) - 1] = '\0';
    for (int i = 0; i < N; i++)
        redisAppendCommand(c, "SET bp:%d %s", i, val); /* ~650 KB: 10 rings */
    /* Send what the socket takes, and see that not everything is acked. */
    redisSetTimeout(c, (struct timeval){0, 500 * 1000});
    int got = 0;
    redisReply *r;
    while (got < N && redisGetReply(c, (void **)&r) == REDIS_OK) {
        cr_assert_eq(r->type, REDIS_REPLY_STATUS);
        freeReplyObject(r);
        got++;
    }
    cr_assert_lt(got, N, "every write was acked with the store stopped and a 64 KB ring");
    redisFree(c); /* the pending replies are lost with the connection; the writes are not */
    kill(store[0], SIGCONT);
    /* Everything the frontend took in gets through; a new client sees the
     * acked ones and can write again. */
    c = srv_connect(&s);
    for (int i = 0; i < got; i++) {
        r = redisCommand(c, "STRLEN bp:%d", i);
        cr_assert_not_null(r);
        cr_assert_eq(r->integer, (long long)sizeof(val) - 1, "acked write %d", i);
        freeReplyObject(r);
    }
    r = redisCommand(c, "SET after-pressure ok");
    cr_assert_eq(r->type, REDIS_REPLY_STATUS);
    freeReplyObject(r);
    redisFree(c);
    cr_assert_eq(srv_stop(&s), 0);
    srv_cleanup(&s);
}

Test(durability, record_over_a_quarter_of_the_ring_is_refused, .timeout = 30)
{
    srv_t s;
    cr_assert_eq(srv_start(&s, "--frontends 1 --ring-size 1mb --segment-size 4mb"), 0);
    redisContext *c = srv_connect(&s);
    size_t big = 300 * 1024; /* over 256 KB: a quarter of the ring */
    char *v = malloc(big);
    memset(v, 'x', big);
    /* A sorted set member cannot be written in parts (D31 covers the
     * string writes, D45 hash values and list elements, D48 set
     * members): refused whole. */
    redisReply *r = redisCommand(c, "ZADD big 1 %b", v, big);
    cr_assert_eq(r->type, REDIS_REPLY_ERROR);
    cr_assert(strstr(r->str, "request too large") != NULL, "%s", r->str);
    freeReplyObject(r);
    r = redisCommand(c, "EXISTS big");
    cr_assert_eq(r->integer, 0, "a refused write changes nothing");
    freeReplyObject(r);
    /* Just under the limit is fine. */
    r = redisCommand(c, "RPUSH big %b", v, (size_t)200 * 1024);
    cr_assert_eq(r->type, REDIS_REPLY_INTEGER);
    freeReplyObject(r);
    /* SET takes it in parts (D31; tests/integration/test_bigvalues). */
    r = redisCommand(c, "SET s %b", v, big);
    cr_assert_eq(r->type, REDIS_REPLY_STATUS, "%s", r->str);
    freeReplyObject(r);
    r = redisCommand(c, "STRLEN s");
    cr_assert_eq(r->integer, (long long)big);
    freeReplyObject(r);
    free(v);
    redisFree(c);
    cr_assert_eq(srv_stop(&s), 0);
    srv_cleanup(&s);
}

/* ---- logger and store killed while clients write ---- */

Test(durability, logger_and_store_killed_under_load_lose_nothing, .timeout = 120)
{
    srv_t s;
    cr_assert_eq(srv_start(&s, "--frontends 2 --ring-size 1mb --segment-size 4mb"), 0);
    pthread_t th[WRITERS];
    writer_t ws[WRITERS];
    for (int i = 0; i < WRITERS; i++) {
        ws[i] = (writer_t){.port = s.port, .id = i};
        pthread_create(&th[i], NULL, writer_main, &ws[i]);
    }
    const char *roles[] = {"atticdb-server: logger", "atticdb-server: store",
                           "atticdb-server: logger", "atticdb-server: store"};
    for (int k = 0; k < 4; k++) {
        usleep(300 * 1000);
        pid_t pid[2];
        int n = srv_wait_children(&s, roles[k], pid, 2, 1);
        cr_assert_eq(n, 1, "%s is running", roles[k]);
        kill(pid[0], SIGKILL);
    }
    usleep(300 * 1000);
    /* Stop the writers by stopping the server cleanly: every write acked so
     * far must be there, and the writers must not have seen an error
     * before the stop. */
    int acked_before_stop = 0;
    for (int i = 0; i < WRITERS; i++) {
        acked_before_stop += ws[i].acked;
        cr_assert_eq(ws[i].stopped, 0, "writer %d saw an error while logger and store were killed",
                     i);
    }
    cr_assert_eq(srv_stop(&s), 0);
    for (int i = 0; i < WRITERS; i++)
        pthread_join(th[i], NULL);
    cr_assert_gt(acked_before_stop, 0);
    cr_assert(srv_log_contains(&s, "logger (pid", NULL), "the master logged the logger's death");
    cr_assert(srv_log_contains(&s, "store (pid", NULL), "the master logged the store's death");
    cr_assert_eq(srv_restart(&s), 0);
    redisContext *c = srv_connect(&s);
    expect_writers(c, ws);
    redisFree(c);
    srv_stop(&s);
    srv_cleanup(&s);
}

/* ---- the master killed ---- */

Test(durability, killed_master_leaves_no_orphans_and_restart_recovers, .timeout = 60)
{
    srv_t s;
    cr_assert_eq(srv_start(&s, "--frontends 2"), 0);
    redisContext *c = srv_connect(&s);
    for (int i = 0; i < 100; i++)
        freeReplyObject(redisCommand(c, "SET m:%d %d", i, i));
    redisFree(c);
    pid_t kids[8];
    int n = srv_wait_children(&s, "atticdb-server: ", kids, 8, 5);
    cr_assert_eq(n, 5, "logger, store, replication, 2 frontends");
    kill(s.pid, SIGKILL); /* the master only */
    waitpid(s.pid, NULL, 0);
    /* Every child goes with it (PR_SET_PDEATHSIG), none is left behind. */
    int alive = 4;
    for (int t = 0; t < 300 && alive; t++) {
        alive = 0;
        for (int i = 0; i < 4; i++)
            alive += kill(kids[i], 0) == 0;
        if (alive) usleep(10000);
    }
    cr_assert_eq(alive, 0, "%d children outlived the master", alive);
    s.pid = 0;
    cr_assert_eq(srv_restart(&s), 0);
    c = srv_connect(&s);
    for (int i = 0; i < 100; i++) {
        char key[16], val[16];
        snprintf(key, sizeof(key), "m:%d", i);
        snprintf(val, sizeof(val), "%d", i);
        expect_value(c, key, val);
    }
    redisFree(c);
    cr_assert_eq(srv_stop(&s), 0);
    srv_cleanup(&s);
}

/* ---- hashes ---- */

/* HGETALL key as "field=value\n" lines, sorted (a hashtable-encoded
 * hash lists in its table's order, which a restart may change). */
static char *hash_text(redisContext *c, const char *key)
{
    redisReply *r = redisCommand(c, "HGETALL %s", key);
    cr_assert_not_null(r, "HGETALL %s: %s", key, c->errstr);
    cr_assert_eq(r->type, REDIS_REPLY_ARRAY, "HGETALL %s: type %d", key, r->type);
    size_t n = r->elements / 2;
    char **lines = calloc(n ? n : 1, sizeof(*lines));
    size_t total = 1;
    for (size_t i = 0; i < n; i++) {
        const redisReply *f = r->element[2 * i], *v = r->element[2 * i + 1];
        lines[i] = malloc(f->len + v->len + 3);
        memcpy(lines[i], f->str, f->len);
        lines[i][f->len] = '=';
        memcpy(lines[i] + f->len + 1, v->str, v->len);
        strcpy(lines[i] + f->len + 1 + v->len, "\n");
        total += strlen(lines[i]);
    }
    for (size_t i = 1; i < n; i++) /* insertion sort: a few hundred lines */
        for (size_t j = i; j > 0 && strcmp(lines[j - 1], lines[j]) > 0; j--) {
            char *t = lines[j];
            lines[j] = lines[j - 1];
            lines[j - 1] = t;
        }
    char *out = malloc(total);
    out[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        strcat(out, lines[i]);
        free(lines[i]);
    }
    free(lines);
    freeReplyObject(r);
    return out;
}

static char *reply_str(redisContext *c, const char *fmt, const char *key)
{
    redisReply *r = redisCommand(c, fmt, key);
    cr_assert_not_null(r);
    char *s = strdup(r->str ? r->str : "(nil)");
    freeReplyObject(r);
    return s;
}

/* Every acked hash write survives a SIGKILL of every process and the
 * restart's replay: the same fields and values (inline, log extents,
 * HINCRBYFLOAT's texts), the same encodings, the deleted hash gone. */
Test(durability, hashes_survive_sigkill_of_everything, .timeout = 120)
{
    srv_t s;
    cr_assert_eq(srv_start(&s, "--frontends 2"), 0);
    redisContext *c = srv_connect(&s);
    cr_assert_not_null(c);
    char big[200];
    memset(big, 'b', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    const char *setup[] = {
        "HSET small a 1 b 2 c 3", "HINCRBY small a 41", "HINCRBYFLOAT small f 1.25", "HDEL small b",
        "HSET gone x 1",          "HDEL gone x",        "HSETNX small c 99"};
    for (size_t i = 0; i < sizeof(setup) / sizeof(setup[0]); i++) {
        redisReply *r = redisCommand(c, setup[i]);
        cr_assert_not_null(r, "%s", setup[i]);
        cr_assert_neq(r->type, REDIS_REPLY_ERROR, "%s: %s", setup[i], r->str);
        freeReplyObject(r);
    }
    for (int i = 0; i < 600; i++) { /* past 512 fields: a hashtable, values in the log */
        redisReply *r = redisCommand(c, "HSET large field%d %s%d", i, i % 3 ? big : "v", i);
        cr_assert_not_null(r);
        freeReplyObject(r);
    }
    char *small = hash_text(c, "small"), *large = hash_text(c, "large");
    char *enc_small = reply_str(c, "OBJECT ENCODING %s", "small");
    char *enc_large = reply_str(c, "OBJECT ENCODING %s", "large");
    cr_assert_str_eq(enc_small, "listpack");
    cr_assert_str_eq(enc_large, "hashtable");
    cr_assert_str_eq(small, "a=42\nc=3\nf=1.25\n");
    redisFree(c);

    srv_kill_all(&s);
    cr_assert_eq(srv_restart(&s), 0, "restart after SIGKILL");
    c = srv_connect(&s);
    cr_assert_not_null(c);
    char *small2 = hash_text(c, "small"), *large2 = hash_text(c, "large");
    cr_assert_str_eq(small2, small);
    cr_assert(strcmp(large2, large) == 0, "the 600-field hash came back whole");
    char *e1 = reply_str(c, "OBJECT ENCODING %s", "small"),
         *e2 = reply_str(c, "OBJECT ENCODING %s", "large");
    cr_assert_str_eq(e1, "listpack");
    cr_assert_str_eq(e2, "hashtable");
    char *t = reply_str(c, "TYPE %s", "gone");
    cr_assert_str_eq(t, "none", "an emptied hash stays gone");
    free(small), free(large), free(small2), free(large2), free(enc_small), free(enc_large);
    free(e1), free(e2), free(t);
    redisFree(c);
    srv_stop(&s);
    srv_cleanup(&s);
}

/* ---- lists ---- */

/* An array reply of fmt (a command with one %s, the key) as "element\n"
 * lines, in the reply's order. */
static char *array_text(redisContext *c, const char *fmt, const char *key)
{
    redisReply *r = redisCommand(c, fmt, key);
    cr_assert_not_null(r, "%s %s: %s", fmt, key, c->errstr);
    cr_assert_eq(r->type, REDIS_REPLY_ARRAY, "%s %s: type %d", fmt, key, r->type);
    size_t total = 1;
    for (size_t i = 0; i < r->elements; i++)
        total += r->element[i]->len + 1;
    char *out = malloc(total), *p = out;
    for (size_t i = 0; i < r->elements; i++) {
        memcpy(p, r->element[i]->str, r->element[i]->len);
        p += r->element[i]->len;
        *p++ = '\n';
    }
    *p = '\0';
    freeReplyObject(r);
    return out;
}

/* LRANGE key 0 -1 as "element\n" lines, in the list's order. */
static char *list_text(redisContext *c, const char *key)
{
    return array_text(c, "LRANGE %s 0 -1", key);
}

/* Every acked list write survives a SIGKILL of every process and the
 * restart's replay: the same elements in the same order (inline and log
 * extents), the emptied list gone. */
Test(durability, lists_survive_sigkill_of_everything, .timeout = 120)
{
    srv_t s;
    cr_assert_eq(srv_start(&s, "--frontends 2"), 0);
    redisContext *c = srv_connect(&s);
    cr_assert_not_null(c);
    char big[200];
    memset(big, 'l', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    const char *setup[] = {"RPUSH small a b c d",
                           "LPUSH small z",
                           "LSET small 1 A",
                           "LREM small 1 c",
                           "LINSERT small AFTER A ins",
                           "RPUSH gone x",
                           "LPOP gone",
                           "LMOVE small other RIGHT LEFT"};
    for (size_t i = 0; i < sizeof(setup) / sizeof(setup[0]); i++) {
        redisReply *r = redisCommand(c, setup[i]);
        cr_assert_not_null(r, "%s", setup[i]);
        cr_assert_neq(r->type, REDIS_REPLY_ERROR, "%s: %s", setup[i], r->str);
        freeReplyObject(r);
    }
    for (int i = 0; i < 600; i++) { /* long elements are extents in the log */
        redisReply *r =
            redisCommand(c, i % 2 ? "RPUSH large %s%d" : "LPUSH large %s%d", i % 3 ? big : "v", i);
        cr_assert_not_null(r);
        freeReplyObject(r);
    }
    char *small = list_text(c, "small"), *large = list_text(c, "large"),
         *other = list_text(c, "other");
    cr_assert_str_eq(small, "z\nA\nins\nb\n");
    cr_assert_str_eq(other, "d\n");
    redisFree(c);

    srv_kill_all(&s);
    cr_assert_eq(srv_restart(&s), 0, "restart after SIGKILL");
    c = srv_connect(&s);
    cr_assert_not_null(c);
    char *small2 = list_text(c, "small"), *large2 = list_text(c, "large"),
         *other2 = list_text(c, "other");
    cr_assert_str_eq(small2, small);
    cr_assert_str_eq(other2, other);
    cr_assert(strcmp(large2, large) == 0, "the 600-element list came back whole, in order");
    char *t = reply_str(c, "TYPE %s", "gone");
    cr_assert_str_eq(t, "none", "an emptied list stays gone");
    free(small), free(large), free(other), free(small2), free(large2), free(other2), free(t);
    redisFree(c);
    srv_stop(&s);
    srv_cleanup(&s);
}

/* ---- sorted sets ---- */

/* Every acked zset write survives a SIGKILL of every process and the
 * restart's replay: the same members and scores in the same order, the
 * same encodings (each record's limits decide them, not the restarted
 * configuration), the emptied zset gone. */
Test(durability, zsets_survive_sigkill_of_everything, .timeout = 120)
{
    srv_t s;
    cr_assert_eq(srv_start(&s, "--frontends 2"), 0);
    redisContext *c = srv_connect(&s);
    cr_assert_not_null(c);
    const char *setup[] = {"ZADD small 1 a 2 b 3 c 4 d",
                           "ZINCRBY small 0.5 a",
                           "ZADD small GT CH 1 b 9 c",
                           "ZREM small d",
                           "ZADD gone 1 x",
                           "ZPOPMIN gone",
                           "CONFIG SET zset-max-listpack-entries 4",
                           "ZADD conv 1 a 2 b 3 c 4 d 5 e",
                           "CONFIG SET zset-max-listpack-entries 128",
                           "ZUNIONSTORE uni 2 small conv WEIGHTS 2 1 AGGREGATE MAX",
                           "ZRANGESTORE rng conv 2 4 BYSCORE",
                           "ZREMRANGEBYSCORE conv (4 +inf",
                           "ZMPOP 1 rng MAX COUNT 1"};
    for (size_t i = 0; i < sizeof(setup) / sizeof(setup[0]); i++) {
        redisReply *r = redisCommand(c, setup[i]);
        cr_assert_not_null(r, "%s", setup[i]);
        cr_assert_neq(r->type, REDIS_REPLY_ERROR, "%s: %s", setup[i], r->str);
        freeReplyObject(r);
    }
    for (int i = 0; i < 500; i++) { /* a skiplist by size */
        redisReply *r = redisCommand(c, "ZADD large %d m%d", i % 37, i);
        cr_assert_not_null(r);
        freeReplyObject(r);
    }
    const char *keys[] = {"small", "conv", "uni", "rng", "large"};
    char *before[5], *enc[5];
    for (int k = 0; k < 5; k++) {
        before[k] = array_text(c, "ZRANGE %s 0 -1 WITHSCORES", keys[k]);
        enc[k] = reply_str(c, "OBJECT ENCODING %s", keys[k]);
    }
    cr_assert_str_eq(before[0], "a\n1.5\nb\n2\nc\n9\n");
    cr_assert_str_eq(enc[1], "skiplist");
    cr_assert_str_eq(enc[3], "listpack");
    cr_assert_str_eq(enc[4], "skiplist");
    redisFree(c);

    srv_kill_all(&s);
    cr_assert_eq(srv_restart(&s), 0, "restart after SIGKILL");
    c = srv_connect(&s);
    cr_assert_not_null(c);
    for (int k = 0; k < 5; k++) {
        char *after = array_text(c, "ZRANGE %s 0 -1 WITHSCORES", keys[k]);
        char *e = reply_str(c, "OBJECT ENCODING %s", keys[k]);
        cr_assert(strcmp(after, before[k]) == 0, "%s came back whole, in order", keys[k]);
        cr_assert_str_eq(e, enc[k], "%s keeps its encoding", keys[k]);
        free(after), free(e), free(before[k]), free(enc[k]);
    }
    char *t = reply_str(c, "TYPE %s", "gone");
    cr_assert_str_eq(t, "none", "an emptied zset stays gone");
    free(t);
    redisFree(c);
    srv_stop(&s);
    srv_cleanup(&s);
}

/* A sorted set of a million members (issue 13's big collections; not
 * timed): built by pipelined ZADDs of 1000 members each, its rank, score
 * and range answers, the same after a SIGKILL of every process and the
 * replay of its 1000 records. */
Test(durability, million_member_zset_survives_sigkill, .timeout = 600)
{
    srv_t s;
    cr_assert_eq(srv_start(&s, "--frontends 1"), 0);
    redisContext *c = srv_connect(&s);
    cr_assert_not_null(c);
    /* a generous wait for replies: a loaded machine replays a million
     * members slowly (a wait, not a timed assertion) */
    redisSetTimeout(c, (struct timeval){300, 0});
    enum { BATCH = 1000, BATCHES = 1000 };
    static const char *argv[2 + 2 * BATCH];
    static size_t lens[2 + 2 * BATCH];
    static char text[2 * BATCH][24];
    argv[0] = "ZADD", lens[0] = 4;
    argv[1] = "big", lens[1] = 3;
    for (int b = 0; b < BATCHES; b++) {
        for (int i = 0; i < BATCH; i++) {
            int m = b * BATCH + i; /* score m % 1000, so ties order by member */
            lens[2 + 2 * i] = (size_t)snprintf(text[2 * i], 24, "%d", m % 1000);
            lens[3 + 2 * i] = (size_t)snprintf(text[2 * i + 1], 24, "m%07d", m);
            argv[2 + 2 * i] = text[2 * i];
            argv[3 + 2 * i] = text[2 * i + 1];
        }
        cr_assert_eq(redisAppendCommandArgv(c, 2 + 2 * BATCH, argv, lens), REDIS_OK);
        if (b % 16 == 15 || b == BATCHES - 1) /* a window of replies at a time */
            for (int k = b - b % 16; k <= b; k++) {
                redisReply *r = NULL;
                cr_assert_eq(redisGetReply(c, (void **)&r), REDIS_OK, "ZADD batch %d", k);
                cr_assert_eq(r->type, REDIS_REPLY_INTEGER);
                cr_assert_eq(r->integer, BATCH);
                freeReplyObject(r);
            }
    }
    const char *checks[] = {"ZCARD big",           "ZRANK big m0000999", "ZREVRANK big m0000000",
                            "ZSCORE big m0999999", "ZCOUNT big 10 (20",  "OBJECT ENCODING big"};
    const char *want[] = {"1000000", "999000", "999999", "999", "10000", "skiplist"};
    for (int round = 0; round < 2; round++) {
        for (size_t i = 0; i < sizeof checks / sizeof checks[0]; i++) {
            redisReply *r = redisCommand(c, checks[i]);
            cr_assert_not_null(r, "%s", checks[i]);
            char got[32];
            if (r->type == REDIS_REPLY_INTEGER)
                snprintf(got, sizeof got, "%lld", r->integer);
            else
                snprintf(got, sizeof got, "%s", r->str ? r->str : "(nil)");
            cr_assert_str_eq(got, want[i], "%s (round %d)", checks[i], round);
            freeReplyObject(r);
        }
        char *range = array_text(c, "ZRANGEBYSCORE %s 500 500 LIMIT 2 3", "big");
        cr_assert_str_eq(range, "m0002500\nm0003500\nm0004500\n", "round %d", round);
        free(range);
        if (round) break;
        redisFree(c);
        srv_kill_all(&s);
        cr_assert_eq(srv_restart(&s), 0, "restart after SIGKILL");
        c = srv_connect(&s);
        cr_assert_not_null(c);
        redisSetTimeout(c, (struct timeval){300, 0});
    }
    redisFree(c);
    srv_stop(&s);
    srv_cleanup(&s);
}

/* RESTORE (D34): keys restored from DUMP payloads and acked come back after
 * a SIGKILL of every process, decoded again from the log on replay, with
 * the same contents, encodings and payloads. */
Test(durability, restored_keys_survive_sigkill_of_everything, .timeout = 120)
{
    srv_t s;
    cr_assert_eq(srv_start(&s, "--frontends 2"), 0);
    redisContext *c = srv_connect(&s);
    cr_assert_not_null(c);
    for (int i = 0; i < 300; i++) {
        redisReply *r = redisCommand(c, "SADD src m%d", i);
        cr_assert_not_null(r);
        freeReplyObject(r);
    }
    char longv[400];
    memset(longv, 'q', sizeof(longv) - 1);
    longv[sizeof(longv) - 1] = '\0';
    redisReply *lr = redisCommand(c, "SET long %s", longv); /* DUMPed plain: an extent */
    cr_assert_not_null(lr);
    freeReplyObject(lr);
    const char *setup[] = {"SET str hello", "SET num 12345", "HSET h a 1 b two", "SADD ints 3 1 2"};
    for (size_t i = 0; i < sizeof(setup) / sizeof(setup[0]); i++) {
        redisReply *r = redisCommand(c, setup[i]);
        cr_assert_not_null(r, "%s", setup[i]);
        freeReplyObject(r);
    }
    const char *keys[] = {"str", "num", "h", "ints", "src", "long"};
    char *want[6];
    for (int i = 0; i < 6; i++) {
        redisReply *d = redisCommand(c, "DUMP %s", keys[i]);
        cr_assert(d && d->type == REDIS_REPLY_STRING, "DUMP %s", keys[i]);
        want[i] = calloc(1, d->len * 2 + 1);
        for (size_t k = 0; k < d->len; k++)
            sprintf(want[i] + 2 * k, "%02x", (unsigned char)d->str[k]);
        redisReply *r = redisCommand(c, "RESTORE copy-%s 0 %b", keys[i], d->str, d->len);
        cr_assert(r && r->type == REDIS_REPLY_STATUS, "RESTORE copy-%s", keys[i]);
        freeReplyObject(r);
        freeReplyObject(d);
    }
    redisFree(c);

    srv_kill_all(&s);
    cr_assert_eq(srv_restart(&s), 0, "restart after SIGKILL");
    c = srv_connect(&s);
    cr_assert_not_null(c);
    for (int i = 0; i < 6; i++) {
        redisReply *d = redisCommand(c, "DUMP copy-%s", keys[i]);
        cr_assert(d && d->type == REDIS_REPLY_STRING, "copy-%s came back", keys[i]);
        char *got = malloc(d->len * 2 + 1);
        for (size_t k = 0; k < d->len; k++)
            sprintf(got + 2 * k, "%02x", (unsigned char)d->str[k]);
        got[d->len * 2] = 0;
        if (strcmp(keys[i], "src")) cr_assert_str_eq(got, want[i], "copy-%s", keys[i]);
        free(got), free(want[i]);
        freeReplyObject(d);
    }
    char *e = reply_str(c, "OBJECT ENCODING %s", "copy-ints");
    cr_assert_str_eq(e, "intset");
    free(e);
    redisReply *r = redisCommand(c, "SCARD copy-src");
    cr_assert(r && r->type == REDIS_REPLY_INTEGER && r->integer == 300);
    freeReplyObject(r);
    redisFree(c);
    srv_stop(&s);
    srv_cleanup(&s);
}

/*
 * D85: a flush wakes a frontend only when something there waits for that
 * durable LSN (a fixed reply, a read behind a write, WAIT); replies the
 * store computes wake it through the store. With the frontend's timer no
 * longer looking for completions (ATTICDB_TEST_NO_WAKE_NET, a test hook),
 * a wake-up that should have come and did not leaves its client waiting:
 * hiredis gives up after 10 s and the test fails. Every kind of wait runs
 * here beside the others, on one frontend: store replies (LPUSH, INCR),
 * fixed replies (SET), reads behind either, a connection whose older
 * store reply waits beside a newer fixed one, MULTI/EXEC, WAIT and
 * WAITAOF.
 */
static void expect_reply(redisContext *c, int type, const char *what)
{
    redisReply *r = NULL;
    int rc = redisGetReply(c, (void **)&r);
    cr_assert_eq(rc, REDIS_OK, "%s: no reply (%s): a lost wake-up", what, c->errstr);
    cr_assert_eq(r->type, type, "%s: type %d, %s", what, r->type,
                 r->type == REDIS_REPLY_ERROR ? r->str : "");
    freeReplyObject(r);
}

Test(durability, every_reply_comes_by_a_wake_up_not_the_timer, .timeout = 180)
{
    srv_t s;
    setenv("ATTICDB_TEST_NO_WAKE_NET", "1", 1);
    int rc = srv_start(&s, "--frontends 1");
    unsetenv("ATTICDB_TEST_NO_WAKE_NET");
    cr_assert_eq(rc, 0, "server did not start");
    enum { CONNS = 4, ROUNDS = 300 };
    redisContext *cs[CONNS];
    for (int i = 0; i < CONNS; i++)
        cr_assert_not_null(cs[i] = srv_connect(&s));
    for (int round = 0; round < ROUNDS; round++) {
        /* Each round's requests are all sent before any reply is read, so
         * the frontend holds them together; the mix shifts every round,
         * so that each kind is sometimes the oldest, sometimes the last. */
        int shift = round % CONNS;
        for (int i = 0; i < CONNS; i++) {
            redisContext *c = cs[(i + shift) % CONNS];
            switch (i) {
            case 0: /* store replies only */
                redisAppendCommand(c, "LPUSH list:%d %d", round % 7, round);
                redisAppendCommand(c, "INCR counter:%d", round % 5);
                break;
            case 1: /* fixed replies, then a read behind them */
                redisAppendCommand(c, "SET str:%d %d", round % 11, round);
                redisAppendCommand(c, "GET str:%d", round % 11);
                break;
            case 2: /* an older store reply beside a newer fixed one */
                redisAppendCommand(c, "RPUSH list:%d x", round % 3);
                redisAppendCommand(c, "SET other:%d y", round % 13);
                break;
            default: /* a transaction, and a read behind a store reply */
                redisAppendCommand(c, "MULTI");
                redisAppendCommand(c, "SET tx:%d %d", round % 3, round);
                redisAppendCommand(c, "LPUSH txl %d", round);
                redisAppendCommand(c, "EXEC");
                break;
            }
        }
        for (int i = 0; i < CONNS; i++) {
            redisContext *c = cs[(i + shift) % CONNS];
            switch (i) {
            case 0:
                expect_reply(c, REDIS_REPLY_INTEGER, "LPUSH");
                expect_reply(c, REDIS_REPLY_INTEGER, "INCR");
                break;
            case 1:
                expect_reply(c, REDIS_REPLY_STATUS, "SET");
                expect_reply(c, REDIS_REPLY_STRING, "GET behind SET");
                break;
            case 2:
                expect_reply(c, REDIS_REPLY_INTEGER, "RPUSH");
                expect_reply(c, REDIS_REPLY_STATUS, "SET behind RPUSH");
                break;
            default:
                expect_reply(c, REDIS_REPLY_STATUS, "MULTI");
                expect_reply(c, REDIS_REPLY_STATUS, "queued SET");
                expect_reply(c, REDIS_REPLY_STATUS, "queued LPUSH");
                expect_reply(c, REDIS_REPLY_ARRAY, "EXEC");
                break;
            }
        }
        if (round % 50 == 0) {
            /* a read behind a store reply, WAIT and WAITAOF after writes */
            redisAppendCommand(cs[0], "LPUSH list:w %d", round);
            redisAppendCommand(cs[0], "LLEN list:w");
            redisAppendCommand(cs[0], "WAIT 0 0");
            redisAppendCommand(cs[0], "SET w %d", round);
            redisAppendCommand(cs[0], "WAITAOF 1 0 0");
            expect_reply(cs[0], REDIS_REPLY_INTEGER, "LPUSH before LLEN");
            expect_reply(cs[0], REDIS_REPLY_INTEGER, "LLEN behind LPUSH");
            expect_reply(cs[0], REDIS_REPLY_INTEGER, "WAIT");
            expect_reply(cs[0], REDIS_REPLY_STATUS, "SET before WAITAOF");
            expect_reply(cs[0], REDIS_REPLY_ARRAY, "WAITAOF");
        }
    }
    redisReply *r = redisCommand(cs[0], "LLEN txl");
    cr_assert(r && r->type == REDIS_REPLY_INTEGER && r->integer == ROUNDS, "txl holds every round");
    freeReplyObject(r);
    for (int i = 0; i < CONNS; i++)
        redisFree(cs[i]);
    srv_stop(&s);
    srv_cleanup(&s);
}
