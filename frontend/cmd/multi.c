/*
 * multi.c - transactions in a frontend process: MULTI, EXEC, DISCARD, WATCH
 * and UNWATCH, with Redis 7.0's replies and errors.
 *
 * Between MULTI and EXEC a connection's commands are checked (name, arity,
 * ACL: fe_dispatch) and queued with copies of their arguments (the input
 * buffer is reused); a check that fails marks the transaction, and EXEC
 * then answers EXECABORT and discards it. MULTI, EXEC, DISCARD, WATCH,
 * QUIT and RESET run at once (CMDF_NO_MULTI); everything else, SELECT and
 * UNWATCH included, is queued.
 *
 * EXEC turns the whole transaction into ONE record (command.h, CMD_EXEC),
 * so its writes are durable together or not at all (contract 2 for all of
 * them at once) and the store applies it with nothing in between. Each
 * queued command becomes a nested payload, in order:
 *   - a write: encoded now by the encoder dispatch.c uses (encode.h), so
 *     relative expiry counts from EXEC and an argument error becomes that
 *     command's error inside EXEC's reply, as in Redis;
 *   - a read: the user's arguments, answered by the store inside the
 *     transaction (judging expiry by the apply clock);
 *   - anything the frontend answers (PING, ECHO, INFO, CONFIG, TIME, ...),
 *     SELECT, UNWATCH, and a write the encoder refused: CMD_LITERAL with the
 *     finished reply.
 * SELECT switches the database of the payloads after it (each payload
 * carries its own op+db word) and of the connection afterwards. A
 * transaction with no read, no write and no watched key is answered here,
 * without a record.
 *
 * WATCH records each key with its database and the point it was watched at:
 * watch_lsn = max(durable LSN, the connection's last write end) - every
 * record below it was before the WATCH (this connection's reads after the
 * WATCH see all of them) - and the wall clock. The EXEC record carries them;
 * the store decides (store/core/watch.c) and answers the null array when a watched
 * key changed since. When all keys were watched at one point the record
 * holds that point once (command.h's form); when they were watched at
 * different points (several WATCH calls), the header's flags word is 1 and
 * each key carries its own point: u8 db, u64 watch_lsn, i64 watch_time_ms,
 * key bytes. EXEC and DISCARD unwatch; WATCH accumulates; a connection that
 * closes or RESETs drops both (fe_multi_clear).
 *
 * Large values (D58). The transaction has one group of chunk records
 * (c->big, core/submit.c), filled as commands are queued: a queued
 * command's bulks that stream in (core/stream.c) go there as they arrive,
 * and when the transaction's record would pass one record, the command's
 * largest arguments that may be large (a write's value, any argument of a
 * read: fe_big_user_arg) are moved there from the input (queue_values).
 * The queued copy holds an empty string for each, whose address the
 * encoder passes through, so EXEC finds the canonical argument it became
 * (place_values); the record then goes nested in the group's final, whose
 * layout says where each value is. WATCH is the store's to decide, as
 * before; a transaction dropped (DISCARD, RESET, EXECABORT, the client
 * gone) drops the group (multi_free). On a replica nothing is moved: its
 * log is its leader's.
 *
 * Limits (Redis has none but memory): a transaction, its large values left
 * out, must fit one record, ring-size / 4 bytes (4 MiB by default) and
 * 65,535 arguments (the header, the watched keys and the commands). A
 * command that would pass either limit while queued is refused with an
 * error and marks the transaction (EXECABORT), so a connection holds at
 * most about one record's worth of queued data; a WATCH that would pass
 * them is refused and watches nothing. EXEC checks the exact size again
 * (encoding can add a few bytes) and, if the record would still be too
 * large, answers an error and discards it.
 *
 * Differences from Redis that remain (beyond those of store/core/watch.c):
 *   - Connection commands queued in a transaction that the store then
 *     aborts because of WATCH (CLIENT SETNAME, HELLO, AUTH, ...) still took
 *     effect: the frontend runs them while it builds the record. SELECT is
 *     the exception: it takes effect only once the store's reply shows the
 *     transaction ran (the connection's next commands wait for it).
 *   - The limits above.
 *   - EXEC's whole reply must fit one message of the store's reply channel
 *     (channel-size): a bigger one (reads of large values inside the
 *     transaction) is an error reply, after the transaction was applied.
 *   - A transaction with a read or a watched key goes through the log
 *     (reads are answered at their place in it), so while the log is
 *     stopped or the disk full, EXEC refuses it like a write.
 *   - A transaction whose WATCH the store aborts still counts its commands
 *     in INFO commandstats.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/cmd/encode.h"
#include "frontend/cmd/cmd.h"
#include "log.h"
#include "record.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

#define EXEC_HDR_LEN    24
#define EXEC_PER_KEY    1u /* header flag: each key carries its own watch point */
#define EXEC_RESP3      2u /* header flag: the client speaks RESP3 (replies only) */
#define EXEC_KEY_POINT  17 /* u8 db, u64 watch_lsn, i64 watch_time_ms */
#define MAX_RECORD_ARGS 65535
/* What a queued command may grow by when encoded (fixed-width integers). */
#define ENCODE_SLACK 32
/* A final's bytes around the transaction it nests (its group, the
 * arguments' lengths), and per value moved into the group (D58). */
