/*
 * config.c - the settings table (config.h) and the redis.conf style file and
 * command line that fill it. The master reads the file and the arguments
 * before anything is forked, so a bad setting stops the server before it
 * touches the data directory; the frontends use the same table for CONFIG
 * GET and CONFIG SET (frontend/admin/config-cmd.c), so a value is judged by one
 * validator wherever it comes from.
 */
#include "config.h"
#include "repl-shm.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "log.h"
#include "pubsub.h"
#include "strutil.h"

/* ---- reading values ---- */

static int word_eq(const char *s, size_t n, const char *w)
{
    return strlen(w) == n && !strncasecmp(s, w, n);
}

/* Redis' memtoull on s[0, n): digits, then an optional unit. */
static int parse_memory_n(const char *s, size_t n, uint64_t *out)
{
    static const struct {
        const char *unit;
        uint64_t mul;
    } units[] = {{"", 1},           {"b", 1},           {"k", 1000},
                 {"kb", 1024},      {"m", 1000 * 1000}, {"mb", 1024 * 1024},
                 {"g", 1000000000}, {"gb", 1ull << 30}};
    size_t d = 0;
    uint64_t v = 0;
    for (; d < n && s[d] >= '0' && s[d] <= '9'; d++) {
        if (v > (UINT64_MAX - (uint64_t)(s[d] - '0')) / 10) return -1;
        v = v * 10 + (uint64_t)(s[d] - '0');
    }
    if (d == 0) return -1;
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
        if (!word_eq(s + d, n - d, units[i].unit)) continue;
        if (v > UINT64_MAX / units[i].mul) return -1;
        *out = v * units[i].mul;
        return 0;
    }
    return -1;
}

int config_parse_memory(const char *s, uint64_t *out)
{
    return parse_memory_n(s, strlen(s), out);
}

/* A file mode: octal digits only. */
static int parse_octal_n(const char *s, size_t n, long long *out)
{
    if (n == 0 || n > 12) return -1;
    long long v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '7') return -1;
        v = v * 8 + (s[i] - '0');
    }
    *out = v;
    return 0;
}

static void *field(config_t *c, const config_entry_t *e)
{
    return (char *)c + e->off;
}

static long long get_number(const config_t *c, const config_entry_t *e)
{
    const char *p = (const char *)c + e->off;
    if (e->size == sizeof(int)) return *(const int *)p;
    return *(const int64_t *)p; /* int64_t or uint64_t within the bounds */
}

static void put_number(config_t *c, const config_entry_t *e, long long v)
{
    if (e->size == sizeof(int))
        *(int *)field(c, e) = (int)v;
    else
        *(int64_t *)field(c, e) = v;
}

/* CONFIG_INT, CONFIG_MEMORY, CONFIG_OCTAL: parse, check the bounds, store. */
static int apply_number(config_t *c, const config_entry_t *e, const char *s, size_t n, char *err,
                        size_t errlen)
{
    long long v;
    int too_big = 0;
    if (e->type == CONFIG_MEMORY) {
        uint64_t m;
        if (parse_memory_n(s, n, &m) != 0)
            return str_fail(err, errlen, "argument must be a memory value");
        /* Past LLONG_MAX Redis wraps to a negative number: out of bounds. */
        too_big = m > (uint64_t)LLONG_MAX;
        v = too_big ? LLONG_MAX : (long long)m;
    } else if (e->type == CONFIG_OCTAL) {
        if (parse_octal_n(s, n, &v) != 0)
            return str_fail(err, errlen, "argument couldn't be parsed as an octal number");
    } else if (str_to_ll(s, n, &v) != 0) {
        return str_fail(err, errlen, "argument couldn't be parsed into an integer");
    }
    if (too_big || v < e->lo || v > e->hi)
        return str_fail(err, errlen,
                        e->type == CONFIG_OCTAL
                            ? "argument must be between %llo and %llo inclusive"
                            : "argument must be between %lld and %lld inclusive",
                        e->lo, e->hi);
    put_number(c, e, v);
    return 0;
}

static int apply_enum(config_t *c, const config_entry_t *e, const char *s, size_t n, char *err,
                      size_t errlen)
{
    for (int i = 0; e->names[i]; i++)
        if (word_eq(s, n, e->names[i])) {
            *(int *)field(c, e) = i;
            return 0;
        }
    char list[256] = "";
    size_t used = 0;
    for (int i = 0; e->names[i] && used < sizeof(list); i++)
        used +=
            (size_t)snprintf(list + used, sizeof(list) - used, "%s%s", i ? ", " : "", e->names[i]);
    return str_fail(err, errlen, "argument(s) must be one of the following: %s", list);
}

static void set_str(char **dst, const char *v, size_t n)
{
    free(*dst);
    *dst = strndup(v, n);
}

