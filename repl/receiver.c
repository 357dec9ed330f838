/*
 * receiver.c - the replica's side of replication (docs/DECISIONS.md D33):
 * follow the leader REPLICAOF names, ask for the log from this server's
 * own durable LSN, and push each of the leader's records, byte for byte,
 * into this server's ring at its own LSN (ring_claim_at), where the
 * logger makes it durable as any record and the store applies it.
 *
 * Run by: the replication process (repl.c). Invariants: a record enters
 * the ring whole, at the LSN the leader gave it, or not at all (a claim
 * that would need another position is an error and a disconnect, never a
 * shifted LSN); an ack names only this server's durable LSN. A crash here
 * loses nothing durable: the next receiver asks again from durable_lsn.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "datadir.h"
#include "log.h"
#include "record.h"
#include "repl/repl-internal.h"
#include "ring.h"

#define RETRY_MS   1000  /* after a failed attempt */
#define TIMEOUT_MS 60000 /* Redis' repl-timeout: a silent leader is dropped */
#define ACK_MS     1000  /* acks at least this often, as Redis' replicas */

static int retry_ring; /* the ring was full: try again soon */

void receiver_init(repl_proc_t *p)
{
    p->recv.fd = -1;
    p->recv.state = RECV_IDLE;
    buf_init(&p->recv.in);
    buf_init(&p->recv.log);
    atomic_store(&p->shm->repl.link, REPL_LINK_DOWN);
}

int receiver_wants_retry(const repl_proc_t *p)
{
    return retry_ring && p->recv.state == RECV_STREAM;
}

