/*
 * test_cmds_pipeline.c - many commands on a connection, checked against a
 * real Redis 7 (split from test_commands.c): a seeded random differential
 * run of the string and TTL commands, one command at a time and 50 per
 * write (ATTIC_SEED; the seed is printed on failure), a 1,000-command
 * pipeline in one write, read-your-writes inside a pipeline, inline
 * commands, and acknowledged writes seen at once on other connections
 * (AtticDB alone).
 *
 * Environment: ATTICDB_SERVER (the server binary), REDIS_SERVER (default:
 * redis-server from PATH; the differential tests are skipped without it),
 * ATTIC_SEED (seed of the random test).
 */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "redis_diff.h"

TestSuite(cmds, .fini = rdiff_teardown, .timeout = 60);

/* ------------------------------------------------------------------ */
/* seeded random differential run                                      */

static uint64_t rng_state;

static unsigned rn(unsigned n)
{
    return rdiff_below(&rng_state, n);
}

typedef struct rcmd {
    int argc;
    char *argv[16];
    size_t lens[16];
} rcmd_t;

static void radd(rcmd_t *c, const char *p, size_t n)
{
    c->argv[c->argc] = malloc(n + 1);
    memcpy(c->argv[c->argc], p, n);
    c->argv[c->argc][n] = '\0';
    c->lens[c->argc] = n;
    c->argc++;
}

static void radds(rcmd_t *c, const char *s)
{
    radd(c, s, strlen(s));
}

static void rfree(rcmd_t *c)
{
    for (int i = 0; i < c->argc; i++)
        free(c->argv[i]);
    c->argc = 0;
}

static void rkey(rcmd_t *c)
{
    static const char *keys[] = {"k0", "k1", "k2", "k3", "k4", "k5", "k6", "k7", "", "key\r\n\0x"};
    unsigned i = rn(10);
    radd(c, keys[i], i == 9 ? 7 : strlen(keys[i]));
}

static void rval(rcmd_t *c)
{
    char buf[512];
    switch (rn(10)) {
    case 0:
        radds(c, "");
        break;
    case 1:
        snprintf(buf, sizeof(buf), "%d", (int)rn(2000) - 1000);
        radds(c, buf);
        break;
    case 2:
        radds(c, rn(2) ? "9223372036854775800" : "-9223372036854775800");
        break;
    case 3:
        radds(c, rn(2) ? "abc" : "1.5");
        break;
    case 4: {
        size_t n = 25 + rn(300); /* lives on disk */
        for (size_t i = 0; i < n; i++)
            buf[i] = (char)('a' + rn(26));
        radd(c, buf, n);
        break;
    }
    case 5:
        radd(c, "b\0i\r\nn", 6);
        break;
    case 6: {
        size_t n = rn(24);
        for (size_t i = 0; i < n; i++)
            buf[i] = (char)rn(256);
        radd(c, buf, n);
        break;
    }
    default:
        snprintf(buf, sizeof(buf), "v%u", rn(100));
        radds(c, buf);
        break;
    }
}

static void rnd_int_arg(rcmd_t *c)
{
    char buf[32];
    switch (rn(8)) {
    case 0:
        radds(c, "9223372036854775807");
        break;
    case 1:
        radds(c, "-9223372036854775808");
        break;
    case 2:
        radds(c, "x");
        break;
    default:
        snprintf(buf, sizeof(buf), "%d", (int)rn(200) - 100);
        radds(c, buf);
        break;
    }
}

static void rttl(rcmd_t *c, int ms)
{
    char buf[32];
    snprintf(buf, sizeof(buf), "%u", (100000 + rn(100000)) * (ms ? 1000 : 1));
    radds(c, buf);
}