/* One value into c, through the entry: argv[i] is lens[i] bytes. */
static int apply(config_t *c, const config_entry_t *e, int argc, const char *const *argv,
                 const size_t *lens, char *err, size_t errlen)
{
    if (e->type == CONFIG_IGNORED) return 0;
    if (e->type == CONFIG_SPECIAL) return e->parse(c, argc, argv, lens, err, errlen);
    if (argc != 1) return str_fail(err, errlen, "wrong number of arguments");
    const char *s = argv[0];
    size_t n = lens[0];
    switch (e->type) {
    case CONFIG_INT:
    case CONFIG_MEMORY:
    case CONFIG_OCTAL:
        return apply_number(c, e, s, n, err, errlen);
    case CONFIG_BOOL:
        if (word_eq(s, n, "yes") || word_eq(s, n, "no")) {
            *(int *)field(c, e) = word_eq(s, n, "yes");
            return 0;
        }
        return str_fail(err, errlen, "argument must be 'yes' or 'no'");
    case CONFIG_ENUM:
        return apply_enum(c, e, s, n, err, errlen);
    case CONFIG_STRING:
        set_str((char **)field(c, e), s, n);
        return 0;
    default:
        return str_fail(err, errlen, "bad settings table entry '%s'", e->name);
    }
}

/* ---- the settings that have their own parser ---- */

static int parse_bind(config_t *c, int argc, const char *const *argv, const size_t *lens, char *err,
                      size_t errlen)
{
    if (argc < 1) return str_fail(err, errlen, "wrong number of arguments");
    if (argc > CONFIG_MAX_BINDS) return str_fail(err, errlen, "Too many bind addresses specified.");
    for (int i = 0; i < c->nbind; i++)
        free(c->bind[i]);
    for (int i = 0; i < argc; i++)
        c->bind[i] = strndup(argv[i], lens[i]);
    c->nbind = argc;
    return 0;
}

/* save: Redis' snapshot schedule, pairs of seconds and changes, or "".
 * Checked as Redis checks it and otherwise ignored: AtticDB takes no
 * snapshots (every acknowledged write is in the log), so CONFIG GET says
 * "" whatever was set. */
static int parse_save(config_t *c, int argc, const char *const *argv, const size_t *lens, char *err,
                      size_t errlen)
{
    (void)c;
    if (argc == 1 && lens[0] == 0) return 0;
    if (argc % 2) return str_fail(err, errlen, "Invalid save parameters");
    for (int i = 0; i < argc; i++) {
        long long v;
        if (str_to_ll(argv[i], lens[i], &v) || v < 0)
            return str_fail(err, errlen, "Invalid save parameters");
    }
    return 0;
}

static void format_save(const config_t *c, buf_t *out)
{
    (void)c;
    (void)out;
}

static void format_bind(const config_t *c, buf_t *out)
{
    for (int i = 0; i < c->nbind; i++)
        buf_appendf(out, "%s%s", i ? " " : "", c->bind[i]);
}

static int parse_requirepass(config_t *c, int argc, const char *const *argv, const size_t *lens,
                             char *err, size_t errlen)
{
    if (argc != 1) return str_fail(err, errlen, "wrong number of arguments");
    if (lens[0] >= CONFIG_REQUIREPASS_MAX || memchr(argv[0], '\0', lens[0]))
        return str_fail(err, errlen, "the password is too long or holds a NUL byte");
    set_str(&c->requirepass, argv[0], lens[0]);
    return 0;
}

static void format_requirepass(const config_t *c, buf_t *out)
{
    buf_appendf(out, "%s", c->requirepass ? c->requirepass : "");
}

/* A ratio: 0 (no relocation) or from 1.1 to 100 (D27). */
static int parse_space_amp(config_t *c, int argc, const char *const *argv, const size_t *lens,
                           char *err, size_t errlen)
{
    if (argc != 1 || lens[0] == 0 || lens[0] > 32)
        return str_fail(err, errlen, "argument must be a number");
    char tmp[40], *end;
    memcpy(tmp, argv[0], lens[0]);
    tmp[lens[0]] = '\0';
    double v = strtod(tmp, &end);
    if (*end || !(v == 0 || (v >= 1.1 && v <= 100)))
        return str_fail(err, errlen, "argument must be 0 (off) or between 1.1 and 100");
    c->space_amp_target = v;
    return 0;
}

static void format_space_amp(const config_t *c, buf_t *out)
{
    buf_appendf(out, "%g", c->space_amp_target);
}

/* notify-keyspace-events: Redis 7.0's letters, any order; CONFIG GET
 * gives them in Redis' canonical order. */
static const struct {
    char letter;
    uint32_t bits;
} notify_letters[] = {
    {'g', PS_NOTIFY_GENERIC},  {'$', PS_NOTIFY_STRING},   {'l', PS_NOTIFY_LIST},
    {'s', PS_NOTIFY_SET},      {'h', PS_NOTIFY_HASH},     {'z', PS_NOTIFY_ZSET},
    {'x', PS_NOTIFY_EXPIRED},  {'e', PS_NOTIFY_EVICTED},  {'t', PS_NOTIFY_STREAM},
    {'d', PS_NOTIFY_MODULE},   {'n', PS_NOTIFY_NEW},      {'K', PS_NOTIFY_KEYSPACE},
    {'E', PS_NOTIFY_KEYEVENT}, {'m', PS_NOTIFY_KEY_MISS}, {'A', PS_NOTIFY_ALL},
};
#define N_NOTIFY_LETTERS (sizeof(notify_letters) / sizeof(notify_letters[0]))

