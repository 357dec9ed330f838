/*
 * test_zset_paged.c - sorted sets in pages (store/core/zset.c on
 * core/hash_paged.c and the keyed list of core/list.c, store/types/t_page.c;
 * D65), driven record by record through the store harness against a
 * model: random ZADD (NX, XX, GT, LT, INCR), ZREM, ZPOPMIN, ZPOPMAX and
 * ZREMRANGEBYRANK/SCORE/LEX, and the reads (ZSCORE, ZRANK, ZREVRANK,
 * ZRANGE by rank, score and lex both ways, ZCOUNT, ZLEXCOUNT), with the
 * pager played by the test: the member -> score part's CMD_PAGEIN and
 * CMD_PAGE records and the order's CMD_LPAGE records, built as the store
 * would build them, some applied at once, some only after more writes
 * (records in flight, which the writes in between may make no-ops), tiny
 * pages so that the order takes many, and members too long for a page
 * (pinned) among them, and compaction's rewrite of every page. After each
 * step the replies must be the model's and the two parts must agree
 * (st_zset_check); at the end replay must reach the same digest and the
 * same pages, and a checkpoint must read back equal and refuse every cut
 * of itself.
 */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "command.h"
#include "record.h"
#include "store/core/chunked.h"
#include "store/core/entry.h"
#include "store/core/hash.h"
#include "store/core/index.h"
#include "store/core/list.h"
#include "store/core/object.h"
#include "store/core/zset.h"
#include "store/store-internal.h"
#include "store_harness.h"

#define T0 1000000

#define wr(t, id, ...)   sh_wr((t), (id), __VA_ARGS__)
#define rd(now, id, ...) sh_rd((now), 0, (id), __VA_ARGS__)
#define LIM              "#i64:274877907072" /* zset-max-listpack-entries 128, -value 64 */
#define P2               "#u32:2"

static void setup(void)
{
    sh_setup("pzset", 0, 42);
    sh_canonical_only = 1;
}

TestSuite(pzset, .init = setup, .fini = sh_teardown, .timeout = 600);

/* ---- the model ------------------------------------------------------------ */

#define NM 3000
static char names[NM][1300];
static int has[NM];
static double score[NM];
static int lexmode; /* every score 0: the lex ranges' own case */

static uint64_t rng = 88172645463325252ull;
static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static void make_names(void)
{
    for (int i = 0; i < NM; i++) {
        if (i % 211 == 7) { /* too long for a page: pinned in both parts */
            memset(names[i], 'p', 1100 + i % 50);
            snprintf(names[i] + 1100 + i % 50, 16, "%d", i);
        } else if (i % 5 == 0) { /* past 255 bytes with its score: a RAM piece */
            memset(names[i], 'q', 260);
            snprintf(names[i] + 260, 16, "%d", i);
        } else {
            snprintf(names[i], sizeof(names[i]), "m%05d", (int)((uint64_t)i * 7919 % 100000));
        }
    }
    memset(has, 0, sizeof(has));
}

static double draw_score(void)
{
    if (lexmode) return 0;
    int k = (int)(rnd() % 40);
    if (k == 0) return INFINITY;
    if (k == 1) return -INFINITY;
    return (double)(int)(rnd() % 30) - 10 + (k % 3 == 0 ? 0.5 : 0);
}

static int lexcmp(const char *a, const char *b)
{
    size_t an = strlen(a), bn = strlen(b);
    int c = memcmp(a, b, an < bn ? an : bn);
    return c ? c : (an > bn) - (an < bn);
}

static int by_order(const void *x, const void *y)
{
    int a = *(const int *)x, b = *(const int *)y;
    if (score[a] != score[b]) return score[a] < score[b] ? -1 : 1;
    return lexcmp(names[a], names[b]);
}

/* The members in order: their indexes into sorted[], *n of them. */
static int sorted[NM];
static int sort_model(void)
{
    int n = 0;
    for (int i = 0; i < NM; i++)
        if (has[i]) sorted[n++] = i;
    qsort(sorted, (size_t)n, sizeof(*sorted), by_order);
    return n;
}

static void fmt_score(char *b, size_t cap, double s)
{
    if (isinf(s))
        snprintf(b, cap, "%s", s > 0 ? "inf" : "-inf");
    else
        snprintf(b, cap, "%.17g", s);
}

/* "$len\r\nbytes\r\n" appended to out. */
static void put_bulk(char **out, size_t *len, const char *s)
{
    size_t n = strlen(s);
    *out = realloc(*out, *len + n + 32);
    *len += (size_t)sprintf(*out + *len, "$%zu\r\n%s\r\n", n, s);
}

