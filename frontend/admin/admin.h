/*
 * admin.h - the frontend's connection and administration layer, private to
 * frontend/: ACL users (acl.c, acl-cmd.c), clients (client.c), runtime
 * settings (config-cmd.c), statistics and INFO (info.c), the slow log
 * (slowlog.c), COMMAND (command-cmd.c), and the shared-memory helpers they
 * use (fe-shm.c). State that must look the same from every frontend lives
 * in shm (common/shm.h, shm_admin_t); each frontend keeps a parsed copy of
 * what it reads on every command, refreshed when a version counter moves.
 */
#ifndef ATTIC_FE_ADMIN_H
#define ATTIC_FE_ADMIN_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "command.h"
#include "config.h"
#include "frontend/fe-shm.h"
#include "shm.h"

/* The Redis version AtticDB reports (HELLO, INFO): the one whose replies
 * it reproduces byte for byte, so clients that pick features by version
 * use what it implements. */
#define FE_REDIS_VERSION "7.0.15"

/* The slow log's ring of request arguments, per frontend (slowlog.c). */
#define FE_ARGRING_SIZE (256u * 1024)

struct fe;
struct sockaddr;
struct fe_conn;
struct fe_reply;
struct fe_args;

/* The clock of one batch of requests (slowlog.c says what is timed).
 * It is read when the batch starts, after each command answered at once
 * that is not flagged fast, and when the batch ends; the fast ones
 * (PING, ECHO, ...) answered in between share the time between two reads,
 * so a pipeline of them costs one clock read per batch, not per command.
 * (With slowlog-log-slower-than under 1 ms every command is read alone,
 * so each can be slow-logged.) */
typedef struct batch_clock {
    uint64_t mark;     /* the last reading, 0 = none yet */
    uint16_t fast[32]; /* command index | FAST_FAILED */
    int nfast;
} batch_clock_t;

#define FAST_FAILED 0x8000u

/* What the administration layer keeps per frontend (fe->admin; the core
 * holds the pointer and never reads it). */
typedef struct fe_admin {
    batch_clock_t clock;    /* the input batch being run (hooks.c) */
    struct acl_table *acl;  /* parsed copy of the shared ACL table */
    uint64_t acl_version;   /* the shm version it was parsed from */
    uint64_t acl_gen;       /* bumped at each re-parse */
    uint64_t acl_swept_gen; /* generation fe_acl_sweep last looked at */
    uint64_t cfg_version;   /* the shm config version of the values below */
    int64_t slowlog_slower_than;
    uint64_t latency_threshold_ns; /* latency-monitor-threshold, 0 = off (latency.c) */
    int protected_mode;
    /* Test hook (ATTICDB_TEST_REMOTE_ADDR): clients from this IPv4 address,
     * network order, count as remote, so protected mode can be tested over
     * loopback only. 0 = none. */
    uint32_t test_remote_addr;
    char *argring;                          /* slow log: arguments of requests not answered yet */
    uint64_t argring_pos;                   /* bytes ever written to it (slowlog.c) */
    uint32_t client_hint;                   /* where the next registry search starts */
    uint64_t ops_sample_cmds;               /* instantaneous_ops_per_sec sampling */
    uint64_t ops_sample_in, ops_sample_out; /* ... and the kbps beside it */
    int64_t ops_sample_ms;
    /* latency.c, frontend 0 only: the fsync histogram as last seen, so the
     * slowest fsync since then can be found (the "fsync" event). */
    uint64_t *fsync_seen;
    struct fe_repl_wait *waits; /* WAITs not answered yet (repl.c) */
    int waits_unstarted;        /* ... of them, behind replies not ready yet */
    struct event *ev_waits;     /* runs fe_repl_waits_check after a reply is ready */
    struct fe_pubsub *pubsub;   /* this frontend's subscribers (pubsub.c) */
    struct fe_monitor *monitor; /* this frontend's MONITOR clients (monitor.c) */
} fe_admin_t;

/* What the layer keeps per connection (c->admin, allocated by the core
 * with the connection: fe_hooks_t.conn_admin_size). */
