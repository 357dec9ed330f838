/*
 * slowlog.c - the slow log: SLOWLOG GET / LEN / RESET / HELP and the
 * capture of slow commands, in the frontends. One log for the server, in
 * shm (shm_slowlog_t), written under its lock by whichever frontend ran
 * the command, so SLOWLOG GET through any frontend shows every frontend's
 * slow commands.
 *
 * What "execution time" means here. Redis times a command's execution on
 * its one thread. An AtticDB frontend hands a write to the logger and a
 * read to the store and goes on with other clients; the reply is ready
 * once the write is durable (fdatasync) or the store answered. The slow log
 * (and INFO commandstats' usec) measure the time from the request being
 * parsed to its reply being ready: what the client waited for inside the
 * server, the durability wait and the store's work included. That is the
 * number an operator looking for slow requests wants (a KEYS * that kept
 * the store busy, a write stuck behind a slow disk); it is larger than
 * Redis' figure for the same command, and with slowlog-log-slower-than 0
 * every write shows its fdatasync. INFO persistence has the fsync latency
 * percentiles apart.
 *
 * The clock starts when the frontend begins the batch of requests it read
 * in one go (the previous clock reading within that batch, see
 * batch_clock_t in admin/admin.h) and stops when the reply is ready: for a
 * command answered at once, at the next clock reading; for one whose reply
 * comes later, at the reading taken for its batch of completions. So a
 * pipelined write's time includes the commands before it in its batch, as
 * the client sees it. Commands flagged fast (PING, ECHO, ...) answered at
 * once share the time between two readings and are not slow-logged alone
 * (unless slowlog-log-slower-than is under 1 ms): a pipeline of them costs
 * one clock read per batch.
 *
 * Cost when nothing is slow: no allocation. A command answered at once is
 * logged only over the threshold, from its parsed arguments. A command
 * whose reply comes later has its arguments copied (cut to Redis' limits:
 * at most 32 arguments, 128 bytes each) into a per-frontend ring when it
 * is dispatched (see fe_slowlog_snapshot); the copy is skipped while the
 * slow log is disabled (< 0).
 *
 * Arguments are stored as Redis stores them: more than 32 become 31 and
 * "... (N more arguments)", a longer argument its first 128 bytes and
 * "... (N more bytes)"; secrets (AUTH, HELLO AUTH, ACL SETUSER,
 * CONFIG SET requirepass) become "(redacted)".
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/cmd/cmd.h"
#include "frontend/core/core.h"
#include "frontend/admin/admin.h"
#include "resp.h"
#include "strutil.h"

#define SLOW_MAX_ARGC   32
#define SLOW_MAX_STRING 128

static const char REDACTED[] = "(redacted)";

enum { RED_NONE, RED_AUTH, RED_HELLO, RED_ACL, RED_CONFIG };

/* A call's arguments, no copy: the parsed request (cmd, buf), or
 * arguments already split (args: MONITOR's, fe_args_redacted). */
typedef struct args_view {
    const resp_cmd_t *cmd;
    const char *buf;
    const fe_args_t *args;
} args_view_t;

static inline int arg_count(const args_view_t *a)
{
    return a->args ? a->args->argc : a->cmd->argc;
}

static inline const char *arg_ptr(const args_view_t *a, int i)
{
    return a->args ? a->args->argv[i] : resp_arg_ptr(a->cmd, a->buf, i);
}

static inline size_t arg_len(const args_view_t *a, int i)
{
    return a->args ? a->args->lens[i] : a->cmd->args[i].len;
}

static int arg_is(const args_view_t *a, int i, const char *word)
{
    return fe_word_eq(arg_ptr(a, i), arg_len(a, i), word);
}

/* Which commands have secrets in their arguments; cheap for the others
 * (this runs for every command whose reply comes later). */
static int redact_mode(const char *name, size_t n)
{
    if (n < 3 || n > 6) return RED_NONE;
    char c = (char)(name[0] | 0x20);
    if (c == 'a' && n == 4 && fe_word_eq(name, n, "auth")) return RED_AUTH;
    if (c == 'a' && n == 3 && fe_word_eq(name, n, "acl")) return RED_ACL;
    if (c == 'h' && n == 5 && fe_word_eq(name, n, "hello")) return RED_HELLO;
    if (c == 'c' && n == 6 && fe_word_eq(name, n, "config")) return RED_CONFIG;
    return RED_NONE;
}

