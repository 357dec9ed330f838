/*
 * pubsub.c - Pub/Sub in a frontend process (D37): SUBSCRIBE and its
 * family, PUBLISH, SPUBLISH, PUBSUB, and the delivery of messages that
 * other frontends (or the store) put in the shared broadcast ring
 * (common/pubsub.h).
 *
 * Each frontend keeps its subscribers in its own memory: a hash of the
 * (kind, name) pairs subscribed here, each with its connections in
 * subscription order, and per connection the list of its pairs. What other
 * frontends need (how many subscribers each name has here, for PUBLISH's
 * count and PUBSUB) it writes into the shared table, under its lock, at
 * every change. A PUBLISH delivers to this frontend's subscribers at once
 * and, when another frontend has a receiver, appends the message to the
 * ring and wakes them; each frontend reads the ring from its own cursor on
 * its wake-up and at every tick, and skips its own messages. One
 * publisher's messages thus reach a subscriber in order, by one path or
 * the other. A frontend that falls a whole ring behind disconnects its
 * subscribers (they lost messages, as if over their output-buffer limit)
 * and goes on from the ring's head.
 *
 * A crash here is a frontend's crash: its subscribers lose their
 * connection; its successor clears the counts it left (ps_slot_reset) and
 * starts reading at the ring's head. Messages are never durable.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/admin/admin.h"
#include "frontend/core/core.h"
#include "glob.h"
#include "log.h"
#include "pubsub.h"

#define PS_LOCAL_BUCKETS 4096

/* One (kind, name) with subscribers on this frontend. */
typedef struct ps_local {
    struct ps_local *next;       /* hash chain */
    struct ps_local *pprev_next; /* patterns: the list of them (pattern order) */
    int kind;
    uint64_t hash;
    fe_conn_t **subs; /* in subscription order */
    uint32_t nsubs, cap;
    uint32_t len;
    char name[];
} ps_local_t;

typedef struct fe_pubsub {
    ps_local_t *buckets[PS_LOCAL_BUCKETS];
    ps_local_t *patterns;  /* newest first */
    uint64_t nsubscribers; /* connections with a subscription */
    uint64_t cursor;       /* the next ring position to read */
    char *rbuf;
    size_t rcap;
    buf_t msg; /* a message being encoded */
} fe_pubsub_t;

/* A connection's subscriptions (c->admin->pubsub), in subscription order. */
typedef struct fe_ps_conn {
    ps_local_t **items;
    uint32_t n, cap;
    uint32_t count[3]; /* by enum ps_kind */
} fe_ps_conn_t;

static const char *const KIND_SUB[3] = {"subscribe", "psubscribe", "ssubscribe"};
static const char *const KIND_UNSUB[3] = {"unsubscribe", "punsubscribe", "sunsubscribe"};

static fe_pubsub_t *state(fe_t *fe)
{
    return fe->admin->pubsub;
}

static uint64_t local_hash(int kind, const char *s, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull ^ (uint64_t)(kind + 1);
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
    return h;
}

static ps_local_t *local_find(fe_pubsub_t *p, int kind, const char *name, size_t len, uint64_t h)
{
    for (ps_local_t *e = p->buckets[h % PS_LOCAL_BUCKETS]; e; e = e->next)
        if (e->hash == h && e->kind == kind && e->len == len && !memcmp(e->name, name, len))
            return e;
    return NULL;
}

static void *grow(void *arr, uint32_t *cap, size_t elem)
{
    uint32_t ncap = *cap ? *cap * 2 : 4;
    void *n = realloc(arr, (size_t)ncap * elem);
    if (!n) {
        log_warn("out of memory");
        abort();
    }
    *cap = ncap;
    return n;
}

/* Tell the other frontends how many subscribers e has here now. */
static void share_count(fe_t *fe, ps_local_t *e)
{
    if (ps_set_count(shm_pubsub(fe->shm), e->kind, e->name, e->len, fe->slot, e->nsubs) != 0 &&
        e->nsubs == 1)
        log_info("Pub/Sub: '%.*s' is served by this frontend only (long name, or the shared "
                 "table is full)",
                 (int)(e->len > 64 ? 64 : e->len), e->name);
}

