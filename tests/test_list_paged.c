/*
 * test_list_paged.c - lists in pages (store/core/list.c,
 * store/core/list_page.c, store/types/t_page.c; D63), driven record by
 * record through the store harness against a model: random pushes and
 * pops at both ends, LSET, LINSERT, LREM, LTRIM, LINDEX, LRANGE and LPOS,
 * with the pager played by the test (st_list_page_build's CMD_LPAGE
 * records written as the store would write them, some applied at once,
 * some only after more writes: records in flight, which the writes in
 * between may make no-ops), tiny pages so that one chunk makes several,
 * elements too long for a page (pinned) among them, and compaction's
 * rewrite of every page. After each step the replies must be the model's
 * and the list must agree with itself (st_list_check); at the end replay
 * must reach the same digest and the same pages, and a checkpoint of the
 * list must read back equal and refuse every cut of itself.
 */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "command.h"
#include "record.h"
#include "store/core/entry.h"
#include "store/core/hash.h"
#include "store/core/index.h"
#include "store/core/list.h"
#include "store/core/object.h"
#include "store/core/chunked.h"
#include "store/store-internal.h"
#include "chunk_pager.h"
#include "store_harness.h"

#define T0 1000000

#define wr(t, id, ...)   sh_wr((t), (id), __VA_ARGS__)
#define rd(now, id, ...) sh_rd((now), 0, (id), __VA_ARGS__)

static void setup(void)
{
    sh_setup("plist", 0, 42);
    sh_canonical_only = 1;
}

TestSuite(plist, .init = setup, .fini = sh_teardown, .timeout = 600);

/* ---- the model ---------------------------------------------------------- */

#define MAXN 20000
static char *model[MAXN];
static int mn;

static uint64_t rng = 88172645463325252ull;
static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* An element: short (inline), in the log (over 24 bytes), or pinned
 * (over ST_LIST_PAGE_ELEM_MAX); drawn from a small pool so that LREM,
 * LINSERT and LPOS find matches. */
static char *make_elem(void)
{
    int kind = (int)(rnd() % 40), id = (int)(rnd() % 30);
    size_t len = kind == 0 ? 1100 + (size_t)id : kind < 12 ? 30 + (size_t)id * 5 : 0;
    char *v = malloc(len + 16);
    if (!len) {
        snprintf(v, 16, "v%d", id);
        return v;
    }
    memset(v, 'a' + id % 26, len);
    snprintf(v + len, 16, "%d", id);
    return v;
}

static void model_insert(int i, char *v)
{
    cr_assert_lt(mn, MAXN);
    memmove(&model[i + 1], &model[i], (size_t)(mn - i) * sizeof(*model));
    model[i] = v;
    mn++;
}

static void model_take(int i)
{
    free(model[i]);
    memmove(&model[i], &model[i + 1], (size_t)(mn - i - 1) * sizeof(*model));
    mn--;
}

static void model_clear(void)
{
    while (mn)
        model_take(mn - 1);
}

/* "$len\r\nbytes\r\n" of s. */
static char *bulk(const char *s)
{
    char *b = malloc(strlen(s) + 32);
    sprintf(b, "$%zu\r\n%s\r\n", strlen(s), s);
    return b;
}

static st_list_t *object(const char *key)
{
    idx_entry_t **slot = idx_find(&ctx->dbs[0]->ix, key, (uint32_t)strlen(key));
    if (!slot || st_ent_kind(*slot) != VK_OBJ || st_ent_type(*slot) != ST_LIST) return NULL;
    return st_ent_list(*slot);
}

/* LRANGE from..to equals the model's. */
static void check_range(const char *key, int from, int to)
{
    char a[24], b[24];
    snprintf(a, sizeof(a), "%d", from);
    snprintf(b, sizeof(b), "%d", to);
    const char *r = rd(T0, CMD_LRANGE, key, a, b, NULL);
    if (from < 0) from += mn;
    if (to < 0) to += mn;
    if (from < 0) from = 0;
    if (to >= mn) to = mn - 1;
    int n = from > to ? 0 : to - from + 1;
    char head[32];
    snprintf(head, sizeof(head), "*%d\r\n", n);
    cr_assert(strncmp(r, head, strlen(head)) == 0, "LRANGE %s %s: %.40s, want %d", a, b, r, n);
    r += strlen(head);
    for (int i = 0; i < n; i++) {
        char *want = bulk(model[from + i]);
        cr_assert(strncmp(r, want, strlen(want)) == 0, "LRANGE element %d: %.40s, want %.40s",
                  from + i, r, want);
        r += strlen(want);
        free(want);
    }
}

