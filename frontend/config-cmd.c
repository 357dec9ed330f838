/*
 * config-cmd.c - CONFIG GET / SET / RESETSTAT / HELP, and the runtime
 * settings every frontend shares. Run by the frontends.
 *
 * The settings CONFIG SET may change live in shm (shm_config_t), not in
 * the config_t each process inherited: a CONFIG SET through any frontend
 * applies to all. A frontend caches what it reads per event (limits,
 * timeouts) and re-reads when the shared version moves, which costs one
 * load per event. CONFIG SET of several pairs is all or nothing: every
 * name is checked, then every value parsed, and only then anything
 * written, under the settings lock.
 *
 * Names and texts are Redis 7.0's. Settings AtticDB reads only at start
 * (port, dir, ring-size, ...) are reported by CONFIG GET and refused by
 * CONFIG SET with Redis' "can't set immutable config".
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fe-internal.h"
#include "frontend/admin.h"
#include "glob.h"
#include "log.h"
#include "strutil.h"

/* ---- the frontend's cache ---- */

void fe_config_refresh(fe_t *fe)
{
    shm_config_t *sc = &fe->shm->admin.config;
    uint64_t v = atomic_load_explicit(&sc->version, memory_order_acquire);
    if (__builtin_expect(v == fe->cfg_version, 1)) return;
    /* The master fills shm_config_t before any frontend runs
     * (fe_admin_shm_init), so there is always something to read. */
    fe->maxclients = atomic_load(&sc->maxclients);
    fe->timeout_s = atomic_load(&sc->timeout);
    fe->qbuf_limit = (uint64_t)atomic_load(&sc->client_query_buffer_limit);
    fe->obuf_hard = (uint64_t)atomic_load(&sc->obuf_hard);
    fe->obuf_soft = (uint64_t)atomic_load(&sc->obuf_soft);
    fe->obuf_soft_seconds = atomic_load(&sc->obuf_soft_seconds);
    fe->protected_mode = (int)atomic_load(&sc->protected_mode);
    fe->slowlog_slower_than = atomic_load(&sc->slowlog_slower_than);
    fe->limits.max_bulk_len = atomic_load(&sc->proto_max_bulk_len);
    log_set_level((int)atomic_load(&sc->loglevel));
    fe->cfg_version = v;
}

/* ---- the parameters ---- */

typedef struct pending {
    int64_t unused_; /* offset 0 means "no field" in param_t */
    int64_t maxclients, timeout, bulk, qbuf, hard, soft, soft_s, protected_mode, slower, maxlen,
        loglevel;
    const char *requirepass;
    size_t requirepass_len;
} pending_t;

enum kind { K_INT, K_MEM, K_BOOL, K_LOGLEVEL, K_OBUF, K_PASS, K_RO };

typedef struct param {
    const char *name;
    enum kind kind;
    int64_t lo, hi;
    size_t off; /* in pending_t, for settable ones */
} param_t;

#define OFF(f) offsetof(pending_t, f)
static const param_t params[] = {
    {"port", K_RO, 0, 0, 0},
    {"bind", K_RO, 0, 0, 0},
    {"unixsocket", K_RO, 0, 0, 0},
    {"unixsocketperm", K_RO, 0, 0, 0},
    {"dir", K_RO, 0, 0, 0},
    {"daemonize", K_RO, 0, 0, 0},
    {"databases", K_RO, 0, 0, 0},
    {"tcp-backlog", K_RO, 0, 0, 0},
    {"logfile", K_RO, 0, 0, 0},
    {"loglevel", K_LOGLEVEL, 0, 0, OFF(loglevel)},
    {"maxclients", K_INT, 1, 4294967295ll, OFF(maxclients)},
    {"timeout", K_INT, 0, INT_MAX, OFF(timeout)},
    {"protected-mode", K_BOOL, 0, 1, OFF(protected_mode)},
    {"requirepass", K_PASS, 0, 0, 0},
    {"proto-max-bulk-len", K_MEM, 1024 * 1024, LLONG_MAX, OFF(bulk)},
    {"client-query-buffer-limit", K_MEM, 1024 * 1024, LLONG_MAX, OFF(qbuf)},
    {"client-output-buffer-limit", K_OBUF, 0, 0, 0},
    {"slowlog-log-slower-than", K_INT, -1, LLONG_MAX, OFF(slower)},
    {"slowlog-max-len", K_INT, 0, LLONG_MAX, OFF(maxlen)},
    {"save", K_RO, 0, 0, 0},
    {"appendonly", K_RO, 0, 0, 0},
    {"appendfsync", K_RO, 0, 0, 0},
    {"frontends", K_RO, 0, 0, 0},
    {"ring-size", K_RO, 0, 0, 0},
    {"segment-size", K_RO, 0, 0, 0},
    {"channel-size", K_RO, 0, 0, 0},
    {"log-sync", K_RO, 0, 0, 0},
    {"respawn-limit", K_RO, 0, 0, 0},
};
#define NPARAMS (sizeof(params) / sizeof(params[0]))

