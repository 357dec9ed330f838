/*
 * store.c - the store process (store.h): replays the log, then applies
 * durable records from the ring and answers the frontends' read requests.
 *
 * Runs in the store process, single-threaded; the state machine itself is
 * store-internal.h (store/route.c, store/state.c and what they call).
 * Invariants:
 *   - Records are applied in LSN order, each once, and only below
 *     shm->durable_lsn: the state is always a prefix of the durable log.
 *   - ring->tail (our ring_release) is advanced only after the replies of the
 *     records below it are in the reply channels. A new store incarnation
 *     replays the log silently up to ring_released() (tail, or further when
 *     its predecessor died inside ring_release and the ring may have lost
 *     records below it) and applies (and answers) from there through the
 *     ring, so no write reply is lost when the store dies; some may be sent
 *     twice, with the same id (the record's LSN), which the frontend ignores.
 *   - A read request is answered only once applied >= its min_lsn
 *     (ARCHITECTURE.md, contract 3), and consumed from its channel only
 *     once its reply is sent: no request lives in this process alone, so a
 *     new incarnation answers whatever its predecessor had not (the
 *     frontend drops a second reply to the same id). One that must wait
 *     stays at the head of its channel; the requests behind it were sent
 *     later and need at least as much (docs/DECISIONS.md, D19).
 *   - A read whose value's bytes are read in flight (store/reads.c, D59)
 *     is answered once they are in; meanwhile the requests after it are
 *     taken and answered too (each frontend's fe_queue_t: a cursor into
 *     the channel), and requests are consumed in channel order once
 *     answered, so the rule above holds for each. The log those reads
 *     read is kept from compaction (streams_pin).
 *   - Replies to a live frontend are never dropped: a full reply channel
 *     makes the store wake that frontend and retry.
 * A crash of the store loses nothing: the master restarts it and it rebuilds
 * its state from its newest valid checkpoint and the log after it
 * (store/checkpoint.c, which also writes them from a forked child). While
 * it is down, writes keep being made durable but their replies wait for the
 * new incarnation.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "chan.h"
#include "checkpoint.h"
#include "command.h"
#include "compact.h"
#include "evict.h"
#include "io_fault.h"
#include "log.h"
#include "pager.h"
#include "rcache.h"
#include "reads.h"
#include "record.h"
#include "resp.h"
#include "ring.h"
#include "save.h"
#include "seg.h"
#include "shm.h"
#include "store-internal.h"
#include "store/request-parts.h"
#include "store/core/alloc.h"
#include "store/core/block.h"
#include "store/core/hash.h"
#include "store/core/object.h"
#include "store/core/value.h"
#include "store/core/watch.h"
#include "store.h"

#define STORE_APPLY_BATCH     1024 /* records between serving request channels */
#define STORE_SERVE_BATCH     256  /* requests per frontend per round */
#define STORE_IDLE_WAIT_MS    100  /* to notice shutdown and master death */
#define STORE_SHUTDOWN_IDLE   10   /* idle waits before giving up on a live logger */
#define STORE_MAINTAIN_BUDGET 64
/* The largest reply the store builds (a GET of a value up to the default
 * proto-max-bulk-len, with room to spare); the frontend holds it whole. */
#define STORE_MAX_REPLY (1024ull * 1024 * 1024)
#define STORE_TICK_MS   1000 /* apply clock lag that asks for a CMD_TICK */
/* Reads of values in flight at most (read-io uring, D59), and holes one
 * reply may leave (past them its bytes are read at once). */
#define STORE_READS_DEPTH 256
#define STORE_READ_HOLES  64
#define STORE_QUEUE_CAP   1024 /* requests of one frontend taken, not yet consumed */
#define STORE_IDLE_SKIP   32   /* idle turns with reads in flight per idle work done */

/* A frontend's request channel as the store works through it: requests
 * are taken in order from `cursor`, answered (at once, or once their
 * values are read), and consumed in order once answered, so the oldest
 * still unanswered keeps everything after it in the channel for a
 * successor store (see the banner). Counts run from this store's start. */
typedef struct fe_queue {
    uint64_t cursor;          /* where the next request to take is */
    uint64_t taken, consumed; /* requests taken, and consumed of them */
    uint8_t done[STORE_QUEUE_CAP];
} fe_queue_t;

typedef struct store_proc {
    shm_t *shm;
    ring_t *ring;
    store_ctx_t *ctx;
    uint64_t applied;
    int nfe;
    uint64_t wake_mask; /* frontends that got replies since the last wake */
    int64_t last_tick_request_ms;
    buf_t out;
    /* Frontends whose oldest request waits for a record that is not
     * durable yet (none should: see serve_requests). */
    uint64_t held_mask;
    store_ckpt_sched_t ckpt;   /* checkpoints (store/checkpoint.c) */
    store_compact_t compact;   /* deleting log segments (store/compact.c) */
    store_backup_t backup;     /* SAVE and BGSAVE (store/save.c) */
    uint64_t reloc_tokens;     /* value bytes relocation may write now */
    uint64_t reloc_space_seen; /* compact.space_written when last looked */
    store_pager_t pager;       /* large hashes and sets into pages (store/pager.c, D60) */
    int64_t last_release_ms;   /* st_alloc_release when idle */
    uint64_t page_tokens;      /* page bytes the pager may write now */
    uint64_t page_space_seen;  /* pager.space_written when last looked */
    int notify_wake;           /* keyspace events went into the Pub/Sub ring */
    store_evict_t evict;       /* eviction under maxmemory (store/evict.c) */
    uint64_t evicted_at_start; /* evictions the replay applied (not this run's) */
    uint64_t expired_at_start; /* keys the replay expired (not this run's) */
    /* Large values' replies in parts, each sent as its frontend asks (D48). */
    struct reply_stream *streams;
    int nstreams, cap_streams;
    uint64_t stream_count;    /* for the tokens */
    store_req_parts_t *parts; /* per frontend: a read request in parts (D58) */
    /* Reads of values in flight (store/reads.c, D59; NULL: read-io pread
     * or no io_uring), the holes a read's reply leaves for them, and the
     * request channels' queues. */
    store_reads_t *reads;
    st_defer_t defer;
    fe_queue_t *queues;
    int idle_skipped; /* idle turns without the idle work, reads in flight */
    /* The log's start + 1 when the last idle checkpoint was asked for
     * (early_checkpoint, D79); 0: none yet. */
    uint64_t idle_ckpt_start;
} store_proc_t;

/* One large value's reply in parts: bytes [0, off) of the bulk (its value
 * and "\r\n") are sent. */
typedef struct reply_stream {
    int fe;
    int32_t fe_pid; /* dropped when its frontend is no longer this process */
    uint32_t kind;  /* STORE_REPLY_READ, or STORE_REPLY_WRITE (id an LSN) */
    uint64_t id, token, off;
    store_vsnap_t *v;
} reply_stream_t;

#define STORE_PART_BYTES (1u << 20) /* value bytes per part, at most */

/* The shared memory of this process, for master_gone(). */
static const shm_t *store_shm;

static int master_gone(void)
{
    return !shm_master_alive(store_shm);
}

/*
 * Put one reply into frontend fe's reply channel, in parts when it is larger
 * than one message (STORE_REPLY_MORE/CONT, shm.h), waiting for the frontend
 * to make room. Returns 0 (sent, or dropped because the frontend is dead) or
 * -1 when the master is gone. The state machine refuses to build replies
 * over STORE_MAX_REPLY (store_set_max_reply).
 */
/* Put one message (hdr, then data[0, hdr->len)) into frontend fe's reply
 * channel, waiting for room. Returns 0 (sent, or dropped because the
 * frontend is dead) or -1 when the master is gone. */