/* ---- the pager, played by the test -------------------------------------- */

static st_pgpolicy_t policy = {
    .entries = 1, .overlay_max = 16, .page_bytes = 300, .record_bytes = 2000};

static int build(store_ctx_t *c, void *obj, const st_pgpolicy_t *pol, st_cpbuilt_t *out)
{
    return st_list_page_build(c, obj, pol, out);
}

static void stats(void *obj, long long v[7])
{
    st_list_page_stats(obj, v);
}

static const char *check(void *obj)
{
    return st_list_check(obj);
}

static void pager_turn(const char *key)
{
    st_list_t *o = object(key);
    cp_turn(CMD_LPAGE, key, o, o && (st_list_page_wanted(o, &policy) || policy.below), build,
            &policy, rnd);
}

static void drain(const char *key)
{
    cp_drain();
    st_list_t *o = object(key);
    if (o) st_list_page_unbusy(o);
}

/* ---- the steps ------------------------------------------------------------ */

/* A push of 1..5 elements (sometimes 150: several chunks in one record). */
static void step_push(const char *key, int right)
{
    int k = rnd() % 25 == 0 ? 150 : 1 + (int)(rnd() % 5);
    if (mn + k >= MAXN) return;
    const unsigned char *argv[2 + 150];
    uint32_t lens[2 + 150];
    unsigned char mode[4];
    cmd_put_u32(mode, right ? 1 : 0);
    argv[0] = (const unsigned char *)key;
    lens[0] = (uint32_t)strlen(key);
    argv[1] = mode;
    lens[1] = 4;
    for (int i = 0; i < k; i++) {
        char *v = make_elem();
        argv[2 + i] = (const unsigned char *)v;
        lens[2 + i] = (uint32_t)strlen(v);
        model_insert(right ? mn : 0, v);
    }
    char exp[32];
    snprintf(exp, sizeof(exp), ":%d\r\n", mn);
    cr_assert_str_eq(sh_put(T0, CMD_LPUSH, (uint16_t)(2 + k), argv, lens), exp);
}

static void step_pop(const char *key, int right)
{
    if (!mn) return;
    int count = (int)(rnd() % 4);
    char c[24];
    snprintf(c, sizeof(c), "#i64:%d", count ? count : -1);
    const char *r = wr(T0, CMD_LPOP, key, right ? "#u32:1" : "#u32:0", "#u32:2", c, NULL);
    int n = count ? (count < mn ? count : mn) : 1;
    if (count) {
        char head[24];
        snprintf(head, sizeof(head), "*%d\r\n", n);
        cr_assert(strncmp(r, head, strlen(head)) == 0, "LPOP count: %.30s", r);
        r += strlen(head);
    }
    for (int i = 0; i < n; i++) {
        int at = right ? mn - 1 : 0;
        char *want = bulk(model[at]);
        cr_assert(strncmp(r, want, strlen(want)) == 0, "pop: %.40s, want %.40s", r, want);
        r += strlen(want);
        free(want);
        model_take(at);
    }
}

static void step_lset(const char *key)
{
    if (!mn) return;
    int i = (int)(rnd() % (uint64_t)mn);
    char idx[24];
    snprintf(idx, sizeof(idx), "%d", rnd() % 2 ? i : i - mn);
    char *v = make_elem();
    cr_assert_str_eq(wr(T0, CMD_LSET, key, idx, v, NULL), "+OK\r\n");
    free(model[i]);
    model[i] = v;
}

static int find_first(const char *v)
{
    for (int i = 0; i < mn; i++)
        if (strcmp(model[i], v) == 0) return i;
    return -1;
}

static void step_linsert(const char *key)
{
    if (!mn) return;
    char *pivot = strdup(rnd() % 8 ? model[rnd() % (uint64_t)mn] : "nothere");
    int after = (int)(rnd() % 2);
    char *v = make_elem();
    int at = find_first(pivot);
    char exp[32];
    snprintf(exp, sizeof(exp), ":%d\r\n", at < 0 ? -1 : mn + 1);
    cr_assert_str_eq(wr(T0, CMD_LINSERT, key, after ? "#u32:1" : "#u32:0", pivot, v, NULL), exp);
    if (at >= 0)
        model_insert(at + after, v);
    else
        free(v);
    free(pivot);
}

