/*
 * monitor.c - MONITOR, as Redis 7.0: each command a client runs, on any
 * frontend, goes to every MONITOR client as one line,
 *
 *   +<unix seconds>.<microseconds> [<db> <ip:port>] "arg" "arg" ...\r\n
 *
 * each argument quoted and escaped as Redis' sdscatrepr does. What Redis
 * leaves out is left out: admin commands (CONFIG, DEBUG, MONITOR ...), the
 * commands refused before they run (unknown, arity, ACL), the commands
 * queued inside MULTI until EXEC runs them (then EXEC itself, after them);
 * AUTH's arguments and HELLO's AUTH pair read "(redacted)".
 *
 * Across frontends: the shared segment counts the MONITOR clients of each
 * frontend and their sum (common/pubsub.h); a command reads the sum, and
 * only when it is not 0 makes its line, hands it to this frontend's own
 * MONITOR clients and, when other frontends have some, puts it in the
 * Pub/Sub ring as a PS_MONITOR message, which their poll hands to theirs
 * (fe_monitor_deliver). A line is made when the command is dispatched (a
 * write before it is durable, as Redis feeds it before its fsync).
 *
 * A MONITOR client can still PING, QUIT or RESET (which ends MONITOR);
 * a command that reads or writes keys gets Redis' error for replicas.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "frontend/admin/admin.h"
#include "frontend/cmd/cmd.h"
#include "frontend/core/core.h"
#include "pubsub.h"
#include "shm.h"

typedef struct fe_monitor {
    fe_conn_t **conns;
    uint32_t n, cap;
    buf_t line;
    /* A MONITOR client's own commands' lines go after their replies, as
     * Redis feeds a command once it ran: held here until the command is
     * done (fe_monitor_command_done). */
    fe_conn_t *self;
    buf_t self_lines;
} fe_monitor_t;

static fe_monitor_t *state(fe_t *fe)
{
    if (!fe->admin->monitor) {
        fe->admin->monitor = calloc(1, sizeof(fe_monitor_t));
        if (!fe->admin->monitor) abort();
        buf_init(&fe->admin->monitor->line);
        buf_init(&fe->admin->monitor->self_lines);
    }
    return fe->admin->monitor;
}

void fe_cmd_monitor(fe_conn_t *c, int argc, const char **argv, const uint32_t *lens, buf_t *out)
{
    (void)argc, (void)argv, (void)lens;
    if (c->admin->monitor) return; /* already: Redis answers nothing */
    fe_monitor_t *m = state(c->fe);
    if (m->n == m->cap) {
        m->cap = m->cap ? m->cap * 2 : 4;
        m->conns = realloc(m->conns, m->cap * sizeof(*m->conns));
        if (!m->conns) abort();
    }
    m->conns[m->n++] = c;
    c->admin->monitor = 1;
    ps_monitors_add(shm_pubsub(c->fe->shm), c->fe->slot, 1);
    fe_client_flags_sync(c); /* CLIENT LIST's O */
    resp_simple(out, "OK");
}

void fe_monitor_remove(fe_conn_t *c)
{
    if (!c->admin->monitor) return;
    fe_monitor_t *m = state(c->fe);
    for (uint32_t i = 0; i < m->n; i++)
        if (m->conns[i] == c) {
            memmove(m->conns + i, m->conns + i + 1, (m->n - i - 1) * sizeof(*m->conns));
            m->n--;
            break;
        }
    c->admin->monitor = 0;
    if (m->self == c) m->self = NULL;
    ps_monitors_add(shm_pubsub(c->fe->shm), c->fe->slot, -1);
}

int fe_monitor_refused(fe_conn_t *c, const cmd_desc_t *d, buf_t *err)
{
    if (!c->admin->monitor || !(d->flags & (CMDF_WRITE | CMDF_READONLY))) return 0;
    resp_error(err, "ERR Replica can't interact with the keyspace");
    return -1;
}

/* Hand a line to this frontend's MONITOR clients, but `self`'s later. */
static void deliver(fe_t *fe, const char *line, size_t len, fe_conn_t *self)
{
    fe_monitor_t *m = fe->admin->monitor;
    for (uint32_t i = 0; m && i < m->n; i++) {
        if (m->conns[i] != self) {
            fe_conn_push(m->conns[i], line, len);
            continue;
        }
        if (m->self != self) m->self_lines.len = 0;
        m->self = self;
        buf_append(&m->self_lines, line, len);
    }
}

void fe_monitor_deliver(fe_t *fe, const char *line, size_t len)
{
    deliver(fe, line, len, NULL);
}

void fe_monitor_command_done(fe_conn_t *c)
{
    fe_monitor_t *m = c->fe->admin->monitor;
    if (!m || m->self != c) return;
    if (c->admin->monitor) fe_conn_push(c, m->self_lines.data, m->self_lines.len);
    m->self = NULL; /* RESET ended MONITOR: its own line is not its */
    m->self_lines.len = 0;
}

/* An argument as Redis' sdscatrepr writes it: quoted, \\ \" \n \r \t \a
 * \b escaped, other bytes outside printable ASCII as \xhh. */
static void add_repr(buf_t *b, const char *p, size_t n)
{
    buf_append(b, "\"", 1);
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)p[i];
        const char *esc = NULL;
        switch (ch) {
        case '\\':
            esc = "\\\\";
            break;
        case '"':
            esc = "\\\"";
            break;
        case '\n':
            esc = "\\n";
            break;
        case '\r':
            esc = "\\r";
            break;
        case '\t':
            esc = "\\t";
            break;
        case '\a':
            esc = "\\a";
            break;
        case '\b':
            esc = "\\b";
            break;
        default:
            break;
        }
        if (esc) {
            buf_append(b, esc, 2);
        } else if (ch >= 0x20 && ch < 0x7f) {
            buf_append(b, (const char *)&ch, 1);
        } else {
            char hex[5];
            snprintf(hex, sizeof(hex), "\\x%02x", ch);
            buf_append(b, hex, 4);
        }
    }
    buf_append(b, "\"", 1);
}

void fe_monitor_feed(fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a)
{
    if (!(d->flags & CMDF_ADMIN)) fe_monitor_line(c, a);
}

void fe_monitor_line(fe_conn_t *c, const fe_args_t *a)
{
    fe_t *fe = c->fe;
    ps_shm_t *ps = shm_pubsub(fe->shm);
    fe_monitor_t *m = state(fe);
    buf_t *b = &m->line;
    b->len = 0;
    struct timeval tv;
    gettimeofday(&tv, NULL);
    buf_appendf(b, "+%ld.%06ld [%d %s] ", (long)tv.tv_sec, (long)tv.tv_usec, c->db, c->addr);
    for (int i = 0; i < a->argc; i++) {
        if (i) buf_append(b, " ", 1);
        if (fe_args_redacted(a, i)) /* AUTH's, HELLO's credentials */
            add_repr(b, "(redacted)", 10);
        else
            add_repr(b, a->argv[i], a->lens[i]);
    }
    buf_append(b, "\r\n", 2);
    deliver(fe, b->data, b->len, c);
    uint32_t here = atomic_load_explicit(&ps->monitors[fe->slot], memory_order_relaxed);
    if (atomic_load_explicit(&ps->monitors_total, memory_order_relaxed) > here &&
        ps_publish(ps, PS_MONITOR, (unsigned)fe->slot, "", 0, b->data, b->len))
        shm_wake_pubsub(fe->shm, fe->slot);
}
