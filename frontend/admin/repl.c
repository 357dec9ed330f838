/*
 * repl.c - the replication commands a frontend answers itself (D33):
 * ROLE, WAIT, REPLICAOF/SLAVEOF, REPLCONF (the replica's handshake, whose
 * connection is then handed to the replication process, repl/) and INFO
 * replication, in Redis 7.0's reply shapes, so that tools written for
 * Redis (Sentinel's probes, client libraries' WAIT) read them unchanged.
 *
 * Offsets are LSNs: a leader's replication offset is its durable LSN, the
 * end of the part of its log that it has made durable and ships; a
 * replica's is its own durable LSN (what it acks). The state read here is
 * shm's repl part (common/repl-shm.h), written by the replication process.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include <event2/event.h>

#include "frontend/admin/admin.h"
#include "frontend/core/core.h"
#include "log.h"
#include "resp.h"
#include "strutil.h"

/* This server's replication offset: everything below it is durable. */
static uint64_t repl_offset(const shm_t *shm)
{
    return atomic_load_explicit(&shm->durable_lsn, memory_order_acquire);
}

static int is_replica(const shm_t *shm)
{
    return atomic_load(&shm->repl.is_replica) != 0;
}

/* The leader this replica follows, copied out of shm. */
/* INFO lists a replica that streams or gets a full copy (Redis' slaveN). */
static int slave_listed(const repl_replica_t *s)
{
    uint32_t copying = atomic_load(&s->copying);
    return atomic_load(&s->online) || copying == REPL_COPY_WAIT || copying == REPL_COPY_SEND;
}

static void leader_of(const shm_t *shm, char host[REPL_HOST_MAX], unsigned *port)
{
    memcpy(host, shm->repl.master_host, REPL_HOST_MAX);
    host[REPL_HOST_MAX - 1] = 0;
    *port = atomic_load(&shm->repl.master_port);
}

/* Redis' names for a replica's link state (ROLE). */
static const char *link_state(const shm_t *shm)
{
    switch (atomic_load(&shm->repl.link)) {
    case REPL_LINK_UP:
        return "connected";
    case REPL_LINK_CONNECTING:
        return "connecting";
    default:
        return "connect";
    }
}

void fe_cmd_role(fe_conn_t *c, int argc, const char **argv, const uint32_t *lens, buf_t *out)
{
    (void)argc, (void)argv, (void)lens;
    shm_t *shm = c->fe->shm;
    if (is_replica(shm)) {
        char host[REPL_HOST_MAX];
        unsigned port;
        leader_of(shm, host, &port);
        resp_array(out, 5);
        resp_bulk_cstr(out, "slave");
        resp_bulk_cstr(out, host);
        resp_integer(out, port);
        resp_bulk_cstr(out, link_state(shm));
        resp_integer(out, (long long)repl_offset(shm));
        return;
    }
    int n = 0;
    for (int i = 0; i < REPL_MAX_REPLICAS; i++)
        n += atomic_load(&shm->repl.replicas[i].online) != 0;
    resp_array(out, 3);
    resp_bulk_cstr(out, "master");
    resp_integer(out, (long long)repl_offset(shm));
    resp_array(out, n); /* replicas: [ip, port, offset] each, as strings */
    for (int i = 0; i < REPL_MAX_REPLICAS && n > 0; i++) {
        const repl_replica_t *r = &shm->repl.replicas[i];
        if (!atomic_load(&r->online)) continue;
        char port[16], off[24];
        snprintf(port, sizeof(port), "%u", r->port);
        snprintf(off, sizeof(off), "%" PRIu64, atomic_load(&r->acked_lsn));
        resp_array(out, 3);
        resp_bulk_cstr(out, r->ip);
        resp_bulk_cstr(out, port);
        resp_bulk_cstr(out, off);
        n--;
    }
}

