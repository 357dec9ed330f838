/*
 * t_sort.c - SORT and SORT_RO in the store (handlers.h, D47): the read
 * (SORT_RO, and SORT without STORE, which the frontend sends as SORT_RO)
 * and the write SORT ... STORE (CMD_SORT: the user's words, from the key
 * on). Store process only; a type handler following route.c's
 * determinism rules.
 *
 * The words and the order are common/sort.c's; this file reads the data:
 * the elements of the list, set or sorted set, and the keys BY and GET
 * patterns name (string values, hash fields), through the store's read
 * paths, so elements and values kept in the log sort and reply as those
 * in RAM. The apply depends only on the state and the record: it looks
 * keys up by the apply clock, never reaps or touches anything but the
 * destination, and an element's order among equals is its position in
 * the input, which is a function of the contents: a list's order, a
 * sorted set's, and for a set its members' byte order (never its table's,
 * which a checkpoint read back may lay out otherwise). A log that cannot be read back while
 * applying stops the store, as everywhere on the apply path.
 *
 * Redis' behaviours kept: BY without '*' sorts nothing (the natural order:
 * a list's, a sorted set's by score, DESC reversing them; a set's own
 * order, DESC ignored), except that a set with STORE is then sorted ALPHA
 * so the stored list does not depend on a table's order; a missing BY
 * value sorts as 0 (ALPHA: first); a missing GET value is a null (an
 * empty string in the stored list); one element or BY value that is not a
 * number fails the whole command with "One or more scores can't be
 * converted into double"; STORE replaces the destination with a list
 * (its TTL goes) or deletes it when the result is empty.
 */
#include <stdlib.h>
#include <string.h>

#include "handlers.h"
#include "log.h"
#include "resp.h"
#include "sort.h"
#include "store/core/alloc.h"
#include "store/core/entry.h"
#include "store/core/hash.h"
#include "store/core/list.h"
#include "store/core/object.h"
#include "store/core/value.h"
#include "store/core/watch.h"
#include "store/core/zset.h"
#include "store/store-internal.h"

#define ERR_SCORES "ERR One or more scores can't be converted into double"
#define ERR_READ   "ERR cannot read a value back from the log"

/* One SORT being run: where it reads, and the buffers it owns. */
typedef struct sort_run {
    store_ctx_t *ctx;
    st_db_t *db;
    int64_t now;
    int applying; /* the apply path: an unreadable log is fatal */
    int io_error; /* the read path: a value could not be read */
    unsigned char **owned;
    size_t nowned, owned_cap;
    buf_t key; /* a pattern's key */
} sort_run_t;

static void run_free(sort_run_t *run)
{
    for (size_t i = 0; i < run->nowned; i++)
        free(run->owned[i]);
    free(run->owned);
    buf_free(&run->key);
}

static unsigned char *run_keep(sort_run_t *run, unsigned char *p)
{
    if (run->nowned == run->owned_cap) {
        run->owned_cap = run->owned_cap ? run->owned_cap * 2 : 64;
        run->owned = st_xrealloc(run->owned, run->owned_cap * sizeof(*run->owned));
    }
    return run->owned[run->nowned++] = p;
}

/* The bytes of a string-shaped entry (a string key, a list element, a
 * hash field's value): in place when inline, else read into a buffer the
 * run owns. Returns 0, or -1 when the read failed (the read path). */
static int entry_bytes(sort_run_t *run, idx_entry_t *e, const unsigned char **p, size_t *n)
{
    *n = (size_t)st_ent_vlen(e);
    if (st_ent_kind(e) == VK_INLINE) {
        *p = st_ent_inline(e);
        return 0;
    }
    unsigned char *buf = run_keep(run, st_xmalloc(*n ? *n : 1));
    if (st_read_value(run->ctx, e, buf) == 0) {
        *p = buf;
        return 0;
    }
    if (run->applying) {
        log_warn("store: cannot read a value back from the log while applying SORT ... STORE: "
                 "the state would no longer follow the log; stopping");
        exit(EXIT_FATAL);
    }
    run->io_error = 1;
    return -1;
}

/* The value a BY or GET pattern names for element (p, n): a string key's
 * entry or a hash field's, or NULL (missing, another type, no '*'). "#"
 * is the caller's (the element itself). */
