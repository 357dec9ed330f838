/*
 * t_hash.c - the store's hash commands (handlers.h): the writes HSET (and
 * HMSET, HSETNX, which share its record), HDEL, HINCRBY, HINCRBYFLOAT, and
 * the reads HGET, HMGET, HEXISTS, HLEN, HSTRLEN, HKEYS, HVALS, HGETALL,
 * HRANDFIELD, HSCAN. Store process only; a type handler: it calls core/
 * (the data structure is core/hash.c) and is called by route.c, and its
 * apply handlers follow the determinism rules of route.c's banner.
 *
 * Encoding. A hash starts listpack-encoded and becomes a hashtable, for
 * good, when a write gives it more fields than hash-max-listpack-entries or
 * a field name or value longer than hash-max-listpack-value, with Redis
 * 7.0's rules (HSET checks every argument before setting; HSETNX of a field
 * that exists changes nothing; HINCRBY* check the field and the new value).
 * The two limits are the ones each record carries (common/command.h), so
 * live apply and replay choose the same. The encoding decides OBJECT
 * ENCODING's answer and the order replies list fields in.
 *
 * Replies are Redis 7.0's, byte for byte, RESP2 and (reads, read_args_t's
 * proto) RESP3; errors that only the arguments decide were given by the
 * frontend (frontend/cmd/t_hash.c). An empty hash does not exist: the write
 * that removes the last field removes the key.
 */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "glob.h"
#include "handlers.h"
#include "log.h"
#include "resp.h"
#include "store/core/alloc.h"
#include "store/core/entry.h"
#include "store/core/hash.h"
#include "store/core/object.h"
#include "store/core/value.h"
#include "store/core/watch.h"
#include "strutil.h"

#define ERR_NOT_INT "ERR value is not an integer or out of range"

typedef struct limits {
    uint32_t entries, value;
} limits_t;

static limits_t get_limits(const rec_arg_t *x)
{
    uint64_t v = (uint64_t)cmd_get_i64(x->ptr);
    return (limits_t){(uint32_t)v, (uint32_t)(v >> 32)};
}

/* ---- the write path ---- */

/* Adds what h's RAM changed by since `before` to the context's count. */
static void account(store_ctx_t *ctx, const st_hash_t *h, uint64_t before)
{
    ctx->entry_bytes += st_hash_bytes(h) - before; /* modular: a decrease too */
}

/* The hash at key for a write: *slot NULL when the key is absent. Returns
 * -1 (WRONGTYPE replied) when the key holds another type. */
static int lookup_write(store_ctx_t *ctx, const apply_args_t *a, idx_entry_t ***slot, buf_t *r)
{
    *slot = st_find_live(a->db, &a->argv[0], ctx->now, 1);
    return st_wrongtype(*slot, ST_HASH, r) ? -1 : 0;
}

/* An empty hash put at key (the caller adds its first field at once). */
static st_hash_t *create(const apply_args_t *a)
{
    st_hash_t *h = st_hash_new(a->db->ix.seed ^ 0x5851F42D4C957F2Dull);
    st_ent_store(a->db, NULL, st_ent_new_obj(&a->argv[0], (st_obj_t *)h, 0));
    return h;
}

static void convert_if_long(st_hash_t *h, limits_t l, uint64_t len)
{
    if (!st_hash_is_table(h) && len > l.value) st_hash_convert(h);
}

static void convert_if_many(st_hash_t *h, limits_t l)
{
    if (!st_hash_is_table(h) && st_hash_len(h) > l.entries) st_hash_convert(h);
}

