/*
 * client.c - connections as clients see them: CLIENT (ID, SETNAME,
 * GETNAME, LIST, INFO, KILL, SETINFO, REPLY, NO-EVICT, HELP), HELLO, RESET
 * and protected mode. Run by the frontends. CLIENT LIST and KILL work on
 * every frontend's clients through the registry (client-registry.c says
 * how it is kept).
 *
 * Replies and errors follow Redis 7.0.15; CLIENT LIST lines carry its
 * fields, then lib-name= lib-ver= as Redis 7.2 adds them (SETINFO is 7.2's).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "frontend/cmd/cmd.h"
#include "frontend/core/core.h"
#include "frontend/admin/admin.h"
#include "strutil.h"

/* A consistent copy of another frontend's live entry; 0 when the entry is
 * free, stale (its frontend died) or ours. */
static int entry_read(fe_t *fe, uint32_t i, shm_client_t *out)
{
    shm_client_t *e = &fe_shm(fe->shm)->clients[i];
    for (int tries = 0; tries < 100; tries++) {
        uint32_t s1 = atomic_load_explicit(&e->seq, memory_order_acquire);
        uint32_t owner = atomic_load(&e->owner);
        if (!owner || owner > fe->shm->nfrontends || owner == (uint32_t)fe->slot + 1) return 0;
        shm_frontend_t *f = &fe->shm->fe[owner - 1];
        if (!atomic_load(&f->pid) || atomic_load(&e->incarnation) != atomic_load(&f->incarnation))
            return 0;
        if (s1 & 1) continue;
        memcpy((void *)out, (const void *)e, sizeof(*out));
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&e->seq, memory_order_relaxed) != s1) continue;
        out->addr[sizeof(out->addr) - 1] = out->laddr[sizeof(out->laddr) - 1] = '\0';
        out->user[sizeof(out->user) - 1] = out->name[sizeof(out->name) - 1] = '\0';
        out->lib_name[sizeof(out->lib_name) - 1] = out->lib_ver[sizeof(out->lib_ver) - 1] = '\0';
        return atomic_load(&out->id) != 0;
    }
    return 0;
}

/* ---- CLIENT LIST lines ---- */

#define FE_REPLY_BUF_BYTES (16 * 1024) /* Redis' PROTO_REPLY_CHUNK_BYTES */

static void flags_text(char *out, int multi, int closing, uint32_t flags)
{
    char *p = out;
    if (flags & SHM_CLIENT_F_MONITOR) *p++ = 'O';
    if (multi >= 0) *p++ = 'x';
    if (flags & SHM_CLIENT_F_BLOCKED) *p++ = 'b';
    if (closing) *p++ = 'c';
    if (flags & SHM_CLIENT_F_UNIX) *p++ = 'U';
    if (flags & SHM_CLIENT_F_NO_EVICT) *p++ = 'e';
    if (p == out) *p++ = 'N';
    *p = '\0';
}

static const char *cmd_name(unsigned idx)
{
    const char *n = idx ? fe_cmd_index_name(idx) : NULL;
    return n ? n : "NULL";
}

