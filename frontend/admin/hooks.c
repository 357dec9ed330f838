/*
 * hooks.c - the administration layer's side of the connection core's hooks
 * (frontend/core/core.h, fe_hooks_t; frontend/frontend.c registers them):
 * what a frontend does for ACL, CLIENT, CONFIG, INFO and SLOWLOG when a
 * connection opens or closes, when bytes arrive, around each command,
 * when a waiting reply becomes ready, and on each tick. Run by the
 * frontends.
 *
 * Per command: the time from the parsed request to its reply being ready
 * is added to the command's statistics and, over slowlog-log-slower-than,
 * logged (slowlog.c says why that is the time measured); CLIENT REPLY
 * OFF/SKIP decides whether its replies are dropped; the registry entry
 * (client-registry.c) follows its database and MULTI state. What is kept
 * per frontend is fe->admin (fe_admin_t), per connection fields of fe_conn_t
 * only this layer reads.
 */
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include "frontend/admin/admin.h"
#include "frontend/cmd/cmd.h"
#include "frontend/core/core.h"

#define FAST_FAILED 0x8000u

static uint64_t clock_read(fe_t *fe, batch_clock_t *bc, int share)
{
    uint64_t now = shm_mono_ns();
    if (bc->nfast && share) {
        uint64_t each = (now - bc->mark) / (uint64_t)bc->nfast;
        for (int i = 0; i < bc->nfast; i++)
            fe_stat_done(fe, bc->fast[i] & ~FAST_FAILED, each, (bc->fast[i] & FAST_FAILED) != 0);
    } else {
        for (int i = 0; i < bc->nfast; i++)
            fe_stat_done(fe, bc->fast[i] & ~FAST_FAILED, 0, (bc->fast[i] & FAST_FAILED) != 0);
    }
    bc->nfast = 0;
    bc->mark = now;
    return now;
}

/* After a command was dispatched: its statistics and slow log entry, at
 * once if its reply is ready, else when it becomes so
 * (fe_admin_reply_ready); and what CLIENT LIST shows of the connection on
 * other frontends. */
void fe_admin_command_done(fe_conn_t *c, const char *buf, const fe_admin_mark_t *mark)
{
    fe_t *fe = c->fe;
    batch_clock_t *bc = &fe->admin->clock;
    fe_reply_t *tail0 = mark->tail0;
    size_t out0 = mark->out0;
    /* An error answered at once, the command counted or not (an unknown
     * command, a refused one): total_error_replies, errorstats. One that
     * waits is counted when it becomes ready (fe_admin_reply_ready). */
    fe_reply_t *r = c->tail != tail0 ? c->tail : NULL;
    int waits = r && r->state != FE_READY;
    const char *now_p = r ? r->data : c->out.data + out0;
    size_t now_n = r ? r->len : (c->out.len > out0 ? c->out.len - out0 : 0);
    int failed = !waits && now_n && now_p[0] == '-';
    /* An EXEC's commands: their errors in its array count when it is
     * answered, now or once its reply is ready (in order: the store
     * answers a connection's EXECs in the order they were sent). */
    int is_exec = c->admin->stat_idx == CMD_EXEC + 1;
    fe_exec_idx_t *exec = is_exec ? fe_exec_idx_take_cur(c) : NULL;
    if (failed)
        fe_stat_error_reply(fe, now_p, now_n);
    else if (!waits && now_n && now_p[0] == '*' && is_exec)
        fe_stat_exec_errors(fe, now_p, now_n, exec); /* an EXEC answered without the store */
    if (exec && waits)
        fe_exec_idx_push(c, exec);
    else
        free(exec);
    if (c->admin->stat_idx) {
        unsigned idx = c->admin->stat_idx - 1u;
        uint32_t flags = c->admin->stat_desc->flags;
        int slowlog = fe->admin->slowlog_slower_than >= 0 && !(flags & CMDF_SKIP_SLOWLOG);
        if (waits) {
            fe_note_set_idx(r->note, c->admin->stat_idx);
            r->note[0] = bc->mark; /* when the request was read */
            if (slowlog) fe_slowlog_snapshot(c, r, buf);
        } else {
            /* Sub-millisecond thresholds want every command timed alone. */
            if ((flags & CMDF_FAST) && (!slowlog || fe->admin->slowlog_slower_than >= 1000)) {
                /* Timed with its neighbours (batch_clock_t). */
                bc->fast[bc->nfast++] = (uint16_t)(idx | (failed ? FAST_FAILED : 0));
                if (bc->nfast == (int)(sizeof(bc->fast) / sizeof(bc->fast[0])))
                    clock_read(fe, bc, 1);
            } else {
                /* Its time includes the fast commands answered since the
                 * last reading, a fraction of a microsecond each. */
                uint64_t start = bc->mark, ns = clock_read(fe, bc, 0) - start;
                fe_stat_done(fe, idx, ns, failed);
                if (slowlog && ns / 1000 >= (uint64_t)fe->admin->slowlog_slower_than)
                    fe_slowlog_add(c, ns / 1000, buf);
            }
        }
        c->admin->stat_idx = 0;
    }
    if (c->admin->monitor_after) { /* EXEC, SELECT, RESET: a few words */
        c->admin->monitor_after = 0;
        const char *argv[8];
        uint32_t lens[8];
        int argc = c->cmd.argc < 8 ? c->cmd.argc : 8;
        for (int i = 0; i < argc; i++) {
            argv[i] = resp_arg_ptr(&c->cmd, buf, i);
            lens[i] = c->cmd.args[i].len;
        }
        fe_args_t a = {argc, argv, lens};
        fe_monitor_line(c, &a);
    }
    fe_monitor_command_done(c);
    if (c->admin->reg) {
        if (c->db != c->admin->reg_db) fe_client_sync(c);
        fe_client_flags_sync(c); /* blocked (CLIENT LIST's b, CLIENT UNBLOCK) */
        int m = fe_multi_count(c);
        if (m != c->admin->reg_multi) {
            c->admin->reg_multi = m;
            atomic_store_explicit(&c->admin->reg->multi, m, memory_order_relaxed);
        }
    }
}

