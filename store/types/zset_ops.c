/*
 * zset_ops.c - what the sorted-set handlers share (zset_ops.h). Store
 * process only; calls core/zset.c and core/hash.c (sets as inputs).
 *
 * Parsers follow Redis 7.0.15 (checked against redis-server): scores by
 * getDoubleFromObject's rules (strtod over the whole text, no leading
 * space, NaN and overflow refused), score ranges by zslParseRange (a "("
 * prefix excludes; NaN refused), lex ranges by zslParseLexRange ("-", "+",
 * or "[" / "(" then the bytes). A node's reply score is %.17g (inf, -inf),
 * as 7.0's addReplyDouble. Everything here is a function of the record and
 * the state, so replay gives the same.
 */
#include "zset_ops.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "command.h"
#include "resp.h"
#include "store/core/alloc.h"
#include "store/core/hash.h"
#include "store/core/object.h"
#include "store/core/watch.h"
#include "strutil.h"
#include "pubsub.h"

zs_limits_t zs_get_limits(const rec_arg_t *x)
{
    uint64_t v = (uint64_t)cmd_get_i64(x->ptr);
    return (zs_limits_t){(uint32_t)v, (uint32_t)(v >> 32)};
}

/* strtod over a NUL-terminated copy (the record's bytes are not). */
static int to_double(const void *p, uint32_t n, double *out, int strict)
{
    char buf[128], *s = n < sizeof(buf) ? buf : st_xmalloc((size_t)n + 1), *end;
    memcpy(s, p, n);
    s[n] = 0;
    errno = 0;
    double v = strtod(s, &end);
    int bad = (size_t)(end - s) != n || isnan(v) || memchr(s, 0, n);
    if (strict) /* zslParseRange takes "" and " 1"; a score does not */
        bad = bad || n == 0 || isspace((unsigned char)s[0]) ||
              (errno == ERANGE && (v == HUGE_VAL || v == -HUGE_VAL || fpclassify(v) == FP_ZERO));
    if (s != buf) free(s);
    if (bad) return -1;
    *out = v;
    return 0;
}

int zs_parse_score(const rec_arg_t *x, double *out)
{
    return to_double(x->ptr, x->len, out, 1);
}

int zs_parse_ll(const rec_arg_t *x, long long *out)
{
    return str_to_ll((const char *)x->ptr, x->len, out);
}

int zs_put(store_ctx_t *ctx, st_zset_t *z, const void *m, uint32_t n, double s)
{
    /* a listpack keeps "-0" as the integer 0: Redis answers 0 there */
    return st_zset_set(ctx, z, m, n, s == 0 && !st_zset_is_skiplist(z) ? 0.0 : s);
}

int zs_add(store_ctx_t *ctx, st_zset_t *z, zs_limits_t l, const void *m, uint32_t n, double s)
{
    double cur;
    if (!st_zset_is_skiplist(z) && !st_zset_score(z, m, n, &cur) &&
        ((uint64_t)st_zset_len(z) + 1 > l.entries || n > l.value))
        st_zset_set_skiplist(z, 1);
    return zs_put(ctx, z, m, n, s);
}

st_zset_t *zs_new(const st_db_t *db)
{
    return st_zset_new(db->ix.seed ^ 0x2D358DCCAA6C78A5ull);
}

st_zset_t *zs_new_result(const st_db_t *db, zs_limits_t l, uint64_t count, uint64_t maxlen)
{
    st_zset_t *z = zs_new(db);
    st_zset_set_skiplist(z, count > l.entries || maxlen > l.value);
    return z;
}

void zs_choose_encoding(st_zset_t *z, zs_limits_t l, uint64_t maxlen)
{
    st_zset_set_skiplist(z, st_zset_len(z) > l.entries || maxlen > l.value);
}

/* ---- ranges ---- */

static int parse_score_bound(const rec_arg_t *x, double *v, int *ex)
{
    const unsigned char *p = x->ptr;
    *ex = x->len > 0 && p[0] == '(';
    if (*ex) return to_double(p + 1, x->len - 1, v, 0); /* "(" alone is (0, as strtod */
    return to_double(p, x->len, v, 0);
}