void fe_client_info_line(fe_conn_t *c, buf_t *out)
{
    int64_t now = shm_now_ms();
    char flags[8];
    int multi = fe_multi_count(c);
    flags_text(flags, multi, c->closing, fe_client_flags(c));
    size_t argv_mem = 0;
    for (int i = 0; i < c->cmd.argc; i++)
        argv_mem += c->cmd.args[i].len;
    /* Redis' obl is what its fixed 16 KiB reply buffer holds and omem
     * what its reply list holds beyond it; the output buffer here is one
     * piece, so its first 16 KiB are told as obl and the rest as omem (an
     * idle client: 0 and 0, as Redis'). */
    size_t qbuf = c->in.len - c->in_off, pending = c->out.len - c->out_off;
    size_t obl = pending < FE_REPLY_BUF_BYTES ? pending : FE_REPLY_BUF_BYTES;
    size_t omem = pending - obl;
    unsigned subs[3];
    fe_pubsub_conn_counts(c, subs);
    buf_appendf(
        out,
        "id=%" PRIu64 " addr=%s laddr=%s fd=%d name=%s age=%" PRId64 " idle=%" PRId64
        " flags=%s db=%d sub=%u psub=%u ssub=%u multi=%d qbuf=%zu qbuf-free=%zu argv-mem=%zu"
        " multi-mem=0 rbs=%zu rbp=%zu obl=%zu oll=%u omem=%zu tot-mem=%zu events=%s%s cmd=%s"
        " user=%s redir=-1 resp=%d lib-name=%s lib-ver=%s\n",
        c->id, c->addr, c->laddr, c->fd, c->admin->name ? c->admin->name : "",
        (now - c->created_ms) / 1000, (now - c->last_active_ms) / 1000, flags, c->db, subs[0],
        subs[1], subs[2], multi, qbuf, c->in.cap - c->in.len, argv_mem, c->in.cap, c->in.cap, obl,
        c->npending, omem, sizeof(*c) + c->in.cap + c->out.cap + argv_mem,
        c->reading_paused ? "" : "r", event_pending(c->ev_write, EV_WRITE, NULL) ? "w" : "",
        cmd_name(c->admin->last_idx), c->admin->user ? c->admin->user : "default", c->proto,
        c->admin->lib_name ? c->admin->lib_name : "", c->admin->lib_ver ? c->admin->lib_ver : "");
}

static void entry_line(const shm_client_t *e, buf_t *out)
{
    int64_t now = shm_now_ms();
    char flags[8];
    int multi = atomic_load(&e->multi);
    flags_text(flags, multi, 0, atomic_load(&e->flags));
    buf_appendf(out,
                "id=%" PRIu64 " addr=%s laddr=%s fd=%d name=%s age=%" PRId64 " idle=%" PRId64
                " flags=%s db=%d sub=0 psub=0 ssub=0 multi=%d qbuf=0 qbuf-free=0 argv-mem=0"
                " multi-mem=0 rbs=0 rbp=0 obl=0 oll=0 omem=0 tot-mem=0 events=r cmd=%s"
                " user=%s redir=-1 resp=%d lib-name=%s lib-ver=%s\n",
                atomic_load(&e->id), e->addr, e->laddr, atomic_load(&e->fd), e->name,
                (now - atomic_load(&e->created_ms)) / 1000,
                (now - atomic_load(&e->last_active_ms)) / 1000, flags, atomic_load(&e->db), multi,
                cmd_name(atomic_load(&e->last_cmd)), e->user, atomic_load(&e->resp), e->lib_name,
                e->lib_ver);
}

/* Every client of the server: ours from their live state, the others'
 * from the registry; sorted by id, as Redis lists them (oldest first). */
typedef struct client_ref {
    uint64_t id;
    fe_conn_t *local;
    uint32_t slot; /* registry index when not local */
} client_ref_t;

static int ref_cmp(const void *a, const void *b)
{
    uint64_t x = ((const client_ref_t *)a)->id, y = ((const client_ref_t *)b)->id;
    return x < y ? -1 : x > y;
}

static client_ref_t *all_clients(fe_t *fe, size_t *n)
{
    size_t cap = fe->nconns + 64, len = 0;
    client_ref_t *v = malloc(cap * sizeof(*v));
    if (!v) abort();
    for (fe_conn_t *c = fe->conns; c; c = c->next) {
        if (c->doomed) continue;
        if (len == cap) {
            cap *= 2;
            v = realloc(v, cap * sizeof(*v));
            if (!v) abort();
        }
        v[len++] = (client_ref_t){c->id, c, 0};
    }
    shm_client_t tmp;
    for (uint32_t i = 0; i < SHM_CLIENT_SLOTS; i++) {
        if (!atomic_load_explicit(&fe_shm(fe->shm)->clients[i].owner, memory_order_relaxed))
            continue;
        if (!entry_read(fe, i, &tmp)) continue;
        if (len == cap) {
            cap *= 2;
            v = realloc(v, cap * sizeof(*v));
            if (!v) abort();
        }
        v[len++] = (client_ref_t){atomic_load(&tmp.id), NULL, i};
    }
    qsort(v, len, sizeof(*v), ref_cmp);
    *n = len;
    return v;
}

