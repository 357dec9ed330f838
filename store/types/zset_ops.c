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

int zs_put(st_zset_t *z, const void *m, uint32_t n, double s)
{
    /* a listpack keeps "-0" as the integer 0: Redis answers 0 there */
    return st_zset_set(z, m, n, s == 0 && !st_zset_is_skiplist(z) ? 0.0 : s);
}

int zs_add(st_zset_t *z, zs_limits_t l, const void *m, uint32_t n, double s)
{
    if (!st_zset_is_skiplist(z) && !st_zset_find(z, m, n) &&
        ((uint64_t)st_zset_len(z) + 1 > l.entries || n > l.value))
        st_zset_set_skiplist(z, 1);
    return zs_put(z, m, n, s);
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
    for (st_znode_t *x = st_zset_at(z, 0); x; x = st_znode_next(x))
        if (st_znode_score(x) == 0) { /* -0 becomes 0 in place: the order holds */
            uint32_t n;
            const char *m = st_znode_member(x, &n);
            zs_put(z, m, n, 0.0);
        }
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

static int lex_gte_min(const zs_spec_t *s, const st_znode_t *x)
{
    uint32_t n;
    const char *m = st_znode_member(x, &n);
    int c = lex_cmp(s->lmin, s->lmin_inf, m, n);
    return s->minex ? c < 0 : c <= 0;
}

static int lex_lte_max(const zs_spec_t *s, const st_znode_t *x)
{
    uint32_t n;
    const char *m = st_znode_member(x, &n);
    int c = lex_cmp(s->lmax, s->lmax_inf, m, n);
    return s->maxex ? c > 0 : c >= 0;
}

/* zslIsInLexRange: min <= max, and the range meets the first and last
 * members. */
static int lex_may_meet(const st_zset_t *z, const zs_spec_t *s)
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
    return len && lex_gte_min(s, st_zset_at(z, len - 1)) && lex_lte_max(s, st_zset_at(z, 0));
}

/* The first member in the range (forward walks start there), or NULL. */
static st_znode_t *lex_first(const st_zset_t *z, const zs_spec_t *s)
{
    if (!lex_may_meet(z, s)) return NULL;
    st_znode_t *x;
    if (!st_zset_is_skiplist(z)) { /* a listpack: scanned from its head */
        for (x = st_zset_at(z, 0); x && !lex_gte_min(s, x); x = st_znode_next(x)) {
        }
    } else {
        x = s->lmin_inf ? st_zset_at(z, s->lmin_inf < 0 ? 0 : st_zset_len(z))
                        : st_zset_at(z, st_zset_rank_lex(z, (const char *)s->lmin->ptr + 1,
                                                         s->lmin->len - 1, s->minex));
    }
    return x && lex_lte_max(s, x) ? x : NULL;
}

/* The last member in the range (reverse walks start there), or NULL. */
static st_znode_t *lex_last(const st_zset_t *z, const zs_spec_t *s)
{
    if (!lex_may_meet(z, s)) return NULL;
    uint32_t len = st_zset_len(z);
    st_znode_t *x;
    if (!st_zset_is_skiplist(z)) { /* a listpack: scanned from its tail */
        for (x = st_zset_at(z, len - 1); x && !lex_lte_max(s, x); x = st_znode_prev(x)) {
        }
    } else {
        uint32_t past = s->lmax_inf ? (s->lmax_inf < 0 ? 0 : len)
                                    : st_zset_rank_lex(z, (const char *)s->lmax->ptr + 1,
                                                       s->lmax->len - 1, !s->maxex);
        x = past ? st_zset_at(z, past - 1) : NULL;
    }
    return x && lex_gte_min(s, x) ? x : NULL;
}