static int put_message(store_proc_t *s, int fe, const store_reply_t *hdr, const void *data)
{
    chan_t *c = shm_from_store(s->shm, fe);
    for (;;) {
        unsigned char *p = chan_reserve(c, (uint32_t)(sizeof(*hdr) + hdr->len));
        if (p) {
            memcpy(p, hdr, sizeof(*hdr));
            memcpy(p + sizeof(*hdr), data, hdr->len);
            chan_publish(c);
            s->wake_mask |= 1ull << fe;
            return 0;
        }
        if (atomic_load(&s->shm->fe[fe].pid) == 0) return 0; /* nobody to read it */
        if (master_gone()) return -1;
        /* While we wait, let producers have the ring space whose replies
         * are all sent (everything below this write; everything applied,
         * for a read): a frontend blocked on a full ring must not wait for
         * us while we wait for it. */
        ring_release(s->ring,
                     STORE_REPLY_KIND(hdr->kind) == STORE_REPLY_WRITE ? hdr->id : s->applied);
        shm_wake(&s->shm->fe[fe].wake);
        struct timespec ts = {0, 20 * 1000};
        nanosleep(&ts, NULL);
    }
}

static int send_reply(store_proc_t *s, int fe, uint64_t id, uint32_t kind, const buf_t *body)
{
    chan_t *c = shm_from_store(s->shm, fe);
    const char *data = body->data;
    size_t len = body->len;
    size_t room = chan_max_msg(c) - sizeof(store_reply_t);
    size_t off = 0;
    do {
        size_t n = len - off > room ? room : len - off;
        store_reply_t hdr = {.id = id, .len = (uint32_t)n, .kind = kind};
        if (off > 0) hdr.kind |= STORE_REPLY_CONT;
        if (off + n < len) hdr.kind |= STORE_REPLY_MORE;
        if (put_message(s, fe, &hdr, data + off)) return -1;
        off += n;
    } while (off < len);
    return 0;
}

static void wake_frontends(store_proc_t *s)
{
    while (s->wake_mask) {
        int i = __builtin_ctzll(s->wake_mask);
        s->wake_mask &= s->wake_mask - 1;
        shm_wake(&s->shm->fe[i].wake);
    }
}

/* INFO expired_keys (this run's), keyspace_hits and keyspace_misses. */
static void publish_stats(store_proc_t *s)
{
    uint64_t expired, hits, misses;
    store_stat_counts(s->ctx, &expired, &hits, &misses);
    atomic_store_explicit(&s->shm->expired_keys, expired - s->expired_at_start,
                          memory_order_relaxed);
    atomic_store_explicit(&s->shm->keyspace_hits, hits, memory_order_relaxed);
    atomic_store_explicit(&s->shm->keyspace_misses, misses, memory_order_relaxed);
    if (s->reads) {
        const store_reads_stats_t *rs = store_reads_stats(s->reads);
        atomic_store_explicit(&s->shm->value_reads_cached, rs->copied, memory_order_relaxed);
        atomic_store_explicit(&s->shm->value_reads_device, rs->device, memory_order_relaxed);
    }
}

static void publish_counts(store_proc_t *s)
{
    atomic_store_explicit(&s->shm->store_keys, store_key_count(s->ctx), memory_order_relaxed);
    atomic_store_explicit(&s->shm->store_expires, store_expire_count(s->ctx), memory_order_relaxed);
    atomic_store_explicit(&s->shm->store_index_bytes, store_index_bytes(s->ctx),
                          memory_order_relaxed);
    atomic_store_explicit(&s->shm->store_table_bytes, store_table_bytes(s->ctx),
                          memory_order_relaxed);
    for (int i = 0; i < s->nfe; i++) {
        uint32_t n = st_block_count(s->ctx) ? st_block_count_origin(s->ctx, (uint16_t)(i + 1)) : 0;
        if (atomic_load_explicit(&s->shm->fe[i].store_waiters, memory_order_relaxed) != n)
            atomic_store(&s->shm->fe[i].store_waiters, n);
    }
    atomic_store_explicit(&s->shm->evicted_keys, store_evicted(s->ctx) - s->evicted_at_start,
                          memory_order_relaxed);
    publish_stats(s);
    int ndb = store_db_count(s->ctx);
    for (int i = 0; i < ndb && i < 256; i++) {
        uint64_t keys, expires;
        store_db_stats(s->ctx, i, &keys, &expires);
        atomic_store_explicit(&s->shm->db_keys[i], keys, memory_order_relaxed);
        atomic_store_explicit(&s->shm->db_expires[i], expires, memory_order_relaxed);
    }
    atomic_store_explicit(&s->shm->store_counts_lsn, s->applied, memory_order_release);
}

/* Ask a frontend for a CMD_TICK record, at most once per STORE_TICK_MS. */
static void ask_tick(store_proc_t *s)
{
    int64_t now = shm_now_ms();
    if (now - s->last_tick_request_ms < STORE_TICK_MS) return;
    s->last_tick_request_ms = now;
    atomic_store(&s->shm->tick_wanted, 1);
}

/* Keys with a TTL are reclaimed by the apply clock (store/state.c), which only
 * records move. While no client writes, ask for a tick about once a
 * second, so expired keys still go. */
static void want_tick(store_proc_t *s)
{
    if (!store_expire_count(s->ctx)) return;
    if (shm_now_ms() - store_now(s->ctx) < STORE_TICK_MS) return;
    ask_tick(s);
}

/* ---- keyspace notifications (D37) ---- */

/* An event's message into the Pub/Sub ring, when anyone listens. */
static void notify_publish(void *arg, const char *chan, size_t clen, const char *msg, size_t mlen)
{
    store_proc_t *s = arg;
    ps_shm_t *ps = shm_pubsub(s->shm);
    if (!ps_channel_subscribers(ps, PS_CHANNEL, chan, clen, s->nfe, -1) &&
        !ps_pattern_matches(ps, chan, clen, s->nfe, -1))
        return;
    if (ps_publish(ps, PS_CHANNEL, PS_ORIGIN_STORE, chan, clen, msg, mlen)) s->notify_wake = 1;
}

/* Before the record [lsn, end) is applied (replayed or live): publish its
 * events only when nobody did (shm notify_lsn, see shm.h). The mark moves
 * past it first, so a store killed while publishing loses the rest of
 * this record's events rather than sending any of them twice (Pub/Sub is
 * at most once, as in Redis). */
static void notify_arm(store_proc_t *s, uint64_t lsn, uint64_t end)
{
    uint64_t from = atomic_load_explicit(&s->shm->notify_lsn, memory_order_relaxed);
    uint32_t flags = atomic_load_explicit(&s->shm->notify_flags, memory_order_relaxed);
    int publish = from != UINT64_MAX && lsn >= from;
    if (publish) atomic_store(&s->shm->notify_lsn, end);
    store_set_notify_flags(s->ctx, publish ? flags : 0);
}

static void notify_done(store_proc_t *s)
{
    store_set_notify_flags(s->ctx, 0);
}

/* Wake the frontends for what went into the ring, and remember which
 * expiries were published. */
static void notify_flush(store_proc_t *s)
{
    int64_t max = store_notify_expired_max(s->ctx);
    if (max > atomic_load_explicit(&s->shm->notify_expired_ms, memory_order_relaxed))
        atomic_store(&s->shm->notify_expired_ms, max);
    if (!s->notify_wake) return;
    s->notify_wake = 0;
    shm_wake_pubsub(s->shm, -1);
}

/* Replay the log from start to end (the previous incarnation's progress)
 * without replies. Returns 0 or EXIT_FATAL. */