/* Fields of a client for KILL's filters. */
typedef struct client_view {
    uint64_t id;
    const char *addr, *laddr, *user;
} client_view_t;

static void view_of(fe_t *fe, const client_ref_t *r, client_view_t *v, shm_client_t *tmp)
{
    if (r->local) {
        v->id = r->local->id;
        v->addr = r->local->addr;
        v->laddr = r->local->laddr;
        v->user = r->local->admin->user ? r->local->admin->user : "default";
    } else {
        if (!entry_read(fe, r->slot, tmp)) memset(tmp, 0, sizeof(*tmp));
        v->id = r->id;
        v->addr = tmp->addr;
        v->laddr = tmp->laddr;
        v->user = tmp->user;
    }
}

static int type_known(const char *s, size_t n, int *normal)
{
    *normal = fe_word_eq(s, n, "normal");
    return *normal || fe_word_eq(s, n, "master") || fe_word_eq(s, n, "replica") ||
           fe_word_eq(s, n, "slave") || fe_word_eq(s, n, "pubsub");
}

static void reply_errf(buf_t *out, const char *fmt, const char *s, size_t n)
{
    char msg[256];
    snprintf(msg, sizeof(msg), fmt, (int)(n > 128 ? 128 : n), s);
    resp_error(out, msg);
}

static void client_list(fe_conn_t *c, int argc, const char **argv, const uint32_t *lens, buf_t *out)
{
    fe_t *fe = c->fe;
    int normal = 1;
    uint64_t *ids = NULL;
    int nids = 0;
    if (argc == 4 && fe_word_eq(argv[2], lens[2], "type")) {
        if (!type_known(argv[3], lens[3], &normal)) {
            reply_errf(out, "ERR Unknown client type '%.*s'", argv[3], lens[3]);
            return;
        }
    } else if (argc > 3 && fe_word_eq(argv[2], lens[2], "id")) {
        ids = malloc((size_t)(argc - 3) * sizeof(*ids));
        if (!ids) abort();
        for (int i = 3; i < argc; i++) {
            long long id;
            if (str_to_ll(argv[i], lens[i], &id) != 0 || id <= 0) {
                free(ids);
                resp_error(out, "ERR Invalid client ID");
                return;
            }
            ids[nids++] = (uint64_t)id;
        }
    } else if (argc != 2) {
        resp_error(out, "ERR syntax error");
        return;
    }
    buf_t text;
    buf_init(&text);
    size_t n;
    client_ref_t *all = normal ? all_clients(fe, &n) : NULL;
    shm_client_t tmp;
    for (size_t i = 0; normal && i < n; i++) {
        if (ids) {
            int want = 0;
            for (int k = 0; k < nids; k++)
                want |= ids[k] == all[i].id;
            if (!want) continue;
        }
        if (all[i].local)
            fe_client_info_line(all[i].local, &text);
        else if (entry_read(fe, all[i].slot, &tmp))
            entry_line(&tmp, &text);
    }
    free(all);
    free(ids);
    resp_verbatim(out, c->proto, "txt", text.data, text.len);
    buf_free(&text);
}

/* Ask for client r to be closed: ours at once, another frontend's by its
 * owner (see the banner). */
static void kill_one(fe_conn_t *self, const client_ref_t *r)
{
    fe_t *fe = self->fe;
    if (r->local) {
        if (r->local == self)
            self->closing = 1; /* after this reply */
        else
            fe_conn_kill(r->local);
        return;
    }
    shm_client_t *e = &fe_shm(fe->shm)->clients[r->slot];
    uint32_t owner = atomic_load(&e->owner);
    if (!owner || owner > fe->shm->nfrontends) return;
    atomic_store(&e->kill_id, r->id);
    atomic_store(&fe_shm(fe->shm)->kill_pending[owner - 1], 1);
    shm_wake(&fe->shm->fe[owner - 1].wake);
}

