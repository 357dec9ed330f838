/*
 * test_sort.c - SORT's core (common/sort.c, D47): the parser's results and
 * its errors in Redis' order, the STORE key's position as sortGetKeys
 * finds it, BY/GET patterns ('#', '*', "->field", their C-string reading),
 * scores as strtod reads them, the order (numeric with ties by bytes,
 * ALPHA by bytes or up to a NUL, BY values with the absent first, DESC,
 * equal items kept in input order) and LIMIT's window.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "sort.h"

#define MAXW 16

/* Words from a space-separated line (no binary: tests below build those). */
static int words(const char *line, rec_arg_t *w, char *store)
{
    strcpy(store, line);
    int n = 0;
    for (char *t = strtok(store, " "); t && n < MAXW; t = strtok(NULL, " "))
        w[n++] = (rec_arg_t){(const unsigned char *)t, (uint32_t)strlen(t)};
    return n;
}

static const char *parse(const char *line, unsigned flags, sort_spec_t *s)
{
    static char buf[256];
    static rec_arg_t w[MAXW];
    int n = words(line, w, buf);
    return sort_parse(w, n, flags, s);
}

Test(sort, parse_options)
{
    sort_spec_t s;
    cr_assert_null(parse("k", 0, &s));
    cr_assert(!s.desc && !s.alpha && !s.by && !s.store && s.ngets == 0);
    cr_assert_eq(s.limit_start, 0);
    cr_assert_eq(s.limit_count, -1);
    cr_assert_null(parse("k BY w_* LIMIT 2 -3 GET # GET o_* DESC ALPHA STORE d", 0, &s));
    cr_assert(s.desc && s.alpha && !s.dontsort);
    cr_assert_eq(s.by, 2);
    cr_assert_eq(s.limit_start, 2);
    cr_assert_eq(s.limit_count, -3);
    cr_assert_eq(s.ngets, 2);
    cr_assert_eq(s.gets[0], 7);
    cr_assert_eq(s.gets[1], 9);
    cr_assert_eq(s.store, 13);
    sort_spec_free(&s);
    cr_assert_null(parse("k by nosort desc asc", 0, &s));
    cr_assert(s.dontsort && !s.desc);
}

Test(sort, parse_errors_first_wins)
{
    sort_spec_t s;
    cr_assert_str_eq(parse("k foo", 0, &s), "ERR syntax error");
    cr_assert_str_eq(parse("k limit 1", 0, &s), "ERR syntax error");
    cr_assert_str_eq(parse("k limit x 1 foo", 0, &s),
                     "ERR value is not an integer or out of range");
    cr_assert_str_eq(parse("k foo limit x 1", 0, &s), "ERR syntax error");
    cr_assert_str_eq(parse("k store d", SORT_READONLY, &s), "ERR syntax error");
    cr_assert_str_eq(parse("k get", 0, &s), "ERR syntax error");
    /* Cluster mode: every GET, and BY with a pattern; BY nosort is fine. */
    cr_assert_null(parse("k by nosort", SORT_CLUSTER, &s));
    cr_assert_str_eq(parse("k by w_*", SORT_CLUSTER, &s),
                     "ERR BY option of SORT denied in Cluster mode.");
    cr_assert_str_eq(parse("k get #", SORT_CLUSTER, &s),
                     "ERR GET option of SORT denied in Cluster mode.");
    cr_assert_str_eq(parse("k limit a 1 get #", SORT_CLUSTER, &s),
                     "ERR value is not an integer or out of range");
    cr_assert_str_eq(parse("k get # limit a 1", SORT_KEYS_ACL, &s),
                     "ERR GET option of SORT denied due to insufficient ACL permissions.");
}

static int store_at(const char *line)
{
    char buf[256];
    rec_arg_t w[MAXW];
    const char *argv[MAXW];
    uint32_t lens[MAXW];
    int n = words(line, w, buf);
    for (int i = 0; i < n; i++) {
        argv[i] = (const char *)w[i].ptr;
        lens[i] = w[i].len;
    }
    return sort_store_key_at(n, argv, lens);
}

Test(sort, store_key_as_sortgetkeys)
{
    cr_assert_eq(store_at("sort k"), 0);
    cr_assert_eq(store_at("sort k store d"), 3);
    cr_assert_eq(store_at("sort k store d store e"), 5);
    cr_assert_eq(store_at("sort k store"), 0);
    cr_assert_eq(store_at("sort k get store d"), 0);
    cr_assert_eq(store_at("sort k limit 0 store d"), 0);
    cr_assert_eq(store_at("sort k by x STORE d"), 5);
}

static sort_pattern_t pat(const char *p, size_t n)
{
    rec_arg_t a = {(const unsigned char *)p, (uint32_t)n};
    sort_pattern_t out;
    sort_pattern_compile(&a, &out);
    return out;
}

static void key_is(const char *p, size_t n, const char *sub, const char *want)
{
    sort_pattern_t x = pat(p, n);
    buf_t b;
    buf_init(&b);
    sort_pattern_key(&x, (const unsigned char *)sub, strlen(sub), &b);
    cr_assert_eq(b.len, strlen(want), "key of %s: %.*s", p, (int)b.len, b.data);
    cr_assert(memcmp(b.data, want, b.len) == 0);
    buf_free(&b);
}

