/*
 * dispatch.c - routing one parsed command, in a frontend process.
 *
 * Unknown commands and wrong arity are answered here with Redis' texts, and
 * the ACL is asked through the check hook (cmd.h). Then the command's route
 * in the registry (common/commands.def) decides: local commands (PING,
 * INFO, ...) are answered at once by the LOCAL table (the local hook), reads
 * go to the
 * store over this frontend's request channel, once their connection's
 * writes are durable (docs/DECISIONS.md, D19). Writes are validated and turned
 * into their canonical record (command.h) here, before anything reaches the
 * ring, so a bad write changes nothing (contract 7), and relative expiry
 * becomes absolute time now, at encoding (contract 4). Inside MULTI,
 * commands go to multi.c's queue instead, and multi.c submits the whole
 * transaction through fe_submit_record (frontend/core/submit.c) as one
 * record.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "frontend/cmd/encode.h"
#include "frontend/cmd/cmd.h"
#include "io_fault.h"
#include "log.h"
#include "record.h"
#include "strutil.h"

static void reply_static(fe_conn_t *c, const char *s)
{
    fe_reply_ready_static(c, s, strlen(s));
}

/* ---- writes ---- */

static void reply_too_large(fe_conn_t *c, int argc, const uint32_t *lens)
{
    size_t payload = rec_cmd_payload_size((uint16_t)argc, lens);
    if (payload > UINT32_MAX - 2 * REC_ALIGN) {
        reply_static(c, "-ERR request too large for the log\r\n");
        return;
    }
    fe_reply_errorf(c,
                    "ERR request too large: its log record needs %u bytes, ring-size allows "
                    "%llu per record",
                    rec_space((uint32_t)payload), (unsigned long long)ring_max_record(c->fe->ring));
}

/* Choose the values of canonical write op (argc arguments, lens) to move
 * into a group until its final fits `room` bytes: v[0, n) are chosen
 * already (their lens zero), each new one is the largest value left
 * (cmd_big_value_arg), its off from base on, its length then zeroed in
 * lens. Returns the values' count, or -1 when no choice fits. */
static int big_choose(cmd_id_t op, int argc, uint32_t *lens, fe_bigval_t *v, int n, uint64_t base,
                      size_t room)
{
    for (;;) {
        size_t need = fe_big_final_size(rec_cmd_payload_size((uint16_t)argc, lens), n);
        if (n && need <= room) return n;
        /* The largest value left (the first of equals): the fewest bytes
         * moved, the same choice on every retry. */
        int best = -1;
        for (int i = 0; i < argc; i++)
            if (lens[i] && cmd_big_value_arg(op, (uint32_t)i, (uint32_t)argc) &&
                (best < 0 || lens[i] > lens[best]))
                best = i;
        if (best < 0) return -1;
        v[n] = (fe_bigval_t){0, (uint32_t)best, base, lens[best]};
        base += lens[best];
        lens[best] = 0;
        n++;
    }
}

/* A write whose values make its record too large, or some of which came
 * as chunks while they arrived (core/stream.c: each stands as an empty
 * argument), or that is retried with part of its values committed
 * (c->big): its values as one group, then the final (D31, D58). A
 * streamed argument must be one of the form's values, else the write is
 * refused as too large, as it was when the value was read whole (the
 * caller drops the parts). Returns as fe_big_final. */
