/*
 * test_hash_paged.c - large hashes and sets in pages (store/core/hash_paged.c,
 * store/types/t_page.c; D60), driven record by record through the store
 * harness against a model: random HSET / HDEL / HINCRBY (and SADD / SREM /
 * SPOP) with the pager played by the test (st_hash_page_build's records
 * written as the store would write them, some applied at once, some only
 * after more writes: records in flight), with tiny pages and records so
 * that ranges split, records cover a range in parts and pinned members
 * (names or values too long for a page) stay in RAM. After each step the
 * replies must be the model's; at the end replay must reach the same
 * digest and a checkpoint of the object must read back equal.
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
#include "store/store-internal.h"
#include "store_harness.h"

#define T0 1000000

#define wr(t, id, ...)   sh_wr((t), (id), __VA_ARGS__)
#define rd(now, id, ...) sh_rd((now), 0, (id), __VA_ARGS__)

static void setup(void)
{
    sh_setup("paged", 0, 42);
    sh_canonical_only = 1;
}

TestSuite(paged, .init = setup, .fini = sh_teardown, .timeout = 600);

/* ---- the model ---------------------------------------------------------- */

#define NF 400
static char *model[NF]; /* field i's value, NULL when absent */
static char names[NF][1200];

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
    for (int i = 0; i < NF; i++) {
        if (i % 97 == 5) { /* a name too long for a page: pinned */
            memset(names[i], 'n', 1100);
            snprintf(names[i] + 1100, 100, "%d", i);
        } else {
            snprintf(names[i], sizeof(names[i]), "f%d", i);
        }
        free(model[i]);
        model[i] = NULL;
    }
}

/* A value: short, in the log (over 24 bytes), or pinned (over 1024). */
static char *make_value(void)
{
    int kind = (int)(rnd() % 20);
    size_t len = kind == 0 ? 1500 : kind < 8 ? 40 + rnd() % 200 : 1 + rnd() % 20;
    char *v = malloc(len + 1);
    for (size_t i = 0; i < len; i++)
        v[i] = (char)('a' + rnd() % 26);
    v[len] = 0;
    return v;
}

static long model_len(void)
{
    long n = 0;
    for (int i = 0; i < NF; i++)
        n += model[i] != NULL;
    return n;
}

/* ---- RESP replies ------------------------------------------------------- */

/* The bulk strings of an array reply (or the elements of a "+"/":" reply
 * list); returns the count, elements in out[] (malloc'd). */
static int parse_bulks(const char *p, char **out, int max)
{
    if (*p != '*' && *p != '~' && *p != '%') return -1;
    long n = strtol(p + 1, (char **)&p, 10);
    if (*p == '\r') p += 2;
    if (n > max) return -1;
    for (long i = 0; i < n; i++) {
        cr_assert_eq(*p, '$', "a bulk expected: %.40s", p);
        long len = strtol(p + 1, (char **)&p, 10);
        p += 2;
        out[i] = malloc((size_t)len + 1);
        memcpy(out[i], p, (size_t)len);
        out[i][len] = 0;
        p += len + 2;
    }
    return (int)n;
}

static int field_index(const char *name)
{
    for (int i = 0; i < NF; i++)
        if (strcmp(names[i], name) == 0) return i;
    return -1;
}

/* HGETALL equals the model (any order, each field once). */
static void check_all(const char *key, int with_values)
{
    static char *el[2 * NF + 2];
    int n =
        parse_bulks(rd(T0, with_values ? CMD_HGETALL : CMD_SMEMBERS, key, NULL), el, 2 * NF + 2);
    int step = with_values ? 2 : 1;
    cr_assert_eq(n, step * model_len(), "%s lists %d, the model has %ld", key, n / step,
                 model_len());
    int seen[NF] = {0};
    for (int i = 0; i < n; i += step) {
        int f = field_index(el[i]);
        cr_assert(f >= 0 && model[f], "listed %s, which the model lacks", el[i]);
        cr_assert(!seen[f], "listed %s twice", el[i]);
        seen[f] = 1;
        if (with_values) cr_assert_str_eq(el[i + 1], model[f], "field %s", el[i]);
    }
    for (int i = 0; i < n; i++)
        free(el[i]);
}