static void conn_count_changed(fe_conn_t *c, fe_ps_conn_t *pc)
{
    uint32_t before = c->subscriptions;
    c->subscriptions = pc->count[0] + pc->count[1] + pc->count[2];
    fe_pubsub_t *p = state(c->fe);
    if (!before && c->subscriptions) p->nsubscribers++;
    if (before && !c->subscriptions) p->nsubscribers--;
}

/* Subscribe c to (kind, name): 1 when new, 0 when it already was. */
static int sub_add(fe_conn_t *c, int kind, const char *name, size_t len)
{
    fe_pubsub_t *p = state(c->fe);
    uint64_t h = local_hash(kind, name, len);
    ps_local_t *e = local_find(p, kind, name, len, h);
    if (!e) {
        e = calloc(1, sizeof(*e) + len + 1);
        if (!e) abort();
        e->kind = kind;
        e->hash = h;
        e->len = (uint32_t)len;
        memcpy(e->name, name, len);
        e->next = p->buckets[h % PS_LOCAL_BUCKETS];
        p->buckets[h % PS_LOCAL_BUCKETS] = e;
        if (kind == PS_PATTERN) {
            e->pprev_next = p->patterns;
            p->patterns = e;
        }
    }
    for (uint32_t i = 0; i < e->nsubs; i++)
        if (e->subs[i] == c) return 0;
    if (e->nsubs == e->cap) e->subs = grow(e->subs, &e->cap, sizeof(*e->subs));
    e->subs[e->nsubs++] = c;
    share_count(c->fe, e);
    fe_ps_conn_t *pc = c->admin->pubsub;
    if (!pc && !(pc = c->admin->pubsub = calloc(1, sizeof(*pc)))) abort();
    if (pc->n == pc->cap) pc->items = grow(pc->items, &pc->cap, sizeof(*pc->items));
    pc->items[pc->n++] = e;
    pc->count[kind]++;
    conn_count_changed(c, pc);
    return 1;
}

static void local_free(fe_pubsub_t *p, ps_local_t *e)
{
    ps_local_t **pp = &p->buckets[e->hash % PS_LOCAL_BUCKETS];
    while (*pp != e)
        pp = &(*pp)->next;
    *pp = e->next;
    if (e->kind == PS_PATTERN) {
        pp = &p->patterns;
        while (*pp != e)
            pp = &(*pp)->pprev_next;
        *pp = e->pprev_next;
    }
    free(e->subs);
    free(e);
}

/* Unsubscribe c from e, item i of its list. */
static void sub_remove_at(fe_conn_t *c, fe_ps_conn_t *pc, uint32_t i)
{
    ps_local_t *e = pc->items[i];
    memmove(pc->items + i, pc->items + i + 1, (pc->n - i - 1) * sizeof(*pc->items));
    pc->n--;
    pc->count[e->kind]--;
    conn_count_changed(c, pc);
    for (uint32_t k = 0; k < e->nsubs; k++) {
        if (e->subs[k] != c) continue;
        memmove(e->subs + k, e->subs + k + 1, (e->nsubs - k - 1) * sizeof(*e->subs));
        e->nsubs--;
        break;
    }
    share_count(c->fe, e);
    if (!e->nsubs) local_free(state(c->fe), e);
}

/* Unsubscribe c from (kind, name): 1 when it was subscribed. */
static int sub_remove(fe_conn_t *c, int kind, const char *name, size_t len)
{
    fe_ps_conn_t *pc = c->admin->pubsub;
    if (!pc) return 0;
    for (uint32_t i = 0; i < pc->n; i++) {
        ps_local_t *e = pc->items[i];
        if (e->kind == kind && e->len == len && !memcmp(e->name, name, len)) {
            sub_remove_at(c, pc, i);
            return 1;
        }
    }
    return 0;
}