/* The reply of members sorted[from..] (count, downwards when rev), with
 * scores when ws. */
static char *want_run(int from, int count, int rev, int ws)
{
    char *out = malloc(32);
    size_t len = (size_t)sprintf(out, "*%d\r\n", ws ? 2 * count : count);
    for (int i = 0; i < count; i++) {
        int m = sorted[rev ? from - i : from + i];
        put_bulk(&out, &len, names[m]);
        if (ws) {
            char sc[40];
            fmt_score(sc, sizeof(sc), score[m]);
            put_bulk(&out, &len, sc);
        }
    }
    return out;
}

static void expect_reply(const char *got, char *want, const char *what)
{
    cr_assert(strcmp(got, want) == 0, "%s: %.80s, want %.80s", what, got, want);
    free(want);
}

/* ---- the pager, played by the test ------------------------------------------ */

enum { R_PAGEIN, R_PAGE, R_LPAGE };
typedef struct pending {
    int kind;
    unsigned char *blob[3 + ST_CPAGE_MAX_IMAGES];
    uint32_t lens[3 + ST_CPAGE_MAX_IMAGES];
    uint16_t argc;
} pending_t;

#define MAXPEND 8
static pending_t pend[MAXPEND];
static int npend;
static uint64_t applied_records[3];

static st_zset_t *object(const char *key)
{
    idx_entry_t **slot = idx_find(&ctx->dbs[0]->ix, key, (uint32_t)strlen(key));
    if (!slot || st_ent_kind(*slot) != VK_OBJ || st_ent_type(*slot) != ST_ZSET) return NULL;
    return st_ent_zset(*slot);
}

static unsigned char *copy_of(const void *p, size_t n)
{
    unsigned char *c = malloc(n ? n : 1);
    memcpy(c, p, n);
    return c;
}

static unsigned char *u64_blob(uint64_t v)
{
    unsigned char *b = malloc(8);
    cmd_put_i64(b, (int64_t)v);
    return b;
}

static void apply_pending(int i)
{
    static const uint16_t op[] = {CMD_PAGEIN, CMD_PAGE, CMD_LPAGE};
    pending_t *pd = &pend[i];
    sh_put(T0, op[pd->kind], pd->argc, (const unsigned char *const *)pd->blob, pd->lens);
    for (int a = 0; a < pd->argc; a++)
        free(pd->blob[a]);
    applied_records[pd->kind]++;
    pend[i] = pend[--npend];
}

static st_pgpolicy_t policy = {
    .entries = 1, .overlay_max = 16, .page_bytes = 400, .record_bytes = 3000};

static pending_t *new_pending(const char *key, int kind)
{
    pending_t *pd = &pend[npend++];
    pd->kind = kind;
    pd->blob[0] = copy_of(key, strlen(key));
    pd->lens[0] = (uint32_t)strlen(key);
    return pd;
}

/* The member -> score part's records (as test_hash_paged's pager). */
static void pager_dict(const char *key, st_hash_t *h)
{
    int want = st_hash_page_wanted(h, &policy);
    if (!want && policy.below && st_hash_is_paged(h)) want = ST_PAGE_WANT_BUILD;
    if (want == ST_PAGE_WANT_IN) {
        for (int i = 0; i < npend; i++)
            if (pend[i].kind == R_PAGEIN) return; /* one in flight */
        pending_t *pd = new_pending(key, R_PAGEIN);
        pd->blob[1] = u64_blob(rnd());
        pd->lens[1] = 8;
        pd->blob[2] = malloc(4);
        cmd_put_u32(pd->blob[2], 1 + (uint32_t)(rnd() % 8));
        pd->lens[2] = 4;
        pd->argc = 3;
        return;
    }
    if (want != ST_PAGE_WANT_BUILD) return;
    static st_pgbuilt_t b;
    static int init;
    if (!init)
        for (unsigned j = 0; j < ST_PAGE_MAX_IMAGES; j++)
            buf_init(&b.img[j]);
    init = 1;
    while (npend < MAXPEND && st_hash_page_build(ctx, h, &policy, &b) == ST_PAGE_BUILT) {
        pending_t *pd = new_pending(key, R_PAGE);
        uint64_t v[4] = {b.objid, b.as_of, b.first_lo, b.end_lo};
        for (int a = 0; a < 4; a++) {
            pd->blob[1 + a] = u64_blob(v[a]);
            pd->lens[1 + a] = 8;
        }
        pd->blob[5] = malloc(4);
        cmd_put_u32(pd->blob[5], b.rest);
        pd->lens[5] = 4;
        pd->blob[6] = u64_blob(b.version);
        pd->lens[6] = 8;
        for (uint32_t j = 0; j < b.nimg; j++) {
            pd->blob[7 + j] = copy_of(b.img[j].data, b.img[j].len);
            pd->lens[7 + j] = (uint32_t)b.img[j].len;
        }
        pd->argc = (uint16_t)(7 + b.nimg);
        if (rnd() % 3 == 0) break;
    }
}