/* A whole HSCAN / SSCAN iteration returns every member. */
static void check_scan(const char *key, int hash)
{
    int seen[NF] = {0};
    char cursor[32] = "0";
    int rounds = 0;
    do {
        const char *r = rd(T0, hash ? CMD_HSCAN : CMD_SSCAN, key, cursor, NULL);
        cr_assert_eq(r[0], '*');
        const char *p = strchr(r, '\n') + 1; /* $len of the cursor */
        long clen = strtol(p + 1, (char **)&p, 10);
        p += 2;
        memcpy(cursor, p, (size_t)clen);
        cursor[clen] = 0;
        p += clen + 2;
        static char *el[2 * NF + 2];
        int n = parse_bulks(p, el, 2 * NF + 2);
        for (int i = 0; i < n; i += hash ? 2 : 1) {
            int f = field_index(el[i]);
            cr_assert(f >= 0 && model[f], "scanned %s, which the model lacks", el[i]);
            seen[f] = 1;
        }
        for (int i = 0; i < n; i++)
            free(el[i]);
        cr_assert(++rounds < 100000, "the scan does not end");
    } while (strcmp(cursor, "0") != 0);
    for (int i = 0; i < NF; i++)
        cr_assert(!model[i] || seen[i], "the scan missed %s", names[i]);
}

/* ---- the pager, played by the test -------------------------------------- */

/* A record built and not yet written: its arguments. */
typedef struct pending {
    int pagein;
    unsigned char *blob[8 + ST_PAGE_MAX_IMAGES];
    uint32_t lens[8 + ST_PAGE_MAX_IMAGES];
    uint16_t argc;
} pending_t;

#define MAXPEND 8
static pending_t pend[MAXPEND];
static int npend;

static st_hash_t *object(const char *key)
{
    idx_entry_t **slot = idx_find(&ctx->dbs[0]->ix, key, (uint32_t)strlen(key));
    if (!slot || st_ent_kind(*slot) != VK_OBJ) return NULL;
    unsigned t = st_ent_type(*slot);
    return t == ST_HASH || t == ST_SET ? st_ent_hash(*slot) : NULL;
}

static unsigned char *copy_of(const void *p, uint32_t n)
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
    pending_t *pd = &pend[i];
    if (getenv("PG_VERBOSE")) fprintf(stderr, "apply %s\n", pd->pagein ? "PAGEIN" : "PAGE");
    sh_put(T0, pd->pagein ? CMD_PAGEIN : CMD_PAGE, pd->argc, (const unsigned char *const *)pd->blob,
           pd->lens);
    for (int a = 0; a < pd->argc; a++)
        free(pd->blob[a]);
    pend[i] = pend[--npend];
}

static st_pgpolicy_t policy = {
    .entries = 1, .overlay_max = 16, .page_bytes = 300, .record_bytes = 2000};

/* One turn of the pager on key: the records it wants, built now; each is
 * applied at once or held (in flight) at random. */
static void pager_turn(const char *key)
{
    st_hash_t *h = object(key);
    if (!h) return;
    int want = st_hash_page_wanted(h, &policy);
    if (!want && policy.below) want = ST_PAGE_WANT_BUILD;
    if (want == ST_PAGE_WANT_IN) {
        for (int i = 0; i < npend; i++)
            if (pend[i].pagein) return; /* one in flight */
        pending_t *pd = &pend[npend++];
        pd->pagein = 1;
        pd->blob[0] = copy_of(key, (uint32_t)strlen(key));
        pd->lens[0] = (uint32_t)strlen(key);
        pd->blob[1] = u64_blob(rnd());
        pd->lens[1] = 8;
        pd->blob[2] = malloc(4);
        cmd_put_u32(pd->blob[2], 1 + (uint32_t)(rnd() % 8));
        pd->lens[2] = 4;
        pd->argc = 3;
    } else if (want == ST_PAGE_WANT_BUILD) {
        static st_pgbuilt_t b;
        static int init;
        if (!init)
            for (unsigned j = 0; j < ST_PAGE_MAX_IMAGES; j++)
                buf_init(&b.img[j]);
        init = 1;
        while (npend < MAXPEND && st_hash_page_build(ctx, h, &policy, &b) == ST_PAGE_BUILT) {
            pending_t *pd = &pend[npend++];
            pd->pagein = 0;
            pd->blob[0] = copy_of(key, (uint32_t)strlen(key));
            pd->lens[0] = (uint32_t)strlen(key);
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
                pd->blob[7 + j] = copy_of(b.img[j].data, (uint32_t)b.img[j].len);
                pd->lens[7 + j] = (uint32_t)b.img[j].len;
            }
            pd->argc = (uint16_t)(7 + b.nimg);
            if (rnd() % 3) break;
        }
    }
    /* Apply some now, keep others in flight across more writes. */
    for (int i = npend - 1; i >= 0; i--)
        if (rnd() % 2) apply_pending(i);
}