static int submit_big(fe_conn_t *c, cmd_id_t id, int argc, const unsigned char *const *argv,
                      const uint32_t *lens)
{
    uint32_t *nlens = malloc((size_t)(argc ? argc : 1) * sizeof(*nlens));
    fe_bigval_t *v = malloc((size_t)(argc ? argc : 1) * sizeof(*v));
    const unsigned char **src = malloc((size_t)(argc ? argc : 1) * sizeof(*src));
    if (!nlens || !v || !src) abort();
    memcpy(nlens, lens, (size_t)argc * sizeof(*nlens));
    int n = 0, rc = -EMSGSIZE;
    uint64_t base = 0;
    for (int i = 0; i < argc; i++) {
        const fe_streamed_t *st = fe_stream_find(c, argv[i]);
        if (!st) continue;
        if (!cmd_big_value_arg(id, (uint32_t)i, (uint32_t)argc)) goto out;
        src[n] = NULL;
        v[n++] = (fe_bigval_t){0, (uint32_t)i, st->off, st->len};
        base = st->off + st->len;
    }
    int streamed = n;
    /* Every bulk taken must be named, or its bytes would be lost. */
    if (streamed != c->stream.nvals && c->stream.whole) goto out;
    n = big_choose(id, argc, nlens, v, n, base, fe_record_max_payload(c->fe));
    if (n < 0) goto out;
    for (int k = streamed; k < n; k++)
        src[k] = argv[v[k].arg];
    rc = fe_big_put(c, v, src, n);
    if (rc) goto out;
    size_t nested = rec_cmd_payload_size((uint16_t)argc, nlens);
    unsigned char *body = malloc(nested);
    if (!body) abort();
    uint16_t opdb = REC_OP_DB(id, c->db);
    rec_encode_payload(body, opdb, (uint16_t)argc, argv, nlens);
    rc = fe_big_final(c, opdb, body, nested, v, n);
    free(body);
out:
    if (rc == -EMSGSIZE) {
        /* The lengths as the client sent them. */
        for (int k = 0; k < argc; k++) {
            const fe_streamed_t *st = fe_stream_find(c, argv[k]);
            nlens[k] = st ? (uint32_t)st->len : lens[k];
        }
        reply_too_large(c, argc, nlens);
    }
    free(nlens);
    free(v);
    free(src);
    return rc == -EMSGSIZE ? 0 : rc;
}

/* Submit one canonical write in the connection's database; a record too
 * large for the log gets its error reply here. */
static int submit_write(fe_conn_t *c, cmd_id_t id, int needs_store_reply, int argc,
                        const unsigned char *const *argv, const uint32_t *lens)
{
    if (argc > FE_MAX_RECORD_ARGS) {
        reply_static(c, "-ERR too many arguments for one AtticDB log record (at most 65535)\r\n");
        return 0;
    }
    if (c->stream.whole || c->big.active ||
        rec_cmd_payload_size((uint16_t)argc, lens) > fe_record_max_payload(c->fe))
        return submit_big(c, id, argc, argv, lens);
    int rc = fe_submit_record(c, REC_OP_DB(id, c->db), needs_store_reply, argc, argv, lens);
    if (rc == -EMSGSIZE) {
        reply_too_large(c, argc, lens);
        return 0;
    }
    return rc;
}

int fe_dispatch_stream_arg(fe_conn_t *c, const char *name, size_t n, int count, int arg)
{
    /* A transaction that failed only waits for EXEC's EXECABORT. */
    if (c->multi && fe_multi_failed(c)) return 0;
    const cmd_desc_t *d = cmd_lookup(name, (uint32_t)n);
    if (!d || (c->multi && (d->flags & CMDF_NO_MULTI))) return 0;
    return fe_big_user_arg(d, count, arg, c->multi != NULL);
}

static void reply_arity(fe_conn_t *c, const cmd_desc_t *d)
{
    fe_reply_errorf(c, "ERR wrong number of arguments for '%s' command", d->name);
}

static int dispatch_write_once(fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a);

/* A write; one whose large value is part written (c->big) and is not
 * retried now (refused, or its record turned out impossible) has its
 * parts dropped, so they are neither kept nor spliced into another. */
static int dispatch_write(fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a)
{
    int rc = dispatch_write_once(c, d, a);
    if (rc != -EAGAIN && rc != -EBUSY && c->big.active) fe_big_abandon(c);
    return rc;
}

static int dispatch_write_once(fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a)
{
    if (fe_write_refused(c)) return 0;
    if (c->reads_outstanding) return -EBUSY;
    if (fe_probe_answer(c, d, a)) return 0; /* it changes nothing (D68) */
    fe_encode_fn encode = d->id == CMD_XREAD ? fe_enc_xreadblock : fe_encoder(d->id);
    if (!encode) {
        fe_reply_errorf(c, "ERR command '%s' is not implemented", d->name);
        return 0;
    }
    /* A blocking record waits for this frontend's CMD_BLOCKDROP (block.c). */
    if ((d->flags & CMDF_BLOCKING) && !fe_block_ready(c->fe)) return -EAGAIN;
    fe_enc_t e;
    fe_enc_init(&e);
    if (encode(c, d, a, &e) != 0) {
        buf_t b; /* copied: e.err dies with this frame, the reply may wait */
        buf_init(&b);
        buf_append(&b, e.err, strlen(e.err));
        fe_enc_release(&e);
        fe_reply_ready_buf(c, &b);
        buf_free(&b);
        return 0;
    }
    if (e.blocks) fe_block_note_use(c->fe);
    fe_reply_t *tail0 = c->tail;
    int rc = submit_write(c, e.op, e.needs_reply, e.argc, e.argv, e.lens);
    if (rc == 0 && e.blocks && c->tail != tail0 && c->tail->is_write) fe_block_begin(c, e.block_ms);
    if (rc == 0 && c->tail != tail0) fe_probe_note(c, d, a);
    fe_enc_release(&e);
    return rc;
}

