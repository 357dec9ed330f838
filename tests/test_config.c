/*
 * test_config.c - the one settings table (common/config.c): every setting
 * accepts and refuses the same values, with the same Redis 7.0 error text,
 * whether it comes from a config file, a `--name value` argument or CONFIG
 * SET (config_set_value, which frontend/admin/config-cmd.c calls). The expected
 * verdicts and texts are what redis-server 7.0.15 answers for the settings
 * Redis has; AtticDB's own settings use the same wording.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"

typedef struct config_case {
    const char *name;
    const char *value; /* as one CONFIG SET argument; words for the file */
    const char *err;   /* NULL = accepted; else the exact error text */
} config_case_t;

#define RANGE(lo, hi) "argument must be between " lo " and " hi " inclusive"
#define NOT_INT       "argument couldn't be parsed into an integer"
#define NOT_MEM       "argument must be a memory value"
#define NOT_BOOL      "argument must be 'yes' or 'no'"
#define LLMAX         "9223372036854775807"

/* Inline data (Criterion re-runs tests in workers: no pointers to fill). */
static const config_case_t cases[] = {
    {"port", "6380", NULL},
    {"port", "65536", RANGE("0", "65535")},
    {"port", "06379", NOT_INT},
    {"bind", "127.0.0.1 -::1", NULL},
    {"unixsocket", "/tmp/attic.sock", NULL},
    {"unixsocketperm", "700", NULL},
    {"unixsocketperm", "8", "argument couldn't be parsed as an octal number"},
    {"unixsocketperm", "1000", RANGE("0", "777")},
    {"dir", "/tmp/attic-data", NULL},
    {"daemonize", "no", NULL},
    {"daemonize", "maybe", NOT_BOOL},
    {"databases", "256", NULL},
    {"databases", "0", RANGE("1", "256")},
    {"databases", "257", RANGE("1", "256")},
    {"tcp-backlog", "2147483647", NULL},
    {"tcp-backlog", "-1", RANGE("0", "2147483647")},
    {"logfile", "/tmp/attic.log", NULL},
    {"backup-dir", "/var/backups/atticdb", NULL},
    {"loglevel", "warning", NULL},
    {"loglevel", "loud",
     "argument(s) must be one of the following: debug, verbose, notice, warning"},
    {"maxmemory", "100mb", NULL},
    {"maxmemory", "lots", NOT_MEM},
    {"maxmemory-policy", "allkeys-lfu", NULL},
    {"maxmemory-policy", "lru",
     "argument(s) must be one of the following: volatile-lru, volatile-lfu, volatile-random, "
     "volatile-ttl, allkeys-lru, allkeys-lfu, allkeys-random, noeviction"},
    {"maxmemory-samples", "10", NULL},
    {"maxmemory-samples", "0", RANGE("1", "2147483647")},
    {"maxmemory-eviction-tenacity", "100", NULL},
    {"maxmemory-eviction-tenacity", "101", RANGE("0", "100")},
    {"lfu-log-factor", "0", NULL},
    {"lfu-log-factor", "-1", RANGE("0", "2147483647")},
    {"lfu-decay-time", "60", NULL},
    {"lfu-decay-time", "2147483648", RANGE("0", "2147483647")},
    {"maxclients", "4294967295", NULL},
    {"maxclients", "0", RANGE("1", "4294967295")},
    {"maxclients", "4294967296", RANGE("1", "4294967295")},
    {"maxclients", "10k", NOT_INT},
    {"timeout", "2147483647", NULL},
    {"timeout", "-1", RANGE("0", "2147483647")},
    {"timeout", "1.5", NOT_INT},
    {"protected-mode", "no", NULL},
    {"protected-mode", "maybe", NOT_BOOL},
    {"requirepass", "s3cret", NULL},
    {"requirepass",
     "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
     "xxxx"
     "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
     "xxxx"
     "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
     "xxxx"
     "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
     "xxxx"
     "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
     "xxxx"
     "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
     "xxxx",
     "the password is too long or holds a NUL byte"},
    {"proto-max-bulk-len", "1mb", NULL},
    {"proto-max-bulk-len", "2000000b", NULL},
    {"proto-max-bulk-len", "1kb", RANGE("1048576", LLMAX)},
    {"proto-max-bulk-len", "abc", NOT_MEM},
    {"proto-max-bulk-len", "-1", NOT_MEM},
    {"client-query-buffer-limit", "1gb", NULL},
    {"client-query-buffer-limit", "1024", RANGE("1048576", LLMAX)},
    {"client-output-buffer-limit", "normal 1mb 512kb 10", NULL},
    {"client-output-buffer-limit", "normal 1mb 512kb 10 pubsub 0 0 0", NULL},
    {"client-output-buffer-limit", "normal 1 2",
     "Wrong number of arguments in buffer limit configuration."},
    {"client-output-buffer-limit", "normal 1 2 -1",
     "Error in hard, soft or soft_seconds setting in buffer limit configuration."},
    {"client-output-buffer-limit", "master 1 2 3",
     "Invalid client class specified in buffer limit configuration."},
    {"client-output-buffer-limit", "replica 1mb 0 0", NULL},
    {"client-output-buffer-limit", "slave 0 64mb 60", NULL},
    /* Redis 7.0.15's bounds and texts (D67). */
    {"repl-backlog-size", "1", NULL},
    {"repl-backlog-size", "16kb", NULL},
    {"repl-backlog-size", "0", RANGE("1", LLMAX)},
    {"repl-backlog-size", "abc", NOT_MEM},
    {"repl-backlog-ttl", "0", NULL},
    {"repl-backlog-ttl", "-1", RANGE("0", LLMAX)},
    {"repl-backlog-ttl", "abc", NOT_INT},
    {"notify-keyspace-events", "KEA", NULL},
    {"notify-keyspace-events", "", NULL},
    {"notify-keyspace-events", "g$lshzxetdmnKE", NULL},
    {"notify-keyspace-events", "Kq", "Invalid event class character. Use 'Ag$lshzxeKEtmdn'."},
    {"slowlog-log-slower-than", "-1", NULL},
    {"slowlog-log-slower-than", "-2", RANGE("-1", LLMAX)},
    {"slowlog-max-len", "0", NULL},
    {"set-max-intset-entries", "0", NULL},
    {"set-max-intset-entries", "512", NULL},
    {"set-max-intset-entries", "-1", RANGE("0", LLMAX)},
    {"hll-sparse-max-bytes", "0", NULL},
    {"hll-sparse-max-bytes", "1kb", NULL},
    {"hll-sparse-max-bytes", "-1", NOT_MEM},
    {"list-max-listpack-size", "-5", NULL},
    {"list-max-listpack-size", "128", NULL},
    {"list-max-listpack-size", "2147483648", RANGE("-2147483648", "2147483647")},
    {"list-max-ziplist-size", "-2", NULL},
    {"list-max-ziplist-size", "-2147483649", RANGE("-2147483648", "2147483647")},
    {"list-compress-depth", "1", NULL},
    {"cluster-enabled", "yes", NULL},
    {"cluster-enabled", "maybe", NOT_BOOL},
    {"cluster-config-file", "nodes-6379.conf", NULL},
    {"cluster-announce-ip", "10.0.0.7", NULL},
    {"list-compress-depth", "-1", RANGE("0", "2147483647")},
    {"rdbcompression", "no", NULL},
    {"rdbcompression", "YES", NULL},
    {"rdbcompression", "1", NOT_BOOL},
    {"hash-max-listpack-entries", "0", NULL},
    {"hash-max-listpack-entries", "128", NULL},
    {"hash-max-listpack-entries", "-1", RANGE("0", LLMAX)},
    {"hash-max-ziplist-entries", "512", NULL},
    {"hash-max-ziplist-entries", "-1", RANGE("0", LLMAX)},
    {"hash-max-listpack-value", "64", NULL},
    {"hash-max-listpack-value", "1kb", NULL},
    {"hash-max-listpack-value", "abc", NOT_MEM},
    {"hash-max-ziplist-value", "0", NULL},
    {"hash-max-ziplist-value", "-1", NOT_MEM},
    {"zset-max-listpack-entries", "0", NULL},
    {"zset-max-listpack-entries", "128", NULL},
    {"zset-max-listpack-entries", "-1", RANGE("0", LLMAX)},
    {"zset-max-ziplist-entries", "128", NULL},
    {"zset-max-ziplist-entries", "-1", RANGE("0", LLMAX)},
    {"zset-max-listpack-value", "64", NULL},
    {"zset-max-listpack-value", "1kb", NULL},
    {"zset-max-listpack-value", "abc", NOT_MEM},
    {"zset-max-ziplist-value", "0", NULL},
    {"zset-max-ziplist-value", "-1", NOT_MEM},
    {"slowlog-max-len", "-1", RANGE("0", LLMAX)},
    {"latency-monitor-threshold", "100", NULL},
    {"latency-monitor-threshold", "-1", RANGE("0", LLMAX)},
    {"save", "900 1", NULL},
    {"save", "", NULL},
    {"save", "3600 1 300 100", NULL},
    {"save", "900", "Invalid save parameters"},
    {"save", "900 x", "Invalid save parameters"},
    {"save", "-1 1", "Invalid save parameters"},
    {"appendonly", "yes", NULL},
    {"appendfsync", "everysec", NULL},
    {"frontends", "64", NULL},
    {"frontends", "65", RANGE("0", "64")},
    {"ring-size", "1mb", NULL},
    {"ring-size", "1kb", RANGE("65536", LLMAX)},
    {"ring-size", "big", NOT_MEM},
    {"segment-size", "128mb", NULL},
    {"segment-size", "1kb", RANGE("65536", LLMAX)},
    {"channel-size", "8mb", NULL},
    {"channel-size", "1kb", RANGE("65536", LLMAX)},
    {"read-cache-size", "0", NULL},
    {"read-cache-size", "2000gb", RANGE("0", "1099511627776")},
    {"big-value-buffer", "1mb", NULL},
    {"big-value-buffer", "2gb", RANGE("65536", "1073741824")},
    {"log-sync", "odsync", NULL},
    {"log-sync", "uring", NULL},
    {"log-sync", "direct", NULL},
    {"log-sync", "fsync",
     "argument(s) must be one of the following: fdatasync, odsync, uring, direct"},
    {"logger-nice", "0", NULL},
    {"logger-nice", "-20", NULL},
    {"logger-nice", "19", NULL},
    {"logger-nice", "-21", RANGE("-20", "19")},
    {"logger-nice", "20", RANGE("-20", "19")},
    {"read-io", "pread", NULL},
    {"read-io", "buffered", NULL},
    {"read-io", "direct", "argument(s) must be one of the following: uring, buffered, pread"},
    {"respawn-limit", "1000", NULL},
    {"respawn-limit", "0", RANGE("1", "1000")},
    {"checkpoint-bytes", "0", NULL},
    {"checkpoint-bytes", "1gb", NULL},
    {"checkpoint-bytes", "-1", NOT_MEM},
    {"collection-paging-entries", "0", NULL},
    {"collection-paging-entries", "1000000", NULL},
    {"collection-paging-entries", "-1", RANGE("0", "4294967295")},
    {"collection-page-size", "1kb", NULL},
    {"collection-page-size", "64kb", NULL},
    {"collection-page-size", "100", RANGE("512", "65536")},
    {"collection-page-size", "128kb", RANGE("512", "65536")},
    {"min-replicas-to-write", "0", NULL},
    {"min-replicas-to-write", "3", NULL},
    {"min-replicas-to-write", "-1", RANGE("0", "2147483647")},
    {"min-slaves-to-write", "2", NULL},
    {"min-slaves-to-write", "x", NOT_INT},
    {"min-replicas-max-lag", "0", NULL},
    {"min-replicas-max-lag", "-1", RANGE("0", "2147483647")},
    {"min-slaves-max-lag", "5", NULL},
    {"min-slaves-max-lag", "-1", RANGE("0", "2147483647")},
    {"min-replicas-acked", "0", NULL},
    {"min-replicas-acked", "16", NULL},
    {"min-replicas-acked", "17", RANGE("0", "16")},
    {"space-amplification-target", "0", NULL},
    {"space-amplification-target", "1.5", NULL},
    {"space-amplification-target", "100", NULL},
    {"space-amplification-target", "1.05", "argument must be 0 (off) or between 1.1 and 100"},
    {"space-amplification-target", "2x", "argument must be 0 (off) or between 1.1 and 100"},
};
#define NCASES (sizeof(cases) / sizeof(cases[0]))

