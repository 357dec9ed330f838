/*
 * config.c - settings from a redis.conf style file and the command line
 * (config.h). Run by the master only, before anything is forked; a bad
 * setting stops the server before it touches the data directory.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "log.h"
#include "strutil.h"

void config_defaults(config_t *c)
{
    memset(c, 0, sizeof(*c));
    c->port = 6379;
    /* As Redis 7's redis.conf: loopback only; "-" = ::1 may be missing. */
    c->bind[0] = strdup("127.0.0.1");
    c->bind[1] = strdup("-::1");
    c->nbind = 2;
    c->protected_mode = 1;
    c->slowlog_log_slower_than = 10000;
    c->slowlog_max_len = 128;
    c->dir = strdup("./data");
    c->frontends = 0;
    c->ring_size = 16ull << 20;
    c->segment_size = 64ull << 20;
    c->chan_size = 4ull << 20;
    c->proto_max_bulk_len = 512ll << 20;
    c->max_args = 1024 * 1024;
    c->max_inline_len = 64 * 1024;
    c->client_query_buffer_limit = 1ull << 30;
    c->maxclients = 10000;
    c->databases = 16;
    /* Redis leaves normal clients unlimited; a durable server that holds
     * replies for clients that never read must not grow without bound. */
    c->obuf_hard = 256ull << 20;
    c->obuf_soft = 64ull << 20;
    c->obuf_soft_seconds = 60;
    c->tcp_backlog = 511;
    c->loglevel = LOG_NOTICE;
    c->respawn_limit = 5;
}

void config_free(config_t *c)
{
    for (int i = 0; i < c->nbind; i++) free(c->bind[i]);
    free(c->unixsocket);
    free(c->dir);
    free(c->logfile);
    free(c->requirepass);
    for (int i = 0; i < c->nusers; i++) {
        for (int j = 0; j < c->users[i].nwords; j++) free(c->users[i].words[j]);
        free(c->users[i].words);
    }
    free(c->users);
    memset(c, 0, sizeof(*c));
}

int config_parse_memory(const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *s == '-') return -1;
    uint64_t mul = 1;
    if (*end) {
        if (!strcasecmp(end, "k")) mul = 1000;
        else if (!strcasecmp(end, "kb")) mul = 1024;
        else if (!strcasecmp(end, "m")) mul = 1000 * 1000;
        else if (!strcasecmp(end, "mb")) mul = 1024 * 1024;
        else if (!strcasecmp(end, "g")) mul = 1000ull * 1000 * 1000;
        else if (!strcasecmp(end, "gb")) mul = 1024ull * 1024 * 1024;
        else return -1;
    }
    if (v > UINT64_MAX / mul) return -1;
    *out = v * mul;
    return 0;
}

static int parse_int(const char *s, long long lo, long long hi, long long *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) return -1;
    *out = v;
    return 0;
}

static int parse_yesno(const char *s, int *out)
{
    if (!strcasecmp(s, "yes")) *out = 1;
    else if (!strcasecmp(s, "no")) *out = 0;
    else return -1;
    return 0;
}

static void set_str(char **dst, const char *v)
{
    free(*dst);
    *dst = strdup(v);
}

/* Directives Redis users keep in their files that mean nothing here: they are
 * accepted so an existing redis.conf loads, and logged once. */
static const char *const ignored[] = {
    "save",
    "appendonly",
    "appendfsync",
    "tcp-keepalive",
    "supervised",
    "pidfile",
    "always-show-logo",
    "stop-writes-on-bgsave-error",
    "rdbcompression",
    "rdbchecksum",
    "dbfilename",
    "hz",
    NULL,
};

