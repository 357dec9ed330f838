/*
 * cmd.h - the frontend's command layer (frontend/cmd/): routing one parsed
 * command (dispatch.c), transactions (multi.c), the commands answered
 * without the store that need no administration state (local.c), and the
 * write encoders (encode.h: one file per type, t_string.c, t_keys.c).
 *
 * It sits on the connection core (frontend/core/core.h) and calls it
 * directly. What it needs from the layer above (the ACL check, command
 * statistics, the table of LOCAL handlers, which names admin handlers too)
 * it reaches through fe_cmd_hooks_t, registered at start-up by
 * frontend/frontend.c, so nothing here names an admin function.
 */
#ifndef ATTIC_FE_CMD_H
#define ATTIC_FE_CMD_H

#include "frontend/core/core.h"

/* Run a LOCAL command (its registry row names its handler, an
 * fe_local_fn), its reply into out. */
typedef void fe_local_fn(fe_conn_t *c, int argc, const char **argv, const uint32_t *lens,
                         buf_t *out);

/* What the command layer calls above itself (set in fe->cmd_hooks). */
typedef struct fe_cmd_hooks {
    /* May c run d with these arguments? 0 = yes; -1 = no, and the error
     * reply (NOAUTH, NOPERM) was appended to err. Once per command, before
     * it is queued or run. */
    int (*check)(fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a, buf_t *err);
    /* May c's user read every key? (SORT's BY and GET patterns need it.) */
    int (*all_keys)(fe_conn_t *c);
    /* d is being run for c with arguments a (not queued): count it (INFO
     * commandstats) and show it to MONITOR clients. EXEC's commands are
     * counted when its reply is there, then EXEC itself (multi.c). */
    void (*counted)(fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a);
    /* d (or its subcommand in a) was refused before it ran, with a wrong
     * number of arguments: INFO commandstats' rejected_calls, as Redis. */
    void (*rejected)(fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a);
    /* Run the LOCAL command d, its reply into out (the registry's table). */
    void (*local)(fe_conn_t *c, const cmd_desc_t *d, int argc, const char **argv,
                  const uint32_t *lens, buf_t *out);
} fe_cmd_hooks_t;

/* dispatch.c: returns 0 when handled, -EAGAIN when the command must wait
 * for ring or channel space, -EBUSY when a write must wait for the
 * connection's earlier reads (nothing was consumed or replied then). */
int fe_dispatch(fe_conn_t *c, const char *buf, resp_cmd_t *cmd);
/* dispatch.c: is argument `arg` of a request of `count` arguments named
 * name[0, n) one that may be taken as chunks while it arrives (D48, D58;
 * the core's stream_arg hook, with the ACL's part in frontend.c)? 1 or
 * 0: fe_big_user_arg's answer, inside MULTI for a command it queues
 * (never once the transaction failed). */
int fe_dispatch_stream_arg(fe_conn_t *c, const char *name, size_t n, int count, int arg);
/* t_sort.c: SORT's and SORT_RO's words checked as the store will parse
 * them, with what only a frontend knows (cluster mode, the user's key
 * access: D47). Returns NULL, or the error's text (common/sort.h's). */
const char *fe_sort_refused(fe_conn_t *c, const cmd_desc_t *run, const fe_args_t *a);

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
/* 1 when c's transaction failed at queue time (EXEC answers EXECABORT). */
int fe_multi_failed(const fe_conn_t *c);
/* multi.c: EXEC refused before it ran (wrong arity, NOAUTH, NOPERM):
 * reply "-EXECABORT Transaction discarded because of: <why>" and end the
 * transaction, as Redis does. */
void fe_multi_exec_abort(fe_conn_t *c, const char *why, size_t len);
/* multi.c: 1 while c must wait for the reply of its last EXEC (see
 * exec_wait_lsn), 0 once it is known. */
int fe_multi_exec_waiting(fe_conn_t *c);
/* multi.c: the store replied to the write at lsn for c (the core's
 * write_reply hook, for every write reply; cheap when it is not c's EXEC). */
void fe_multi_write_reply(fe_conn_t *c, uint64_t lsn, const char *reply, size_t len);

/* probe.c: writes that change nothing, answered without the log (D68).
 * fe_probe_begin, before the command is counted: 1 when a probe for it
 * was sent (return -EBUSY: it runs again once answered), else 0.
 * fe_probe_answer, where the write would be encoded: 1 when the answer
 * was "absent" and the remembered reply is queued (done), else 0 (run
 * the write). fe_probe_note, after such a write was submitted to the log:
 * its reply may teach (fe_probe_write_reply, from the write_reply hook). */
/* cached.c (D70): GET key, and MGET of at most FE_CACHED_MGET_MAX keys
 * the cache knows every one of, answered from the read cache: 1 when the
 * reply was queued, 0 when the store must answer it. */
#define FE_CACHED_MGET_MAX 64
int fe_cached_get(fe_conn_t *c, const fe_args_t *a);
int fe_cached_mget(fe_conn_t *c, const fe_args_t *a);
/* A read of one key the registry marks RC (CMDF_REPLY_CACHE, D71)
 * answered from the read cache: 1 when it was, 0 when the store must. */
int fe_cached_query(fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a);
int fe_probe_begin(fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a);
int fe_probe_answer(fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a);
void fe_probe_note(fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a);
void fe_probe_write_reply(fe_conn_t *c, uint64_t lsn, const char *reply, size_t len);

/* block.c: blocked clients (D36). fe_block_ready: 1 once this frontend
 * may write blocking records (its CMD_BLOCKDROP for a predecessor's
 * waiters, if one is needed, is in the ring), else 0 (try again: -EAGAIN).
 * fe_block_note_use: before a blocking record. fe_block_begin: c's
 * blocking record was just submitted (c->tail); it waits block_ms ms at
 * most (0 = forever). fe_block_closed: c closes (on_close). fe_block_tick:
 * every timer tick (timeouts, records that found the ring full).
 * fe_block_unblock: CLIENT UNBLOCK client_id [TIMEOUT|ERROR] as a record
 * whose store reply (1 or 0) is c's; returns as fe_submit_record. */
int fe_block_ready(fe_t *fe);
void fe_block_note_use(fe_t *fe);
void fe_block_begin(fe_conn_t *c, int64_t block_ms);
void fe_block_closed(fe_conn_t *c);
void fe_block_tick(fe_t *fe);
int fe_block_unblock(fe_conn_t *c, uint64_t client_id, int error);
/* cluster.c (cluster mode, D35): may c run d here? 0 = yes; -1 = no, the
 * error (MOVED, CROSSSLOT, CLUSTERDOWN) appended to err; -2 = EXEC of a
 * transaction whose commands named different slots: the error is in err
 * and the transaction is to be discarded. */
int fe_cluster_route(fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a, buf_t *err);

/* local.c: SELECT's argument: the database, with +OK appended to out, or
 * -1 with Redis' error appended. Does not change c. */
int fe_select_db(const fe_conn_t *c, const char *arg, uint32_t len, buf_t *out);

/* The LOCAL handlers, declared from the registry's rows (local.c and the
 * files of frontend/admin/admin.h define them; frontend/frontend.c holds
 * the table). */
#define FE_LOCAL_DECL_LOCAL(handler) fe_local_fn handler;
#define FE_LOCAL_DECL_WRITE(handler)
#define FE_LOCAL_DECL_READ(handler)
#define FE_LOCAL_DECL_MULTI(handler)
#define CMD(ID, num, name, arity, flags, first, last, step, cats, route, handler, ...)             \
    FE_LOCAL_DECL_##route(handler)
#include "commands.def"

#endif