/* Replicas whose acked (durable) LSN has reached lsn. */
static int replicas_at(const shm_t *shm, uint64_t lsn)
{
    int n = 0;
    for (int i = 0; i < REPL_MAX_REPLICAS; i++) {
        const repl_replica_t *r = &shm->repl.replicas[i];
        n += atomic_load(&r->online) && atomic_load(&r->acked_lsn) >= lsn;
    }
    return n;
}

/* A WAIT or WAITAOF whose reply is held (FE_KIND_HELD) until `n`
 * replicas acked `lsn` (and, WAITAOF, this server's durable LSN passed it
 * when `nlocal`) or its timer fires; in the frontend's list fe->admin->waits.
 *
 * It starts (counts, and its timeout runs) once every earlier reply of its
 * connection is ready, as Redis runs a pipeline's next command only once
 * the one before it is done: here a write is done once durable, and a
 * WAIT once answered. So "SET, WAITAOF 1 0 0" finds the SET fsynced, and
 * "WAITAOF 1 1 0, WAITAOF 1 2 100" gives the second its 100 ms after the
 * first's answer, not beside it. */
typedef struct fe_repl_wait {
    struct fe_repl_wait *next;
    fe_t *fe;
    fe_reply_t *r;
    uint64_t lsn;
    long long n;
    int aof;             /* WAITAOF: reply [local, replicas] */
    long long nlocal;    /* WAITAOF's numlocal (0 or 1) */
    long long timeout;   /* milliseconds; 0: none (WAIT n 0 waits for ever) */
    int started;         /* the replies before it are ready */
    struct event *timer; /* its timeout, once started */
} fe_repl_wait_t;

/* WAITAOF's local count: 1 once this server's durable LSN passed lsn.
 * Every write here is fsynced before its ack, so it is the durable LSN
 * that answers Redis' "fsynced to the local AOF" (D44). */
static int local_at(const shm_t *shm, uint64_t lsn)
{
    return repl_offset(shm) >= lsn;
}

static int wait_done(const shm_t *shm, const fe_repl_wait_t *w)
{
    return replicas_at(shm, w->lsn) >= w->n && (!w->aof || local_at(shm, w->lsn) >= w->nlocal);
}

/* The reply of w (WAIT's count, WAITAOF's pair) as the counts are now. */
static int wait_reply(const shm_t *shm, int aof, uint64_t lsn, char *reply, size_t n)
{
    if (aof)
        return snprintf(reply, n, "*2\r\n:%d\r\n:%d\r\n", local_at(shm, lsn),
                        replicas_at(shm, lsn));
    return snprintf(reply, n, ":%d\r\n", replicas_at(shm, lsn));
}

/* Answer w with the counts now and forget it. */
static void wait_answer(fe_repl_wait_t *w)
{
    fe_t *fe = w->fe;
    for (fe_repl_wait_t **pp = &fe->admin->waits; *pp; pp = &(*pp)->next)
        if (*pp == w) {
            *pp = w->next;
            break;
        }
    if (!w->started) fe->admin->waits_unstarted--;
    char reply[48];
    int len = wait_reply(fe->shm, w->aof, w->lsn, reply, sizeof(reply));
    fe_reply_complete(fe, w->r, reply, (size_t)len);
    if (w->timer) event_free(w->timer);
    free(w);
}

static void on_wait_timeout(evutil_socket_t fd, short what, void *arg)
{
    (void)fd, (void)what;
    wait_answer(arg);
}

/* 1 when every entry of c's replies before r (NULL: all of them) is
 * ready. The walk stops at the first that is not, mostly the head. */
static int earlier_ready(const fe_conn_t *c, const fe_reply_t *r)
{
    const fe_reply_t *e = c->head;
    while (e && e != r && (e->state == FE_READY || e->state == FE_PAUSED))
        e = e->next;
    return e == r;
}

/* Start w once the replies before it are ready: its timeout runs from
 * now. Returns 1 when it started. */