/* The order's records (as test_list_paged's pager). */
static void pager_order(const char *key, st_list_t *l)
{
    static st_cpbuilt_t b;
    static int init;
    if (!init) st_cpbuilt_init(&b);
    init = 1;
    if (!st_list_page_wanted(l, &policy) && !policy.below) return;
    while (npend < MAXPEND && st_list_page_build(ctx, l, &policy, &b) == ST_PAGE_BUILT) {
        pending_t *pd = new_pending(key, R_LPAGE);
        pd->blob[1] = copy_of(b.stamps.data, b.stamps.len);
        pd->lens[1] = (uint32_t)b.stamps.len;
        pd->blob[2] = copy_of(b.layout.data, b.layout.len);
        pd->lens[2] = (uint32_t)b.layout.len;
        for (uint32_t j = 0; j < b.nimg; j++) {
            pd->blob[3 + j] = copy_of(b.img[j].data, b.img[j].len);
            pd->lens[3 + j] = (uint32_t)b.img[j].len;
        }
        pd->argc = (uint16_t)(3 + b.nimg);
        if (rnd() % 3 == 0) break;
    }
}

static void pager_turn(const char *key)
{
    st_zset_t *z = object(key);
    if (z) {
        if (rnd() % 2) pager_order(key, st_zset_order(z));
        if (npend < MAXPEND) pager_dict(key, st_zset_dict(z));
        if (!(rnd() % 2) && npend < MAXPEND) pager_order(key, st_zset_order(z));
    }
    /* Apply some now, keep others in flight across more writes. */
    for (int i = npend - 1; i >= 0; i--)
        if (rnd() % 2) apply_pending(i);
}

static void drain(const char *key)
{
    while (npend)
        apply_pending(npend - 1);
    st_zset_t *z = object(key);
    if (z) {
        st_list_page_unbusy(st_zset_order(z));
        st_hash_page_unbusy(st_zset_dict(z));
    }
}

/* ---- the steps ------------------------------------------------------------------ */

static int pick(void)
{
    return (int)(rnd() % NM);
}

static void step_zadd(const char *key)
{
    enum { MAXP = 150 };
    int k = rnd() % 30 == 0 ? MAXP : 1 + (int)(rnd() % 4);
    int flag = (int)(rnd() % 10); /* 0 NX, 1 XX, 2 GT, 3 LT, else none */
    const unsigned char *argv[4 + 2 * MAXP];
    uint32_t lens[4 + 2 * MAXP];
    char sc[MAXP][40];
    int idx[MAXP], c = 0;
    unsigned char limw[8]; /* the limits word: 128 entries, 64 bytes */
    cmd_put_i64(limw, 274877907072ll);
    argv[c] = (const unsigned char *)key, lens[c++] = (uint32_t)strlen(key);
    argv[c] = limw, lens[c++] = 8;
    unsigned char mode[4];
    cmd_put_u32(mode, 2);
    argv[c] = mode, lens[c++] = 4;
    static const char *const flags[] = {"NX", "XX", "GT", "LT"};
    if (flag < 4) argv[c] = (const unsigned char *)flags[flag], lens[c++] = 2;
    int added = 0;
    for (int i = 0; i < k; i++) {
        idx[i] = pick();
        for (int j = 0; j < i; j++)
            if (idx[j] == idx[i]) idx[i] = pick(); /* rarely twice: the model takes it in order */
        double s = draw_score();
        fmt_score(sc[i], sizeof(sc[i]), s);
        argv[c] = (const unsigned char *)sc[i], lens[c++] = (uint32_t)strlen(sc[i]);
        argv[c] = (const unsigned char *)names[idx[i]], lens[c++] = (uint32_t)strlen(names[idx[i]]);
        int m = idx[i];
        if (has[m]) {
            if (flag == 0) continue;
            if ((flag == 2 && s <= score[m]) || (flag == 3 && s >= score[m])) continue;
            if (s != score[m]) score[m] = s; /* 0 and -0 alike: the score held stays */
        } else if (flag != 1) {
            has[m] = 1;
            score[m] = s == 0 ? 0.0 : s; /* a listpack keeps -0 as 0: never drawn */
            added++;
        }
    }
    char exp[32];
    snprintf(exp, sizeof(exp), ":%d\r\n", added);
    const char *got = sh_put(T0, CMD_ZADD, (uint16_t)c, argv, lens);
    cr_assert_str_eq(got, exp, "ZADD of %d", k);
}