/* CMD_HSET key limits flags field value [field value ...]. */
void st_apply_hset(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    uint32_t flags = cmd_get_u32(a->argv[2].ptr);
    if ((a->argc - 3) % 2 || ((flags & HSETF_NX) && a->argc != 5)) {
        if (r) resp_error(r, "ERR the store cannot apply this record"); /* no frontend writes it */
        return;
    }
    limits_t l = get_limits(&a->argv[1]);
    idx_entry_t **slot;
    if (lookup_write(ctx, a, &slot, r)) return;
    st_hash_t *h = slot ? st_ent_hash(*slot) : NULL;
    if ((flags & HSETF_NX) && h && st_hash_find(h, a->argv[3].ptr, a->argv[3].len)) {
        if (r) resp_integer(r, 0);
        return;
    }
    if (!h) h = create(a);
    uint64_t before = st_hash_bytes(h);
    for (uint16_t i = 3; i < a->argc; i++)
        convert_if_long(h, l, a->argv[i].len);
    long long created = 0;
    for (uint16_t i = 3; i + 1 < a->argc; i += 2)
        created += st_hash_set(h, &ctx->live, a->argv[i].ptr, a->argv[i].len, a->argv[i + 1].ptr,
                               a->argv[i + 1].len, st_arg_lsn(a, i + 1));
    convert_if_many(h, l);
    account(ctx, h, before);
    st_key_changed(ctx, a, a->dbnum, &a->argv[0]);
    if (!r) return;
    if (flags & HSETF_REPLY_OK)
        resp_simple(r, "OK");
    else
        resp_integer(r, created); /* HSETNX: 1 */
}

/* CMD_HDEL key field [field ...]. */
void st_apply_hdel(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    idx_entry_t **slot;
    if (lookup_write(ctx, a, &slot, r)) return;
    long long deleted = 0;
    if (slot) {
        st_hash_t *h = st_ent_hash(*slot);
        uint64_t before = st_hash_bytes(h);
        for (uint16_t i = 1; i < a->argc && st_hash_len(h); i++)
            deleted += st_hash_del(h, &ctx->live, a->argv[i].ptr, a->argv[i].len);
        account(ctx, h, before);
        if (deleted) st_key_changed(ctx, a, a->dbnum, &a->argv[0]);
        if (!st_hash_len(h)) st_remove(a->db, slot); /* an empty hash does not exist */
    }
    if (r) resp_integer(r, deleted);
}

/* Set field (argument 2) of the hash at key to the computed text v[0, n),
 * creating the hash when absent, with HINCRBY*'s conversion rules. */
static void set_computed(store_ctx_t *ctx, const apply_args_t *a, st_hash_t *h, const char *v,
                         size_t n)
{
    limits_t l = get_limits(&a->argv[1]);
    if (!h) h = create(a);
    uint64_t before = st_hash_bytes(h);
    convert_if_long(h, l, a->argv[2].len);
    convert_if_long(h, l, n);
    st_hash_set(h, &ctx->live, a->argv[2].ptr, a->argv[2].len, (const unsigned char *)v, n, 0);
    convert_if_many(h, l);
    account(ctx, h, before);
    st_key_changed(ctx, a, a->dbnum, &a->argv[0]);
}

/* The value of field (argument 2) copied to buf (NUL-terminated), when it
 * exists and is shorter than cap; *len receives its length (cap when too
 * long). Returns 0 when the field is absent, 1 when present. Reading the
 * log failing here is fatal: the state would no longer follow the log. */
static int field_text(store_ctx_t *ctx, st_hash_t *h, const rec_arg_t *field, char *buf, size_t cap,
                      size_t *len)
{
    idx_entry_t *f = h ? st_hash_find(h, field->ptr, field->len) : NULL;
    if (!f) return 0;
    uint64_t vlen = st_ent_vlen(f);
    if (vlen >= cap) {
        *len = cap;
        return 1;
    }
    if (st_read_value(ctx, f, (unsigned char *)buf)) {
        log_warn("store: cannot read a field value back from the log while applying a "
                 "record: the state would no longer follow the log; stopping");
        exit(EXIT_FATAL);
    }
    buf[vlen] = '\0';
    *len = (size_t)vlen;
    return 1;
}

/* CMD_HINCRBY key limits field delta. */
void st_apply_hincrby(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    long long delta = cmd_get_i64(a->argv[3].ptr), value = 0;
    idx_entry_t **slot;
    if (lookup_write(ctx, a, &slot, r)) return;
    st_hash_t *h = slot ? st_ent_hash(*slot) : NULL;
    char text[32];
    size_t n;
    if (field_text(ctx, h, &a->argv[2], text, sizeof(text), &n) &&
        (n >= sizeof(text) || str_to_ll(text, n, &value))) {
        if (r) resp_error(r, "ERR hash value is not an integer");
        return;
    }
    if (__builtin_add_overflow(value, delta, &value)) {
        if (r) resp_error(r, "ERR increment or decrement would overflow");
        return;
    }
    char num[32];
    set_computed(ctx, a, h, num, str_from_ll(num, value));
    if (r) resp_integer(r, value);
}