static int wait_try_start(fe_repl_wait_t *w)
{
    if (!earlier_ready(w->r->conn, w->r)) return 0;
    fe_t *fe = w->fe;
    w->started = 1;
    fe->admin->waits_unstarted--;
    if (w->timeout > 0) {
        w->timer = evtimer_new(fe->base, on_wait_timeout, w);
        if (!w->timer) abort();
        struct timeval tv = {.tv_sec = (time_t)(w->timeout / 1000),
                             .tv_usec = (suseconds_t)(w->timeout % 1000) * 1000};
        evtimer_add(w->timer, &tv);
    }
    return 1;
}

void fe_repl_waits_check(fe_t *fe)
{
    for (fe_repl_wait_t *w = fe->admin->waits, *next; w; w = next) {
        next = w->next;
        if (!w->r->conn) {
            wait_answer(w); /* the client left: that frees its entry */
            continue;
        }
        if (!w->started && !wait_try_start(w)) continue;
        if (wait_done(fe->shm, w)) wait_answer(w);
    }
}

static void on_waits_ready(evutil_socket_t fd, short what, void *arg)
{
    (void)fd, (void)what;
    fe_repl_waits_check(arg);
}

void fe_repl_waits_reply_ready(fe_t *fe)
{
    /* Not from here: a reply becomes ready inside the core's walks of a
     * connection's replies, which answering one would change. */
    event_active(fe->admin->ev_waits, EV_TIMEOUT, 0);
}

/* Park or answer a parsed WAIT/WAITAOF. Replicas count once their acked
 * (durable) LSN passed this connection's last write. Inside MULTI (as
 * Redis), or with the replies before it ready and the counts enough: the
 * counts now. Else the reply waits in the connection's order, answered by
 * fe_repl_waits_check or its timer. */
static void wait_start(fe_conn_t *c, fe_repl_wait_t proto, long long timeout, buf_t *out)
{
    fe_t *fe = c->fe;
    proto.lsn = c->last_write_end;
    if (c->multi || (earlier_ready(c, NULL) && wait_done(fe->shm, &proto))) {
        char reply[48];
        int len = wait_reply(fe->shm, proto.aof, proto.lsn, reply, sizeof(reply));
        buf_append(out, reply, (size_t)len);
        return;
    }
    if (!fe->admin->ev_waits) {
        fe->admin->ev_waits = event_new(fe->base, -1, 0, on_waits_ready, fe);
        if (!fe->admin->ev_waits) abort();
    }
    fe_repl_wait_t *w = calloc(1, sizeof(*w));
    if (!w) abort();
    *w = proto;
    w->fe = fe;
    w->timeout = timeout;
    w->r = fe_reply_push(c);
    fe_wait_store(fe, w->r, FE_KIND_HELD, fe->next_read_id++);
    w->next = fe->admin->waits;
    fe->admin->waits = w;
    fe->admin->waits_unstarted++;
    wait_try_start(w);
}

/* A timeout in milliseconds, parsed as Redis does; 0 and an error reply
 * in out on bad input. */
static int parse_timeout(const char *arg, uint32_t len, long long *timeout, buf_t *out)
{
    if (str_to_ll(arg, len, timeout) != 0) {
        resp_error(out, "ERR timeout is not an integer or out of range");
        return -1;
    }
    if (*timeout < 0) {
        resp_error(out, "ERR timeout is negative");
        return -1;
    }
    return 0;
}

/* WAIT numreplicas timeout: Redis parses the count first, then the
 * timeout (milliseconds, 0 = no limit). */
void fe_cmd_wait(fe_conn_t *c, int argc, const char **argv, const uint32_t *lens, buf_t *out)
{
    (void)argc;
    long long numreplicas, timeout;
    if (str_to_ll(argv[1], lens[1], &numreplicas) != 0) {
        resp_error(out, "ERR value is not an integer or out of range");
        return;
    }
    if (parse_timeout(argv[2], lens[2], &timeout, out) != 0) return;
    if (is_replica(c->fe->shm)) {
        resp_error(out, "ERR WAIT cannot be used with replica instances. Please also note that "
                        "since Redis 4.0 if a replica is configured to be writable (which is not "
                        "the default) writes to replicas are just local and are not propagated.");
        return;
    }
    wait_start(c, (fe_repl_wait_t){.n = numreplicas}, timeout, out);
}

