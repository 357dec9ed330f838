/*
 * local.c - commands a frontend answers alone: PING, ECHO, QUIT, SELECT,
 * COMMAND, INFO, CONFIG. They read only the command table, the
 * configuration and the counters in shared memory, so any frontend gives the
 * same answer and none of them needs the store.
 */
#include <fnmatch.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "config.h"
#include "fe-internal.h"
#include "strutil.h"

/* ---- COMMAND ---- */

static void command_entry(buf_t *out, const cmd_desc_t *d)
{
    static const struct {
        uint32_t flag;
        const char *name;
    } flag_names[] = {
        {CMDF_WRITE, "write"}, {CMDF_READONLY, "readonly"}, {CMDF_ADMIN, "admin"},
        {CMDF_FAST, "fast"},   {CMDF_LOADING, "loading"},   {CMDF_STALE, "stale"},
    };
    resp_array(out, 10);
    resp_bulk_cstr(out, d->name);
    resp_integer(out, d->arity);
    int nflags = 0;
    for (size_t i = 0; i < sizeof(flag_names) / sizeof(flag_names[0]); i++)
        if (d->flags & flag_names[i].flag) nflags++;
    resp_array(out, nflags);
    for (size_t i = 0; i < sizeof(flag_names) / sizeof(flag_names[0]); i++)
        if (d->flags & flag_names[i].flag) resp_simple(out, flag_names[i].name);
    resp_integer(out, d->first_key);
    resp_integer(out, d->last_key);
    resp_integer(out, d->key_step);
    /* ACL categories */
    const char *cat = d->flags & CMDF_WRITE ? "@write" : d->flags & CMDF_READONLY ? "@read" : "@connection";
    resp_array(out, 1);
    resp_simple(out, cat);
    resp_array(out, 0); /* tips */
    resp_array(out, 0); /* key specs */
    resp_array(out, 0); /* subcommands */
}

static void cmd_command(int argc, const char **argv, const uint32_t *lens, buf_t *out)
{
    size_t n;
    const cmd_desc_t *t = cmd_table(&n);
    if (argc == 1) {
        resp_array(out, (long long)n);
        for (size_t i = 0; i < n; i++) command_entry(out, &t[i]);
    } else if (fe_word_eq(argv[1], lens[1], "count") && argc == 2) {
        resp_integer(out, (long long)n);
    } else if (fe_word_eq(argv[1], lens[1], "info")) {
        resp_array(out, argc - 2);
        for (int i = 2; i < argc; i++) {
            const cmd_desc_t *d = cmd_lookup(argv[i], lens[i]);
            if (d) command_entry(out, d);
            else resp_null_array(out);
        }
    } else if (fe_word_eq(argv[1], lens[1], "docs")) {
        /* No documentation yet: an empty map, which redis-cli accepts
         * (it then shows no hints). */
        resp_array(out, 0);
    } else {
        char msg[256];
        snprintf(msg, sizeof(msg), "ERR unknown subcommand '%.*s'. Try COMMAND HELP.",
                 (int)(lens[1] > 128 ? 128 : lens[1]), argv[1]);
        resp_error(out, msg);
    }
}

/* ---- INFO ---- */

static void info_server(fe_t *fe, buf_t *b)
{
    struct utsname u;
    uname(&u);
    int64_t up = (shm_now_ms() - atomic_load(&fe->shm->start_time_ms)) / 1000;
    buf_appendf(b,
                "# Server\r\n"
                "redis_version:7.0.0\r\n"
                "atticdb_version:%s\r\n"
                "redis_mode:standalone\r\n"
                "os:%s %s %s\r\n"
                "arch_bits:%d\r\n"
                "multiplexing_api:libevent\r\n"
                "process_id:%d\r\n"
                "frontend:%d\r\n"
                "frontends:%u\r\n"
                "tcp_port:%d\r\n"
                "uptime_in_seconds:%" PRId64 "\r\n"
                "uptime_in_days:%" PRId64 "\r\n"
                "executable:atticdb-server\r\n"
                "\r\n",
                PACKAGE_VERSION, u.sysname, u.release, u.machine, (int)(sizeof(void *) * 8),
                (int)getpid(), fe->slot, fe->shm->nfrontends, fe->cfg->port, up, up / 86400);
}

static void info_clients(fe_t *fe, buf_t *b)
{
    uint64_t clients = 0;
    for (uint32_t i = 0; i < fe->shm->nfrontends; i++) clients += atomic_load(&fe->shm->fe[i].clients);
    buf_appendf(b, "# Clients\r\nconnected_clients:%" PRIu64 "\r\nmaxclients:%d\r\n\r\n", clients,
                fe->cfg->maxclients);
}