static void drain(const char *key)
{
    while (npend)
        apply_pending(npend - 1);
    st_hash_t *h = object(key);
    if (h) st_hash_page_unbusy(h);
}

/* ---- the tests ---------------------------------------------------------- */

static const char *lim(void)
{
    return "#i64:8589934594"; /* hash-max-listpack-entries 2, -value 2: a table at once */
}

static int verbose;

static void hash_step(const char *key)
{
    int f = (int)(rnd() % NF);
    int op = (int)(rnd() % 10);
    if (verbose) fprintf(stderr, "op %d %s (model %s)\n", op, names[f], model[f] ? "has" : "-");
    char exp[64];
    if (op < 6) {
        char *v = make_value();
        snprintf(exp, sizeof(exp), ":%d\r\n", model[f] ? 0 : 1);
        const char *got = wr(T0, CMD_HSET, key, lim(), "#u32:0", names[f], v, NULL);
        cr_assert_str_eq(got, exp, "HSET %s: %s (model %s)", names[f], got, exp);
        free(model[f]);
        model[f] = v;
    } else if (op < 9) {
        snprintf(exp, sizeof(exp), ":%d\r\n", model[f] ? 1 : 0);
        cr_assert_str_eq(wr(T0, CMD_HDEL, key, names[f], NULL), exp, "HDEL %s", names[f]);
        free(model[f]);
        model[f] = NULL;
    } else {
        const char *r = rd(T0, CMD_HGET, key, names[f], NULL);
        if (!model[f]) {
            cr_assert_str_eq(r, "$-1\r\n", "HGET %s", names[f]);
        } else {
            char *want = malloc(strlen(model[f]) + 32);
            sprintf(want, "$%zu\r\n%s\r\n", strlen(model[f]), model[f]);
            cr_assert_str_eq(r, want, "HGET %s", names[f]);
            free(want);
        }
    }
}

Test(paged, random_hash_writes_match_a_model_with_records_in_flight)
{
    make_names();
    verbose = getenv("PG_VERBOSE") != NULL;
    for (int step = 0; step < 6000; step++) {
        hash_step("h");
        if (step % 7 == 0) pager_turn("h");
        st_hash_t *ho = object("h");
        const char *bad = ho ? st_hash_page_check(ho) : NULL;
        cr_assert(!bad, "step %d: %s", step, bad);
        if (step % 500 == 499) {
            policy.below = step % 1000 == 999 ? UINT64_MAX : 0; /* compaction's rewrite */
            char exp[32];
            snprintf(exp, sizeof(exp), ":%ld\r\n", model_len());
            cr_assert_str_eq(rd(T0, CMD_HLEN, "h", NULL), model_len() ? exp : ":0\r\n");
            if (model_len()) {
                check_all("h", 1);
                check_scan("h", 1);
            }
        }
    }
    policy.below = 0;
    drain("h");
    st_hash_t *h = object("h");
    cr_assert(h && st_hash_is_paged(h), "the hash was paged");
    st_pgstats_t s;
    st_hash_page_stats(h, &s);
    cr_assert_gt(s.pages, 4, "several pages (%u)", s.pages);
    check_all("h", 1);
    check_scan("h", 1);
    sh_check_replay("a paged hash");
}