static void client_kill(fe_conn_t *c, int argc, const char **argv, const uint32_t *lens, buf_t *out)
{
    fe_t *fe = c->fe;
    const char *addr = NULL, *laddr = NULL, *user = NULL;
    size_t addr_n = 0, laddr_n = 0, user_n = 0;
    uint64_t id = 0;
    int skipme = 1, normal = 1, old_style = argc == 3;
    if (old_style) {
        addr = argv[2];
        addr_n = lens[2];
        skipme = 0;
    } else {
        if (argc % 2) {
            resp_error(out, "ERR syntax error");
            return;
        }
        for (int i = 2; i < argc; i += 2) {
            const char *o = argv[i], *v = argv[i + 1];
            size_t on = lens[i], vn = lens[i + 1];
            long long ll;
            if (fe_word_eq(o, on, "id")) {
                if (str_to_ll(v, vn, &ll) != 0 || ll <= 0) {
                    resp_error(out, "ERR client-id should be greater than 0");
                    return;
                }
                id = (uint64_t)ll;
            } else if (fe_word_eq(o, on, "type")) {
                if (!type_known(v, vn, &normal)) {
                    reply_errf(out, "ERR Unknown client type '%.*s'", v, vn);
                    return;
                }
            } else if (fe_word_eq(o, on, "addr")) {
                addr = v;
                addr_n = vn;
            } else if (fe_word_eq(o, on, "laddr")) {
                laddr = v;
                laddr_n = vn;
            } else if (fe_word_eq(o, on, "user")) {
                fe_acl_refresh(fe);
                if (!acl_find(fe->admin->acl, v, vn)) {
                    reply_errf(out, "ERR No such user '%.*s'", v, vn);
                    return;
                }
                user = v;
                user_n = vn;
            } else if (fe_word_eq(o, on, "skipme")) {
                if (fe_word_eq(v, vn, "yes"))
                    skipme = 1;
                else if (fe_word_eq(v, vn, "no"))
                    skipme = 0;
                else {
                    resp_error(out, "ERR syntax error");
                    return;
                }
            } else {
                resp_error(out, "ERR syntax error");
                return;
            }
        }
    }
    size_t n;
    client_ref_t *all = normal ? all_clients(fe, &n) : NULL;
    long long killed = 0;
    shm_client_t tmp;
    for (size_t i = 0; normal && i < n; i++) {
        client_view_t v;
        view_of(fe, &all[i], &v, &tmp);
        if (!v.id) continue;
        if (id && v.id != id) continue;
        if (addr && (strlen(v.addr) != addr_n || memcmp(v.addr, addr, addr_n))) continue;
        if (laddr && (strlen(v.laddr) != laddr_n || memcmp(v.laddr, laddr, laddr_n))) continue;
        if (user && (strlen(v.user) != user_n || memcmp(v.user, user, user_n))) continue;
        if (skipme && all[i].local == c) continue;
        kill_one(c, &all[i]);
        killed++;
    }
    free(all);
    if (old_style) {
        if (killed)
            resp_simple(out, "OK");
        else
            resp_error(out, "ERR No such client");
    } else {
        resp_integer(out, killed);
    }
}

/* Redis' rule for names (and SETINFO values): printable, no spaces. */
static int name_ok(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] < '!' || s[i] > '~') return 0;
    return 1;
}

static int set_name(fe_conn_t *c, const char *s, size_t n, buf_t *out)
{
    if (!name_ok(s, n)) {
        resp_error(out, "ERR Client names cannot contain spaces, newlines or special characters.");
        return -1;
    }
    free(c->admin->name);
    c->admin->name = n ? acl_strndup(s, n) : NULL;
    fe_client_sync(c);
    return 0;
}

