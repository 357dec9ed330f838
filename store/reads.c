/*
 * reads.c - values read from the log, many reads in flight (reads.h;
 * docs/DECISIONS.md, D59). Run by the store process's one thread: one
 * submitter, so the ring is set up SINGLE_ISSUER where the kernel knows it.
 *
 * Each segment is mapped read-only once (MADV_RANDOM). A hole whose pages
 * the page cache holds is copied from the mapping at once: no system call
 * at all. Whether it holds them is asked with mincore(2), or, while nearly
 * every probe finds them there (a data set that fits in RAM), assumed
 * (1 hole in RD_PROBE_EVERY is still probed to notice when that stops).
 * The other holes are read through io_uring, one submission for all those
 * a turn of the store's loop started, straight at the device (O_DIRECT: a
 * value read at random is neither cached nor read ahead, and costs one
 * request of whole 512-byte blocks) or, with read-io buffered, through
 * the page cache. Under O_DIRECT a value the device gave lately (its LSN
 * still in a direct-mapped table of the last ones, the "ghost") is read
 * through the page cache instead, which then keeps it: a hot value earns
 * its page at its second miss, a value read once never takes one (D59
 * measured both access patterns). A copy that faults on an I/O error
 * (SIGBUS) fails over to a read, not the store.
 *
 * A read (rd_read_t) is one reply with holes in flight; each of its holes
 * is one op per segment it spans (rd_op_t), reading into the reply's
 * buffer (O_DIRECT: into the op's aligned buffer, then copied), which
 * nothing else touches until its last op ends. Ops and reads come from
 * fixed pools, so what is in flight is bounded (`depth` ops, one entry
 * kept for the wake-up poll) and the completion queue (twice the
 * submission queue) can never overflow.
 *
 * Invariants: an op's descriptor stays open until the op is submitted
 * (rd_fd's eviction and store_reads_forget submit what is queued first;
 * the kernel holds the file from then on); a mapping is removed only by
 * store_reads_forget, for segments compaction deleted, which the caller's
 * pin keeps clear of every read in flight. A reply is reported once, after
 * its last op; a short read goes on from where it stopped.
 * A crash of the store with reads in flight loses nothing: their requests
 * are still in the frontends' channels (store.c consumes a request only
 * once its reply is sent), and the next store answers them.
 */
#include "reads.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "io.h"
#include "log.h"
#include "seg.h"

int store_reads_fill_now(store_ctx_t *ctx, const st_defer_t *d, buf_t *reply)
{
    for (uint32_t i = 0; i < d->n; i++) {
        const st_hole_t *h = &d->hole[i];
        if (st_read_log(ctx, h->lsn, h->len, (unsigned char *)reply->data + h->off)) return -1;
    }
    return 0;
}

#ifdef HAVE_LIBURING

#include <liburing.h>

#include "uring.h"

#define RD_FDS         64u         /* segment descriptors kept open */
#define RD_KEEP_BYTES  (4u << 20)  /* a reply buffer larger than this is given back */
#define RD_BOUNCE_KEEP (64u << 10) /* an op's O_DIRECT buffer larger than this too */
#define RD_PAGE        4096u
/* Residency: while trusted, one hole in RD_PROBE_EVERY is probed; over a
 * window of RD_WINDOW probes, RD_DISTRUST misses or more end the trust, and
 * a window without a miss restores it. A hole assumed resident that is
 * not costs the store a wait for the device (a major fault): at about one
 * in RD_WINDOW / RD_DISTRUST * RD_PROBE_EVERY, that stays below what a
 * probe of each hole costs (D59 has the numbers). */
#define RD_PROBE_EVERY 32u
#define RD_WINDOW      256u
#define RD_DISTRUST    2u
/* Admission (banner): the LSNs of the last pieces read from the device,
 * one per slot of a direct-mapped table. */
#define RD_GHOST_BITS 16u

/* How an op reads. */
enum {
    RD_DIRECT,   /* O_DIRECT, whole aligned blocks, into the op's own buffer */
    RD_BUFFERED, /* through the page cache, waiting for the device */
};

typedef struct rd_read {
    buf_t reply;
    int fe;
    uint64_t id, tag;
    uint64_t lowest; /* the lowest LSN its holes read */
    uint32_t left;   /* ops not finished */
    int err;
    int next_free;
} rd_read_t;