static void step_zincr(const char *key)
{
    if (lexmode) return;
    int m = pick();
    double by = (double)(int)(rnd() % 5) - 2;
    char b[40], exp[64], sc[40];
    fmt_score(b, sizeof(b), by);
    double next = (has[m] ? score[m] : 0) + by;
    fmt_score(sc, sizeof(sc), next);
    if (isnan(next)) return; /* inf + -inf: an error, nothing changes (tested elsewhere) */
    snprintf(exp, sizeof(exp), "$%zu\r\n%s\r\n", strlen(sc), sc);
    cr_assert_str_eq(wr(T0, CMD_ZADD, key, LIM, "#u32:258", b, names[m], NULL), exp);
    if (!has[m] || next != score[m]) score[m] = next;
    has[m] = 1;
}

static void step_zrem(const char *key)
{
    int a = pick(), b = rnd() % 2 ? pick() : a;
    int want = has[a] + (b != a && has[b]);
    char exp[32];
    snprintf(exp, sizeof(exp), ":%d\r\n", want);
    if (b == a)
        cr_assert_str_eq(wr(T0, CMD_ZREM, key, names[a], NULL), exp);
    else
        cr_assert_str_eq(wr(T0, CMD_ZREM, key, names[a], names[b], NULL), exp);
    has[a] = has[b] = 0;
}

static void step_pop(const char *key)
{
    int n = sort_model();
    int max = (int)(rnd() % 2), count = 1 + (int)(rnd() % 5);
    char c[32];
    snprintf(c, sizeof(c), "#i64:%d", count);
    const char *got = wr(T0, CMD_ZPOPMIN, key, max ? "#u32:1" : "#u32:0", c, P2, NULL);
    int k = count < n ? count : n;
    expect_reply(got, want_run(max ? n - 1 : 0, k, max, 1), max ? "ZPOPMAX" : "ZPOPMIN");
    for (int i = 0; i < k; i++)
        has[sorted[max ? n - 1 - i : i]] = 0;
}

/* ZREMRANGEBYRANK, BYSCORE or BYLEX over a small stretch. */
static void step_remrange(const char *key)
{
    int n = sort_model();
    if (n < 3) return;
    int kind = lexmode ? 2 : (int)(rnd() % 2), a = (int)(rnd() % (uint64_t)n),
        b = a + (int)(rnd() % 6);
    if (b >= n) b = n - 1;
    char lo[1400], hi[1400], k[16];
    int from = a, to = b; /* the model's ranks removed */
    if (kind == 0) {
        snprintf(lo, sizeof(lo), "%d", a);
        snprintf(hi, sizeof(hi), "%d", b);
    } else if (kind == 1) {
        double s0 = score[sorted[a]], s1 = score[sorted[b]];
        fmt_score(lo, sizeof(lo), s0);
        fmt_score(hi, sizeof(hi), s1);
        while (from > 0 && score[sorted[from - 1]] == s0)
            from--;
        while (to + 1 < n && score[sorted[to + 1]] == s1)
            to++;
    } else {
        snprintf(lo, sizeof(lo), "[%s", names[sorted[a]]);
        snprintf(hi, sizeof(hi), "(%s", names[sorted[b]]);
        to = b - 1;
    }
    snprintf(k, sizeof(k), "#u32:%d", kind);
    char exp[32];
    snprintf(exp, sizeof(exp), ":%d\r\n", to - from + 1);
    cr_assert_str_eq(wr(T0, CMD_ZREMRANGEBYRANK, key, k, lo, hi, NULL), exp, "ZREMRANGE kind %d",
                     kind);
    for (int i = from; i <= to; i++)
        has[sorted[i]] = 0;
}