/* WAITAOF numlocal numreplicas timeout (Redis 7.2's): numlocal 0 or 1,
 * numreplicas not negative, then the timeout, each with Redis 7.2's
 * error; refused on a replica. The reply is [local, replicas]: local is 1
 * once the connection's last write is durable here (always, by the time
 * a reply can be sent after it), replicas those whose acked LSN, which is
 * their own durable LSN (D33), passed it. "appendonly no" never applies:
 * every write is fsynced (D44). */
void fe_cmd_waitaof(fe_conn_t *c, int argc, const char **argv, const uint32_t *lens, buf_t *out)
{
    (void)argc;
    long long numlocal, numreplicas, timeout;
    if (str_to_ll(argv[1], lens[1], &numlocal) != 0) {
        resp_error(out, "ERR value is not an integer or out of range");
        return;
    }
    if (numlocal < 0 || numlocal > 1) {
        resp_error(out, "ERR value is out of range, value must between 0 and 1");
        return;
    }
    if (str_to_ll(argv[2], lens[2], &numreplicas) != 0) {
        resp_error(out, "ERR value is not an integer or out of range");
        return;
    }
    if (numreplicas < 0) {
        resp_error(out, "ERR value is out of range, must be positive");
        return;
    }
    if (parse_timeout(argv[3], lens[3], &timeout, out) != 0) return;
    if (is_replica(c->fe->shm)) {
        resp_error(out, "ERR WAITAOF cannot be used with replica instances. Please also note that "
                        "writes to replicas are just local and are not propagated.");
        return;
    }
    wait_start(c, (fe_repl_wait_t){.n = numreplicas, .aof = 1, .nlocal = numlocal}, timeout, out);
}

/* REPLICAOF host port | NO ONE (and SLAVEOF). A port is checked as Redis
 * does (0-65535, one error for both a non-number and out of range). The
 * replication process sees the change through repl.gen and follows it. */
void fe_cmd_replicaof(fe_conn_t *c, int argc, const char **argv, const uint32_t *lens, buf_t *out)
{
    (void)argc;
    shm_t *shm = c->fe->shm;
    repl_shm_t *r = &shm->repl;
    if (lens[1] == 2 && !strncasecmp(argv[1], "no", 2) && lens[2] == 3 &&
        !strncasecmp(argv[2], "one", 3)) {
        if (is_replica(shm)) {
            /* Waiters in the log are the leader's clients: writes wait
             * until the store drops them (store.c, reset_waiters; D36). */
            atomic_store(&shm->block_reset, 0);
            atomic_store(&r->is_replica, 0);
            shm_wake(&shm->store_wake);
            atomic_fetch_add(&r->gen, 1);
            shm_wake(&shm->repl_wake);
            log_info("REPLICAOF NO ONE: this server is a leader again");
        }
        resp_simple(out, "OK");
        return;
    }
    long long port;
    if (str_to_ll(argv[2], lens[2], &port) != 0 || port < 0 || port > 65535) {
        resp_error(out, "ERR Invalid master port");
        return;
    }
    if (lens[1] == 0 || lens[1] >= REPL_HOST_MAX) {
        resp_error(out, "ERR Invalid master host");
        return;
    }
    char host[REPL_HOST_MAX];
    unsigned cur_port;
    leader_of(shm, host, &cur_port);
    if (is_replica(shm) && cur_port == port && strlen(host) == lens[1] &&
        !strncasecmp(host, argv[1], lens[1])) {
        resp_simple(out, "OK Already connected to specified master");
        return;
    }
    /* The host under a generation bump: the replication process re-reads
     * it if gen moved while it copied. */
    atomic_fetch_add(&r->gen, 1);
    memset(r->master_host, 0, sizeof(r->master_host));
    memcpy(r->master_host, argv[1], lens[1]);
    atomic_store(&r->master_port, (uint32_t)port);
    atomic_store(&r->is_replica, 1);
    atomic_fetch_add(&r->gen, 1);
    shm_wake(&shm->repl_wake);
    log_info("REPLICAOF %s %lld: following that leader", r->master_host, port);
    resp_simple(out, "OK");
}