static int parse_lex_bound(const rec_arg_t *x, int *ex, int *inf)
{
    const unsigned char *p = x->ptr;
    *inf = 0;
    *ex = 0;
    if (x->len == 1 && (p[0] == '-' || p[0] == '+')) {
        *inf = p[0] == '-' ? -1 : 1;
        return 0;
    }
    if (x->len >= 1 && (p[0] == '(' || p[0] == '[')) {
        *ex = p[0] == '(';
        return 0;
    }
    return -1;
}

int zs_parse_minmax(zs_by_t by, const rec_arg_t *min, const rec_arg_t *max, zs_spec_t *s,
                    const char **err)
{
    s->by = by;
    if (by == ZS_BY_RANK) {
        if (zs_parse_ll(min, &s->start) || zs_parse_ll(max, &s->stop)) {
            *err = ZS_ERR_NOT_INT;
            return -1;
        }
    } else if (by == ZS_BY_SCORE) {
        if (parse_score_bound(min, &s->min, &s->minex) ||
            parse_score_bound(max, &s->max, &s->maxex)) {
            *err = ZS_ERR_MINMAX;
            return -1;
        }
    } else {
        if (parse_lex_bound(min, &s->minex, &s->lmin_inf) ||
            parse_lex_bound(max, &s->maxex, &s->lmax_inf)) {
            *err = ZS_ERR_LEX;
            return -1;
        }
        s->lmin = min;
        s->lmax = max;
    }
    return 0;
}

static int word_is(const rec_arg_t *x, const char *w)
{
    size_t n = strlen(w);
    return x->len == n && strncasecmp((const char *)x->ptr, w, n) == 0;
}

int zs_parse_range(int cmd, const rec_arg_t *argv, uint16_t argc, zs_spec_t *s, buf_t *r)
{
    memset(s, 0, sizeof(*s));
    int store = cmd == CMD_ZRANGESTORE, any = cmd == CMD_ZRANGE || store;
    int by = cmd == CMD_ZRANGEBYSCORE || cmd == CMD_ZREVRANGEBYSCORE ? ZS_BY_SCORE
             : cmd == CMD_ZRANGEBYLEX || cmd == CMD_ZREVRANGEBYLEX   ? ZS_BY_LEX
             : any                                                   ? -1
                                                                     : ZS_BY_RANK;
    int rev = cmd == CMD_ZREVRANGE || cmd == CMD_ZREVRANGEBYSCORE || cmd == CMD_ZREVRANGEBYLEX;
    long long offset = 0, limit = -1;
    for (uint16_t j = 2; j < argc; j++) {
        uint16_t left = (uint16_t)(argc - j - 1);
        if (!store && word_is(&argv[j], "withscores")) {
            s->withscores = 1;
        } else if (word_is(&argv[j], "limit") && left >= 2) {
            if (zs_parse_ll(&argv[j + 1], &offset) || zs_parse_ll(&argv[j + 2], &limit)) {
                resp_error(r, ZS_ERR_NOT_INT);
                return -1;
            }
            j += 2;
        } else if (any && !rev && word_is(&argv[j], "rev")) {
            rev = 1;
        } else if (by < 0 && word_is(&argv[j], "bylex")) {
            by = ZS_BY_LEX;
        } else if (by < 0 && word_is(&argv[j], "byscore")) {
            by = ZS_BY_SCORE;
        } else {
            resp_error(r, "ERR syntax error");
            return -1;
        }
    }
    if (by < 0) by = ZS_BY_RANK;
    if (limit != -1 && by == ZS_BY_RANK) {
        resp_error(r, "ERR syntax error, LIMIT is only supported in combination with either "
                      "BYSCORE or BYLEX");
        return -1;
    }
    if (s->withscores && by == ZS_BY_LEX) {
        resp_error(r, "ERR syntax error, WITHSCORES not supported in combination with BYLEX");
        return -1;
    }
    /* reversed score and lex ranges are given as max, min */
    int swap = rev && by != ZS_BY_RANK;
    const char *err;
    if (zs_parse_minmax((zs_by_t)by, &argv[swap ? 1 : 0], &argv[swap ? 0 : 1], s, &err)) {
        resp_error(r, err);
        return -1;
    }
    s->rev = rev;
    s->offset = offset;
    s->limit = limit;
    return 0;
}