Test(sort, patterns)
{
    cr_assert_eq(pat("#", 1).kind, SORT_PAT_SELF);
    cr_assert_eq(pat("#\0x", 3).kind, SORT_PAT_SELF);
    cr_assert_eq(pat("##", 2).kind, SORT_PAT_NONE);
    cr_assert_eq(pat("nosort", 6).kind, SORT_PAT_NONE);
    cr_assert_eq(pat("w\0*", 3).kind, SORT_PAT_NONE); /* '*' after a NUL */
    cr_assert_eq(pat("w_*", 3).kind, SORT_PAT_KEY);
    key_is("w_*", 3, "ab", "w_ab");
    key_is("a*b*c", 5, "X", "aXb*c");
    sort_pattern_t f = pat("h_*->fld", 8);
    cr_assert_eq(f.kind, SORT_PAT_FIELD);
    cr_assert_eq(f.field_len, 3);
    cr_assert(memcmp(f.field, "fld", 3) == 0);
    key_is("h_*->fld", 8, "1", "h_1");
    key_is("h_*x->f->g", 10, "1", "h_1x");
    /* "->" with nothing after it, or "->" before the star: a plain key. */
    cr_assert_eq(pat("h_*->", 5).kind, SORT_PAT_KEY);
    key_is("h_*->", 5, "1", "h_1->");
    cr_assert_eq(pat("h->_*", 5).kind, SORT_PAT_KEY);
    sort_pattern_t z = pat("h_*->f\0g", 8); /* the field is binary after "->" */
    cr_assert_eq(z.kind, SORT_PAT_FIELD);
    cr_assert_eq(z.field_len, 3);
}

static int score(const char *s, size_t n, double *d)
{
    return sort_score((const unsigned char *)s, n, d);
}

Test(sort, scores_as_strtod)
{
    double d;
    cr_assert_eq(score("12", 2, &d), 0);
    cr_assert_eq(d, 12);
    cr_assert_eq(score("", 0, &d), 0);
    cr_assert_eq(d, 0);
    cr_assert_eq(score(" 5", 2, &d), 0);
    cr_assert_eq(score("0x10", 4, &d), 0);
    cr_assert_eq(d, 16);
    cr_assert_eq(score("-inf", 4, &d), 0);
    cr_assert_eq(score("1\0x", 3, &d), 0); /* up to the NUL */
    cr_assert_eq(score("5 ", 2, &d), -1);
    cr_assert_eq(score("abc", 3, &d), -1);
    cr_assert_eq(score("nan", 3, &d), -1);
    cr_assert_eq(score("1e400", 5, &d), -1);
    cr_assert_eq(score("1e-400", 6, &d), -1);
}

static sort_item_t item(const char *p, double sc, const char *by, size_t origin)
{
    sort_item_t x = {(const unsigned char *)p, strlen(p), sc, NULL, 0, origin};
    if (by) {
        x.by_p = (const unsigned char *)by;
        x.by_n = strlen(by);
    }
    return x;
}

static void order_is(const sort_item_t *v, size_t n, const char *want)
{
    char got[128] = "";
    for (size_t i = 0; i < n; i++) {
        strcat(got, (const char *)v[i].p);
        if (i + 1 < n) strcat(got, " ");
    }
    cr_assert_str_eq(got, want);
}

Test(sort, orders)
{
    sort_spec_t s = {.limit_count = -1};
    sort_item_t v[5] = {item("b", 2, NULL, 0), item("a", 2, NULL, 1), item("c", 1, NULL, 2),
                        item("-1", -1, NULL, 3), item("d", 3, NULL, 4)};
    sort_items(v, 5, &s);
    order_is(v, 5, "-1 c a b d"); /* equal scores by bytes */
    s.desc = 1;
    sort_items(v, 5, &s);
    order_is(v, 5, "d b a c -1");
    /* ALPHA by BY values: absent first, equal ones in input order. */
    sort_spec_t a = {.alpha = 1, .by = 2, .limit_count = -1};
    sort_item_t w[5] = {item("p", 0, "y", 0), item("q", 0, NULL, 1), item("r", 0, "x", 2),
                        item("s", 0, "y", 3), item("t", 0, NULL, 4)};
    sort_items(w, 5, &a);
    order_is(w, 5, "q t r p s");
    a.desc = 1;
    sort_items(w, 5, &a);
    order_is(w, 5, "p s r q t");
}

Test(sort, alpha_bytes_or_cstring)
{
    /* Without STORE the order stops at a NUL (strcoll); with STORE it
     * compares whole byte strings. */
    sort_item_t v[2] = {{(const unsigned char *)"a\0z", 3, 0, NULL, 0, 0},
                        {(const unsigned char *)"a\0b", 3, 0, NULL, 0, 1}};
    sort_spec_t s = {.alpha = 1, .limit_count = -1};
    sort_items(v, 2, &s);
    cr_assert_eq(v[0].origin, 0, "equal up to the NUL: input order");
    s.store = 3;
    sort_items(v, 2, &s);
    cr_assert_eq(v[0].origin, 1, "with STORE: a\\0b first");
}

static void window_is(long long start, long long count, long long n, long long ws, long long we)
{
    sort_spec_t s = {.limit_start = start, .limit_count = count};
    long long a, b;
    sort_window(&s, n, &a, &b);
    cr_assert(a == ws && b == we, "LIMIT %lld %lld of %lld: [%lld, %lld]", start, count, n, a, b);
}

Test(sort, limit_window)
{
    window_is(0, -1, 5, 0, 4);
    window_is(1, 2, 5, 1, 2);
    window_is(-3, 2, 5, 0, 1);
    window_is(2, -1, 5, 2, 4);
    window_is(5, 1, 5, 4, 3);  /* past the end: empty */
    window_is(0, 0, 5, 0, -1); /* count 0: empty */
    window_is(2, INT64_MAX, 5, 2, 4);
    window_is(INT64_MAX, 1, 5, 4, 3);
    window_is(0, -1, 0, -1, -2);
}