static idx_entry_t *pattern_lookup(sort_run_t *run, const sort_pattern_t *pat,
                                   const unsigned char *p, size_t n)
{
    if (pat->kind == SORT_PAT_NONE || pat->kind == SORT_PAT_SELF) return NULL;
    sort_pattern_key(pat, p, n, &run->key);
    rec_arg_t key = {(const unsigned char *)run->key.data, (uint32_t)run->key.len};
    idx_entry_t **slot = st_find_read(run->db, &key, run->now, 0);
    if (!slot) return NULL;
    unsigned type = st_ent_type(*slot);
    if (pat->kind == SORT_PAT_KEY) return type == ST_STRING ? *slot : NULL;
    if (type != ST_HASH) return NULL;
    return st_hash_find(st_ent_hash(*slot), pat->field, (uint32_t)pat->field_len);
}

/* ---- the elements ---- */

typedef struct items {
    sort_item_t *v;
    size_t n;
    idx_entry_t **elem; /* a list's elements, by origin (NULL for sets, zsets) */
} items_t;

static void items_add(items_t *it, const unsigned char *p, size_t n)
{
    sort_item_t *x = &it->v[it->n];
    memset(x, 0, sizeof(*x));
    x->p = p;
    x->n = n;
    x->origin = it->n++;
}

static int collect_member(void *arg, idx_entry_t *m)
{
    items_add(arg, m->data, m->klen);
    return 0;
}

/* The elements of the collection at e, in its natural order (reversed
 * for a list or sorted set when `reverse`). Returns 0, or -1 on a read
 * error (the read path). */
static int load_items(sort_run_t *run, idx_entry_t *e, int reverse, items_t *it)
{
    unsigned type = st_ent_type(e);
    size_t len = type == ST_LIST  ? st_list_len(st_ent_list(e))
                 : type == ST_SET ? st_hash_len(st_ent_hash(e))
                                  : st_zset_len(st_ent_zset(e));
    it->v = st_xmalloc((len ? len : 1) * sizeof(*it->v));
    if (type == ST_SET) {
        st_hash_foreach(st_ent_hash(e), collect_member, it);
        return 0;
    }
    if (type == ST_ZSET) {
        st_zset_iter_t zi;
        st_zel_t x;
        st_zset_iter_init(&zi, st_ent_zset(e), reverse ? (uint32_t)len - 1 : 0, (uint32_t)len,
                          reverse);
        while (st_zset_next(&zi, &x)) {
            /* A copy that lives until the request is done: a page's member
             * is only in the iterator's buffer (D65). */
            idx_entry_t *c = st_hash_mat_new(run->ctx, x.m, x.n, "", 0);
            items_add(it, c->data, x.n);
        }
        st_zset_iter_free(&zi);
        return 0;
    }
    st_list_t *l = st_ent_list(e);
    it->elem = st_xmalloc((len ? len : 1) * sizeof(*it->elem));
    st_list_iter_t li;
    st_lelem_t el;
    int rc = 0;
    st_list_iter_init(&li, l, reverse ? (uint32_t)len - 1 : 0, (uint32_t)len, reverse);
    while (!rc && st_list_next(&li, &el)) {
        /* A page's element is copied into an entry that lives until the
         * request is done (D63), as the sort keeps it. */
        idx_entry_t *x = st_lelem_entry(run->ctx, &el);
        const unsigned char *p;
        size_t n;
        rc = entry_bytes(run, x, &p, &n);
        if (rc) break;
        it->elem[it->n] = x;
        items_add(it, p, n);
    }
    st_list_iter_free(&li);
    return rc ? -1 : 0;
}

/* What each element sorts by (BY's value or itself): scores, or ALPHA's
 * BY values. Returns 0, -1 when some score is not a number, -2 on a read
 * error. */