#define FINAL_SLACK 64
#define VALUE_BYTES 24

typedef struct fe_mcmd {
    const cmd_desc_t *d;
    int argc;
    const char **argv; /* copies, NUL-terminated, in the same allocation */
    uint32_t *lens;
    /* Its arguments moved into the transaction's group (D58), each empty
     * here: vals[k].arg is the user's argument, off and len its bytes in
     * the group. In the same allocation. */
    int nvals;
    fe_bigval_t *vals;
    int run_db; /* the database it leaves (a SELECT's target): MONITOR's */
} fe_mcmd_t;

struct fe_multi {
    fe_mcmd_t **cmds;
    int n, cap;
    int count;  /* commands queued, also those dropped after an error */
    size_t est; /* estimated record bytes of the queued commands */
    int failed; /* a queue-time error: EXEC answers EXECABORT */
    /* The record, once built at EXEC (kept when the ring is full, so a
     * retry does not run the frontend's commands twice). */
    int built;
    int needs_store;
    int final_db;
    buf_t rec;
    uint32_t *arg_off, *arg_len;
    int argc, arg_cap;
    /* With the record: the final's layout (cmd: the record's argument the
     * value is in, arg: its canonical argument), in the group's order. */
    fe_bigval_t *layout;
    int nlayout, layout_cap;
};

typedef struct fe_wkey {
    char *key;
    uint32_t len;
    int db;
    uint64_t lsn;
    int64_t time_ms;
} fe_wkey_t;

struct fe_watch {
    fe_wkey_t *keys;
    uint32_t n, cap;
    uint32_t *set;    /* open addressing over keys: index + 1, 0 = empty */
    uint32_t set_cap; /* a power of two, at least twice n */
    size_t est;       /* record bytes of the keys (per-key form) */
    int mixed;        /* keys were watched at different points */
};

static void reply_static(fe_conn_t *c, const char *s)
{
    fe_reply_ready_static(c, s, strlen(s));
}

static void reply_error(fe_conn_t *c, const char *msg)
{
    buf_t b;
    buf_init(&b);
    resp_error(&b, msg);
    fe_reply_ready_buf(c, &b);
    buf_free(&b);
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        log_warn("out of memory");
        abort();
    }
    return p;
}

static void *xrealloc(void *old, size_t n)
{
    void *p = realloc(old, n ? n : 1);
    if (!p) {
        log_warn("out of memory");
        abort();
    }
    return p;
}

/* ---- the queue ---- */

static void multi_drop_commands(struct fe_multi *m)
{
    for (int i = 0; i < m->n; i++)
        free(m->cmds[i]);
    m->n = 0;
    m->est = 0;
}

static void multi_free(fe_conn_t *c)
{
    struct fe_multi *m = c->multi;
    if (!m) return;
    /* Values queued for an EXEC that will not come (DISCARD, RESET, a
     * closed connection, an error): dropped. Nothing after a final. */
    fe_big_abandon(c);
    multi_drop_commands(m);
    free(m->cmds);
    buf_free(&m->rec);
    free(m->arg_off);
    free(m->arg_len);
    free(m->layout);
    free(m);
    c->multi = NULL;
}

static void watch_free(fe_conn_t *c)
{
    struct fe_watch *w = c->watch;
    if (!w) return;
    for (uint32_t i = 0; i < w->n; i++)
        free(w->keys[i].key);
    free(w->keys);
    free(w->set);
    free(w);
    c->watch = NULL;
}