static int replay(store_proc_t *s, const config_t *cfg, uint64_t start, uint64_t end)
{
    if (start > end) {
        log_warn("store: log starts at LSN %" PRIu64 " after the ring tail %" PRIu64, start, end);
        return EXIT_FATAL;
    }
    seg_reader_t r;
    if (seg_reader_open(&r, cfg->dir, cfg->segment_size, start)) {
        log_warn("store: cannot read the log: %s", strerror(errno));
        return EXIT_FATAL;
    }
    uint64_t t0 = shm_mono_ns(), records = 0;
    int rc = 0;
    while (r.lsn < end) {
        /* Named by the master if this record kills us (master.c). */
        atomic_store_explicit(&s->shm->store_replay_lsn, r.lsn, memory_order_relaxed);
        const void *rec;
        int64_t n = seg_reader_next(&r, &rec);
        if (n <= 0) {
            /* The logger recovered the log up to at least `end`: anything
             * missing or torn below it is damage, not a torn tail. */
            log_warn("store: the log is %s at LSN %" PRIu64 " (replaying up to %" PRIu64 ")%s%s",
                     n == REC_EMPTY  ? "missing"
                     : n == REC_TORN ? "corrupt"
                                     : "unreadable",
                     r.lsn, end, n == -3 ? ": " : "", n == -3 ? strerror(errno) : "");
            rc = EXIT_FATAL;
            break;
        }
        notify_arm(s, r.lsn - (uint64_t)n, r.lsn);
        int applied = store_apply(s->ctx, rec, NULL);
        notify_done(s);
        if (applied < 0) {
            log_warn("store: bad record at LSN %" PRIu64, r.lsn - (uint64_t)n);
            rc = EXIT_FATAL;
            break;
        }
        if ((++records & 0xffff) == 0 && master_gone()) break;
    }
    if (rc == 0 && r.lsn != end && !master_gone()) {
        log_warn("store: replay ended at LSN %" PRIu64 ", not at the ring tail %" PRIu64, r.lsn,
                 end);
        rc = EXIT_FATAL;
    }
    seg_reader_close(&r);
    if (rc == 0) {
        store_set_applied(s->ctx, end);
        s->applied = end;
        log_info("store: replayed %" PRIu64 " records (LSN %" PRIu64 "..%" PRIu64
                 ") in %.2f s: %" PRIu64 " keys",
                 records, start, end, (double)(shm_mono_ns() - t0) / 1e9, store_key_count(s->ctx));
    }
    return rc;
}

/* The replies of blocked clients a record served or unblocked
 * (core/block.c), to their own frontends, with their blocking records'
 * LSNs as ids; before the record's ring space is released, like its own
 * reply. */
typedef struct block_send {
    store_proc_t *s;
    int failed;
} block_send_t;

static void send_block_reply(void *arg, uint16_t origin, uint64_t id, const buf_t *body)
{
    block_send_t *b = arg;
    if (!b->failed && origin >= 1 && origin <= b->s->nfe &&
        send_reply(b->s, origin - 1, id, STORE_REPLY_WRITE, body))
        b->failed = 1;
}

/* A client's write (not the server's own ticks and relocations):
 * rdb_changes_since_last_save (store/save.c). */
static cmd_id_t rec_op(const unsigned char *rec)
{
    uint16_t opdb;
    memcpy(&opdb, rec + REC_HDR_SIZE, sizeof(opdb));
    return REC_OP(opdb);
}

/* A write whose reply may be a large value's, in parts (D48): a record of
 * its own, never one inside an EXEC (the transaction's reply stays whole). */
static int reply_parts_op(cmd_id_t op)
{
    return op == CMD_GETDEL || op == CMD_GETEX || op == CMD_SET;
}

static void count_change(store_proc_t *s, const unsigned char *rec)
{
    cmd_id_t op = rec_op(rec);
    /* A large value counts once, by its final record (D31); evictions are
     * the server's own. */
    if (op != CMD_TICK && op != CMD_RELOCATE && op != CMD_CHUNK && op != CMD_BIGABORT &&
        op != CMD_EVICT)
        s->backup.records++;
}

#define STORE_OUT_KEEP (4u << 20)

static void out_shrink(struct store_proc *s);
static int stream_begin(store_proc_t *s, int fe, uint32_t kind, uint64_t id, store_vsnap_t *v);

/* Apply up to STORE_APPLY_BATCH durable records from the ring, sending the
 * replies their frontends wait for. Returns records applied, or -1 (fatal:
 * logged, or the master is gone). */
static int apply_ring(store_proc_t *s)
{
    uint64_t durable = atomic_load_explicit(&s->shm->durable_lsn, memory_order_acquire);
    int n = 0;
    while (s->applied < durable && n < STORE_APPLY_BATCH) {
        const unsigned char *rec = ring_ptr(s->ring, s->applied);
        rec_hdr_t h;
        memcpy(&h, rec, sizeof(h));
        if (h.lsn != s->applied || h.len < REC_HDR_SIZE) {
            log_warn("store: ring holds no record at durable LSN %" PRIu64, s->applied);
            return -1;
        }
        int rc;
        notify_arm(s, h.lsn, h.lsn + rec_space(h.len - REC_HDR_SIZE));
        if (h.type == REC_CMD && h.origin != 0) {
            buf_reset(&s->out);
            int parts = h.origin <= s->nfe && reply_parts_op(rec_op(rec));
            store_set_reply_parts(s->ctx, parts);
            rc = store_apply(s->ctx, rec, &s->out);
            store_set_reply_parts(s->ctx, 0);
            store_vsnap_t *v = store_take_reply_parts(s->ctx);
            /* A blocking record that queued its client has no reply yet. */
            int deferred = st_block_take_deferred(s->ctx);
            if (v && (rc < 0 || deferred)) {
                store_vsnap_free(v);
                v = NULL;
            }
            if (v && stream_begin(s, h.origin - 1, STORE_REPLY_WRITE, h.lsn, v)) return -1;
            if (!v && rc >= 0 && h.origin <= s->nfe && !deferred &&
                send_reply(s, h.origin - 1, h.lsn, STORE_REPLY_WRITE, &s->out))
                return -1;
            out_shrink(s);
        } else {
            rc = store_apply(s->ctx, rec, NULL);
        }
        block_send_t bs = {s, 0};
        st_block_take_replies(s->ctx, send_block_reply, &bs);
        if (bs.failed) return -1;
        notify_done(s);
        if (rc < 0) {
            log_warn("store: bad record at LSN %" PRIu64, s->applied);
            return -1;
        }
        if (h.type == REC_CMD) count_change(s, rec);
        s->applied = store_applied(s->ctx);
        n++;
    }
    if (n) {
        /* After the replies are in their channels: see the banner. */
        ring_release(s->ring, s->applied);
        publish_counts(s);
        notify_flush(s);
    }
    return n;
}

/* After a reply: a buffer a large value's reply grew (D31) is given back
 * rather than kept for ever. */
static void out_shrink(store_proc_t *s)
{
    if (s->out.cap > STORE_OUT_KEEP) {
        buf_free(&s->out);
        buf_init(&s->out);
    }
}

/* ---- large values' replies in parts (D48) ---- */

/* Compaction keeps the log the open replies and the reads in flight read. */
static void streams_pin(store_proc_t *s)
{
    uint64_t low = s->reads ? store_reads_lowest(s->reads) : UINT64_MAX;
    for (int i = 0; i < s->nstreams; i++) {
        uint64_t l = store_vsnap_lowest(s->streams[i].v);
        if (l < low) low = l;
    }
    store_set_reply_pin(s->ctx, low);
}

static void stream_remove(store_proc_t *s, int i)
{
    store_vsnap_free(s->streams[i].v);
    s->streams[i] = s->streams[--s->nstreams];
    streams_pin(s);
}

/* A reply whose frontend is gone (killed, respawned) is dropped. */
static void streams_sweep(store_proc_t *s)
{
    for (int i = s->nstreams; i-- > 0;)
        if (atomic_load(&s->shm->fe[s->streams[i].fe].pid) != s->streams[i].fe_pid)
            stream_remove(s, i);
}

/* stream_part for a reply made as it goes (a paged collection's members,
 * D60): prefix (the reply so far: the array's header), then what the
 * snapshot makes next, at most a part's room. */