static void step_read(const char *key)
{
    int n = sort_model(), m = pick();
    char exp[64], sc[40];
    const char *got = rd(T0, CMD_ZSCORE, key, names[m], NULL);
    if (has[m]) {
        fmt_score(sc, sizeof(sc), score[m]);
        snprintf(exp, sizeof(exp), "$%zu\r\n%s\r\n", strlen(sc), sc);
        cr_assert_str_eq(got, exp, "ZSCORE");
    } else {
        cr_assert_str_eq(got, "$-1\r\n", "ZSCORE of an absent member");
    }
    if (!n) return;
    int r = (int)(rnd() % (uint64_t)n);
    snprintf(exp, sizeof(exp), ":%d\r\n", r);
    cr_assert_str_eq(rd(T0, CMD_ZRANK, key, names[sorted[r]], NULL), exp, "ZRANK");
    snprintf(exp, sizeof(exp), ":%d\r\n", n - 1 - r);
    cr_assert_str_eq(rd(T0, CMD_ZREVRANK, key, names[sorted[r]], NULL), exp, "ZREVRANK");
    /* ZRANGE by rank, a window, both ways */
    int w = (int)(rnd() % 30), rev = (int)(rnd() % 2), to = r + w < n ? r + w : n - 1;
    char a[24], b[24];
    snprintf(a, sizeof(a), "%d", r);
    snprintf(b, sizeof(b), "%d", r + w);
    got = rd(T0, rev ? CMD_ZREVRANGE : CMD_ZRANGE, key, a, b, "WITHSCORES", NULL);
    expect_reply(got, rev ? want_run(n - 1 - r, to - r + 1, 1, 1) : want_run(r, to - r + 1, 0, 1),
                 "ZRANGE by rank");
    int r2 = r + w < n ? r + w : n - 1;
    if (!lexmode) { /* by score: from the first of r's score to the last of r2's */
        double s0 = score[sorted[r]], s1 = score[sorted[r2]];
        int from = r, last = r2;
        while (from > 0 && score[sorted[from - 1]] == s0)
            from--;
        while (last + 1 < n && score[sorted[last + 1]] == s1)
            last++;
        char lo[40], hi[40];
        fmt_score(lo, sizeof(lo), s0);
        fmt_score(hi, sizeof(hi), s1);
        got = rev ? rd(T0, CMD_ZREVRANGEBYSCORE, key, hi, lo, NULL)
                  : rd(T0, CMD_ZRANGEBYSCORE, key, lo, hi, NULL);
        expect_reply(got,
                     rev ? want_run(last, last - from + 1, 1, 0)
                         : want_run(from, last - from + 1, 0, 0),
                     "ZRANGEBYSCORE");
        snprintf(exp, sizeof(exp), ":%d\r\n", last - from + 1);
        cr_assert_str_eq(rd(T0, CMD_ZCOUNT, key, lo, hi, NULL), exp, "ZCOUNT");
        /* an exclusive bound at a score between */
        char ex[48];
        snprintf(ex, sizeof(ex), "(%s", lo);
        int f2 = from;
        while (f2 < n && score[sorted[f2]] == s0)
            f2++;
        snprintf(exp, sizeof(exp), ":%d\r\n", f2 <= last ? last - f2 + 1 : 0);
        cr_assert_str_eq(rd(T0, CMD_ZCOUNT, key, ex, hi, NULL), exp, "ZCOUNT (");
    } else { /* by lex: [first, last) */
        char lo[1400], hi[1400];
        snprintf(lo, sizeof(lo), "[%s", names[sorted[r]]);
        snprintf(hi, sizeof(hi), "(%s", names[sorted[r2]]);
        got = rev ? rd(T0, CMD_ZREVRANGEBYLEX, key, hi, lo, NULL)
                  : rd(T0, CMD_ZRANGEBYLEX, key, lo, hi, NULL);
        expect_reply(got, rev ? want_run(r2 - 1, r2 - r, 1, 0) : want_run(r, r2 - r, 0, 0),
                     "ZRANGEBYLEX");
        snprintf(exp, sizeof(exp), ":%d\r\n", r2 - r);
        cr_assert_str_eq(rd(T0, CMD_ZLEXCOUNT, key, lo, hi, NULL), exp, "ZLEXCOUNT");
        got = rd(T0, CMD_ZRANGE, key, "-", "+", "BYLEX", "LIMIT", a, "3", NULL);
        expect_reply(got, want_run(r, r + 3 <= n ? 3 : n - r, 0, 0), "ZRANGE - + BYLEX LIMIT");
    }
}

static void random_step(const char *key)
{
    int op = (int)(rnd() % 20);
    if (op < 8)
        step_zadd(key);
    else if (op < 10)
        step_zincr(key);
    else if (op < 12)
        step_zrem(key);
    else if (op == 12)
        step_pop(key);
    else if (op == 13)
        step_remrange(key);
    else
        step_read(key);
}

static void check_zset(const char *key, int step)
{
    st_zset_t *z = object(key);
    int n = sort_model();
    cr_assert_eq(z ? (int)st_zset_len(z) : 0, n, "step %d: the length", step);
    const char *bad = z ? st_zset_check(z) : NULL;
    cr_assert(!bad, "step %d: %s", step, bad);
}