/* ---- reads ---- */

static int dispatch_read(fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a)
{
    /* Answered from the read cache when it knows (D70). */
    if (d->id == CMD_GET && a->argc == 2 && fe_cached_get(c, a)) return 0;
    if (d->id == CMD_MGET && fe_cached_mget(c, a)) return 0;
    if ((d->flags & CMDF_REPLY_CACHE) && fe_cached_query(c, d, a)) return 0; /* D71 */
    int argc = a->argc - 1;
    if (argc > FE_MAX_RECORD_ARGS) {
        reply_static(c, "-ERR too many arguments (at most 65535 keys per read)\r\n");
        return 0;
    }
    int rc = fe_read_submit(c, (uint16_t)d->id, argc, (const unsigned char *const *)(a->argv + 1),
                            a->lens + 1);
    if (rc == -EMSGSIZE) {
        reply_static(c, "-ERR request too large for the store channel\r\n");
        return 0;
    }
    return rc;
}

/* ---- entry ---- */

static void reply_unknown(fe_conn_t *c, const fe_args_t *a)
{
    char args[512];
    size_t n = 0;
    args[0] = '\0';
    for (int i = 1; i < a->argc && n < 128; i++) {
        uint32_t room = (uint32_t)(128 - n);
        int w = snprintf(args + n, sizeof(args) - n, "'%.*s' ",
                         (int)(a->lens[i] < room ? a->lens[i] : room), a->argv[i]);
        if (w < 0) break;
        n += (size_t)w;
        if (n >= sizeof(args)) n = sizeof(args) - 1;
    }
    fe_reply_errorf(c, "ERR unknown command '%.*s', with args beginning with: %s",
                    (int)(a->lens[0] > 128 ? 128 : a->lens[0]), a->argv[0], args);
}

/* A container command's subcommand must exist and have its own arity,
 * checked before anything runs (and at queue time in MULTI), as Redis does.
 * Returns 0, or -1 after replying the error. */
static int check_subcommand(fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a)
{
    const cmd_sub_t *s = cmd_lookup_sub(d->id, a->argv[1], a->lens[1]);
    if (!s) {
        char upper[32];
        size_t i;
        for (i = 0; d->name[i] && i < sizeof(upper) - 1; i++)
            upper[i] =
                (char)(d->name[i] >= 'a' && d->name[i] <= 'z' ? d->name[i] - 32 : d->name[i]);
        upper[i] = '\0';
        fe_reply_errorf(c, "ERR unknown subcommand '%.*s'. Try %s HELP.",
                        (int)(a->lens[1] > 128 ? 128 : a->lens[1]), a->argv[1], upper);
        return -1;
    }
    if (!cmd_arity_ok(s->arity, a->argc)) {
        c->fe->cmd_hooks->rejected(c, d, a);
        fe_reply_errorf(c, "ERR wrong number of arguments for '%s' command", s->fullname);
        return -1;
    }
    return 0;
}

static int subscribed_mode_allows(cmd_id_t id)
{
    switch (id) {
    case CMD_SUBSCRIBE:
    case CMD_UNSUBSCRIBE:
    case CMD_PSUBSCRIBE:
    case CMD_PUNSUBSCRIBE:
    case CMD_SSUBSCRIBE:
    case CMD_SUNSUBSCRIBE:
    case CMD_PING:
    case CMD_QUIT:
    case CMD_RESET:
        return 1;
    default:
        return 0;
    }
}

/* "config|get" for a subcommand, else the command's name (Redis' fullname). */
static const char *full_name(const cmd_desc_t *d, const fe_args_t *a)
{
    const cmd_sub_t *s =
        cmd_has_subs(d->id) && a->argc >= 2 ? cmd_lookup_sub(d->id, a->argv[1], a->lens[1]) : NULL;
    return s ? s->fullname : d->name;
}