/* ---- lex ranges: Redis' walks, which assume equal scores; with mixed
 * scores they answer what Redis' listpack walks answer ---- */

/* bound b (a lex range's min or max) against member m: <0, 0, >0 */
static int lex_cmp(const rec_arg_t *b, int inf, const char *m, uint32_t n)
{
    if (inf) return inf;
    uint32_t bn = b->len - 1;
    int c = memcmp((const char *)b->ptr + 1, m, bn < n ? bn : n);
    return c ? c : (bn > n) - (bn < n);
}

static int lex_gte_min(const zs_spec_t *s, const st_zel_t *x)
{
    int c = lex_cmp(s->lmin, s->lmin_inf, x->m, x->n);
    return s->minex ? c < 0 : c <= 0;
}

static int lex_lte_max(const zs_spec_t *s, const st_zel_t *x)
{
    int c = lex_cmp(s->lmax, s->lmax_inf, x->m, x->n);
    return s->maxex ? c > 0 : c >= 0;
}

/* Whether the member at rank r is in the range: past its min, short of
 * its max. */
static int rank_gte_min(st_zset_t *z, const zs_spec_t *s, uint32_t r)
{
    st_zel_t x;
    st_zset_at(z, r, &x);
    return lex_gte_min(s, &x);
}

static int rank_lte_max(st_zset_t *z, const zs_spec_t *s, uint32_t r)
{
    st_zel_t x;
    st_zset_at(z, r, &x);
    return lex_lte_max(s, &x);
}

/* zslIsInLexRange: min <= max, and the range meets the first and last
 * members. */
static int lex_may_meet(st_zset_t *z, const zs_spec_t *s)
{
    int c;
    if (s->lmin_inf || s->lmax_inf)
        c = s->lmin_inf == s->lmax_inf ? 0 : s->lmin_inf > 0 || s->lmax_inf < 0 ? 1 : -1;
    else {
        const rec_arg_t *a = s->lmin, *b = s->lmax;
        uint32_t an = a->len - 1, bn = b->len - 1;
        c = memcmp((const char *)a->ptr + 1, (const char *)b->ptr + 1, an < bn ? an : bn);
        if (!c) c = (an > bn) - (an < bn);
    }
    if (c > 0 || (c == 0 && (s->minex || s->maxex))) return 0;
    uint32_t len = st_zset_len(z);
    return len && rank_gte_min(z, s, len - 1) && rank_lte_max(z, s, 0);
}

#define NO_RANK UINT32_MAX

/* From rank `from`, walking up (or down when rev), the rank of the first
 * member for which the walk's test holds: past the min (up) or short of
 * the max (down); NO_RANK when none does. A listpack's linear scans. */
static uint32_t lex_scan(st_zset_t *z, const zs_spec_t *s, uint32_t from, int rev)
{
    uint32_t len = st_zset_len(z), r = from, found = NO_RANK;
    st_zset_iter_t it;
    st_zel_t x;
    st_zset_iter_init(&it, z, from, rev ? from + 1 : len - from, rev);
    while (found == NO_RANK && st_zset_next(&it, &x)) {
        if (rev ? lex_lte_max(s, &x) : lex_gte_min(s, &x))
            found = r;
        else if (rev)
            r--;
        else
            r++;
    }
    st_zset_iter_free(&it);
    return found;
}

/* The rank of the first member in the range (forward walks start there),
 * or NO_RANK. */
