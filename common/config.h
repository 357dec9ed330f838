/*
 * config.h - server settings, from a redis.conf style file and the command
 * line (`atticdb-server [file] [--name value ...]`, as redis-server takes).
 * Parsed once by the master before forking; children read the copy they
 * inherit.
 */
#ifndef ATTIC_CONFIG_H
#define ATTIC_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#define CONFIG_MAX_BINDS 8
#define CONFIG_MAX_USER_WORDS 64

/* A `user <name> <rules...>` line: the ACL user it declares. */
typedef struct config_user {
    char **words; /* name, then the rules */
    int nwords;
} config_user_t;

/* How the logger makes a batch durable (docs/DECISIONS.md has the numbers). */
enum { CONFIG_SYNC_FDATASYNC = 0, CONFIG_SYNC_ODSYNC = 1 };

typedef struct config {
    int port;                        /* 0 = no TCP listener */
    char *bind[CONFIG_MAX_BINDS];    /* addresses to listen on; "-addr" may fail to bind */
    int nbind;
    char *unixsocket;                /* NULL = none */
    int unixsocketperm;              /* octal mode, 0 = leave default */
    char *dir;                       /* data directory */
    int frontends;                   /* 0 = number of cores */
    uint64_t ring_size;              /* bytes, power of two */
    uint64_t segment_size;           /* bytes, power of two multiple of ring_size */
    uint64_t chan_size;              /* per frontend channel, bytes, power of two */
    int64_t proto_max_bulk_len;
    int64_t max_args;
    size_t max_inline_len;
    uint64_t client_query_buffer_limit;
    int maxclients;
    int databases;                   /* 1..256, default 16 */
    int timeout;                     /* close clients idle this many seconds, 0 = never */
    uint64_t obuf_hard;              /* client-output-buffer-limit normal: hard bytes, 0 = none */
    uint64_t obuf_soft;              /* ... soft bytes, 0 = none */
    int obuf_soft_seconds;           /* ... over soft this long closes the client */
    int tcp_backlog;
    char *logfile;                   /* NULL or "" = stderr */
    int loglevel;                    /* LOG_DEBUG .. LOG_WARNING (log.h) */
    char *requirepass;               /* the default user's password (NULL = none set) */
    int protected_mode;   /* refuse non-loopback clients while the default user has no password */
    config_user_t *users; /* `user` lines, in file order */
    int nusers;
    int64_t slowlog_log_slower_than; /* microseconds; < 0 disables, 0 logs every command */
    int64_t slowlog_max_len;
    int daemonize;                   /* accepted for compatibility; must be no */
    int respawn_limit;               /* deaths in a row at start before giving up */
    int log_sync;                    /* CONFIG_SYNC_FDATASYNC or CONFIG_SYNC_ODSYNC */
} config_t;

/* Defaults: 127.0.0.1 and ::1 (optional) port 6379, protected mode, ./data,
 * one frontend per core, 16 MiB ring, 64 MiB segments. */
void config_defaults(config_t *c);

/*
 * Apply one directive (name and its arguments as words). Returns 0, or -1
 * with a message in err (size errlen) naming what is wrong.
 */
int config_set(config_t *c, const char *name, int argc, char **argv, char *err, size_t errlen);

/* Free what config_defaults and config_set allocated. */
void config_free(config_t *c);

/* Read a redis.conf style file. Returns 0 or -1 with a message (file:line). */
int config_load_file(config_t *c, const char *path, char *err, size_t errlen);

/* Parse argv as redis-server does: optional config file first, then
 * `--name value...` pairs. Returns 0 or -1 with a message. */
int config_from_args(config_t *c, int argc, char **argv, char *err, size_t errlen);

/* Check relations between settings (sizes powers of two, ...). */
int config_validate(config_t *c, char *err, size_t errlen);

/* Parse sizes as redis.conf does: 100, 1k, 1kb, 16mb, 1g (k=1000, kb=1024). */
int config_parse_memory(const char *s, uint64_t *out);

#endif