typedef struct rd_op {
    uint32_t read;
    int stage;    /* RD_* */
    uint64_t seg; /* the segment's start LSN */
    int fd;       /* what it was queued on */
    unsigned char *dst;
    uint64_t len, off; /* bytes still to read, at off in the segment */
    /* RD_DIRECT: the aligned blocks [dio_off, dio_off + dio_len) read
     * into bounce (the op slot's, kept for its next op). */
    unsigned char *bounce;
    size_t bounce_cap;
    uint64_t dio_off, dio_len;
    int next_free;
} rd_op_t;

/* A piece of a hole: len bytes at off in the segment starting at seg, for
 * dst. */
typedef struct rd_piece {
    uint64_t seg, off, len;
    unsigned char *dst;
} rd_piece_t;

struct store_reads {
    struct io_uring ring;
    char *dir;
    uint64_t segment_size;
    unsigned depth;         /* ops at most in flight */
    unsigned nreads, nops;  /* in use */
    unsigned queued;        /* entries not yet submitted */
    int free_read, free_op; /* free lists */
    rd_read_t *reads;
    rd_op_t *ops;
    /* Reads all of whose ops failed before reaching the kernel: reported
     * by the next store_reads_wait. */
    int *early;
    unsigned nearly;
    int wake_fd, wake_armed;
    /* O_DIRECT for what the page cache does not hold (0: through it), and
     * the offset alignment it takes (512, or 4096 once refused). */
    int direct;
    uint64_t align;
    struct {
        uint64_t start;
        int fd, dfd; /* buffered; O_DIRECT; -1 until first needed */
    } fds[RD_FDS];
    /* Each segment's read-only mapping, by segment number from map_base
     * (NULL: not mapped yet; MAP_FAILED: cannot be). */
    unsigned char **maps;
    uint64_t map_base, nmaps;
    /* Residency (banner): trusted, and this window's probes and misses. */
    int trust;
    unsigned holes, probes, misses;
    store_reads_stats_t stats;
    struct rd_piece *pend; /* store_reads_start's pieces to read, depth at most */
    int ring_ok;           /* the io_uring was set up */
    uint64_t *ghost;       /* admission: LSNs read from the device lately */
};

/* ---- copies from a mapping, safe from SIGBUS ---- */

/* Set while a copy from a mapping runs. Volatile, and fenced around the
 * copy: the compiler would otherwise drop the store before the memcpy
 * (nothing it can see reads it) or move the copy past it. */
static sigjmp_buf *volatile rd_copy_jmp;

static void rd_sigbus(int sig, siginfo_t *si, void *uc)
{
    (void)si, (void)uc;
    if (rd_copy_jmp) siglongjmp(*rd_copy_jmp, 1);
    /* Not ours: what SIGBUS does by default. */
    signal(sig, SIG_DFL);
    raise(sig);
}

static void rd_sigbus_install(void)
{
    static int installed;
    if (installed) return;
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = rd_sigbus;
    /* NODEFER: left by siglongjmp, the handler must not leave SIGBUS
     * blocked (a second one would then kill the process). */
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGBUS, &sa, NULL) == 0) installed = 1;
}

/* memcpy from a mapping; -1 when a page could not be read (EIO). */
static int rd_copy(void *dst, const void *src, size_t n)
{
    sigjmp_buf jb;
    if (sigsetjmp(jb, 0)) {
        rd_copy_jmp = NULL;
        return -1;
    }
    rd_copy_jmp = &jb;
    atomic_signal_fence(memory_order_seq_cst);
    memcpy(dst, src, n);
    atomic_signal_fence(memory_order_seq_cst);
    rd_copy_jmp = NULL;
    return 0;
}