/* Should argument i of this call be hidden? */
static int redacted(int mode, const args_view_t *a, int i)
{
    int argc = arg_count(a);
    switch (mode) {
    case RED_AUTH:
        return i > 0;
    case RED_HELLO:
        for (int j = 2; j + 2 < argc; j++)
            if (arg_is(a, j, "auth")) return i == j + 1 || i == j + 2;
        return 0;
    case RED_ACL:
        return argc > 1 && arg_is(a, 1, "setuser") && i >= 2;
    case RED_CONFIG:
        /* CONFIG SET name value ...: the value of requirepass */
        return argc > 1 && arg_is(a, 1, "set") && i >= 3 && i % 2 == 1 &&
               arg_is(a, i - 1, "requirepass");
    default:
        return 0;
    }
}

int fe_args_redacted(const fe_args_t *a, int i)
{
    args_view_t v = {NULL, NULL, a};
    int mode = a->argc > 0 ? redact_mode(a->argv[0], a->lens[0]) : RED_NONE;
    return mode != RED_NONE && redacted(mode, &v, i);
}

static size_t put_arg(char *dst, const char *p, size_t n)
{
    uint32_t len = (uint32_t)n;
    memcpy(dst, &len, 4);
    memcpy(dst + 4, p, n);
    return 4 + n;
}

/* The most any call encodes to: u32 argc, then 32 x (4 + 128 + the
 * longest note). */
#define ENCODED_MAX (4 + SLOW_MAX_ARGC * (4 + SLOW_MAX_STRING + 40))
_Static_assert(ENCODED_MAX <= SHM_SLOWLOG_ARGBYTES + 4, "slow log entries hold any encoded call");
_Static_assert(ENCODED_MAX < FE_ARGRING_SIZE / 16, "the argument ring holds many calls");

/* Encode the arguments into dst (ENCODED_MAX bytes): u32 argc, then each
 * argument as u32 length + bytes, cut and redacted as Redis does. Returns
 * the bytes used. */
static size_t encode_args(char *dst, const args_view_t *a)
{
    int argc = arg_count(a);
    int n = argc > SLOW_MAX_ARGC ? SLOW_MAX_ARGC : argc;
    uint32_t stored = (uint32_t)n;
    memcpy(dst, &stored, 4);
    size_t used = 4;
    int mode = argc > 0 ? redact_mode(arg_ptr(a, 0), arg_len(a, 0)) : RED_NONE;
    for (int j = 0; j < n; j++) {
        char note[64];
        size_t len = arg_len(a, j);
        if (n != argc && j == n - 1) {
            int k = snprintf(note, sizeof(note), "... (%d more arguments)", argc - n + 1);
            used += put_arg(dst + used, note, (size_t)k);
        } else if (mode != RED_NONE && redacted(mode, a, j)) {
            used += put_arg(dst + used, REDACTED, sizeof(REDACTED) - 1);
        } else if (len > SLOW_MAX_STRING) {
            int k = snprintf(note, sizeof(note), "... (%lu more bytes)",
                             (unsigned long)(len - SLOW_MAX_STRING));
            uint32_t total = (uint32_t)(SLOW_MAX_STRING + (size_t)k);
            memcpy(dst + used, &total, 4);
            memcpy(dst + used + 4, arg_ptr(a, j), SLOW_MAX_STRING);
            memcpy(dst + used + 4 + SLOW_MAX_STRING, note, (size_t)k);
            used += 4 + total;
        } else {
            used += put_arg(dst + used, arg_ptr(a, j), len);
        }
    }
    return used;
}

/* The ring (fe->admin->argring, FE_ARGRING_SIZE bytes): each request whose reply
 * comes later appends its encoded arguments; its reply entry notes where.
 * Nothing is freed: a record is good as long as less than the ring's size
 * (256 KiB, small enough to stay in cache) was written after it, which
 * holds unless thousands of requests are in flight at once; a slow entry
 * whose arguments were overwritten is logged with the command's name
 * alone. Writes are sequential, so the copy costs a few cache lines that
 * are hot anyway. */