/* ---- replies and messages ---- */

/* ["subscribe", name, count]: count is channels + patterns, or shard
 * channels for the S- family, as Redis 7.0 counts them. */
static void reply_sub(fe_conn_t *c, const char *what, const char *name, size_t len, int kind,
                      buf_t *out)
{
    /* A confirmation is sent whatever CLIENT REPLY OFF or SKIP say, in
     * RESP2 as in RESP3 (Redis' CLIENT_PUSHING), as messages are. */
    c->reply_suppress = 0;
    fe_ps_conn_t *pc = c->admin->pubsub;
    uint32_t n = 0;
    if (pc) n = kind == PS_SHARD ? pc->count[PS_SHARD] : pc->count[0] + pc->count[1];
    resp_push(out, c->proto, 3);
    resp_bulk_cstr(out, what);
    if (name)
        resp_bulk(out, name, len);
    else
        resp_null3(out, c->proto);
    resp_integer(out, n);
}

static void subscribe_many(fe_conn_t *c, int kind, int argc, const char **argv,
                           const uint32_t *lens, buf_t *out)
{
    /* What the ring holds already was published before this SUBSCRIBE:
     * it goes to the subscribers there were, not to this one. */
    fe_pubsub_poll(c->fe);
    for (int i = 1; i < argc; i++) {
        sub_add(c, kind, argv[i], lens[i]);
        reply_sub(c, KIND_SUB[kind], argv[i], lens[i], kind, out);
    }
}

static void unsubscribe_many(fe_conn_t *c, int kind, int argc, const char **argv,
                             const uint32_t *lens, buf_t *out)
{
    if (argc > 1) {
        for (int i = 1; i < argc; i++) {
            sub_remove(c, kind, argv[i], lens[i]);
            reply_sub(c, KIND_UNSUB[kind], argv[i], lens[i], kind, out);
        }
        return;
    }
    /* All of this kind, oldest first; none at all: one reply with a null. */
    int any = 0;
    fe_ps_conn_t *pc = c->admin->pubsub;
    for (uint32_t i = 0; pc && i < pc->n;) {
        ps_local_t *e = pc->items[i];
        if (e->kind != kind) {
            i++;
            continue;
        }
        /* The name outlives the entry only in this copy. */
        char *name = malloc(e->len ? e->len : 1);
        if (!name) abort();
        size_t len = e->len;
        memcpy(name, e->name, len);
        sub_remove_at(c, pc, i);
        reply_sub(c, KIND_UNSUB[kind], name, len, kind, out);
        free(name);
        any = 1;
    }
    if (!any) reply_sub(c, KIND_UNSUB[kind], NULL, 0, kind, out);
}

static void encode_message(buf_t *b, int proto, int kind, const char *pat, size_t plen,
                           const char *chan, size_t clen, const char *msg, size_t mlen)
{
    buf_reset(b);
    if (pat) {
        resp_push(b, proto, 4);
        resp_bulk_cstr(b, "pmessage");
        resp_bulk(b, pat, plen);
    } else {
        resp_push(b, proto, 3);
        resp_bulk_cstr(b, kind == PS_SHARD ? "smessage" : "message");
    }
    resp_bulk(b, chan, clen);
    resp_bulk(b, msg, mlen);
}

/* Deliver to this frontend's subscribers: channel subscribers first, then
 * each matching pattern (not for shard channels). Returns the receivers. */