typedef struct fe_conn_admin {
    int authenticated;           /* passed AUTH, or no password is required */
    char *user;                  /* ACL user name (malloc'ed), NULL = "default" */
    char *name;                  /* CLIENT SETNAME, NULL = none */
    char *lib_name, *lib_ver;    /* CLIENT SETINFO */
    struct shm_client *reg;      /* registry entry (CLIENT LIST/KILL), NULL when full */
    uint64_t acl_gen;            /* ACL table generation acl_fast was computed for */
    uint8_t acl_fast;            /* may run anything on any key: no check needed */
    uint8_t no_evict;            /* CLIENT NO-EVICT ON (accepted, no effect) */
    uint8_t reply_off;           /* CLIENT REPLY OFF */
    uint8_t reply_skip;          /* CLIENT REPLY SKIP: drop the next command's reply */
    uint8_t monitor;             /* a MONITOR client (monitor.c) */
    uint8_t monitor_after;       /* its MONITOR line once the command is done */
    uint16_t cur_idx;            /* command index computed by fe_acl_check ... */
    const cmd_desc_t *cur_desc;  /* ... for this command */
    uint16_t stat_idx;           /* index + 1 of the command being dispatched, 0 = none */
    const cmd_desc_t *stat_desc; /* ... and its table entry */
    uint16_t last_idx;           /* index of the last command run (CLIENT LIST cmd=) */
    int32_t reg_db, reg_multi;   /* what the registry entry shows, to update on change */
    struct fe_ps_conn *pubsub;   /* its subscriptions (pubsub.c), NULL = none */
    /* The command indexes of the EXEC being dispatched, in its reply's
     * order (fe_cmdstat fills it), and of the EXECs whose replies wait, oldest
     * first: an error in an EXEC's array counts in its command's
     * failed_calls, as in Redis (fe_stat_exec_errors). */
    struct fe_exec_idx *exec_cur, *exec_head, *exec_tail;
} fe_conn_admin_t;

/* One EXEC's command indexes (info.c). */
typedef struct fe_exec_idx {
    struct fe_exec_idx *next;
    uint32_t n, cap;
    uint16_t idx[];
} fe_exec_idx_t;

/* The words of a reply entry's note (fe_reply_t.note, which the core
 * zeroes and never reads), for the statistics and the slow log of a
 * request whose reply waits: [0] when the request was read (shm_mono_ns),
 * [1] where its arguments are in the argument ring (slowlog.c), [2] its
 * command index + 1 in bits 0-15 (0 = not counted yet), whether [1] is set
 * in bit 16, the arguments' length in bits 32-63. */
static inline unsigned fe_note_idx(const uint64_t *note)
{
    return (unsigned)(note[2] & 0xffffu);
}
static inline void fe_note_set_idx(uint64_t *note, unsigned idx1)
{
    note[2] = (note[2] & ~(uint64_t)0xffffu) | (idx1 & 0xffffu);
}
static inline int fe_note_snap_ok(const uint64_t *note)
{
    return (int)((note[2] >> 16) & 1u);
}
static inline uint32_t fe_note_snap_len(const uint64_t *note)
{
    return (uint32_t)(note[2] >> 32);
}
static inline void fe_note_set_snap(uint64_t *note, uint64_t pos, uint32_t len)
{
    note[1] = pos;
    note[2] = (note[2] & 0xffffu) | ((uint64_t)1 << 16) | ((uint64_t)len << 32);
}

/* ---- hooks.c: the layer's side of the core's hooks (core.h) ---- */

/* Set up fe->admin and what the layer reads at start (settings, ACL table,
 * the registry entries a predecessor left). 0, or -1 out of memory. */
int fe_admin_start(struct fe *fe);
/* Around each command (frontend/frontend.c's command hook): begin before
 * it is dispatched, then done once it ran, or again when it must be
 * retried (-EAGAIN, -EBUSY). */