static void rgen(rcmd_t *c)
{
    static const char *opts_set[] = {"NX", "XX", "GET", "KEEPTTL", "EX", "PX"};
    static const char *opts_exp[] = {"NX", "XX", "GT", "LT"};
    switch (rn(22)) {
    case 0:
    case 1:
    case 2: {
        radds(c, "SET"), rkey(c), rval(c);
        int nopt = (int)rn(3);
        for (int i = 0; i < nopt; i++) {
            const char *o = opts_set[rn(6)];
            radds(c, o);
            if (strcmp(o, "EX") == 0)
                rttl(c, 0);
            else if (strcmp(o, "PX") == 0)
                rttl(c, 1);
        }
        break;
    }
    case 3:
    case 4:
        radds(c, "GET"), rkey(c);
        break;
    case 5:
        radds(c, "DEL"), rkey(c);
        if (rn(2)) rkey(c);
        break;
    case 6:
        radds(c, "EXISTS"), rkey(c), rkey(c), rkey(c);
        break;
    case 7:
        radds(c, "INCR"), rkey(c);
        break;
    case 8:
        radds(c, "INCRBY"), rkey(c), rnd_int_arg(c);
        break;
    case 9:
        radds(c, "DECRBY"), rkey(c), rnd_int_arg(c);
        break;
    case 10:
        radds(c, "DECR"), rkey(c);
        break;
    case 11:
        radds(c, "APPEND"), rkey(c), rval(c);
        break;
    case 12:
        radds(c, "STRLEN"), rkey(c);
        break;
    case 13:
        radds(c, "GETDEL"), rkey(c);
        break;
    case 14: {
        radds(c, "MSET");
        int n = 1 + (int)rn(3);
        for (int i = 0; i < n; i++)
            rkey(c), rval(c);
        break;
    }
    case 15:
        radds(c, "MGET"), rkey(c), rkey(c), rkey(c);
        break;
    case 16:
        radds(c, "PERSIST"), rkey(c);
        break;
    case 17: {
        int ms = (int)rn(2);
        radds(c, ms ? "PEXPIRE" : "EXPIRE"), rkey(c), rttl(c, ms);
        if (rn(2)) radds(c, opts_exp[rn(4)]);
        break;
    }
    case 18:
        radds(c, "DBSIZE");
        break;
    case 19:
        radds(c, rn(2) ? "TTL" : "PTTL"), rkey(c);
        break;
    case 20:
        radds(c, "EXPIRE"), rkey(c), radds(c, rn(2) ? "-1" : "0");
        break; /* deletes */
    default:
        if (rn(20) == 0)
            radds(c, "FLUSHALL");
        else
            radds(c, "GET"), rkey(c);
        break;
    }
}

static void run_random(int batch_size, const char *name)
{
    diff_t d;
    rdiff_start_both(&d);
    uint64_t seed = rdiff_seed();
    rng_state = seed;
    enum { TOTAL = 3000, BATCH = 50 };
    cr_assert(batch_size >= 1 && batch_size <= BATCH);
    rcmd_t batch[BATCH];
    memset(batch, 0, sizeof(batch));
    for (int done = 0; done < TOTAL && d.mismatches < 20; done += batch_size) {
        wire_buf_t req = {0};
        for (int i = 0; i < batch_size; i++) {
            rgen(&batch[i]);
            wire_encode(&req, batch[i].argc, (const char *const *)batch[i].argv, batch[i].lens);
        }
        /* pipelined: both get the whole batch in one write */
        cr_assert_eq(wire_write(d.r[0], req.p, req.len), 0);
        cr_assert_eq(wire_write(d.a[0], req.p, req.len), 0);
        wire_buf_free(&req);
        for (int i = 0; i < batch_size; i++) {
            size_t rn_, an;
            char *rr = wire_reply(d.r[0], &rn_), *ar = wire_reply(d.a[0], &an);
            const char *cmd0 = batch[i].argv[0];
            int norm = strcmp(cmd0, "TTL") == 0 || strcmp(cmd0, "PTTL") == 0 ? RDIFF_POSITIVE
                                                                             : RDIFF_EXACT;
            rdiff_normalize(&rr, &rn_, norm);
            rdiff_normalize(&ar, &an, norm);
            char *what =
                wire_cmd_text(batch[i].argc, (const char *const *)batch[i].argv, batch[i].lens);
            char label[700];
            snprintf(label, sizeof(label), "[%s, ATTIC_SEED=%" PRIu64 ", command %d] %s", name,
                     seed, done + i + 1, what);
            rdiff_compare(&d, __LINE__, label, rr, rn_, ar, an);
            free(what);
            free(rr);
            free(ar);
            rfree(&batch[i]);
        }
    }
    cr_expect(d.mismatches > 0 || d.step == TOTAL, "ran %d of %d commands", d.step, TOTAL);
    /* final state, key by key */
    D(&d, "DBSIZE");
    D(&d, "MGET", "k0", "k1", "k2", "k3", "k4", "k5", "k6", "k7", "");
    if (d.mismatches)
        fprintf(stderr, "%s: seed %" PRIu64 " (rerun with ATTIC_SEED=%" PRIu64 ")\n", name, seed,
                seed);
    rdiff_end_both(&d);
}