static int stream_gen_part(store_proc_t *s, reply_stream_t *st, const buf_t *prefix)
{
    size_t room = chan_max_msg(shm_from_store(s->shm, st->fe)) - sizeof(store_reply_t) - 8 -
                  (prefix ? prefix->len : 0);
    if (room > STORE_PART_BYTES) room = STORE_PART_BYTES;
    buf_t *b = &s->out;
    if (b != prefix) buf_reset(b);
    uint32_t kind = st->kind | (prefix ? 0 : STORE_REPLY_CONT);
    size_t head = prefix ? prefix->len : 0;
    buf_reserve(b, 8 + head);
    memmove(b->data + 8, b->data, head);
    memcpy(b->data, &st->token, 8);
    b->len = 8 + head;
    int rc = store_vsnap_next(s->ctx, st->v, b, room);
    if (rc < 0) {
        log_warn("store: reading a large collection's reply failed: its client is disconnected");
        store_reply_t lost = {.id = st->id, .len = 0, .kind = kind | STORE_REPLY_LOST};
        return put_message(s, st->fe, &lost, "") ? -1 : 1;
    }
    if (rc == 1 && prefix) { /* all of it in the first part: an ordinary reply */
        memmove(b->data, b->data + 8, b->len - 8);
        b->len -= 8;
        return send_reply(s, st->fe, st->id, st->kind, b) ? -1 : 1;
    }
    if (rc == 0) kind |= STORE_REPLY_PAUSE;
    store_reply_t hdr = {.id = st->id, .len = (uint32_t)b->len, .kind = kind};
    if (put_message(s, st->fe, &hdr, b->data)) return -1;
    if (io_fault_point(IO_FAULT_BIG_REPLY) == IO_FAULT_KILL) raise(SIGKILL);
    return rc;
}

/* Send st's next part: prefix (the bulk's header, first part only), then
 * bytes of the value and its "\r\n". Returns 1 when it was the last, 0
 * when more remain, -1 when the master is gone. */
static int stream_part(store_proc_t *s, reply_stream_t *st, const buf_t *prefix)
{
    if (store_vsnap_is_gen(st->v)) return stream_gen_part(s, st, prefix);
    uint64_t total = store_vsnap_len(st->v) + 2, n = total - st->off;
    size_t room = chan_max_msg(shm_from_store(s->shm, st->fe)) - sizeof(store_reply_t) - 8 -
                  (prefix ? prefix->len : 0);
    if (n > room) n = room;
    if (n > STORE_PART_BYTES) n = STORE_PART_BYTES;
    buf_t *b = &s->out;
    if (b != prefix) buf_reset(b);
    uint32_t kind = st->kind | (prefix ? 0 : STORE_REPLY_CONT);
    /* The token first, then the header already in s->out. */
    size_t head = prefix ? prefix->len : 0;
    buf_reserve(b, 8 + (size_t)n);
    memmove(b->data + 8, b->data, head);
    memcpy(b->data, &st->token, 8);
    b->len = 8 + head;
    uint64_t vlen = store_vsnap_len(st->v), from = st->off;
    uint64_t in_value = from < vlen ? (vlen - from < n ? vlen - from : n) : 0;
    if (in_value &&
        store_vsnap_read(s->ctx, st->v, from, in_value, (unsigned char *)b->data + b->len)) {
        /* The client has part of the bulk: it can only be disconnected. */
        log_warn("store: reading a large value's reply failed: its client is disconnected");
        store_reply_t lost = {.id = st->id, .len = 0, .kind = kind | STORE_REPLY_LOST};
        return put_message(s, st->fe, &lost, "") ? -1 : 1;
    }
    b->len += (size_t)in_value;
    for (uint64_t k = from + in_value; k < from + n; k++)
        b->data[b->len++] = k == vlen ? '\r' : '\n';
    st->off += n;
    int last = st->off == total;
    if (!last) kind |= STORE_REPLY_PAUSE;
    store_reply_t hdr = {.id = st->id, .len = (uint32_t)b->len, .kind = kind};
    if (put_message(s, st->fe, &hdr, b->data)) return -1;
    /* Test hook: the store dies with a part sent and the rest not. */
    if (io_fault_point(IO_FAULT_BIG_REPLY) == IO_FAULT_KILL) raise(SIGKILL);
    return last;
}

/* A read whose reply left its value as a snapshot: a new reply in parts,
 * its first part now. */
static int stream_begin(store_proc_t *s, int fe, uint32_t kind, uint64_t id, store_vsnap_t *v)
{
    if (s->nstreams == s->cap_streams) {
        int cap = s->cap_streams ? s->cap_streams * 2 : 8;
        reply_stream_t *n = realloc(s->streams, (size_t)cap * sizeof(*n));
        if (!n) {
            log_warn("store: out of memory");
            exit(EXIT_FATAL);
        }
        s->streams = n;
        s->cap_streams = cap;
    }
    reply_stream_t *st = &s->streams[s->nstreams++];
    *st = (reply_stream_t){.fe = fe,
                           .fe_pid = atomic_load(&s->shm->fe[fe].pid),
                           .kind = kind,
                           .id = id,
                           .token = (uint64_t)(uint32_t)getpid() << 32 | ++s->stream_count,
                           .v = v};
    streams_pin(s);
    int rc = stream_part(s, st, &s->out);
    if (rc == 1) stream_remove(s, (int)(st - s->streams));
    return rc < 0 ? -1 : 0;
}

/* STORE_REQ_NEXT or STORE_REQ_DROP from frontend fe. */
static int stream_request(store_proc_t *s, int fe, const store_req_t *req)
{
    uint64_t token = (uint64_t)req->proto << 32 | req->db;
    uint32_t what = STORE_REQ_WHAT(req->reserved);
    uint32_t kind = req->reserved & STORE_REQ_WRITE ? STORE_REPLY_WRITE : STORE_REPLY_READ;
    for (int i = 0; i < s->nstreams; i++) {
        reply_stream_t *st = &s->streams[i];
        if (st->fe != fe || st->kind != kind || st->id != req->id || st->token != token) continue;
        int rc = what == STORE_REQ_NEXT ? stream_part(s, st, NULL) : 1;
        if (rc == 1) stream_remove(s, i);
        return rc < 0 ? -1 : 0;
    }
    if (what != STORE_REQ_NEXT) return 0;
    store_reply_t lost = {
        .id = req->id, .len = 0, .kind = kind | STORE_REPLY_CONT | STORE_REPLY_LOST};
    return put_message(s, fe, &lost, "");
}

/* Request seq of frontend fe is answered: consume what is answered at the
 * head of its channel. */
static void request_done(store_proc_t *s, int fe, uint64_t seq)
{
    fe_queue_t *q = &s->queues[fe];
    q->done[seq % STORE_QUEUE_CAP] = 1;
    chan_t *c = shm_to_store(s->shm, fe);
    while (q->consumed < q->taken && q->done[q->consumed % STORE_QUEUE_CAP]) {
        chan_consume(c);
        q->consumed++;
    }
}

/* A read whose value was read in flight (store_reads_wait's report). */
static int read_finished(void *arg, int fe, uint64_t id, uint64_t seq, const buf_t *reply, int err)
{
    store_proc_t *s = arg;
    int rc;
    if (err) {
        buf_t e;
        buf_init(&e);
        resp_error(&e, STORE_ERR_IO);
        rc = send_reply(s, fe, id, STORE_REPLY_READ, &e);
        buf_free(&e);
    } else {
        rc = send_reply(s, fe, id, STORE_REPLY_READ, reply);
    }
    request_done(s, fe, seq);
    return rc;
}

static int answer(store_proc_t *s, int fe, uint64_t seq, const store_req_t *req,
                  const unsigned char *payload);

/* A part of a read request that came in parts (D58): the read is
 * answered once the last is in, or answered an error when parts are
 * missing. A part taken is done (consumed) at once; the last is answered
 * with its request's sequence number. */
