/*
 * config-cmd.c - CONFIG GET / SET / RESETSTAT / REWRITE / HELP, and the runtime
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
 * Names, bounds and texts are Redis 7.0's, and they come from the one
 * settings table of common/config.c that the config file also goes
 * through. Settings AtticDB reads only at start (port, dir, ring-size, ...)
 * are reported by CONFIG GET and refused by CONFIG SET with Redis' "can't
 * set immutable config".
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "frontend/cmd/cmd.h"
#include "frontend/core/core.h"
#include "frontend/admin/admin.h"
#include "glob.h"
#include "log.h"
#include "strutil.h"

/* ---- the frontend's cache ---- */

void fe_config_refresh(fe_t *fe)
{
    shm_config_t *sc = &fe_shm(fe->shm)->config;
    uint64_t v = atomic_load_explicit(&sc->version, memory_order_acquire);
    if (__builtin_expect(v == fe->admin->cfg_version, 1)) return;
    /* The master fills shm_config_t before any frontend runs
     * (fe_shm_init), so there is always something to read. */
    fe->maxclients = atomic_load(&sc->maxclients);
    fe->timeout_s = atomic_load(&sc->timeout);
    fe->qbuf_limit = (uint64_t)atomic_load(&sc->client_query_buffer_limit);
    fe->obuf_hard = (uint64_t)atomic_load(&sc->obuf_hard);
    fe->obuf_soft = (uint64_t)atomic_load(&sc->obuf_soft);
    fe->obuf_soft_seconds = atomic_load(&sc->obuf_soft_seconds);
    fe->obuf_pubsub_hard = (uint64_t)atomic_load(&sc->obuf_pubsub_hard);
    fe->obuf_pubsub_soft = (uint64_t)atomic_load(&sc->obuf_pubsub_soft);
    fe->obuf_pubsub_soft_seconds = atomic_load(&sc->obuf_pubsub_soft_seconds);
    fe->admin->protected_mode = (int)atomic_load(&sc->protected_mode);
    fe->admin->slowlog_slower_than = atomic_load(&sc->slowlog_slower_than);
    fe->limits.max_bulk_len = atomic_load(&sc->proto_max_bulk_len);
    int64_t lat_ms = atomic_load(&sc->latency_threshold_ms);
    fe->admin->latency_threshold_ns = lat_ms <= 0                    ? 0
                                      : lat_ms > INT64_MAX / 1000000 ? UINT64_MAX
                                                                     : (uint64_t)lat_ms * 1000000;
    fe->hash_max_entries = atomic_load(&sc->hash_max_listpack_entries);
    fe->hash_max_value = atomic_load(&sc->hash_max_listpack_value);
    fe->set_max_intset = atomic_load(&sc->set_max_intset_entries);
    fe->hll_sparse_max = atomic_load(&sc->hll_sparse_max_bytes);
    fe->zset_max_entries = atomic_load(&sc->zset_max_listpack_entries);
    fe->zset_max_value = atomic_load(&sc->zset_max_listpack_value);
    fe->maxmemory = (uint64_t)atomic_load(&sc->maxmemory);
    fe->maxmemory_evicts = atomic_load(&sc->maxmemory_policy) != CONFIG_POLICY_NOEVICTION;
    log_set_level((int)atomic_load(&sc->loglevel));
    fe->admin->cfg_version = v;
}

/* ---- the live values ---- */

/* The mutable settings (CONFIG_MUTABLE in common/config.c's table) live in
 * shm while the server runs; these two move them between shm and a
 * config_t, so the table's parsers and formatters serve CONFIG SET and
 * CONFIG GET. requirepass is copied apart (a string, under the lock). */