void zs_span(const st_zset_t *z, const zs_spec_t *s, uint32_t *from, uint32_t *to)
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
        st_znode_t *x = lex_first(z, s), *y;
        if (!x) return;
        uint32_t n;
        const char *m = st_znode_member(x, &n);
        a = (uint32_t)st_zset_rank(z, m, n);
        if (!st_zset_is_skiplist(z)) {
            for (b = a; x && lex_lte_max(s, x); x = st_znode_next(x))
                b++;
        } else {
            if (!(y = lex_last(z, s))) return;
            m = st_znode_member(y, &n);
            b = (uint32_t)st_zset_rank(z, m, n) + 1;
        }
    }
    if (a < b) {
        *from = a;
        *to = b;
    }
}

/* BYLEX: walk from the first (last) member in range while in range. */
static st_znode_t **lex_select(const st_zset_t *z, const zs_spec_t *s, uint32_t *n)
{
    st_znode_t *x = s->rev ? lex_last(z, s) : lex_first(z, s);
    if (s->offset < 0) return NULL;
    for (long long skip = s->offset; x && skip; skip--)
        x = s->rev ? st_znode_prev(x) : st_znode_next(x);
    st_znode_t **v = NULL;
    uint32_t cap = 0;
    for (long long left = s->limit; x && left; left--) {
        if (!(s->rev ? lex_gte_min(s, x) : lex_lte_max(s, x))) break;
        if (*n == cap) {
            cap = cap ? cap * 2 : 16;
            v = st_xrealloc(v, (size_t)cap * sizeof(*v));
        }
        v[(*n)++] = x;
        x = s->rev ? st_znode_prev(x) : st_znode_next(x);
    }
    return v;
}

st_znode_t **zs_select(const st_zset_t *z, const zs_spec_t *s, uint32_t *n)
{
    uint32_t from, to;
    *n = 0;
    if (s->by == ZS_BY_LEX) return lex_select(z, s, n);
    zs_span(z, s, &from, &to);
    uint64_t count = to - from;
    if (s->by != ZS_BY_RANK) { /* LIMIT: a negative offset selects nothing */
        if (s->offset < 0 || (uint64_t)s->offset >= count) return NULL;
        count -= (uint64_t)s->offset;
        if (s->limit >= 0 && (uint64_t)s->limit < count) count = (uint64_t)s->limit;
        if (s->rev)
            to -= (uint32_t)s->offset;
        else
            from += (uint32_t)s->offset;
    }
    if (!count) return NULL;
    st_znode_t **v = st_xmalloc((size_t)count * sizeof(*v));
    st_znode_t *x = st_zset_at(z, s->rev ? to - 1 : from);
    for (uint64_t i = 0; i < count && x; i++) {
        v[(*n)++] = x;
        x = s->rev ? st_znode_prev(x) : st_znode_next(x);
    }
    return v;
}

/* One member, with its score when withscores, as a [member, score] array
 * when pair. */
static void reply_node(buf_t *r, int proto, const st_znode_t *x, int withscores, int pair)
{
    uint32_t len;
    const char *m = st_znode_member(x, &len);
    if (pair) resp_array(r, 2);
    resp_bulk(r, m, len);
    if (withscores) resp_double(r, proto, st_znode_score(x));
}