void fe_multi_clear(fe_conn_t *c)
{
    multi_free(c);
    watch_free(c);
    c->exec_wait_lsn = 0;
}

int fe_multi_count(const fe_conn_t *c)
{
    return c->multi ? c->multi->count : -1;
}

int fe_multi_failed(const fe_conn_t *c)
{
    return c->multi && c->multi->failed;
}

void fe_multi_flag_error(fe_conn_t *c)
{
    struct fe_multi *m = c->multi;
    if (!m) return;
    m->failed = 1;
    /* EXEC will only discard them: give their memory back now, and the
     * large values' parts (D58). */
    multi_drop_commands(m);
    fe_big_abandon(c);
}

/* Record bytes of the header and everything watched and queued so far;
 * with large values (a group), the final that nests it too. */
static size_t exec_estimate(const fe_conn_t *c)
{
    size_t n = 4 + 4 + EXEC_HDR_LEN;
    if (c->watch) n += c->watch->est;
    if (c->multi) n += c->multi->est;
    if (c->big.active) n += FINAL_SLACK;
    return n;
}

static uint32_t exec_arg_count(const fe_conn_t *c)
{
    return 1 + (c->watch ? c->watch->n : 0) + (c->multi ? (uint32_t)c->multi->n : 0);
}

static void reply_too_large(fe_conn_t *c)
{
    char msg[256];
    snprintf(msg, sizeof(msg),
             "ERR transaction too large: MULTI ... EXEC must fit one AtticDB log record of "
             "%zu bytes (ring-size) and %u commands and WATCHed keys",
             fe_record_max_payload(c->fe), MAX_RECORD_ARGS - 1);
    reply_error(c, msg);
}

/* Move arguments of the command being queued into the transaction's
 * group (D58) until the transaction's record fits: those that arrived as
 * chunks (core/stream.c), then the largest that may hold a large value
 * (fe_big_user_arg), whose bytes go into the group now. v gets the
 * moved ones (user arguments), lens their lengths zeroed, *est the
 * command's record bytes. Returns the count, -1 when it cannot fit,
 * -EAGAIN when the ring is full (nothing of the queue changed: the
 * command is run again, and c->big goes on where it was). */
static int queue_values(fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a, uint32_t *lens,
                        fe_bigval_t *v, size_t *est)
{
    const unsigned char **src = xmalloc((size_t)a->argc * sizeof(*src));
    int n = 0;
    /* After what earlier requests put in the group (c->big.kept). */
    uint64_t base = c->big.active ? c->big.kept : 0;
    for (int i = 1; i < a->argc; i++) {
        const fe_streamed_t *st = fe_stream_find(c, a->argv[i]);
        if (!st) continue;
        src[n] = NULL;
        v[n++] = (fe_bigval_t){0, (uint32_t)i, st->off, st->len};
        base = st->off + st->len;
        lens[i] = 0;
    }
    size_t bytes = 4 + 4 + ENCODE_SLACK + (size_t)n * VALUE_BYTES;
    for (int i = 1; i < a->argc; i++)
        bytes += 4 + (size_t)lens[i];
    size_t room = fe_record_max_payload(c->fe);
    while (exec_estimate(c) + bytes + (n && !c->big.active ? FINAL_SLACK : 0) > room) {
        /* Chunks only where writes may be logged (never on a replica:
         * its log is its leader's, D33). */
        if (!fe_writes_open(c->fe)) break;
        int best = -1;
        for (int i = 1; i < a->argc; i++)
            if (lens[i] && fe_big_user_arg(d, a->argc, i, 1) && (best < 0 || lens[i] > lens[best]))
                best = i;
        if (best < 0) break;
        src[n] = (const unsigned char *)a->argv[best];
        v[n++] = (fe_bigval_t){0, (uint32_t)best, base, lens[best]};
        base += lens[best];
        bytes = bytes - lens[best] + VALUE_BYTES;
        lens[best] = 0;
    }
    if (exec_estimate(c) + bytes + (n && !c->big.active ? FINAL_SLACK : 0) > room) {
        free(src);
        return -1;
    }
    int rc = fe_big_put(c, v, src, n);
    free(src);
    *est = bytes;
    return rc ? rc : n;
}