void fe_admin_command_begin(fe_conn_t *c, fe_admin_mark_t *m)
{
    batch_clock_t *bc = &c->fe->admin->clock;
    if (!bc->mark) clock_read(c->fe, bc, 0);
    m->tail0 = c->tail;
    m->out0 = c->out.len;
    /* CLIENT REPLY: OFF drops every reply, SKIP the next command's. */
    m->skip = c->admin->reply_skip;
    c->reply_suppress = c->admin->reply_off || m->skip;
    c->admin->reply_skip = 0;
    c->admin->stat_idx = 0;
}

void fe_admin_command_again(fe_conn_t *c, const fe_admin_mark_t *m)
{
    c->admin->reply_skip = m->skip; /* the command runs again: SKIP still applies */
}

void fe_admin_input_done(fe_conn_t *c)
{
    batch_clock_t *bc = &c->fe->admin->clock;
    if (bc->nfast) clock_read(c->fe, bc, 1);
    bc->mark = 0; /* the next batch starts its own clock */
}

/* A reply that waited became ready: account its command (statistics, slow
 * log). *now is read once per batch of completions. */
void fe_admin_reply_ready(fe_t *fe, fe_reply_t *r, uint64_t *now)
{
    if (r->conn && r->conn->admin->reg) fe_client_flags_sync(r->conn); /* unblocked */
    /* A subscriber's own command (RESP3): what the store published before
     * it replied ("keymiss", a write's events) goes out first, as in Redis;
     * the ring's head moved before the reply was sent (D51). */
    if (r->conn && r->conn->subscriptions) fe_pubsub_poll(fe);
    unsigned idx1 = fe_note_idx(r->note);
    if (r->len && r->data && r->data[0] == '-')
        fe_stat_error_reply(fe, r->data, r->len);
    else if (r->len && r->data && r->data[0] == '*' && idx1 == CMD_EXEC + 1)
        fe_stat_exec_errors(fe, r->data, r->len, r->conn ? r->conn->admin->exec_head : NULL);
    if (idx1 == CMD_EXEC + 1 && r->conn) free(fe_exec_idx_pop(r->conn));
    if (fe->admin->waits_unstarted) fe_repl_waits_reply_ready(fe); /* a WAIT may start */
    if (!idx1) return;
    if (!*now) *now = shm_mono_ns();
    uint64_t ns = *now - r->note[0], usec = ns / 1000;
    unsigned idx = idx1 - 1u;
    fe_note_set_idx(r->note, 0);
    fe_stat_done(fe, idx, ns, r->len && r->data && r->data[0] == '-');
    if (fe_note_snap_ok(r->note) && r->conn && fe->admin->slowlog_slower_than >= 0 &&
        usec >= (uint64_t)fe->admin->slowlog_slower_than)
        fe_slowlog_add_snapshot(r->conn, usec, r, idx);
}