/* CMD_HINCRBYFLOAT key limits field increment: Redis' long double
 * arithmetic and formatting (the text the field then holds), the same
 * code live and on replay. */
void st_apply_hincrbyfloat(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    const rec_arg_t *incr_arg = &a->argv[3];
    idx_entry_t **slot;
    if (lookup_write(ctx, a, &slot, r)) return;
    st_hash_t *h = slot ? st_ent_hash(*slot) : NULL;
    long double value = 0, incr;
    char text[STR_LD_MAX];
    size_t n;
    if (field_text(ctx, h, &a->argv[2], text, sizeof(text), &n) &&
        (n >= sizeof(text) || str_to_ld(text, n, &value))) {
        if (r) resp_error(r, "ERR hash value is not a float");
        return;
    }
    if (str_to_ld((const char *)incr_arg->ptr, incr_arg->len, &incr) || isinf(incr)) {
        if (r) resp_error(r, "ERR value is not a valid float"); /* no frontend writes it */
        return;
    }
    value += incr;
    if (isnan(value) || isinf(value)) {
        if (r) resp_error(r, "ERR increment would produce NaN or Infinity");
        return;
    }
    char out[STR_LD_MAX];
    size_t len = str_from_ld(out, sizeof(out), value);
    set_computed(ctx, a, h, out, len);
    if (r) resp_bulk(r, out, len);
}

/* ---- reads ---- */

/* The hash at argument 0 for a read, or NULL when absent; -1 in *wrong
 * (WRONGTYPE replied) when the key holds another type. */
static st_hash_t *lookup_read(const read_args_t *a, buf_t *r, int *wrong)
{
    idx_entry_t **slot = st_find_live(a->db, &a->argv[0], a->now, 0);
    *wrong = st_wrongtype(slot, ST_HASH, r);
    return slot && !*wrong ? st_ent_hash(*slot) : NULL;
}

static idx_entry_t *find_field(st_hash_t *h, const rec_arg_t *f)
{
    return h ? st_hash_find(h, f->ptr, f->len) : NULL;
}

void st_read_hget(store_ctx_t *ctx, const read_args_t *a, buf_t *r)
{
    int wrong;
    st_hash_t *h = lookup_read(a, r, &wrong);
    if (wrong) return;
    idx_entry_t *f = find_field(h, &a->argv[1]);
    if (f)
        st_reply_value(ctx, f, r);
    else
        resp_null(r);
}

/* The reply limit (channel-size): past it, the reply becomes an error. */
static int too_large(store_ctx_t *ctx, buf_t *r, size_t mark)
{
    if (!ctx->max_reply || r->len - mark <= ctx->max_reply) return 0;
    r->len = mark;
    resp_error(r, STORE_ERR_TOO_LARGE);
    return 1;
}

void st_read_hmget(store_ctx_t *ctx, const read_args_t *a, buf_t *r)
{
    int wrong;
    st_hash_t *h = lookup_read(a, r, &wrong);
    if (wrong) return;
    size_t mark = r->len;
    resp_array(r, a->argc - 1);
    for (uint16_t i = 1; i < a->argc; i++) {
        idx_entry_t *f = find_field(h, &a->argv[i]);
        if (f)
            st_reply_value(ctx, f, r);
        else
            resp_null(r);
        if (too_large(ctx, r, mark)) return;
    }
}

void st_read_hexists(store_ctx_t *ctx, const read_args_t *a, buf_t *r)
{
    (void)ctx;
    int wrong;
    st_hash_t *h = lookup_read(a, r, &wrong);
    if (!wrong) resp_integer(r, find_field(h, &a->argv[1]) != NULL);
}

void st_read_hlen(store_ctx_t *ctx, const read_args_t *a, buf_t *r)
{
    (void)ctx;
    int wrong;
    st_hash_t *h = lookup_read(a, r, &wrong);
    if (!wrong) resp_integer(r, h ? st_hash_len(h) : 0);
}

void st_read_hstrlen(store_ctx_t *ctx, const read_args_t *a, buf_t *r)
{
    (void)ctx;
    int wrong;
    st_hash_t *h = lookup_read(a, r, &wrong);
    if (wrong) return;
    idx_entry_t *f = find_field(h, &a->argv[1]);
    resp_integer(r, f ? (long long)st_ent_vlen(f) : 0);
}

enum { WANT_NAMES = 1, WANT_VALUES = 2 };