typedef struct fe_admin_mark {
    struct fe_reply *tail0; /* the FIFO's tail before the command */
    size_t out0;            /* the output buffer's length before it */
    uint8_t skip;           /* CLIENT REPLY SKIP was pending */
} fe_admin_mark_t;
void fe_admin_command_begin(struct fe_conn *c, fe_admin_mark_t *m);
void fe_admin_command_again(struct fe_conn *c, const fe_admin_mark_t *m);
void fe_admin_command_done(struct fe_conn *c, const char *buf, const fe_admin_mark_t *m);
/* The core's hooks, as core.h describes them. */
void fe_admin_input_done(struct fe_conn *c);
void fe_admin_reply_ready(struct fe *fe, struct fe_reply *r, uint64_t *now);
const char *fe_admin_refuse(struct fe *fe, const struct sockaddr *peer);
void fe_admin_on_connect(struct fe_conn *c);
void fe_admin_on_close(struct fe_conn *c);
void fe_admin_on_input(struct fe_conn *c);
void fe_admin_on_timer(struct fe *fe);
/* This frontend's eventfd fired: CLIENT KILL, Pub/Sub messages. */
void fe_admin_on_wake(struct fe *fe);

/* ---- shm-lock.c ---- */

/* A lock between processes (shm_lock_t): spins, and takes over a lock whose
 * holder died. Critical sections are short copies, never blocking calls. */
void fe_shm_lock(shm_lock_t *l);
void fe_shm_unlock(shm_lock_t *l);

/* fe-shm.c: the master's fe_shm_size / fe_shm_init are in frontend/frontend.h. */

/* ---- command indexes (command-index.c) ----
 * ACL permissions and command statistics are kept per "command index": the
 * command's id for a command without subcommands, FE_SUB_BASE + k for
 * subcommand k of cmd_subs() (common/command.h: "config|get"). */
#define FE_SUB_BASE    256
#define FE_CMD_INDEXES SHM_STAT_SLOTS

/* Subcommand k of parent whose name is s[0, n) (any case), or -1. */
int fe_subcmd_find(cmd_id_t parent, const char *s, size_t n);
/* True when the command has subcommands (CONFIG, CLIENT, ACL, ...). */
int fe_has_subcmds(cmd_id_t id);
/* The index a call runs as: the subcommand's when argv[1] names one. */
unsigned fe_cmd_index(const cmd_desc_t *d, int argc, const char *const *argv, const uint32_t *lens);
/* Every index in use, in table order (commands, then subcommands):
 * fe_cmd_index_at(i) for i < fe_cmd_index_count(). */
size_t fe_cmd_index_count(void);
unsigned fe_cmd_index_at(size_t i);
/* "get", "config|get"; NULL for an index no command has. */
const char *fe_cmd_index_name(unsigned idx);
/* ACL categories (enum cmd_cat) of an index. */
uint32_t fe_cmd_index_cats(unsigned idx);
/* A subcommand call with the wrong number of arguments: writes Redis' error
 * ("wrong number of arguments for 'config|get' command") and returns -1. */
int fe_subcmd_arity_check(const cmd_desc_t *d, int argc, const char *const *argv,
                          const uint32_t *lens, buf_t *out);
/* The "unknown subcommand 'x'. Try CONFIG HELP." error. */
void fe_reply_unknown_subcmd(buf_t *out, const char *cmd_upper, const char *sub, size_t n);
/* A HELP reply: one simple string per line. */
void fe_reply_help(buf_t *out, const char *const *lines);

/* ---- command-cmd.c ---- */
void fe_command(struct fe_conn *c, int argc, const char **argv, const uint32_t *lens, buf_t *out);

/* ---- acl.c: users, rules and permissions ---- */

typedef struct acl_user acl_user_t;
typedef struct acl_table acl_table_t;

enum { ACL_OK = 0, ACL_DENIED_CMD = 1, ACL_DENIED_KEY = 2, ACL_DENIED_CHANNEL = 3 };

/* A table holding only the default user ("on nopass ~* &* +@all"). */
acl_table_t *acl_table_new(void);
void acl_table_free(acl_table_t *t);
/* Apply rules to user `name` (created when missing), all or nothing:
 * returns 0, or -1 with Redis' error text in err (without "-"). */
int acl_setuser(acl_table_t *t, const char *name, size_t nlen, int nrules, const char *const *rules,
                const uint32_t *lens, char *err, size_t errlen);