store_reads_t *store_reads_open(const char *dir, uint64_t segment_size, unsigned depth, int direct,
                                int wake_fd)
{
    store_reads_t *r = calloc(1, sizeof(*r));
    if (!r) return NULL;
    for (unsigned i = 0; i < RD_FDS; i++)
        r->fds[i].fd = r->fds[i].dfd = -1;
    r->direct = direct;
    r->align = 512;
    r->trust = 0; /* earned by a window of probes that all found the bytes */
    r->dir = strdup(dir);
    r->segment_size = segment_size;
    r->depth = depth;
    r->wake_fd = wake_fd;
    r->reads = calloc(depth, sizeof(*r->reads));
    r->ops = calloc(depth, sizeof(*r->ops));
    r->early = calloc(depth, sizeof(*r->early));
    r->pend = calloc(depth, sizeof(*r->pend));
    r->ghost = calloc((size_t)1 << RD_GHOST_BITS, sizeof(*r->ghost));
    if (!r->dir || !r->reads || !r->ops || !r->early || !r->pend || !r->ghost) {
        store_reads_close(r);
        errno = ENOMEM;
        return NULL;
    }
    for (unsigned i = 0; i < depth; i++) {
        buf_init(&r->reads[i].reply);
        r->reads[i].next_free = i + 1 < depth ? (int)i + 1 : -1;
        r->ops[i].next_free = i + 1 < depth ? (int)i + 1 : -1;
    }
    /* depth ops and the wake-up poll. Single issuer and cooperative task
     * running save IPIs where the kernel has them (6.0, 5.19): the store
     * enters the kernel often, and a sleeping store is woken anyway. */
    int rc = io_uring_queue_init(depth + 1, &r->ring,
                                 IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_COOP_TASKRUN |
                                     IORING_SETUP_TASKRUN_FLAG);
    if (rc == -EINVAL) rc = io_uring_queue_init(depth + 1, &r->ring, 0);
    if (rc < 0) {
        store_reads_close(r);
        errno = -rc;
        return NULL;
    }
    r->ring_ok = 1;
    rd_sigbus_install();
    return r;
}

int store_reads_full(const store_reads_t *r)
{
    return r->free_read < 0 || r->nops >= r->depth;
}

unsigned store_reads_inflight(const store_reads_t *r)
{
    return r->nreads;
}

const store_reads_stats_t *store_reads_stats(const store_reads_t *r)
{
    return &r->stats;
}

/* Put what is queued in the kernel's hands. Returns 0 or -errno. */
static int rd_submit(store_reads_t *r)
{
    if (!r->queued) return 0;
    int rc = io_uring_submit(&r->ring);
    if (rc < 0) return rc;
    r->queued = 0;
    return 0;
}

/* ---- segments: descriptors and mappings ---- */

static void rd_close_slot(store_reads_t *r, unsigned i)
{
    (void)rd_submit(r); /* a queued op may name them (banner) */
    if (r->fds[i].fd >= 0) io->close(r->fds[i].fd);
    if (r->fds[i].dfd >= 0) io->close(r->fds[i].dfd);
    r->fds[i].fd = r->fds[i].dfd = -1;
}

/* The descriptor of the segment starting at start (opened on first use),
 * its O_DIRECT one when direct. */
static int rd_fd(store_reads_t *r, uint64_t start, int direct)
{
    unsigned i = (unsigned)((start / r->segment_size) % RD_FDS);
    if (r->fds[i].start != start) rd_close_slot(r, i);
    r->fds[i].start = start;
    int *slot = direct ? &r->fds[i].dfd : &r->fds[i].fd;
    if (*slot >= 0) return *slot;
    char path[4096];
    seg_path(path, sizeof(path), r->dir, start);
    int fd = io->open(path, O_RDONLY | O_CLOEXEC | (direct ? O_DIRECT : 0), 0);
    if (fd < 0) {
        if (direct && errno == EINVAL) { /* the file system has no O_DIRECT */
            log_info("store: %s cannot be read with O_DIRECT: values are read through the "
                     "page cache only",
                     path);
            r->direct = 0;
        } else {
            log_warn("store: cannot open %s: %s", path, strerror(errno));
        }
        return -1;
    }
    /* Values are read at random places: readahead would only read (and
     * cache, in place of what is wanted) bytes nobody asked for. */
    if (!direct) (void)posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
    *slot = fd;
    return fd;
}

/* The mapping of the segment starting at start, or NULL (it cannot be
 * mapped: its bytes are then always read). */