static void step_lrem(const char *key)
{
    if (!mn) return;
    char *v = strdup(model[rnd() % (uint64_t)mn]);
    long count = (long)(rnd() % 5) - 2;
    int removed = 0;
    if (count >= 0) {
        for (int i = 0; i < mn && (!count || removed < count);)
            if (strcmp(model[i], v) == 0) {
                model_take(i);
                removed++;
            } else {
                i++;
            }
    } else {
        for (int i = mn - 1; i >= 0 && removed < -count; i--)
            if (strcmp(model[i], v) == 0) {
                model_take(i);
                removed++;
            }
    }
    char c[24], exp[24];
    snprintf(c, sizeof(c), "#i64:%ld", count);
    snprintf(exp, sizeof(exp), ":%d\r\n", removed);
    cr_assert_str_eq(wr(T0, CMD_LREM, key, c, v, NULL), exp, "LREM %ld", count);
    free(v);
}

static void step_ltrim(const char *key)
{
    int h = (int)(rnd() % 4), t = (int)(rnd() % 4);
    char a[24], b[24];
    snprintf(a, sizeof(a), "#i64:%d", h);
    snprintf(b, sizeof(b), "#i64:%d", -1 - t);
    cr_assert_str_eq(wr(T0, CMD_LTRIM, key, a, b, NULL), "+OK\r\n");
    if (h + t >= mn) {
        model_clear();
        return;
    }
    for (int i = 0; i < t; i++)
        model_take(mn - 1);
    for (int i = 0; i < h; i++)
        model_take(0);
}

static void step_read(const char *key)
{
    if (!mn) {
        cr_assert_str_eq(rd(T0, CMD_LINDEX, key, "0", NULL), "$-1\r\n");
        return;
    }
    int i = (int)(rnd() % (uint64_t)mn);
    char idx[24];
    snprintf(idx, sizeof(idx), "%d", rnd() % 2 ? i : i - mn);
    char *want = bulk(model[i]);
    cr_assert_str_eq(rd(T0, CMD_LINDEX, key, idx, NULL), want, "LINDEX %s", idx);
    free(want);
    int from = (int)(rnd() % (uint64_t)mn);
    check_range(key, from, from + (int)(rnd() % 40));
    /* LPOS of an element, from either end. */
    char *v = model[rnd() % (uint64_t)mn];
    int first = find_first(v), last = -1;
    for (int k = mn - 1; k >= 0 && last < 0; k--)
        if (strcmp(model[k], v) == 0) last = k;
    char exp[24];
    snprintf(exp, sizeof(exp), ":%d\r\n", first);
    cr_assert_str_eq(rd(T0, CMD_LPOS, key, v, NULL), exp);
    snprintf(exp, sizeof(exp), ":%d\r\n", last);
    cr_assert_str_eq(rd(T0, CMD_LPOS, key, v, "RANK", "-1", NULL), exp);
}

static void random_step(const char *key)
{
    int op = (int)(rnd() % 20);
    if (op < 7)
        step_push(key, op % 2);
    else if (op < 11)
        step_pop(key, op % 2);
    else if (op == 11)
        step_lset(key);
    else if (op == 12)
        step_linsert(key);
    else if (op == 13)
        step_lrem(key);
    else if (op == 14 && rnd() % 4 == 0)
        step_ltrim(key);
    else
        step_read(key);
}

static void check_list(const char *key, int step)
{
    st_list_t *l = object(key);
    cr_assert_eq(l ? (int)st_list_len(l) : 0, mn, "step %d: the list's length", step);
    const char *bad = l ? st_list_check(l) : NULL;
    cr_assert(!bad, "step %d: %s", step, bad);
}

/* ---- the tests -------------------------------------------------------------- */

Test(plist, random_writes_match_a_model_with_records_in_flight)
{
    int max_pages = 0;
    for (int step = 0; step < 6000; step++) {
        random_step("l");
        if (step % 5 == 0) pager_turn("l");
        if (step % 10 == 0) check_list("l", step);
        st_list_t *l = object("l");
        if (l) {
            long long v[7];
            st_list_page_stats(l, v);
            if (v[2] > max_pages) max_pages = (int)v[2];
        }
        if (step % 500 == 499) {
            policy.below = step % 1000 == 999 ? UINT64_MAX : 0; /* compaction's rewrite */
            if (mn) check_range("l", 0, -1);
        }
    }
    policy.below = 0;
    drain("l");
    check_list("l", -1);
    cr_assert_gt(max_pages, 20, "pages were made (%d at most)", max_pages);
    cr_assert_gt(cp_applied, 50);
    if (mn) check_range("l", 0, -1);
    sh_check_replay("a paged list");
    /* The replay applied the same records the same way: the same pages. */
    store_ctx_t *again = sh_replay(store_ctx_create(&cfg, 7), NULL);
    idx_entry_t **s1 = idx_find(&again->dbs[0]->ix, "l", 1);
    st_list_t *l = object("l");
    cr_assert_eq(s1 != NULL, l != NULL);
    if (l) {
        long long a[7], b[7];
        st_list_page_stats(l, a);
        st_list_page_stats(st_ent_list(*s1), b);
        cr_assert(memcmp(a, b, sizeof(a)) == 0, "pages live %lld, replayed %lld", a[2], b[2]);
    }
    store_ctx_destroy(again);
}