/* Remove a user; 1 when it existed. The default user can't be removed. */
int acl_deluser(acl_table_t *t, const char *name, size_t nlen);
acl_user_t *acl_find(const acl_table_t *t, const char *name, size_t nlen);
int acl_count(const acl_table_t *t);
acl_user_t *acl_at(const acl_table_t *t, int i); /* in name order */
const char *acl_user_name(const acl_user_t *u);
int acl_user_enabled(const acl_user_t *u);
int acl_user_nopass(const acl_user_t *u);
/* May this user run everything on every key and channel? (the check's
 * fast path) */
int acl_user_unrestricted(const acl_user_t *u);
/* 1 when u may read every key (allkeys): SORT's BY and GET need it. */
int acl_user_all_keys(const acl_user_t *u);
/* 1 when pass matches one of the user's passwords (or the user is nopass). */
int acl_user_password_ok(const acl_user_t *u, const char *pass, size_t n);
/* ACL LIST's line: "user default on nopass ~* &* +@all". */
void acl_user_describe(const acl_user_t *u, buf_t *out);
/* ACL GETUSER's map. */
void acl_user_getuser(const acl_user_t *u, int proto, buf_t *out);
/* May u run the call (idx from fe_cmd_index)? ACL_OK, ACL_DENIED_CMD,
 * ACL_DENIED_KEY (its keys are found from d's key positions) or
 * ACL_DENIED_CHANNEL, checked in that order as Redis 7.0 does. */
int acl_check(const acl_user_t *u, const cmd_desc_t *d, unsigned idx, int argc,
              const char *const *argv, const uint32_t *lens);
/* 1 when u may touch key k (its key patterns, or allkeys). */
int acl_key_ok(const acl_user_t *u, const char *k, size_t n);
/* 1 when u may use channel ch: a channel (PUBLISH, SUBSCRIBE and their
 * shard forms) matches one of u's &patterns; a PSUBSCRIBE pattern must be
 * one of them, literally (Redis' ACLCheckChannelAgainstList). */
int acl_channel_ok(const acl_user_t *u, const char *ch, size_t n, int is_pattern);
/* The first argument of the call that names a channel u may not use, 0
 * when there is none (ACL DRYRUN names it). */
int acl_denied_channel(const acl_user_t *u, const cmd_desc_t *d, int argc, const char *const *argv,
                       const uint32_t *lens);
/* Serialise the table for shm (binary; acl_table_load reads it back). */
void acl_table_save(const acl_table_t *t, buf_t *out);
acl_table_t *acl_table_load(const char *p, size_t n);
/* Redis' category names in ACL CAT order; NULL past the last. bits is the
 * matching enum cmd_cat bit, 0 for a category with no command here. */
const char *acl_category(int i, uint32_t *bits);
/* The category named s[0, n) (any case): its position (ACL CAT's order),
 * bits set to its enum cmd_cat bits; -1 if there is none. */
int acl_category_find(const char *s, size_t n, uint32_t *bits);
/* A NUL-terminated copy of s[0, n) (aborts on out-of-memory). */
char *acl_strndup(const char *s, size_t n);

/* ---- acl.c: the frontend's side ---- */

/* The command layer's check hook (frontend/cmd/cmd.h): may c run d with
 * these arguments? 0 = yes; -1 = no, and the error reply (NOAUTH, NOPERM)
 * was appended to err. */
int fe_acl_check(struct fe_conn *c, const cmd_desc_t *d, const struct fe_args *a, buf_t *err);
/* 1 when c's user may read every key (fe_cmd_hooks_t.all_keys). */
int fe_acl_all_keys(struct fe_conn *c);
/* Re-read the shared table if another frontend changed it. */
void fe_acl_refresh(struct fe *fe);
/* Periodic: close the clients whose user was deleted. */
void fe_acl_sweep(struct fe *fe);
/* The connection's user (never NULL while the table has the default). */
acl_user_t *fe_acl_user(struct fe_conn *c);
/* Authenticate c as user/pass: 0, or -1 (WRONGPASS). */
int fe_acl_auth(struct fe_conn *c, const char *user, size_t ulen, const char *pass, size_t plen);
/* Does a client need AUTH before anything else (the default user has a
 * password, or is off)? */