static const char *const loglevels[] = {"debug", "verbose", "notice", "warning"};

static const param_t *param_find(const char *s, size_t n)
{
    for (size_t i = 0; i < NPARAMS; i++)
        if (fe_word_eq(s, n, params[i].name)) return &params[i];
    return NULL;
}

/* A parameter's current value as CONFIG GET shows it. */
static void param_value(fe_t *fe, const param_t *p, buf_t *v)
{
    const config_t *c = fe->cfg;
    shm_config_t *sc = &fe->shm->admin.config;
    const char *n = p->name;
    if (!strcmp(n, "port"))
        buf_appendf(v, "%d", c->port);
    else if (!strcmp(n, "bind")) {
        for (int i = 0; i < c->nbind; i++)
            buf_appendf(v, "%s%s", i ? " " : "", c->bind[i]);
    } else if (!strcmp(n, "unixsocket"))
        buf_appendf(v, "%s", c->unixsocket ? c->unixsocket : "");
    else if (!strcmp(n, "unixsocketperm"))
        buf_appendf(v, "%o", c->unixsocketperm);
    else if (!strcmp(n, "dir")) {
        char *abs = realpath(c->dir, NULL);
        buf_appendf(v, "%s", abs ? abs : c->dir);
        free(abs);
    } else if (!strcmp(n, "daemonize"))
        buf_appendf(v, "no");
    else if (!strcmp(n, "databases"))
        buf_appendf(v, "%d", c->databases);
    else if (!strcmp(n, "tcp-backlog"))
        buf_appendf(v, "%d", c->tcp_backlog);
    else if (!strcmp(n, "logfile"))
        buf_appendf(v, "%s", c->logfile ? c->logfile : "");
    else if (!strcmp(n, "loglevel")) {
        int64_t l = atomic_load(&sc->loglevel);
        buf_appendf(v, "%s", l >= 0 && l < 4 ? loglevels[l] : "notice");
    } else if (!strcmp(n, "maxclients"))
        buf_appendf(v, "%" PRId64, atomic_load(&sc->maxclients));
    else if (!strcmp(n, "timeout"))
        buf_appendf(v, "%" PRId64, atomic_load(&sc->timeout));
    else if (!strcmp(n, "protected-mode"))
        buf_appendf(v, "%s", atomic_load(&sc->protected_mode) ? "yes" : "no");
    else if (!strcmp(n, "requirepass")) {
        fe_shm_lock(&sc->lock);
        buf_appendf(v, "%s", sc->requirepass);
        fe_shm_unlock(&sc->lock);
    } else if (!strcmp(n, "proto-max-bulk-len"))
        buf_appendf(v, "%" PRId64, atomic_load(&sc->proto_max_bulk_len));
    else if (!strcmp(n, "client-query-buffer-limit"))
        buf_appendf(v, "%" PRId64, atomic_load(&sc->client_query_buffer_limit));
    else if (!strcmp(n, "client-output-buffer-limit"))
        /* Only the normal class means something here (no replicas, no
         * pub/sub); the others show Redis' defaults. */
        buf_appendf(v,
                    "normal %" PRId64 " %" PRId64 " %" PRId64
                    " slave 268435456 67108864 60 pubsub 33554432 8388608 60",
                    atomic_load(&sc->obuf_hard), atomic_load(&sc->obuf_soft),
                    atomic_load(&sc->obuf_soft_seconds));
    else if (!strcmp(n, "slowlog-log-slower-than"))
        buf_appendf(v, "%" PRId64, atomic_load(&sc->slowlog_slower_than));
    else if (!strcmp(n, "slowlog-max-len"))
        buf_appendf(v, "%" PRId64, atomic_load(&sc->slowlog_max_len));
    else if (!strcmp(n, "save")) { /* no snapshots: empty, as Redis with save "" */
    } else if (!strcmp(n, "appendonly"))
        buf_appendf(v, "no");
    else if (!strcmp(n, "appendfsync"))
        buf_appendf(v, "always");
    else if (!strcmp(n, "frontends"))
        buf_appendf(v, "%d", c->frontends);
    else if (!strcmp(n, "ring-size"))
        buf_appendf(v, "%" PRIu64, c->ring_size);
    else if (!strcmp(n, "segment-size"))
        buf_appendf(v, "%" PRIu64, c->segment_size);
    else if (!strcmp(n, "channel-size"))
        buf_appendf(v, "%" PRIu64, c->chan_size);
    else if (!strcmp(n, "log-sync"))
        buf_appendf(v, "%s", c->log_sync == CONFIG_SYNC_ODSYNC ? "odsync" : "fdatasync");
    else if (!strcmp(n, "respawn-limit"))
        buf_appendf(v, "%d", c->respawn_limit);
}