/* One command at a time: finds differences in what each command does. */
Test(cmds, random_differential, .timeout = 120)
{
    run_random(1, "random_differential");
}

/* The same, 50 commands per write: replies in order, and each command sees
 * exactly the effects of the commands before it on the connection. */
Test(cmds, random_differential_pipelined, .timeout = 120)
{
    run_random(50, "random_differential_pipelined");
}

/* ------------------------------------------------------------------ */
/* pipelining                                                          */

Test(cmds, pipeline_1000_in_one_write)
{
    diff_t d;
    rdiff_start_both(&d);
    enum { N = 1000 };
    wire_buf_t req = {0};
    char k[32], v[64];
    for (int i = 0; i < N; i++) {
        snprintf(k, sizeof(k), "p:%d", i % 37);
        snprintf(v, sizeof(v), "value-%d", i);
        switch (i % 9) {
        case 0:
            wire_encode(&req, 3, (const char *[]){"SET", k, v}, NULL);
            break;
        case 1:
            wire_encode(&req, 2, (const char *[]){"GET", k}, NULL);
            break;
        case 2:
            wire_encode(&req, 2, (const char *[]){"INCR", "counter"}, NULL);
            break;
        case 3:
            wire_encode(&req, 3, (const char *[]){"APPEND", k, "+"}, NULL);
            break;
        case 4:
            wire_encode(&req, 1, (const char *[]){"DBSIZE"}, NULL);
            break;
        case 5: /* errors the frontend can answer at once, between writes */
            if (i % 2)
                wire_encode(&req, 5, (const char *[]){"SET", k, v, "EX", "0"}, NULL);
            else
                wire_encode(&req, 2, (const char *[]){"nosuchcmd", k}, NULL);
            break;
        case 6:
            wire_encode(&req, 2, (const char *[]){"PING", v}, NULL);
            break;
        case 7:
            wire_encode(&req, 2, (const char *[]){"GETDEL", k}, NULL);
            break;
        default:
            wire_encode(&req, 2, (const char *[]){"STRLEN", k}, NULL);
            break;
        }
    }
    cr_assert_eq(wire_write(d.r[0], req.p, req.len), 0);
    cr_assert_eq(wire_write(d.a[0], req.p, req.len), 0);
    wire_buf_free(&req);
    for (int i = 0; i < N && d.mismatches < 10; i++) {
        size_t rn_, an;
        char *rr = wire_reply(d.r[0], &rn_), *ar = wire_reply(d.a[0], &an);
        char label[64];
        snprintf(label, sizeof(label), "pipelined command %d of %d", i, N);
        rdiff_compare(&d, __LINE__, label, rr, rn_, ar, an);
        free(rr);
        free(ar);
    }
    D(&d, "GET", "counter");
    rdiff_end_both(&d);
}

