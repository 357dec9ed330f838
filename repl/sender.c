/*
 * sender.c - the leader's side of replication (docs/DECISIONS.md D33):
 * replica connections handed over by the frontends, shipped the durable
 * log byte for byte from the LSN they asked for, their acks recorded in
 * shm (repl.replicas) for INFO, ROLE and WAIT.
 *
 * Run by: the replication process (repl.c). Invariants: nothing at or
 * above the durable LSN is shipped (a replica never holds a write the
 * leader could lose); a replica is continued only from an LSN where this
 * log has a record ending with the CRC the replica has there, so the two
 * logs are one up to it. A crash here drops every replica's connection;
 * each reconnects and resumes from its own durable LSN.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "io.h"
#include "log.h"
#include "repl/repl-internal.h"
#include "seg.h"

#define PING_MS 1000

/* Every backup directory under dir (the store's full copies). */
static void remove_copies(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    char path[4400];
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        backup_remove_dir(path);
    }
    closedir(d);
}

void sender_init(repl_proc_t *p)
{
    /* A predecessor's full copy, unsent: its replicas ask again. */
    char copies[4096];
    snprintf(copies, sizeof(copies), "%s/repl-copy", p->cfg->dir);
    remove_copies(copies);
    backlog_init(p); /* before the table below forgets the predecessor's replicas */
    for (int i = 0; i < REPL_MAX_REPLICAS; i++) {
        p->peers[i].fd = -1;
        p->peers[i].seg_fd = -1;
        buf_init(&p->peers[i].out);
        buf_init(&p->peers[i].in);
        resp_cmd_init(&p->peers[i].cmd);
        /* A predecessor's replicas are gone with its sockets. */
        atomic_store(&p->shm->repl.replicas[i].online, 0);
        atomic_store(&p->shm->repl.replicas[i].copying, REPL_COPY_NONE);
    }
    atomic_store(&p->shm->repl.nreplicas, 0);
}

static void count_online(repl_proc_t *p)
{
    uint32_t n = 0;
    for (int i = 0; i < REPL_MAX_REPLICAS; i++)
        n += p->peers[i].fd >= 0;
    atomic_store(&p->shm->repl.nreplicas, n);
}

/* The copy's files: closed (the last close frees their space, D50). */
static void close_copy(repl_peer_t *r)
{
    for (size_t f = 0; r->copy_fds && f < r->copy.nfiles; f++)
        if (r->copy_fds[f] >= 0) close(r->copy_fds[f]);
    free(r->copy_fds);
    r->copy_fds = NULL;
    if (r->copy.files) backup_manifest_free(&r->copy);
    memset(&r->copy, 0, sizeof(r->copy));
}

static void peer_close(repl_proc_t *p, int i, const char *why)
{
    repl_peer_t *r = &p->peers[i];
    repl_replica_t *s = &p->shm->repl.replicas[i];
    log_info("repl: replica %s:%u disconnected: %s", s->ip, s->port, why);
    backlog_closing(p, i);
    close(r->fd);
    r->fd = -1;
    if (r->seg_fd >= 0) close(r->seg_fd);
    r->seg_fd = -1;
    close_copy(r);
    r->state = PEER_STREAM;
    buf_reset(&r->out);
    buf_reset(&r->in);
    r->out_off = 0;
    atomic_store(&s->online, 0);
    atomic_store(&s->copying, REPL_COPY_NONE);
    count_online(p);
}

void sender_drop(repl_proc_t *p, int i, const char *why)
{
    peer_close(p, i, why);
}