static int parse_notify(config_t *c, int argc, const char *const *argv, const size_t *lens,
                        char *err, size_t errlen)
{
    uint32_t bits = 0;
    for (size_t i = 0; argc > 0 && i < lens[0]; i++) {
        size_t k = 0;
        while (k < N_NOTIFY_LETTERS && notify_letters[k].letter != argv[0][i])
            k++;
        if (k == N_NOTIFY_LETTERS)
            return str_fail(err, errlen, "Invalid event class character. Use 'Ag$lshzxeKEtmdn'.");
        bits |= notify_letters[k].bits;
    }
    c->notify_keyspace_events = bits;
    return 0;
}

static void format_notify(const config_t *c, buf_t *out)
{
    uint32_t f = c->notify_keyspace_events;
    int all = (f & PS_NOTIFY_ALL) == PS_NOTIFY_ALL;
    if (all) buf_append(out, "A", 1);
    /* The classes (not printed under A), then K, E and m, as Redis. */
    for (size_t k = 0; k < N_NOTIFY_LETTERS - 1; k++) {
        int is_class = k < 11;
        if ((f & notify_letters[k].bits) && !(all && is_class))
            buf_append(out, &notify_letters[k].letter, 1);
    }
}

/* class hard soft soft-seconds [class ...], as redis.conf; the normal and
 * pubsub classes apply (no replicas here: replica is accepted, unused). */
static int parse_obuf(config_t *c, int argc, const char *const *argv, const size_t *lens, char *err,
                      size_t errlen)
{
    if (argc == 0 || argc % 4 != 0)
        return str_fail(err, errlen, "Wrong number of arguments in buffer limit configuration.");
    uint64_t hard[16], soft[16];
    long long secs[16];
    int normal = -1, pubsub = -1, replica = -1;
    for (int i = 0; i < argc; i += 4) {
        const char *cls = argv[i];
        size_t cl = lens[i];
        if (!word_eq(cls, cl, "normal") && !word_eq(cls, cl, "replica") &&
            !word_eq(cls, cl, "slave") && !word_eq(cls, cl, "pubsub"))
            return str_fail(err, errlen,
                            "Invalid client class specified in buffer limit configuration.");
        int k = (i / 4) % 16;
        if (parse_memory_n(argv[i + 1], lens[i + 1], &hard[k]) != 0 ||
            parse_memory_n(argv[i + 2], lens[i + 2], &soft[k]) != 0 ||
            str_to_ll(argv[i + 3], lens[i + 3], &secs[k]) != 0 || secs[k] < 0 || secs[k] > INT_MAX)
            return str_fail(err, errlen,
                            "Error in hard, soft or soft_seconds setting in buffer "
                            "limit configuration.");
        if (word_eq(cls, cl, "normal")) normal = k;
        if (word_eq(cls, cl, "pubsub")) pubsub = k;
        if (word_eq(cls, cl, "replica") || word_eq(cls, cl, "slave")) replica = k;
    }
    /* Only after every class was read: all or nothing. */
    if (normal >= 0) {
        c->obuf_hard = hard[normal];
        c->obuf_soft = soft[normal];
        c->obuf_soft_seconds = (int)secs[normal];
    }
    if (pubsub >= 0) {
        c->obuf_pubsub_hard = hard[pubsub];
        c->obuf_pubsub_soft = soft[pubsub];
        c->obuf_pubsub_soft_seconds = (int)secs[pubsub];
    }
    if (replica >= 0) {
        c->obuf_replica_hard = hard[replica];
        c->obuf_replica_soft = soft[replica];
        c->obuf_replica_soft_seconds = (int)secs[replica];
    }
    return 0;
}

static void format_obuf(const config_t *c, buf_t *out)
{
    buf_appendf(out,
                "normal %" PRIu64 " %" PRIu64 " %d slave %" PRIu64 " %" PRIu64 " %d pubsub %" PRIu64
                " %" PRIu64 " %d",
                c->obuf_hard, c->obuf_soft, c->obuf_soft_seconds, c->obuf_replica_hard,
                c->obuf_replica_soft, c->obuf_replica_soft_seconds, c->obuf_pubsub_hard,
                c->obuf_pubsub_soft, c->obuf_pubsub_soft_seconds);
}

static void format_dir(const config_t *c, buf_t *out)
{
    char *abs = c->dir ? realpath(c->dir, NULL) : NULL;
    buf_appendf(out, "%s", abs ? abs : c->dir ? c->dir : "");
    free(abs);
}