int fe_multi_queue(fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a)
{
    struct fe_multi *m = c->multi;
    if (m->failed) {
        /* EXEC will answer EXECABORT: nothing to keep. */
        m->count++;
        reply_static(c, "+QUEUED\r\n");
        return 0;
    }
    size_t n = (size_t)a->argc, est = 0;
    uint32_t *lens = xmalloc(n * sizeof(*lens));
    fe_bigval_t *v = xmalloc(n * sizeof(*v));
    memcpy(lens, a->lens, n * sizeof(*lens));
    int nv = exec_arg_count(c) + 1 > MAX_RECORD_ARGS ? -1 : queue_values(c, d, a, lens, v, &est);
    if (nv == -EAGAIN) {
        free(lens);
        free(v);
        return -EAGAIN;
    }
    m->count++;
    if (nv < 0) {
        free(lens);
        free(v);
        reply_too_large(c);
        fe_multi_flag_error(c);
        return 0;
    }
    size_t bytes = 0;
    for (size_t i = 0; i < n; i++)
        bytes += lens[i] + 1;
    fe_mcmd_t *q = xmalloc(sizeof(*q) + n * (sizeof(char *) + sizeof(uint32_t)) +
                           (size_t)nv * sizeof(fe_bigval_t) + bytes);
    q->d = d;
    q->argc = a->argc;
    q->argv = (const char **)(q + 1);
    q->vals = (fe_bigval_t *)(void *)(q->argv + n);
    q->lens = (uint32_t *)(void *)(q->vals + nv);
    q->nvals = nv;
    memcpy(q->vals, v, (size_t)nv * sizeof(*v));
    char *p = (char *)(q->lens + n);
    for (size_t i = 0; i < n; i++) {
        /* A moved argument is an empty string here, its own byte: the
         * encoder's arguments name it by that address (build_command). */
        memcpy(p, a->argv[i], lens[i]);
        p[lens[i]] = '\0';
        q->argv[i] = p;
        q->lens[i] = lens[i];
        p += lens[i] + 1;
    }
    free(lens);
    free(v);
    if (m->n == m->cap) {
        m->cap = m->cap ? 2 * m->cap : 8;
        m->cmds = xrealloc(m->cmds, (size_t)m->cap * sizeof(*m->cmds));
    }
    m->cmds[m->n++] = q;
    m->est += est;
    if (c->big.active) c->big.kept = c->big.off;
    reply_static(c, "+QUEUED\r\n");
    return 0;
}

/* ---- WATCH ---- */

static uint32_t wkey_hash(int db, const char *key, uint32_t len)
{
    return (uint32_t)XXH3_64bits_withSeed(key, len, (uint64_t)db);
}

static fe_wkey_t *watch_find(struct fe_watch *w, int db, const char *key, uint32_t len,
                             uint32_t **hole)
{
    if (!w->set_cap) return NULL;
    uint32_t i = wkey_hash(db, key, len) & (w->set_cap - 1);
    for (;; i = (i + 1) & (w->set_cap - 1)) {
        if (!w->set[i]) {
            if (hole) *hole = &w->set[i];
            return NULL;
        }
        fe_wkey_t *k = &w->keys[w->set[i] - 1];
        if (k->db == db && k->len == len && memcmp(k->key, key, len) == 0) return k;
    }
}

static void watch_rehash(struct fe_watch *w, uint32_t cap)
{
    free(w->set);
    w->set = calloc(cap, sizeof(*w->set));
    if (!w->set) {
        log_warn("out of memory");
        abort();
    }
    w->set_cap = cap;
    for (uint32_t k = 0; k < w->n; k++) {
        uint32_t i = wkey_hash(w->keys[k].db, w->keys[k].key, w->keys[k].len) & (cap - 1);
        while (w->set[i])
            i = (i + 1) & (cap - 1);
        w->set[i] = k + 1;
    }
}

static size_t wkey_bytes(uint32_t len)
{
    return 4 + EXEC_KEY_POINT + (size_t)len;
}

