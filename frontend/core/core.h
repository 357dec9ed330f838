/*
 * core.h - the frontend's private types, shared by its files:
 * frontend.c (event loop, connections, reply order, wake-ups), dispatch.c
 * (routing and canonical encoding of writes), multi.c (transactions),
 * local.c and the files of admin.h (commands answered without the store:
 * connection, ACL, CLIENT, CONFIG, INFO, SLOWLOG, COMMAND).
 */
#ifndef ATTIC_FE_INTERNAL_H
#define ATTIC_FE_INTERNAL_H

#include <event2/event.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "buf.h"
#include "command.h"
#include "config.h"
#include "resp.h"
#include "shm.h"

struct fe_conn;

enum fe_reply_state {
    FE_READY = 0,        /* data holds the reply */
    FE_WAIT_DURABLE = 1, /* fixed reply once durable_lsn >= lsn_end */
    FE_WAIT_STORE = 2,   /* the store sends the reply, matched by (kind, id) */
};

/* One request's place in its connection's reply order. */
typedef struct fe_reply {
    struct fe_reply *next;      /* in the connection's FIFO */
    struct fe_reply *hash_next; /* in the pending map (FE_WAIT_STORE) */
    struct fe_conn *conn;       /* NULL once the client is gone */
    uint64_t id;                /* store reply id: LSN (write) or read id */
    uint64_t lsn_end;           /* writes: end of the record in the log */
    uint8_t state;
    uint8_t kind;               /* STORE_REPLY_READ / STORE_REPLY_WRITE */
    uint8_t is_write;
    uint8_t owns_data;          /* data was malloc'ed */
    uint32_t len;
    const char *data;
    buf_t *parts;               /* a store reply arriving in parts, so far */
    /* ---- issue 5 (admin helper): statistics, slow log, CLIENT REPLY ---- */
    uint16_t stat_idx; /* command index + 1 to account when ready, 0 = none */
    uint8_t discard;   /* CLIENT REPLY OFF/SKIP: dropped, never sent */
    uint8_t snap_ok;   /* snap_pos holds this request's arguments */
    uint32_t snap_len; /* its arguments for the slow log: in the   */
    uint64_t snap_pos; /* frontend's argument ring (slowlog.c) */
    uint64_t t0_ns;    /* when the request was read (stat_idx != 0) */
    /* ---- end issue 5 ---- */
} fe_reply_t;

typedef struct fe_conn {
    struct fe *fe;
    int fd;
    uint64_t id;
    struct event *ev_read;
    struct event *ev_write;
    buf_t in;          /* unparsed bytes start at in_off */
    size_t in_off;
    size_t need;       /* parser's known need: skip parsing below it */
    buf_t out;         /* reply bytes not yet written */
    size_t out_off;
    fe_reply_t *head, *tail; /* replies in request order */
    /* The oldest FE_WAIT_DURABLE entry, NULL = none. Writes become durable
     * in LSN order, which is their order here, so a wake-up resolves from
     * this entry on and stops at the first one still waiting, whatever
     * reads wait between them (no walk over a deep pipeline of reads). */
    fe_reply_t *wait_durable;
    uint32_t npending;
    uint64_t last_write_end; /* reads wait for durable_lsn to pass this (D19) */
    /* Reads sent to the store and not answered yet. A write that follows
     * them on this connection waits until they are answered: the store
     * applies every durable record before it looks at a read, so a write
     * submitted early could show up in the reply of a read sent before it. */
    uint32_t reads_outstanding;
    int blocked;       /* input paused: ring or channel full */
    int closing;       /* close once replies are flushed (QUIT, errors) */
    int reading_paused;
    int64_t last_active_ms; /* last input, for `timeout` */
    int64_t obuf_soft_since_ms; /* output over the soft limit since, 0 = not */
    struct fe_conn *prev, *next;   /* in the list of all connections */
    struct fe_conn *wprev, *wnext; /* in the list of conns with pending replies */
    int in_wlist;
    resp_cmd_t cmd;

    /* Session state (local.c, acl.c, client.c). */
    int db;                 /* SELECTed database */
    int proto;              /* 2 (RESP2, default) or 3 after HELLO 3 */
    int authenticated;      /* passed AUTH, or no password is required */
    char *user;             /* ACL user name (malloc'ed), NULL = "default" */
    char *name;             /* CLIENT SETNAME, NULL = none */
    char *lib_name, *lib_ver; /* CLIENT SETINFO */
    int64_t created_ms;
    cmd_id_t last_cmd;
    char addr[64], laddr[64]; /* "ip:port" of the peer and of our end */

    /* Transactions (multi.c). */
    struct fe_multi *multi; /* non-NULL between MULTI and EXEC/DISCARD */
    struct fe_watch *watch; /* WATCHed keys, NULL = none */
    /* An EXEC whose SELECT changes the database but which WATCHed keys, so
     * the store may abort it: commands after it wait for its reply. */
    uint64_t exec_wait_lsn; /* its record's LSN + 1, 0 = none */
    uint64_t exec_wait_end; /* its record's end */
    int exec_wait_db;       /* the database once it ran */

    /* ---- issue 5 (admin helper): admin.h's files ---- */
    struct shm_client *reg;      /* registry entry (CLIENT LIST/KILL), NULL when full */
    uint64_t acl_gen;            /* ACL table generation acl_fast was computed for */
    uint8_t acl_fast;            /* may run anything on any key: no check needed */
    uint8_t is_unix;             /* connected through the unix socket */
    uint8_t no_evict;            /* CLIENT NO-EVICT ON (accepted, no effect) */
    uint8_t reply_off;           /* CLIENT REPLY OFF */
    uint8_t reply_skip;          /* CLIENT REPLY SKIP: drop the next command's reply */
    uint8_t reply_suppress;      /* drop the replies of the command being run */
    uint16_t cur_idx;            /* command index computed by fe_acl_check ... */
    const cmd_desc_t *cur_desc;  /* ... for this command */
    uint16_t stat_idx;           /* index + 1 of the command being dispatched, 0 = none */
    const cmd_desc_t *stat_desc; /* ... and its table entry */
    uint16_t last_idx;           /* index of the last command run (CLIENT LIST cmd=) */
    uint8_t dispatching;         /* inside fe_dispatch: fe_conn_kill must not free it */
    uint8_t doomed;              /* killed: closed by the reaper, nothing more is read */
    int32_t reg_db, reg_multi;   /* what the registry entry shows, to update on change */
    /* ---- end issue 5 ---- */
} fe_conn_t;