/* The value as it comes from a config file: `name value` on one line. */
static int from_file(const config_case_t *t, char *err, size_t errlen)
{
    char path[] = "/tmp/attic-test-config.XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    FILE *f = fdopen(fd, "w");
    fprintf(f, "# a comment\n%s %s\n", t->name, t->value);
    fclose(f);
    config_t c;
    config_defaults(&c);
    int rc = config_load_file(&c, path, err, errlen);
    config_free(&c);
    unlink(path);
    return rc;
}

/* The value as `atticdb-server --name value...`. */
static int from_args(const config_case_t *t, char *err, size_t errlen)
{
    char words[1024], opt[64];
    snprintf(words, sizeof(words), "%s", t->value);
    snprintf(opt, sizeof(opt), "--%s", t->name);
    char *argv[16] = {"atticdb-server", opt};
    int argc = 2;
    for (char *w = strtok(words, " "); w && argc < 16; w = strtok(NULL, " "))
        argv[argc++] = w;
    config_t c;
    config_defaults(&c);
    int rc = config_from_args(&c, argc, argv, err, errlen);
    config_free(&c);
    return rc;
}

Test(config, the_file_takes_what_redis_takes)
{
    for (size_t i = 0; i < NCASES; i++) {
        const config_case_t *t = &cases[i];
        char err[512] = "";
        int rc = from_file(t, err, sizeof(err));
        if (!t->err) {
            cr_expect_eq(rc, 0, "file: %s %s refused: %s", t->name, t->value, err);
        } else {
            cr_expect_eq(rc, -1, "file: %s %s accepted", t->name, t->value);
            cr_expect(strstr(err, t->err), "file: %s %s: '%s', want '%s'", t->name, t->value, err,
                      t->err);
        }
    }
}