int fe_acl_auth_required(struct fe_conn *c);
/* Does the default user have no password (protected mode applies)? */
int fe_acl_default_nopass(struct fe *fe);
/* Does a new connection start authenticated (default user nopass and on)? */
int fe_acl_default_auth(struct fe *fe);
/* Change the shared table: runs fn on a fresh copy under the ACL lock and
 * publishes the result when fn returns 0. Returns fn's result, or -1 with
 * err set when the table would not fit in shm. */
int fe_acl_update(struct fe *fe, int (*fn)(acl_table_t *t, void *arg, char *err, size_t errlen),
                  void *arg, char *err, size_t errlen);
/* The same on a segment no frontend uses yet (the master's start-up). */
int fe_acl_update_shm(shm_t *shm, int (*fn)(acl_table_t *t, void *arg, char *err, size_t errlen),
                      void *arg, char *err, size_t errlen);

/* ---- acl-cmd.c ---- */
void fe_cmd_auth(struct fe_conn *c, int argc, const char **argv, const uint32_t *lens, buf_t *out);
void fe_cmd_acl(struct fe_conn *c, int argc, const char **argv, const uint32_t *lens, buf_t *out);
/* CONFIG SET requirepass: the default user's password ("" = nopass). */
int fe_acl_set_requirepass(struct fe *fe, const char *pass, size_t n, char *err, size_t errlen);

/* ---- client-registry.c ---- */
void fe_client_register(struct fe_conn *c);        /* a new connection */
void fe_client_unregister(struct fe_conn *c);      /* closing */
void fe_client_sync(struct fe_conn *c);            /* name, user, db, flags changed */
void fe_clients_reclaim(struct fe *fe);            /* at start: free a predecessor's entries */
void fe_clients_kill_pending(struct fe *fe);       /* close clients other frontends killed */
uint32_t fe_client_flags(const struct fe_conn *c); /* the entry's SHM_CLIENT_F_* flags */
/* Rewrite c's registry entry when its flags changed (blocked or not). */
void fe_client_flags_sync(struct fe_conn *c);

/* ---- client.c ---- */
void fe_client_info_line(struct fe_conn *c, buf_t *out);
void fe_cmd_client(struct fe_conn *c, int argc, const char **argv, const uint32_t *lens,
                   buf_t *out);
void fe_cmd_hello(struct fe_conn *c, int argc, const char **argv, const uint32_t *lens, buf_t *out);
void fe_cmd_reset(struct fe_conn *c, buf_t *out);
/* Protected mode: is this peer refused? (TCP, not loopback, protected-mode
 * yes, default user without password.) */
int fe_protected_refuse(struct fe *fe, const struct sockaddr *sa);
extern const char FE_DENIED_MSG[];

/* ---- config-cmd.c ---- */
/* Re-read the shared settings into the frontend's cache if they moved. */
void fe_config_refresh(struct fe *fe);
/* Copy the settings CONFIG SET may change (but requirepass) into shm. */
void fe_config_store_live(const config_t *c, shm_config_t *sc);
/* The settings the store reads for eviction (D32) and DUMP (D40, D57), into
 * shm_t. */
void fe_config_store_memory(const config_t *c, shm_t *shm);
void fe_cmd_config(struct fe_conn *c, int argc, const char **argv, const uint32_t *lens,
                   buf_t *out);

/* ---- info.c: statistics ----
 * fe_stats_sync_epoch (core.h) must run before counting, once per event
 * (batch of requests, of completions): the counters below do not look at
 * the RESETSTAT epoch themselves. */
/* The command layer's counted hook: one call of d (INFO commandstats). */
void fe_cmdstat(struct fe_conn *c, const cmd_desc_t *d, const struct fe_args *a);
/* EXEC's reply p[0, n): each error inside its array counts in errorstats
 * and total_error_replies, as Redis counts each error reply it sends. */
void fe_stat_exec_errors(struct fe *fe, const char *p, size_t n, const fe_exec_idx_t *cmds);
/* The EXEC c dispatched: its command indexes, taken from c (NULL when it
 * counted none); and the oldest of c's waiting EXECs', taken. */