Test(plist, a_long_list_pages_fully_and_pops_through_its_pages)
{
    /* 3000 elements pushed at the tail; the pager makes everything between
     * the ends pages; then pops from both ends read through them. */
    for (int i = 0; i < 600; i++)
        step_push("k", 1);
    for (int t = 0; t < 400; t++)
        pager_turn("k");
    drain("k");
    check_list("k", 0);
    long long v[7];
    st_list_page_stats(object("k"), v);
    cr_assert_eq(v[0], 1, "paged");
    cr_assert_lt(v[4], 2 * 128 + 200, "only the ends in RAM (%lld elements)", v[4]);
    check_range("k", 0, -1);
    check_range("k", mn / 2, mn / 2 + 100);
    char *first = bulk(model[mn / 3]);
    char idx[24];
    snprintf(idx, sizeof(idx), "%d", mn / 3);
    cr_assert_str_eq(rd(T0, CMD_LINDEX, "k", idx, NULL), first);
    free(first);
    while (mn > 10) {
        step_pop("k", 0);
        step_pop("k", 1);
        if (mn % 50 == 0) check_list("k", mn);
    }
    check_list("k", -1);
    check_range("k", 0, -1);
    /* LTRIM of pages, and DEL: the live bytes of pages are uncounted. */
    cr_assert_str_eq(wr(T0, CMD_DEL, "k", NULL), ":1\r\n");
    model_clear();
    cr_assert_eq(ctx->entry_bytes, 0, "RAM accounting back to zero");
    sh_check_replay("a drained paged list");
}

Test(plist, ltrim_and_writes_inside_pages)
{
    for (int i = 0; i < 300; i++)
        step_push("t", i % 3 == 0 ? 0 : 1);
    for (int t = 0; t < 200; t++)
        pager_turn("t");
    drain("t");
    check_list("t", 0);
    /* Writes inside clean chunks copy them into RAM, then pages again. */
    for (int i = 0; i < 200; i++) {
        int op = (int)(rnd() % 3);
        if (op == 0) step_lset("t");
        if (op == 1) step_linsert("t");
        if (op == 2) step_lrem("t");
        check_list("t", i);
        if (i % 20 == 0) pager_turn("t");
    }
    drain("t");
    check_range("t", 0, -1);
    /* LTRIM through pages from both ends. */
    int keep = mn / 3;
    char a[24], b[24];
    snprintf(a, sizeof(a), "#i64:%d", keep);
    snprintf(b, sizeof(b), "#i64:%d", 2 * keep);
    cr_assert_str_eq(wr(T0, CMD_LTRIM, "t", a, b, NULL), "+OK\r\n");
    int tail = mn - 2 * keep - 1;
    for (int i = 0; i < tail; i++)
        model_take(mn - 1);
    for (int i = 0; i < keep; i++)
        model_take(0);
    check_list("t", -1);
    check_range("t", 0, -1);
    sh_check_replay("a trimmed paged list");
}

/* LRANGE 0 -1 of key equals v[0, n). */
static void expect_list(const char *key, char **v, int n)
{
    const char *r = rd(T0, CMD_LRANGE, key, "0", "-1", NULL);
    char head[32];
    snprintf(head, sizeof(head), "*%d\r\n", n);
    cr_assert(strncmp(r, head, strlen(head)) == 0, "LRANGE %s: %.40s, want %d", key, r, n);
    r += strlen(head);
    for (int i = 0; i < n; i++) {
        char *want = bulk(v[i]);
        cr_assert(strncmp(r, want, strlen(want)) == 0, "%s element %d: %.40s, want %.40s", key, i,
                  r, want);
        r += strlen(want);
        free(want);
    }
    const char *bad = object(key) ? st_list_check(object(key)) : "no list";
    cr_assert(!bad, "%s: %s", key, bad);
}