static int answer_part(store_proc_t *s, int fe, uint64_t seq, const store_req_t *req,
                       const unsigned char *body)
{
    const unsigned char *whole = NULL;
    uint64_t len = 0;
    store_req_parts_t *p = &s->parts[fe];
    int rc = store_req_parts_add(p, req, body, req->payload_len, atomic_load(&s->shm->fe[fe].pid),
                                 &whole, &len);
    /* Test hook: the store dies with a part copied and not consumed. */
    if (rc == 0 && (req->reserved & STORE_REQ_MORE) &&
        io_fault_point(IO_FAULT_REQ_PART) == IO_FAULT_KILL)
        raise(SIGKILL);
    if (rc == 0) {
        request_done(s, fe, seq);
        return 0;
    }
    if (rc < 0) {
        buf_reset(&s->out);
        resp_error(&s->out, "ERR this request came in parts and the store restarted while it "
                            "arrived: nothing was read, send it again");
        rc = send_reply(s, fe, req->id, STORE_REPLY_READ, &s->out);
        request_done(s, fe, seq);
        return rc;
    }
    store_req_t whole_req = *req;
    whole_req.reserved = 0;
    whole_req.payload_len = (uint32_t)len;
    rc = answer(s, fe, seq, &whole_req, whole);
    store_req_parts_clear(p);
    return rc;
}

/* One answer of a GET or an MGET's element for key into the read cache
 * (D70): the value's reply when its key is a string without a TTL, or
 * the key's absence (reply "$-1": the store answers in RESP2, the
 * frontend converts for RESP3), as the store's state is now
 * (every change after this one invalidates it). Anything else (an
 * error, a TTL, another type's null, a value too large for a slot)
 * leaves the cache as it was. */
static void cache_one(store_proc_t *s, unsigned db, const rec_arg_t *key, const char *reply,
                      size_t len)
{
    int absent = len == 5 && memcmp(reply, "$-1\r\n", 5) == 0;
    if (!absent && (len < 4 || reply[0] != '$' || len > rcache_room())) return;
    int state = store_get_cacheable(s->ctx, db, key->ptr, key->len, shm_now_ms());
    if (state < 0 || state != !absent) return;
    rcache_fill(s->ctx->rcache, db, key->ptr, key->len, reply, absent ? 0 : len);
}

/* The length of the RESP2 bulk or null at p (n bytes), 0 when it is
 * neither or runs past n. */
static size_t bulk_len(const char *p, size_t n)
{
    if (n < 4 || p[0] != '$') return 0;
    if (p[1] == '-') return n >= 5 ? 5 : 0;
    size_t v = 0, i = 1;
    for (; i < n && p[i] >= '0' && p[i] <= '9' && i < 12; i++)
        v = v * 10 + (size_t)(p[i] - '0');
    if (i == 1 || i + 2 > n || p[i] != '\r') return 0;
    size_t total = i + 2 + v + 2;
    return total <= n ? total : 0;
}

#define CACHE_MGET_KEYS 64

/* Another read of one key the registry marks RC, answered now, whole
 * (D71): its reply goes into the read cache under the key and its query
 * (the protocol, the command and the words after the key, which the
 * payload holds right after the key), when the key exists without a TTL
 * and the reply is not an error. An absent key's reply is left out, so
 * "keymiss" events stay the store's to publish. */
static void cache_query(store_proc_t *s, const store_req_t *req, cmd_id_t op,
                        const unsigned char *payload, const rec_arg_t *key)
{
    const buf_t *out = &s->out;
    if (out->data[0] == '-' || out->len > rcache_big_room()) return;
    size_t at = (size_t)((const unsigned char *)key->ptr - payload) + key->len;
    if (at > req->payload_len) return;
    unsigned char query[RCACHE_QUERY_MAX];
    size_t qlen = rcache_query_tail(query, sizeof(query), (int)req->proto, op, payload + at,
                                    req->payload_len - at);
    if (!qlen || !store_key_cacheable(s->ctx, req->db, key->ptr, key->len, shm_now_ms())) return;
    rcache_fill_query(s->ctx->rcache, req->db, key->ptr, key->len, query, qlen, out->data,
                      out->len);
}

/* A GET or MGET answered now, whole, goes into the read cache (D70): each
 * key's part of the reply, by cache_one's rules; another read of one key
 * by cache_query's (D71). */
static void cache_offer(store_proc_t *s, const store_req_t *req, const unsigned char *payload)
{
    const buf_t *out = &s->out;
    uint16_t op, argc;
    rec_arg_t keys[CACHE_MGET_KEYS];
    if (!s->ctx->rcache || out->len < 3 ||
        rec_decode_payload(payload, req->payload_len, &op, &argc, keys, CACHE_MGET_KEYS))
        return;
    if (REC_OP(op) == CMD_GET && argc == 1) {
        cache_one(s, req->db, &keys[0], out->data, out->len);
        return;
    }
    const cmd_desc_t *d = cmd_by_id(REC_OP(op));
    if (d && (d->flags & CMDF_REPLY_CACHE) && argc >= 1) {
        cache_query(s, req, REC_OP(op), payload, &keys[0]);
        return;
    }
    if (REC_OP(op) != CMD_MGET || argc > CACHE_MGET_KEYS || out->data[0] != '*') return;
    size_t off = 1;
    while (off < out->len && out->data[off] != '\n')
        off++;
    off++;
    for (uint16_t i = 0; i < argc && off < out->len; i++) {
        size_t n = bulk_len(out->data + off, out->len - off);
        if (!n) return;
        cache_one(s, req->db, &keys[i], out->data + off, n);
        off += n;
    }
}

/* Answer request seq of frontend fe: now, or once the log bytes its reply
 * needs are read (D59; request_done then). Returns 0, or -1 when the
 * master is gone. */
static int answer(store_proc_t *s, int fe, uint64_t seq, const store_req_t *req,
                  const unsigned char *payload)
{
    uint32_t what = STORE_REQ_WHAT(req->reserved);
    if (what == STORE_REQ_PART || what == STORE_REQ_PART_DROP)
        return answer_part(s, fe, seq, req, payload);
    if (req->reserved) {
        int rc = stream_request(s, fe, req);
        request_done(s, fe, seq);
        return rc;
    }
    buf_reset(&s->out);
    st_defer_t *d = NULL;
    if (s->reads && !store_reads_full(s->reads)) {
        d = &s->defer;
        d->buf = &s->out;
        d->n = 0;
        d->lowest = UINT64_MAX;
        s->ctx->defer = d;
    }
    /* A read publishes only "keymiss" (D51), while it runs, so before its
     * reply: a read is never replayed, so it is never told twice. */
    store_set_notify_flags(s->ctx,
                           atomic_load_explicit(&s->shm->notify_flags, memory_order_relaxed));
    store_set_reply_parts(s->ctx, 1);
    store_read_proto(s->ctx, req->db, (int)req->proto, payload, req->payload_len, shm_now_ms(),
                     &s->out);
    s->ctx->defer = NULL;
    store_set_reply_parts(s->ctx, 0);
    notify_done(s);
    notify_flush(s);  /* the frontends read the ring before their replies */
    publish_stats(s); /* before the reply: an INFO after it counts this read */
    store_vsnap_t *v = store_take_reply_parts(s->ctx);
    if (d && d->n) {
        /* The value's bytes are read in flight with the others this turn
         * takes; the reply and the request wait for them. */
        int started = v ? -EAGAIN : store_reads_start(s->reads, d, &s->out, fe, req->id, seq);
        if (started == 0) return 0;
        if (started < 0 && store_reads_fill_now(s->ctx, d, &s->out)) {
            buf_reset(&s->out);
            resp_error(&s->out, STORE_ERR_IO);
        }
    }
    if (!v) cache_offer(s, req, payload); /* whole now: read at once */
    int rc = v ? stream_begin(s, fe, STORE_REPLY_READ, req->id, v)
               : send_reply(s, fe, req->id, STORE_REPLY_READ, &s->out);
    out_shrink(s);
    request_done(s, fe, seq);
    return rc;
}

/* Once the log has failed, nothing more becomes durable: a read waiting
 * for a write that failed is answered with what is applied. */