/* The smallest pipelined case: each read sees exactly the writes before it
 * on the connection, not the ones after it. */
Test(cmds, pipeline_read_your_writes)
{
    diff_t d;
    rdiff_start_both(&d);
    const char *req = "*3\r\n$3\r\nSET\r\n$1\r\np\r\n$1\r\n1\r\n"
                      "*2\r\n$3\r\nGET\r\n$1\r\np\r\n"
                      "*3\r\n$3\r\nSET\r\n$1\r\np\r\n$1\r\n2\r\n"
                      "*2\r\n$3\r\nGET\r\n$1\r\np\r\n"
                      "*3\r\n$3\r\nSET\r\n$1\r\np\r\n$1\r\n3\r\n";
    const char *want = "+OK\r\n$1\r\n1\r\n+OK\r\n$1\r\n2\r\n+OK\r\n";
    wire_write(d.r[0], req, strlen(req));
    wire_write(d.a[0], req, strlen(req));
    wire_buf_t rr = {0}, ar = {0};
    for (int i = 0; i < 5; i++) {
        size_t n;
        char *x = wire_reply(d.r[0], &n);
        wire_buf_add(&rr, x, n);
        free(x);
        x = wire_reply(d.a[0], &n);
        wire_buf_add(&ar, x, n);
        free(x);
    }
    cr_expect_str_eq(rr.p, want, "(test check) redis");
    rdiff_compare(&d, __LINE__, "pipelined in one write: SET p 1; GET p; SET p 2; GET p; SET p 3",
                  rr.p, rr.len, ar.p, ar.len);
    wire_buf_free(&rr);
    wire_buf_free(&ar);
    rdiff_end_both(&d);
}

/* Acknowledged writes are visible at once on every other connection (the
 * connections are spread over the frontends). */
Test(cmds, other_connections_see_acked_writes)
{
    rdiff_start_atticdb();
    enum { CONNS = 8, ROUNDS = 400 };
    wire_conn_t *c[CONNS];
    for (int i = 0; i < CONNS; i++)
        cr_assert_not_null(c[i] = wire_open(rdiff_atticdb.port, 10));
    char v[32], want[64];
    int bad = 0;
    for (int i = 0; i < ROUNDS && bad < 5; i++) {
        snprintf(v, sizeof(v), "%d", i);
        const char *r = ONE(c[i % CONNS], "SET", "shared", v);
        cr_assert_str_eq(r, "+OK\r\n");
        r = ONE(c[(i + 3) % CONNS], "GET", "shared");
        snprintf(want, sizeof(want), "$%zu\r\n%s\r\n", strlen(v), v);
        if (strcmp(r, want) != 0) {
            bad++;
            cr_expect_fail(
                "round %d: SET shared %s on connection %d, then GET on connection %d gave %s", i, v,
                i % CONNS, (i + 3) % CONNS, r);
        }
        r = ONE(c[(i + 5) % CONNS], "INCR", "ctr");
        snprintf(want, sizeof(want), ":%d\r\n", i + 1);
        if (strcmp(r, want) != 0) {
            bad++;
            cr_expect_fail("round %d: INCR ctr on connection %d gave %s, want %d", i,
                           (i + 5) % CONNS, r, i + 1);
        }
    }
    for (int i = 0; i < CONNS; i++)
        wire_close(c[i]);
}

/* Inline commands (as telnet or nc send them). */
Test(cmds, inline_commands)
{
    diff_t d;
    rdiff_start_both(&d);
    const char *req = "PING\r\nset inl 5\r\nincr inl\r\nget inl\nECHO hi\r\n";
    rdiff_pipeline(&d, __LINE__, 0, req, strlen(req), 5,
                   "inline: PING; set inl 5; incr inl; get inl; ECHO hi");
    rdiff_end_both(&d);
}