/* `user <name> <rules...>`: checked by the ACL parser when the master
 * builds the table (frontend/admin/fe-shm.c). */
static int parse_user(config_t *c, int argc, const char *const *argv, const size_t *lens, char *err,
                      size_t errlen)
{
    if (argc < 1) return str_fail(err, errlen, "wrong number of arguments");
    if (argc > CONFIG_MAX_USER_WORDS)
        return str_fail(err, errlen, "too many rules in one user line");
    config_user_t *u = realloc(c->users, (size_t)(c->nusers + 1) * sizeof(*u));
    if (!u) return str_fail(err, errlen, "out of memory");
    c->users = u;
    u[c->nusers].words = calloc((size_t)argc, sizeof(char *));
    if (!u[c->nusers].words) return str_fail(err, errlen, "out of memory");
    for (int i = 0; i < argc; i++)
        u[c->nusers].words[i] = strndup(argv[i], lens[i]);
    u[c->nusers].nwords = argc;
    c->nusers++;
    return 0;
}

/* `replicaof host port` (or `slaveof`), as Redis reads it from its file:
 * the leader this server follows from its start (D33); `no one` = none. */
static int parse_replicaof(config_t *c, int argc, const char *const *argv, const size_t *lens,
                           char *err, size_t errlen)
{
    if (argc != 2) return str_fail(err, errlen, "wrong number of arguments");
    free(c->replicaof_host);
    c->replicaof_host = NULL;
    if (word_eq(argv[0], lens[0], "no") && word_eq(argv[1], lens[1], "one")) return 0;
    long long port;
    if (str_to_ll(argv[1], lens[1], &port) != 0 || port < 0 || port > 65535)
        return str_fail(err, errlen, "Invalid master port");
    if (lens[0] == 0 || lens[0] >= 256) return str_fail(err, errlen, "Invalid master host");
    c->replicaof_host = strndup(argv[0], lens[0]);
    c->replicaof_port = (int)port;
    return 0;
}

/* ---- the table ---- */

static const char *const loglevel_names[] = {"debug", "verbose", "notice", "warning", NULL};
/* Redis 7.0's order (store/core/evict.h numbers them; D32). */
static const char *const maxmemory_policy_names[] = {
    "volatile-lru",   "volatile-lfu", "volatile-random",
    "volatile-ttl",   "allkeys-lru",  "allkeys-lfu",
    "allkeys-random", "noeviction",   NULL};
static const char *const log_sync_names[] = {"fdatasync", "odsync", "uring", "direct", NULL};
static const char *const read_io_names[] = {"uring", "buffered", "pread", NULL};

#define FIELD(f) offsetof(config_t, f), sizeof(((config_t *)0)->f)
#define NUM(name, type, flags, dflt, lo, hi, f)                                                    \
    {                                                                                              \
        name, type, flags, dflt, lo, hi, FIELD(f), NULL, NULL, NULL                                \
    }
#define BOOL(name, flags, dflt, f)                                                                 \
    {                                                                                              \
        name, CONFIG_BOOL, flags, dflt, 0, 1, FIELD(f), NULL, NULL, NULL                           \
    }
#define ENUM(name, flags, dflt, f, names)                                                          \
    {                                                                                              \
        name, CONFIG_ENUM, flags, dflt, 0, 0, FIELD(f), names, NULL, NULL                          \
    }
#define STRING(name, dflt, f)                                                                      \
    {                                                                                              \
        name, CONFIG_STRING, 0, dflt, 0, 0, FIELD(f), NULL, NULL, NULL                             \
    }
#define SPECIAL(name, flags, dflt, parse, format)                                                  \
    {                                                                                              \
        name, CONFIG_SPECIAL, flags, dflt, 0, 0, 0, 0, NULL, parse, format                         \
    }
/* shown: what CONFIG GET answers for a Redis setting that means nothing here. */
#define IGNORED(name, flags, shown)                                                                \
    {                                                                                              \
        name, CONFIG_IGNORED, flags, shown, 0, 0, 0, 0, NULL, NULL, NULL                           \
    }

#define MUT CONFIG_MUTABLE
#define MiB (1024ll * 1024)

/* Bounds are Redis 7.0's where Redis has the setting; CONFIG GET lists the
 * settings in this order. */