static int log_failed(store_proc_t *s)
{
    return atomic_load(&s->shm->logger_state) == LOGGER_FAILED &&
           s->applied == atomic_load(&s->shm->durable_lsn);
}

/*
 * Serve each frontend's request channel, oldest first. A request is
 * consumed after its reply is in the reply channel (a store that dies in
 * between answers it again, same id, rather than never). One that applied
 * has not caught up with stays at the head of its channel, for the next
 * round: a frontend sends a read only once its connection's writes are
 * durable, with min_lsn = durable_lsn at that moment (D19), so the store
 * reaches it by applying what is durable already, and the requests behind
 * it need no less. One beyond durable_lsn would be a frontend's bug; it
 * waits too (held_mask), without holding up the other channels.
 * Returns requests answered, or -1 when the master is gone.
 */
static int serve_requests(store_proc_t *s)
{
    if (s->nstreams) streams_sweep(s);
    for (int fe = 0; fe < s->nfe; fe++)
        store_req_parts_sweep(&s->parts[fe], atomic_load(&s->shm->fe[fe].pid));
    int total = 0;
    uint64_t held = 0;
    int failed = log_failed(s);
    for (int fe = 0; fe < s->nfe; fe++) {
        chan_t *c = shm_to_store(s->shm, fe);
        fe_queue_t *q = &s->queues[fe];
        if (q->taken == q->consumed) q->cursor = chan_cursor(c);
        for (int k = 0; k < STORE_SERVE_BATCH; k++) {
            /* Its oldest request's value is still being read. */
            if (q->taken - q->consumed == STORE_QUEUE_CAP) break;
            uint64_t pos = q->cursor;
            uint32_t len;
            const unsigned char *m = chan_peek_at(c, &pos, &len);
            if (!m) break;
            store_req_t req;
            uint64_t seq = q->taken;
            if (len < sizeof(req)) {
                log_warn("store: dropping a %u-byte message from frontend %d", len, fe);
                q->cursor = pos;
                q->taken++;
                request_done(s, fe, seq);
                continue;
            }
            memcpy(&req, m, sizeof(req));
            if (req.min_lsn > s->applied && !failed) {
                if (req.min_lsn > atomic_load_explicit(&s->shm->durable_lsn, memory_order_acquire))
                    held |= 1ull << fe;
                break;
            }
            if (req.payload_len > len - sizeof(req)) req.payload_len = 0; /* error reply */
            q->cursor = pos;
            q->taken++;
            q->done[seq % STORE_QUEUE_CAP] = 0;
            if (answer(s, fe, seq, &req, m + sizeof(req))) return -1;
            total++;
        }
    }
    /* Every value this turn needs goes to the kernel at once. */
    if (s->reads) store_reads_submit(s->reads);
    /* The logger wakes us when durable_lsn moves only while this is set
     * (compared with the shared value: a predecessor may have left it). */
    if (atomic_load_explicit(&s->shm->store_deferred, memory_order_relaxed) != (held != 0))
        atomic_store(&s->shm->store_deferred, held != 0);
    s->held_mask = held;
    return total;
}

static int has_work(store_proc_t *s)
{
    if (atomic_load_explicit(&s->shm->durable_lsn, memory_order_acquire) > s->applied) return 1;
    if (s->reads && store_reads_ready(s->reads)) return 1;
    if (s->held_mask && log_failed(s)) return 1; /* held requests are answered now */
    for (int fe = 0; fe < s->nfe; fe++) {
        if (s->held_mask >> fe & 1) continue;
        /* Not the requests taken and still being read (they keep their
         * place in the channel): only those after them. */
        const fe_queue_t *q = &s->queues[fe];
        chan_t *c = shm_to_store(s->shm, fe);
        uint64_t pos = q->taken == q->consumed ? chan_cursor(c) : q->cursor;
        uint32_t len;
        if (q->taken - q->consumed < STORE_QUEUE_CAP && chan_peek_at(c, &pos, &len)) return 1;
    }
    return 0;
}

/* Wait for the logger to finish recovery: before that, neither the log's
 * end nor the ring's position is known. Only that: a store respawned
 * after the log failed (or while it is out of space) must still serve the
 * reads of D12. Returns 0, or 1 to stop. */