static void config_get(fe_conn_t *c, int argc, const char **argv, const uint32_t *lens, buf_t *out)
{
    int taken[NPARAMS] = {0};
    buf_t items, v;
    buf_init(&items);
    buf_init(&v);
    long long n = 0;
    for (int a = 2; a < argc; a++) {
        const char *pat = argv[a];
        size_t pl = lens[a];
        int is_pattern = memchr(pat, '*', pl) || memchr(pat, '?', pl) || memchr(pat, '[', pl);
        for (size_t i = 0; i < NPARAMS; i++) {
            if (taken[i]) continue;
            if (is_pattern ? !glob_match(pat, pl, params[i].name, strlen(params[i].name), 1)
                           : !fe_word_eq(pat, pl, params[i].name))
                continue;
            taken[i] = 1;
            /* An exact name is echoed as the client spelled it (Redis 7). */
            if (is_pattern)
                resp_bulk_cstr(&items, params[i].name);
            else
                resp_bulk(&items, pat, pl);
            buf_reset(&v);
            param_value(c->fe, &params[i], &v);
            resp_bulk(&items, v.data, v.len);
            n++;
        }
    }
    resp_map(out, c->proto, n);
    buf_append(out, items.data, items.len);
    buf_free(&items);
    buf_free(&v);
}

/* Redis' memtoull: digits with an optional unit (b k kb m mb g gb, any
 * case). Returns 0 or -1. */
static int parse_memory(const char *s, size_t n, long long *out)
{
    char tmp[64];
    if (n == 0 || n >= sizeof(tmp)) return -1;
    memcpy(tmp, s, n);
    tmp[n] = '\0';
    char *end;
    errno = 0;
    long long v = strtoll(tmp, &end, 10);
    if (errno || end == tmp) return -1;
    long long mul = 1;
    if (!strcasecmp(end, "") || !strcasecmp(end, "b"))
        mul = 1;
    else if (!strcasecmp(end, "k"))
        mul = 1000;
    else if (!strcasecmp(end, "kb"))
        mul = 1024;
    else if (!strcasecmp(end, "m"))
        mul = 1000 * 1000;
    else if (!strcasecmp(end, "mb"))
        mul = 1024 * 1024;
    else if (!strcasecmp(end, "g"))
        mul = 1000ll * 1000 * 1000;
    else if (!strcasecmp(end, "gb"))
        mul = 1024ll * 1024 * 1024;
    else
        return -1;
    if (v < 0 || (mul > 1 && v > LLONG_MAX / mul)) return -1;
    *out = v * mul;
    return 0;
}

/* client-output-buffer-limit "<class> <hard> <soft> <seconds> ...": the
 * normal class's values into p. Returns NULL or Redis' error text. */