Test(config, arguments_take_what_the_file_takes)
{
    for (size_t i = 0; i < NCASES; i++) {
        const config_case_t *t = &cases[i];
        char err[512] = "";
        int rc = from_args(t, err, sizeof(err));
        cr_expect_eq(rc, t->err ? -1 : 0, "--%s %s: rc %d (%s)", t->name, t->value, rc, err);
        if (t->err) cr_expect(strstr(err, t->err), "--%s %s: '%s'", t->name, t->value, err);
    }
}

/* CONFIG SET's path (config_set_value on one argument) gives the file's
 * verdict and exactly Redis' text, for the settings CONFIG SET may change;
 * the others it refuses before reading the value. */
Test(config, config_set_takes_what_the_file_takes)
{
    for (size_t i = 0; i < NCASES; i++) {
        const config_case_t *t = &cases[i];
        const config_entry_t *e = config_find(t->name, strlen(t->name));
        cr_assert_not_null(e, "%s is not in the table", t->name);
        if (!(e->flags & CONFIG_MUTABLE)) continue;
        config_t c;
        config_defaults(&c);
        char err[512] = "";
        int rc = config_set_value(&c, e, t->value, strlen(t->value), err, sizeof(err));
        config_free(&c);
        cr_expect_eq(rc, t->err ? -1 : 0, "CONFIG SET %s '%s': rc %d (%s)", t->name, t->value, rc,
                     err);
        if (t->err) cr_expect_str_eq(err, t->err, "CONFIG SET %s '%s'", t->name, t->value);
    }
}