static uint64_t deliver_local(fe_t *fe, int kind, const char *chan, size_t clen, const char *msg,
                              size_t mlen)
{
    fe_pubsub_t *p = state(fe);
    uint64_t n = 0;
    if (!p->nsubscribers) return 0;
    ps_local_t *e = local_find(p, kind, chan, clen, local_hash(kind, chan, clen));
    /* Encoded once per protocol in use. */
    buf_t b3;
    buf_init(&b3);
    int have2 = 0, have3 = 0;
    for (uint32_t i = 0; e && i < e->nsubs; i++) {
        fe_conn_t *c = e->subs[i];
        buf_t *b = c->proto >= 3 ? &b3 : &p->msg;
        int *have = c->proto >= 3 ? &have3 : &have2;
        if (!*have) encode_message(b, c->proto, kind, NULL, 0, chan, clen, msg, mlen);
        *have = 1;
        fe_conn_push(c, b->data, b->len);
        n++;
    }
    buf_free(&b3);
    if (kind != PS_CHANNEL) return n;
    for (ps_local_t *pe = p->patterns; pe; pe = pe->pprev_next) {
        if (!glob_match(pe->name, pe->len, chan, clen, 0)) continue;
        for (uint32_t i = 0; i < pe->nsubs; i++) {
            fe_conn_t *c = pe->subs[i];
            encode_message(&p->msg, c->proto, kind, pe->name, pe->len, chan, clen, msg, mlen);
            fe_conn_push(c, p->msg.data, p->msg.len);
            n++;
        }
    }
    return n;
}

/* ---- the commands ---- */

void fe_cmd_subscribe(fe_conn_t *c, int argc, const char **argv, const uint32_t *lens, buf_t *out)
{
    subscribe_many(c, PS_CHANNEL, argc, argv, lens, out);
}

void fe_cmd_psubscribe(fe_conn_t *c, int argc, const char **argv, const uint32_t *lens, buf_t *out)
{
    subscribe_many(c, PS_PATTERN, argc, argv, lens, out);
}

void fe_cmd_ssubscribe(fe_conn_t *c, int argc, const char **argv, const uint32_t *lens, buf_t *out)
{
    subscribe_many(c, PS_SHARD, argc, argv, lens, out);
}

void fe_cmd_unsubscribe(fe_conn_t *c, int argc, const char **argv, const uint32_t *lens, buf_t *out)
{
    unsubscribe_many(c, PS_CHANNEL, argc, argv, lens, out);
}

void fe_cmd_punsubscribe(fe_conn_t *c, int argc, const char **argv, const uint32_t *lens,
                         buf_t *out)
{
    unsubscribe_many(c, PS_PATTERN, argc, argv, lens, out);
}

void fe_cmd_sunsubscribe(fe_conn_t *c, int argc, const char **argv, const uint32_t *lens,
                         buf_t *out)
{
    unsubscribe_many(c, PS_SHARD, argc, argv, lens, out);
}

uint64_t fe_pubsub_publish(fe_t *fe, int kind, const char *chan, size_t clen, const char *msg,
                           size_t mlen)
{
    ps_shm_t *ps = shm_pubsub(fe->shm);
    int nfe = (int)fe->shm->nfrontends;
    uint64_t remote = ps_channel_subscribers(ps, kind, chan, clen, nfe, fe->slot);
    if (kind == PS_CHANNEL) remote += ps_pattern_matches(ps, chan, clen, nfe, fe->slot);
    uint64_t n = deliver_local(fe, kind, chan, clen, msg, mlen);
    if (remote) {
        if (ps_publish(ps, kind, (unsigned)fe->slot, chan, clen, msg, mlen))
            shm_wake_pubsub(fe->shm, fe->slot);
        else
            remote = 0; /* too large for the ring: this frontend's receivers only */
    }
    return n + remote;
}

void fe_cmd_publish(fe_conn_t *c, int argc, const char **argv, const uint32_t *lens, buf_t *out)
{
    resp_integer(
        out, (long long)fe_pubsub_publish(c->fe, PS_CHANNEL, argv[1], lens[1], argv[2], lens[2]));
}

void fe_cmd_spublish(fe_conn_t *c, int argc, const char **argv, const uint32_t *lens, buf_t *out)
{
    resp_integer(out,
                 (long long)fe_pubsub_publish(c->fe, PS_SHARD, argv[1], lens[1], argv[2], lens[2]));
}

typedef struct list_arg {
    buf_t names;
    long long n;
    const char *pat;
    size_t plen;
} list_arg_t;