static const config_entry_t table[] = {
    NUM("port", CONFIG_INT, 0, "6379", 0, 65535, port),
    /* As Redis 7's redis.conf: loopback only; "-" = ::1 may be missing. */
    SPECIAL("bind", CONFIG_WORDS, "127.0.0.1 -::1", parse_bind, format_bind),
    STRING("unixsocket", NULL, unixsocket),
    NUM("unixsocketperm", CONFIG_OCTAL, 0, "0", 0, 0777, unixsocketperm),
    {"dir", CONFIG_STRING, 0, "./data", 0, 0, FIELD(dir), NULL, NULL, format_dir},
    BOOL("daemonize", 0, "no", daemonize),
    /* A record names its database in one byte (command.h). */
    NUM("databases", CONFIG_INT, 0, "16", 1, 256, databases),
    NUM("tcp-backlog", CONFIG_INT, 0, "511", 0, INT_MAX, tcp_backlog),
    STRING("logfile", NULL, logfile),
    ENUM("loglevel", MUT, "notice", loglevel, loglevel_names),
    NUM("maxclients", CONFIG_INT, MUT, "10000", 1, 4294967295ll, maxclients),
    /* used_memory (the store's index and entries, D32) past which writes
     * flagged denyoom get -OOM; 0 = no bound. */
    NUM("maxmemory", CONFIG_MEMORY, MUT, "0", 0, LLONG_MAX, maxmemory),
    ENUM("maxmemory-policy", MUT, "noeviction", maxmemory_policy, maxmemory_policy_names),
    NUM("maxmemory-samples", CONFIG_INT, MUT, "5", 1, INT_MAX, maxmemory_samples),
    NUM("maxmemory-eviction-tenacity", CONFIG_INT, MUT, "10", 0, 100, maxmemory_eviction_tenacity),
    NUM("lfu-log-factor", CONFIG_INT, MUT, "10", 0, INT_MAX, lfu_log_factor),
    NUM("lfu-decay-time", CONFIG_INT, MUT, "1", 0, INT_MAX, lfu_decay_time),
    NUM("timeout", CONFIG_INT, MUT, "0", 0, INT_MAX, timeout),
    BOOL("protected-mode", MUT, "yes", protected_mode),
    SPECIAL("requirepass", MUT, NULL, parse_requirepass, format_requirepass),
    NUM("proto-max-bulk-len", CONFIG_MEMORY, MUT, "512mb", 1 * MiB, LLONG_MAX, proto_max_bulk_len),
    NUM("client-query-buffer-limit", CONFIG_MEMORY, MUT, "1gb", 1 * MiB, LLONG_MAX,
        client_query_buffer_limit),
    /* Redis leaves normal clients unlimited; a durable server that holds
     * replies for clients that never read must not grow without bound. */
    SPECIAL("notify-keyspace-events", MUT, "", parse_notify, format_notify),
    SPECIAL("client-output-buffer-limit", MUT | CONFIG_WORDS,
            "normal 256mb 64mb 60 replica 256mb 64mb 60 pubsub 32mb 8mb 60", parse_obuf,
            format_obuf),
    NUM("slowlog-log-slower-than", CONFIG_INT, MUT, "10000", -1, LLONG_MAX,
        slowlog_log_slower_than),
    NUM("slowlog-max-len", CONFIG_INT, MUT, "128", 0, LLONG_MAX, slowlog_max_len),
    NUM("latency-monitor-threshold", CONFIG_INT, MUT, "0", 0, LLONG_MAX, latency_monitor_threshold),
    /* Redis 7.0 keeps the old ziplist names as aliases: CONFIG GET lists
     * both, and either sets the one value. */
    NUM("hash-max-listpack-entries", CONFIG_INT, MUT, "512", 0, LLONG_MAX,
        hash_max_listpack_entries),
    NUM("hash-max-ziplist-entries", CONFIG_INT, MUT, "512", 0, LLONG_MAX,
        hash_max_listpack_entries),
    NUM("hash-max-listpack-value", CONFIG_MEMORY, MUT, "64", 0, LLONG_MAX, hash_max_listpack_value),
    NUM("hash-max-ziplist-value", CONFIG_MEMORY, MUT, "64", 0, LLONG_MAX, hash_max_listpack_value),
    NUM("set-max-intset-entries", CONFIG_INT, MUT, "512", 0, LLONG_MAX, set_max_intset_entries),
    NUM("hll-sparse-max-bytes", CONFIG_MEMORY, MUT, "3000", 0, LLONG_MAX, hll_sparse_max_bytes),
    NUM("zset-max-listpack-entries", CONFIG_INT, MUT, "128", 0, LLONG_MAX,
        zset_max_listpack_entries),
    NUM("zset-max-ziplist-entries", CONFIG_INT, MUT, "128", 0, LLONG_MAX,
        zset_max_listpack_entries),
    NUM("zset-max-listpack-value", CONFIG_MEMORY, MUT, "64", 0, LLONG_MAX, zset_max_listpack_value),
    NUM("zset-max-ziplist-value", CONFIG_MEMORY, MUT, "64", 0, LLONG_MAX, zset_max_listpack_value),
    /* Lists: Redis 7.0's ranges and defaults. Every list is a quicklist in
     * 7.0 (docs/DECISIONS.md, D29): they shape DUMP's nodes only (D40, D57). */
    NUM("list-max-listpack-size", CONFIG_INT, MUT, "-2", INT_MIN, INT_MAX, list_max_listpack_size),
    NUM("list-max-ziplist-size", CONFIG_INT, MUT, "-2", INT_MIN, INT_MAX, list_max_listpack_size),
    NUM("list-compress-depth", CONFIG_INT, MUT, "0", 0, INT_MAX, list_compress_depth),
    /* DUMP compresses strings with LZF where Redis 7.0 does (D57). */
    BOOL("rdbcompression", MUT, "yes", rdb_compression),
    /* The Redis Cluster protocol over a static topology, read at start
     * from a file in CLUSTER NODES' format, relative to dir (D35). */
    BOOL("cluster-enabled", 0, "no", cluster_enabled),
    STRING("cluster-config-file", "nodes.conf", cluster_config_file),
    STRING("cluster-announce-ip", NULL, cluster_announce_ip),
    SPECIAL("save", CONFIG_WORDS | MUT, NULL, parse_save, format_save), /* no snapshots */
    IGNORED("appendonly", 0, "no"),
    IGNORED("appendfsync", 0, "always"),
    /* AtticDB's own. */
    NUM("frontends", CONFIG_INT, 0, "0", 0, 64, frontends),
    NUM("ring-size", CONFIG_MEMORY, 0, "16mb", 64 * 1024, LLONG_MAX, ring_size),
    NUM("segment-size", CONFIG_MEMORY, 0, "64mb", 64 * 1024, LLONG_MAX, segment_size),
    NUM("channel-size", CONFIG_MEMORY, 0, "4mb", 64 * 1024, LLONG_MAX, chan_size),
    /* GET's replies that the frontends answer from without the store
     * (common/rcache.h, D70); 0 turns the cache off. */
    NUM("read-cache-size", CONFIG_MEMORY, 0, "128mb", 0, 1ll << 40, read_cache_size),
    /* A bulk longer than this (or than a record holds) goes into the log
     * as chunks of at most this many bytes while it arrives (D48). */
    NUM("big-value-buffer", CONFIG_MEMORY, 0, "4mb", 64 * 1024, 1024ll * 1024 * 1024,
        big_value_buffer),
    ENUM("log-sync", 0, "fdatasync", log_sync, log_sync_names),
    /* The logger's thread's nice (D80): below 0 it takes a CPU as soon as a
     * record arrives or its flush returns, ahead of the processes it acks
     * for. Needs CAP_SYS_NICE (or RLIMIT_NICE); refused, it runs at 0. */
    NUM("logger-nice", CONFIG_INT, 0, "-10", -20, 19, logger_nice),
    /* How the store reads values for read commands (D59): uring (many
     * reads in flight, what the page cache lacks with O_DIRECT), buffered
     * (the same through the page cache), pread (one at a time). */
    ENUM("read-io", 0, "uring", read_io, read_io_names),
    NUM("respawn-limit", CONFIG_INT, 0, "5", 1, 1000, respawn_limit),
    /* The store writes a checkpoint each time this much log was applied
     * since the last one, and at a clean shutdown; 0 = never (D23). */
    NUM("checkpoint-bytes", CONFIG_MEMORY, 0, "256mb", 0, LLONG_MAX, checkpoint_bytes),
    /* SAVE and BGSAVE write a backup (a checkpoint and the log it needs)
     * into a new directory under this one; relative to dir (D38). */
    STRING("backup-dir", "backups", backup_dir),
    /* Every write's ack waits until this many replicas made it durable
     * too; 0 = local durability only (D33). */
    /* Redis' write guard: below min-replicas-to-write replicas that acked
     * within min-replicas-max-lag seconds, writes get -NOREPLICAS (D44);
     * the min-slaves-* names are Redis' aliases. */
    NUM("min-replicas-to-write", CONFIG_INT, MUT, "0", 0, INT_MAX, min_replicas_to_write),
    NUM("min-slaves-to-write", CONFIG_INT, MUT, "0", 0, INT_MAX, min_replicas_to_write),
    NUM("min-replicas-max-lag", CONFIG_INT, MUT, "10", 0, INT_MAX, min_replicas_max_lag),
    NUM("min-slaves-max-lag", CONFIG_INT, MUT, "10", 0, INT_MAX, min_replicas_max_lag),
    NUM("min-replicas-acked", CONFIG_INT, 0, "0", 0, REPL_MAX_REPLICAS, min_replicas_acked),
    /* The log a leader keeps for its replicas to resume from (D67): at
     * least the last repl-backlog-size bytes below the durable LSN while
     * a replica is connected or left less than repl-backlog-ttl seconds
     * ago (0 = for ever); a replica's own position up to the replica class
     * of client-output-buffer-limit. */
    NUM("repl-backlog-size", CONFIG_MEMORY, MUT, "1mb", 1, LLONG_MAX, repl_backlog_size),
    NUM("repl-backlog-ttl", CONFIG_INT, MUT, "3600", 0, LLONG_MAX, repl_backlog_ttl),
    /* The store relocates live values out of the log's oldest segments
     * while the log they span is more than this many times their bytes;
     * 0 = never (D27). */
    SPECIAL("space-amplification-target", 0, "1.5", parse_space_amp, format_space_amp),
    /* A hashtable-encoded hash or set with this many members moves its
     * members into pages in the log, keeping a small directory and the
     * recent changes in RAM; 0 = never (D60). Pages are about
     * collection-page-size bytes each. */
    NUM("collection-paging-entries", CONFIG_INT, 0, "65536", 0, UINT32_MAX, paging_entries),
    NUM("collection-page-size", CONFIG_MEMORY, 0, "4kb", 512, 65536, page_size),
    SPECIAL("user", CONFIG_FILE_ONLY | CONFIG_WORDS, NULL, parse_user, NULL),
    /* The leader to follow at start (D33); REPLICAOF changes it at run
     * time. Redis keeps it out of CONFIG GET too. */
    SPECIAL("replicaof", CONFIG_FILE_ONLY | CONFIG_WORDS, NULL, parse_replicaof, NULL),
    SPECIAL("slaveof", CONFIG_FILE_ONLY | CONFIG_WORDS, NULL, parse_replicaof, NULL),
    /* Directives Redis users keep in their files that mean nothing here:
     * accepted so an existing redis.conf loads. */
    IGNORED("tcp-keepalive", CONFIG_FILE_ONLY, NULL),
    IGNORED("supervised", CONFIG_FILE_ONLY, NULL),
    IGNORED("pidfile", CONFIG_FILE_ONLY, NULL),
    IGNORED("always-show-logo", CONFIG_FILE_ONLY, NULL),
    IGNORED("stop-writes-on-bgsave-error", CONFIG_FILE_ONLY, NULL),
    IGNORED("rdbchecksum", CONFIG_FILE_ONLY, NULL),
    IGNORED("dbfilename", CONFIG_FILE_ONLY, NULL),
    IGNORED("hz", CONFIG_FILE_ONLY, NULL),
};
#define NENTRIES (sizeof(table) / sizeof(table[0]))