/* Refuse a handshake: the reply, then the connection closed. */
static void refuse(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void refuse(int fd, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(msg, sizeof(msg) - 2, fmt, ap);
    va_end(ap);
    if (n < 0) n = 0;
    if ((size_t)n > sizeof(msg) - 3) n = (int)sizeof(msg) - 3;
    log_warn("repl: refused a replica: %s", msg + 5);
    msg[n] = '\r', msg[n + 1] = '\n';
    ssize_t w = write(fd, msg, (size_t)n + 2);
    (void)w;
    close(fd);
}

static int free_slot(repl_proc_t *p, int fd)
{
    for (int i = 0; i < REPL_MAX_REPLICAS; i++)
        if (p->peers[i].fd < 0) return i;
    refuse(fd, "-ERR too many replicas (at most %d)", REPL_MAX_REPLICAS);
    return -1;
}

/* The replica's log is not a prefix of this one (why): it gets a full copy
 * (D50). The store writes one at its next turn; meanwhile pings. */
static void start_copy(repl_proc_t *p, int fd, const char *why, unsigned port, const char *ip)
{
    int slot = free_slot(p, fd);
    if (slot < 0) return;
    repl_peer_t *r = &p->peers[slot];
    repl_replica_t *s = &p->shm->repl.replicas[slot];
    r->fd = fd;
    r->state = PEER_WAIT_COPY;
    r->pos = 0;
    r->last_send_ms = shm_now_ms();
    snprintf(s->ip, sizeof(s->ip), "%s", ip);
    s->port = port;
    backlog_copy_wanted(p, slot, ip, port); /* kept before the store can write the copy */
    r->copy_gen = atomic_fetch_add(&p->shm->repl.copy_wanted, 1) + 1;
    shm_wake(&p->shm->store_wake);
    buf_appendf(&r->out, "+FULLCOPY\r\n");
    atomic_store(&s->last_ack_ms, shm_now_ms());
    atomic_store(&s->copying, REPL_COPY_WAIT); /* listed by INFO from here */
    count_online(p);
    log_info("repl: replica %s:%u gets a full copy: %s", ip, port, why);
}

/* Where the replica asked to continue: here when this log holds a record
 * ending at lsn with the replica's CRC; else a full copy. */
static void start_peer(repl_proc_t *p, int fd, uint64_t lsn, uint32_t crc, unsigned port,
                       const char *ip)
{
    shm_t *shm = p->shm;
    uint64_t durable = atomic_load(&shm->durable_lsn);
    uint32_t mine;
    char why[160] = "";
    if (lsn > durable)
        snprintf(why, sizeof(why),
                 "its log (LSN %" PRIu64 ") is ahead of the leader's (%" PRIu64
                 "): the logs diverged",
                 lsn, durable);
    /* The log from lsn: kept from here on, or gone already (backlog.c,
     * D67, which says why); then no record ends at lsn here, or one with
     * another CRC: the replica's log is not a prefix of this one. */
    else if (backlog_admit(p, lsn, ip, port, why, sizeof(why)) == 0 &&
             (repl_tail_crc(p->cfg->dir, p->cfg->segment_size, lsn, &mine) != 0 || mine != crc))
        snprintf(why, sizeof(why),
                 "its log differs from the leader's at LSN %" PRIu64 ": the logs diverged", lsn);
    if (why[0]) {
        atomic_fetch_add(&shm->repl.sent_full, 1);
        if (lsn > 0) atomic_fetch_add(&shm->repl.sent_partial_err, 1);
        start_copy(p, fd, why, port, ip);
        return;
    }
    int slot = free_slot(p, fd);
    if (slot < 0) return;
    repl_peer_t *r = &p->peers[slot];
    repl_replica_t *s = &shm->repl.replicas[slot];
    r->fd = fd;
    atomic_fetch_add(&shm->repl.sent_partial_ok, 1);
    r->state = PEER_STREAM;
    r->pin = lsn;
    r->pos = lsn;
    r->last_send_ms = shm_now_ms();
    buf_appendf(&r->out, "+CONTINUE %" PRIu64 "\r\n", lsn);
    snprintf(s->ip, sizeof(s->ip), "%s", ip);
    s->port = port;
    atomic_store(&s->acked_lsn, lsn);
    atomic_store(&s->sent_lsn, lsn);
    atomic_store(&s->last_ack_ms, shm_now_ms());
    atomic_store(&s->behind_since, 0);
    atomic_store(&s->online, 1);
    count_online(p);
    log_info("repl: replica %s:%u continues from LSN %" PRIu64 " (the leader is at %" PRIu64 ")",
             ip, port, lsn, durable);
}

void sender_accept(repl_proc_t *p)
{
    char text[256];
    char cbuf[CMSG_SPACE(sizeof(int))];
    struct iovec iov = {.iov_base = text, .iov_len = sizeof(text) - 1};
    struct msghdr mh = {
        .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf)};
    ssize_t n = recvmsg(p->shm->repl_handoff_rfd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
    if (n <= 0) return;
    text[n] = 0;
    int fd = -1;
    struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
    if (cm && cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS)
        memcpy(&fd, CMSG_DATA(cm), sizeof(fd));
    if (fd < 0) return;
    uint64_t lsn;
    uint32_t crc;
    unsigned port;
    char ip[64];
    if (sscanf(text, "%" SCNu64 " %" SCNu32 " %u %63s", &lsn, &crc, &port, ip) != 4) {
        refuse(fd, "-ERR malformed replication handshake");
        return;
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    start_peer(p, fd, lsn, crc, port, ip);
}

int sender_pollfds(repl_proc_t *p, struct pollfd *fds, int *owner, int max)
{
    int n = 0;
    for (int i = 0; i < REPL_MAX_REPLICAS && n < max; i++) {
        repl_peer_t *r = &p->peers[i];
        if (r->fd < 0) continue;
        fds[n].fd = r->fd;
        fds[n].events = POLLIN | (r->out.len > r->out_off ? POLLOUT : 0);
        fds[n].revents = 0;
        owner[n++] = i;
    }
    return n;
}

/* The replica's acks: `REPLCONF ACK <lsn>`, nothing else. */
static int read_acks(repl_proc_t *p, int i)
{
    repl_peer_t *r = &p->peers[i];
    char tmp[4096];
    ssize_t n = read(r->fd, tmp, sizeof(tmp));
    if (n == 0) return -1;
    if (n < 0) return errno == EAGAIN || errno == EINTR ? 0 : -1;
    buf_append(&r->in, tmp, (size_t)n);
    size_t off = 0;
    resp_limits_t lim = {4096, 8, 4096};
    for (;;) {
        const char *err = NULL;
        int64_t used = resp_parse(&lim, r->in.data + off, r->in.len - off, &r->cmd, &err, NULL);
        if (used == RESP_NEED_MORE) break;
        if (used < 0) {
            log_warn("repl: replica %s: %s", p->shm->repl.replicas[i].ip, err);
            return -1;
        }
        const char *base = r->in.data + off;
        off += (size_t)used;
        if (r->cmd.argc == 0) continue;
        char num[32];
        uint64_t acked;
        if (r->cmd.argc != 3 || r->cmd.args[0].len != 8 ||
            strncasecmp(resp_arg_ptr(&r->cmd, base, 0), "replconf", 8) || r->cmd.args[1].len != 3 ||
            strncasecmp(resp_arg_ptr(&r->cmd, base, 1), "ack", 3) || r->cmd.args[2].len == 0 ||
            r->cmd.args[2].len >= sizeof(num)) {
            log_warn("repl: replica %s sent something else than REPLCONF ACK",
                     p->shm->repl.replicas[i].ip);
            return -1;
        }
        memcpy(num, resp_arg_ptr(&r->cmd, base, 2), r->cmd.args[2].len);
        num[r->cmd.args[2].len] = 0;
        char *end;
        errno = 0;
        acked = strtoull(num, &end, 10);
        if (*end || errno || acked > r->pos) {
            log_warn("repl: replica %s acked a bad LSN (%s)", p->shm->repl.replicas[i].ip, num);
            return -1;
        }
        repl_replica_t *s = &p->shm->repl.replicas[i];
        if (acked > atomic_load(&s->acked_lsn)) atomic_store(&s->acked_lsn, acked);
        atomic_store(&s->last_ack_ms, shm_now_ms());
        for (uint32_t f = 0; f < p->shm->nfrontends; f++)
            shm_wake(&p->shm->fe[f].wake); /* WAIT, min-replicas-acked */
    }
    repl_buf_drop(&r->in, off);
    return 0;
}

static int flush_peer(repl_peer_t *r)
{
    while (r->out_off < r->out.len) {
        ssize_t n = write(r->fd, r->out.data + r->out_off, r->out.len - r->out_off);
        if (n < 0) return errno == EAGAIN || errno == EINTR ? 0 : -1;
        r->out_off += (size_t)n;
    }
    buf_reset(&r->out);
    r->out_off = 0;
    return 0;
}

void sender_event(repl_proc_t *p, int i, short revents)
{
    repl_peer_t *r = &p->peers[i];
    if (r->fd < 0) return;
    if ((revents & (POLLIN | POLLHUP | POLLERR)) && read_acks(p, i) != 0) {
        peer_close(p, i, "connection closed or protocol error");
        return;
    }
    if ((revents & POLLOUT) && flush_peer(r) != 0) peer_close(p, i, strerror(errno));
}

static void append_frame(repl_peer_t *r, uint32_t kind, uint32_t len, uint64_t lsn,
                         uint64_t durable)
{
    repl_frame_t f = {.kind = kind, .len = len, .lsn = lsn, .leader_durable = durable};
    buf_append(&r->out, &f, sizeof(f));
}

/* Append up to one frame of the log from r->pos, below durable. */
static int ship_some(repl_proc_t *p, repl_peer_t *r, uint64_t durable)
{
    uint64_t segsize = p->cfg->segment_size;
    uint64_t seg = r->pos & ~(segsize - 1);
    if (r->seg_fd < 0 || r->seg_start != seg) {
        if (r->seg_fd >= 0) close(r->seg_fd);
        char path[4096];
        seg_path(path, sizeof(path), p->cfg->dir, seg);
        r->seg_fd = io->open(path, O_RDONLY | O_CLOEXEC, 0);
        if (r->seg_fd < 0) return -1; /* deleted under us: the replica reconnects */
        r->seg_start = seg;
    }
    uint64_t n = durable - r->pos;
    if (n > seg + segsize - r->pos) n = seg + segsize - r->pos;
    if (n > REPL_FRAME_MAX) n = REPL_FRAME_MAX;
    size_t at = r->out.len;
    append_frame(r, REPL_FRAME_DATA, (uint32_t)n, r->pos, durable);
    buf_reserve(&r->out, (size_t)n);
    ssize_t got = io->pread(r->seg_fd, r->out.data + r->out.len, (size_t)n, (off_t)(r->pos - seg));
    if (got != (ssize_t)n) {
        r->out.len = at;
        return -1;
    }
    r->out.len += (size_t)n;
    r->pos += n;
    return 0;
}

/* ---- full copies (D50) ----------------------------------------------------- */

/* The store's copy is written: open every file it names (from here on
 * nothing can take them away), send its MANIFEST. Returns 0 or -1. */
static int open_copy(repl_proc_t *p, repl_peer_t *r, const char *dir)
{
    char err[512], path[4400];
    if (backup_manifest_read(dir, &r->copy, err, sizeof(err)) != 0) {
        log_warn("repl: the full copy in %s: %s", dir, err);
        return -1;
    }
    r->copy_fds = malloc((r->copy.nfiles ? r->copy.nfiles : 1) * sizeof(int));
    if (!r->copy_fds) return -1;
    for (size_t f = 0; f < r->copy.nfiles; f++) {
        snprintf(path, sizeof(path), "%s/%s", dir, r->copy.files[f].name);
        r->copy_fds[f] = io->open(path, O_RDONLY | O_CLOEXEC, 0);
    }
    for (size_t f = 0; f < r->copy.nfiles; f++)
        if (r->copy_fds[f] < 0) return -1;
    buf_t text;
    buf_init(&text);
    backup_manifest_format(&r->copy, &text);
    int rc = text.len <= REPL_FRAME_MAX ? 0 : -1;
    if (!rc) {
        append_frame(r, REPL_FRAME_MANIFEST, (uint32_t)text.len, r->copy.lsn, 0);
        buf_append(&r->out, text.data, text.len);
    }
    buf_free(&text);
    r->state = PEER_COPY;
    r->pin = r->copy.lsn; /* where the replica resumes once it is on the copy (D67) */
    atomic_store(&p->shm->repl.replicas[r - p->peers].copying, REPL_COPY_SEND);
    r->copy_file = 0;
    r->copy_off = 0;
    return rc;
}

/* Peers waiting for the copy the store just finished: each opens it, then
 * its directory goes (the open files stay readable until sent). */
static void take_copies(repl_proc_t *p)
{
    repl_shm_t *rs = &p->shm->repl;
    uint32_t done = atomic_load(&rs->copy_done);
    uint64_t lsn = atomic_load(&rs->copy_lsn);
    int failed = atomic_load(&rs->copy_failed), opened = 0;
    char parent[4096], dir[4200];
    snprintf(parent, sizeof(parent), "%s/repl-copy", p->cfg->dir);
    backup_dir_path(dir, sizeof(dir), parent, lsn, 0);
    for (int i = 0; i < REPL_MAX_REPLICAS; i++) {
        repl_peer_t *r = &p->peers[i];
        if (r->fd < 0 || r->state != PEER_WAIT_COPY || (int32_t)(done - r->copy_gen) < 0) continue;
        if (failed)
            peer_close(p, i, "the leader could not write its full copy (its log says why)");
        else if (open_copy(p, r, dir) != 0)
            peer_close(p, i, "the leader's full copy can't be read");
        else
            opened = 1;
    }
    if (opened) backup_remove_dir(dir);
}

/* Append up to one frame of the copy's files. Returns 0, or -1. */
static int ship_copy(repl_peer_t *r)
{
    while (r->copy_file < r->copy.nfiles && r->copy_off == r->copy.files[r->copy_file].size) {
        r->copy_file++;
        r->copy_off = 0;
    }
    if (r->copy_file == r->copy.nfiles) {
        r->state = PEER_COPY_SENT;
        close_copy(r);
        return 0;
    }
    uint64_t n = r->copy.files[r->copy_file].size - r->copy_off;
    if (n > REPL_FRAME_MAX) n = REPL_FRAME_MAX;
    size_t at = r->out.len;
    append_frame(r, REPL_FRAME_FILE, (uint32_t)n, r->copy_off, 0);
    buf_reserve(&r->out, (size_t)n);
    if (io_pread_all(r->copy_fds[r->copy_file], r->out.data + r->out.len, (size_t)n,
                     (off_t)r->copy_off) != 0) {
        r->out.len = at;
        return -1;
    }
    r->out.len += (size_t)n;
    r->copy_off += n;
    return 0;
}

void sender_ship(repl_proc_t *p)
{
    uint64_t durable = atomic_load_explicit(&p->shm->durable_lsn, memory_order_acquire);
    int64_t now = shm_now_ms();
    take_copies(p);
    for (int i = 0; i < REPL_MAX_REPLICAS; i++) {
        repl_peer_t *r = &p->peers[i];
        if (r->fd < 0) continue;
        repl_replica_t *s = &p->shm->repl.replicas[i];
        while (r->state == PEER_COPY && r->out.len - r->out_off < 4 * REPL_FRAME_MAX) {
            if (ship_copy(r) != 0) {
                peer_close(p, i, "its full copy can't be read");
                break;
            }
            r->last_send_ms = now;
        }
        if (r->fd >= 0 && r->state != PEER_STREAM) {
            if (now - r->last_send_ms >= PING_MS && r->out.len == r->out_off) {
                append_frame(r, REPL_FRAME_PING, 0, 0, durable);
                r->last_send_ms = now;
            }
            if (flush_peer(r) != 0) peer_close(p, i, strerror(errno));
            continue;
        }
        /* At most a few frames queued: a slow replica is paced by its
         * socket, and this loop stays short for the others. */
        while (r->pos < durable && r->out.len - r->out_off < 4 * REPL_FRAME_MAX) {
            if (ship_some(p, r, durable) != 0) {
                peer_close(p, i, "its part of the log can't be read any more");
                break;
            }
            r->last_send_ms = now;
        }
        if (r->fd < 0) continue;
        if (now - r->last_send_ms >= PING_MS && r->out.len == r->out_off) {
            append_frame(r, REPL_FRAME_PING, 0, r->pos, durable);
            r->last_send_ms = now;
        }
        atomic_store(&s->sent_lsn, r->pos);
        uint64_t acked = atomic_load(&s->acked_lsn);
        if (acked >= durable)
            atomic_store(&s->behind_since, 0);
        else if (!atomic_load(&s->behind_since))
            atomic_store(&s->behind_since, now);
        if (flush_peer(r) != 0) peer_close(p, i, strerror(errno));
    }
    backlog_step(p, durable, now);
}