static uint32_t lex_first(st_zset_t *z, const zs_spec_t *s)
{
    if (!lex_may_meet(z, s)) return NO_RANK;
    uint32_t len = st_zset_len(z), r;
    if (!st_zset_is_skiplist(z)) /* a listpack: scanned from its head */
        r = lex_scan(z, s, 0, 0);
    else
        r = s->lmin_inf
                ? (s->lmin_inf < 0 ? 0 : len)
                : st_zset_rank_lex(z, (const char *)s->lmin->ptr + 1, s->lmin->len - 1, s->minex);
    return r < len && rank_lte_max(z, s, r) ? r : NO_RANK;
}

/* The rank of the last member in the range (reverse walks start there),
 * or NO_RANK. */
static uint32_t lex_last(st_zset_t *z, const zs_spec_t *s)
{
    if (!lex_may_meet(z, s)) return NO_RANK;
    uint32_t len = st_zset_len(z), r;
    if (!st_zset_is_skiplist(z)) { /* a listpack: scanned from its tail */
        r = lex_scan(z, s, len - 1, 1);
    } else {
        uint32_t past = s->lmax_inf ? (s->lmax_inf < 0 ? 0 : len)
                                    : st_zset_rank_lex(z, (const char *)s->lmax->ptr + 1,
                                                       s->lmax->len - 1, !s->maxex);
        r = past ? past - 1 : NO_RANK;
    }
    return r != NO_RANK && rank_gte_min(z, s, r) ? r : NO_RANK;
}

/* How many members from rank from on (downwards when rev), at most max,
 * stay in the range: short of the max (up) or past the min (down). */
static uint32_t lex_run(st_zset_t *z, const zs_spec_t *s, uint32_t from, int rev, uint64_t max)
{
    uint32_t len = st_zset_len(z), n = 0;
    st_zset_iter_t it;
    st_zel_t x;
    st_zset_iter_init(&it, z, from, rev ? from + 1 : len - from, rev);
    while (n < max && st_zset_next(&it, &x) && (rev ? lex_gte_min(s, &x) : lex_lte_max(s, &x)))
        n++;
    st_zset_iter_free(&it);
    return n;
}

void zs_span(st_zset_t *z, const zs_spec_t *s, uint32_t *from, uint32_t *to)
{
    uint32_t len = st_zset_len(z);
    *from = *to = 0;
    if (s->by == ZS_BY_RANK) {
        long long start = s->start, stop = s->stop;
        if (start < 0) start += len;
        if (stop < 0) stop += len;
        if (start < 0) start = 0;
        if (start > stop || start >= len) return;
        if (stop >= len) stop = (long long)len - 1;
        if (s->rev) { /* ranks counted from the highest */
            long long a = (long long)len - 1 - stop, b = (long long)len - 1 - start;
            start = a;
            stop = b;
        }
        *from = (uint32_t)start;
        *to = (uint32_t)stop + 1;
        return;
    }
    uint32_t a, b;
    if (s->by == ZS_BY_SCORE) {
        if (s->min > s->max || (s->min == s->max && (s->minex || s->maxex))) return;
        a = st_zset_rank_score(z, s->min, s->minex);
        b = st_zset_rank_score(z, s->max, !s->maxex);
    } else { /* ZLEXCOUNT: a listpack counts forward, a skiplist by ranks */
        a = lex_first(z, s);
        if (a == NO_RANK) return;
        if (!st_zset_is_skiplist(z)) {
            b = a + lex_run(z, s, a, 0, UINT32_MAX);
        } else {
            uint32_t y = lex_last(z, s);
            if (y == NO_RANK) return;
            b = y + 1;
        }
    }
    if (a < b) {
        *from = a;
        *to = b;
    }
}

/* BYLEX: from the first (last) member in range, past the offset, while in
 * range. */