const config_entry_t *config_entry_at(size_t i)
{
    return i < NENTRIES ? &table[i] : NULL;
}

const config_entry_t *config_find(const char *s, size_t n)
{
    for (size_t i = 0; i < NENTRIES; i++)
        if (word_eq(s, n, table[i].name)) return &table[i];
    return NULL;
}

int config_set_value(config_t *c, const config_entry_t *e, const char *s, size_t n, char *err,
                     size_t errlen)
{
    if (!(e->flags & CONFIG_WORDS)) return apply(c, e, 1, &s, &n, err, errlen);
    /* Split at spaces, as CONFIG SET does for a setting of several words. */
    const char *words[64];
    size_t lens[64];
    int nw = 0;
    for (size_t i = 0; i < n;) {
        while (i < n && s[i] == ' ')
            i++;
        if (i == n) break;
        if (nw == 64) return str_fail(err, errlen, "too many arguments");
        size_t start = i;
        while (i < n && s[i] != ' ')
            i++;
        words[nw] = s + start;
        lens[nw++] = i - start;
    }
    return apply(c, e, nw, words, lens, err, errlen);
}

void config_format(const config_t *c, const config_entry_t *e, buf_t *out)
{
    if (e->format) {
        e->format(c, out);
        return;
    }
    switch (e->type) {
    case CONFIG_INT:
    case CONFIG_MEMORY:
        buf_appendf(out, "%lld", get_number(c, e));
        break;
    case CONFIG_OCTAL:
        buf_appendf(out, "%llo", get_number(c, e));
        break;
    case CONFIG_BOOL:
        buf_appendf(out, "%s", *(const int *)((const char *)c + e->off) ? "yes" : "no");
        break;
    case CONFIG_ENUM: {
        int v = *(const int *)((const char *)c + e->off), n = 0;
        while (e->names[n])
            n++;
        buf_appendf(out, "%s", v >= 0 && v < n ? e->names[v] : "");
        break;
    }
    case CONFIG_STRING: {
        const char *v = *(char *const *)((const char *)c + e->off);
        buf_appendf(out, "%s", v ? v : "");
        break;
    }
    case CONFIG_IGNORED:
        buf_appendf(out, "%s", e->default_text ? e->default_text : "");
        break;
    case CONFIG_SPECIAL:
        break;
    }
}