static const char *parse_obuf(const char *s, size_t n, pending_t *p)
{
    char *copy = acl_strndup(s, n);
    char *words[64];
    int nw = 0;
    for (char *tok = strtok(copy, " "); tok && nw < 64; tok = strtok(NULL, " "))
        words[nw++] = tok;
    const char *err = NULL;
    if (nw % 4 != 0 || nw == 0) err = "Wrong number of arguments in buffer limit configuration.";
    for (int i = 0; !err && i < nw; i += 4) {
        int normal = !strcasecmp(words[i], "normal");
        if (!normal && strcasecmp(words[i], "replica") && strcasecmp(words[i], "slave") &&
            strcasecmp(words[i], "pubsub")) {
            err = "Invalid client class specified in buffer limit configuration.";
            break;
        }
        long long hard, soft, secs;
        if (parse_memory(words[i + 1], strlen(words[i + 1]), &hard) != 0 ||
            parse_memory(words[i + 2], strlen(words[i + 2]), &soft) != 0 ||
            str_to_ll(words[i + 3], strlen(words[i + 3]), &secs) != 0 || secs < 0) {
            err = "Error in hard, soft or soft_seconds setting in buffer limit configuration.";
            break;
        }
        if (normal) {
            p->hard = hard;
            p->soft = soft;
            p->soft_s = secs;
        }
    }
    free(copy);
    return err;
}

/* Parse one value into p; NULL or Redis' error text. */
static const char *parse_value(const param_t *prm, const char *s, size_t n, pending_t *p, char *msg,
                               size_t msglen)
{
    int64_t *dst = prm->off ? (int64_t *)((char *)p + prm->off) : NULL;
    long long v;
    switch (prm->kind) {
    case K_INT:
    case K_MEM:
        if (prm->kind == K_INT && str_to_ll(s, n, &v) != 0)
            return "argument couldn't be parsed into an integer";
        if (prm->kind == K_MEM && parse_memory(s, n, &v) != 0)
            return "argument must be a memory value";
        if (v < prm->lo || v > prm->hi) {
            snprintf(msg, msglen, "argument must be between %" PRId64 " and %" PRId64 " inclusive",
                     prm->lo, prm->hi);
            return msg;
        }
        *dst = v;
        return NULL;
    case K_BOOL:
        if (fe_word_eq(s, n, "yes"))
            *dst = 1;
        else if (fe_word_eq(s, n, "no"))
            *dst = 0;
        else
            return "argument must be 'yes' or 'no'";
        return NULL;
    case K_LOGLEVEL:
        for (int i = 0; i < 4; i++)
            if (fe_word_eq(s, n, loglevels[i])) {
                *dst = i;
                return NULL;
            }
        return "argument(s) must be one of the following: debug, verbose, notice, warning";
    case K_OBUF:
        return parse_obuf(s, n, p);
    case K_PASS:
        if (n >= SHM_REQUIREPASS_MAX || memchr(s, '\0', n))
            return "the password is too long or holds a NUL byte";
        p->requirepass = s;
        p->requirepass_len = n;
        return NULL;
    case K_RO:
        break;
    }
    return "can't set immutable config";
}