fe_exec_idx_t *fe_exec_idx_take_cur(struct fe_conn *c);
void fe_exec_idx_push(struct fe_conn *c, fe_exec_idx_t *x);
fe_exec_idx_t *fe_exec_idx_pop(struct fe_conn *c);
void fe_exec_idx_free_all(struct fe_conn *c);
/* The command layer's `rejected` hook (arity errors): rejected_calls. */
void fe_cmd_rejected(struct fe_conn *c, const cmd_desc_t *d, const struct fe_args *a);
/* Account one finished command: its time in nanoseconds and whether its
 * reply was an error. */
void fe_stat_done(struct fe *fe, unsigned idx, uint64_t nsec, int failed);
void fe_stat_rejected(struct fe *fe, unsigned idx);
/* One error reply (n bytes from p, "-CODE text\r\n") sent for a command:
 * total_error_replies and INFO errorstats. */
void fe_stat_error_reply(struct fe *fe, const char *p, size_t n);
void fe_cmd_info(struct fe_conn *c, int argc, const char **argv, const uint32_t *lens, buf_t *out);
void fe_info(struct fe *fe, const char *section, buf_t *out);
/* INFO total_eviction_exceeded_time and current_eviction_exceeded_time,
 * in ms, at now_ms (CLOCK_MONOTONIC): the store's spells over maxmemory
 * since the last CONFIG RESETSTAT (D43). */
void fe_eviction_exceeded(struct shm *shm, int64_t now_ms, int64_t *total, int64_t *current);
void fe_cmd_lastsave(struct fe_conn *c, int argc, const char **argv, const uint32_t *lens,
                     buf_t *out);

/* ---- monitor.c: MONITOR ---- */
void fe_cmd_monitor(struct fe_conn *c, int argc, const char **argv, const uint32_t *lens,
                    buf_t *out);
/* c leaves MONITOR (closed, RESET). */
void fe_monitor_remove(struct fe_conn *c);
/* A MONITOR client's read or write: -1 with Redis' error in err (the
 * caller counts it rejected), else 0. */
int fe_monitor_refused(struct fe_conn *c, const cmd_desc_t *d, buf_t *err);
/* Hand a line to this frontend's MONITOR clients. */
void fe_monitor_deliver(struct fe *fe, const char *line, size_t len);
/* c runs d with a: its line to every MONITOR client (unless d is admin);
 * only called while some exist (the shared count). */
void fe_monitor_feed(struct fe_conn *c, const cmd_desc_t *d, const struct fe_args *a);
/* The same without the admin check. */
void fe_monitor_line(struct fe_conn *c, const struct fe_args *a);
/* c's command is done (its reply is out): its own lines, if a MONITOR
 * client, now. */
void fe_monitor_command_done(struct fe_conn *c);

/* ---- repl.c: replication commands (D33) ---- */
void fe_cmd_role(struct fe_conn *c, int argc, const char **argv, const uint32_t *lens, buf_t *out);
void fe_cmd_wait(struct fe_conn *c, int argc, const char **argv, const uint32_t *lens, buf_t *out);
void fe_cmd_waitaof(struct fe_conn *c, int argc, const char **argv, const uint32_t *lens,
                    buf_t *out);
void fe_cmd_replconf(struct fe_conn *c, int argc, const char **argv, const uint32_t *lens,
                     buf_t *out);
/* Answer the WAITs and WAITAOFs whose replicas acked or whose timeout passed (repl.c):
 * at each wake-up and tick. */
void fe_repl_waits_check(struct fe *fe);
/* A reply became ready while some WAIT waits for the replies before it
 * (fe->admin->waits_unstarted): check the WAITs after this event. */
void fe_repl_waits_reply_ready(struct fe *fe);
/* INFO's # Replication section (repl.c), with Redis' master_replid. */
void fe_info_replication(struct fe *fe, buf_t *b, const char *replid);
void fe_cmd_replicaof(struct fe_conn *c, int argc, const char **argv, const uint32_t *lens,
                      buf_t *out);

/* ---- latency.c ---- */
/* A finished command of index idx took nsec: a sample of "command" or
 * "fast-command" when at or above latency-monitor-threshold. */
