/*
 * sort.c - SORT's words and ordering rules (sort.h, D47): parsing, the
 * STORE key's position, BY/GET patterns, scores, the order and LIMIT's
 * window. Used by the frontends and the store; pure functions, no state.
 *
 * Redis 7.0.15 is the reference for every rule here, including its
 * C-string habits: a pattern is searched for '*' and "->" up to its first
 * NUL byte, a score is parsed by strtod up to a NUL, and ALPHA without
 * STORE compares as strcoll (in the C locale: strcmp) does, up to a NUL,
 * while ALPHA with STORE compares whole byte strings.
 */
#include "sort.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "strutil.h"

#define ERR_SYNTAX  "ERR syntax error"
#define ERR_NOT_INT "ERR value is not an integer or out of range"

static int word_is(const rec_arg_t *w, const char *s)
{
    size_t n = strlen(s);
    return w->len == n && strncasecmp((const char *)w->ptr, s, n) == 0;
}

/* strchr's view of a word: whether byte c is found before a NUL. */
static int cstr_has(const rec_arg_t *w, int c)
{
    for (uint32_t i = 0; i < w->len && w->ptr[i]; i++)
        if (w->ptr[i] == c) return 1;
    return 0;
}

/* The BY and GET refusals, in cluster mode and for users with key
 * patterns (Redis 7.0 refuses every GET there, and BY with a pattern). */
static const char *refused(const char *opt, unsigned flags)
{
    if (flags & SORT_CLUSTER)
        return opt[0] == 'B' ? "ERR BY option of SORT denied in Cluster mode."
                             : "ERR GET option of SORT denied in Cluster mode.";
    if (flags & SORT_KEYS_ACL)
        return opt[0] == 'B' ? "ERR BY option of SORT denied due to insufficient ACL permissions."
                             : "ERR GET option of SORT denied due to insufficient ACL permissions.";
    return NULL;
}

const char *sort_parse(const rec_arg_t *argv, int argc, unsigned flags, sort_spec_t *s)
{
    memset(s, 0, sizeof(*s));
    s->limit_count = -1;
    const char *err = NULL;
    for (int j = 1; j < argc && !err; j++) {
        int left = argc - j - 1;
        const rec_arg_t *w = &argv[j];
        if (word_is(w, "asc")) {
            s->desc = 0;
        } else if (word_is(w, "desc")) {
            s->desc = 1;
        } else if (word_is(w, "alpha")) {
            s->alpha = 1;
        } else if (word_is(w, "limit") && left >= 2) {
            if (str_to_ll((const char *)argv[j + 1].ptr, argv[j + 1].len, &s->limit_start) ||
                str_to_ll((const char *)argv[j + 2].ptr, argv[j + 2].len, &s->limit_count))
                err = ERR_NOT_INT;
            j += 2;
        } else if (!(flags & SORT_READONLY) && word_is(w, "store") && left >= 1) {
            s->store = ++j;
        } else if (word_is(w, "by") && left >= 1) {
            s->by = ++j;
            /* A pattern without '*' sorts nothing (BY nosort). */
            if (!cstr_has(&argv[j], '*'))
                s->dontsort = 1;
            else
                err = refused("BY", flags);
        } else if (word_is(w, "get") && left >= 1) {
            err = refused("GET", flags);
            if (!err) {
                if (!s->gets) s->gets = malloc((size_t)argc * sizeof(*s->gets));
                if (!s->gets) return "ERR out of memory";
                s->gets[s->ngets++] = (uint16_t)(j + 1);
            }
            j++;
        } else {
            err = ERR_SYNTAX;
        }
    }
    if (err) sort_spec_free(s);
    return err;
}

void sort_spec_free(sort_spec_t *s)
{
    free(s->gets);
    s->gets = NULL;
    s->ngets = 0;
}

int sort_store_key_at(int argc, const char *const *argv, const uint32_t *lens)
{
    static const struct {
        const char *name;
        int skip;
    } skips[] = {{"limit", 2}, {"get", 1}, {"by", 1}};
    int at = 0;
    for (int i = 2; i < argc; i++) {
        /* A word that is no option is passed over (one word); the last
         * STORE wins, as in SORT itself. */
        for (size_t k = 0; k < sizeof(skips) / sizeof(skips[0]); k++) {
            size_t n = strlen(skips[k].name);
            if (lens[i] == n && strncasecmp(argv[i], skips[k].name, n) == 0) {
                i += skips[k].skip;
                break;
            }
            if (lens[i] == 5 && strncasecmp(argv[i], "store", 5) == 0 && i + 1 < argc) {
                at = i + 1;
                break;
            }
        }
    }
    return at;
}

/* ---- patterns ---- */

