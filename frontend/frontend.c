/*
 * frontend.c - a frontend process's entry point (frontend.h): it wires the
 * three layers of frontend/ together and starts the loop.
 *
 *   core/   connections, parsing, reply order, the ring, wake-ups (core.h)
 *   cmd/    routing, the write encoders, MULTI (cmd.h)
 *   admin/  ACL, CLIENT, CONFIG, INFO, SLOWLOG, COMMAND (admin.h)
 *
 * Calls go down only: admin may call cmd and core, cmd may call core. Where
 * a lower layer must reach up (the core handing a request on, the command
 * layer asking for the ACL check), it calls a hook from a table filled
 * here: fe_hooks_t (core.h) and fe_cmd_hooks_t (cmd.h). This file is the
 * top, so it also holds the table of LOCAL handlers (common/commands.def's
 * LOCAL rows), which names handlers of both cmd/ and admin/.
 *
 * Run by each of the N frontend processes; a crash in any of them is a
 * frontend's crash (contract 5: its clients lose their connection, nothing
 * acked is lost, the master starts another).
 */
#include <errno.h>
#include <stdlib.h>

#include "cluster.h"
#include "frontend/admin/admin.h"
#include "log.h"
#include "frontend/cmd/cmd.h"
#include "frontend/core/core.h"
#include "frontend/frontend.h"

/* ---- LOCAL commands: the registry's LOCAL rows, by command id ---- */

#define LOCAL_ROW_LOCAL(ID, handler) [CMD_##ID] = handler,
#define LOCAL_ROW_WRITE(ID, handler)
#define LOCAL_ROW_READ(ID, handler)
#define LOCAL_ROW_MULTI(ID, handler)
static fe_local_fn *const locals[CMD__COUNT] = {
#define CMD(ID, num, name, arity, flags, first, last, step, cats, route, handler, ...)             \
    LOCAL_ROW_##route(ID, handler)
#include "commands.def"
};

static void run_local(fe_conn_t *c, const cmd_desc_t *d, int argc, const char **argv,
                      const uint32_t *lens, buf_t *out)
{
    fe_local_fn *fn = (unsigned)d->id < (unsigned)CMD__COUNT ? locals[d->id] : NULL;
    if (fn)
        fn(c, argc, argv, lens, out);
    else
        resp_error(out, "ERR internal: not a local command");
}

/* ---- the hooks ---- */

/* The core's one call per command: routing (cmd/), with the statistics,
 * slow log and CLIENT REPLY around it (admin/). */
static int run_command(fe_conn_t *c, const char *buf, resp_cmd_t *cmd)
{
    fe_admin_mark_t m;
    fe_admin_command_begin(c, &m);
    int rc = fe_dispatch(c, buf, cmd);
    if (rc == -EAGAIN || rc == -EBUSY)
        fe_admin_command_again(c, &m);
    else
        fe_admin_command_done(c, buf, &m);
    return rc;
}

/* A large bulk is taken as chunks while it arrives (D48) only from a
 * client that may write at all: one that must AUTH first could otherwise
 * fill the log with parts that are then dropped. */
static int stream_arg(fe_conn_t *c, const char *name, size_t n, int count, int arg)
{
    return fe_dispatch_stream_arg(c, name, n, count, arg) && fe_acl_user(c) &&
           !fe_acl_auth_required(c);
}

/* Every write the store answered: an EXEC's outcome (multi.c), whether
 * a write changed nothing (probe.c). */
static void write_reply(fe_conn_t *c, uint64_t lsn, const char *reply, size_t len)
{
    fe_multi_write_reply(c, lsn, reply, len);
    fe_probe_write_reply(c, lsn, reply, len);
}

static void conn_closing(fe_conn_t *c)
{
    fe_block_closed(c);
    fe_multi_clear(c);
    fe_admin_on_close(c);
}

static void on_timer(fe_t *fe)
{
    fe_block_tick(fe);
    fe_admin_on_timer(fe);
}

/* The core places c->admin right after the fe_conn_t (conn.c, conn_new). */
_Static_assert(_Alignof(fe_conn_admin_t) <= _Alignof(fe_conn_t),
               "c->admin is allocated right after the connection");

static const fe_hooks_t hooks = {
    .conn_admin_size = sizeof(fe_conn_admin_t),
    .command = run_command,
    .input_done = fe_admin_input_done,
    .reply_ready = fe_admin_reply_ready,
    .write_reply = write_reply,
    .refresh = fe_config_refresh,
    .refuse = fe_admin_refuse,
    .on_connect = fe_admin_on_connect,
    .on_close = conn_closing,
    .on_input = fe_admin_on_input,
    .on_wake = fe_admin_on_wake,
    .on_timer = on_timer,
    .stream_arg = stream_arg,
};

/* May c run d? The ACL's rules, then MONITOR's (monitor.c). */
static int check_command(fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a, buf_t *err)
{
    if (fe_acl_check(c, d, a, err)) return -1;
    if (!fe_monitor_refused(c, d, err)) return 0;
    fe_stat_rejected(c->fe, c->admin->cur_idx);
    return -1;
}

static const fe_cmd_hooks_t cmd_hooks = {
    .check = check_command,
    .all_keys = fe_acl_all_keys,
    .counted = fe_cmdstat,
    .rejected = fe_cmd_rejected,
    .local = run_local,
};

int frontend_main(shm_t *shm, const config_t *cfg, int slot, const int *listen_fds, int nlisten)
{
    fe_t *fe = fe_core_new(shm, cfg, slot, &hooks, &cmd_hooks);
    if (!fe) return 1;
    if (cfg->cluster_enabled) {
        /* The master checked the file before it forked us. */
        char err[512];
        fe->cluster = malloc(sizeof(*fe->cluster));
        if (!fe->cluster || cluster_load_config(fe->cluster, cfg, err, sizeof(err)) != 0) {
            log_warn("FATAL: %s", fe->cluster ? err : "out of memory for the cluster topology");
            return 1;
        }
    }
    if (fe_admin_start(fe) != 0) return 1;
    return fe_core_run(fe, listen_fds, nlisten);
}