static int cmd_watch(fe_conn_t *c, const fe_args_t *a)
{
    size_t est = 0;
    for (int i = 1; i < a->argc; i++)
        est += wkey_bytes(a->lens[i]);
    if (exec_arg_count(c) + (uint32_t)(a->argc - 1) > MAX_RECORD_ARGS ||
        exec_estimate(c) + est > fe_record_max_payload(c->fe)) {
        reply_too_large(c);
        return 0;
    }
    if (!c->watch) {
        c->watch = calloc(1, sizeof(*c->watch));
        if (!c->watch) abort();
    }
    struct fe_watch *w = c->watch;
    fe_t *fe = c->fe;
    uint64_t durable = atomic_load_explicit(&fe->shm->durable_lsn, memory_order_acquire);
    uint64_t lsn = durable > c->last_write_end ? durable : c->last_write_end;
    int64_t now = shm_now_ms();
    for (int i = 1; i < a->argc; i++) {
        if (2 * (w->n + 1) > w->set_cap) watch_rehash(w, w->set_cap ? 2 * w->set_cap : 16);
        uint32_t *hole = NULL;
        /* A key watched already keeps its first watch point, as in Redis. */
        if (watch_find(w, c->db, a->argv[i], a->lens[i], &hole)) continue;
        if (w->n == w->cap) {
            w->cap = w->cap ? 2 * w->cap : 8;
            w->keys = xrealloc(w->keys, (size_t)w->cap * sizeof(*w->keys));
        }
        fe_wkey_t *k = &w->keys[w->n];
        k->key = xmalloc(a->lens[i]);
        memcpy(k->key, a->argv[i], a->lens[i]);
        k->len = a->lens[i];
        k->db = c->db;
        k->lsn = lsn;
        k->time_ms = now;
        if (w->n && (w->keys[0].lsn != lsn || w->keys[0].time_ms != now)) w->mixed = 1;
        *hole = ++w->n;
        w->est += wkey_bytes(k->len);
    }
    reply_static(c, "+OK\r\n");
    return 0;
}

/* ---- EXEC: building the record ---- */

static unsigned char *rec_arg(struct fe_multi *m, size_t len)
{
    if (m->argc == m->arg_cap) {
        m->arg_cap = m->arg_cap ? 2 * m->arg_cap : 16;
        m->arg_off = xrealloc(m->arg_off, (size_t)m->arg_cap * sizeof(*m->arg_off));
        m->arg_len = xrealloc(m->arg_len, (size_t)m->arg_cap * sizeof(*m->arg_len));
    }
    buf_reserve(&m->rec, len);
    m->arg_off[m->argc] = (uint32_t)m->rec.len;
    m->arg_len[m->argc] = (uint32_t)len;
    m->argc++;
    unsigned char *p = (unsigned char *)m->rec.data + m->rec.len;
    m->rec.len += len;
    return p;
}

static void add_payload(struct fe_multi *m, cmd_id_t op, int db, int argc,
                        const unsigned char *const *argv, const uint32_t *lens)
{
    size_t n = rec_cmd_payload_size((uint16_t)argc, lens);
    rec_encode_payload(rec_arg(m, n), REC_OP_DB(op, db), (uint16_t)argc, argv, lens);
}

/* A finished reply (b, then reset) as a CMD_LITERAL payload. */
static void add_literal(struct fe_multi *m, int db, buf_t *b)
{
    const unsigned char *argv[1] = {(const unsigned char *)b->data};
    uint32_t lens[1] = {(uint32_t)b->len};
    add_payload(m, CMD_LITERAL, db, 1, argv, lens);
    buf_reset(b);
}

static void add_literal_str(struct fe_multi *m, int db, const char *s)
{
    buf_t b = {(char *)s, strlen(s), 0};
    const unsigned char *argv[1] = {(const unsigned char *)b.data};
    uint32_t lens[1] = {(uint32_t)b.len};
    add_payload(m, CMD_LITERAL, db, 1, argv, lens);
}

static void add_value(struct fe_multi *m, uint32_t at, uint32_t arg, const fe_bigval_t *v)
{
    if (m->nlayout == m->layout_cap) {
        m->layout_cap = m->layout_cap ? 2 * m->layout_cap : 8;
        m->layout = xrealloc(m->layout, (size_t)m->layout_cap * sizeof(*m->layout));
    }
    m->layout[m->nlayout++] = (fe_bigval_t){at, arg, v->off, v->len};
}

/* A queued write's large values (D58) at the canonical arguments its
 * encoding put them (the encoder passes the user's argument through, so
 * the empty string's address names it), as payload `at` of the record.
 * Returns 0, or -1 when one is not where a large value may be (no
 * encoder of ours does that: the command answers an error then). */