int config_set(config_t *c, const char *name, int argc, char **argv, char *err, size_t errlen)
{
    long long v;
    uint64_t m;
    if (argc < 1) return str_fail(err, errlen, "'%s' needs a value", name);
    if (!strcasecmp(name, "port")) {
        if (parse_int(argv[0], 0, 65535, &v)) return str_fail(err, errlen, "Invalid port");
        c->port = (int)v;
    } else if (!strcasecmp(name, "bind")) {
        if (argc > CONFIG_MAX_BINDS) return str_fail(err, errlen, "Too many bind addresses specified.");
        for (int i = 0; i < c->nbind; i++) free(c->bind[i]);
        for (int i = 0; i < argc; i++) c->bind[i] = strdup(argv[i]);
        c->nbind = argc;
    } else if (!strcasecmp(name, "unixsocket")) {
        set_str(&c->unixsocket, argv[0]);
    } else if (!strcasecmp(name, "unixsocketperm")) {
        char *end;
        errno = 0;
        long p = strtol(argv[0], &end, 8);
        if (errno || *end || p < 0 || p > 0777) return str_fail(err, errlen, "Invalid socket file permissions");
        c->unixsocketperm = (int)p;
    } else if (!strcasecmp(name, "dir")) {
        set_str(&c->dir, argv[0]);
    } else if (!strcasecmp(name, "frontends")) {
        if (parse_int(argv[0], 0, 64, &v)) return str_fail(err, errlen, "frontends must be 0 (one per core) to 64");
        c->frontends = (int)v;
    } else if (!strcasecmp(name, "ring-size")) {
        if (config_parse_memory(argv[0], &m)) return str_fail(err, errlen, "Invalid ring-size");
        c->ring_size = m;
    } else if (!strcasecmp(name, "segment-size")) {
        if (config_parse_memory(argv[0], &m)) return str_fail(err, errlen, "Invalid segment-size");
        c->segment_size = m;
    } else if (!strcasecmp(name, "channel-size")) {
        if (config_parse_memory(argv[0], &m)) return str_fail(err, errlen, "Invalid channel-size");
        c->chan_size = m;
    } else if (!strcasecmp(name, "proto-max-bulk-len")) {
        if (config_parse_memory(argv[0], &m) || m < 1024 || m > INT64_MAX)
            return str_fail(err, errlen, "Invalid proto-max-bulk-len");
        c->proto_max_bulk_len = (int64_t)m;
    } else if (!strcasecmp(name, "client-query-buffer-limit")) {
        if (config_parse_memory(argv[0], &m) || m < 1024) return str_fail(err, errlen, "Invalid client-query-buffer-limit");
        c->client_query_buffer_limit = m;
    } else if (!strcasecmp(name, "databases")) {
        /* A record names its database in one byte (command.h). */
        if (parse_int(argv[0], 1, 256, &v)) return str_fail(err, errlen, "Invalid number of databases");
        c->databases = (int)v;
    } else if (!strcasecmp(name, "maxclients")) {
        if (parse_int(argv[0], 1, 1000000, &v)) return str_fail(err, errlen, "Invalid max clients limit");
        c->maxclients = (int)v;
    } else if (!strcasecmp(name, "timeout")) {
        if (parse_int(argv[0], 0, INT32_MAX, &v)) return str_fail(err, errlen, "Invalid timeout value");
        c->timeout = (int)v;
    } else if (!strcasecmp(name, "client-output-buffer-limit")) {
        /* class hard soft soft-seconds [class ...], as redis.conf; only the
         * normal class applies (no replicas or pub/sub here yet). */
        if (argc % 4 != 0) return str_fail(err, errlen, "Wrong number of arguments in buffer limit configuration.");
        for (int i = 0; i < argc; i += 4) {
            uint64_t hard, soft;
            long long secs;
            if (strcasecmp(argv[i], "normal") && strcasecmp(argv[i], "replica") &&
                strcasecmp(argv[i], "slave") && strcasecmp(argv[i], "pubsub"))
                return str_fail(err, errlen, "Invalid client class specified in buffer limit configuration.");
            if (config_parse_memory(argv[i + 1], &hard) || config_parse_memory(argv[i + 2], &soft) ||
                parse_int(argv[i + 3], 0, INT32_MAX, &secs))
                return str_fail(err, errlen, "Error in hard, soft or soft_seconds setting in buffer limit configuration.");
            if (!strcasecmp(argv[i], "normal")) {
                c->obuf_hard = hard;
                c->obuf_soft = soft;
                c->obuf_soft_seconds = (int)secs;
            }
        }
    } else if (!strcasecmp(name, "tcp-backlog")) {
        if (parse_int(argv[0], 0, 65535, &v)) return str_fail(err, errlen, "Invalid backlog value");
        c->tcp_backlog = (int)v;
    } else if (!strcasecmp(name, "logfile")) {
        set_str(&c->logfile, argv[0]);
    } else if (!strcasecmp(name, "loglevel")) {
        const char *l = argv[0];
        if (!strcasecmp(l, "debug")) c->loglevel = LOG_DEBUG;
        else if (!strcasecmp(l, "verbose")) c->loglevel = LOG_VERBOSE;
        else if (!strcasecmp(l, "notice")) c->loglevel = LOG_NOTICE;
        else if (!strcasecmp(l, "warning")) c->loglevel = LOG_WARNING;
        else return str_fail(err, errlen, "Invalid log level. Must be one of debug, verbose, notice, warning");
    } else if (!strcasecmp(name, "requirepass")) {
        set_str(&c->requirepass, argv[0]);
    } else if (!strcasecmp(name, "protected-mode")) {
        if (parse_yesno(argv[0], &c->protected_mode))
            return str_fail(err, errlen, "argument must be 'yes' or 'no'");
    } else if (!strcasecmp(name, "slowlog-log-slower-than")) {
        if (parse_int(argv[0], INT64_MIN, INT64_MAX, &v))
            return str_fail(err, errlen, "Invalid slowlog-log-slower-than");
        c->slowlog_log_slower_than = v;
    } else if (!strcasecmp(name, "slowlog-max-len")) {
        if (parse_int(argv[0], 0, INT64_MAX, &v))
            return str_fail(err, errlen, "Invalid slowlog-max-len");
        c->slowlog_max_len = v;
    } else if (!strcasecmp(name, "user")) {
        /* Checked by the ACL parser when the master builds the table. */
        if (argc > CONFIG_MAX_USER_WORDS)
            return str_fail(err, errlen, "too many rules in one user line");
        config_user_t *u = realloc(c->users, (size_t)(c->nusers + 1) * sizeof(*u));
        if (!u) return str_fail(err, errlen, "out of memory");
        c->users = u;
        u[c->nusers].words = calloc((size_t)argc, sizeof(char *));
        if (!u[c->nusers].words) return str_fail(err, errlen, "out of memory");
        for (int i = 0; i < argc; i++)
            u[c->nusers].words[i] = strdup(argv[i]);
        u[c->nusers].nwords = argc;
        c->nusers++;
    } else if (!strcasecmp(name, "daemonize")) {
        if (parse_yesno(argv[0], &c->daemonize)) return str_fail(err, errlen, "argument must be 'yes' or 'no'");
    } else if (!strcasecmp(name, "log-sync")) {
        if (!strcasecmp(argv[0], "fdatasync")) c->log_sync = CONFIG_SYNC_FDATASYNC;
        else if (!strcasecmp(argv[0], "odsync")) c->log_sync = CONFIG_SYNC_ODSYNC;
        else return str_fail(err, errlen, "log-sync must be fdatasync or odsync");
    } else if (!strcasecmp(name, "respawn-limit")) {
        if (parse_int(argv[0], 1, 1000, &v)) return str_fail(err, errlen, "Invalid respawn-limit");
        c->respawn_limit = (int)v;
    } else {
        for (int i = 0; ignored[i]; i++)
            if (!strcasecmp(name, ignored[i])) return 0;
        return str_fail(err, errlen, "Bad directive or wrong number of arguments: '%s'", name);
    }
    return 0;
}