static void config_set_cmd(fe_conn_t *c, int argc, const char **argv, const uint32_t *lens,
                           buf_t *out)
{
    fe_t *fe = c->fe;
    if (argc % 2) {
        resp_error(out, "ERR syntax error");
        return;
    }
    int npairs = (argc - 2) / 2;
    const param_t *which[64];
    if (npairs > 64) {
        resp_error(out, "ERR syntax error");
        return;
    }
    char msg[512];
    /* First the names, as Redis: the first immutable or repeated name, or
     * else the first unknown one, is the error. */
    const char *unknown = NULL, *errstr = NULL;
    int err_arg = -1;
    size_t unknown_len = 0;
    for (int i = 0; i < npairs; i++) {
        const char *name = argv[2 + 2 * i];
        size_t nl = lens[2 + 2 * i];
        which[i] = param_find(name, nl);
        if (!which[i]) {
            if (!errstr && !unknown) {
                unknown = name;
                unknown_len = nl;
            }
            continue;
        }
        if (errstr || unknown) continue;
        if (which[i]->kind == K_RO) {
            errstr = "can't set immutable config";
            err_arg = i;
            continue;
        }
        for (int j = 0; j < i; j++)
            if (which[j] == which[i]) {
                errstr = "duplicate parameter";
                err_arg = i;
                break;
            }
    }
    if (unknown) {
        snprintf(msg, sizeof(msg),
                 "ERR Unknown option or number of arguments for CONFIG SET - '%.*s'",
                 (int)(unknown_len > 128 ? 128 : unknown_len), unknown);
        resp_error(out, msg);
        return;
    }
    shm_config_t *sc = &fe->shm->admin.config;
    fe_shm_lock(&sc->lock);
    pending_t p = {
        .maxclients = atomic_load(&sc->maxclients),
        .timeout = atomic_load(&sc->timeout),
        .bulk = atomic_load(&sc->proto_max_bulk_len),
        .qbuf = atomic_load(&sc->client_query_buffer_limit),
        .hard = atomic_load(&sc->obuf_hard),
        .soft = atomic_load(&sc->obuf_soft),
        .soft_s = atomic_load(&sc->obuf_soft_seconds),
        .protected_mode = atomic_load(&sc->protected_mode),
        .slower = atomic_load(&sc->slowlog_slower_than),
        .maxlen = atomic_load(&sc->slowlog_max_len),
        .loglevel = atomic_load(&sc->loglevel),
    };
    char vmsg[128];
    for (int i = 0; i < npairs && !errstr; i++) {
        errstr = parse_value(which[i], argv[3 + 2 * i], lens[3 + 2 * i], &p, vmsg, sizeof(vmsg));
        if (errstr) err_arg = i;
    }
    if (!errstr && p.requirepass) {
        /* The default user's password: through the ACL table, so every
         * frontend's AUTH sees it. */
        char aerr[256];
        if (fe_acl_set_requirepass(fe, p.requirepass, p.requirepass_len, aerr, sizeof(aerr)) != 0) {
            fe_shm_unlock(&sc->lock);
            resp_error(out, aerr);
            return;
        }
        memcpy(sc->requirepass, p.requirepass, p.requirepass_len);
        sc->requirepass[p.requirepass_len] = '\0';
    }
    if (errstr) {
        fe_shm_unlock(&sc->lock);
        snprintf(msg, sizeof(msg),
                 "ERR CONFIG SET failed (possibly related to argument '%.*s') - %s",
                 (int)(lens[2 + 2 * err_arg] > 128 ? 128 : lens[2 + 2 * err_arg]),
                 argv[2 + 2 * err_arg], errstr);
        resp_error(out, msg);
        return;
    }
    atomic_store(&sc->maxclients, p.maxclients);
    atomic_store(&sc->timeout, p.timeout);
    atomic_store(&sc->proto_max_bulk_len, p.bulk);
    atomic_store(&sc->client_query_buffer_limit, p.qbuf);
    atomic_store(&sc->obuf_hard, p.hard);
    atomic_store(&sc->obuf_soft, p.soft);
    atomic_store(&sc->obuf_soft_seconds, p.soft_s);
    atomic_store(&sc->protected_mode, p.protected_mode);
    atomic_store(&sc->slowlog_slower_than, p.slower);
    atomic_store(&sc->slowlog_max_len, p.maxlen);
    atomic_store(&sc->loglevel, p.loglevel);
    atomic_fetch_add_explicit(&sc->version, 1, memory_order_release);
    fe_shm_unlock(&sc->lock);
    fe_config_refresh(fe);
    resp_simple(out, "OK");
}

static const char *const config_help[] = {
    "CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "GET <pattern>",
    "    Return parameters matching the glob-like <pattern> and their values.",
    "SET <directive> <value>",
    "    Set the configuration <directive> to <value>.",
    "RESETSTAT",
    "    Reset statistics reported by the INFO command.",
    "HELP",
    "    Prints this help.",
    NULL,
};

void fe_cmd_config(fe_conn_t *c, int argc, const char **argv, const uint32_t *lens, buf_t *out)
{
    if (fe_subcmd_arity_check(cmd_by_id(CMD_CONFIG), argc, argv, lens, out) != 0) return;
    const char *sub = argv[1];
    size_t sl = lens[1];
    if (fe_word_eq(sub, sl, "get")) {
        config_get(c, argc, argv, lens, out);
    } else if (fe_word_eq(sub, sl, "set")) {
        config_set_cmd(c, argc, argv, lens, out);
    } else if (fe_word_eq(sub, sl, "resetstat")) {
        atomic_fetch_add(&c->fe->shm->admin.stat_epoch, 1);
        fe_stats_sync_epoch(c->fe);
        resp_simple(out, "OK");
    } else if (fe_word_eq(sub, sl, "help")) {
        fe_reply_help(out, config_help);
    } else {
        fe_reply_unknown_subcmd(out, "CONFIG", sub, sl);
    }
}