static int place_values(struct fe_multi *m, const fe_mcmd_t *q, const fe_enc_t *e, uint32_t at)
{
    int first = m->nlayout;
    for (int k = 0; k < q->nvals; k++) {
        const unsigned char *p = (const unsigned char *)q->argv[q->vals[k].arg];
        int j = 0;
        while (j < e->argc && e->argv[j] != p)
            j++;
        if (j == e->argc || !cmd_big_value_arg(e->op, (uint32_t)j, (uint32_t)e->argc)) {
            m->nlayout = first;
            return -1;
        }
        add_value(m, at, (uint32_t)j, &q->vals[k]);
    }
    return 0;
}

/* One queued command's payload, argument `at` of the record. Runs what
 * the frontend answers (SELECT included: *db follows it); c->db is the
 * transaction's database. A command whose large values (D58) it does not
 * use (an error, a literal) leaves them out of the layout: the store
 * drops them with the group. */
static void build_command(fe_conn_t *c, struct fe_multi *m, fe_mcmd_t *q, int *db, buf_t *lit,
                          uint32_t at)
{
    /* SORT without STORE is a read (D47). */
    const cmd_desc_t *d = cmd_runs_as(q->d, q->argc, q->argv, q->lens);
    fe_args_t a = {.argc = q->argc, .argv = q->argv, .lens = q->lens};
    if (d->id == CMD_SELECT) {
        int n = fe_select_db(c, q->argv[1], q->lens[1], lit);
        add_literal(m, *db, lit);
        if (n >= 0) *db = c->db = n;
    } else if (d->id == CMD_UNWATCH) {
        add_literal_str(m, *db, "+OK\r\n"); /* EXEC unwatches anyway */
    } else if (d->route == CMD_ROUTE_WRITE) {
        fe_encode_fn encode = fe_encoder(d->id);
        fe_enc_t e;
        fe_enc_init(&e);
        if (!encode) {
            char msg[96];
            snprintf(msg, sizeof(msg), "ERR command '%s' is not implemented", d->name);
            resp_error(lit, msg);
            add_literal(m, *db, lit);
        } else if (encode(c, d, &a, &e) != 0) {
            add_literal_str(m, *db, e.err);
            fe_enc_release(&e);
        } else if (e.argc > MAX_RECORD_ARGS) {
            add_literal_str(
                m, *db, "-ERR too many arguments for one AtticDB log record (at most 65535)\r\n");
        } else if (place_values(m, q, &e, at)) {
            resp_error(lit, "ERR a large value of this command has no place in its log record");
            add_literal(m, *db, lit);
        } else {
            add_payload(m, e.op, *db, e.argc, e.argv, e.lens);
            m->needs_store = 1;
        }
        fe_enc_release(&e);
    } else if (d->route == CMD_ROUTE_READ) {
        const char *sort_err = d->id == CMD_SORT_RO ? fe_sort_refused(c, d, &a) : NULL;
        if (sort_err) {
            resp_error(lit, sort_err);
            add_literal(m, *db, lit);
        } else if (q->argc - 1 > MAX_RECORD_ARGS) {
            add_literal_str(m, *db, "-ERR too many arguments (at most 65535 keys per read)\r\n");
        } else {
            add_payload(m, d->id, *db, q->argc - 1, (const unsigned char *const *)(q->argv + 1),
                        q->lens + 1);
            m->needs_store = 1;
            /* A read's payload is the user's arguments after the name. */
            for (int k = 0; k < q->nvals; k++)
                add_value(m, at, q->vals[k].arg - 1, &q->vals[k]);
        }
    } else {
        c->fe->cmd_hooks->local(c, d, q->argc, q->argv, q->lens, lit);
        add_literal(m, *db, lit);
    }
    q->run_db = *db;
}

static int by_offset(const void *x, const void *y)
{
    const fe_bigval_t *a = x, *b = y;
    return a->off < b->off ? -1 : a->off > b->off;
}