static void lex_select(st_zset_t *z, const zs_spec_t *s, uint32_t *from, uint32_t *count)
{
    uint32_t x = s->rev ? lex_last(z, s) : lex_first(z, s), len = st_zset_len(z);
    if (s->offset < 0 || x == NO_RANK) return;
    uint64_t room = s->rev ? (uint64_t)x + 1 : (uint64_t)len - x;
    if ((uint64_t)s->offset >= room) return;
    x = s->rev ? x - (uint32_t)s->offset : x + (uint32_t)s->offset;
    *from = x;
    *count = lex_run(z, s, x, s->rev, s->limit < 0 ? UINT64_MAX : (uint64_t)s->limit);
}

void zs_select(st_zset_t *z, const zs_spec_t *s, uint32_t *from, uint32_t *count)
{
    uint32_t a, to;
    *from = *count = 0;
    if (s->by == ZS_BY_LEX) {
        lex_select(z, s, from, count);
        return;
    }
    zs_span(z, s, &a, &to);
    uint64_t n = to - a;
    if (s->by != ZS_BY_RANK) { /* LIMIT: a negative offset selects nothing */
        if (s->offset < 0 || (uint64_t)s->offset >= n) return;
        n -= (uint64_t)s->offset;
        if (s->limit >= 0 && (uint64_t)s->limit < n) n = (uint64_t)s->limit;
        if (s->rev)
            to -= (uint32_t)s->offset;
        else
            a += (uint32_t)s->offset;
    }
    if (!n) return;
    *from = s->rev ? to - 1 : a;
    *count = (uint32_t)n;
}

void zs_reply_run(buf_t *r, int proto, st_zset_t *z, uint32_t from, uint32_t count, int rev,
                  int withscores, int nested)
{
    resp_array(r, withscores && !nested && proto < 3 ? 2 * (long long)count : count);
    st_zset_iter_t it;
    st_zel_t x;
    st_zset_iter_init(&it, z, from, count, rev);
    while (st_zset_next(&it, &x))
        st_zset_reply_member(r, proto, &x, withscores, withscores && (nested || proto >= 3));
    st_zset_iter_free(&it);
}

/* ---- popping ---- */

uint32_t st_zset_pop(store_ctx_t *ctx, const apply_args_t *a, const rec_arg_t *key,
                     idx_entry_t **slot, int max, uint32_t count, int proto, int shape, buf_t *r)
{
    st_zset_t *z = st_ent_zset(*slot);
    uint32_t len = st_zset_len(z), n = count < len ? count : len;
    int nested = shape == ZS_POP_NESTED || (shape == ZS_POP_AUTO && proto >= 3);
    if (r && shape != ZS_POP_BARE) resp_array(r, nested ? n : 2 * (long long)n);
    uint64_t before = st_zset_bytes(z);
    unsigned char *buf = NULL;
    size_t cap = 0;
    for (uint32_t i = 0; i < n; i++) {
        st_zel_t x;
        st_zset_take(ctx, z, max ? st_zset_len(z) - 1 : 0, &x, &buf, &cap);
        if (r) st_zset_reply_member(r, proto, &x, 1, nested);
    }
    free(buf);
    ctx->entry_bytes += st_zset_bytes(z) - before; /* modular: a decrease */
    if (n) st_key_changed_as(ctx, a, a->dbnum, key, PS_NOTIFY_ZSET, max ? "zpopmax" : "zpopmin");
    if (!st_zset_len(z)) st_remove(a->db, slot);
    return n;
}

/* ---- union, intersection, difference ---- */

typedef struct zsrc {
    st_zset_t *z; /* a sorted set, or */
    st_hash_t *s; /* a set (scores 1), or neither: a missing key */
    double weight;
} zsrc_t;

static uint32_t src_len(const zsrc_t *x)
{
    return x->z ? st_zset_len(x->z) : x->s ? st_hash_len(x->s) : 0;
}

/* The score of m in x, or 0 when absent (*found). Nothing is handed out
 * from pages: a walk over millions keeps none of the members it looks up. */