static void check_all(const char *key)
{
    int n = sort_model();
    if (!n) return;
    expect_reply(rd(T0, CMD_ZRANGE, key, "0", "-1", "WITHSCORES", NULL), want_run(0, n, 0, 1),
                 "the whole ZRANGE");
    expect_reply(rd(T0, CMD_ZRANGE, key, "0", "-1", "REV", NULL), want_run(n - 1, n, 1, 0),
                 "the whole ZRANGE REV");
}

/* Pages made: [order pages, dict pages]. */
static void pages_of(const char *key, long long *order, long long *dict)
{
    st_zset_t *z = object(key);
    long long v[7];
    st_list_page_stats(st_zset_order(z), v);
    *order = v[2];
    st_pgstats_t s;
    st_hash_page_stats(st_zset_dict(z), &s);
    *dict = s.pages;
}

/* ---- the tests -------------------------------------------------------------------- */

static void run_random(const char *key, int steps)
{
    long long max_order = 0, max_dict = 0;
    for (int step = 0; step < steps; step++) {
        random_step(key);
        if (step % 4 == 0) pager_turn(key);
        if (step % 25 == 0) check_zset(key, step);
        if (object(key)) {
            long long o, d;
            pages_of(key, &o, &d);
            if (o > max_order) max_order = o;
            if (d > max_dict) max_dict = d;
        }
        if (step % 700 == 699) {
            policy.below = step % 1400 == 1399 ? UINT64_MAX : 0; /* compaction's rewrite */
            check_all(key);
        }
    }
    policy.below = 0;
    drain(key);
    check_zset(key, -1);
    check_all(key);
    cr_assert_gt(max_order, 20, "order pages were made (%lld at most)", max_order);
    cr_assert_gt(max_dict, 5, "score pages were made (%lld at most)", max_dict);
    cr_assert_gt(applied_records[R_LPAGE], 30);
    cr_assert_gt(applied_records[R_PAGE], 10);
}

Test(pzset, random_writes_match_a_model_with_records_in_flight)
{
    make_names();
    run_random("z", 7000);
    sh_check_replay("a paged sorted set");
    /* The replay applied the same records the same way: the same pages. */
    store_ctx_t *again = sh_replay(store_ctx_create(&cfg, 7), NULL);
    idx_entry_t **s1 = idx_find(&again->dbs[0]->ix, "z", 1);
    st_zset_t *z = object("z");
    cr_assert_eq(s1 != NULL, z != NULL);
    if (z) {
        long long a[7], b[7];
        st_list_page_stats(st_zset_order(z), a);
        st_list_page_stats(st_zset_order(st_ent_zset(*s1)), b);
        cr_assert(memcmp(a, b, sizeof(a)) == 0, "order pages live %lld, replayed %lld", a[2], b[2]);
        st_pgstats_t x, y;
        st_hash_page_stats(st_zset_dict(z), &x);
        st_hash_page_stats(st_zset_dict(st_ent_zset(*s1)), &y);
        cr_assert(x.pages == y.pages && x.ranges == y.ranges && x.overlay == y.overlay,
                  "score pages live %u, replayed %u", x.pages, y.pages);
    }
    store_ctx_destroy(again);
}

Test(pzset, a_lexicographic_sorted_set_pages_within_equal_scores)
{
    make_names();
    lexmode = 1;
    run_random("lex", 6000);
    sh_check_replay("a paged lexicographic sorted set");
}

Test(pzset, pops_and_ranges_read_through_pages_and_del_uncounts_them)
{
    make_names();
    for (int i = 0; i < 700; i++)
        step_zadd("p");
    for (int t = 0; t < 400; t++)
        pager_turn("p");
    drain("p");
    check_zset("p", 0);
    long long o, d;
    pages_of("p", &o, &d);
    cr_assert_gt(o, 30, "order pages (%lld)", o);
    cr_assert_gt(d, 5, "score pages (%lld)", d);
    check_all("p");
    int n = sort_model();
    for (int i = 0; i < 200; i++)
        step_read("p");
    while (n > 20) {
        step_pop("p");
        n = sort_model();
        if (n % 37 == 0) check_zset("p", n);
    }
    check_zset("p", -1);
    check_all("p");
    cr_assert_str_eq(wr(T0, CMD_DEL, "p", NULL), ":1\r\n");
    memset(has, 0, sizeof(has));
    cr_assert_eq(ctx->entry_bytes, 0, "RAM accounting back to zero");
    sh_check_replay("a drained paged sorted set");
}