/* Every setting CONFIG GET or SET knows has cases here, refused ones
 * included where it has bounds: a new setting needs its line above. */
Test(config, every_setting_is_covered)
{
    const config_entry_t *e;
    for (size_t i = 0; (e = config_entry_at(i)); i++) {
        if (e->flags & CONFIG_FILE_ONLY) continue;
        int good = 0, bad = 0;
        for (size_t j = 0; j < NCASES; j++) {
            if (strcmp(cases[j].name, e->name)) continue;
            if (cases[j].err)
                bad++;
            else
                good++;
        }
        cr_expect(good > 0, "%s: no accepted value tested", e->name);
        int bounded =
            e->type != CONFIG_STRING && e->type != CONFIG_IGNORED && strcmp(e->name, "bind");
        cr_expect(!bounded || bad > 0, "%s: no refused value tested", e->name);
    }
}

/* A value CONFIG SET refuses leaves the settings as they were, and one with
 * a NUL byte inside is refused, not cut at the NUL. */
Test(config, refused_values_change_nothing)
{
    config_t c;
    config_defaults(&c);
    const config_entry_t *e = config_find("maxclients", 10);
    char err[256];
    cr_expect_eq(config_set_value(&c, e,
                                  "12\0"
                                  "3",
                                  4, err, sizeof(err)),
                 -1);
    cr_expect_eq(c.maxclients, 10000);
    e = config_find("requirepass", 11);
    cr_expect_eq(config_set_value(&c, e, "ab\0c", 4, err, sizeof(err)), -1);
    cr_expect_null(c.requirepass);
    e = config_find("client-output-buffer-limit", 26);
    cr_expect_eq(config_set_value(&c, e, "normal 1 1 1 pubsub 1 1 x", 25, err, sizeof(err)), -1);
    cr_expect_eq(c.obuf_hard, 256ull << 20, "a bad class after normal keeps normal's old values");
    cr_expect_eq(c.obuf_replica_hard, 256ull << 20);
    cr_expect_eq(config_set_value(&c, e, "slave 1mb 512kb 5", 17, err, sizeof(err)), 0);
    cr_expect_eq(c.obuf_replica_hard, 1ull << 20, "slave is replica's alias");
    cr_expect_eq(c.obuf_replica_soft, 512ull << 10);
    cr_expect_eq(c.obuf_replica_soft_seconds, 5);
    cr_expect_eq(c.repl_backlog_size, 1ull << 20, "Redis' default");
    cr_expect_eq(c.repl_backlog_ttl, 3600);
    config_free(&c);
}