static void info_persistence(fe_t *fe, buf_t *b)
{
    shm_t *s = fe->shm;
    shm_stats_t *st = &s->stats;
    uint64_t fsyncs = atomic_load(&st->fsyncs);
    uint64_t records = atomic_load(&st->records);
    uint64_t bytes = atomic_load(&st->bytes);
    uint64_t total_ns = atomic_load(&st->total_fsync_ns);
    const char *states[] = {"starting", "running", "failed", "stopped"};
    uint32_t ls = atomic_load(&s->logger_state);
    buf_appendf(b,
                "# Persistence\r\n"
                "loading:%d\r\n"
                "aof_enabled:0\r\n"
                "rdb_changes_since_last_save:0\r\n"
                "atticdb_log_state:%s\r\n"
                "atticdb_log_no_space:%u\r\n"
                "atticdb_fsyncs:%" PRIu64 "\r\n"
                "atticdb_records:%" PRIu64 "\r\n"
                "atticdb_bytes:%" PRIu64 "\r\n"
                "atticdb_avg_batch_records:%.2f\r\n"
                "atticdb_avg_batch_bytes:%.1f\r\n"
                "atticdb_max_batch_records:%" PRIu64 "\r\n"
                "atticdb_last_fsync_us:%.1f\r\n"
                "atticdb_avg_fsync_us:%.1f\r\n"
                "atticdb_segments_created:%" PRIu64 "\r\n"
                "atticdb_log_start_lsn:%" PRIu64 "\r\n"
                "atticdb_durable_lsn:%" PRIu64 "\r\n"
                "atticdb_applied_lsn:%" PRIu64 "\r\n"
                "\r\n",
                !atomic_load(&s->store_ready), ls < 4 ? states[ls] : "unknown",
                atomic_load(&s->log_no_space), fsyncs, records,
                bytes, fsyncs ? (double)records / (double)fsyncs : 0.0,
                fsyncs ? (double)bytes / (double)fsyncs : 0.0, atomic_load(&st->max_batch_records),
                (double)atomic_load(&st->last_fsync_ns) / 1000.0,
                fsyncs ? (double)total_ns / (double)fsyncs / 1000.0 : 0.0,
                atomic_load(&st->segments_created), atomic_load(&s->log_start_lsn),
                atomic_load(&s->durable_lsn), atomic_load(&shm_ring(s)->tail));
}

static void info_stats(fe_t *fe, buf_t *b)
{
    uint64_t conns = 0, cmds = 0;
    for (uint32_t i = 0; i < fe->shm->nfrontends; i++) {
        conns += atomic_load(&fe->shm->fe[i].total_conns);
        cmds += atomic_load(&fe->shm->fe[i].total_cmds);
    }
    buf_appendf(b,
                "# Stats\r\ntotal_connections_received:%" PRIu64
                "\r\ntotal_commands_processed:%" PRIu64 "\r\n\r\n",
                conns, cmds);
}

static void info_keyspace(fe_t *fe, buf_t *b)
{
    uint64_t keys = atomic_load(&fe->shm->store_keys);
    buf_appendf(b, "# Keyspace\r\n");
    if (keys)
        buf_appendf(b, "db0:keys=%" PRIu64 ",expires=%" PRIu64 ",avg_ttl=0\r\n", keys,
                    atomic_load(&fe->shm->store_expires));
    buf_appendf(b, "\r\n");
}

void fe_info(fe_t *fe, const char *section, buf_t *out)
{
    static const struct {
        const char *name;
        void (*fn)(fe_t *, buf_t *);
    } sections[] = {
        {"server", info_server},   {"clients", info_clients}, {"persistence", info_persistence},
        {"stats", info_stats},     {"keyspace", info_keyspace},
    };
    buf_t b;
    buf_init(&b);
    int all = !section || !strcasecmp(section, "all") || !strcasecmp(section, "default") ||
              !strcasecmp(section, "everything");
    for (size_t i = 0; i < sizeof(sections) / sizeof(sections[0]); i++)
        if (all || !strcasecmp(section, sections[i].name)) sections[i].fn(fe, &b);
    /* Redis ends the text without the last blank line. */
    if (b.len >= 2) b.len -= 2;
    resp_bulk(out, b.data, b.len);
    buf_free(&b);
}

/* ---- CONFIG ---- */