static void build_exec(fe_conn_t *c, struct fe_multi *m)
{
    struct fe_watch *w = c->watch;
    uint32_t nwatch = w ? w->n : 0;
    int per_key = w && w->mixed;
    buf_reset(&m->rec);
    m->argc = 0;
    unsigned char *h = rec_arg(m, EXEC_HDR_LEN);
    cmd_put_i64(h, nwatch ? (int64_t)w->keys[0].lsn : 0);
    cmd_put_i64(h + 8, nwatch ? w->keys[0].time_ms : 0);
    cmd_put_u32(h + 16, nwatch);
    cmd_put_u32(h + 20, (per_key ? EXEC_PER_KEY : 0) | (c->proto >= 3 ? EXEC_RESP3 : 0));
    for (uint32_t i = 0; i < nwatch; i++) {
        const fe_wkey_t *k = &w->keys[i];
        size_t head = per_key ? EXEC_KEY_POINT : 1;
        unsigned char *p = rec_arg(m, head + k->len);
        p[0] = (unsigned char)k->db;
        if (per_key) {
            cmd_put_i64(p + 1, (int64_t)k->lsn);
            cmd_put_i64(p + 9, k->time_ms);
        }
        memcpy(p + head, k->key, k->len);
    }
    m->needs_store = nwatch > 0;
    m->nlayout = 0;
    int db0 = c->db, db = c->db;
    buf_t lit;
    buf_init(&lit);
    for (int i = 0; i < m->n; i++)
        build_command(c, m, m->cmds[i], &db, &lit, 1 + nwatch + (uint32_t)i);
    buf_free(&lit);
    /* The final's layout goes in the group's order. */
    if (m->nlayout > 1) qsort(m->layout, (size_t)m->nlayout, sizeof(*m->layout), by_offset);
    c->db = db0;
    m->final_db = db;
    m->built = 1;
}

/* ---- EXEC: running it ---- */

static void exec_done(fe_conn_t *c)
{
    struct fe_multi *m = c->multi;
    /* Each is counted (and shown to MONITOR) in the database it ran in,
     * as Redis shows a command once it ran: a SELECT with its target. */
    int db = c->db;
    c->exec_counting = 1;
    for (int i = 0; i < m->n; i++) {
        fe_mcmd_t *q = m->cmds[i];
        fe_args_t a = {q->argc, q->argv, q->lens};
        c->db = q->run_db;
        c->fe->cmd_hooks->counted(c, q->d, &a);
    }
    c->db = db;
    c->exec_counting = 0;
    multi_free(c);
    watch_free(c);
}

/* All literals and nothing watched: EXEC's reply, without the store. */
static void exec_reply_here(fe_conn_t *c, struct fe_multi *m)
{
    buf_t b;
    buf_init(&b);
    resp_array(&b, m->argc - 1);
    for (int i = 1; i < m->argc; i++) {
        const char *p = m->rec.data + m->arg_off[i];
        buf_append(&b, p + 8, m->arg_len[i] - 8); /* op+db, argc, len, reply */
    }
    fe_reply_ready_buf(c, &b);
    buf_free(&b);
    c->db = m->final_db;
}

static int cmd_exec(fe_conn_t *c)
{
    struct fe_multi *m = c->multi;
    if (m->failed) {
        fe_multi_clear(c);
        reply_static(c, "-EXECABORT Transaction discarded because of previous errors.\r\n");
        return 0;
    }
    if (!m->built) {
        int store = c->watch && c->watch->n;
        for (int i = 0; i < m->n && !store; i++)
            store =
                m->cmds[i]->d->route == CMD_ROUTE_WRITE || m->cmds[i]->d->route == CMD_ROUTE_READ;
        if (store) {
            /* As a write: earlier reads of this connection must not see it. */
            if (c->reads_outstanding) return -EBUSY;
            if (fe_write_refused(c)) {
                fe_multi_clear(c);
                return 0;
            }
        }
        build_exec(c, m);
        /* Values no command took (it answers an error): dropped now. */
        if (!m->nlayout) fe_big_abandon(c);
        size_t payload = 0;
        if (m->argc <= MAX_RECORD_ARGS)
            payload = rec_cmd_payload_size((uint16_t)m->argc, m->arg_len);
        if (m->nlayout) payload = fe_big_final_size(payload, m->nlayout);
        if (m->argc > MAX_RECORD_ARGS || payload > fe_record_max_payload(c->fe)) {
            char msg[256];
            snprintf(msg, sizeof(msg),
                     "ERR transaction too large: its log record needs %zu bytes and %d arguments, "
                     "ring-size allows %zu bytes and there may be 65535",
                     payload + REC_HDR_SIZE, m->argc, fe_record_max_payload(c->fe) + REC_HDR_SIZE);
            fe_multi_clear(c);
            reply_error(c, msg);
            return 0;
        }
    }
    if (!m->needs_store) {
        exec_reply_here(c, m);
        exec_done(c);
        return 0;
    }
    const unsigned char **argv = xmalloc((size_t)m->argc * sizeof(*argv));
    for (int i = 0; i < m->argc; i++)
        argv[i] = (const unsigned char *)m->rec.data + m->arg_off[i];
    int rc;
    if (m->nlayout) {
        /* Large values in the group (D58): the final nests the whole
         * transaction and says where each value is. */
        size_t n = rec_cmd_payload_size((uint16_t)m->argc, m->arg_len);
        unsigned char *body = xmalloc(n);
        uint16_t opdb = REC_OP_DB(CMD_EXEC, c->db);
        rec_encode_payload(body, opdb, (uint16_t)m->argc, (const unsigned char *const *)argv,
                           m->arg_len);
        rc = fe_big_final(c, opdb, body, n, m->layout, m->nlayout);
        free(body);
    } else {
        rc = fe_submit_record(c, REC_OP_DB(CMD_EXEC, c->db), 1, m->argc,
                              (const unsigned char *const *)argv, m->arg_len);
    }
    free(argv);
    if (rc == -EAGAIN) return rc; /* ring full: EXEC again soon, record kept */
    if (rc != 0) {
        fe_multi_clear(c);
        reply_static(c, "-ERR transaction too large for one AtticDB log record\r\n");
        return 0;
    }
    if (m->final_db != c->db) {
        if (c->watch && c->watch->n) {
            /* The store may abort it: the connection's database after it
             * is known with its reply (fe_multi_write_reply). */
            c->exec_wait_lsn = c->tail->id + 1;
            c->exec_wait_end = c->last_write_end;
            c->exec_wait_db = m->final_db;
        } else {
            c->db = m->final_db;
        }
    }
    exec_done(c);
    return 0;
}