void fe_slowlog_snapshot(fe_conn_t *c, fe_reply_t *r, const char *buf)
{
    fe_t *fe = c->fe;
    uint64_t off = fe->admin->argring_pos % FE_ARGRING_SIZE;
    if (off + ENCODED_MAX > FE_ARGRING_SIZE) {
        fe->admin->argring_pos += FE_ARGRING_SIZE - off; /* records never straddle the end */
        off = 0;
    }
    args_view_t a = {&c->cmd, buf, NULL};
    size_t len = encode_args(fe->admin->argring + off, &a);
    fe_note_set_snap(r->note, fe->admin->argring_pos, (uint32_t)len);
    fe->admin->argring_pos += len;
}

static void add_entry(fe_conn_t *c, uint64_t usec, const char *enc, size_t enc_len)
{
    fe_t *fe = c->fe;
    shm_slowlog_t *sl = &fe_shm(fe->shm)->slowlog;
    int64_t maxlen = atomic_load(&fe_shm(fe->shm)->config.slowlog_max_len);
    if (maxlen <= 0 || enc_len < 4) return;
    uint32_t argc;
    memcpy(&argc, enc, 4);
    fe_shm_lock(&sl->lock);
    shm_slowlog_entry_t *e = &sl->e[sl->head % SHM_SLOWLOG_SLOTS];
    e->id = sl->next_id++;
    e->time_s = shm_now_ms() / 1000;
    e->duration_us = (int64_t)usec;
    e->argc = argc;
    e->args_len = (uint32_t)(enc_len - 4 <= SHM_SLOWLOG_ARGBYTES ? enc_len - 4 : 0);
    memcpy(e->args, enc + 4, e->args_len);
    snprintf(e->addr, sizeof(e->addr), "%s", c->addr);
    snprintf(e->name, sizeof(e->name), "%s", c->admin->name ? c->admin->name : "");
    sl->head = (sl->head + 1) % SHM_SLOWLOG_SLOTS;
    if (sl->count < SHM_SLOWLOG_SLOTS) sl->count++;
    /* A shorter slowlog-max-len drops the oldest for good, as in Redis. */
    if ((int64_t)sl->count > maxlen) sl->count = (uint32_t)maxlen;
    fe_shm_unlock(&sl->lock);
}

void fe_slowlog_add(fe_conn_t *c, uint64_t usec, const char *buf)
{
    char enc[ENCODED_MAX];
    args_view_t a = {&c->cmd, buf, NULL};
    add_entry(c, usec, enc, encode_args(enc, &a));
}

void fe_slowlog_add_snapshot(fe_conn_t *c, uint64_t usec, const fe_reply_t *r, unsigned idx)
{
    fe_t *fe = c->fe;
    uint64_t pos = r->note[1];
    uint32_t len = fe_note_snap_len(r->note);
    if (fe->admin->argring_pos - pos <= FE_ARGRING_SIZE - len) {
        add_entry(c, usec, fe->admin->argring + pos % FE_ARGRING_SIZE, len);
        return;
    }
    /* Overwritten (see above): the command's name stands for them. */
    char enc[96];
    const char *name = fe_cmd_index_name(idx);
    size_t n = strlen(name ? name : "?");
    uint32_t one = 1;
    memcpy(enc, &one, 4);
    add_entry(c, usec, enc, 4 + put_arg(enc + 4, name ? name : "?", n < 80 ? n : 80));
}

/* ---- SLOWLOG ---- */

static int64_t effective_len(fe_t *fe, const shm_slowlog_t *sl)
{
    int64_t maxlen = atomic_load(&fe_shm(fe->shm)->config.slowlog_max_len);
    int64_t n = sl->count;
    return n < maxlen ? n : maxlen < 0 ? 0 : maxlen;
}