typedef struct all_arg {
    store_ctx_t *ctx;
    buf_t *r;
    size_t mark;
    int want;
    int stopped; /* the reply limit was passed */
} all_arg_t;

static int all_visit(void *arg, idx_entry_t *f)
{
    all_arg_t *x = arg;
    if (x->want & WANT_NAMES) resp_bulk(x->r, f->data, f->klen);
    if (x->want & WANT_VALUES) st_reply_value(x->ctx, f, x->r);
    if (too_large(x->ctx, x->r, x->mark)) return x->stopped = 1;
    return 0;
}

/* HKEYS, HVALS, HGETALL: every field, in the hash's order. */
static void reply_all(store_ctx_t *ctx, const read_args_t *a, buf_t *r, int want)
{
    int wrong;
    st_hash_t *h = lookup_read(a, r, &wrong);
    if (wrong) return;
    uint32_t n = h ? st_hash_len(h) : 0;
    size_t mark = r->len;
    if (want == (WANT_NAMES | WANT_VALUES))
        resp_map(r, a->proto, n);
    else
        resp_array(r, n);
    /* A paged hash goes in parts, page by page (D60), where parts may go
     * (a read outside MULTI). */
    if (h && ctx->reply_stream_ok && !ctx->reply_stream && st_hash_is_paged(h)) {
        ctx->reply_stream =
            st_hash_members_snapshot(h, (want & WANT_NAMES ? ST_MEMBERS_NAMES : 0) |
                                            (want & WANT_VALUES ? ST_MEMBERS_VALUES : 0));
        if (ctx->reply_stream) return;
    }
    all_arg_t x = {ctx, r, mark, want, 0};
    if (h) st_hash_foreach_once(h, all_visit, &x);
}

void st_read_hkeys(store_ctx_t *ctx, const read_args_t *a, buf_t *r)
{
    reply_all(ctx, a, r, WANT_NAMES);
}

void st_read_hvals(store_ctx_t *ctx, const read_args_t *a, buf_t *r)
{
    reply_all(ctx, a, r, WANT_VALUES);
}

void st_read_hgetall(store_ctx_t *ctx, const read_args_t *a, buf_t *r)
{
    reply_all(ctx, a, r, WANT_NAMES | WANT_VALUES);
}

/* ---- HRANDFIELD ---- */

/* Reads may use randomness freely (they change nothing): one generator for
 * the process, seeded from the first hash's table seed. */
static uint64_t read_rng;

static uint64_t rng_next(void)
{
    uint64_t x = read_rng ? read_rng : 0x2545F4914F6CDD1Dull;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return read_rng = x;
}

static void reply_pick(store_ctx_t *ctx, const read_args_t *a, buf_t *r, idx_entry_t *f,
                       int withvalues)
{
    if (withvalues && a->proto >= 3) resp_array(r, 2);
    resp_bulk(r, f->data, f->klen);
    if (withvalues) st_reply_value(ctx, f, r);
}

static int arg_is(const rec_arg_t *x, const char *word)
{
    size_t n = strlen(word);
    return x->len == n && strncasecmp((const char *)x->ptr, word, n) == 0;
}

/* The distinct case with count < size: a partial Fisher-Yates shuffle of
 * the fields' pointers (O(size) memory for one read; Redis picks at
 * random into a dict instead, with the same visible result: count distinct
 * random fields). */
typedef struct collect_arg {
    idx_entry_t **v;
    uint32_t n;
} collect_arg_t;

static int collect(void *arg, idx_entry_t *f)
{
    collect_arg_t *c = arg;
    c->v[c->n++] = f;
    return 0;
}

/* HRANDFIELD key [count [WITHVALUES]], with Redis 7.0's checks in its
 * order: the count and the option before the key. */