static void live_load(shm_config_t *sc, config_t *c)
{
    c->maxclients = atomic_load(&sc->maxclients);
    c->timeout = (int)atomic_load(&sc->timeout);
    c->proto_max_bulk_len = atomic_load(&sc->proto_max_bulk_len);
    c->client_query_buffer_limit = (uint64_t)atomic_load(&sc->client_query_buffer_limit);
    c->obuf_hard = (uint64_t)atomic_load(&sc->obuf_hard);
    c->obuf_soft = (uint64_t)atomic_load(&sc->obuf_soft);
    c->obuf_soft_seconds = (int)atomic_load(&sc->obuf_soft_seconds);
    c->obuf_pubsub_hard = (uint64_t)atomic_load(&sc->obuf_pubsub_hard);
    c->obuf_pubsub_soft = (uint64_t)atomic_load(&sc->obuf_pubsub_soft);
    c->obuf_pubsub_soft_seconds = (int)atomic_load(&sc->obuf_pubsub_soft_seconds);
    c->protected_mode = (int)atomic_load(&sc->protected_mode);
    c->min_replicas_to_write = (int)atomic_load(&sc->min_replicas_to_write);
    c->min_replicas_max_lag = (int)atomic_load(&sc->min_replicas_max_lag);
    c->slowlog_log_slower_than = atomic_load(&sc->slowlog_slower_than);
    c->slowlog_max_len = atomic_load(&sc->slowlog_max_len);
    c->loglevel = (int)atomic_load(&sc->loglevel);
    c->latency_monitor_threshold = atomic_load(&sc->latency_threshold_ms);
    c->hash_max_listpack_entries = atomic_load(&sc->hash_max_listpack_entries);
    c->hash_max_listpack_value = atomic_load(&sc->hash_max_listpack_value);
    c->set_max_intset_entries = atomic_load(&sc->set_max_intset_entries);
    c->hll_sparse_max_bytes = atomic_load(&sc->hll_sparse_max_bytes);
    c->zset_max_listpack_entries = atomic_load(&sc->zset_max_listpack_entries);
    c->zset_max_listpack_value = atomic_load(&sc->zset_max_listpack_value);
    c->list_max_listpack_size = atomic_load(&sc->list_max_listpack_size);
    c->list_compress_depth = atomic_load(&sc->list_compress_depth);
    c->rdb_compression = (int)atomic_load(&sc->rdb_compression);
    c->maxmemory = (uint64_t)atomic_load(&sc->maxmemory);
    c->maxmemory_policy = (int)atomic_load(&sc->maxmemory_policy);
    c->maxmemory_samples = atomic_load(&sc->maxmemory_samples);
    c->maxmemory_eviction_tenacity = (int)atomic_load(&sc->maxmemory_eviction_tenacity);
    c->notify_keyspace_events = (uint32_t)atomic_load(&sc->notify_keyspace_events);
    c->lfu_log_factor = (int)atomic_load(&sc->lfu_log_factor);
    c->lfu_decay_time = (int)atomic_load(&sc->lfu_decay_time);
    c->repl_backlog_size = (uint64_t)atomic_load(&sc->repl_backlog_size);
    c->repl_backlog_ttl = atomic_load(&sc->repl_backlog_ttl);
    c->obuf_replica_hard = (uint64_t)atomic_load(&sc->obuf_replica_hard);
    c->obuf_replica_soft = (uint64_t)atomic_load(&sc->obuf_replica_soft);
    c->obuf_replica_soft_seconds = (int)atomic_load(&sc->obuf_replica_soft_seconds);
}

