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

#include "buf.h"

#define CONFIG_MAX_BINDS      8
#define CONFIG_MAX_USER_WORDS 64

/* maxmemory-policy values: their index in common/config.c's names. */
enum {
    CONFIG_POLICY_VOLATILE_LRU = 0,
    CONFIG_POLICY_VOLATILE_LFU = 1,
    CONFIG_POLICY_VOLATILE_RANDOM = 2,
    CONFIG_POLICY_VOLATILE_TTL = 3,
    CONFIG_POLICY_ALLKEYS_LRU = 4,
    CONFIG_POLICY_ALLKEYS_LFU = 5,
    CONFIG_POLICY_ALLKEYS_RANDOM = 6,
    CONFIG_POLICY_NOEVICTION = 7,
};

/* Does this maxmemory-policy choose victims by access (LRU, LFU)? Then a
 * read must touch the key's access data, which a read answered from the
 * frontends' read cache does not (D70). */
static inline int config_policy_by_access(int policy)
{
    return policy == CONFIG_POLICY_VOLATILE_LRU || policy == CONFIG_POLICY_ALLKEYS_LRU ||
           policy == CONFIG_POLICY_VOLATILE_LFU || policy == CONFIG_POLICY_ALLKEYS_LFU;
}

/* A `user <name> <rules...>` line: the ACL user it declares. */
typedef struct config_user {
    char **words; /* name, then the rules */
    int nwords;
} config_user_t;

/* How the logger makes a batch durable (docs/DECISIONS.md has the numbers). */
enum {
    CONFIG_SYNC_FDATASYNC = 0, /* pwrite, then one fdatasync per batch */
    CONFIG_SYNC_ODSYNC = 1,    /* segments opened O_DSYNC */
    CONFIG_SYNC_URING = 2,     /* pwrite, then fdatasyncs in flight via io_uring (D24) */
    CONFIG_SYNC_DIRECT = 3,    /* one O_DIRECT|O_DSYNC write of whole blocks per batch (D24) */
};

/* How the store reads values from the log for read commands (D59). */
enum {
    CONFIG_READ_URING = 0,    /* io_uring, many in flight; the device with O_DIRECT */
    CONFIG_READ_BUFFERED = 1, /* io_uring, many in flight; the device through the page cache */
    CONFIG_READ_PREAD = 2,    /* one pread at a time, in the store's loop */
};