static double src_score(const zsrc_t *x, const void *m, uint32_t n, int *found)
{
    double s = 0;
    uint32_t vlen;
    *found = 0;
    if (x->z)
        *found = st_zset_score(x->z, m, n, &s);
    else if (x->s && st_hash_peek(x->s, m, n, NULL, 0, &vlen) != 0)
        *found = 1, s = 1.0; /* a set's member: 1 */
    return s;
}

static double weighted(double score, double weight)
{
    double v = score * weight;
    return isnan(v) ? 0.0 : v; /* 0 * inf */
}

enum { AGG_SUM, AGG_MIN, AGG_MAX };

static double aggregate(int agg, double acc, double v)
{
    if (agg == AGG_SUM) {
        acc += v;
        return isnan(acc) ? 0.0 : acc; /* inf + -inf: Redis makes it 0 */
    }
    return agg == AGG_MIN ? (v < acc ? v : acc) : (v > acc ? v : acc);
}

/* A member of a source, with its score; nonzero stops the walk. */
typedef int (*member_fn)(void *arg, const char *m, uint32_t n, double score);

typedef struct set_walk {
    member_fn fn;
    void *arg;
} set_walk_t;

static int walk_set(void *arg, idx_entry_t *f)
{
    set_walk_t *w = arg;
    return w->fn(w->arg, (const char *)f->data, f->klen, 1.0);
}

/* Every member of x with its score, in its order (a sorted set's ranks, a
 * set's own order), each for the call only (a page's copy is not kept). */
static void src_walk(const zsrc_t *x, member_fn fn, void *arg)
{
    if (x->z) {
        st_zset_iter_t it;
        st_zel_t e;
        st_zset_iter_init(&it, x->z, 0, st_zset_len(x->z), 0);
        while (st_zset_next(&it, &e) && !fn(arg, e.m, e.n, e.score)) {
        }
        st_zset_iter_free(&it);
    } else if (x->s) {
        set_walk_t w = {fn, arg};
        st_hash_foreach_once(x->s, walk_set, &w);
    }
}

/* One walk of zs_setop: its inputs, what it builds. */
typedef struct setop_run {
    const zsrc_t *src;
    long long nk, i; /* the inputs; the one walked */
    int op, agg, card;
    long long limit;
    const st_db_t *db;
    st_zset_t *out;
    uint64_t count, maxlen;
} setop_run_t;

static void put_out(setop_run_t *x, const char *m, uint32_t n, double v)
{
    if (!x->out) x->out = zs_new(x->db);
    st_zset_set(NULL, x->out, m, n, v);
    if (n > x->maxlen) x->maxlen = n;
}

/* ZINTER: a member of the smallest input found in every other. */
static int inter_member(void *arg, const char *m, uint32_t n, double score)
{
    setop_run_t *x = arg;
    double acc = weighted(score, x->src[0].weight);
    int all = 1;
    for (long long i = 1; i < x->nk && all; i++) {
        double v = src_score(&x->src[i], m, n, &all);
        if (all) acc = aggregate(x->agg, acc, v * x->src[i].weight);
    }
    if (!all) return 0;
    x->count++;
    if (x->card) return x->limit && (long long)x->count >= x->limit;
    put_out(x, m, n, acc);
    return 0;
}

/* ZUNION (each input's members aggregated) and ZDIFF (the first input's
 * members found in no other). */
static int union_member(void *arg, const char *m, uint32_t n, double score)
{
    setop_run_t *x = arg;
    double v = weighted(score, x->src[x->i].weight), cur;
    if (x->op == ZS_DIFF) {
        int found = 0;
        for (long long j = 1; j < x->nk && !found; j++)
            src_score(&x->src[j], m, n, &found);
        if (found) return 0;
        v = score;
    }
    if (x->out && st_zset_score(x->out, m, n, &cur)) v = aggregate(x->agg, cur, v);
    put_out(x, m, n, v);
    return 0;
}

static int by_len(const void *x, const void *y)
{
    uint32_t a = src_len(x), b = src_len(y);
    return a < b ? -1 : a > b;
}