Test(paged, a_checkpoint_of_a_paged_hash_reads_back_equal)
{
    make_names();
    for (int step = 0; step < 2000; step++) {
        hash_step("h");
        if (step % 5 == 0) pager_turn("h");
    }
    pager_turn("h"); /* some records left in flight, unapplied: not state */
    idx_entry_t **slot = idx_find(&ctx->dbs[0]->ix, "h", 1);
    cr_assert(slot);
    st_obj_t *o = st_ent_obj(*slot);
    buf_t b;
    buf_init(&b);
    o->ops->ckpt_write(o, &b);
    st_obj_t *back;
    cr_assert_eq(o->ops->ckpt_read((const unsigned char *)b.data, b.len, &back), (long)b.len);
    back->ops->bind(back, ctx);
    uint64_t d1, d2;
    cr_assert_eq(o->ops->digest(ctx, o, &d1), 0);
    cr_assert_eq(back->ops->digest(ctx, back, &d2), 0);
    cr_assert_eq(d1, d2, "the same members and values");
    st_pgstats_t s1, s2;
    st_hash_page_stats((st_hash_t *)o, &s1);
    st_hash_page_stats((st_hash_t *)back, &s2);
    cr_assert_eq(s1.ranges, s2.ranges);
    cr_assert_eq(s1.overlay, s2.overlay);
    cr_assert_eq(s1.members, s2.members);
    /* Every cut of the stream is refused, never half read. */
    for (size_t cut = 0; cut < b.len; cut += 1 + cut / 7) {
        st_obj_t *x;
        long used = o->ops->ckpt_read((const unsigned char *)b.data, cut, &x);
        if (used >= 0) x->ops->free(x);
        cr_assert(used < 0, "a stream cut at %zu of %zu was read", cut, b.len);
    }
    back->ops->free(back);
    buf_free(&b);
    drain("h");
}

/* ---- sets ------------------------------------------------------------- */

static void set_step(const char *key, uint64_t *spop_lsn)
{
    int f = (int)(rnd() % NF);
    int op = (int)(rnd() % 12);
    char exp[64];
    if (op < 6) {
        snprintf(exp, sizeof(exp), ":%d\r\n", model[f] ? 0 : 1);
        cr_assert_str_eq(wr(T0, CMD_SADD, key, "#i64:2", names[f], NULL), exp, "SADD %s", names[f]);
        if (!model[f]) model[f] = strdup("");
    } else if (op < 9) {
        snprintf(exp, sizeof(exp), ":%d\r\n", model[f] ? 1 : 0);
        cr_assert_str_eq(wr(T0, CMD_SREM, key, names[f], NULL), exp, "SREM %s", names[f]);
        free(model[f]);
        model[f] = NULL;
    } else if (op < 11) {
        snprintf(exp, sizeof(exp), ":%d\r\n", model[f] ? 1 : 0);
        cr_assert_str_eq(rd(T0, CMD_SISMEMBER, key, names[f], NULL), exp, "SISMEMBER %s", names[f]);
    } else if (model_len() > 1) {
        /* SPOP 3: three distinct members the model has, then gone. */
        static char *el[8];
        (*spop_lsn)++;
        int n = parse_bulks(wr(T0, CMD_SPOP_AT, key, "#i64:3", "#u32:0", NULL), el, 8);
        long want = model_len() < 3 ? model_len() : 3;
        cr_assert_eq(n, want);
        for (int i = 0; i < n; i++) {
            int k = field_index(el[i]);
            cr_assert(k >= 0 && model[k], "SPOP gave %s, which the model lacks", el[i]);
            free(model[k]);
            model[k] = NULL;
            free(el[i]);
        }
    }
}

Test(paged, random_set_writes_and_spop_match_a_model)
{
    make_names();
    uint64_t pops = 0;
    for (int step = 0; step < 6000; step++) {
        set_step("s", &pops);
        if (step % 5 == 0) pager_turn("s");
        st_hash_t *so = object("s");
        const char *bad = so ? st_hash_page_check(so) : NULL;
        cr_assert(!bad, "step %d: %s", step, bad);
        if (step % 400 == 399 && model_len()) {
            check_all("s", 0);
            check_scan("s", 0);
        }
    }
    drain("s");
    cr_assert_gt(pops, 100);
    st_hash_t *s = object("s");
    if (s) cr_assert(st_hash_is_paged(s));
    if (model_len()) check_all("s", 0);
    sh_check_replay("a paged set");
}