/* The defaults, read through the table, are the documented ones, and
 * CONFIG GET shows each as a value the table accepts back. */
Test(config, defaults_read_back)
{
    config_t c;
    config_defaults(&c);
    cr_expect_eq(c.port, 6379);
    cr_expect_eq(c.nbind, 2);
    cr_expect_str_eq(c.bind[1], "-::1");
    cr_expect_str_eq(c.dir, "./data");
    cr_expect_eq(c.ring_size, 16ull << 20);
    cr_expect_eq(c.segment_size, 64ull << 20);
    cr_expect_eq(c.chan_size, 4ull << 20);
    cr_expect_eq(c.proto_max_bulk_len, 512ll << 20);
    cr_expect_eq(c.client_query_buffer_limit, 1ull << 30);
    cr_expect_eq(c.maxclients, 10000);
    cr_expect_eq(c.databases, 16);
    cr_expect_eq(c.obuf_hard, 256ull << 20);
    cr_expect_eq(c.obuf_soft, 64ull << 20);
    cr_expect_eq(c.obuf_soft_seconds, 60);
    cr_expect_eq(c.tcp_backlog, 511);
    cr_expect_eq(c.loglevel, 2);
    cr_expect_eq(c.protected_mode, 1);
    cr_expect_eq(c.slowlog_log_slower_than, 10000);
    cr_expect_eq(c.slowlog_max_len, 128);
    cr_expect_eq(c.respawn_limit, 5);
    cr_expect_eq(c.max_args, 1024 * 1024);
    cr_expect_eq(c.rdb_compression, 1);
    const config_entry_t *e;
    for (size_t i = 0; (e = config_entry_at(i)); i++) {
        if ((e->flags & CONFIG_FILE_ONLY) || e->type == CONFIG_IGNORED) continue;
        buf_t v;
        buf_init(&v);
        config_format(&c, e, &v);
        config_t again;
        config_defaults(&again);
        char err[256] = "";
        cr_expect_eq(config_set_value(&again, e, v.data ? v.data : "", v.len, err, sizeof(err)), 0,
                     "%s: CONFIG GET's '%.*s' is refused: %s", e->name, (int)v.len, v.data, err);
        config_free(&again);
        buf_free(&v);
    }
    config_free(&c);
}