void fe_multi_exec_abort(fe_conn_t *c, const char *why, size_t len)
{
    fe_multi_clear(c);
    if (len >= 2 && why[len - 2] == '\r' && why[len - 1] == '\n') len -= 2; /* a whole reply */
    char msg[512];
    snprintf(msg, sizeof(msg), "EXECABORT Transaction discarded because of: %.*s",
             (int)(len > 400 ? 400 : len), why);
    reply_error(c, msg); /* resp_error turns CR and LF into spaces */
}

int fe_multi_exec_waiting(fe_conn_t *c)
{
    if (!c->exec_wait_lsn) return 0;
    fe_t *fe = c->fe;
    if (atomic_load(&fe->shm->logger_state) == LOGGER_FAILED &&
        atomic_load_explicit(&fe->shm->durable_lsn, memory_order_acquire) < c->exec_wait_end) {
        /* It will never be applied (its reply is an error): no SELECT. */
        c->exec_wait_lsn = 0;
        return 0;
    }
    return 1;
}

void fe_multi_write_reply(fe_conn_t *c, uint64_t lsn, const char *reply, size_t len)
{
    if (c->exec_wait_lsn != lsn + 1) return;
    int aborted = (len == 5 && memcmp(reply, "*-1\r\n", 5) == 0) ||
                  (len == 3 && memcmp(reply, "_\r\n", 3) == 0);
    if (!aborted) c->db = c->exec_wait_db;
    c->exec_wait_lsn = 0;
}

/* ---- the commands ---- */

int fe_multi_command(fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a)
{
    switch (d->id) {
    case CMD_MULTI:
        if (c->multi) {
            reply_static(c, "-ERR MULTI calls can not be nested\r\n");
            return 0;
        }
        c->multi = calloc(1, sizeof(*c->multi));
        if (!c->multi) abort();
        buf_init(&c->multi->rec);
        reply_static(c, "+OK\r\n");
        return 0;
    case CMD_EXEC:
        if (!c->multi) {
            reply_static(c, "-ERR EXEC without MULTI\r\n");
            return 0;
        }
        return cmd_exec(c);
    case CMD_DISCARD:
        if (!c->multi) {
            reply_static(c, "-ERR DISCARD without MULTI\r\n");
            return 0;
        }
        fe_multi_clear(c);
        reply_static(c, "+OK\r\n");
        return 0;
    case CMD_WATCH:
        if (c->multi) {
            reply_static(c, "-ERR WATCH inside MULTI is not allowed\r\n");
            return 0;
        }
        return cmd_watch(c, a);
    case CMD_UNWATCH:
        watch_free(c);
        reply_static(c, "+OK\r\n");
        return 0;
    default:
        reply_error(c, "ERR internal: not a transaction command");
        return 0;
    }
}