static void list_visit(void *argp, const char *name, size_t len, uint64_t subscribers)
{
    list_arg_t *a = argp;
    (void)subscribers;
    if (a->pat && !glob_match(a->pat, a->plen, name, len, 0)) return;
    resp_bulk(&a->names, name, len);
    a->n++;
}

/* Names of kind with a subscriber anywhere: the shared table's, then the
 * long ones only this frontend holds. */
static void pubsub_list(fe_conn_t *c, int kind, int argc, const char **argv, const uint32_t *lens,
                        buf_t *out)
{
    list_arg_t a = {.pat = argc > 2 ? argv[2] : NULL, .plen = argc > 2 ? lens[2] : 0};
    buf_init(&a.names);
    ps_each(shm_pubsub(c->fe->shm), kind, (int)c->fe->shm->nfrontends, list_visit, &a);
    fe_pubsub_t *p = state(c->fe);
    for (int b = 0; b < PS_LOCAL_BUCKETS; b++)
        for (ps_local_t *e = p->buckets[b]; e; e = e->next)
            if (e->kind == kind && e->len > PS_NAME_MAX) list_visit(&a, e->name, e->len, e->nsubs);
    resp_array(out, a.n);
    buf_append(out, a.names.data, a.names.len);
    buf_free(&a.names);
}

static uint64_t subscribers_of(fe_conn_t *c, int kind, const char *name, size_t len)
{
    if (len <= PS_NAME_MAX)
        return ps_channel_subscribers(shm_pubsub(c->fe->shm), kind, name, len,
                                      (int)c->fe->shm->nfrontends, -1);
    ps_local_t *e = local_find(state(c->fe), kind, name, len, local_hash(kind, name, len));
    return e ? e->nsubs : 0;
}

static void count_visit(void *argp, const char *name, size_t len, uint64_t subscribers)
{
    (void)name;
    (void)len;
    (void)subscribers;
    ((list_arg_t *)argp)->n++;
}

void fe_pubsub_conn_counts(const fe_conn_t *c, unsigned out[3])
{
    const fe_ps_conn_t *pc = c->admin->pubsub;
    for (int k = 0; k < 3; k++)
        out[k] = pc ? pc->count[k] : 0;
}

int fe_pubsub_conn_allowed(const fe_conn_t *c, const acl_user_t *u)
{
    const fe_ps_conn_t *pc = c->admin->pubsub;
    for (uint32_t i = 0; pc && i < pc->n; i++) {
        const ps_local_t *e = pc->items[i];
        if (!acl_channel_ok(u, e->name, e->len, e->kind == PS_PATTERN)) return 0;
    }
    return 1;
}

uint64_t fe_pubsub_count(fe_t *fe, int kind)
{
    list_arg_t a = {0};
    ps_each(shm_pubsub(fe->shm), kind, (int)fe->shm->nfrontends, count_visit, &a);
    return (uint64_t)a.n;
}