/* ---- etc/atticdb.conf, the example make install ships ---- */

static char *example_text(void)
{
    const char *path = getenv("ATTICDB_CONF_EXAMPLE");
    cr_assert(path, "ATTICDB_CONF_EXAMPLE is set by make check");
    FILE *f = fopen(path, "r");
    cr_assert(f, "can't open %s", path);
    static char text[64 * 1024];
    size_t n = fread(text, 1, sizeof(text) - 1, f);
    fclose(f);
    text[n] = '\0';
    return text;
}

/* Does the text have a line "name ..." (active) or "# name ..." (an
 * example of a setting unset by default)? 1 active, 2 commented, 0 none. */
static int example_line(const char *text, const char *name)
{
    size_t nl = strlen(name);
    for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
        int commented = !strncmp(p, "# ", 2);
        const char *w = commented ? p + 2 : p;
        if (!strncmp(w, name, nl) && w[nl] == ' ') return commented ? 2 : 1;
    }
    return 0;
}

Test(config, example_file_names_every_setting_with_its_default)
{
    const char *text = example_text();
    config_t dflt, file;
    config_defaults(&dflt);
    config_defaults(&file);
    char err[512];
    cr_assert_eq(config_load_file(&file, getenv("ATTICDB_CONF_EXAMPLE"), err, sizeof(err)), 0, "%s",
                 err);
    const config_entry_t *e;
    for (size_t i = 0; (e = config_entry_at(i)); i++) {
        if (e->type == CONFIG_IGNORED) {
            /* Redis' directives that mean nothing here: named in the
             * compatibility note, never set. */
            cr_expect(strstr(text, e->name), "the example does not mention %s", e->name);
            cr_expect_eq(example_line(text, e->name), 0, "the example sets %s", e->name);
            continue;
        }
        int how = example_line(text, e->name);
        cr_expect(how, "the example lacks a line for %s", e->name);
        if (!e->format && e->type == CONFIG_SPECIAL) {
            /* `user`: words that only add; an example, never active. */
            cr_expect_eq(how, 2, "the example declares %s", e->name);
            continue;
        }
        if (how == 2)
            cr_expect(!e->default_text, "%s has a default (%s): give it as an active line", e->name,
                      e->default_text);
        buf_t a, b;
        buf_init(&a);
        buf_init(&b);
        config_format(&dflt, e, &a);
        config_format(&file, e, &b);
        cr_expect(a.len == b.len && (!a.len || !memcmp(a.data, b.data, a.len)),
                  "the example sets %s to %.*s, its default is %.*s", e->name, (int)b.len, b.data,
                  (int)a.len, a.data);
        buf_free(&a);
        buf_free(&b);
    }
    cr_expect_eq(file.nusers, 0);
    config_free(&dflt);
    config_free(&file);
}

/* ---- CONFIG REWRITE's file work (common/config-rewrite.c) ---- */

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert(f);
    fputs(text, f);
    fclose(f);
}

static char *read_text(const char *path)
{
    static char text[8192];
    FILE *f = fopen(path, "r");
    cr_assert(f);
    size_t n = fread(text, 1, sizeof(text) - 1, f);
    fclose(f);
    text[n] = '\0';
    return text;
}