static int load_keys(sort_run_t *run, const sort_spec_t *s, const rec_arg_t *argv, items_t *it)
{
    sort_pattern_t by;
    if (s->by) sort_pattern_compile(&argv[s->by], &by);
    int bad = 0;
    for (size_t i = 0; i < it->n; i++) {
        sort_item_t *x = &it->v[i];
        const unsigned char *p = x->p;
        size_t n = x->n;
        if (s->by) {
            idx_entry_t *v = pattern_lookup(run, &by, x->p, x->n);
            if (!v) continue;
            if (entry_bytes(run, v, &p, &n)) return -2;
        }
        if (s->alpha) {
            if (s->by) {
                x->by_p = p;
                x->by_n = n;
            }
        } else if (sort_score(p, n, &x->score)) {
            bad = 1;
        }
    }
    return bad ? -1 : 0;
}

/* Look the key up, load its elements and what they sort by, sort them.
 * Returns NULL, or the error to reply. */
static const char *sort_load(sort_run_t *run, const rec_arg_t *argv, sort_spec_t *s, items_t *it)
{
    idx_entry_t **slot = st_find_read(run->db, &argv[0], run->now, 0);
    unsigned t = slot ? st_ent_type(*slot) : ST_LIST;
    if (t != ST_LIST && t != ST_SET && t != ST_ZSET) return ST_ERR_WRONGTYPE;
    /* A set sorts ALPHA rather than in its table's order into a stored
     * list. */
    if (s->dontsort && t == ST_SET && s->store) {
        s->dontsort = 0;
        s->alpha = 1;
        s->by = 0;
    }
    if (slot && load_items(run, *slot, s->dontsort && s->desc && t != ST_SET, it)) return ERR_READ;
    /* Set members that sort equal (ALPHA by equal or missing BY values)
     * keep their input order: make it the members' byte order, not the
     * table's, which a checkpoint read back may lay out otherwise. */
    if (!s->dontsort && s->alpha && s->by && t == ST_SET) {
        sort_spec_t bytes = {.alpha = 1, .store = 1, .limit_count = -1};
        sort_items(it->v, it->n, &bytes);
        for (size_t i = 0; i < it->n; i++)
            it->v[i].origin = i;
    }
    if (s->dontsort) return NULL;
    int rc = load_keys(run, s, argv, it);
    if (rc) return rc == -1 ? ERR_SCORES : ERR_READ;
    sort_items(it->v, it->n, s);
    return NULL;
}

/* Parse, then sort_load: the part the read and the write share. Returns
 * the number of elements of the window [*start, *end] in it->v (s to be
 * freed by the caller), or -1 after replying the error in r (r may be
 * NULL: replay). */
static long long sort_prepare(sort_run_t *run, const rec_arg_t *argv, int argc, unsigned flags,
                              sort_spec_t *s, items_t *it, long long *start, long long *end,
                              buf_t *r)
{
    const char *err = sort_parse(argv, argc, flags, s);
    if (!err) {
        err = sort_load(run, argv, s, it);
        if (err) sort_spec_free(s);
    }
    if (err) {
        if (r) resp_error(r, err);
        return -1;
    }
    sort_window(s, (long long)it->n, start, end);
    return *end >= *start ? *end - *start + 1 : 0;
}

static void items_free(items_t *it)
{
    free(it->v);
    free(it->elem);
}

/* ---- SORT_RO, SORT without STORE ---- */

void st_read_sort(store_ctx_t *ctx, const read_args_t *a, buf_t *r)
{
    sort_run_t run = {.ctx = ctx, .db = a->db, .now = a->now};
    buf_init(&run.key);
    sort_spec_t s;
    items_t it = {0};
    long long start, end;
    unsigned flags = SORT_READONLY | (ctx->cluster ? SORT_CLUSTER : 0);
    long long n = sort_prepare(&run, a->argv, a->argc, flags, &s, &it, &start, &end, r);
    if (n >= 0) {
        size_t mark = r->len;
        resp_array(r, s.ngets ? n * (long long)s.ngets : n);
        sort_pattern_t *gets = st_xmalloc((s.ngets ? s.ngets : 1) * sizeof(*gets));
        for (uint32_t g = 0; g < s.ngets; g++)
            sort_pattern_compile(&a->argv[s.gets[g]], &gets[g]);
        for (long long j = start; n && j <= end; j++) {
            const sort_item_t *x = &it.v[j];
            if (!s.ngets) resp_bulk(r, x->p, x->n);
            for (uint32_t g = 0; g < s.ngets; g++) {
                if (gets[g].kind == SORT_PAT_SELF) {
                    resp_bulk(r, x->p, x->n);
                    continue;
                }
                idx_entry_t *v = pattern_lookup(&run, &gets[g], x->p, x->n);
                if (v)
                    st_reply_value(ctx, v, r);
                else
                    resp_null3(r, a->proto);
            }
        }
        free(gets);
        if (ctx->max_reply && r->len - mark > ctx->max_reply) {
            r->len = mark;
            resp_error(r, STORE_ERR_TOO_LARGE);
        }
        sort_spec_free(&s);
    }
    items_free(&it);
    run_free(&run);
}