typedef struct config {
    int port;                     /* 0 = no TCP listener */
    char *bind[CONFIG_MAX_BINDS]; /* addresses to listen on; "-addr" may fail to bind */
    int nbind;
    char *unixsocket;         /* NULL = none */
    int unixsocketperm;       /* octal mode, 0 = leave default */
    char *dir;                /* data directory */
    int frontends;            /* 0 = number of cores */
    uint64_t ring_size;       /* bytes, power of two */
    uint64_t segment_size;    /* bytes, power of two multiple of ring_size */
    uint64_t chan_size;       /* per frontend channel, bytes, power of two */
    uint64_t read_cache_size; /* GET replies shared with the frontends (D70); 0 = none */
    int64_t proto_max_bulk_len;
    int64_t max_args;
    size_t max_inline_len;
    uint64_t client_query_buffer_limit;
    uint64_t big_value_buffer; /* bytes of a large bulk a connection holds while it arrives (D48) */
    int64_t maxclients;        /* 1..4294967295, as Redis */
    uint64_t maxmemory;        /* bytes of used_memory past which the policy applies; 0 = none */
    int maxmemory_policy;      /* CONFIG_POLICY_*: index in the maxmemory-policy names (config.c) */
    int64_t maxmemory_samples;
    int maxmemory_eviction_tenacity; /* 0..100: how long one eviction round may run (D43) */
    uint32_t notify_keyspace_events; /* enum ps_notify (common/pubsub.h), D37 */
    int lfu_log_factor;    /* LFU counter growth: 1 / ((counter - 5) * factor + 1) per use */
    int lfu_decay_time;    /* minutes per step down of an LFU counter; 0 = never */
    int databases;         /* 1..256, default 16 */
    int timeout;           /* close clients idle this many seconds, 0 = never */
    uint64_t obuf_hard;    /* client-output-buffer-limit normal: hard bytes, 0 = none */
    uint64_t obuf_soft;    /* ... soft bytes, 0 = none */
    int obuf_soft_seconds; /* ... over soft this long closes the client */
    /* client-output-buffer-limit pubsub: the same three for a client with
     * a subscription (D37) */
    uint64_t obuf_pubsub_hard, obuf_pubsub_soft;
    int obuf_pubsub_soft_seconds;
    /* client-output-buffer-limit replica (or slave): how far behind the
     * durable LSN a replica may fall before the leader drops it and stops
     * keeping the log it needs (D67) */
    uint64_t obuf_replica_hard, obuf_replica_soft;
    int obuf_replica_soft_seconds;
    int tcp_backlog;
    char *logfile;        /* NULL or "" = stderr */
    int loglevel;         /* LOG_DEBUG .. LOG_WARNING (log.h) */
    char *requirepass;    /* the default user's password (NULL = none set) */
    int protected_mode;   /* refuse non-loopback clients while the default user has no password */
    config_user_t *users; /* `user` lines, in file order */
    int nusers;
    int64_t slowlog_log_slower_than; /* microseconds; < 0 disables, 0 logs every command */
    int64_t slowlog_max_len;
    int64_t latency_monitor_threshold; /* ms; 0 = LATENCY records nothing */
    int daemonize;                     /* accepted for compatibility; must be no */
    int respawn_limit;                 /* deaths in a row at start before giving up */
    int log_sync;                      /* CONFIG_SYNC_* */
    int logger_nice;                   /* the logger thread's nice (D80) */
    int read_io;                       /* CONFIG_READ_* */
    uint64_t checkpoint_bytes;         /* log applied between store checkpoints; 0 = none */
    char *backup_dir;                  /* where SAVE/BGSAVE put backups; relative: to dir (D38) */
    int min_replicas_to_write;  /* writes refused (-NOREPLICAS) below this many good replicas */
    int min_replicas_max_lag;   /* seconds since its last ack within which a replica is good */
    int min_replicas_acked;     /* a write's ack waits for this many replicas (D33) */
    uint64_t repl_backlog_size; /* log kept below the durable LSN for replicas to resume (D67) */
    int64_t repl_backlog_ttl;   /* s after the last replica left that it is kept; 0 = always */
    char *replicaof_host;       /* `replicaof host port`: the leader to follow, NULL = none */
    int replicaof_port;
    char *config_file;       /* absolute path of the file given at start, NULL = none
                              * (INFO server, CONFIG REWRITE) */
    double space_amp_target; /* relocate while the log spans more than this x live; 0 = off */
    uint64_t paging_entries; /* a hash or set this large is paged (D60); 0 = never */
    uint64_t page_size;      /* a page's target size in bytes (D60) */
    /* A hash is listpack-encoded (OBJECT ENCODING) while it has at most
     * this many fields, none longer than this many bytes (names and values);
     * hash writes carry both into the log (common/command.h, CMD_HSET). */
    int64_t hash_max_listpack_entries;
    int64_t hash_max_listpack_value;
    /* A set of integers stays intset-encoded up to this many members. */
    int64_t set_max_intset_entries;
    /* A HyperLogLog stays sparse while its string is at most this long;
     * PFADD and PFMERGE carry it into the log. */
    int64_t hll_sparse_max_bytes;
    /* A sorted set is listpack-encoded while it has at most this many
     * members, none longer than this many bytes; zset writes carry both
     * (common/command.h, CMD_ZADD). */
    int64_t zset_max_listpack_entries;
    int64_t zset_max_listpack_value;
    /* Cluster protocol (D35, common/cluster.h): the topology file names
     * this server's node by cluster_announce_ip (or a bind address) and
     * port when no line is flagged myself. */
    int cluster_enabled;
    char *cluster_config_file; /* relative to dir unless absolute */
    char *cluster_announce_ip; /* NULL = none */
    /* Lists: every Redis 7.0 list is a quicklist; these two shape only
     * DUMP's payload (its nodes and which of them are compressed, D40,
     * D57). */
    int64_t list_max_listpack_size;
    int64_t list_compress_depth;
    int rdb_compression; /* rdbcompression: DUMP compresses strings with LZF as Redis (D57) */
} config_t;

/*
 * The settings table. Each setting is one entry: its name, how its value is
 * read (type and bounds, or its own parser), its default, whether CONFIG
 * SET may change it while running, and the config_t field it lives in. The
 * config file, the `--name value` arguments, CONFIG GET and CONFIG SET all
 * go through the entry, so they accept the same values and refuse the rest
 * with the same Redis 7.0 error text ("argument must be between 1 and
 * 4294967295 inclusive").
 */