int fe_dispatch(fe_conn_t *c, const char *buf, resp_cmd_t *cmd)
{
    /* Scratch arrays, reused across commands: no allocation per command.
     * A frontend is single-threaded, so static storage is safe here. */
    static const char **argv;
    static uint32_t *lens;
    static int cap;
    if (cmd->argc > cap) {
        int ncap = cmd->argc < 16 ? 16 : cmd->argc;
        const char **nargv = realloc(argv, (size_t)ncap * sizeof(*argv));
        uint32_t *nlens = realloc(lens, (size_t)ncap * sizeof(*lens));
        if (!nargv || !nlens) {
            log_warn("out of memory");
            abort();
        }
        argv = nargv;
        lens = nlens;
        cap = ncap;
    }
    for (int i = 0; i < cmd->argc; i++) {
        argv[i] = resp_arg_ptr(cmd, buf, i);
        /* Bulk lengths are bounded by proto-max-bulk-len; past 4 GiB a
         * record could not hold them anyway, and the ring refuses them. */
        lens[i] = cmd->args[i].len > UINT32_MAX ? UINT32_MAX : (uint32_t)cmd->args[i].len;
    }
    fe_args_t a = {.argc = cmd->argc, .argv = argv, .lens = lens};
    /* After an EXEC with a SELECT and WATCHed keys, the database of what
     * follows depends on whether the store aborted it. */
    if (c->exec_wait_lsn && fe_multi_exec_waiting(c)) return -EAGAIN;
    const cmd_desc_t *d = cmd_lookup(argv[0], lens[0]);
    if (!d) {
        if (c->multi) fe_multi_flag_error(c);
        reply_unknown(c, &a);
        return 0;
    }
    if (!cmd_arity_ok(d->arity, a.argc)) {
        c->fe->cmd_hooks->rejected(c, d, &a);
        if (d->id == CMD_EXEC) {
            /* Redis ends the transaction (if any): EXECABORT naming the
             * error, inside MULTI or not. */
            char msg[128];
            snprintf(msg, sizeof(msg), "wrong number of arguments for '%s' command", d->name);
            fe_multi_exec_abort(c, msg, strlen(msg));
            return 0;
        }
        if (c->multi) fe_multi_flag_error(c);
        reply_arity(c, d);
        return 0;
    }
    if (cmd_has_subs(d->id) && a.argc >= 2 && check_subcommand(c, d, &a) != 0) {
        if (c->multi) fe_multi_flag_error(c);
        return 0;
    }
    buf_t out;
    buf_init(&out);
    if (c->fe->cmd_hooks->check(c, d, &a, &out) != 0) {
        if (d->id == CMD_EXEC) {
            size_t n = out.len; /* "-NOPERM ...\r\n": the text without '-' */
            fe_multi_exec_abort(c, out.len ? out.data + 1 : "", n > 1 ? n - 1 : 0);
            buf_free(&out);
            return 0;
        }
        if (c->multi) fe_multi_flag_error(c);
        fe_reply_ready_buf(c, &out);
        buf_free(&out);
        return 0;
    }
    if (c->multi && (d->flags & CMDF_REFUSED_IN_MULTI)) {
        buf_free(&out);
        fe_multi_flag_error(c);
        reply_static(c, "-ERR Command not allowed inside a transaction\r\n");
        return 0;
    }
    /* Cluster mode (D35): keys of another node's slots are redirected. */
    if (c->fe->cluster) {
        int rc = fe_cluster_route(c, d, &a, &out);
        if (rc != 0) {
            if (rc == -2)
                fe_multi_clear(c);
            else if (c->multi)
                fe_multi_flag_error(c);
            fe_reply_ready_buf(c, &out);
            buf_free(&out);
            return 0;
        }
    }
    /* maxmemory (D32): the store publishes its part of used_memory, the
     * frontends their clients' unsent replies (shm_used_memory); a denyoom
     * write over the bound is refused, as Redis' noeviction does (queued
     * in MULTI: the transaction is flagged, EXEC answers EXECABORT). Under
     * an evicting policy the store evicts instead, and writes are refused
     * only while it finds nothing to evict (volatile-* without TTLs). The
     * store applies what nobody waits for only when the log idles (D25):
     * with a bound set, one that is behind is woken, so the figure lags
     * by about one batch. */
    if ((d->flags & CMDF_DENYOOM) && c->fe->maxmemory) {
        shm_t *shm = c->fe->shm;
        if (atomic_load_explicit(&shm->store_counts_lsn, memory_order_relaxed) <
            atomic_load_explicit(&shm->durable_lsn, memory_order_relaxed))
            fe_wake_store(c->fe);
        if (shm_used_memory(shm) > c->fe->maxmemory &&
            (!c->fe->maxmemory_evicts ||
             atomic_load_explicit(&shm->evict_stuck, memory_order_relaxed))) {
            buf_free(&out);
            if (c->multi) fe_multi_flag_error(c);
            reply_static(c, "-OOM command not allowed when used memory > 'maxmemory'.\r\n");
            return 0;
        }
    }
    /* RESP2 subscribed mode: only the subscription commands, PING, QUIT
     * and RESET (Redis 7.0's words). */
    if (c->subscriptions && c->proto < 3 && !subscribed_mode_allows(d->id)) {
        buf_free(&out);
        if (c->multi) fe_multi_flag_error(c);
        fe_reply_errorf(c,
                        "ERR Can't execute '%s': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / "
                        "QUIT / RESET are allowed in this context",
                        full_name(d, &a));
        return 0;
    }
    if (c->multi && !(d->flags & CMDF_NO_MULTI)) {
        buf_free(&out);
        return fe_multi_queue(c, d, &a);
    }
    /* SORT without STORE is a read, refused where Redis refuses a write
     * command (a replica, too few replicas, a stopped log). */
    const cmd_desc_t *run = cmd_runs_as(d, a.argc, argv, lens);
    if (run != d && (d->flags & CMDF_WRITE) && fe_write_refused(c)) {
        buf_free(&out);
        return 0;
    }
    /* A read routed to the store that must wait is dispatched again later,
     * so it is counted then. */
    if (run->route == CMD_ROUTE_READ && fe_read_must_wait(c)) {
        buf_free(&out);
        return -EBUSY;
    }
    if (run->route == CMD_ROUTE_WRITE) {
        /* A write behind this connection's reads waits (D9), and one that
         * may change nothing asks the store first (D68): counted when it
         * runs again. */
        if (c->reads_outstanding || fe_probe_begin(c, d, &a)) {
            buf_free(&out);
            return -EBUSY;
        }
    }
    c->last_cmd = d->id;
    /* A write is counted once it ran: one that must wait for ring room
     * (-EAGAIN) runs again, and would be counted twice. */
    if (run->route != CMD_ROUTE_WRITE) c->fe->cmd_hooks->counted(c, d, &a);
    switch (run->route) {
    case CMD_ROUTE_MULTI:
        buf_free(&out);
        return fe_multi_command(c, d, &a);
    case CMD_ROUTE_LOCAL:
        c->local_submitted = c->local_again = 0;
        c->fe->cmd_hooks->local(c, d, a.argc, a.argv, a.lens, &out);
        if (c->local_again) {
            buf_free(&out);
            return -EAGAIN;
        }
        /* A record's store reply answers it (CLIENT UNBLOCK). */
        if (!c->local_submitted) fe_reply_ready_buf(c, &out);
        buf_free(&out);
        return 0;
    case CMD_ROUTE_WRITE: {
        buf_free(&out);
        int rc = dispatch_write(c, d, &a);
        if (rc != -EAGAIN && rc != -EBUSY) c->fe->cmd_hooks->counted(c, d, &a);
        return rc;
    }
    case CMD_ROUTE_READ:
        /* XREAD BLOCK's waiter is log state (D46): written, as BLPOP is,
         * except on a replica, whose log is its leader's. */
        if (d->id == CMD_XREAD && fe_xread_blocks(&a) &&
            !atomic_load(&c->fe->shm->repl.is_replica)) {
            buf_free(&out);
            return dispatch_write(c, d, &a);
        }
        break;
    }
    buf_free(&out);
    if (run->id == CMD_SORT_RO) { /* SORT's words, checked here (D47) */
        const char *err = fe_sort_refused(c, run, &a);
        if (err) {
            fe_reply_errorf(c, "%s", err);
            return 0;
        }
    }
    return dispatch_read(c, run, &a);
}