static unsigned char *rd_map(store_reads_t *r, uint64_t start)
{
    uint64_t n = start / r->segment_size;
    if (!r->nmaps || n < r->map_base || n >= r->map_base + r->nmaps) {
        /* Grow the table to cover n (the log only grows at its end and
         * loses segments at its start: the table slides with it). */
        uint64_t lo = r->nmaps && r->map_base < n ? r->map_base : n;
        uint64_t hi = r->nmaps && r->map_base + r->nmaps > n + 1 ? r->map_base + r->nmaps : n + 1;
        uint64_t cap = hi - lo + 16;
        unsigned char **m = calloc(cap, sizeof(*m));
        if (!m) return NULL;
        if (r->nmaps) memcpy(m + (r->map_base - lo), r->maps, r->nmaps * sizeof(*m));
        free(r->maps);
        r->maps = m;
        r->map_base = lo;
        r->nmaps = cap;
    }
    unsigned char **slot = &r->maps[n - r->map_base];
    if (*slot == MAP_FAILED) return NULL;
    if (*slot) return *slot;
    char path[4096];
    seg_path(path, sizeof(path), r->dir, start);
    int fd = io->open(path, O_RDONLY | O_CLOEXEC, 0);
    void *p = MAP_FAILED;
    if (fd >= 0) {
        p = mmap(NULL, r->segment_size, PROT_READ, MAP_SHARED, fd, 0);
        io->close(fd); /* the mapping keeps the file */
    }
    if (p == MAP_FAILED) {
        log_warn("store: cannot map %s (%s): its values are read, not copied", path,
                 strerror(errno));
        *slot = MAP_FAILED;
        return NULL;
    }
    /* A fault reads only its page: neighbours are other keys' values. */
    (void)madvise(p, r->segment_size, MADV_RANDOM);
    *slot = p;
    return p;
}

/* Whether the page cache holds bytes [off, off + len) of the mapping m
 * (banner: probed, or trusted). */
static int rd_resident(store_reads_t *r, const unsigned char *m, uint64_t off, uint64_t len)
{
    if (r->trust && ++r->holes % RD_PROBE_EVERY) return 1;
    uint64_t first = off & ~(uint64_t)(RD_PAGE - 1);
    uint64_t pages = (off + len - first + RD_PAGE - 1) / RD_PAGE;
    unsigned char vec[64];
    int all = 1;
    for (uint64_t p = 0; p < pages && all; p += sizeof(vec)) {
        uint64_t k = pages - p < sizeof(vec) ? pages - p : sizeof(vec);
        if (mincore((void *)(m + first + p * RD_PAGE), k * RD_PAGE, vec)) return 0;
        for (uint64_t i = 0; i < k; i++)
            if (!(vec[i] & 1)) all = 0;
    }
    r->stats.probes++;
    r->probes++;
    if (!all) r->misses++;
    if (r->trust && r->misses >= RD_DISTRUST) {
        r->trust = 0; /* at once: each hole assumed now may stall the store */
        r->probes = r->misses = 0;
    } else if (r->probes == RD_WINDOW) {
        if (!r->trust && r->misses == 0) r->trust = 1;
        r->probes = r->misses = 0;
    }
    return all;
}

/* Whether the piece at lsn, which the page cache lacks, is read through it
 * (so that it stays there) rather than with O_DIRECT: when it was read from
 * the device lately too (banner). A value read once in a while is not
 * worth the page it would take from others; one read again soon is. */
static int rd_admit(store_reads_t *r, uint64_t lsn)
{
    uint64_t *slot = &r->ghost[(lsn * 0x9E3779B97F4A7C15ull) >> (64 - RD_GHOST_BITS)];
    if (*slot == lsn + 1) {
        r->stats.admitted++;
        return 1;
    }
    *slot = lsn + 1; /* + 1: slot 0 means empty, LSN 0 is a valid one */
    return 0;
}

/* ---- ops ---- */

/* An aligned buffer of at least n bytes for op's O_DIRECT read. */
static int rd_bounce(rd_op_t *op, size_t n)
{
    if (op->bounce_cap >= n) return 0;
    free(op->bounce);
    op->bounce = NULL;
    op->bounce_cap = 0;
    void *p;
    if (posix_memalign(&p, RD_PAGE, n)) return -1;
    op->bounce = p;
    op->bounce_cap = n;
    return 0;
}