typedef enum config_type {
    CONFIG_INT,     /* decimal, as Redis' string2ll reads it */
    CONFIG_MEMORY,  /* 100, 100b, 1k, 1kb, 16mb, 1g, 1gb (k = 1000, kb = 1024) */
    CONFIG_OCTAL,   /* 0..0777, a file mode */
    CONFIG_BOOL,    /* yes / no */
    CONFIG_ENUM,    /* one of the entry's names; the field holds its index */
    CONFIG_STRING,  /* any text; "" leaves the field unset */
    CONFIG_SPECIAL, /* the entry's own parse and format functions */
    CONFIG_IGNORED, /* a Redis directive that means nothing here: accepted */
} config_type_t;

enum {
    CONFIG_MUTABLE = 1u << 0,   /* CONFIG SET may change it while running */
    CONFIG_FILE_ONLY = 1u << 1, /* unknown to CONFIG GET and CONFIG SET */
    CONFIG_WORDS = 1u << 2,     /* several words; CONFIG SET splits its value at spaces */
};

/* The longest requirepass, with its NUL (the shared copy's room, shm.h). */
#define CONFIG_REQUIREPASS_MAX 512

typedef struct config_entry config_entry_t;
struct config_entry {
    const char *name;
    config_type_t type;
    unsigned flags;           /* CONFIG_MUTABLE | ... */
    const char *default_text; /* read by the entry's own parser; NULL = unset */
    long long lo, hi;         /* CONFIG_INT / MEMORY / OCTAL: inclusive bounds */
    size_t off;               /* the field in config_t */
    size_t size;              /* its size: int, int64_t or uint64_t */
    const char *const *names; /* CONFIG_ENUM: the names, NULL-terminated */
    /* CONFIG_SPECIAL: parse the words into c (0, or -1 with Redis' text in
     * err), and show the value as CONFIG GET does. */
    int (*parse)(config_t *c, int argc, const char *const *argv, const size_t *lens, char *err,
                 size_t errlen);
    void (*format)(const config_t *c, buf_t *out);
};

/* The entry named s[0, n) (any case), or NULL. */
const config_entry_t *config_find(const char *s, size_t n);
/* Entry i, in table order, or NULL past the end. */
const config_entry_t *config_entry_at(size_t i);

/* Apply one value, as CONFIG SET gives it (one argument, which may hold NUL
 * bytes; a CONFIG_WORDS setting is split at spaces). Does not look at
 * CONFIG_MUTABLE: the caller decides who may set what. Returns 0, or -1 with
 * Redis' error text in err. */
int config_set_value(config_t *c, const config_entry_t *e, const char *s, size_t n, char *err,
                     size_t errlen);

/* Append the value as CONFIG GET shows it. */
void config_format(const config_t *c, const config_entry_t *e, buf_t *out);

/* Defaults: every entry's default_text (127.0.0.1 and ::1 (optional) port
 * 6379, protected mode, ./data, one frontend per core, 16 MiB ring, 64 MiB
 * segments, ...), plus the limits that are not settings. */
void config_defaults(config_t *c);

/*
 * Apply one directive (name and its arguments as words), from the file or
 * the command line. Returns 0, or -1 with a message in err (size errlen):
 * Redis' text for a bad value.
 */
int config_set(config_t *c, const char *name, int argc, char **argv, char *err, size_t errlen);

/* Free what config_defaults and config_set allocated. */
void config_free(config_t *c);

/* Read a redis.conf style file. Returns 0 or -1 with a message (file:line). */
int config_load_file(config_t *c, const char *path, char *err, size_t errlen);

/* Split a config line into words in place, honouring "double" and 'single'
 * quotes (no escapes); a '#' starting a word ends the line. Returns the
 * number of words, or -1 (unbalanced quotes, more than max words). */
int config_split_words(char *line, char **words, int max);

/* CONFIG REWRITE (config-rewrite.c): rewrite the file at path so that the
 * settings CONFIG SET can change have their values in cur, keeping every
 * other line as it is, crash-safely (temporary file, fsync, rename, fsync
 * of the directory). Returns 0, or -1 with the reason in err. */
int config_rewrite(const char *path, const config_t *cur, char *err, size_t errlen);

/* Parse argv as redis-server does: optional config file first, then
 * `--name value...` pairs. Returns 0 or -1 with a message. */
int config_from_args(config_t *c, int argc, char **argv, char *err, size_t errlen);

/* Check relations between settings (sizes powers of two, ...). */
int config_validate(config_t *c, char *err, size_t errlen);

/* Parse sizes as Redis' memtoull does: digits and an optional unit (b, k,
 * kb, m, mb, g, gb, any case; k = 1000, kb = 1024). Returns 0 or -1. */
int config_parse_memory(const char *s, uint64_t *out);

#endif