void fe_config_store_live(const config_t *c, shm_config_t *sc)
{
    atomic_store(&sc->maxclients, c->maxclients);
    atomic_store(&sc->timeout, c->timeout);
    atomic_store(&sc->proto_max_bulk_len, c->proto_max_bulk_len);
    atomic_store(&sc->client_query_buffer_limit, (int64_t)c->client_query_buffer_limit);
    atomic_store(&sc->obuf_hard, (int64_t)c->obuf_hard);
    atomic_store(&sc->obuf_soft, (int64_t)c->obuf_soft);
    atomic_store(&sc->obuf_soft_seconds, c->obuf_soft_seconds);
    atomic_store(&sc->obuf_pubsub_hard, (int64_t)c->obuf_pubsub_hard);
    atomic_store(&sc->obuf_pubsub_soft, (int64_t)c->obuf_pubsub_soft);
    atomic_store(&sc->obuf_pubsub_soft_seconds, c->obuf_pubsub_soft_seconds);
    atomic_store(&sc->protected_mode, c->protected_mode);
    atomic_store(&sc->slowlog_slower_than, c->slowlog_log_slower_than);
    atomic_store(&sc->slowlog_max_len, c->slowlog_max_len);
    atomic_store(&sc->loglevel, c->loglevel);
    atomic_store(&sc->latency_threshold_ms, c->latency_monitor_threshold);
    atomic_store(&sc->hash_max_listpack_entries, c->hash_max_listpack_entries);
    atomic_store(&sc->hash_max_listpack_value, c->hash_max_listpack_value);
    atomic_store(&sc->set_max_intset_entries, c->set_max_intset_entries);
    atomic_store(&sc->hll_sparse_max_bytes, c->hll_sparse_max_bytes);
    atomic_store(&sc->zset_max_listpack_entries, c->zset_max_listpack_entries);
    atomic_store(&sc->zset_max_listpack_value, c->zset_max_listpack_value);
    atomic_store(&sc->list_max_listpack_size, c->list_max_listpack_size);
    atomic_store(&sc->list_compress_depth, c->list_compress_depth);
    atomic_store(&sc->rdb_compression, c->rdb_compression);
    atomic_store(&sc->maxmemory, (int64_t)c->maxmemory);
    atomic_store(&sc->maxmemory_policy, c->maxmemory_policy);
    atomic_store(&sc->maxmemory_samples, c->maxmemory_samples);
    atomic_store(&sc->maxmemory_eviction_tenacity, c->maxmemory_eviction_tenacity);
    atomic_store(&sc->notify_keyspace_events, c->notify_keyspace_events);
    atomic_store(&sc->lfu_log_factor, c->lfu_log_factor);
    atomic_store(&sc->lfu_decay_time, c->lfu_decay_time);
    atomic_store(&sc->min_replicas_to_write, c->min_replicas_to_write);
    atomic_store(&sc->min_replicas_max_lag, c->min_replicas_max_lag);
    atomic_store(&sc->repl_backlog_size, (int64_t)c->repl_backlog_size);
    atomic_store(&sc->repl_backlog_ttl, c->repl_backlog_ttl);
    atomic_store(&sc->obuf_replica_hard, (int64_t)c->obuf_replica_hard);
    atomic_store(&sc->obuf_replica_soft, (int64_t)c->obuf_replica_soft);
    atomic_store(&sc->obuf_replica_soft_seconds, c->obuf_replica_soft_seconds);
}

void fe_config_store_memory(const config_t *c, shm_t *shm)
{
    atomic_store(&shm->mem_maxmemory, (int64_t)c->maxmemory);
    atomic_store(&shm->mem_policy, c->maxmemory_policy);
    atomic_store(&shm->mem_samples, c->maxmemory_samples);
    atomic_store(&shm->mem_tenacity, c->maxmemory_eviction_tenacity);
    atomic_store(&shm->mem_lfu_log_factor, c->lfu_log_factor);
    atomic_store(&shm->mem_lfu_decay_time, c->lfu_decay_time);
    atomic_store(&shm->mem_list_fill, c->list_max_listpack_size);
    atomic_store(&shm->mem_list_compress_depth, c->list_compress_depth);
    atomic_store(&shm->mem_rdb_compression, c->rdb_compression);
    atomic_fetch_add(&shm->mem_version, 1);
    /* The backlog's (D67), each one word read as it is. */
    atomic_store(&shm->repl.backlog_size, c->repl_backlog_size);
    atomic_store(&shm->repl.backlog_ttl, c->repl_backlog_ttl);
    atomic_store(&shm->repl.replica_obuf_hard, c->obuf_replica_hard);
    atomic_store(&shm->repl.replica_obuf_soft, c->obuf_replica_soft);
    atomic_store(&shm->repl.replica_obuf_soft_s, c->obuf_replica_soft_seconds);
}