static void set_error(repl_proc_t *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void set_error(repl_proc_t *p, const char *fmt, ...)
{
    char msg[sizeof(p->shm->repl.link_error)];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    memcpy(p->shm->repl.link_error, msg, sizeof(msg));
    log_warn("repl: %s", msg);
}

static void link_down(repl_proc_t *p, int retry)
{
    repl_recv_t *r = &p->recv;
    if (r->fd >= 0) close(r->fd);
    r->fd = -1;
    if (r->state == RECV_STREAM) atomic_store(&p->shm->repl.link_down_since, shm_now_ms());
    if (r->state == RECV_COPY) copy_abort(p);
    r->state = RECV_IDLE;
    buf_reset(&r->in);
    buf_reset(&r->log);
    r->in_off = 0;
    r->next_try_ms = retry ? shm_now_ms() + RETRY_MS : 0;
    atomic_store(&p->shm->repl.link, REPL_LINK_DOWN);
}

static int send_all(int fd, const char *s, size_t n)
{
    while (n) {
        ssize_t w = send(fd, s, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1; /* a short socket buffer here means a dead link */
        s += w;
        n -= (size_t)w;
    }
    return 0;
}

static void send_cmd(repl_proc_t *p, int argc, const char **argv)
{
    buf_t b;
    buf_init(&b);
    buf_appendf(&b, "*%d\r\n", argc);
    for (int i = 0; i < argc; i++)
        buf_appendf(&b, "$%zu\r\n%s\r\n", strlen(argv[i]), argv[i]);
    if (send_all(p->recv.fd, b.data, b.len) != 0) {
        set_error(p, "can't write to the leader: %s", strerror(errno));
        link_down(p, 1);
    }
    buf_free(&b);
}

/* Note durably in the data directory that records from LSN `from` on may
 * be a leader's (to = DATADIR_SHIPPED_OPEN), or that those from `to` on are
 * this server's own again (D56). 1 when the file says so. */
static int shipped_note(repl_proc_t *p, uint64_t from, uint64_t to)
{
    repl_recv_t *r = &p->recv;
    if (!r->shipped_known) {
        char err[4608];
        if (datadir_shipped_read(p->cfg->dir, &r->shipped_from, &r->shipped_to, err, sizeof(err)) <
            0) {
            set_error(p, "%s", err);
            return 0;
        }
        r->shipped_known = 1;
    }
    if (to == DATADIR_SHIPPED_OPEN && r->shipped_to == DATADIR_SHIPPED_OPEN &&
        r->shipped_from != DATADIR_SHIPPED_OPEN)
        return 1; /* following already: the first shipped LSN stays */
    if (to != DATADIR_SHIPPED_OPEN) {
        if (r->shipped_from == DATADIR_SHIPPED_OPEN || r->shipped_to != DATADIR_SHIPPED_OPEN)
            return 1; /* nothing shipped, or closed already */
        from = r->shipped_from;
        if (to < from) to = from;
    }
    if (datadir_shipped_write(p->cfg->dir, from, to) != 0) {
        set_error(p, "can't write %s/%s: %s", p->cfg->dir, DATADIR_SHIPPED, strerror(errno));
        return 0;
    }
    r->shipped_from = from;
    r->shipped_to = to;
    return 1;
}

/* Begin following: once every record this server claimed is durable (the
 * LSN to ask from is then the end of its log), connect. */
static void start_link(repl_proc_t *p)
{
    shm_t *shm = p->shm;
    repl_recv_t *r = &p->recv;
    uint64_t durable = atomic_load(&shm->durable_lsn);
    if (atomic_load(&shm->logger_state) != LOGGER_RUNNING) return;
    if (atomic_load(&shm_ring(shm)->head) != durable) return; /* the logger drains */
    if (!r->adopted) {
        r->adopted = ring_claimer_adopt(shm_repl_claimer(shm), durable);
        if (!r->adopted) return;
    }
    /* Before the first record of a leader is claimed: recovery must know
     * that records from here on prove only the leader's durability. */
    if (!shipped_note(p, durable, DATADIR_SHIPPED_OPEN)) {
        link_down(p, 1);
        return;
    }
    r->gen = atomic_load(&shm->repl.gen);
    char host[REPL_HOST_MAX], port[16];
    memcpy(host, shm->repl.master_host, sizeof(host));
    host[sizeof(host) - 1] = 0;
    snprintf(port, sizeof(port), "%u", atomic_load(&shm->repl.master_port));
    if (atomic_load(&shm->repl.gen) != r->gen) return; /* changed while read: next time */
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res;
    int rc = getaddrinfo(host, port, &hints, &res);
    if (rc != 0) {
        set_error(p, "can't resolve the leader %s: %s", host, gai_strerror(rc));
        link_down(p, 1);
        return;
    }
    int fd = socket(res->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd >= 0 && connect(fd, res->ai_addr, res->ai_addrlen) != 0 && errno != EINPROGRESS) {
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    if (fd < 0) {
        set_error(p, "can't connect to the leader %s:%s: %s", host, port, strerror(errno));
        link_down(p, 1);
        return;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    r->fd = fd;
    r->state = RECV_CONNECTING;
    r->next_lsn = durable;
    r->acked = durable;
    atomic_store(&shm->repl.last_io_ms, shm_now_ms());
    atomic_store(&shm->repl.link, REPL_LINK_CONNECTING);
    log_info("repl: connecting to the leader %s:%s from LSN %" PRIu64, host, port, durable);
}

static void send_handshake(repl_proc_t *p)
{
    repl_recv_t *r = &p->recv;
    int err = 0;
    socklen_t len = sizeof(err);
    getsockopt(r->fd, SOL_SOCKET, SO_ERROR, &err, &len);
    if (err) {
        set_error(p, "can't connect to the leader: %s", strerror(err));
        link_down(p, 1);
        return;
    }
    uint32_t crc;
    if (repl_tail_crc(p->cfg->dir, p->cfg->segment_size, r->next_lsn, &crc) != 0) {
        set_error(p, "this server's own log has no record ending at its durable LSN %" PRIu64,
                  r->next_lsn);
        link_down(p, 1);
        return;
    }
    char lsn[24], crcs[16], seg[24], ring[24], port[16];
    snprintf(lsn, sizeof(lsn), "%" PRIu64, r->next_lsn);
    snprintf(crcs, sizeof(crcs), "%" PRIu32, crc);
    snprintf(seg, sizeof(seg), "%" PRIu64, p->cfg->segment_size);
    snprintf(ring, sizeof(ring), "%" PRIu64, p->cfg->ring_size);
    snprintf(port, sizeof(port), "%d", p->cfg->port);
    const char *argv[] = {"REPLCONF", "ATTIC-SYNC", p->shm->repl.run_id, lsn, crcs, seg,
                          ring,       port};
    r->state = RECV_HANDSHAKE;
    send_cmd(p, 8, argv);
}

static void send_ack(repl_proc_t *p, uint64_t durable)
{
    char lsn[24];
    snprintf(lsn, sizeof(lsn), "%" PRIu64, durable);
    const char *argv[] = {"REPLCONF", "ACK", lsn};
    p->recv.acked = durable;
    p->recv.last_ack_ms = shm_now_ms();
    send_cmd(p, 3, argv);
}

/* The leader's answer to the handshake: one line. */
static int read_answer(repl_proc_t *p)
{
    repl_recv_t *r = &p->recv;
    char *eol = memchr(r->in.data, '\n', r->in.len);
    if (!eol) {
        if (r->in.len > 1024) {
            set_error(p, "the leader's answer to the handshake is not a line");
            link_down(p, 1);
        }
        return 0;
    }
    size_t n = (size_t)(eol - r->in.data) + 1;
    char line[1100];
    size_t l = n - 1 < sizeof(line) - 1 ? n - 1 : sizeof(line) - 1;
    memcpy(line, r->in.data, l);
    line[l] = 0;
    if (l && line[l - 1] == '\r') line[--l] = 0;
    uint64_t lsn;
    if (!strcmp(line, "+FULLCOPY")) {
        /* This log is not a prefix of the leader's, or the leader's no
         * longer reaches back to it: its copy replaces this server's data. */
        r->in_off = n;
        r->state = RECV_COPY;
        copy_begin(p);
        log_info("repl: the leader sends a full copy (this log is not a prefix of its log)");
        return 1;
    }
    if (sscanf(line, "+CONTINUE %" SCNu64, &lsn) != 1 || lsn != r->next_lsn) {
        atomic_fetch_add(&p->shm->repl.sync_errors, 1);
        set_error(p, "the leader refused to continue from LSN %" PRIu64 ": %s", r->next_lsn,
                  line[0] == '-' ? line + 1 : line);
        link_down(p, 1);
        return 0;
    }
    r->in_off = n;
    r->state = RECV_STREAM;
    p->shm->repl.link_error[0] = 0;
    atomic_fetch_add(&p->shm->repl.partial_syncs, 1);
    atomic_store(&p->shm->repl.link, REPL_LINK_UP);
    log_info("repl: the leader continues from LSN %" PRIu64, lsn);
    return 1;
}

/* Back-pressure: whether to stop reading the leader's socket. Only while
 * the ring is full, that is, while a whole record waits at the head of
 * r->log for space: a record may be up to a quarter of the ring (a large
 * value's chunk, D31), far more than a few frames, and stopping before it
 * is whole would wait forever (seen: replication stalled after a 5 MB
 * SET, session 7). */
static int recv_backlogged(const repl_recv_t *r)
{
    if (r->log.len < 4 * REPL_FRAME_MAX) return 0;
    rec_hdr_t h;
    memcpy(&h, r->log.data, sizeof(h));
    return h.len >= REC_HDR_SIZE && r->log.len >= rec_space(h.len - REC_HDR_SIZE);
}

/* Push the complete records of r->log into the ring. Returns 0, or -1
 * after a fatal mismatch (link dropped). */
static int push_records(repl_proc_t *p)
{
    repl_recv_t *r = &p->recv;
    ring_t *ring = shm_ring(p->shm);
    size_t off = 0;
    int pushed = 0;
    retry_ring = 0;
    while (r->log.len - off >= REC_HDR_SIZE) {
        const unsigned char *rec = (const unsigned char *)r->log.data + off;
        rec_hdr_t h;
        memcpy(&h, rec, sizeof(h));
        uint64_t avail = r->log.len - off;
        if (h.lsn != r->next_lsn || h.len < REC_HDR_SIZE) {
            set_error(p, "the leader sent no record where LSN %" PRIu64 " should start",
                      r->next_lsn);
            link_down(p, 1);
            return -1;
        }
        if (rec_space(h.len - REC_HDR_SIZE) > ring->size / 2) {
            /* Never placeable here: say so now, not after buffering it. */
            set_error(p,
                      "the leader's record at LSN %" PRIu64 " (%u bytes) is larger than this "
                      "server's ring-size allows: give the replica a ring-size at least the "
                      "leader's",
                      r->next_lsn, h.len);
            link_down(p, 1);
            return -1;
        }
        if (rec_space(h.len - REC_HDR_SIZE) > avail) break; /* the rest comes in the next frame */
        int64_t space = rec_check(rec, r->next_lsn, avail);
        if (space <= 0) {
            set_error(p, "the leader's record at LSN %" PRIu64 " fails its checksum", r->next_lsn);
            link_down(p, 1);
            return -1;
        }
        int rc = ring_claim_at(ring, shm_repl_claimer(p->shm), (uint32_t)space, r->next_lsn);
        if (rc == -EAGAIN) {
            retry_ring = 1; /* the store has not released the space yet */
            break;
        }
        if (rc != 0) {
            set_error(p, "can't place the leader's record at LSN %" PRIu64 " in the ring: %s",
                      r->next_lsn, strerror(-rc));
            link_down(p, 1);
            return -1;
        }
        unsigned char *dst = ring_ptr(ring, r->next_lsn);
        /* Everything but the lsn word, which ring_commit stores last. */
        memcpy(dst + sizeof(uint64_t), rec + sizeof(uint64_t), (size_t)space - sizeof(uint64_t));
        ring_commit(ring, shm_repl_claimer(p->shm), r->next_lsn);
        r->next_lsn += (uint64_t)space;
        off += (size_t)space;
        pushed = 1;
    }
    repl_buf_drop(&r->log, off);
    if (pushed || retry_ring) {
        shm_wake(&p->shm->logger_wake);
        shm_wake(&p->shm->store_wake);
    }
    return 0;
}

/* Frames of a full copy (copy.c). */
static void read_copy_frames(repl_proc_t *p)
{
    repl_recv_t *r = &p->recv;
    while (r->state == RECV_COPY && r->in.len - r->in_off >= sizeof(repl_frame_t)) {
        repl_frame_t f;
        memcpy(&f, r->in.data + r->in_off, sizeof(f));
        char err[sizeof(p->shm->repl.link_error)];
        if (f.len > REPL_FRAME_MAX) {
            set_error(p, "the leader sent a malformed frame (kind %u, %u bytes)", f.kind, f.len);
            link_down(p, 1);
            return;
        }
        if (r->in.len - r->in_off < sizeof(f) + f.len) break;
        int rc = copy_frame(p, &f, r->in.data + r->in_off + sizeof(f), err, sizeof(err));
        r->in_off += sizeof(f) + f.len;
        if (rc < 0) {
            atomic_fetch_add(&p->shm->repl.sync_errors, 1);
            set_error(p, "%s", err);
            link_down(p, 1);
            return;
        }
        if (rc == 1) {
            link_down(p, 0);
            return;
        }
    }
    repl_buf_drop(&r->in, r->in_off);
    r->in_off = 0;
}

/* Frames from the leader, after the handshake. */
static void read_frames(repl_proc_t *p)
{
    repl_recv_t *r = &p->recv;
    if (r->state == RECV_COPY) {
        read_copy_frames(p);
        return;
    }
    while (r->state == RECV_STREAM && r->in.len - r->in_off >= sizeof(repl_frame_t)) {
        /* Back-pressure: while the ring is full, leave the rest unparsed. */
        if (recv_backlogged(r)) break;
        repl_frame_t f;
        memcpy(&f, r->in.data + r->in_off, sizeof(f));
        if ((f.kind != REPL_FRAME_DATA && f.kind != REPL_FRAME_PING) || f.len > REPL_FRAME_MAX ||
            (f.kind == REPL_FRAME_DATA && f.lsn != r->next_lsn + r->log.len)) {
            set_error(p, "the leader sent a malformed frame (kind %u, %u bytes, LSN %" PRIu64 ")",
                      f.kind, f.len, f.lsn);
            link_down(p, 1);
            return;
        }
        if (r->in.len - r->in_off < sizeof(f) + f.len) break;
        buf_append(&r->log, r->in.data + r->in_off + sizeof(f), f.len);
        r->in_off += sizeof(f) + f.len;
        atomic_store(&p->shm->repl.leader_durable, f.leader_durable);
        atomic_store(&p->shm->repl.leader_durable_ms, shm_now_ms());
        if (push_records(p) != 0) return;
    }
    repl_buf_drop(&r->in, r->in_off);
    r->in_off = 0;
}

int receiver_pollfd(repl_proc_t *p, struct pollfd *fd)
{
    repl_recv_t *r = &p->recv;
    if (r->fd < 0) return 0;
    fd->fd = r->fd;
    fd->events = r->state == RECV_CONNECTING ? POLLOUT : POLLIN;
    /* The ring is full: stop reading, so the leader's socket backs up. */
    if (r->state == RECV_STREAM && recv_backlogged(r)) fd->events = 0;
    fd->revents = 0;
    return 1;
}

void receiver_event(repl_proc_t *p, short revents)
{
    repl_recv_t *r = &p->recv;
    if (r->state == RECV_CONNECTING) {
        if (revents & (POLLOUT | POLLERR | POLLHUP)) send_handshake(p);
        return;
    }
    char tmp[65536];
    ssize_t n = read(r->fd, tmp, sizeof(tmp));
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
        set_error(p, "the leader closed the connection%s%s", n ? ": " : "",
                  n ? strerror(errno) : "");
        link_down(p, 1);
        return;
    }
    if (n < 0) return;
    buf_append(&r->in, tmp, (size_t)n);
    atomic_store(&p->shm->repl.last_io_ms, shm_now_ms());
    if (r->state == RECV_HANDSHAKE && !read_answer(p)) return;
    read_frames(p);
}

void receiver_step(repl_proc_t *p)
{
    shm_t *shm = p->shm;
    repl_recv_t *r = &p->recv;
    if (p->exit_status) return; /* a full copy is complete: the server restarts */
    int replica = atomic_load(&shm->repl.is_replica) != 0;
    if (r->state != RECV_IDLE && (!replica || atomic_load(&shm->repl.gen) != r->gen)) {
        log_info("repl: no longer following that leader (REPLICAOF)");
        link_down(p, 0);
        shm->repl.link_error[0] = 0;
    }
    if (!replica) {
        /* Promoted (or a leader whose SHIPPED is still open): from the end
         * of the last record this process claimed, or the durable LSN if it
         * claimed none, the records are this server's own. Retried at each
         * step until written. */
        if (!r->shipped_known || r->shipped_to == DATADIR_SHIPPED_OPEN) {
            uint64_t own = r->next_lsn ? r->next_lsn : atomic_load(&shm->durable_lsn);
            if (atomic_load(&shm->logger_state) == LOGGER_RUNNING)
                shipped_note(p, DATADIR_SHIPPED_OPEN, own);
        }
        return;
    }
    int64_t now = shm_now_ms();
    if (r->state == RECV_IDLE) {
        if (now >= r->next_try_ms) start_link(p);
        return;
    }
    if (now - atomic_load(&shm->repl.last_io_ms) > TIMEOUT_MS) {
        set_error(p, "nothing from the leader for %d s: reconnecting", TIMEOUT_MS / 1000);
        link_down(p, 1);
        return;
    }
    if (r->state != RECV_STREAM) return;
    if (r->log.len) {
        if (push_records(p) != 0) return;
        read_frames(p); /* what back-pressure left unparsed */
        if (r->state != RECV_STREAM) return;
    }
    uint64_t durable = atomic_load_explicit(&shm->durable_lsn, memory_order_acquire);
    if (durable > r->acked || now - r->last_ack_ms >= ACK_MS) send_ack(p, durable);
}