void st_read_hrandfield(store_ctx_t *ctx, const read_args_t *a, buf_t *r)
{
    if (!read_rng) read_rng = a->db->ix.seed | 1;
    long long count = 0;
    int withvalues = 0, with_count = a->argc >= 2;
    if (with_count) {
        if (str_to_ll((const char *)a->argv[1].ptr, a->argv[1].len, &count)) {
            resp_error(r, ERR_NOT_INT);
            return;
        }
        if (count < -LLONG_MAX) {
            resp_error(r, "ERR value is out of range, value must between -9223372036854775807 "
                          "and 9223372036854775807");
            return;
        }
        if (a->argc > 3 || (a->argc == 3 && !arg_is(&a->argv[2], "withvalues"))) {
            resp_error(r, "ERR syntax error");
            return;
        }
        if (a->argc == 3) {
            withvalues = 1;
            if (count < -LLONG_MAX / 2 || count > LLONG_MAX / 2) {
                resp_error(r, "ERR value is out of range");
                return;
            }
        }
    }
    int wrong;
    idx_entry_t **slot = st_find_live(a->db, &a->argv[0], a->now, 0);
    if (!slot) {
        if (with_count)
            resp_array(r, 0);
        else
            resp_null(r);
        return;
    }
    st_hash_t *h = lookup_read(a, r, &wrong);
    if (wrong) return;
    if (!with_count) {
        idx_entry_t *f = st_hash_random(h, &read_rng);
        resp_bulk(r, f->data, f->klen);
        return;
    }
    uint64_t size = st_hash_len(h);
    size_t mark = r->len;
    if (count < 0) { /* repetitions allowed */
        uint64_t n = (uint64_t)(-count);
        resp_array(r, (long long)(withvalues && a->proto < 3 ? n * 2 : n));
        for (uint64_t i = 0; i < n; i++) {
            reply_pick(ctx, a, r, st_hash_random(h, &read_rng), withvalues);
            if (too_large(ctx, r, mark)) return;
        }
        return;
    }
    uint64_t n = (uint64_t)count < size ? (uint64_t)count : size;
    resp_array(r, (long long)(withvalues && a->proto < 3 ? n * 2 : n));
    if (n == 0) return;
    if (n == size && !(withvalues && a->proto >= 3)) { /* the whole hash, in its order */
        all_arg_t x = {ctx, r, mark, WANT_NAMES | (withvalues ? WANT_VALUES : 0), 0};
        st_hash_foreach(h, all_visit, &x);
        return;
    }
    /* Below: count distinct fields at random, or (RESP3 pairs) the whole
     * hash in its order. */
    collect_arg_t c = {st_xmalloc((size_t)size * sizeof(idx_entry_t *)), 0};
    st_hash_foreach(h, collect, &c);
    if (n < size) {
        for (uint64_t i = 0; i < n; i++) {
            uint64_t j = i + rng_next() % (size - i);
            idx_entry_t *t = c.v[i];
            c.v[i] = c.v[j];
            c.v[j] = t;
        }
    }
    for (uint64_t i = 0; i < n; i++) {
        reply_pick(ctx, a, r, c.v[i], withvalues);
        if (too_large(ctx, r, mark)) break;
    }
    free(c.v);
}

/* ---- HSCAN ---- */

typedef struct hscan_arg {
    store_ctx_t *ctx;
    st_hash_t *h;
    const rec_arg_t *pat; /* NULL: every field */
    st_scan_out_t out;
} hscan_arg_t;

static int hscan_visit(void *arg, idx_entry_t *f)
{
    hscan_arg_t *s = arg;
    s->out.visited++;
    if (s->pat &&
        !glob_match((const char *)s->pat->ptr, s->pat->len, (const char *)f->data, f->klen, 0))
        return 0;
    resp_bulk(&s->out.body, f->data, f->klen);
    st_reply_value(s->ctx, f, &s->out.body);
    s->out.n++;
    return 0;
}

static uint64_t hscan_step(void *arg, uint64_t cursor)
{
    hscan_arg_t *s = arg;
    return st_hash_scan(s->h, cursor, hscan_visit, s);
}

/* HSCAN key cursor [MATCH pattern] [COUNT count]: Redis 7.0's order (the
 * cursor, then the key, then the options) and SCAN's loop (keyspace.c). A
 * listpack-encoded hash comes whole, cursor 0. */
void st_read_hscan(store_ctx_t *ctx, const read_args_t *a, buf_t *r)
{
    uint64_t cursor;
    long long count;
    hscan_arg_t s = {ctx, NULL, NULL, {{0}, 0, 0, 2}};
    idx_entry_t *e = st_scan_key_begin(a, ST_HASH, &cursor, &count, &s.pat, r);
    if (!e) return;
    s.h = st_ent_hash(e);
    buf_init(&s.out.body);
    st_scan_reply(ctx, cursor, count, hscan_step, &s, &s.out, r);
    buf_free(&s.out.body);
}