st_zset_t *zs_setop(st_db_t *db, int64_t now, int reap, const rec_arg_t *argv, uint16_t argc,
                    zs_setop_t *o, const char *cmd, int card, zs_limits_t l, uint64_t *count,
                    int *failed, buf_t *r)
{
    *failed = 1;
    long long nk;
    if (zs_parse_ll(&argv[0], &nk)) {
        resp_error(r, ZS_ERR_NOT_INT);
        return NULL;
    }
    if (nk < 1) {
        char msg[96];
        snprintf(msg, sizeof(msg), "ERR at least 1 input key is needed for '%s' command", cmd);
        resp_error(r, msg);
        return NULL;
    }
    if (nk > (long long)argc - 1) {
        resp_error(r, "ERR syntax error");
        return NULL;
    }
    zsrc_t *src = st_xmalloc((size_t)nk * sizeof(*src));
    for (long long i = 0; i < nk; i++) {
        idx_entry_t **slot = st_find_read(db, &argv[1 + i], now, reap);
        src[i] = (zsrc_t){NULL, NULL, 1.0};
        if (!slot) continue;
        unsigned t = st_ent_type(*slot);
        if (t != ST_ZSET && t != ST_SET) {
            resp_error(r, "WRONGTYPE Operation against a key holding the wrong kind of value");
            free(src);
            return NULL;
        }
        if (t == ST_ZSET)
            src[i].z = st_ent_zset(*slot);
        else
            src[i].s = st_ent_hash(*slot);
    }
    int agg = AGG_SUM;
    for (uint16_t j = (uint16_t)(1 + nk); j < argc;) {
        uint16_t left = (uint16_t)(argc - j);
        if (o->op != ZS_DIFF && left >= nk + 1 && word_is(&argv[j], "weights")) {
            j++;
            for (long long i = 0; i < nk; i++, j++)
                if (zs_parse_score(&argv[j], &src[i].weight)) {
                    resp_error(r, "ERR weight value is not a float");
                    free(src);
                    return NULL;
                }
        } else if (o->op != ZS_DIFF && left >= 2 && word_is(&argv[j], "aggregate")) {
            const rec_arg_t *w = &argv[j + 1];
            if (word_is(w, "sum"))
                agg = AGG_SUM;
            else if (word_is(w, "min"))
                agg = AGG_MIN;
            else if (word_is(w, "max"))
                agg = AGG_MAX;
            else {
                resp_error(r, "ERR syntax error");
                free(src);
                return NULL;
            }
            j += 2;
        } else if (!card && o->withscores >= 0 && word_is(&argv[j], "withscores")) {
            o->withscores = 1;
            j++;
        } else if (card && left >= 2 && word_is(&argv[j], "limit")) {
            if (zs_parse_ll(&argv[j + 1], &o->limit) || o->limit < 0) {
                resp_error(r, "ERR LIMIT can't be negative"); /* for both, as Redis */
                free(src);
                return NULL;
            }
            j += 2;
        } else {
            resp_error(r, "ERR syntax error");
            free(src);
            return NULL;
        }
    }
    *failed = 0;
    setop_run_t x = {
        .src = src, .nk = nk, .op = o->op, .agg = agg, .card = card, .limit = o->limit, .db = db};
    /* Redis walks the inputs smallest first (the difference keeps its
     * first): with MIN, MAX and infinite sums the order shows */
    if (o->op != ZS_DIFF) qsort(src, (size_t)nk, sizeof(*src), by_len);
    if (o->op == ZS_INTER) {
        if (src_len(&src[0])) src_walk(&src[0], inter_member, &x);
    } else {
        for (x.i = 0; x.i < nk && (o->op != ZS_DIFF || x.i == 0); x.i++)
            if (src_len(&src[x.i])) src_walk(&src[x.i], union_member, &x);
        x.count = x.out ? st_zset_len(x.out) : 0;
    }
    *count = x.count;
    st_zset_t *out = x.out;
    uint64_t maxlen = x.maxlen;
    free(src);
    if (out && !card) zs_choose_encoding(out, l, maxlen);
    return out;
}