void fe_latency_command(struct fe *fe, unsigned idx, uint64_t nsec);
/* Every timer tick: frontend 0 samples the logger's fsyncs ("fsync"). */
void fe_latency_tick(struct fe *fe);
void fe_cmd_latency(struct fe_conn *c, int argc, const char **argv, const uint32_t *lens,
                    buf_t *out);

/* ---- pubsub.c: Pub/Sub (D37) ---- */
/* At start: this frontend's tables, the slot's shared counts cleared, the
 * ring read from its head on. 0, or -1 out of memory. */
int fe_pubsub_start(struct fe *fe);
/* Read the broadcast ring and deliver (the wake-up and every tick). */
void fe_pubsub_poll(struct fe *fe);
/* c is closing / RESET: drop every subscription of c. */
void fe_pubsub_on_close(struct fe_conn *c);
void fe_pubsub_reset(struct fe_conn *c);
/* Distinct names of kind (enum ps_kind) with a subscriber anywhere
 * (INFO stats' pubsub_channels, pubsub_patterns, pubsubshard_channels). */
uint64_t fe_pubsub_count(struct fe *fe, int kind);
/* c's channels, patterns and shard channels (CLIENT LIST's sub, psub, ssub). */
void fe_pubsub_conn_counts(const struct fe_conn *c, unsigned out[3]);
/* 1 when user u may keep every subscription c has (ACL channel rules). */
int fe_pubsub_conn_allowed(const struct fe_conn *c, const acl_user_t *u);
/* Publish to channel (kind PS_CHANNEL or PS_SHARD) from this frontend;
 * returns the receivers on every frontend, as PUBLISH replies. */
uint64_t fe_pubsub_publish(struct fe *fe, int kind, const char *chan, size_t clen, const char *msg,
                           size_t mlen);
void fe_cmd_subscribe(struct fe_conn *c, int argc, const char **argv, const uint32_t *lens,
                      buf_t *out);
void fe_cmd_unsubscribe(struct fe_conn *c, int argc, const char **argv, const uint32_t *lens,
                        buf_t *out);
void fe_cmd_psubscribe(struct fe_conn *c, int argc, const char **argv, const uint32_t *lens,
                       buf_t *out);
void fe_cmd_punsubscribe(struct fe_conn *c, int argc, const char **argv, const uint32_t *lens,
                         buf_t *out);
void fe_cmd_ssubscribe(struct fe_conn *c, int argc, const char **argv, const uint32_t *lens,
                       buf_t *out);
void fe_cmd_sunsubscribe(struct fe_conn *c, int argc, const char **argv, const uint32_t *lens,
                         buf_t *out);
void fe_cmd_publish(struct fe_conn *c, int argc, const char **argv, const uint32_t *lens,
                    buf_t *out);
void fe_cmd_spublish(struct fe_conn *c, int argc, const char **argv, const uint32_t *lens,
                     buf_t *out);
void fe_cmd_pubsub(struct fe_conn *c, int argc, const char **argv, const uint32_t *lens,
                   buf_t *out);

/* ---- slowlog.c ---- */
/* Does Redis hide argument i of this call ("(redacted)")? AUTH's, HELLO's
 * AUTH pair, ACL SETUSER's rules, CONFIG SET requirepass's value: the
 * slow log's rule, which MONITOR's lines follow too. */
int fe_args_redacted(const struct fe_args *a, int i);
/* A finished command slower than slowlog-log-slower-than: add an entry.
 * Arguments come from the parsed request (the command ended as it was
 * dispatched) or from the copy fe_slowlog_snapshot kept for its reply. */
void fe_slowlog_add(struct fe_conn *c, uint64_t usec, const char *buf);
void fe_slowlog_add_snapshot(struct fe_conn *c, uint64_t usec, const struct fe_reply *r,
                             unsigned idx);
/* Copy the parsed request's arguments, cut to the slow log's limits, into
 * the frontend's argument ring and note where in r; no allocation. */
void fe_slowlog_snapshot(struct fe_conn *c, struct fe_reply *r, const char *buf);
void fe_cmd_slowlog(struct fe_conn *c, int argc, const char **argv, const uint32_t *lens,
                    buf_t *out);

#endif