void config_defaults(config_t *c)
{
    memset(c, 0, sizeof(*c));
    for (size_t i = 0; i < NENTRIES; i++) {
        const config_entry_t *e = &table[i];
        if (!e->default_text || e->type == CONFIG_IGNORED) continue;
        char err[128];
        /* The defaults are constants that tests/test_config.c reads back. */
        if (config_set_value(c, e, e->default_text, strlen(e->default_text), err, sizeof(err)))
            log_warn("bad default for %s: %s", e->name, err);
    }
    c->max_args = 1024 * 1024;
    c->max_inline_len = 64 * 1024;
}

void config_free(config_t *c)
{
    for (int i = 0; i < c->nbind; i++)
        free(c->bind[i]);
    free(c->unixsocket);
    free(c->dir);
    free(c->logfile);
    free(c->cluster_config_file);
    free(c->cluster_announce_ip);
    free(c->backup_dir);
    free(c->replicaof_host);
    free(c->requirepass);
    for (int i = 0; i < c->nusers; i++) {
        for (int j = 0; j < c->users[i].nwords; j++)
            free(c->users[i].words[j]);
        free(c->users[i].words);
    }
    free(c->users);
    free(c->config_file);
    memset(c, 0, sizeof(*c));
}

int config_set(config_t *c, const char *name, int argc, char **argv, char *err, size_t errlen)
{
    const config_entry_t *e = config_find(name, strlen(name));
    if (!e) return str_fail(err, errlen, "Bad directive or wrong number of arguments: '%s'", name);
    size_t lens[64];
    if (argc > 64) return str_fail(err, errlen, "too many arguments");
    for (int i = 0; i < argc; i++)
        lens[i] = strlen(argv[i]);
    return apply(c, e, argc, (const char *const *)argv, lens, err, errlen);
}