const char *fe_admin_refuse(fe_t *fe, const struct sockaddr *peer)
{
    return fe_protected_refuse(fe, peer) ? FE_DENIED_MSG : NULL;
}

void fe_admin_on_connect(fe_conn_t *c)
{
    /* As Redis: a client starts authenticated when the default user needs
     * no password, and stays so if one is set later. */
    c->admin->authenticated = fe_acl_default_auth(c->fe);
    fe_client_register(c);
}

void fe_admin_on_close(fe_conn_t *c)
{
    fe_pubsub_on_close(c);
    fe_monitor_remove(c);
    fe_client_unregister(c);
    fe_exec_idx_free_all(c);
    free(c->admin->user);
    free(c->admin->name);
    free(c->admin->lib_name);
    free(c->admin->lib_ver);
}

void fe_admin_on_input(fe_conn_t *c)
{
    if (c->admin->reg)
        atomic_store_explicit(&c->admin->reg->last_active_ms, c->last_active_ms,
                              memory_order_relaxed);
}

void fe_admin_on_wake(fe_t *fe)
{
    fe_clients_kill_pending(fe); /* CLIENT KILL from another frontend */
    fe_repl_waits_check(fe);     /* a replica acked (WAIT) */
    fe_pubsub_poll(fe);          /* Pub/Sub messages from other frontends */
}

void fe_admin_on_timer(fe_t *fe)
{
    fe_repl_waits_check(fe); /* in case a wake-up was lost */
    fe_config_refresh(fe);
    fe_acl_sweep(fe);            /* clients of users deleted on any frontend */
    fe_clients_kill_pending(fe); /* in case a wake-up was lost */
    fe_pubsub_poll(fe);
    fe_stats_sync_epoch(fe);
    fe_latency_tick(fe);
    if (fe->slot == 0) {
        /* INFO used_memory_peak (shm_memory raises it; INFO and MEMORY
         * STATS do too, from any frontend and the store). */
        shm_memory_t m;
        shm_memory(fe->shm, atomic_load(&fe->shm->store_index_bytes),
                   atomic_load(&fe->shm->store_table_bytes), &m);
    }
    int64_t now = shm_now_ms();
    if (now - fe->admin->ops_sample_ms >= 1000) {
        /* instantaneous_ops_per_sec: commands over the last second */
        uint64_t cmds = atomic_load(&fe->stats->cmds);
        uint64_t in = atomic_load(&fe->stats->net_in), out = atomic_load(&fe->stats->net_out);
        uint64_t ms = (uint64_t)(now - fe->admin->ops_sample_ms);
        if (fe->admin->ops_sample_ms && cmds >= fe->admin->ops_sample_cmds)
            atomic_store(&fe->stats->inst_ops, (cmds - fe->admin->ops_sample_cmds) * 1000 / ms);
        /* The counters restart at RESETSTAT: a sample across it is skipped. */
        if (fe->admin->ops_sample_ms && in >= fe->admin->ops_sample_in &&
            out >= fe->admin->ops_sample_out) {
            atomic_store(&fe->stats->inst_in_bps, (in - fe->admin->ops_sample_in) * 1000 / ms);
            atomic_store(&fe->stats->inst_out_bps, (out - fe->admin->ops_sample_out) * 1000 / ms);
        }
        fe->admin->ops_sample_in = in;
        fe->admin->ops_sample_out = out;
        fe->admin->ops_sample_cmds = cmds;
        fe->admin->ops_sample_ms = now;
    }
}

int fe_admin_start(fe_t *fe)
{
    fe->admin = calloc(1, sizeof(*fe->admin));
    if (!fe->admin) return -1;
    const char *remote = getenv("ATTICDB_TEST_REMOTE_ADDR");
    struct in_addr remote_addr;
    if (remote && inet_pton(AF_INET, remote, &remote_addr) == 1)
        fe->admin->test_remote_addr = remote_addr.s_addr;
    fe_clients_reclaim(fe); /* our predecessor's clients are gone */
    fe->admin->cfg_version = UINT64_MAX;
    fe_config_refresh(fe);
    fe_acl_refresh(fe);
    fe->admin->argring = malloc(FE_ARGRING_SIZE);
    if (!fe->admin->argring) return -1;
    return fe_pubsub_start(fe);
}