Test(pzset, a_checkpoint_of_a_paged_sorted_set_reads_back_equal)
{
    make_names();
    for (int step = 0; step < 2500; step++) {
        random_step("c");
        if (step % 4 == 0) pager_turn("c");
    }
    for (int i = 0; i < 60; i++)
        step_zadd("c");
    for (int t = 0; t < 30; t++)
        pager_turn("c"); /* some records left in flight, unapplied: not state */
    idx_entry_t **slot = idx_find(&ctx->dbs[0]->ix, "c", 1);
    cr_assert(slot);
    st_obj_t *o = st_ent_obj(*slot);
    long long po, pd;
    pages_of("c", &po, &pd);
    cr_assert_gt(po, 5, "order pages (%lld)", po);
    cr_assert_gt(pd, 2, "score pages (%lld)", pd);
    buf_t b;
    buf_init(&b);
    o->ops->ckpt_write(o, &b);
    st_obj_t *back;
    cr_assert_eq(o->ops->ckpt_read((const unsigned char *)b.data, b.len, &back), (long)b.len);
    back->ops->bind(back, ctx);
    cr_assert_null(st_zset_check((st_zset_t *)back));
    uint64_t d1, d2;
    cr_assert_eq(o->ops->digest(ctx, o, &d1), 0);
    cr_assert_eq(back->ops->digest(ctx, back, &d2), 0);
    cr_assert_eq(d1, d2, "the same members and scores");
    long long s1[7], s2[7];
    st_list_page_stats(st_zset_order((st_zset_t *)o), s1);
    st_list_page_stats(st_zset_order((st_zset_t *)back), s2);
    cr_assert(memcmp(s1, s2, sizeof(s1)) == 0, "the same chunks and pages");
    /* Every cut of the stream is refused, never half read. */
    for (size_t cut = 0; cut < b.len; cut += 1 + cut / 7) {
        st_obj_t *x;
        long used = o->ops->ckpt_read((const unsigned char *)b.data, cut, &x);
        if (used >= 0) x->ops->free(x);
        cr_assert(used < 0, "a stream cut at %zu of %zu was read", cut, b.len);
    }
    back->ops->free(back);
    buf_free(&b);
    /* The records in flight apply to the live one as they would have. */
    drain("c");
    check_zset("c", -1);
    check_all("c");
}

/* ZUNIONSTORE, ZINTERSTORE, ZDIFFSTORE and ZRANGESTORE over paged inputs;
 * COPY of a paged sorted set; RESTORE of its DUMP. */
Test(pzset, store_forms_copy_and_dump_over_paged_inputs)
{
    make_names();
    for (int i = 0; i < 500; i++)
        step_zadd("a");
    for (int t = 0; t < 300; t++)
        pager_turn("a");
    drain("a");
    int n = sort_model();
    char exp[32];
    snprintf(exp, sizeof(exp), ":%d\r\n", n);
    cr_assert_str_eq(wr(T0, CMD_ZUNIONSTORE, "u", LIM, "#u32:0", "1", "a", NULL), exp);
    cr_assert_str_eq(wr(T0, CMD_ZUNIONSTORE, "i", LIM, "#u32:1", "2", "a", "u", NULL), exp);
    cr_assert_str_eq(wr(T0, CMD_ZUNIONSTORE, "d", LIM, "#u32:2", "2", "a", "u", NULL), ":0\r\n");
    cr_assert_str_eq(wr(T0, CMD_ZRANGESTORE, "r", LIM, "a", "0", "-1", NULL), exp);
    cr_assert_str_eq(wr(T0, CMD_COPY, "a", "cp", "#u32:0", "#u32:0", NULL), ":1\r\n");
    check_all("u");
    check_all("r");
    check_all("cp");
    /* ZINTERSTORE summed each score twice */
    st_zset_t *iz = object("i");
    cr_assert(iz && st_zset_len(iz) == (uint32_t)n);
    for (int k = 0; k < n; k += 17) {
        double s;
        cr_assert(st_zset_score(iz, names[sorted[k]], (uint32_t)strlen(names[sorted[k]]), &s));
        double want = score[sorted[k]] + score[sorted[k]];
        cr_assert(s == want || (isnan(want) && s == 0));
    }
    /* The results page too once stored (their chunks are stamped). */
    for (int t = 0; t < 300; t++) {
        pager_turn("u");
        pager_turn("cp");
    }
    drain("u");
    drain("cp");
    long long o, d;
    pages_of("u", &o, &d);
    cr_assert_gt(o, 10, "the result's order pages (%lld)", o);
    check_all("u");
    check_all("cp");
    check_zset("u", 0);
    check_zset("cp", 0);
    /* DUMP of a paged sorted set, RESTOREd under another name: equal */
    rd(T0, CMD_DUMP, "a", NULL);
    cr_assert_eq(reply[0], '$');
    char *end;
    size_t dl = strtoul(reply + 1, &end, 10);
    unsigned char *payload = malloc(dl);
    memcpy(payload, end + 2, dl);
    cr_assert_str_eq(sh_put_key(T0, CMD_RESTORE, "back", "buiiii", payload, dl, (uint32_t)0,
                                (int64_t)0, (int64_t)(512 | (uint64_t)64 << 32), (int64_t)512,
                                (int64_t)274877907072),
                     "+OK\r\n");
    free(payload);
    check_all("back");
    check_zset("back", 0);
    sh_check_replay("store forms over a paged sorted set");
}