void zs_reply_nodes(buf_t *r, int proto, st_znode_t **v, uint32_t n, int withscores, int nested)
{
    resp_array(r, withscores && !nested && proto < 3 ? 2 * (long long)n : n);
    for (uint32_t i = 0; i < n; i++)
        reply_node(r, proto, v[i], withscores, withscores && (nested || proto >= 3));
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
    for (uint32_t i = 0; i < n; i++) {
        st_znode_t *x = st_zset_at(z, max ? st_zset_len(z) - 1 : 0);
        if (r) reply_node(r, proto, x, 1, nested);
        uint32_t ml;
        const char *m = st_znode_member(x, &ml);
        st_zset_del(z, m, ml);
    }
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

/* The score of m in x, or 0 when absent (*found). */
static double src_score(const zsrc_t *x, const void *m, uint32_t n, int *found)
{
    *found = 0;
    if (x->z) {
        st_znode_t *e = st_zset_find(x->z, m, n);
        if (e) {
            *found = 1;
            return st_znode_score(e);
        }
    } else if (x->s && st_hash_find(x->s, m, n)) {
        *found = 1;
        return 1.0;
    }
    return 0;
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

typedef struct walk {
    const void **m;
    uint32_t *len;
    double *score;
    uint32_t n;
} walk_t;

static int walk_set(void *arg, idx_entry_t *f)
{
    walk_t *w = arg;
    w->m[w->n] = f->data;
    w->len[w->n] = f->klen;
    w->score[w->n++] = 1.0;
    return 0;
}

/* Every member of x with its score (arrays malloc'd, src_len entries). */
static void src_members(const zsrc_t *x, walk_t *w)
{
    size_t n = (size_t)src_len(x) + 1;
    w->m = st_xmalloc(n * sizeof(*w->m));
    w->len = st_xmalloc(n * sizeof(*w->len));
    w->score = st_xmalloc(n * sizeof(*w->score));
    w->n = 0;
    if (x->z) {
        for (st_znode_t *e = st_zset_at(x->z, 0); e; e = st_znode_next(e)) {
            w->m[w->n] = st_znode_member(e, &w->len[w->n]);
            w->score[w->n++] = st_znode_score(e);
        }
    } else if (x->s) {
        st_hash_foreach(x->s, walk_set, w);
    }
}

static void walk_free(walk_t *w)
{
    free(w->m);
    free(w->len);
    free(w->score);
}

static int by_len(const void *x, const void *y)
{
    uint32_t a = src_len(x), b = src_len(y);
    return a < b ? -1 : a > b;
}

static double weighted(double score, double weight)
{
    double v = score * weight;
    return isnan(v) ? 0.0 : v; /* 0 * inf */
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
    *count = 0;
    st_zset_t *out = NULL;
    uint64_t maxlen = 0;
    /* Redis walks the inputs smallest first (the difference keeps its
     * first): with MIN, MAX and infinite sums the order shows */
    if (o->op != ZS_DIFF) qsort(src, (size_t)nk, sizeof(*src), by_len);
    if (o->op == ZS_INTER) {
        if (src_len(&src[0])) {
            walk_t w;
            src_members(&src[0], &w);
            for (uint32_t k = 0; k < w.n; k++) {
                double acc = weighted(w.score[k], src[0].weight);
                int all = 1;
                for (long long i = 1; i < nk && all; i++) {
                    double v = src_score(&src[i], w.m[k], w.len[k], &all);
                    if (all) acc = aggregate(agg, acc, v * src[i].weight);
                }
                if (!all) continue;
                (*count)++;
                if (card) {
                    if (o->limit && (long long)*count >= o->limit) break;
                    continue;
                }
                if (!out) out = zs_new(db);
                st_zset_set(out, w.m[k], w.len[k], acc);
                if (w.len[k] > maxlen) maxlen = w.len[k];
            }
            walk_free(&w);
        }
    } else {
        for (long long i = 0; i < nk; i++) {
            if (o->op == ZS_DIFF && i > 0) break;
            if (!src_len(&src[i])) continue;
            walk_t w;
            src_members(&src[i], &w);
            for (uint32_t k = 0; k < w.n; k++) {
                double v = weighted(w.score[k], src[i].weight);
                if (o->op == ZS_DIFF) {
                    int found = 0;
                    for (long long j2 = 1; j2 < nk && !found; j2++)
                        src_score(&src[j2], w.m[k], w.len[k], &found);
                    if (found) continue;
                    v = w.score[k];
                }
                if (!out) out = zs_new(db);
                st_znode_t *e = st_zset_find(out, w.m[k], w.len[k]);
                if (e) v = aggregate(agg, st_znode_score(e), v);
                st_zset_set(out, w.m[k], w.len[k], v);
                if (w.len[k] > maxlen) maxlen = w.len[k];
            }
            walk_free(&w);
        }
        if (out) *count = st_zset_len(out);
    }
    free(src);
    if (out && !card) zs_choose_encoding(out, l, maxlen);
    return out;
}