static int wait_for_logger(shm_t *shm)
{
    while (atomic_load(&shm->logger_state) == LOGGER_STARTING) {
        if (atomic_load(&shm->shutdown) || master_gone()) return 1;
        struct timespec ts = {0, 2 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    return 0;
}

static uint64_t random_seed(void)
{
    uint64_t seed;
    if (getrandom(&seed, sizeof(seed), GRND_NONBLOCK) != (ssize_t)sizeof(seed))
        seed = shm_mono_ns() ^ ((uint64_t)getpid() << 32);
    return seed;
}

/* Delete the log segments nothing needs (store/compact.c) and publish
 * the log's new start (INFO's atticdb_log_start_lsn; a respawned store
 * starts from it). */
static void compact(store_proc_t *s)
{
    if (s->ckpt.written != s->compact.seen_written)
        store_compact_note(&s->compact, s->ckpt.last_lsn, s->ckpt.last_min_ref);
    s->compact.seen_written = s->ckpt.written;
    streams_pin(s); /* the reads in flight too */
    /* The new start is published by the pass (store/compact.c, D67). */
    if (store_compact_delete(&s->compact, s->ctx, &s->ckpt) > 0 && s->reads)
        store_reads_forget(s->reads, s->compact.log_start);
}

/*
 * Segments are deleted only below the oldest kept checkpoint, so with
 * checkpoints every checkpoint-bytes the log on disk cannot shrink below
 * about twice that, whatever relocation does. While the log is above
 * space-amplification-target x live bytes, a checkpoint is due after
 * (target - 1) x live / 2 of log instead (two such intervals fit in the
 * allowed slack), but at least two segments and the size of the last
 * checkpoint file (checkpoints then never write more than the log), at
 * most checkpoint-bytes (D27).
 *
 * Idle and still over the target, one is due at once when it alone would
 * delete a segment (D79): segments go only below the older of the kept
 * checkpoints (STORE_CKPT_KEEP), so once the writes stop, what the newest
 * one's references allow waits for a checkpoint no write will bring. When
 * the newest is at the applied LSN already, a CMD_TICK is asked for first
 * (a checkpoint is named by its LSN). One per log start: a start held by
 * something else (a replica's backlog, a read in flight) asks for no more.
 */
static void early_checkpoint(store_proc_t *s, int idle)
{
    double target = s->compact.target;
    uint64_t live = store_live_total(s->ctx), seg = s->compact.segment_size;
    if (target <= 0 || !live || !s->ckpt.every) return;
    if ((double)(s->applied - s->compact.log_start) <= target * (double)live) return;
    if (idle && !s->ckpt.child && s->ckpt.last_min_ref &&
        s->idle_ckpt_start != s->compact.log_start + 1 && !atomic_load(&s->shm->repl.is_replica)) {
        uint64_t frees =
            s->ckpt.last_min_ref < s->ckpt.last_lsn ? s->ckpt.last_min_ref : s->ckpt.last_lsn;
        uint64_t low = st_live_lowest(&s->ctx->live);
        if (low < frees) frees = low;
        if (frees >= s->compact.log_start + seg) {
            if (s->applied > s->ckpt.last_lsn) {
                s->idle_ckpt_start = s->compact.log_start + 1;
                s->ckpt.next_lsn = s->applied;
            } else {
                ask_tick(s);
            }
            return;
        }
    }
    uint64_t every = (uint64_t)((target - 1) * (double)live / 2);
    if (every < 2 * seg) every = 2 * seg;
    if (every < s->ckpt.last_bytes) every = s->ckpt.last_bytes;
    if (every >= s->ckpt.every) return;
    if (s->ckpt.last_lsn + every < s->ckpt.next_lsn) s->ckpt.next_lsn = s->ckpt.last_lsn + every;
}

/*
 * Relocation (store/compact.c, D27), rate-limited so that it costs the
 * clients little: it may write RELOC_RATIO bytes of values per byte of the
 * clients' records applied, plus RELOC_IDLE_BYTES per idle turn of the
 * loop, never more than RELOC_BURST at once. Returns 1 when it did work.
 */
#define RELOC_RATIO      2
#define RELOC_IDLE_BYTES (1u << 20)
#define RELOC_BURST      (4u << 20)
static int relocate(store_proc_t *s, uint64_t applied_before, int idle)
{
    early_checkpoint(s, idle);
    uint64_t ours = s->compact.space_written - s->reloc_space_seen;
    uint64_t delta = s->applied - applied_before;
    s->reloc_space_seen = s->compact.space_written;
    s->reloc_tokens += RELOC_RATIO * (delta > ours ? delta - ours : 0);
    if (idle) s->reloc_tokens += RELOC_IDLE_BYTES;
    if (s->reloc_tokens > RELOC_BURST) s->reloc_tokens = RELOC_BURST;
    if (!s->reloc_tokens) return 0;
    uint64_t done = store_compact_relocate(&s->compact, s->ctx, s->shm, s->reloc_tokens);
    s->reloc_tokens = done < s->reloc_tokens ? s->reloc_tokens - done : 0;
    return done > 0;
}

/*
 * Paging (store/pager.c, D60), rate-limited as relocation is: PAGE_RATIO
 * bytes of pages per byte of the clients' records applied (a page of
 * 4 KiB rewritten for about every 16 writes to its range), plus
 * RELOC_IDLE_BYTES per idle turn, never more than RELOC_BURST at once.
 * Returns 1 when it did work.
 */
#define PAGE_RATIO 4
static int page(store_proc_t *s, uint64_t applied_before, int idle)
{
    uint64_t ours = (s->pager.space_written - s->page_space_seen) +
                    (s->compact.space_written - s->reloc_space_seen);
    uint64_t delta = s->applied - applied_before;
    s->page_space_seen = s->pager.space_written;
    s->page_tokens += PAGE_RATIO * (delta > ours ? delta - ours : 0);
    if (idle) s->page_tokens += RELOC_IDLE_BYTES;
    if (s->page_tokens > RELOC_BURST) s->page_tokens = RELOC_BURST;
    if (!s->pager.nq) return 0;
    uint64_t below = s->compact.pass ? s->compact.below : 0;
    uint64_t done = store_pager_run(&s->pager, s->ctx, s->shm, &s->compact, below, s->page_tokens);
    s->page_tokens = done < s->page_tokens ? s->page_tokens - done : 0;
    return done > 0;
}

/* Compaction's pass met a collection (compact->note): the pager rewrites
 * its pages below the pass's line. */
static void note_old_pages(void *arg, unsigned db, idx_entry_t *e)
{
    store_proc_t *s = arg;
    unsigned t = st_ent_type(e);
    if (t == ST_LIST || t == ST_STREAM || t == ST_ZSET ||
        ((t == ST_HASH || t == ST_SET) && st_hash_is_paged(st_ent_hash(e))))
        if (store_pager_wants(&s->pager, e, s->compact.below))
            store_pager_note_key(&s->pager, db, e->data, e->klen, s->compact.below);
}

/* The first store of a server run (shm->block_reset still 0), or a
 * replica just promoted (REPLICAOF NO ONE sets it to 0 again): the
 * waiters the log left are clients of a previous run or of the leader,
 * none of them here. On a replica nothing is written: its log is its
 * leader's (D33), and its frontends write nothing. A
 * CMD_BLOCKDROP 0 through the store's own claimer drops them, before any
 * frontend writes (they wait for block_reset, submit.c), so no push of
 * this run can serve one of them (D36). Returns 0, or -1 when the master
 * is gone. */
static int reset_waiters(store_proc_t *s, int wait)
{
    shm_t *shm = s->shm;
    if (atomic_load(&shm->block_reset) || atomic_load(&shm->repl.is_replica)) return 0;
    while (st_block_count(s->ctx) && atomic_load(&shm->logger_state) == LOGGER_RUNNING) {
        ring_claimer_t *cl = shm_store_claimer(shm);
        unsigned char all[4];
        cmd_put_u32(all, 0);
        const unsigned char *argv[1] = {all};
        uint32_t lens[1] = {4};
        uint32_t space = rec_space((uint32_t)rec_cmd_payload_size(1, lens));
        uint64_t pos;
        if (ring_claimer_adopt(cl, atomic_load(&shm->durable_lsn)) &&
            ring_claim(s->ring, cl, space, &pos) == 0) {
            uint64_t durable = atomic_load_explicit(&shm->durable_lsn, memory_order_acquire);
            rec_encode_cmd_durable(ring_ptr(s->ring, pos), pos, durable, 0, store_now(s->ctx),
                                   REC_OP_DB(CMD_BLOCKDROP, 0), 1, argv, lens);
            ring_commit(s->ring, cl, pos);
            shm_wake(&shm->logger_wake);
            break;
        }
        if (!wait) return 0; /* in the loop: the ring drains as we apply; next turn */
        if (master_gone()) return -1;
        struct timespec ts = {0, 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    atomic_store(&shm->block_reset, 1);
    return 0;
}

static int run(store_proc_t *s)
{
    int idle_in_shutdown = 0;
    for (;;) {
        uint64_t applied_before = s->applied;
        /* [eviction hook] The policy as CONFIG SET left it, before any
         * read of this turn (OBJECT FREQ answers by it). */
        store_evict_settings(&s->evict, s->ctx, s->shm);
        int work = apply_ring(s);
        if (work < 0) return EXIT_FATAL;
        /* [checkpoint hook] Between batches, busy or not: reap a finished
         * checkpoint child, fork the next when one is due. */
        store_ckpt_poll(&s->ckpt, s->ctx);
        /* [compaction hook] A new checkpoint may free the log's start, and
         * so may replicas that stopped holding it (D67). */
        if (s->ckpt.written != s->compact.seen_written ||
            store_compact_released(&s->compact, atomic_load(&s->shm->durable_lsn)))
            compact(s);
        int served = serve_requests(s);
        if (served < 0) return 0;
        /* Reads the page cache held finished inside the submission; the
         * others are reported as the device answers them. */
        if (s->reads) {
            int done = store_reads_wait(s->reads, 0, read_finished, s);
            if (done < 0) return 0;
            served += done;
        }
        /* [backup hook] A BGSAVE just served, or one that waited for a
         * checkpoint child: forked before another record is applied. */
        store_backup_poll(&s->backup, s->ctx);
        work += served;
        /* [compaction hook] Move live values out of old segments. */
        if (!atomic_load(&s->shm->shutdown) && relocate(s, applied_before, work == 0)) work++;
        /* [paging hook] Large hashes and sets into pages (D60). */
        if (!atomic_load(&s->shm->shutdown) && page(s, applied_before, work == 0)) work++;
        /* Parts of large values whose writer died (D31): dropped by a
         * record of the store's, so replay drops them at the same point. */
        store_abort_orphans(&s->compact, s->ctx, s->shm);
        (void)reset_waiters(s, 0); /* a promoted replica's (D36) */
        /* [eviction hook] Over maxmemory: write CMD_EVICT for victims. */
        if (!atomic_load(&s->shm->shutdown) &&
            store_evict_round(&s->evict, s->ctx, &s->compact, s->shm) > 0)
            work++;
        wake_frontends(s);
        if (work) {
            idle_in_shutdown = 0;
            continue;
        }
        /* With reads in flight the store is idle between two of the
         * device's answers, often: the idle work is done one time in
         * STORE_IDLE_SKIP then, not at each (D59). */
        int reading = s->reads && store_reads_inflight(s->reads);
        if (!reading || ++s->idle_skipped >= STORE_IDLE_SKIP) {
            s->idle_skipped = 0;
            /* [keyspace helper] Active expiry and resizes change the
             * counts INFO shows with no record applied: publish them here
             * too. Every key removed and every table resized changes the
             * index bytes. */
            uint64_t bytes_before = store_index_bytes(s->ctx);
            /* Keys it reclaims publish "expired" (D37). */
            store_set_notify_flags(s->ctx, atomic_load(&s->shm->notify_flags));
            int more = store_maintain(s->ctx, STORE_MAINTAIN_BUDGET);
            store_set_notify_flags(s->ctx, 0);
            notify_flush(s);
            if (store_index_bytes(s->ctx) != bytes_before) publish_counts(s);
            if (more && !reading) continue;
            want_tick(s);
            if (master_gone()) return 0;
            /* Idle: freed memory back to the system, at most once a
             * second (the pager frees what paged collections no longer
             * keep). */
            if (shm_now_ms() - s->last_release_ms >= 1000) {
                s->last_release_ms = shm_now_ms();
                st_alloc_release();
            }
        }

        if (atomic_load(&s->shm->shutdown) >= 3 && !reading) {
            /* The master sets 3 once the frontends and the logger are gone:
             * everything durable is applied and every channel is empty. */
            if (atomic_load(&s->shm->logger_state) != LOGGER_RUNNING ||
                ++idle_in_shutdown > STORE_SHUTDOWN_IDLE)
                break;
        }
        shm_waiter_arm(&s->shm->store_wake);
        if (has_work(s)) {
            shm_waiter_disarm(&s->shm->store_wake);
        } else if (s->reads) {
            /* One wait for a wake-up and for the reads in flight. */
            int done = store_reads_wait(s->reads, STORE_IDLE_WAIT_MS, read_finished, s);
            shm_waiter_disarm(&s->shm->store_wake);
            if (done < 0) return 0;
            wake_frontends(s);
        } else {
            shm_waiter_wait(&s->shm->store_wake, STORE_IDLE_WAIT_MS);
        }
    }
    if (s->held_mask)
        log_info("store: stopping with reads waiting for LSNs that never became durable");
    /* [checkpoint hook] A clean stop: everything durable is applied; a
     * checkpoint at this LSN makes the next start replay nothing. */
    store_ckpt_finish(&s->ckpt, s->ctx, 1);
    return 0;
}

int store_main(shm_t *shm, const config_t *cfg)
{
    store_shm = shm;
    /* What a predecessor left in the read cache is no one's now (D70):
     * this store fills and invalidates it once its replay is done. */
    if (rcache_shared) rcache_store_begin(rcache_shared);
    if (wait_for_logger(shm)) return 0;
    store_proc_t s = {.shm = shm, .ring = shm_ring(shm), .nfe = (int)shm->nfrontends};
    uint64_t start = atomic_load(&shm->log_start_lsn);
    /* Not tail: see the banner. Finishing a cut-short release after the
     * replay lets producers have that space again. */
    uint64_t released = ring_released(s.ring);
    /* [checkpoint hook] The newest checkpoint that verifies and lies within
     * the log, or an empty state; replay goes on from its LSN. */
    uint64_t from = start;
    s.ctx = store_ckpt_restore(cfg, random_seed(), start, released, &from);
    if (!s.ctx) {
        if (from != UINT64_MAX) log_warn("store: out of memory");
        return EXIT_FATAL;
    }
    /* The table of recent changes (6.5 MiB, zeroed) made now rather than
     * by the first write that changes a key: that write's reply waited the
     * 20-30 ms of page faults (the first RPUSH of a run, tools/bench-durable
     * --command rpush, D61). Made before the replay too, so that replayed
     * records and live ones see the same table from the first record on. */
    st_watch_ensure(s.ctx);
    buf_init(&s.out);
    s.parts = calloc((size_t)s.nfe ? (size_t)s.nfe : 1, sizeof(*s.parts));
    if (!s.parts) return EXIT_FATAL;
    /* Replies go in parts (send_reply); only replies over this are
     * refused, before anything is read. */
    store_set_max_reply(s.ctx, STORE_MAX_REPLY);

    s.queues = calloc((size_t)s.nfe, sizeof(*s.queues));
    if (!s.queues) {
        log_warn("store: out of memory");
        store_ctx_destroy(s.ctx);
        return EXIT_FATAL;
    }
    if (cfg->read_io != CONFIG_READ_PREAD) {
        s.reads = store_reads_open(cfg->dir, cfg->segment_size, STORE_READS_DEPTH,
                                   cfg->read_io == CONFIG_READ_URING, shm->store_wake.efd);
        if (!s.reads)
            log_warn("store: read-io uring is not available here (%s): values are read with "
                     "pread, one at a time",
                     strerror(errno));
        s.defer.max = STORE_READ_HOLES;
    }
    atomic_store(&shm->value_reads_cached, 0);
    atomic_store(&shm->value_reads_device, 0);
    atomic_store(&shm->read_io, s.reads ? (uint32_t)cfg->read_io : CONFIG_READ_PREAD);
    store_ckpt_sched_init(&s.ckpt, cfg, from);
    store_compact_init(&s.compact, s.ckpt.dir, cfg->segment_size, start);
    s.compact.target = cfg->checkpoint_bytes ? cfg->space_amp_target
                                             : 0; /* nothing to delete without checkpoints */
    store_compact_restored(&s.compact, s.ctx, from);
    /* The replicas' backlog (D67); a predecessor killed in a pass left
     * its bound (fault point backlogtrim): nothing is being deleted now. */
    s.compact.repl = &shm->repl;
    s.compact.durable = &shm->durable_lsn;
    s.compact.log_start_pub = &shm->log_start_lsn;
    atomic_store(&shm->repl.deleting_below, 0);
    /* Before the replay: the collections its writes grow are noted. */
    store_pager_init(&s.pager, s.ctx, cfg, ring_max_record(s.ring), random_seed());
    s.compact.note = note_old_pages;
    s.compact.note_arg = &s;
    store_set_notify_out(s.ctx, notify_publish, &s);
    store_set_notify_expired_floor(s.ctx, atomic_load(&shm->notify_expired_ms));
    store_backup_init(&s.backup, cfg, &s.ckpt, shm, s.ctx);
    s.ctx->shm = shm; /* MEMORY STATS: the figures INFO reads (shm_memory) */
    int rc = replay(&s, cfg, from, released);
    st_block_take_deferred(s.ctx);
    /* From here on, blocked clients served or unblocked get replies (the
     * replayed ones were answered by a predecessor: see the banner). */
    st_block_set_live(s.ctx, 1);
    /* The first store of this master publishes from here on: what the log
     * held before this start was never for these subscribers. */
    uint64_t unset = UINT64_MAX;
    if (rc == 0) atomic_compare_exchange_strong(&shm->notify_lsn, &unset, released);
    if (rc == 0) ring_release(s.ring, released);
    if (rc == 0) compact(&s);                /* finishes what a predecessor began */
    if (rc == 0) (void)reset_waiters(&s, 1); /* -1: the master is gone, seen below */
    if (rc == 0 && !master_gone()) {
        s.evicted_at_start = store_evicted(s.ctx);
        uint64_t hits, misses;
        store_stat_counts(s.ctx, &s.expired_at_start, &hits, &misses);
        s.ctx->rcache = rcache_shared;
        publish_counts(&s);
        atomic_store(&shm->store_ready, 1);
        rc = run(&s);
    }
    store_ckpt_finish(&s.ckpt, s.ctx, 0); /* a child still running dies with us */
    store_compact_free(&s.compact);
    store_pager_free(&s.pager);
    s.ctx->pager = NULL;
    s.ctx->on_changed = NULL;
    store_reads_close(s.reads); /* after its reads are done: their replies are moot now */
    s.reads = NULL;
    free(s.defer.hole);
    free(s.queues);
    while (s.nstreams)
        stream_remove(&s, 0);
    free(s.streams);
    for (int fe = 0; fe < s.nfe; fe++)
        store_req_parts_clear(&s.parts[fe]);
    free(s.parts);
    buf_free(&s.out);
    store_ctx_destroy(s.ctx);
    return rc;
}