/* Split a config line into words, honouring "double" and 'single' quotes. */
static int split_words(char *line, char **words, int max)
{
    int n = 0;
    char *p = line;
    while (*p) {
        while (isspace((unsigned char)*p)) p++;
        if (!*p || *p == '#') break;
        if (n == max) return -1;
        if (*p == '"' || *p == '\'') {
            char q = *p++;
            words[n++] = p;
            while (*p && *p != q) p++;
            if (!*p) return -1;
            *p++ = '\0';
        } else {
            words[n++] = p;
            while (*p && !isspace((unsigned char)*p)) p++;
            if (*p) *p++ = '\0';
        }
    }
    return n;
}

int config_load_file(config_t *c, const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f) return str_fail(err, errlen, "Fatal error, can't open config file '%s': %s", path, strerror(errno));
    char line[4096];
    int lineno = 0;
    while (fgets(line, sizeof(line), f)) {
        lineno++;
        char *words[64];
        int n = split_words(line, words, 64);
        if (n < 0) {
            fclose(f);
            return str_fail(err, errlen, "%s:%d: unbalanced quotes or too many arguments", path, lineno);
        }
        if (n == 0) continue;
        char msg[256];
        if (config_set(c, words[0], n - 1, words + 1, msg, sizeof(msg))) {
            fclose(f);
            return str_fail(err, errlen, "%s:%d: %s", path, lineno, msg);
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
        i++;
    }
    while (i < argc) {
        if (strncmp(argv[i], "--", 2) != 0)
            return str_fail(err, errlen, "unexpected argument '%s' (options are --name value)", argv[i]);
        const char *name = argv[i] + 2;
        int j = i + 1;
        while (j < argc && strncmp(argv[j], "--", 2) != 0) j++;
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
    if (c->daemonize) return str_fail(err, errlen, "daemonize yes is not supported: run under a supervisor");
    if (c->port == 0 && !c->unixsocket)
        return str_fail(err, errlen, "nothing to listen on: set port or unixsocket");
    if (c->frontends == 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        c->frontends = n < 1 ? 1 : n > 64 ? 64 : (int)n;
    }
    return 0;
}