void fe_cmd_pubsub(fe_conn_t *c, int argc, const char **argv, const uint32_t *lens, buf_t *out)
{
    const char *sub = argv[1];
    size_t sl = lens[1];
    if (fe_word_eq(sub, sl, "channels") || fe_word_eq(sub, sl, "shardchannels")) {
        if (argc > 3) {
            /* Redis' text for a subcommand it checks the arity of itself. */
            char msg[256];
            snprintf(msg, sizeof(msg),
                     "ERR unknown subcommand or wrong number of arguments for '%.*s'. Try "
                     "PUBSUB HELP.",
                     (int)(sl > 128 ? 128 : sl), sub);
            resp_error_clean(msg);
            resp_error(out, msg);
            return;
        }
        pubsub_list(c, fe_word_eq(sub, sl, "channels") ? PS_CHANNEL : PS_SHARD, argc, argv, lens,
                    out);
    } else if (fe_word_eq(sub, sl, "numsub") || fe_word_eq(sub, sl, "shardnumsub")) {
        int kind = fe_word_eq(sub, sl, "numsub") ? PS_CHANNEL : PS_SHARD;
        resp_array(out, (long long)(argc - 2) * 2);
        for (int i = 2; i < argc; i++) {
            resp_bulk(out, argv[i], lens[i]);
            resp_integer(out, (long long)subscribers_of(c, kind, argv[i], lens[i]));
        }
    } else if (fe_word_eq(sub, sl, "numpat")) {
        resp_integer(out, (long long)fe_pubsub_count(c->fe, PS_PATTERN));
    } else {
        static const char *const help[] = {
            "PUBSUB <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
            "CHANNELS [<pattern>]",
            "    Return the currently active channels matching a <pattern> (default: '*').",
            "NUMPAT",
            "    Return number of subscriptions to patterns.",
            "NUMSUB [<channel> ...]",
            "    Return the number of subscribers for the specified channels, excluding",
            "    pattern subscriptions(default: no channels).",
            "SHARDCHANNELS [<pattern>]",
            "    Return the currently active shard level channels matching a <pattern> (default: "
            "'*').",
            "SHARDNUMSUB [<shardchannel> ...]",
            "    Return the number of subscribers for the specified shard level channel(s)",
            "HELP",
            "    Prints this help.",
            NULL};
        fe_reply_help(out, help);
    }
}

/* ---- the frontend's side: start, wake-ups, connections closing ---- */

int fe_pubsub_start(fe_t *fe)
{
    fe_pubsub_t *p = calloc(1, sizeof(*p));
    if (!p) return -1;
    buf_init(&p->msg);
    fe->admin->pubsub = p;
    ps_shm_t *ps = shm_pubsub(fe->shm);
    ps_slot_reset(ps, fe->slot); /* our predecessor's subscribers are gone */
    p->cursor = atomic_load(&ps->head);
    return 0;
}

void fe_pubsub_on_close(fe_conn_t *c)
{
    fe_ps_conn_t *pc = c->admin->pubsub;
    if (!pc) return;
    while (pc->n)
        sub_remove_at(c, pc, pc->n - 1);
    free(pc->items);
    free(pc);
    c->admin->pubsub = NULL;
}

void fe_pubsub_reset(fe_conn_t *c)
{
    fe_pubsub_on_close(c);
}

/* Lost messages: every subscriber here is closed, as one over its
 * output-buffer limit would be (D37). */
static void drop_subscribers(fe_t *fe)
{
    uint64_t n = 0;
    for (fe_conn_t *c = fe->conns; c; c = c->next)
        if (c->subscriptions || c->admin->monitor) {
            fe_conn_kill(c);
            n++;
        }
    log_warn("Pub/Sub: this frontend fell a whole ring behind the publishers; %" PRIu64
             " subscribers and MONITOR clients disconnected",
             n);
}

void fe_pubsub_poll(fe_t *fe)
{
    fe_pubsub_t *p = state(fe);
    if (!p) return;
    ps_shm_t *ps = shm_pubsub(fe->shm);
    atomic_store(&fe->shm->fe[fe->slot].pubsub_wake, 0); /* before reading: none is lost */
    if (!p->nsubscribers && !atomic_load_explicit(&ps->monitors[fe->slot], memory_order_relaxed)) {
        p->cursor = atomic_load(&ps->head);
        return;
    }
    for (;;) {
        int r = ps_read(ps, &p->cursor, &p->rbuf, &p->rcap);
        if (r == 0) return;
        if (r < 0) {
            drop_subscribers(fe);
            return;
        }
        ps_msg_t h;
        memcpy(&h, p->rbuf, sizeof(h));
        if (h.origin == (unsigned)fe->slot) continue; /* delivered when published */
        const char *chan = p->rbuf + sizeof(h);
        if (h.kind == PS_MONITOR)
            fe_monitor_deliver(fe, chan + h.chan_len, h.msg_len);
        else
            deliver_local(fe, h.kind, chan, h.chan_len, chan + h.chan_len, h.msg_len);
    }
}