_Static_assert(SHM_REQUIREPASS_MAX == CONFIG_REQUIREPASS_MAX,
               "shm holds every password the settings table accepts");

/* What CONFIG GET and CONFIG SET know: not the file-only entries. */
static const config_entry_t *param_find(const char *s, size_t n)
{
    const config_entry_t *e = config_find(s, n);
    return e && !(e->flags & CONFIG_FILE_ONLY) ? e : NULL;
}

static void config_get(fe_conn_t *c, int argc, const char **argv, const uint32_t *lens, buf_t *out)
{
    fe_t *fe = c->fe;
    shm_config_t *sc = &fe_shm(fe->shm)->config;
    /* The inherited settings, with the live ones over them. Borrowed
     * pointers: never freed. */
    config_t view = *fe->cfg;
    char pass[SHM_REQUIREPASS_MAX];
    live_load(sc, &view);
    fe_shm_lock(&sc->lock);
    memcpy(pass, sc->requirepass, sizeof(pass));
    fe_shm_unlock(&sc->lock);
    pass[sizeof(pass) - 1] = '\0';
    view.requirepass = pass;

    char taken[256] = {0};
    buf_t items, v;
    buf_init(&items);
    buf_init(&v);
    long long n = 0;
    for (int a = 2; a < argc; a++) {
        const char *pat = argv[a];
        size_t pl = lens[a];
        int is_pattern = memchr(pat, '*', pl) || memchr(pat, '?', pl) || memchr(pat, '[', pl);
        const config_entry_t *e;
        for (size_t i = 0; (e = config_entry_at(i)) && i < sizeof(taken); i++) {
            if (taken[i] || (e->flags & CONFIG_FILE_ONLY)) continue;
            if (is_pattern ? !glob_match(pat, pl, e->name, strlen(e->name), 1)
                           : !fe_word_eq(pat, pl, e->name))
                continue;
            taken[i] = 1;
            /* An exact name is echoed as the client spelled it (Redis 7). */
            if (is_pattern)
                resp_bulk_cstr(&items, e->name);
            else
                resp_bulk(&items, pat, pl);
            buf_reset(&v);
            config_format(&view, e, &v);
            resp_bulk(&items, v.data, v.len);
            n++;
        }
    }
    resp_map(out, c->proto, n);
    buf_append(out, items.data, items.len);
    buf_free(&items);
    buf_free(&v);
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
    const config_entry_t *which[64];
    if (npairs > 64) {
        resp_error(out, "ERR syntax error");
        return;
    }
    char msg[512];
    /* First the names, as Redis: the first immutable or repeated name, or
     * else the first unknown one, is the error. */
    const char *unknown = NULL, *errstr = NULL;
    int err_arg = -1, set_pass = 0;
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
        if (!(which[i]->flags & CONFIG_MUTABLE)) {
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
    shm_config_t *sc = &fe_shm(fe->shm)->config;
    fe_shm_lock(&sc->lock);
    /* Every value is parsed into a copy of the live settings by the
     * table's own validator; nothing is written unless all are good. */
    config_t p;
    memset(&p, 0, sizeof(p));
    live_load(sc, &p);
    char vmsg[256];
    for (int i = 0; i < npairs && !errstr; i++) {
        if (config_set_value(&p, which[i], argv[3 + 2 * i], lens[3 + 2 * i], vmsg, sizeof(vmsg)) !=
            0) {
            errstr = vmsg;
            err_arg = i;
        }
        if (!strcmp(which[i]->name, "requirepass")) set_pass = 1;
    }
    if (!errstr && set_pass) {
        /* The default user's password: through the ACL table, so every
         * frontend's AUTH sees it. */
        char aerr[256];
        size_t plen = strlen(p.requirepass);
        if (fe_acl_set_requirepass(fe, p.requirepass, plen, aerr, sizeof(aerr)) != 0) {
            fe_shm_unlock(&sc->lock);
            config_free(&p);
            resp_error(out, aerr);
            return;
        }
        memcpy(sc->requirepass, p.requirepass, plen + 1);
    }
    if (errstr) {
        fe_shm_unlock(&sc->lock);
        snprintf(msg, sizeof(msg),
                 "ERR CONFIG SET failed (possibly related to argument '%.*s') - %s",
                 (int)(lens[2 + 2 * err_arg] > 128 ? 128 : lens[2 + 2 * err_arg]),
                 argv[2 + 2 * err_arg], errstr);
        config_free(&p);
        resp_error(out, msg);
        return;
    }
    fe_config_store_live(&p, sc);
    atomic_store(&fe->shm->notify_flags, p.notify_keyspace_events); /* the store's copy */
    fe_config_store_memory(&p, fe->shm);
    config_free(&p);
    atomic_fetch_add_explicit(&sc->version, 1, memory_order_release);
    fe_shm_unlock(&sc->lock);
    fe_config_refresh(fe);
    resp_simple(out, "OK");
}

/* CONFIG REWRITE: the inherited settings with the live ones over them, as
 * CONFIG GET sees them, written back into the file (common/config-rewrite.c).
 * The file work runs outside the settings lock (a spin lock for short
 * copies); two rewrites at once each write a whole file, the last rename
 * wins. */
static void config_rewrite_cmd(fe_conn_t *c, buf_t *out)
{
    fe_t *fe = c->fe;
    if (!fe->cfg->config_file) {
        resp_error(out, "ERR The server is running without a config file");
        return;
    }
    shm_config_t *sc = &fe_shm(fe->shm)->config;
    config_t view = *fe->cfg; /* borrowed pointers: never freed */
    char pass[SHM_REQUIREPASS_MAX];
    fe_shm_lock(&sc->lock);
    live_load(sc, &view);
    memcpy(pass, sc->requirepass, sizeof(pass));
    fe_shm_unlock(&sc->lock);
    pass[sizeof(pass) - 1] = '\0';
    view.requirepass = pass;
    char err[512], msg[600];
    if (config_rewrite(fe->cfg->config_file, &view, err, sizeof(err)) != 0) {
        log_warn("CONFIG REWRITE failed: %s", err);
        snprintf(msg, sizeof(msg), "ERR Rewriting config file: %s", err);
        resp_error(out, msg);
        return;
    }
    log_info("CONFIG REWRITE executed with success.");
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
    "REWRITE",
    "    Rewrite the configuration file.",
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
        shm_admin_t *adm = fe_shm(c->fe->shm);
        atomic_store(&adm->evicted_base, atomic_load(&c->fe->shm->evicted_keys));
        atomic_store(&adm->expired_base, atomic_load(&c->fe->shm->expired_keys));
        atomic_store(&adm->hits_base, atomic_load(&c->fe->shm->keyspace_hits));
        atomic_store(&adm->misses_base, atomic_load(&c->fe->shm->keyspace_misses));
        /* Both eviction-exceeded figures start again from 0 (D43). */
        int64_t now_ms = (int64_t)(shm_mono_ns() / 1000000), total, current;
        atomic_store(&adm->exceeded_base_ms, 0);
        fe_eviction_exceeded(c->fe->shm, now_ms, &total, &current);
        atomic_store(&adm->exceeded_base_ms, total);
        atomic_store(&adm->exceeded_reset_ms, now_ms);
        atomic_fetch_add(&fe_shm(c->fe->shm)->stat_epoch, 1);
        fe_stats_sync_epoch(c->fe);
        resp_simple(out, "OK");
    } else if (fe_word_eq(sub, sl, "rewrite")) {
        config_rewrite_cmd(c, out);
    } else if (fe_word_eq(sub, sl, "help")) {
        fe_reply_help(out, config_help);
    } else {
        fe_reply_unknown_subcmd(out, "CONFIG", sub, sl);
    }
}