/* Queue op for reading at its stage. Returns 0 or -1 (its segment cannot
 * be opened, or no memory). */
static int rd_queue(store_reads_t *r, int opi)
{
    rd_op_t *op = &r->ops[opi];
    if (op->stage == RD_DIRECT && !r->direct) op->stage = RD_BUFFERED;
    int fd = rd_fd(r, op->seg, op->stage == RD_DIRECT);
    if (fd < 0 && op->stage == RD_DIRECT && !r->direct) {
        op->stage = RD_BUFFERED;
        fd = rd_fd(r, op->seg, 0);
    }
    if (fd < 0) return -1;
    void *into = op->dst;
    uint64_t n = op->len, at = op->off;
    if (op->stage == RD_DIRECT) {
        op->dio_off = op->off & ~(r->align - 1);
        op->dio_len = ((op->off + op->len + r->align - 1) & ~(r->align - 1)) - op->dio_off;
        if (rd_bounce(op, (size_t)op->dio_len)) return -1;
        into = op->bounce;
        n = op->dio_len;
        at = op->dio_off;
    }
    struct io_uring_sqe *sqe = io_uring_get_sqe(&r->ring);
    if (!sqe) { /* not reached: the ring has room for every op */
        (void)rd_submit(r);
        if (!(sqe = io_uring_get_sqe(&r->ring))) return -1;
    }
    op->fd = fd;
    io_uring_prep_read(sqe, fd, into, (unsigned)n, at);
    io_uring_sqe_set_data64(sqe, (uint64_t)opi);
    r->queued++;
    return 0;
}

/* Op's read ended with res; returns 1 when every byte it had to read is
 * in place, 0 when it goes on (queued again), -errno on a failure. */
static int rd_step(store_reads_t *r, int opi, int res)
{
    rd_op_t *op = &r->ops[opi];
    if (op->stage == RD_DIRECT && res == -EINVAL) {
        /* The device's blocks are larger than the alignment tried. */
        if (r->align < RD_PAGE)
            r->align = RD_PAGE;
        else
            r->direct = 0;
        return rd_queue(r, opi) ? -EIO : 0;
    }
    if (res == -EINTR || res == -EAGAIN) return rd_queue(r, opi) ? -EIO : 0;
    res = io->read_end(op->fd, res);
    if (res < 0) return res;
    uint64_t got = (uint64_t)res;
    if (op->stage == RD_DIRECT) {
        /* Bytes of the wanted range the blocks read cover. */
        uint64_t skip = op->off - op->dio_off;
        got = got > skip ? got - skip : 0;
        if (got > op->len) got = op->len;
        memcpy(op->dst, op->bounce + skip, (size_t)got);
    }
    if (got >= op->len) return 1;
    if (got == 0) return -EIO; /* the segment ended early */
    op->dst += got;            /* a short read goes on where it stopped */
    op->off += got;
    op->len -= got;
    return rd_queue(r, opi) ? -EIO : 0;
}