static const char *const client_help[] = {
    "CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "GETNAME",
    "    Return the name of the current connection.",
    "ID",
    "    Return the ID of the current connection.",
    "INFO",
    "    Return information about the current client connection.",
    "KILL <ip:port>",
    "    Kill connection made from <ip:port>.",
    "KILL <option> <value> [<option> <value> [...]]",
    "    Kill connections. Options are:",
    "    * ADDR (<ip:port>|<unixsocket>:0)",
    "      Kill connections made from the specified address",
    "    * LADDR (<ip:port>|<unixsocket>:0)",
    "      Kill connections made to specified local address",
    "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
    "      Kill connections by type.",
    "    * USER <username>",
    "      Kill connections authenticated by <username>.",
    "    * SKIPME (YES|NO)",
    "      Skip killing current connection (default: yes).",
    "LIST [options ...]",
    "    Return information about client connections. Options:",
    "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
    "      Return clients of specified type.",
    "REPLY (ON|OFF|SKIP)",
    "    Control the replies sent to the current connection.",
    "SETNAME <name>",
    "    Assign the name <name> to the current connection.",
    "SETINFO <option> <value>",
    "    Set client meta attr. Options are:",
    "    * LIB-NAME: the client lib name.",
    "    * LIB-VER: the client lib version.",
    "NO-EVICT (ON|OFF)",
    "    Protect current client connection from eviction.",
    "HELP",
    "    Prints this help.",
    NULL,
};

/* Is client id blocked (BLPOP ...), on this frontend or another? */
static int client_blocked(fe_t *fe, uint64_t id)
{
    for (fe_conn_t *o = fe->conns; o; o = o->next)
        if (o->id == id) return o->blocking && !o->doomed;
    shm_client_t tmp;
    for (uint32_t i = 0; i < SHM_CLIENT_SLOTS; i++) {
        if (!atomic_load_explicit(&fe_shm(fe->shm)->clients[i].owner, memory_order_relaxed))
            continue;
        if (entry_read(fe, i, &tmp) && atomic_load(&tmp.id) == id)
            return (atomic_load(&tmp.flags) & SHM_CLIENT_F_BLOCKED) != 0;
    }
    return 0;
}

/* CLIENT UNBLOCK id [TIMEOUT|ERROR]: a client not blocked is 0 at once;
 * a blocked one is unblocked by a record (D36), whose store reply says
 * whether it still waited when the record applied (it may have been
 * served just before). */
static void client_unblock(fe_conn_t *c, int argc, const char **argv, const uint32_t *lens,
                           buf_t *out)
{
    long long id;
    if (str_to_ll(argv[2], lens[2], &id)) {
        resp_error(out, "ERR value is not an integer or out of range");
        return;
    }
    int error = 0;
    if (argc == 4 && fe_word_eq(argv[3], lens[3], "error"))
        error = 1;
    else if (argc != 3 && !(argc == 4 && fe_word_eq(argv[3], lens[3], "timeout"))) {
        resp_error(out, "ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR");
        return;
    }
    if (!client_blocked(c->fe, (uint64_t)id)) {
        resp_integer(out, 0);
        return;
    }
    int rc = fe_block_unblock(c, (uint64_t)id, error);
    if (rc == -EAGAIN)
        c->local_again = 1;
    else if (rc == 0)
        c->local_submitted = 1;
    else
        resp_error(out, "ERR CLIENT UNBLOCK could not be written to the log");
}