/* The arguments of one command as pointers and lengths (argv[0] is the
 * command's name). */
typedef struct fe_args {
    int argc;
    const char **argv;
    uint32_t *lens;
} fe_args_t;

#define FE_MAP_BUCKETS 65536

typedef struct fe {
    shm_t *shm;
    const config_t *cfg;
    int slot;
    struct event_base *base;
    struct event *ev_listen[CONFIG_MAX_BINDS + 1];
    int nlisten;
    struct event *ev_wake;
    struct event *ev_timer;  /* retries blocked connections, watches the master */
    ring_t *ring;
    ring_claimer_t *claimer;
    chan_t *to_store, *from_store;
    resp_limits_t limits;
    uint64_t next_read_id;
    uint64_t next_conn_id;
    fe_conn_t *conns;        /* all connections */
    fe_conn_t *wlist;        /* conns with pending replies */
    struct event *ev_retry;  /* one-shot: retry blocked connections */
    fe_reply_t *map[FE_MAP_BUCKETS];
    uint64_t nwaiting;       /* replies not ready yet */
    fe_reply_t *free_replies;
    int nblocked;
    int draining;
    uint32_t nconns;
    int64_t last_idle_scan_ms;
    /* The lowest LSN a read held by fe_read_waits waits to see durable,
     * 0 = none; fe_reads_release retries the connections then. */
    uint64_t read_wait_lsn;
    int claimer_adopted; /* the slot's ring claimer is ours (fe_submit_record) */

    /* ---- issue 5 (admin helper): admin.h's files ---- */
    struct acl_table *acl;  /* parsed copy of the shared ACL table */
    uint64_t acl_version;   /* the shm version it was parsed from */
    uint64_t acl_gen;       /* bumped at each re-parse */
    uint64_t acl_swept_gen; /* generation fe_acl_sweep last looked at */
    uint64_t cfg_version;   /* the shm config version of the values below */
    int64_t maxclients, timeout_s, slowlog_slower_than;
    uint64_t qbuf_limit, obuf_hard, obuf_soft;
    int64_t obuf_soft_seconds;
    int protected_mode;
    /* Test hook (ATTICDB_TEST_REMOTE_ADDR): clients from this IPv4 address,
     * network order, count as remote, so protected mode can be tested over
     * loopback only. 0 = none. */
    uint32_t test_remote_addr;
    shm_fe_stats_t *stats;    /* this frontend's command statistics */
    uint64_t stat_epoch;      /* the RESETSTAT epoch stats belong to */
    struct event *ev_reap;    /* one-shot: close the connections fe_conn_kill doomed */
    char *argring;            /* slow log: arguments of requests not answered yet */
    uint64_t argring_pos;     /* bytes ever written to it (slowlog.c) */
    uint32_t client_hint;     /* where the next registry search starts */
    uint64_t ops_sample_cmds; /* instantaneous_ops_per_sec sampling */
    int64_t ops_sample_ms;
    /* ---- end issue 5 ---- */
} fe_t;

/* True when the n bytes at s are `word`, in any case (options, subcommands). */
static inline int fe_word_eq(const char *s, size_t n, const char *word)
{
    return strlen(word) == n && strncasecmp(s, word, n) == 0;
}