int store_reads_start(store_reads_t *r, const st_defer_t *d, buf_t *reply, int fe, uint64_t id,
                      uint64_t tag)
{
    /* First what the page cache holds, copied now; the rest is counted. */
    unsigned need = 0;
    for (uint32_t i = 0; i < d->n; i++) {
        const st_hole_t *h = &d->hole[i];
        uint64_t lsn = h->lsn, len = h->len;
        unsigned char *dst = (unsigned char *)reply->data + h->off;
        while (len > 0) {
            uint64_t seg = lsn - lsn % r->segment_size, off = lsn - seg;
            uint64_t take = r->segment_size - off < len ? r->segment_size - off : len;
            unsigned char *m = rd_map(r, seg);
            if (m && rd_resident(r, m, off, take) && rd_copy(dst, m + off, (size_t)take) == 0) {
                r->stats.copied++;
            } else {
                /* Read in flight, unless there is no room for it (then
                 * the caller reads every hole itself). */
                if (need < r->depth) r->pend[need] = (rd_piece_t){seg, off, take, dst};
                need++;
            }
            lsn += take;
            dst += take;
            len -= take;
        }
    }
    if (!need) return 1;
    if (r->free_read < 0 || r->nops + need > r->depth) return -EAGAIN;
    int xi = r->free_read;
    rd_read_t *x = &r->reads[xi];
    r->free_read = x->next_free;
    r->nreads++;
    /* The reply is taken (its bytes stay where they are); the caller gets
     * this slot's old, empty buffer. */
    buf_t spare = x->reply;
    x->reply = *reply;
    buf_reset(&spare);
    *reply = spare;
    x->fe = fe;
    x->id = id;
    x->tag = tag;
    x->lowest = d->lowest;
    x->left = need;
    x->err = 0;
    for (unsigned k = 0; k < need; k++) {
        const rd_piece_t *p = &r->pend[k];
        int opi = r->free_op;
        rd_op_t *op = &r->ops[opi];
        r->free_op = op->next_free;
        r->nops++;
        op->read = (uint32_t)xi;
        op->stage = r->direct && !rd_admit(r, p->seg + p->off) ? RD_DIRECT : RD_BUFFERED;
        op->seg = p->seg;
        op->dst = p->dst;
        op->len = p->len;
        op->off = p->off;
        op->next_free = -1;
        r->stats.device++;
        if (rd_queue(r, opi)) {
            /* Finished at once, failed: reported with the others. */
            x->err = EIO;
            op->next_free = r->free_op;
            r->free_op = opi;
            r->nops--;
            x->left--;
        }
    }
    if (!x->left) r->early[r->nearly++] = xi;
    return 0;
}

void store_reads_submit(store_reads_t *r)
{
    int rc = rd_submit(r);
    if (rc < 0) log_warn("store: io_uring submit: %s", strerror(-rc));
}

int store_reads_ready(store_reads_t *r)
{
    return r->nearly || io_uring_cq_ready(&r->ring) > 0 ||
           (IO_URING_READ_ONCE(*r->ring.sq.kflags) & IORING_SQ_TASKRUN);
}

/* A read whose ops all finished: reported, then its slot freed. */
static int rd_report(store_reads_t *r, int xi, store_reads_done_fn done, void *arg)
{
    rd_read_t *x = &r->reads[xi];
    int rc = done(arg, x->fe, x->id, x->tag, &x->reply, x->err);
    if (x->reply.cap > RD_KEEP_BYTES) {
        buf_free(&x->reply);
        buf_init(&x->reply);
    }
    buf_reset(&x->reply);
    x->next_free = r->free_read;
    r->free_read = xi;
    r->nreads--;
    return rc;
}

int store_reads_wait(store_reads_t *r, int timeout_ms, store_reads_done_fn done, void *arg)
{
    /* The wake-up poll only for a wait that sleeps: when busy, the loop
     * looks at its channels anyway. */
    int rc = uring_submit_wait(&r->ring, &r->queued, timeout_ms ? r->wake_fd : -1, &r->wake_armed,
                               timeout_ms);
    if (rc < 0) log_warn("store: io_uring submit: %s", strerror(-rc));
    int reported = 0;
    struct io_uring_cqe *cqe;
    while (io_uring_peek_cqe(&r->ring, &cqe) == 0) {
        uint64_t tag = io_uring_cqe_get_data64(cqe);
        int res = cqe->res;
        io_uring_cqe_seen(&r->ring, cqe);
        if (tag == URING_TAG_WAKE) {
            uring_woken(r->wake_fd, &r->wake_armed);
            continue;
        }
        int opi = (int)tag;
        rd_op_t *op = &r->ops[opi];
        rd_read_t *x = &r->reads[op->read];
        int step = rd_step(r, opi, res);
        if (step == 0) continue;
        if (step < 0 && !x->err) {
            x->err = -step;
            log_warn("store: reading %" PRIu64 " bytes at LSN %" PRIu64 ": %s", op->len,
                     op->seg + op->off, strerror(x->err));
        }
        if (op->bounce_cap > RD_BOUNCE_KEEP) {
            free(op->bounce);
            op->bounce = NULL;
            op->bounce_cap = 0;
        }
        uint32_t xi = op->read;
        op->next_free = r->free_op;
        r->free_op = opi;
        r->nops--;
        if (--x->left == 0) {
            reported++;
            if (rd_report(r, (int)xi, done, arg)) return -1;
        }
    }
    /* Ops that go on (a short read, another alignment) leave now. */
    (void)rd_submit(r);
    while (r->nearly) {
        reported++;
        if (rd_report(r, r->early[--r->nearly], done, arg)) return -1;
    }
    return reported;
}

