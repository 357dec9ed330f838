/*
 * test_stream_paged.c - streams in pages (store/core/stream.c,
 * store/core/stream_page.c, store/core/stream_snap.c, store/types/t_page.c;
 * D64), driven record by record through the store harness against a
 * model: XADD (fields repeated or not, entries too long for a page among
 * them, MAXLEN exact and approximate), XDEL inside pages, XTRIM MAXLEN and
 * MINID, XRANGE / XREVRANGE windows, XREAD, a consumer group's reads of new
 * entries and of its history, XACK; with the pager played by the test
 * (st_stream_page_build's CMD_SPAGE records written as the store would
 * write them, some applied at once, some only after more writes: records
 * in flight, which the writes in between may make no-ops), tiny pages so
 * that one chunk makes several, and compaction's rewrite of every page.
 * After each step the replies must be the model's and the stream must
 * agree with itself (st_stream_check); at the end replay must reach the
 * same digest and the same pages, a checkpoint of the stream must read
 * back equal (records in flight applying to it as to the live one) and
 * refuse every cut of itself, a version 2 checkpoint must load and page,
 * and a range reply in parts must be the range as of its request.
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
#include "store/core/object.h"
#include "store/core/chunked.h"
#include "store/core/stream.h"
#include "store/core/value.h"
#include "store/store-internal.h"
#include "chunk_pager.h"
#include "store_harness.h"

#define T0 1000000

#define wr(t, id, ...)   sh_wr((t), (id), __VA_ARGS__)
#define rd(now, id, ...) sh_rd((now), 0, (id), __VA_ARGS__)

static void setup(void)
{
    sh_setup("pstream", 0, 42);
    sh_canonical_only = 1;
}

TestSuite(pstream, .init = setup, .fini = sh_teardown, .timeout = 600);

/* ---- the model ---------------------------------------------------------- */

typedef struct mentry {
    uint64_t ms, seq;
    char *resp; /* its reply: [id, [field, value, ...]] */
} mentry_t;

#define MAXN 20000
static mentry_t model[MAXN];
static int mn;
static uint64_t last_ms = 1, last_seq;

/* The group "g": its last delivered ID and its pending IDs (consumer "c"). */
static uint64_t g_ms, g_seq;
static uint64_t pel[MAXN][2];
static int npel;

static uint64_t rng = 88172645463325252ull;
static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static int cmp_id(uint64_t ams, uint64_t aseq, uint64_t bms, uint64_t bseq)
{
    if (ams != bms) return ams < bms ? -1 : 1;
    return aseq < bseq ? -1 : aseq > bseq;
}

static void bulk(buf_t *b, const char *p, size_t n)
{
    buf_appendf(b, "$%zu\r\n", n);
    buf_append(b, p, n);
    buf_append(b, "\r\n", 2);
}

static int id_text(char *t, uint64_t ms, uint64_t seq)
{
    return sprintf(t, "%" PRIu64 "-%" PRIu64, ms, seq);
}