/* REPLCONF ATTIC-SYNC <run-id> <lsn> <crc> <segment-size> <ring-size>
 * <port>: a replica asks for the log from its durable LSN. What this
 * frontend can check it checks (the shapes the two logs must share, D33);
 * then the socket goes to the replication process, which checks the log
 * itself and answers, and this frontend forgets the connection. */
static void attic_sync(fe_conn_t *c, const char **argv, const uint32_t *lens, buf_t *out)
{
    fe_t *fe = c->fe;
    shm_t *shm = fe->shm;
    long long lsn, crc, seg, ring, port;
    if (str_to_ll(argv[3], lens[3], &lsn) != 0 || lsn < 0 ||
        str_to_ll(argv[4], lens[4], &crc) != 0 || crc < 0 || crc > UINT32_MAX ||
        str_to_ll(argv[5], lens[5], &seg) != 0 || str_to_ll(argv[6], lens[6], &ring) != 0 ||
        str_to_ll(argv[7], lens[7], &port) != 0 || port < 0 || port > 65535) {
        resp_error(out, "ERR malformed replication handshake");
        return;
    }
    if (lens[2] == 40 && !memcmp(argv[2], shm->repl.run_id, 40)) {
        resp_error(out, "ERR a server can't be a replica of itself");
        return;
    }
    if (is_replica(shm)) {
        resp_error(out, "ERR this server is a replica: replicas of replicas are not supported");
        return;
    }
    if ((uint64_t)seg != fe->cfg->segment_size) {
        fe_reply_errorf(c,
                        "ERR the replica's segment-size (%lld) differs from the leader's "
                        "(%" PRIu64 "): both need the same",
                        seg, fe->cfg->segment_size);
        return;
    }
    if ((uint64_t)ring < fe->cfg->ring_size) {
        fe_reply_errorf(c,
                        "ERR the replica's ring-size (%lld) is smaller than the leader's "
                        "(%" PRIu64 ")",
                        ring, fe->cfg->ring_size);
        return;
    }
    char ip[64];
    snprintf(ip, sizeof(ip), "%s", c->is_unix ? "unix" : c->addr);
    char *colon = strrchr(ip, ':');
    if (colon && !c->is_unix) *colon = 0;
    char text[160];
    int n = snprintf(text, sizeof(text), "%lld %lld %lld %s", lsn, crc, port, ip);
    char cbuf[CMSG_SPACE(sizeof(int))];
    memset(cbuf, 0, sizeof(cbuf));
    struct iovec iov = {.iov_base = text, .iov_len = (size_t)n};
    struct msghdr mh = {
        .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf)};
    struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(cm), &c->fd, sizeof(int));
    if (sendmsg(shm->repl_handoff_fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL) != n) {
        fe_reply_errorf(c, "ERR the replication process can't take the replica now (%s)",
                        strerror(errno));
        return;
    }
    shm_wake(&shm->repl_wake);
    /* The socket lives on in the replication process: closing our copy
     * does not end the connection, and nothing more is said on it here. */
    fe_conn_kill(c);
}

/* REPLCONF: the handshake above, ACK from a replica that talks to a
 * frontend (ignored: acks go to the replication process), and Redis'
 * options, accepted as Redis does (an even word count is a syntax error). */