uint64_t store_reads_lowest(const store_reads_t *r)
{
    uint64_t low = UINT64_MAX;
    if (!r->nreads) return low;
    for (unsigned i = 0; i < r->depth; i++)
        if (r->reads[i].left && r->reads[i].lowest < low) low = r->reads[i].lowest;
    return low;
}

void store_reads_forget(store_reads_t *r, uint64_t lsn)
{
    for (unsigned i = 0; i < RD_FDS; i++)
        if ((r->fds[i].fd >= 0 || r->fds[i].dfd >= 0) && r->fds[i].start < lsn) rd_close_slot(r, i);
    uint64_t below = lsn / r->segment_size;
    for (uint64_t k = 0; k < r->nmaps && r->map_base + k < below; k++) {
        if (r->maps[k] && r->maps[k] != MAP_FAILED) munmap(r->maps[k], r->segment_size);
        r->maps[k] = NULL;
    }
}

void store_reads_close(store_reads_t *r)
{
    if (!r) return;
    if (r->ring_ok) {
        /* The kernel writes into the replies' buffers until each op ends. */
        (void)rd_submit(r);
        while (r->nops) {
            struct io_uring_cqe *cqe;
            if (io_uring_wait_cqe(&r->ring, &cqe)) break;
            uint64_t tag = io_uring_cqe_get_data64(cqe);
            io_uring_cqe_seen(&r->ring, cqe);
            if (tag == URING_TAG_WAKE) continue;
            r->nops--;
        }
        io_uring_queue_exit(&r->ring);
    }
    for (unsigned i = 0; r->reads && r->ops && i < r->depth; i++) {
        buf_free(&r->reads[i].reply);
        free(r->ops[i].bounce);
    }
    for (unsigned i = 0; i < RD_FDS; i++) {
        if (r->fds[i].fd >= 0) io->close(r->fds[i].fd);
        if (r->fds[i].dfd >= 0) io->close(r->fds[i].dfd);
    }
    for (uint64_t k = 0; k < r->nmaps; k++)
        if (r->maps[k] && r->maps[k] != MAP_FAILED) munmap(r->maps[k], r->segment_size);
    free(r->maps);
    free(r->reads);
    free(r->ops);
    free(r->early);
    free(r->pend);
    free(r->ghost);
    free(r->dir);
    free(r);
}

#else /* !HAVE_LIBURING */

store_reads_t *store_reads_open(const char *dir, uint64_t segment_size, unsigned depth, int direct,
                                int wake_fd)
{
    (void)dir, (void)segment_size, (void)depth, (void)direct, (void)wake_fd;
    errno = ENOSYS;
    return NULL;
}

void store_reads_close(store_reads_t *r)
{
    (void)r;
}

int store_reads_full(const store_reads_t *r)
{
    (void)r;
    return 1;
}

unsigned store_reads_inflight(const store_reads_t *r)
{
    (void)r;
    return 0;
}

const store_reads_stats_t *store_reads_stats(const store_reads_t *r)
{
    static const store_reads_stats_t none;
    (void)r;
    return &none;
}

int store_reads_start(store_reads_t *r, const st_defer_t *d, buf_t *reply, int fe, uint64_t id,
                      uint64_t tag)
{
    (void)r, (void)d, (void)reply, (void)fe, (void)id, (void)tag;
    return -EAGAIN;
}

void store_reads_submit(store_reads_t *r)
{
    (void)r;
}

int store_reads_wait(store_reads_t *r, int timeout_ms, store_reads_done_fn done, void *arg)
{
    (void)r, (void)timeout_ms, (void)done, (void)arg;
    return 0;
}

int store_reads_ready(store_reads_t *r)
{
    (void)r;
    return 0;
}

uint64_t store_reads_lowest(const store_reads_t *r)
{
    (void)r;
    return UINT64_MAX;
}

void store_reads_forget(store_reads_t *r, uint64_t lsn)
{
    (void)r, (void)lsn;
}

#endif