/* The first model entry at or above (ms, seq). */
static int model_lower(uint64_t ms, uint64_t seq)
{
    int lo = 0, hi = mn;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (cmp_id(model[mid].ms, model[mid].seq, ms, seq) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static void model_drop(int i)
{
    free(model[i].resp);
    memmove(&model[i], &model[i + 1], (size_t)(mn - i - 1) * sizeof(*model));
    mn--;
}

static void model_trim(int k)
{
    for (int i = 0; i < k; i++)
        free(model[i].resp);
    memmove(&model[0], &model[k], (size_t)(mn - k) * sizeof(*model));
    mn -= k;
}

static st_stream_t *object(const char *key)
{
    idx_entry_t **slot = idx_find(&ctx->dbs[0]->ix, key, (uint32_t)strlen(key));
    if (!slot || st_ent_kind(*slot) != VK_OBJ || st_ent_type(*slot) != ST_STREAM) return NULL;
    return st_ent_stream(*slot);
}

/* ---- the pager, played by the test -------------------------------------- */

static st_pgpolicy_t policy = {
    .entries = 1, .overlay_max = 16, .page_bytes = 300, .record_bytes = 60000};

static int build(store_ctx_t *c, void *obj, const st_pgpolicy_t *pol, st_cpbuilt_t *out)
{
    return st_stream_page_build(c, obj, pol, out);
}

static void stats(void *obj, long long v[7])
{
    st_stream_page_stats(obj, v);
}

static const char *check(void *obj)
{
    return st_stream_check(obj);
}

static void pager_turn(const char *key)
{
    st_stream_t *o = object(key);
    cp_turn(CMD_SPAGE, key, o, o && (st_stream_page_wanted(o, &policy) || policy.below), build,
            &policy, rnd);
}

static void drain(const char *key)
{
    cp_drain();
    st_stream_t *o = object(key);
    if (o) st_stream_page_unbusy(o);
}

/* ---- the steps ------------------------------------------------------------ */

/* XADD of the next ID with 1-4 pairs: mostly the same fields each time,
 * sometimes others, sometimes a value too long for a page; sometimes
 * with MAXLEN (exact or ~). */
static void step_xadd(const char *key)
{
    if (mn + 1 >= MAXN) return;
    if (rnd() % 3)
        last_seq++;
    else
        last_ms += 1 + rnd() % 1000, last_seq = rnd() % 3;
    char id[48];
    id_text(id, last_ms, last_seq);
    const unsigned char *argv[16];
    uint32_t lens[16];
    int argc = 0;
    argv[argc] = (const unsigned char *)key;
    lens[argc++] = (uint32_t)strlen(key);
    char maxlen[24];
    int trim = rnd() % 12 == 0, approx = rnd() % 2;
    long keep = 200 + (long)(rnd() % 600);
    if (trim) {
        argv[argc] = (const unsigned char *)"MAXLEN";
        lens[argc++] = 6;
        if (approx) {
            argv[argc] = (const unsigned char *)"~";
            lens[argc++] = 1;
        }
        snprintf(maxlen, sizeof(maxlen), "%ld", keep);
        argv[argc] = (const unsigned char *)maxlen;
        lens[argc++] = (uint32_t)strlen(maxlen);
    }
    argv[argc] = (const unsigned char *)id;
    lens[argc++] = (uint32_t)strlen(id);
    int kind = (int)(rnd() % 30), npairs = kind < 22 ? 2 : 1 + (int)(rnd() % 4);
    static char vals[4][17100], names[4][24];
    buf_t resp;
    buf_init(&resp);
    buf_appendf(&resp, "*2\r\n");
    bulk(&resp, id, strlen(id));
    buf_appendf(&resp, "*%d\r\n", 2 * npairs);
    for (int k = 0; k < npairs; k++) {
        int n = kind < 22 ? snprintf(names[k], sizeof(names[k]), "%s", k ? "humidity" : "temp")
                          : snprintf(names[k], sizeof(names[k]), "f%d", (int)(rnd() % 5));
        size_t vl = kind == 29 && k == 0 ? 17000 : 1 + rnd() % 40;
        memset(vals[k], 'a' + (int)(rnd() % 26), vl);
        vals[k][vl] = 0;
        argv[argc] = (const unsigned char *)names[k];
        lens[argc++] = (uint32_t)n;
        argv[argc] = (const unsigned char *)vals[k];
        lens[argc++] = (uint32_t)vl;
        bulk(&resp, names[k], (size_t)n);
        bulk(&resp, vals[k], vl);
    }
    buf_append(&resp, "", 1);
    model[mn++] = (mentry_t){last_ms, last_seq, resp.data};
    char want[64];
    snprintf(want, sizeof(want), "$%zu\r\n%s\r\n", strlen(id), id);
    cr_assert_str_eq(sh_put(T0, CMD_XADD, (uint16_t)argc, argv, lens), want);
    if (trim && mn > keep) {
        int k = mn - (int)keep;
        if (approx) k -= k % 100;
        model_trim(k);
    }
}

static void step_xdel(const char *key)
{
    if (!mn) return;
    int n = 1 + (int)(rnd() % 3), deleted = 0;
    char ids[3][48];
    uint64_t ms[3], seq[3];
    for (int i = 0; i < n; i++) {
        int at = (int)(rnd() % (uint64_t)mn);
        ms[i] = model[at].ms;
        seq[i] = rnd() % 8 ? model[at].seq : model[at].seq + 1000; /* sometimes missing */
        id_text(ids[i], ms[i], seq[i]);
    }
    for (int i = 0; i < n; i++) {
        int at = model_lower(ms[i], seq[i]);
        if (at < mn && model[at].ms == ms[i] && model[at].seq == seq[i]) {
            model_drop(at);
            deleted++;
        }
    }
    char want[24];
    snprintf(want, sizeof(want), ":%d\r\n", deleted);
    const char *r = n == 1   ? wr(T0, CMD_XDEL, key, ids[0], NULL)
                    : n == 2 ? wr(T0, CMD_XDEL, key, ids[0], ids[1], NULL)
                             : wr(T0, CMD_XDEL, key, ids[0], ids[1], ids[2], NULL);
    cr_assert_str_eq(r, want);
}

static void step_xtrim(const char *key)
{
    int k;
    char a[48], want[24];
    const char *r;
    if (rnd() % 2) {
        int keep = mn - 1 - (int)(rnd() % 40);
        if (keep < 0) keep = 0;
        snprintf(a, sizeof(a), "%d", keep);
        k = mn - keep;
        r = wr(T0, CMD_XTRIM, key, "MAXLEN", a, NULL);
    } else {
        if (!mn) return;
        int at = (int)(rnd() % (uint64_t)(mn < 50 ? mn : 50));
        id_text(a, model[at].ms, model[at].seq);
        k = at;
        r = wr(T0, CMD_XTRIM, key, "MINID", a, NULL);
    }
    snprintf(want, sizeof(want), ":%d\r\n", k);
    cr_assert_str_eq(r, want);
    model_trim(k);
}

/* The model's entries [from, from + n) (or back from `from`) as a reply. */
static void model_range(buf_t *b, int from, int n, int rev)
{
    buf_appendf(b, "*%d\r\n", n);
    for (int i = 0; i < n; i++) {
        const char *e = model[rev ? from - i : from + i].resp;
        buf_append(b, e, strlen(e));
    }
}

static void check_range(const char *key, int rev)
{
    if (!mn) return;
    int a = (int)(rnd() % (uint64_t)mn), b = a + (int)(rnd() % 60);
    if (b >= mn) b = mn - 1;
    char lo[48], hi[48], cnt[24];
    id_text(lo, model[a].ms, model[a].seq);
    id_text(hi, model[b].ms, model[b].seq);
    int count = rnd() % 3 ? 0 : 1 + (int)(rnd() % 30), n = b - a + 1;
    if (count && n > count) n = count;
    snprintf(cnt, sizeof(cnt), "%d", count);
    const char *r = rev ? (count ? rd(T0, CMD_XREVRANGE, key, hi, lo, "COUNT", cnt, NULL)
                                 : rd(T0, CMD_XREVRANGE, key, hi, lo, NULL))
                        : (count ? rd(T0, CMD_XRANGE, key, lo, hi, "COUNT", cnt, NULL)
                                 : rd(T0, CMD_XRANGE, key, lo, hi, NULL));
    buf_t want;
    buf_init(&want);
    model_range(&want, rev ? b : a, n, rev);
    buf_append(&want, "", 1);
    cr_assert_str_eq(r, want.data, "%s %s %s COUNT %d", rev ? "XREVRANGE" : "XRANGE", lo, hi,
                     count);
    buf_free(&want);
}

static void check_xread(const char *key)
{
    if (!mn) return;
    int at = (int)(rnd() % (uint64_t)mn), n = mn - at - 1;
    char id[48];
    id_text(id, model[at].ms, model[at].seq);
    if (n > 20) n = 20;
    const char *r = rd(T0, CMD_XREAD, "COUNT", "20", "STREAMS", key, id, NULL);
    buf_t want;
    buf_init(&want);
    if (!n) {
        buf_appendf(&want, "*-1\r\n");
    } else {
        buf_appendf(&want, "*1\r\n*2\r\n");
        bulk(&want, key, strlen(key));
        model_range(&want, at + 1, n, 0);
    }
    buf_append(&want, "", 1);
    cr_assert_str_eq(r, want.data, "XREAD after %s", id);
    buf_free(&want);
    char len[24];
    snprintf(len, sizeof(len), ":%d\r\n", mn);
    cr_assert_str_eq(rd(T0, CMD_XLEN, key, NULL), len);
}

#define XRG(...)                                                                                   \
    wr(T0, CMD_XREADGROUP, "#i64:7", "#u32:2", "#u32:0", "#u32:6", "#i64:0", __VA_ARGS__, NULL)

/* The group's new entries (at most 7), or its history from the first
 * pending one (at most 5: deleted ones as [id, null]); XACK of a few. */
static void step_group(const char *key)
{
    buf_t want;
    buf_init(&want);
    int op = (int)(rnd() % 3);
    const char *r;
    if (op == 0) {
        int at = model_lower(g_ms, g_seq + 1), n = mn - at < 7 ? mn - at : 7;
        r = XRG("GROUP", "g", "c", "COUNT", "7", "STREAMS", key, ">");
        if (!n) {
            buf_appendf(&want, "*-1\r\n");
        } else {
            buf_appendf(&want, "*1\r\n*2\r\n");
            bulk(&want, key, strlen(key));
            model_range(&want, at, n, 0);
            for (int i = 0; i < n; i++) {
                pel[npel][0] = model[at + i].ms;
                pel[npel++][1] = model[at + i].seq;
            }
            g_ms = model[at + n - 1].ms;
            g_seq = model[at + n - 1].seq;
        }
    } else if (op == 1) {
        int n = npel < 5 ? npel : 5;
        r = XRG("GROUP", "g", "c", "COUNT", "5", "STREAMS", key, "0");
        buf_appendf(&want, "*1\r\n*2\r\n");
        bulk(&want, key, strlen(key));
        buf_appendf(&want, "*%d\r\n", n);
        for (int i = 0; i < n; i++) {
            int at = model_lower(pel[i][0], pel[i][1]);
            if (at < mn && model[at].ms == pel[i][0] && model[at].seq == pel[i][1]) {
                buf_append(&want, model[at].resp, strlen(model[at].resp));
            } else {
                char id[48];
                buf_appendf(&want, "*2\r\n");
                bulk(&want, id, (size_t)id_text(id, pel[i][0], pel[i][1]));
                buf_appendf(&want, "*-1\r\n");
            }
        }
    } else {
        if (!npel) return;
        int i = (int)(rnd() % (uint64_t)npel);
        char id[48];
        id_text(id, pel[i][0], pel[i][1]);
        memmove(&pel[i], &pel[i + 1], (size_t)(npel - i - 1) * sizeof(pel[0]));
        npel--;
        r = wr(T0, CMD_XACK, key, "g", id, NULL);
        buf_appendf(&want, ":1\r\n");
    }
    buf_append(&want, "", 1);
    cr_assert_str_eq(r, want.data, "group op %d", op);
    buf_free(&want);
}

static void random_step(const char *key)
{
    int op = (int)(rnd() % 20);
    if (op < 9)
        step_xadd(key);
    else if (op < 11)
        step_xdel(key);
    else if (op == 11 && rnd() % 3 == 0)
        step_xtrim(key);
    else if (op < 14)
        check_range(key, op % 2);
    else if (op < 16)
        check_xread(key);
    else
        step_group(key);
}

static void check_stream(const char *key, int step)
{
    st_stream_t *s = object(key);
    cr_assert_eq(s ? (int)st_stream_len(s) : 0, mn, "step %d: the stream's length", step);
    const char *bad = s ? st_stream_check(s) : NULL;
    cr_assert(!bad, "step %d: %s", step, bad);
    st_hash_mat_reset(ctx);
}

/* The whole stream equals the model, both ways. */
static void check_all(const char *key)
{
    buf_t want;
    buf_init(&want);
    model_range(&want, 0, mn, 0);
    buf_append(&want, "", 1);
    cr_assert_str_eq(rd(T0, CMD_XRANGE, key, "-", "+", NULL), want.data, "XRANGE - +");
    buf_reset(&want);
    model_range(&want, mn - 1, mn, 1);
    buf_append(&want, "", 1);
    cr_assert_str_eq(rd(T0, CMD_XREVRANGE, key, "+", "-", NULL), want.data, "XREVRANGE + -");
    if (mn) {
        /* XINFO STREAM's first and last entries, and FULL's first ones. */
        const char *info = rd(T0, CMD_XINFO, "STREAM", key, NULL);
        buf_reset(&want);
        buf_appendf(&want, "$11\r\nfirst-entry\r\n%s$10\r\nlast-entry\r\n%s", model[0].resp,
                    model[mn - 1].resp);
        buf_append(&want, "", 1);
        cr_assert(strstr(info, want.data), "XINFO STREAM: %.200s", info);
        int n = mn < 7 ? mn : 7;
        info = rd(T0, CMD_XINFO, "STREAM", key, "FULL", "COUNT", "7", NULL);
        buf_reset(&want);
        buf_appendf(&want, "$7\r\nentries\r\n");
        model_range(&want, 0, n, 0);
        buf_append(&want, "", 1);
        cr_assert(strstr(info, want.data), "XINFO STREAM FULL: %.200s", info);
    }
    buf_free(&want);
}

static void start_group(const char *key)
{
    wr(T0, CMD_XGROUP, "CREATE", key, "g", "0", "MKSTREAM", NULL);
}

/* ---- the tests -------------------------------------------------------------- */

Test(pstream, random_writes_match_a_model_with_records_in_flight)
{
    start_group("s");
    int max_pages = 0;
    for (int step = 0; step < 8000; step++) {
        random_step("s");
        if (step % 5 == 0) pager_turn("s");
        if (step % 10 == 0) check_stream("s", step);
        long long v[7];
        st_stream_page_stats(object("s"), v);
        if (v[2] > max_pages) max_pages = (int)v[2];
        if (step % 500 == 499) {
            policy.below = step % 1000 == 999 ? UINT64_MAX : 0; /* compaction's rewrite */
            check_all("s");
        }
    }
    policy.below = 0;
    drain("s");
    check_stream("s", -1);
    cr_assert_gt(max_pages, 20, "pages were made (%d at most)", max_pages);
    cr_assert_gt(cp_applied, 50);
    check_all("s");
    sh_check_replay("a paged stream");
    /* The replay applied the same records the same way: the same pages. */
    store_ctx_t *again = sh_replay(store_ctx_create(&cfg, 7), NULL);
    idx_entry_t **s1 = idx_find(&again->dbs[0]->ix, "s", 1);
    cr_assert(s1);
    long long a[7], b[7];
    st_stream_page_stats(object("s"), a);
    st_stream_page_stats(st_ent_stream(*s1), b);
    cr_assert(memcmp(a, b, sizeof(a)) == 0, "pages live %lld, replayed %lld", a[2], b[2]);
    store_ctx_destroy(again);
}

Test(pstream, a_long_stream_pages_fully_and_trims_through_its_pages)
{
    /* 3000 entries; the pager makes everything between the first and the
     * last chunk pages; then reads, XDEL inside pages and trims. */
    start_group("k");
    for (int i = 0; i < 3000; i++)
        step_xadd("k");
    for (int t = 0; t < 400; t++)
        pager_turn("k");
    drain("k");
    check_stream("k", 0);
    long long v[7];
    st_stream_page_stats(object("k"), v);
    cr_assert_eq(v[0], 1, "paged");
    cr_assert_lt(v[4] - v[5], 2 * 128 + 1, "only the first and last chunks in RAM (%lld)", v[4]);
    check_all("k");
    for (int i = 0; i < 200; i++) {
        check_range("k", i % 2);
        check_xread("k");
        step_group("k");
    }
    for (int i = 0; i < 100; i++) { /* XDEL inside pages: dirty chunks */
        step_xdel("k");
        if (i % 10 == 0) check_stream("k", i);
    }
    st_stream_page_stats(object("k"), v);
    long long ram_before = v[4];
    for (int t = 0; t < 100; t++)
        pager_turn("k");
    drain("k");
    st_stream_page_stats(object("k"), v);
    cr_assert_lt(v[4], ram_before, "the pager wrote the dirty chunks again");
    check_stream("k", -1);
    check_all("k");
    while (mn > 10) {
        step_xtrim("k");
        if (mn % 50 == 0) check_stream("k", mn);
    }
    check_stream("k", -1);
    check_all("k");
    cr_assert_str_eq(wr(T0, CMD_DEL, "k", NULL), ":1\r\n");
    while (mn)
        model_drop(mn - 1);
    cr_assert_eq(ctx->entry_bytes, 0, "RAM accounting back to zero");
    sh_check_replay("a trimmed paged stream");
}

Test(pstream, a_checkpoint_of_a_paged_stream_reads_back_equal)
{
    start_group("c");
    for (int step = 0; step < 3000; step++) {
        random_step("c");
        if (step % 5 == 0) pager_turn("c");
    }
    for (int i = 0; i < 300; i++)
        step_xadd("c");
    for (int t = 0; t < 50; t++)
        pager_turn("c"); /* some records left in flight, unapplied: not state */
    st_obj_t *back = cp_ckpt_round_trip("c", stats, check);
    idx_entry_t **slot = idx_find(&ctx->dbs[0]->ix, "c", 1);
    /* A record in flight when the checkpoint was taken applies to the
     * stream read back as to the live one (the stamps came along): the
     * read-back copy takes the live one's place. */
    st_obj_t *old = st_ent_obj(*slot);
    memcpy((*slot)->data + (*slot)->klen + (*slot)->ilen, &back, sizeof(back));
    old->ops->free(old);
    drain("c");
    check_stream("c", -1);
    check_all("c");
    sh_check_replay("a paged stream after a checkpoint's copy took its place");
}

Test(pstream, a_version_2_checkpoint_still_loads_and_pages)
{
    /* Version 2: u8 2, the meta, u64 count, entries (ID, u32 pairs, u32
     * size, data), then the groups (u32 0: none). */
    buf_t b;
    buf_init(&b);
    unsigned char hdr[49] = {2};
    cmd_put_i64(hdr + 1, 400);  /* last ID 400-0 */
    cmd_put_i64(hdr + 33, 400); /* entries added */
    cmd_put_i64(hdr + 41, 400); /* count */
    buf_append(&b, hdr, sizeof(hdr));
    for (int i = 1; i <= 400; i++) {
        char v[32];
        int n = snprintf(v, sizeof(v), "old-%d", i);
        unsigned char eh[24 + 4 + 1 + 4];
        cmd_put_i64(eh, i);
        cmd_put_i64(eh + 8, 0);
        cmd_put_u32(eh + 16, 1);
        cmd_put_u32(eh + 20, (uint32_t)(4 + 1 + 4 + n));
        cmd_put_u32(eh + 24, 1);
        eh[28] = 'f';
        cmd_put_u32(eh + 29, (uint32_t)n);
        buf_append(&b, eh, sizeof(eh));
        buf_append(&b, v, (size_t)n);
    }
    buf_append(&b, "\0\0\0\0", 4);
    st_obj_t *o;
    cr_assert_eq(st_stream_ops.ckpt_read((const unsigned char *)b.data, b.len, &o), (long)b.len);
    st_stream_t *s = (st_stream_t *)o;
    o->ops->bind(o, ctx);
    cr_assert_eq(st_stream_len(s), 400);
    cr_assert(!st_stream_check(s));
    long long v[7];
    st_stream_page_stats(s, v);
    cr_assert_gt(v[1], 2, "in chunks (%lld)", v[1]);
    /* Its chunks are stamped, so the pager can build pages of them. */
    st_cpbuilt_t built;
    st_cpbuilt_init(&built);
    cr_assert_eq(st_stream_page_build(ctx, s, &policy, &built), ST_PAGE_BUILT);
    cr_assert_gt(built.nimg, 0);
    st_cpbuilt_free(&built);
    st_stream_page_unbusy(s);
    o->ops->free(o);
    buf_free(&b);
}

/* All of a snapshot's parts, at most max bytes each, into out. */
static void read_parts(struct st_vsnap *v, size_t max, buf_t *out)
{
    int rc, parts = 0;
    do {
        size_t before = out->len;
        rc = st_vsnap_gen_next(ctx, v, out, max);
        cr_assert_geq(rc, 0);
        cr_assert_leq(out->len - before, max, "a part within its room");
        parts++;
    } while (rc == 0);
    cr_assert_gt(parts, 2, "in parts (%d)", parts);
}

Test(pstream, a_range_in_parts_is_the_range_as_of_its_request)
{
    for (int i = 0; i < 2000; i++)
        step_xadd("p");
    for (int t = 0; t < 300; t++)
        pager_turn("p");
    drain("p");
    check_stream("p", 0);
    st_stream_t *s = object("p");
    cr_assert(st_stream_has_pages(s));
    /* Both ways, from the middle, over pages, pinned entries and RAM. */
    int from = mn / 3, n = mn - from - 5;
    struct st_vsnap *fwd = st_stream_range_snapshot(s, (uint64_t)from, (uint64_t)n, 0);
    struct st_vsnap *back = st_stream_range_snapshot(s, (uint64_t)(mn - 1), (uint64_t)mn, 1);
    buf_t want_fwd, want_back;
    buf_init(&want_fwd);
    buf_init(&want_back);
    model_range(&want_fwd, from, n, 0);
    model_range(&want_back, mn - 1, mn, 1);
    /* Writes between the request and its parts: deletes, trims, appends,
     * pages; the reply stays the range as it was. */
    for (int i = 0; i < 50; i++)
        step_xdel("p");
    wr(T0, CMD_XTRIM, "p", "MAXLEN", "100", NULL);
    for (int i = 0; i < 500; i++)
        step_xadd("p");
    for (int t = 0; t < 100; t++)
        pager_turn("p");
    drain("p");
    buf_t got;
    buf_init(&got);
    read_parts(fwd, 3000, &got);
    const char *body = strchr(want_fwd.data, '\n') + 1; /* the array's header is the caller's */
    cr_assert_eq(got.len, want_fwd.len - (size_t)(body - want_fwd.data));
    cr_assert(memcmp(got.data, body, got.len) == 0, "XRANGE in parts");
    buf_reset(&got);
    read_parts(back, 777, &got);
    body = strchr(want_back.data, '\n') + 1;
    cr_assert_eq(got.len, want_back.len - (size_t)(body - want_back.data));
    cr_assert(memcmp(got.data, body, got.len) == 0, "XREVRANGE in parts");
    st_vsnap_free(fwd);
    st_vsnap_free(back);
    buf_free(&got);
    buf_free(&want_fwd);
    buf_free(&want_back);
    /* Entries over a page's limit stay in RAM (pinned). */
    long long v[7];
    st_stream_page_stats(object("p"), v);
    cr_assert_gt(v[5], 0, "pinned entries");
}