void fe_cmd_client(fe_conn_t *c, int argc, const char **argv, const uint32_t *lens, buf_t *out)
{
    if (fe_subcmd_arity_check(cmd_by_id(CMD_CLIENT), argc, argv, lens, out) != 0) return;
    const char *sub = argv[1];
    size_t sl = lens[1];
    if (fe_word_eq(sub, sl, "id")) {
        resp_integer(out, (long long)c->id);
    } else if (fe_word_eq(sub, sl, "getname")) {
        if (c->admin->name)
            resp_bulk_cstr(out, c->admin->name);
        else
            resp_null3(out, c->proto);
    } else if (fe_word_eq(sub, sl, "setname")) {
        if (set_name(c, argv[2], lens[2], out) == 0) resp_simple(out, "OK");
    } else if (fe_word_eq(sub, sl, "setinfo")) {
        char **dst = fe_word_eq(argv[2], lens[2], "lib-name")  ? &c->admin->lib_name
                     : fe_word_eq(argv[2], lens[2], "lib-ver") ? &c->admin->lib_ver
                                                               : NULL;
        if (argc != 4) {
            resp_error(out, "ERR wrong number of arguments for 'client|setinfo' command");
        } else if (!dst) {
            reply_errf(out, "ERR Unrecognized option '%.*s'", argv[2], lens[2]);
        } else if (!name_ok(argv[3], lens[3])) {
            char msg[200];
            snprintf(msg, sizeof(msg),
                     "ERR %.*s cannot contain spaces, newlines or special characters.",
                     (int)(lens[2] > 64 ? 64 : lens[2]), argv[2]);
            resp_error(out, msg);
        } else {
            free(*dst);
            *dst = lens[3] ? acl_strndup(argv[3], lens[3]) : NULL;
            fe_client_sync(c);
            resp_simple(out, "OK");
        }
    } else if (fe_word_eq(sub, sl, "list")) {
        client_list(c, argc, argv, lens, out);
    } else if (fe_word_eq(sub, sl, "info")) {
        buf_t line;
        buf_init(&line);
        fe_client_info_line(c, &line);
        resp_verbatim(out, c->proto, "txt", line.data, line.len);
        buf_free(&line);
    } else if (fe_word_eq(sub, sl, "kill")) {
        client_kill(c, argc, argv, lens, out);
    } else if (fe_word_eq(sub, sl, "unblock")) {
        client_unblock(c, argc, argv, lens, out);
    } else if (fe_word_eq(sub, sl, "reply")) {
        if (fe_word_eq(argv[2], lens[2], "on")) {
            c->admin->reply_off = c->admin->reply_skip = 0;
            c->reply_suppress = 0;
            resp_simple(out, "OK");
        } else if (fe_word_eq(argv[2], lens[2], "off")) {
            c->admin->reply_off = 1;
            c->reply_suppress = 1;
            resp_simple(out, "OK"); /* dropped */
        } else if (fe_word_eq(argv[2], lens[2], "skip")) {
            if (!c->admin->reply_off) c->admin->reply_skip = 1;
            c->reply_suppress = 1;
            resp_simple(out, "OK"); /* dropped */
        } else {
            resp_error(out, "ERR syntax error");
        }
    } else if (fe_word_eq(sub, sl, "no-evict")) {
        if (fe_word_eq(argv[2], lens[2], "on"))
            c->admin->no_evict = 1;
        else if (fe_word_eq(argv[2], lens[2], "off"))
            c->admin->no_evict = 0;
        else {
            resp_error(out, "ERR syntax error");
            return;
        }
        fe_client_sync(c);
        resp_simple(out, "OK");
    } else if (fe_word_eq(sub, sl, "help")) {
        fe_reply_help(out, client_help);
    } else {
        fe_reply_unknown_subcmd(out, "CLIENT", sub, sl);
    }
}

/* ---- HELLO, RESET ---- */