void sort_pattern_compile(const rec_arg_t *pat, sort_pattern_t *out)
{
    memset(out, 0, sizeof(*out));
    const unsigned char *p = pat->ptr;
    size_t len = pat->len;
    out->p = p;
    if (len >= 1 && p[0] == '#' && (len == 1 || p[1] == '\0')) {
        out->kind = SORT_PAT_SELF;
        return;
    }
    size_t c = 0; /* strlen's end */
    while (c < len && p[c])
        c++;
    const unsigned char *star = memchr(p, '*', c);
    if (!star) {
        out->kind = SORT_PAT_NONE;
        return;
    }
    out->prefix_len = (size_t)(star - p);
    out->kind = SORT_PAT_KEY;
    /* "->" after the star, followed by at least one byte before a NUL. */
    for (size_t i = out->prefix_len + 1; i + 1 < c; i++) {
        if (p[i] == '-' && p[i + 1] == '>') {
            if (i + 2 < c) {
                out->kind = SORT_PAT_FIELD;
                out->field = p + i + 2;
                out->field_len = len - i - 2;
            }
            break;
        }
    }
    size_t field_part = out->kind == SORT_PAT_FIELD ? out->field_len + 2 : 0;
    out->post_len = len - out->prefix_len - 1 - field_part;
}

void sort_pattern_key(const sort_pattern_t *p, const unsigned char *sub, size_t sublen, buf_t *out)
{
    buf_reset(out);
    buf_append(out, p->p, p->prefix_len);
    buf_append(out, sub, sublen);
    buf_append(out, p->p + p->prefix_len + 1, p->post_len);
}

/* ---- scores and order ---- */

int sort_score(const unsigned char *p, size_t n, double *out)
{
    char small[64], *s = small;
    if (n >= sizeof(small)) {
        s = malloc(n + 1);
        if (!s) return -1;
    }
    memcpy(s, p, n);
    s[n] = '\0';
    char *end;
    errno = 0;
    double d = strtod(s, &end);
    int bad = *end != '\0' || errno == ERANGE || isnan(d);
    if (s != small) free(s);
    *out = d;
    return bad ? -1 : 0;
}

/* memcmp order, the shorter first when one is a prefix of the other. */
static int bytes_cmp(const unsigned char *a, size_t an, const unsigned char *b, size_t bn)
{
    int c = memcmp(a, b, an < bn ? an : bn);
    if (c) return c;
    return an < bn ? -1 : an > bn;
}

/* strcmp's order: each side ends at its first NUL. */
static int cstr_cmp(const unsigned char *a, size_t an, const unsigned char *b, size_t bn)
{
    const unsigned char *za = memchr(a, 0, an), *zb = memchr(b, 0, bn);
    return bytes_cmp(a, za ? (size_t)(za - a) : an, b, zb ? (size_t)(zb - b) : bn);
}

typedef struct order {
    int alpha, by, store, desc;
} order_t;

static int item_cmp(const sort_item_t *x, const sort_item_t *y, const order_t *o)
{
    int c;
    if (!o->alpha) {
        if (x->score > y->score)
            c = 1;
        else if (x->score < y->score)
            c = -1;
        else
            c = bytes_cmp(x->p, x->n, y->p, y->n);
    } else if (o->by) {
        if (!x->by_p || !y->by_p)
            c = x->by_p == y->by_p ? 0 : !x->by_p ? -1 : 1;
        else
            c = o->store ? bytes_cmp(x->by_p, x->by_n, y->by_p, y->by_n)
                         : cstr_cmp(x->by_p, x->by_n, y->by_p, y->by_n);
    } else {
        c = o->store ? bytes_cmp(x->p, x->n, y->p, y->n) : cstr_cmp(x->p, x->n, y->p, y->n);
    }
    return o->desc ? -c : c;
}

/* A stable merge sort (glibc's qsort, which Redis calls, is one too, so
 * equal items come out in input order as there). */
static void merge_sort(sort_item_t *v, sort_item_t *tmp, size_t n, const order_t *o)
{
    if (n < 2) return;
    size_t h = n / 2;
    merge_sort(v, tmp, h, o);
    merge_sort(v + h, tmp, n - h, o);
    size_t i = 0, j = h, k = 0;
    while (i < h && j < n)
        tmp[k++] = item_cmp(&v[j], &v[i], o) < 0 ? v[j++] : v[i++];
    while (i < h)
        tmp[k++] = v[i++];
    memcpy(v, tmp, k * sizeof(*v));
}

void sort_items(sort_item_t *v, size_t n, const sort_spec_t *s)
{
    order_t o = {s->alpha, s->by != 0, s->store != 0, s->desc};
    sort_item_t *tmp = malloc((n ? n : 1) * sizeof(*tmp));
    if (!tmp) abort(); /* as the allocators of both processes do */
    merge_sort(v, tmp, n, &o);
    free(tmp);
}

void sort_window(const sort_spec_t *s, long long n, long long *start, long long *end)
{
    long long st = s->limit_start < 0 ? 0 : s->limit_start, en;
    if (s->limit_count < 0)
        en = n - 1;
    else /* saturating: LIMIT 2 9223372036854775807 is "to the end" */
        en = s->limit_count - 1 > LLONG_MAX - st ? LLONG_MAX : st + (s->limit_count - 1);
    if (st >= n) {
        st = n - 1;
        en = n - 2;
    }
    if (en >= n) en = n - 1;
    *start = st;
    *end = en;
}