Test(plist, elements_copied_from_pages_outlive_their_list_in_others)
{
    /* A paged list; writes inside its pages copy their windows into RAM,
     * the short elements of each page into one block (D77). */
    for (int i = 0; i < 300; i++)
        step_push("a", 1);
    for (int t = 0; t < 200; t++)
        pager_turn("a");
    drain("a");
    long long v[7];
    st_list_page_stats(object("a"), v);
    long long in_ram = v[4];
    for (int i = 0; i < 6; i++) {
        char idx[24];
        int at = mn / 8 + i * (mn / 8);
        snprintf(idx, sizeof(idx), "%d", at);
        char *e = make_elem();
        cr_assert_str_eq(wr(T0, CMD_LSET, "a", idx, e, NULL), "+OK\r\n");
        free(model[at]);
        model[at] = e;
    }
    st_list_page_stats(object("a"), v);
    cr_assert_gt(v[4], in_ram + 20, "pages copied into RAM (%lld elements, %lld before)", v[4],
                 in_ram);
    check_list("a", 0);
    /* A copy of the list (its own allocations), then the tail's two
     * thirds moved to another list, one element at a time. */
    char *orig[MAXN];
    for (int i = 0; i < mn; i++)
        orig[i] = strdup(model[i]);
    int n = mn;
    cr_assert_str_eq(wr(T0, CMD_COPY, "a", "c", "#u32:0", "#u32:0", NULL), ":1\r\n");
    int moved = 2 * mn / 3;
    for (int i = 0; i < moved; i++)
        wr(T0, CMD_LMOVE, "a", "b", "#u32:1", "#u32:0", "#u32:2", NULL);
    expect_list("b", orig + n - moved, moved);
    /* The source goes; what it gave the others stays readable. */
    cr_assert_str_eq(wr(T0, CMD_DEL, "a", NULL), ":1\r\n");
    expect_list("b", orig + n - moved, moved);
    expect_list("c", orig, n);
    /* Pops free the moved elements one by one, the last of a block frees it. */
    for (int i = 0; i < moved / 2; i++)
        wr(T0, CMD_LPOP, "b", "#u32:0", "#u32:2", "#i64:-1", NULL);
    expect_list("b", orig + n - moved + moved / 2, moved - moved / 2);
    cr_assert_str_eq(wr(T0, CMD_DEL, "b", "c", NULL), ":2\r\n");
    model_clear();
    for (int i = 0; i < n; i++)
        free(orig[i]);
    cr_assert_eq(ctx->entry_bytes, 0, "RAM accounting back to zero");
    sh_check_replay("lists holding elements copied from pages");
}

Test(plist, a_checkpoint_of_a_paged_list_reads_back_equal)
{
    for (int step = 0; step < 2000; step++) {
        random_step("c");
        if (step % 5 == 0) pager_turn("c");
    }
    for (int i = 0; i < 100; i++)
        step_push("c", 1);
    for (int t = 0; t < 50; t++)
        pager_turn("c"); /* some records left in flight, unapplied: not state */
    st_obj_t *back = cp_ckpt_round_trip("c", stats, check);
    /* A record in flight when the checkpoint was taken applies to the
     * list read back as to the live one (the stamps came along). */
    back->ops->free(back);
    drain("c");
    check_list("c", -1);
    check_range("c", 0, -1);
}

Test(plist, a_version_1_checkpoint_still_loads_and_pages)
{
    /* Version 1: u8 1, u32 count, then per element u8 0, u32 length, bytes. */
    buf_t b;
    buf_init(&b);
    unsigned char hdr[5] = {1};
    cmd_put_u32(hdr + 1, 400);
    buf_append(&b, hdr, 5);
    for (int i = 0; i < 400; i++) {
        char v[32];
        int n = snprintf(v, sizeof(v), "old-%d", i);
        unsigned char eh[5] = {0};
        cmd_put_u32(eh + 1, (uint32_t)n);
        buf_append(&b, eh, 5);
        buf_append(&b, v, (size_t)n);
    }
    st_obj_t *o;
    cr_assert_eq(st_list_ops.ckpt_read((const unsigned char *)b.data, b.len, &o), (long)b.len);
    st_list_t *l = (st_list_t *)o;
    o->ops->bind(o, ctx);
    cr_assert_eq(st_list_len(l), 400);
    cr_assert(!st_list_check(l));
    long long v[7];
    st_list_page_stats(l, v);
    cr_assert_eq(v[1], 4, "chunks of %u elements", 128u);
    /* Its chunks are stamped, so the pager can build pages of them. */
    st_cpbuilt_t built;
    st_cpbuilt_init(&built);
    cr_assert_eq(st_list_page_build(ctx, l, &policy, &built), ST_PAGE_BUILT);
    cr_assert_gt(built.nimg, 0);
    st_cpbuilt_free(&built);
    st_list_page_unbusy(l);
    o->ops->free(o);
    buf_free(&b);
}