void fe_cmd_hello(fe_conn_t *c, int argc, const char **argv, const uint32_t *lens, buf_t *out)
{
    long long ver = 0;
    if (argc >= 2) {
        if (str_to_ll(argv[1], lens[1], &ver) != 0) {
            resp_error(out, "ERR Protocol version is not an integer or out of range");
            return;
        }
        if (ver < 2 || ver > 3) {
            resp_error(out, "NOPROTO unsupported protocol version");
            return;
        }
    }
    int user_arg = 0, name_arg = 0;
    for (int j = 2; j < argc; j++) {
        int more = argc - 1 - j;
        if (fe_word_eq(argv[j], lens[j], "auth") && more >= 2) {
            user_arg = j + 1;
            j += 2;
        } else if (fe_word_eq(argv[j], lens[j], "setname") && more >= 1) {
            name_arg = j + 1;
            j++;
        } else {
            reply_errf(out, "ERR Syntax error in HELLO option '%.*s'", argv[j], lens[j]);
            return;
        }
    }
    if (user_arg && fe_acl_auth(c, argv[user_arg], lens[user_arg], argv[user_arg + 1],
                                lens[user_arg + 1]) != 0) {
        resp_error(out, "WRONGPASS invalid username-password pair or user is disabled.");
        return;
    }
    if (!c->admin->authenticated) {
        resp_error(out, "NOAUTH HELLO must be called with the client already authenticated, "
                        "otherwise the HELLO AUTH <user> <pass> option can be used to "
                        "authenticate the client and select the RESP protocol version at the "
                        "same time");
        return;
    }
    if (name_arg && set_name(c, argv[name_arg], lens[name_arg], out) != 0) return;
    if (ver) c->proto = (int)ver;
    fe_client_sync(c);
    resp_map(out, c->proto, 7);
    resp_bulk_cstr(out, "server");
    resp_bulk_cstr(out, "redis");
    resp_bulk_cstr(out, "version");
    resp_bulk_cstr(out, FE_REDIS_VERSION);
    resp_bulk_cstr(out, "proto");
    resp_integer(out, c->proto);
    resp_bulk_cstr(out, "id");
    resp_integer(out, (long long)c->id);
    resp_bulk_cstr(out, "mode");
    resp_bulk_cstr(out, "standalone");
    resp_bulk_cstr(out, "role");
    resp_bulk_cstr(out, "master");
    resp_bulk_cstr(out, "modules");
    resp_array(out, 0);
}

void fe_cmd_reset(fe_conn_t *c, buf_t *out)
{
    fe_multi_clear(c);
    fe_pubsub_reset(c);
    fe_monitor_remove(c);
    c->db = 0;
    c->proto = 2;
    c->admin->reply_off = c->admin->reply_skip = c->reply_suppress = 0;
    c->admin->no_evict = 0;
    free(c->admin->name);
    c->admin->name = NULL;
    free(c->admin->user);
    c->admin->user = NULL;
    /* Back to the default user, authenticated only if it needs no password. */
    fe_acl_refresh(c->fe);
    c->admin->authenticated = fe_acl_default_auth(c->fe);
    c->admin->acl_gen = 0;
    fe_client_sync(c);
    resp_simple(out, "RESET");
}

/* RESET as a LOCAL command (its registry row's handler). */
void fe_local_reset(fe_conn_t *c, int argc, const char **argv, const uint32_t *lens, buf_t *out)
{
    fe_cmd_reset(c, out);
}

/* ---- protected mode ---- */

const char FE_DENIED_MSG[] =
    "-DENIED Redis is running in protected mode because protected mode is enabled and no "
    "password is set for the default user. In this mode connections are only accepted from the "
    "loopback interface. If you want to connect from external computers to Redis you may adopt "
    "one of the following solutions: 1) Just disable protected mode sending the command 'CONFIG "
    "SET protected-mode no' from the loopback interface by connecting to Redis from the same host "
    "the server is running, however MAKE SURE Redis is not publicly accessible from internet if "
    "you do so. Use CONFIG REWRITE to make this change permanent. 2) Alternatively you can just "
    "disable the protected mode by editing the Redis configuration file, and setting the "
    "protected mode option to 'no', and then restarting the server. 3) If you started the server "
    "manually just for testing, restart it with the '--protected-mode no' option. 4) Setup a an "
    "authentication password for the default user. NOTE: You only need to do one of the above "
    "things in order for the server to start accepting connections from the outside.\r\n";

int fe_protected_refuse(fe_t *fe, const struct sockaddr *sa)
{
    if (!fe->admin->protected_mode) return 0;
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
        if ((ntohl(in->sin_addr.s_addr) >> 24) == 127 &&
            in->sin_addr.s_addr != fe->admin->test_remote_addr)
            return 0;
    } else if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
        if (IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr)) return 0;
        /* 127.x.y.z reaching a dual-stack socket: loopback too. */
        if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr) && in6->sin6_addr.s6_addr[12] == 127) return 0;
    } else {
        return 0; /* the unix socket */
    }
    return fe_acl_default_nopass(fe);
}