Test(config, rewrite_changes_set_lines_in_place_and_keeps_the_rest)
{
    char path[] = "/tmp/attic-rewrite-XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    close(fd);
    write_text(path, "# a comment\n"
                     "port 7001\n"
                     "\n"
                     "MaxClients 100   # the old limit\n"
                     "proto-max-bulk-len 512mb\n"
                     "timeout 5\n"
                     "maxclients 200\n"
                     "user alice on nopass ~* +@all\n");
    config_t c;
    config_defaults(&c);
    char err[256];
    cr_assert_eq(config_load_file(&c, path, err, sizeof(err)), 0, "%s", err);
    /* A line the rewrite does not understand is kept too. */
    write_text(path, "# a comment\n"
                     "port 7001\n"
                     "\n"
                     "MaxClients 100   # the old limit\n"
                     "proto-max-bulk-len 512mb\n"
                     "timeout 5\n"
                     "maxclients 200\n"
                     "something-unknown to us\n"
                     "user alice on nopass ~* +@all\n");
    /* As CONFIG SET leaves them: two changed, one back to the file's value
     * in other words, one not in the file. */
    cr_assert_eq(config_set_value(&c, config_find("maxclients", 10), "300", 3, err, sizeof(err)),
                 0);
    cr_assert_eq(config_set_value(&c, config_find("proto-max-bulk-len", 18), "536870912", 9, err,
                                  sizeof(err)),
                 0);
    cr_assert_eq(config_set_value(&c, config_find("loglevel", 8), "warning", 7, err, sizeof(err)),
                 0);
    cr_assert_eq(
        config_set_value(&c, config_find("requirepass", 11), "two words", 9, err, sizeof(err)), 0);
    cr_assert_eq(config_set_value(&c, config_find("client-query-buffer-limit", 25), "2097152", 7,
                                  err, sizeof(err)),
                 0);
    c.port = 9999; /* not changeable by CONFIG SET: never written */
    cr_assert_eq(config_rewrite(path, &c, err, sizeof(err)), 0, "%s", err);
    cr_assert_str_eq(read_text(path), "# a comment\n"
                                      "port 7001\n"
                                      "\n"
                                      "maxclients 300\n"
                                      "proto-max-bulk-len 512mb\n"
                                      "timeout 5\n"
                                      "something-unknown to us\n"
                                      "user alice on nopass ~* +@all\n"
                                      "# Generated by CONFIG REWRITE\n"
                                      "loglevel warning\n"
                                      "requirepass \"two words\"\n"
                                      "client-query-buffer-limit 2mb\n");
    /* What was written reads back as the running values (without the line
     * the loader does not know). */
    {
        char *t = read_text(path), *u = strstr(t, "something-unknown to us\n");
        cr_assert(u);
        memmove(u, u + strlen("something-unknown to us\n"), strlen(u) - 24 + 1);
        char copy[8192];
        snprintf(copy, sizeof(copy), "%s", t);
        write_text(path, copy);
    }
    config_t back;
    config_defaults(&back);
    cr_assert_eq(config_load_file(&back, path, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(back.maxclients, 300);
    cr_assert_eq(back.loglevel, 3);
    cr_assert_str_eq(back.requirepass, "two words");
    cr_assert_eq(back.client_query_buffer_limit, 2097152);
    /* A second rewrite with nothing changed leaves the file as it is. */
    char before[8192];
    snprintf(before, sizeof(before), "%s", read_text(path));
    cr_assert_eq(config_rewrite(path, &back, err, sizeof(err)), 0, "%s", err);
    cr_assert_str_eq(read_text(path), before);
    config_free(&back);
    config_free(&c);
    unlink(path);
}

Test(config, rewrite_of_a_missing_file_fails_and_creates_nothing)
{
    config_t c;
    config_defaults(&c);
    char err[256];
    cr_assert_eq(config_rewrite("/tmp/attic-no-such-dir/x.conf", &c, err, sizeof(err)), -1);
    cr_assert(strstr(err, "No such file"), "%s", err);
    config_free(&c);
}