/* The bulks of a flat RESP array at p (*n, then n bulks): their starts and
 * lengths into out (at most max); the count, and *end past the array. */
static int parse_bulks(const char *p, const char **out, size_t *lens, int max, const char **end)
{
    cr_assert_eq(*p, '*', "an array expected: %.40s", p);
    long n = strtol(p + 1, (char **)&p, 10);
    p += 2;
    cr_assert_leq(n, max);
    for (long i = 0; i < n; i++) {
        cr_assert_eq(*p, '$', "a bulk expected: %.40s", p);
        long len = strtol(p + 1, (char **)&p, 10);
        p += 2;
        out[i] = p;
        lens[i] = (size_t)len;
        p += len + 2;
    }
    *end = p;
    return (int)n;
}

static int member_index(const char *p, size_t n)
{
    for (int i = 0; i < NM; i++)
        if (strlen(names[i]) == n && memcmp(names[i], p, n) == 0) return i;
    return -1;
}

/* ZSCAN over pages (its cursor a rank) returns every member once;
 * ZRANDMEMBER picks members that are there, distinct for a positive
 * count, with their scores. */
Test(pzset, zscan_and_zrandmember_read_through_pages)
{
    make_names();
    for (int i = 0; i < 700; i++)
        step_zadd("s");
    for (int t = 0; t < 300; t++)
        pager_turn("s");
    drain("s");
    long long o, d;
    pages_of("s", &o, &d);
    cr_assert_gt(o, 10, "order pages (%lld)", o);
    int n = sort_model();
    static int seen[NM];
    memset(seen, 0, sizeof(seen));
    static const char *el[2 * NM];
    static size_t len[2 * NM];
    char cursor[32] = "0";
    int calls = 0;
    do {
        const char *r = rd(T0, CMD_ZSCAN, "s", cursor, "COUNT", "50", NULL), *end;
        cr_assert_eq(strncmp(r, "*2\r\n$", 5), 0, "%.40s", r);
        const char *p = strchr(r + 5, '\n') + 1;
        size_t cn = strcspn(p, "\r");
        memcpy(cursor, p, cn);
        cursor[cn] = 0;
        int k = parse_bulks(p + cn + 2, el, len, 2 * NM, &end);
        for (int i = 0; i < k; i += 2) {
            int m = member_index(el[i], len[i]);
            cr_assert(m >= 0 && has[m], "ZSCAN gave a member the set lacks");
            seen[m]++;
        }
        cr_assert_lt(++calls, 10000);
    } while (strcmp(cursor, "0"));
    for (int i = 0; i < NM; i++)
        cr_assert_eq(seen[i], has[i], "%.20s seen %d times", names[i], seen[i]);
    const char *end;
    int k = parse_bulks(rd(T0, CMD_ZRANDMEMBER, "s", "40", NULL), el, len, 2 * NM, &end);
    cr_assert_eq(k, 40 < n ? 40 : n);
    memset(seen, 0, sizeof(seen));
    for (int i = 0; i < k; i++) {
        int m = member_index(el[i], len[i]);
        cr_assert(m >= 0 && has[m] && !seen[m], "ZRANDMEMBER 40: a member once");
        seen[m] = 1;
    }
    k = parse_bulks(rd(T0, CMD_ZRANDMEMBER, "s", "-30", "WITHSCORES", NULL), el, len, 2 * NM, &end);
    cr_assert_eq(k, 60);
    for (int i = 0; i < k; i += 2) {
        int m = member_index(el[i], len[i]);
        char sc[40];
        fmt_score(sc, sizeof(sc), m >= 0 ? score[m] : 0);
        cr_assert(m >= 0 && has[m] && strlen(sc) == len[i + 1] &&
                      !memcmp(sc, el[i + 1], len[i + 1]),
                  "ZRANDMEMBER -30 WITHSCORES: a member with its score");
    }
}