static void slowlog_get(fe_conn_t *c, long long count, buf_t *out)
{
    fe_t *fe = c->fe;
    shm_slowlog_t *sl = &fe_shm(fe->shm)->slowlog;
    buf_t body;
    buf_init(&body);
    fe_shm_lock(&sl->lock);
    int64_t n = effective_len(fe, sl);
    if (count >= 0 && count < n) n = count;
    for (int64_t i = 0; i < n; i++) {
        const shm_slowlog_entry_t *e =
            &sl->e[(sl->head + SHM_SLOWLOG_SLOTS - 1 - (uint32_t)i) % SHM_SLOWLOG_SLOTS];
        resp_array(&body, 6);
        resp_integer(&body, (long long)e->id);
        resp_integer(&body, e->time_s);
        resp_integer(&body, e->duration_us);
        /* Lengths were written by a frontend that may have died mid-entry:
         * never read past the entry. */
        uint32_t argc = e->argc <= SLOW_MAX_ARGC ? e->argc : 0;
        size_t off = 0, limit = e->args_len <= SHM_SLOWLOG_ARGBYTES ? e->args_len : 0;
        uint32_t shown = 0;
        buf_t args;
        buf_init(&args);
        for (; shown < argc && off + 4 <= limit; shown++) {
            uint32_t len;
            memcpy(&len, e->args + off, 4);
            if (len > limit - off - 4) break;
            resp_bulk(&args, e->args + off + 4, len);
            off += 4 + len;
        }
        resp_array(&body, shown);
        buf_append(&body, args.data, args.len);
        buf_free(&args);
        char addr[sizeof(e->addr)], name[sizeof(e->name)];
        memcpy(addr, e->addr, sizeof(addr));
        memcpy(name, e->name, sizeof(name));
        addr[sizeof(addr) - 1] = name[sizeof(name) - 1] = '\0';
        resp_bulk_cstr(&body, addr);
        resp_bulk_cstr(&body, name);
    }
    fe_shm_unlock(&sl->lock);
    resp_array(out, n);
    buf_append(out, body.data, body.len);
    buf_free(&body);
}

static const char *const slowlog_help[] = {
    "SLOWLOG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "GET [<count>]",
    "    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
    "    Entries are made of:",
    "    id, timestamp, time in microseconds, arguments array, client IP and port,",
    "    client name",
    "LEN",
    "    Return the length of the slowlog.",
    "RESET",
    "    Reset the slowlog.",
    "HELP",
    "    Prints this help.",
    NULL,
};

void fe_cmd_slowlog(fe_conn_t *c, int argc, const char **argv, const uint32_t *lens, buf_t *out)
{
    if (fe_subcmd_arity_check(cmd_by_id(CMD_SLOWLOG), argc, argv, lens, out) != 0) return;
    const char *sub = argv[1];
    size_t sl = lens[1];
    shm_slowlog_t *log = &fe_shm(c->fe->shm)->slowlog;
    if (fe_word_eq(sub, sl, "get") && argc <= 3) {
        long long count = 10;
        if (argc == 3 && (str_to_ll(argv[2], lens[2], &count) != 0 || count < -1)) {
            resp_error(out, "ERR count should be greater than or equal to -1");
            return;
        }
        slowlog_get(c, count, out);
    } else if (fe_word_eq(sub, sl, "len")) {
        fe_shm_lock(&log->lock);
        int64_t n = effective_len(c->fe, log);
        fe_shm_unlock(&log->lock);
        resp_integer(out, n);
    } else if (fe_word_eq(sub, sl, "reset")) {
        fe_shm_lock(&log->lock);
        log->count = 0;
        fe_shm_unlock(&log->lock);
        resp_simple(out, "OK");
    } else if (fe_word_eq(sub, sl, "help")) {
        fe_reply_help(out, slowlog_help);
    } else if (fe_word_eq(sub, sl, "get")) {
        char msg[200];
        snprintf(
            msg, sizeof(msg),
            "ERR unknown subcommand or wrong number of arguments for '%.*s'. Try SLOWLOG HELP.",
            (int)sl, sub);
        resp_error(out, msg);
    } else {
        fe_reply_unknown_subcmd(out, "SLOWLOG", sub, sl);
    }
}