/* ---- SORT ... STORE ---- */

/* A new list element holding a copy of string-shaped entry e's value: a
 * value wholly in the log stays there (one extent shared, as COPY shares
 * it), else its bytes (a piece list's read into RAM: list elements are
 * never piece lists, D45). An APPEND to a short value leaves an extent
 * after an inline prefix, and to an empty one an extent short enough to
 * be inline: neither is an element's extent (st_list_elem_new would make
 * the second inline from no bytes). */
static idx_entry_t *elem_of_entry(sort_run_t *run, idx_entry_t *e)
{
    if (st_ent_kind(e) == VK_EXTENT && e->ilen == 0) {
        uint64_t lsn;
        uint32_t len;
        st_ent_get_ext1(e, &lsn, &len);
        if (len > STORE_INLINE_MAX) return st_list_elem_new(NULL, len, lsn);
    }
    const unsigned char *p;
    size_t n;
    entry_bytes(run, e, &p, &n); /* the apply path: fatal on failure */
    return st_list_elem_new(p, (uint32_t)n, 0);
}

/* CMD_SORT: key options... STORE destination (the user's words). */
void st_apply_sort(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    sort_run_t run = {.ctx = ctx, .db = a->db, .now = ctx->now, .applying = 1};
    buf_init(&run.key);
    sort_spec_t s;
    items_t it = {0};
    long long start, end;
    long long n = sort_prepare(&run, a->argv, a->argc, 0, &s, &it, &start, &end, r);
    if (n >= 0 && !s.store) { /* not a frontend's record */
        if (r) resp_error(r, "ERR syntax error");
        sort_spec_free(&s);
        n = -1;
    }
    if (n >= 0) {
        sort_pattern_t *gets = st_xmalloc((s.ngets ? s.ngets : 1) * sizeof(*gets));
        for (uint32_t g = 0; g < s.ngets; g++)
            sort_pattern_compile(&a->argv[s.gets[g]], &gets[g]);
        st_list_t *l = st_list_new();
        for (long long j = start; n && j <= end; j++) {
            const sort_item_t *x = &it.v[j];
            for (uint32_t g = 0; g < (s.ngets ? s.ngets : 1); g++) {
                idx_entry_t *e;
                if (s.ngets && gets[g].kind != SORT_PAT_SELF) {
                    idx_entry_t *v = pattern_lookup(&run, &gets[g], x->p, x->n);
                    e = v ? elem_of_entry(&run, v) : st_list_elem_new("", 0, 0);
                } else if (it.elem) {
                    e = elem_of_entry(&run, it.elem[x->origin]);
                } else {
                    e = st_list_elem_new(x->p, (uint32_t)x->n, 0);
                }
                st_list_insert(ctx, l, st_list_len(l), e);
            }
        }
        free(gets);
        const rec_arg_t *dst = &a->argv[s.store];
        idx_entry_t **dslot = st_find_live(a->db, dst, ctx->now, 1);
        uint32_t len = st_list_len(l);
        if (len) {
            st_ent_store(a->db, dslot, st_ent_new_obj(dst, (st_obj_t *)l, 0));
            st_key_changed(ctx, a, a->dbnum, dst);
        } else {
            st_list_ops.free((st_obj_t *)l);
            if (dslot) {
                st_remove(a->db, dslot);
                st_key_changed(ctx, a, a->dbnum, dst);
            }
        }
        if (r) resp_integer(r, len);
        sort_spec_free(&s);
    }
    items_free(&it);
    run_free(&run);
}