static void config_get(fe_t *fe, int argc, const char **argv, const uint32_t *lens, buf_t *out)
{
    const config_t *c = fe->cfg;
    char port[16], maxclients[16], bulk[32], qbuf[32], ring[32], seg[32], fes[16];
    snprintf(port, sizeof(port), "%d", c->port);
    snprintf(maxclients, sizeof(maxclients), "%d", c->maxclients);
    snprintf(bulk, sizeof(bulk), "%lld", (long long)c->proto_max_bulk_len);
    snprintf(qbuf, sizeof(qbuf), "%llu", (unsigned long long)c->client_query_buffer_limit);
    snprintf(ring, sizeof(ring), "%llu", (unsigned long long)c->ring_size);
    snprintf(seg, sizeof(seg), "%llu", (unsigned long long)c->segment_size);
    snprintf(fes, sizeof(fes), "%d", c->frontends);
    char binds[256] = "";
    for (int i = 0; i < c->nbind; i++) {
        if (i) strncat(binds, " ", sizeof(binds) - strlen(binds) - 1);
        strncat(binds, c->bind[i], sizeof(binds) - strlen(binds) - 1);
    }
    const struct {
        const char *name, *value;
    } params[] = {
        {"port", port},
        {"bind", binds},
        {"dir", c->dir},
        {"unixsocket", c->unixsocket ? c->unixsocket : ""},
        {"maxclients", maxclients},
        {"proto-max-bulk-len", bulk},
        {"client-query-buffer-limit", qbuf},
        {"ring-size", ring},
        {"segment-size", seg},
        {"frontends", fes},
        {"databases", "1"},
        {"save", ""},
        {"appendonly", "no"},
        {"appendfsync", "always"},
    };
    size_t np = sizeof(params) / sizeof(params[0]);
    buf_t items;
    buf_init(&items);
    long long n = 0;
    for (size_t i = 0; i < np; i++) {
        for (int j = 2; j < argc; j++) {
            char pat[256];
            snprintf(pat, sizeof(pat), "%.*s", (int)(lens[j] > 255 ? 255 : lens[j]), argv[j]);
            if (fnmatch(pat, params[i].name, FNM_CASEFOLD) == 0) {
                resp_bulk_cstr(&items, params[i].name);
                resp_bulk_cstr(&items, params[i].value);
                n += 2;
                break;
            }
        }
    }
    resp_array(out, n);
    buf_append(out, items.data, items.len);
    buf_free(&items);
}

static void cmd_config(fe_t *fe, int argc, const char **argv, const uint32_t *lens, buf_t *out)
{
    if (fe_word_eq(argv[1], lens[1], "get") && argc >= 3) {
        config_get(fe, argc, argv, lens, out);
    } else if (fe_word_eq(argv[1], lens[1], "resetstat") && argc == 2) {
        resp_simple(out, "OK");
    } else if (fe_word_eq(argv[1], lens[1], "set") && argc >= 4) {
        resp_error(out, "ERR CONFIG SET is not supported by AtticDB yet: change the config file and restart");
    } else {
        char msg[256];
        if (fe_word_eq(argv[1], lens[1], "get") || fe_word_eq(argv[1], lens[1], "set") ||
            fe_word_eq(argv[1], lens[1], "resetstat"))
            snprintf(msg, sizeof(msg), "ERR wrong number of arguments for 'config|%.*s' command",
                     (int)lens[1], argv[1]);
        else
            snprintf(msg, sizeof(msg), "ERR unknown subcommand '%.*s'. Try CONFIG HELP.",
                     (int)(lens[1] > 128 ? 128 : lens[1]), argv[1]);
        for (char *p = msg; *p; p++) *p = (*p == '\r' || *p == '\n') ? ' ' : *p;
        resp_error(out, msg);
    }
}

void fe_local(fe_conn_t *c, const cmd_desc_t *d, int argc, const char **argv, const uint32_t *lens,
              buf_t *out)
{
    fe_t *fe = c->fe;
    switch (d->id) {
    case CMD_PING:
        if (argc > 2) resp_error(out, "ERR wrong number of arguments for 'ping' command");
        else if (argc == 2) resp_bulk(out, argv[1], lens[1]);
        else resp_simple(out, "PONG");
        break;
    case CMD_ECHO:
        resp_bulk(out, argv[1], lens[1]);
        break;
    case CMD_QUIT:
        resp_simple(out, "OK");
        break;
    case CMD_SELECT: {
        long long id;
        if (str_to_ll(argv[1], lens[1], &id) != 0 || id < INT32_MIN || id > INT32_MAX)
            resp_error(out, "ERR value is not an integer or out of range");
        else if (id != 0) resp_error(out, "ERR DB index is out of range");
        else resp_simple(out, "OK");
        break;
    }
    case CMD_COMMAND:
        cmd_command(argc, argv, lens, out);
        break;
    case CMD_INFO: {
        char section[64];
        if (argc >= 2) snprintf(section, sizeof(section), "%.*s", (int)(lens[1] > 63 ? 63 : lens[1]), argv[1]);
        fe_info(fe, argc >= 2 ? section : NULL, out);
        break;
    }
    case CMD_CONFIG:
        cmd_config(fe, argc, argv, lens, out);
        break;
    default:
        resp_error(out, "ERR internal: not a local command");
        break;
    }
}

void fe_cmdstat(fe_conn_t *c, const cmd_desc_t *d)
{
    (void)c;
    (void)d;
}