/* frontend.c */
fe_reply_t *fe_reply_push(fe_conn_t *c);  /* append a new entry to c's FIFO */
void fe_reply_ready_static(fe_conn_t *c, const char *s, size_t n); /* immediate reply */
void fe_reply_ready_buf(fe_conn_t *c, buf_t *b);  /* immediate reply from b (b reset) */
void fe_wait_store(fe_t *fe, fe_reply_t *r, uint8_t kind, uint64_t id);
void fe_wait_durable(fe_t *fe, fe_reply_t *r, uint64_t lsn_end); /* fixed +OK */
void fe_wake_logger(fe_t *fe);
void fe_wake_store(fe_t *fe);

/* dispatch.c: returns 0 when handled, -EAGAIN when the command must wait
 * for ring or channel space, -EBUSY when a write must wait for the
 * connection's earlier reads (nothing was consumed or replied then). */
int fe_dispatch(fe_conn_t *c, const char *buf, resp_cmd_t *cmd);

/* dispatch.c: retry the connections whose read waited for a write that is
 * now durable (or never will be: the log failed). Returns 1 when some
 * were scheduled (fe->ev_retry), 0 when none waits or none may go yet. */
int fe_reads_release(fe_t *fe);

/* dispatch.c: write a CMD_TICK record (no reply; see command.h). */
void fe_submit_tick(fe_t *fe);

/* multi.c: MULTI, EXEC, DISCARD, WATCH, UNWATCH. fe_multi_command runs one
 * of them; fe_multi_queue queues any other command inside MULTI (reply
 * +QUEUED); fe_multi_flag_error marks the transaction failed (EXECABORT)
 * after a queue-time error; fe_multi_clear drops the transaction and the
 * watched keys (RESET, connection closed). Returns as fe_dispatch. */
int fe_multi_command(fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a);
int fe_multi_queue(fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a);
void fe_multi_flag_error(fe_conn_t *c);
void fe_multi_clear(fe_conn_t *c);
/* multi.c: queued commands, or -1 when c is not in MULTI (CLIENT LIST). */
int fe_multi_count(const fe_conn_t *c);
/* multi.c: EXEC refused before it ran (wrong arity, NOAUTH, NOPERM):
 * reply "-EXECABORT Transaction discarded because of: <why>" and end the
 * transaction, as Redis does. */
void fe_multi_exec_abort(fe_conn_t *c, const char *why, size_t len);
/* multi.c: 1 while c must wait for the reply of its last EXEC (see
 * exec_wait_lsn), 0 once it is known. */
int fe_multi_exec_waiting(fe_conn_t *c);
/* multi.c: the store replied to the write at lsn for c (called by
 * frontend.c for every write reply; cheap when it is not c's EXEC). */
void fe_multi_write_reply(fe_conn_t *c, uint64_t lsn, const char *reply, size_t len);

/* dispatch.c: SELECT's argument: the database, with +OK appended to out,
 * or -1 with Redis' error appended. Does not change c. */
int fe_select_db(const fe_conn_t *c, const char *arg, uint32_t len, buf_t *out);
/* dispatch.c: 1 (and the error replied) when writes are refused (the log
 * stopped, the disk full), else 0. */
int fe_write_refused(fe_conn_t *c);
/* dispatch.c: claim, encode and commit one record with payload op+db
 * `opdb` and these arguments, and queue its reply (the store's when
 * needs_store_reply, else +OK once durable). Returns 0; -EAGAIN when the
 * ring is full; -EMSGSIZE when no record may be that large (nothing done,
 * nothing replied). */
int fe_submit_record(fe_conn_t *c, uint16_t opdb, int needs_store_reply, int argc,
                     const unsigned char *const *argv, const uint32_t *lens);
/* dispatch.c: the largest payload one record may have (ring-size / 4). */
size_t fe_record_max_payload(const fe_t *fe);

/* acl.c: may c run d with these arguments? 0 = yes; -1 = no, and the error
 * reply (NOAUTH, NOPERM) was appended to err. */
int fe_acl_check(fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a, buf_t *err);

/* local.c: count one call of d for INFO commandstats. */
void fe_cmdstat(fe_conn_t *c, const cmd_desc_t *d);

/* ---- issue 5 (admin helper) ---- */
/* frontend.c: close c at once (CLIENT KILL, deleted ACL user). */
void fe_conn_kill(fe_conn_t *c);
/* ---- end issue 5 ---- */

/* local.c: run a LOCAL command (its registry row names its handler, an
 * fe_local_fn, declared here from the row), its reply into out. */
typedef void fe_local_fn(fe_conn_t *c, int argc, const char **argv, const uint32_t *lens,
                         buf_t *out);
#define FE_LOCAL_DECL_LOCAL(handler) fe_local_fn handler;
#define FE_LOCAL_DECL_WRITE(handler)
#define FE_LOCAL_DECL_READ(handler)
#define FE_LOCAL_DECL_MULTI(handler)
#define CMD(ID, num, name, arity, flags, first, last, step, cats, route, handler, ...)             \
    FE_LOCAL_DECL_##route(handler)
#include "commands.def"
void fe_local(fe_conn_t *c, const cmd_desc_t *d, int argc, const char **argv,
              const uint32_t *lens, buf_t *out);
void fe_info(fe_t *fe, const char *section, buf_t *out);

#endif
