/*
 * dispatch.c - routing one parsed command, in a frontend process.
 *
 * Unknown commands and wrong arity are answered here with Redis' texts.
 * Then the command's route in the registry (common/commands.def) decides:
 * local commands (PING, INFO, ...) are answered at once, reads go to the
 * store over this frontend's request channel, once their connection's
 * writes are durable (docs/DECISIONS.md, D19). Writes are validated and turned
 * into their canonical record (command.h) here, before anything reaches the
 * ring, so a bad write changes nothing (contract 7), and relative expiry
 * becomes absolute time now, at encoding (contract 4). Inside MULTI,
 * commands go to multi.c's queue instead, and multi.c submits the whole
 * transaction through fe_submit_record as one record.
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
#include "frontend/core/core.h"
#include "io_fault.h"
#include "log.h"
#include "record.h"
#include "strutil.h"

#define MAX_RECORD_ARGS 65535


static void reply_static(fe_conn_t *c, const char *s)
{
    fe_reply_ready_static(c, s, strlen(s));
}

/* An error reply built with printf, cleaned as Redis cleans its own
 * (resp_error_clean), so a client can't break the protocol through an
 * echoed argument. */
static void reply_errorf(fe_conn_t *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void reply_errorf(fe_conn_t *c, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    resp_error_clean(msg);
    buf_t b;
    buf_init(&b);
    resp_error(&b, msg);
    fe_reply_ready_buf(c, &b);
    buf_free(&b);
}

/* ---- writes ---- */

int fe_write_refused(fe_conn_t *c)
{
    if (atomic_load(&c->fe->shm->logger_state) == LOGGER_FAILED) {
        reply_errorf(c,
                     "ERR AtticDB's log is stopped after an I/O error (%s): writes are "
                     "refused until the server restarts",
                     strerror(atomic_load(&c->fe->shm->logger_errno)));
        return 1;
    }
    if (atomic_load(&c->fe->shm->log_no_space)) {
        reply_static(c, "-ERR disk full: AtticDB can't create its next log segment; writes are "
                        "refused until space is freed (reads still work)\r\n");
        return 1;
    }
    return 0;
}

size_t fe_record_max_payload(const fe_t *fe)
{
    uint64_t max = ring_max_record(fe->ring);
    if (max > UINT32_MAX) max = UINT32_MAX;
    return max > REC_HDR_SIZE ? (size_t)(max - REC_HDR_SIZE) : 0;
}

/* A predecessor of this frontend may have died holding a ring claim: the
 * slot's claimer is ours once the logger is past that claim. Checked at
 * each claim rather than waited for at start: a frontend started while
 * the log is failed or out of space (writes refused, the claim never
 * passed) must still accept and serve reads (D12). */
static int claimer_adopted(fe_t *fe)
{
    if (!fe->claimer_adopted)
        fe->claimer_adopted = ring_claimer_adopt(fe->claimer, atomic_load(&fe->shm->durable_lsn));
    return fe->claimer_adopted;
}

int fe_submit_record(fe_conn_t *c, uint16_t opdb, int needs_store_reply, int argc,
                     const unsigned char *const *argv, const uint32_t *lens)
{
    fe_t *fe = c->fe;
    if (argc > MAX_RECORD_ARGS) return -EMSGSIZE;
    if (!claimer_adopted(fe)) return -EAGAIN; /* retried soon, like a full ring */
    size_t payload = rec_cmd_payload_size((uint16_t)argc, lens);
    if (payload > UINT32_MAX - 2 * REC_ALIGN) return -EMSGSIZE;
    uint32_t space = rec_space((uint32_t)payload);
    uint64_t pos;
    int rc = ring_claim(fe->ring, fe->claimer, space, &pos);
    if (rc == -EAGAIN) {
        fe_wake_logger(fe);
        fe_wake_store(fe);
        return -EAGAIN;
    }
    if (rc == -EMSGSIZE) return -EMSGSIZE;
    /* Test hook: die holding the claim, as a SIGKILL at this instruction
     * would (contract 5; the logger must pad the claim). */
    if (io_fault_point(IO_FAULT_CLAIM)) raise(SIGKILL);
    uint16_t origin = needs_store_reply ? (uint16_t)(fe->slot + 1) : 0;
    uint64_t durable = atomic_load_explicit(&fe->shm->durable_lsn, memory_order_acquire);
    rec_encode_cmd_durable(ring_ptr(fe->ring, pos), pos, durable, origin, shm_now_ms(), opdb,
                           (uint16_t)argc, argv, lens);
    ring_commit(fe->ring, fe->claimer, pos);
    fe_wake_logger(fe);

    fe_reply_t *r = fe_reply_push(c);
    r->is_write = 1;
    r->lsn_end = pos + space;
    if (needs_store_reply) fe_wait_store(fe, r, STORE_REPLY_WRITE, pos);
    else fe_wait_durable(fe, r, pos + space);
    c->last_write_end = pos + space;
    return 0;
}

/* Submit one canonical write in the connection's database; a record too
 * large for the log gets its error reply here. */
static int submit_write(fe_conn_t *c, cmd_id_t id, int needs_store_reply, int argc,
                        const unsigned char *const *argv, const uint32_t *lens)
{
    if (argc > MAX_RECORD_ARGS) {
        reply_static(c, "-ERR too many arguments for one AtticDB log record (at most 65535)\r\n");
        return 0;
    }
    int rc = fe_submit_record(c, REC_OP_DB(id, c->db), needs_store_reply, argc, argv, lens);
    if (rc == -EMSGSIZE) {
        size_t payload = rec_cmd_payload_size((uint16_t)argc, lens);
        if (payload > UINT32_MAX - 2 * REC_ALIGN) {
            reply_static(c, "-ERR request too large for the log\r\n");
            return 0;
        }
        reply_errorf(c,
                     "ERR request too large: its log record needs %u bytes, ring-size allows "
                     "%llu per record",
                     rec_space((uint32_t)payload), (unsigned long long)ring_max_record(c->fe->ring));
        return 0;
    }
    return rc;
}


/* A CMD_TICK record, asked for by the store (shm tick_wanted): it carries
 * only the time, which moves the apply clock so expired keys are reclaimed
 * at a point of the log replay will meet too. Nobody waits for it; when the
 * ring is full, records are flowing anyway and the store asks again. */
void fe_submit_tick(fe_t *fe)
{
    if (atomic_load(&fe->shm->logger_state) != LOGGER_RUNNING || !claimer_adopted(fe)) return;
    uint32_t space = rec_space((uint32_t)rec_cmd_payload_size(0, NULL));
    uint64_t pos;
    if (ring_claim(fe->ring, fe->claimer, space, &pos) != 0) return;
    uint64_t durable = atomic_load_explicit(&fe->shm->durable_lsn, memory_order_acquire);
    rec_encode_cmd_durable(ring_ptr(fe->ring, pos), pos, durable, 0, shm_now_ms(),
                           REC_OP_DB(CMD_TICK, 0), 0, NULL, NULL);
    ring_commit(fe->ring, fe->claimer, pos);
    fe_wake_logger(fe);
}

static void reply_arity(fe_conn_t *c, const cmd_desc_t *d)
{
    reply_errorf(c, "ERR wrong number of arguments for '%s' command", d->name);
}

static int dispatch_write(fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a)
{
    if (fe_write_refused(c)) return 0;
    if (c->reads_outstanding) return -EBUSY;
    fe_encode_fn encode = fe_encoder(d->id);
    if (!encode) {
        reply_errorf(c, "ERR command '%s' is not implemented", d->name);
        return 0;
    }
    fe_enc_t e;
    if (encode(c, d, a, &e) != 0) {
        buf_t b; /* copied: e.err dies with this frame, the reply may wait */
        buf_init(&b);
        buf_append(&b, e.err, strlen(e.err));
        fe_enc_release(&e);
        fe_reply_ready_buf(c, &b);
        buf_free(&b);
        return 0;
    }
    return submit_write(c, e.op, e.needs_reply, e.argc, e.argv, e.lens);
}

/* ---- reads ---- */

/* A read goes to the store only once its connection's writes are durable
 * (D19): then its min_lsn is durable_lsn, the store reaches it by applying
 * what is durable already, and no read waits inside the store for the
 * logger, where a store's death would lose it. Returns 1 when c's read
 * must wait (fe_reads_release retries c), 0 when it may go. */
static int read_must_wait(fe_conn_t *c)
{
    fe_t *fe = c->fe;
    if (c->last_write_end <= atomic_load_explicit(&fe->shm->durable_lsn, memory_order_acquire))
        return 0;
    /* After the log failed, the write never will be durable (it got an
     * error): the read sees what is. */
    if (atomic_load(&fe->shm->logger_state) == LOGGER_FAILED) return 0;
    if (!fe->read_wait_lsn || c->last_write_end < fe->read_wait_lsn)
        fe->read_wait_lsn = c->last_write_end;
    return 1;
}

int fe_reads_release(fe_t *fe)
{
    if (!fe->read_wait_lsn) return 0;
    if (atomic_load_explicit(&fe->shm->durable_lsn, memory_order_acquire) < fe->read_wait_lsn &&
        atomic_load(&fe->shm->logger_state) != LOGGER_FAILED)
        return 0;
    /* Those still waiting set it again when retried. */
    fe->read_wait_lsn = 0;
    event_active(fe->ev_retry, EV_TIMEOUT, 0);
    return 1;
}

static int dispatch_read(fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a)
{
    fe_t *fe = c->fe;
    int argc = a->argc - 1;
    if (argc > MAX_RECORD_ARGS) {
        reply_static(c, "-ERR too many arguments (at most 65535 keys per read)\r\n");
        return 0;
    }
    size_t payload = rec_cmd_payload_size((uint16_t)argc, a->lens + 1);
    size_t total = sizeof(store_req_t) + payload;
    if (total > chan_max_msg(fe->to_store)) {
        reply_static(c, "-ERR request too large for the store channel (see channel-size)\r\n");
        return 0;
    }
    unsigned char *dst = chan_reserve(fe->to_store, (uint32_t)total);
    if (!dst) {
        fe_wake_store(fe);
        return -EAGAIN;
    }
    uint64_t durable = atomic_load_explicit(&fe->shm->durable_lsn, memory_order_acquire);
    uint64_t min_lsn = durable > c->last_write_end ? durable : c->last_write_end;
    /* After the log failed, this connection's last write will never be
     * durable (it got an error): read what is. */
    if (atomic_load(&fe->shm->logger_state) == LOGGER_FAILED) min_lsn = durable;
    store_req_t req = {.id = fe->next_read_id++,
                       .min_lsn = min_lsn,
                       .payload_len = (uint32_t)payload,
                       .db = (uint32_t)c->db};
    memcpy(dst, &req, sizeof(req));
    rec_encode_payload(dst + sizeof(req), (uint16_t)d->id, (uint16_t)argc,
                       (const unsigned char *const *)(a->argv + 1), a->lens + 1);
    chan_publish(fe->to_store);
    fe_wake_store(fe);
    fe_reply_t *r = fe_reply_push(c);
    fe_wait_store(fe, r, STORE_REPLY_READ, req.id);
    c->reads_outstanding++;
    return 0;
}

/* ---- SELECT ---- */

int fe_select_db(const fe_conn_t *c, const char *arg, uint32_t len, buf_t *out)
{
    long long id;
    int ndb = c->fe->cfg->databases > 0 ? c->fe->cfg->databases : 16;
    if (str_to_ll(arg, len, &id) != 0) {
        resp_error(out, "ERR value is not an integer or out of range");
        return -1;
    }
    if (id < INT_MIN || id > INT_MAX) {
        resp_error(out, "ERR value is out of range, value must between -2147483648 and 2147483647");
        return -1;
    }
    if (id < 0 || id >= ndb) {
        resp_error(out, "ERR DB index is out of range");
        return -1;
    }
    resp_simple(out, "OK");
    return (int)id;
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
    reply_errorf(c, "ERR unknown command '%.*s', with args beginning with: %s",
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
            upper[i] = (char)(d->name[i] >= 'a' && d->name[i] <= 'z' ? d->name[i] - 32 : d->name[i]);
        upper[i] = '\0';
        reply_errorf(c, "ERR unknown subcommand '%.*s'. Try %s HELP.",
                     (int)(a->lens[1] > 128 ? 128 : a->lens[1]), a->argv[1], upper);
        return -1;
    }
    if (!cmd_arity_ok(s->arity, a->argc)) {
        reply_errorf(c, "ERR wrong number of arguments for '%s' command", s->fullname);
        return -1;
    }
    return 0;
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
    if (fe_acl_check(c, d, &a, &out) != 0) {
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
    if (c->multi && !(d->flags & CMDF_NO_MULTI)) {
        buf_free(&out);
        return fe_multi_queue(c, d, &a);
    }
    /* A read routed to the store that must wait is dispatched again later,
     * so it is counted then. */
    if (d->route == CMD_ROUTE_READ && read_must_wait(c)) {
        buf_free(&out);
        return -EBUSY;
    }
    c->last_cmd = d->id;
    fe_cmdstat(c, d);
    switch (d->route) {
    case CMD_ROUTE_MULTI:
        buf_free(&out);
        return fe_multi_command(c, d, &a);
    case CMD_ROUTE_LOCAL:
        fe_local(c, d, a.argc, a.argv, a.lens, &out);
        fe_reply_ready_buf(c, &out);
        buf_free(&out);
        return 0;
    case CMD_ROUTE_WRITE:
        buf_free(&out);
        return dispatch_write(c, d, &a);
    case CMD_ROUTE_READ:
        break;
    }
    buf_free(&out);
    return dispatch_read(c, d, &a);
}