void fe_cmd_replconf(fe_conn_t *c, int argc, const char **argv, const uint32_t *lens, buf_t *out)
{
    if (argc >= 2 && fe_word_eq(argv[1], lens[1], "attic-sync")) {
        if (argc != 8) {
            resp_error(out, "ERR malformed replication handshake");
            return;
        }
        attic_sync(c, argv, lens, out);
        return;
    }
    if (argc % 2 == 0) {
        resp_error(out, "ERR syntax error");
        return;
    }
    for (int i = 1; i < argc; i += 2) {
        if (fe_word_eq(argv[i], lens[i], "ack") || fe_word_eq(argv[i], lens[i], "getack")) {
            c->reply_suppress = 1; /* Redis never answers these */
            return;
        }
        if (!fe_word_eq(argv[i], lens[i], "listening-port") &&
            !fe_word_eq(argv[i], lens[i], "ip-address") && !fe_word_eq(argv[i], lens[i], "capa") &&
            !fe_word_eq(argv[i], lens[i], "rdb-only")) {
            fe_reply_errorf(c, "ERR Unrecognized REPLCONF option: %.*s", (int)lens[i], argv[i]);
            return;
        }
    }
    resp_simple(out, "OK");
}

/* INFO replication, Redis 7.0's fields in its order, then AtticDB's. */
void fe_info_replication(fe_t *fe, buf_t *b, const char *replid)
{
    shm_t *shm = fe->shm;
    const repl_shm_t *r = &shm->repl;
    uint64_t durable = repl_offset(shm);
    int64_t now = shm_now_ms();
    /* The backlog is the log (D67): a replica can resume from any LSN
     * whose record is in it. Redis' offsets count bytes from 1, so the
     * byte at LSN x is offset x + 1 and first + histlen = offset + 1, as
     * Redis reports; the store's log start, whatever keeps it. */
    uint64_t start = atomic_load(&shm->log_start_lsn);
    buf_appendf(b, "# Replication\r\n");
    if (is_replica(shm)) {
        char host[REPL_HOST_MAX];
        unsigned port;
        leader_of(shm, host, &port);
        int up = atomic_load(&r->link) == REPL_LINK_UP;
        int64_t io = atomic_load(&r->last_io_ms);
        buf_appendf(b,
                    "role:slave\r\n"
                    "master_host:%s\r\n"
                    "master_port:%u\r\n"
                    "master_link_status:%s\r\n"
                    "master_last_io_seconds_ago:%" PRId64 "\r\n"
                    "master_sync_in_progress:%u\r\n"
                    "slave_read_repl_offset:%" PRIu64 "\r\n"
                    "slave_repl_offset:%" PRIu64 "\r\n",
                    host, port, up ? "up" : "down", io && up ? (now - io) / 1000 : -1,
                    atomic_load(&r->sync_in_progress), durable, durable);
        if (atomic_load(&r->sync_in_progress)) { /* a full copy (D50), as Redis' transfer */
            uint64_t total = atomic_load(&r->sync_total_bytes);
            uint64_t got = atomic_load(&r->sync_read_bytes);
            buf_appendf(b,
                        "master_sync_total_bytes:%" PRIu64 "\r\n"
                        "master_sync_read_bytes:%" PRIu64 "\r\n"
                        "master_sync_left_bytes:%" PRIu64 "\r\n"
                        "master_sync_perc:%.2f\r\n"
                        "master_sync_last_io_seconds_ago:%" PRId64 "\r\n",
                        total, got, total - got, total ? 100.0 * (double)got / (double)total : 0.0,
                        io ? (now - io) / 1000 : -1);
        }
        if (!up) {
            int64_t since = atomic_load(&r->link_down_since);
            buf_appendf(b, "master_link_down_since_seconds:%" PRId64 "\r\n",
                        since ? (now - since) / 1000 : -1);
        }
        buf_appendf(b, "slave_priority:100\r\nslave_read_only:1\r\nreplica_announced:1\r\n");
    } else {
        buf_appendf(b, "role:master\r\n");
    }
    shm_config_t *sc = &fe_shm(fe->shm)->config;
    int64_t want = atomic_load(&sc->min_replicas_to_write);
    int64_t lag = atomic_load(&sc->min_replicas_max_lag);
    if (want > 0 && lag > 0) /* as Redis: only while the guard is on */
        buf_appendf(b, "min_slaves_good_slaves:%d\r\n", repl_good_replicas(r, lag, now));
    /* As Redis: replicas getting a full copy are listed too, in its words
     * for the copy's phases, at offset 0 (nothing acked yet). */
    static const char *const copy_words[] = {"online", "wait_bgsave", "send_bulk"};
    uint32_t n = 0;
    for (int i = 0; i < REPL_MAX_REPLICAS; i++)
        n += slave_listed(&r->replicas[i]);
    buf_appendf(b, "connected_slaves:%u\r\n", n);
    for (int i = 0, k = 0; i < REPL_MAX_REPLICAS; i++) {
        const repl_replica_t *s = &r->replicas[i];
        if (!slave_listed(s)) continue;
        int online = atomic_load(&s->online) != 0;
        uint32_t copying = atomic_load(&s->copying);
        buf_appendf(b, "slave%d:ip=%s,port=%u,state=%s,offset=%" PRIu64 ",lag=%" PRId64 "\r\n", k++,
                    s->ip, s->port, copy_words[online ? 0 : copying],
                    online ? atomic_load(&s->acked_lsn) : 0,
                    (now - atomic_load(&s->last_ack_ms)) / 1000);
    }
    buf_appendf(b,
                "master_failover_state:no-failover\r\n"
                "master_replid:%s\r\n"
                "master_replid2:0000000000000000000000000000000000000000\r\n"
                "master_repl_offset:%" PRIu64 "\r\n"
                "second_repl_offset:-1\r\n"
                "repl_backlog_active:%u\r\n"
                "repl_backlog_size:%" PRIu64 "\r\n"
                "repl_backlog_first_byte_offset:%" PRIu64 "\r\n"
                "repl_backlog_histlen:%" PRIu64 "\r\n",
                replid, is_replica(shm) ? atomic_load(&r->leader_durable) : durable,
                atomic_load(&r->backlog_active), atomic_load(&r->backlog_size), start + 1,
                durable > start ? durable - start : 0);
    /* AtticDB's: lag in bytes and ms on both sides, how links began. */
    for (int i = 0, k = 0; i < REPL_MAX_REPLICAS; i++) {
        const repl_replica_t *s = &r->replicas[i];
        if (!slave_listed(s)) continue;
        if (!atomic_load(&s->online)) {
            k++; /* copying: numbered as in its slaveN line, no lag yet */
            continue;
        }
        uint64_t acked = atomic_load(&s->acked_lsn);
        int64_t behind = atomic_load(&s->behind_since);
        buf_appendf(b, "atticdb_slave%d:lag_bytes=%" PRIu64 ",lag_ms=%" PRId64 "\r\n", k++,
                    durable > acked ? durable - acked : 0, behind ? now - behind : 0);
    }
    if (is_replica(shm)) {
        uint64_t leader = atomic_load(&r->leader_durable);
        int64_t heard = atomic_load(&r->leader_durable_ms);
        buf_appendf(b,
                    "atticdb_lag_bytes:%" PRIu64 "\r\n"
                    "atticdb_lag_ms:%" PRId64 "\r\n"
                    "atticdb_link_error:%s\r\n",
                    leader > durable ? leader - durable : 0,
                    leader > durable && heard ? now - heard : 0, r->link_error);
    }
    buf_appendf(b,
                "atticdb_partial_syncs:%" PRIu64 "\r\n"
                "atticdb_full_syncs:%" PRIu64 "\r\n",
                atomic_load(&r->partial_syncs), atomic_load(&r->full_syncs));
}