int config_split_words(char *line, char **words, int max)
{
    int n = 0;
    char *p = line;
    while (*p) {
        while (isspace((unsigned char)*p))
            p++;
        if (!*p || *p == '#') break;
        if (n == max) return -1;
        if (*p == '"' || *p == '\'') {
            char q = *p++;
            words[n++] = p;
            while (*p && *p != q)
                p++;
            if (!*p) return -1;
            *p++ = '\0';
        } else {
            words[n++] = p;
            while (*p && !isspace((unsigned char)*p))
                p++;
            if (*p) *p++ = '\0';
        }
    }
    return n;
}

int config_load_file(config_t *c, const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return str_fail(err, errlen, "Fatal error, can't open config file '%s': %s", path,
                        strerror(errno));
    char line[4096];
    int lineno = 0;
    while (fgets(line, sizeof(line), f)) {
        lineno++;
        char *words[64];
        int n = config_split_words(line, words, 64);
        if (n < 0) {
            fclose(f);
            return str_fail(err, errlen, "%s:%d: unbalanced quotes or too many arguments", path,
                            lineno);
        }
        if (n == 0) continue;
        char msg[256];
        if (config_set(c, words[0], n - 1, words + 1, msg, sizeof(msg))) {
            fclose(f);
            return str_fail(err, errlen, "%s:%d: '%s': %s", path, lineno, words[0], msg);
        }
    }
    fclose(f);
    return 0;
}

int config_from_args(config_t *c, int argc, char **argv, char *err, size_t errlen)
{
    int i = 1;
    if (i < argc && strncmp(argv[i], "--", 2) != 0) {
        if (config_load_file(c, argv[i], err, errlen)) return -1;
        /* Absolute, as Redis keeps it: CONFIG REWRITE finds the file
         * whatever the working directory becomes. */
        free(c->config_file);
        c->config_file = realpath(argv[i], NULL);
        if (!c->config_file)
            return str_fail(err, errlen, "Can't resolve the config file path '%s': %s", argv[i],
                            strerror(errno));
        i++;
    }
    while (i < argc) {
        if (strncmp(argv[i], "--", 2) != 0)
            return str_fail(err, errlen, "unexpected argument '%s' (options are --name value)",
                            argv[i]);
        const char *name = argv[i] + 2;
        int j = i + 1;
        while (j < argc && strncmp(argv[j], "--", 2) != 0)
            j++;
        char msg[256];
        if (config_set(c, name, j - i - 1, argv + i + 1, msg, sizeof(msg)))
            return str_fail(err, errlen, "--%s: %s", name, msg);
        i = j;
    }
    return 0;
}

static int is_pow2(uint64_t v)
{
    return v && !(v & (v - 1));
}

int config_validate(config_t *c, char *err, size_t errlen)
{
    if (!is_pow2(c->ring_size) || c->ring_size < (64u << 10))
        return str_fail(err, errlen, "ring-size must be a power of two of at least 64kb");
    /* The logger asks for the next segment when the current one is half
     * full, and a full disk then stops new writes. With at most half a
     * segment in the ring, what it holds by then still fits the current
     * segment and is acked; a larger ring could hold records past its end,
     * which would wait, with no error, until space came back. */
    if (!is_pow2(c->segment_size) || c->segment_size / 2 < c->ring_size)
        return str_fail(err, errlen,
                        "segment-size must be a power of two at least twice ring-size");
    if (!is_pow2(c->chan_size) || c->chan_size < (64u << 10))
        return str_fail(err, errlen, "channel-size must be a power of two of at least 64kb");
    if (c->daemonize)
        return str_fail(err, errlen, "daemonize yes is not supported: run under a supervisor");
    if (c->port == 0 && !c->unixsocket)
        return str_fail(err, errlen, "nothing to listen on: set port or unixsocket");
    if (c->frontends == 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        c->frontends = n < 1 ? 1 : n > 64 ? 64 : (int)n;
    }
    return 0;
}
