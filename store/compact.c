/*
 * compact.c - reclaiming log space: the live-bytes table (core/live.c)
 * checked against a recount, and deleting the segments at the log's start
 * that no state the server could start from refers to (D27).
 *
 * Run by the store process, between batches (store.c), single-threaded.
 * Why a segment S at the log's start may go: a restart loads one of the
 * kept checkpoints (the newest that verifies) and replays the log after
 * its LSN; the live state is what such a restart rebuilds. So S is never
 * read again once it lies wholly below
 *   - the oldest kept checkpoint's LSN (every replay starts above S),
 *   - the lowest LSN every kept checkpoint's entries refer to (its
 *     MINREF block, store/checkpoint.c), and that of the checkpoint a child
 *     is writing now (it becomes a kept one),
 *   - the lowest LSN the live state refers to (core/live.c); records
 *     applied later refer only to LSNs above the applied one.
 * Without any checkpoint nothing goes (a restart replays the whole log).
 *
 * Only the log's first segment is ever deleted, then the next: the
 * segments present stay one contiguous run, which recovery requires
 * (logger/recover.c refuses a hole). Each unlink is followed by an fsync
 * of the directory before the next one, so a power cut cannot bring back
 * a later segment without the earlier ones. A crash between unlink and
 * fsync may bring the unlinked segment back: harmless, since by the rules
 * above nothing the restart loads or replays reads it, recovery scans it
 * as the valid records it holds, and the next pass deletes it again.
 * A crash before the unlink changes nothing. Fault points "segdelete"
 * (before each unlink) and "segdeleted" (after it, before the fsync)
 * [tests/integration/test_compact].
 *
 * Replicas (D67): the log is their backlog, so a pass also keeps the last
 * repl-backlog-size bytes below the durable LSN while the backlog is
 * active, and the record ending at the lowest LSN a replica will resume
 * from (the replication process's keep_lsn, one word: never torn). A
 * handshake and a pass race; the pass publishes the bound it computed
 * without the replicas (deleting_below) before it reads keep_lsn, the
 * handshake its LSN in keep_lsn before it reads deleting_below (both
 * sequentially consistent), so either the pass keeps the replica's record
 * or the handshake sees it may go and gives a full copy. Killed with
 * deleting_below set ("backlogtrim"), a store leaves it for its
 * successor, which clears it at start (store.c); meanwhile handshakes
 * below it get full copies, never a log with a hole.
 */
#include "compact.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "ckpt.h"
#include "repl-shm.h"
#include "command.h"
#include "io.h"
#include "io_fault.h"
#include "log.h"
#include "record.h"
#include "resp.h"
#include "ring.h"
#include "seg.h"
#include "shm.h"
#include "store/core/entry.h"
#include "store/core/index.h"
#include "store/core/live.h"
#include "store/core/value.h"

/* ---- the table, checked ------------------------------------------------- */

static int recount_entry(void *arg, idx_entry_t *e)
{
    st_ent_count_log(arg, e, 1);
    return 0;
}

int store_live_verify(store_ctx_t *ctx)
{
    /* Count every entry again into a fresh table, swapped in for the walk. */
    st_live_t mine = ctx->live;
    st_live_init(&ctx->live, ctx->segment_size);
    for (int i = 0; i < ctx->ndb; i++)
        idx_foreach(&ctx->dbs[i]->ix, recount_entry, ctx);
    /* The parts of values not yet final are counted too (D31). */
    st_groups_count(&ctx->groups, &ctx->live);
    st_live_t fresh = ctx->live;
    ctx->live = mine;
    int same = st_live_equal(&mine, &fresh) && !mine.broken;
    st_live_free(&fresh);
    return same;
}

uint64_t store_live_total(const store_ctx_t *ctx)
{
    return ctx->live.total;
}

uint64_t store_live_segment(const store_ctx_t *ctx, uint64_t seg_start)
{
    return st_live_get(&ctx->live, seg_start);
}

void store_live_reply(store_ctx_t *ctx, buf_t *r)
{
    const st_live_t *t = &ctx->live;
    uint64_t used = 0;
    for (uint64_t i = 0; i < t->n; i++)
        used += t->v[i] != 0;
    resp_array(r, (long long)(2 + 2 * used));
    resp_integer(r, store_live_verify(ctx));
    resp_integer(r, (long long)t->total);
    for (uint64_t i = 0; i < t->n; i++) {
        if (!t->v[i]) continue;
        resp_integer(r, (long long)((t->base + i) * t->seg_size));
        resp_integer(r, (long long)t->v[i]);
    }
}

/* ---- deleting segments -------------------------------------------------- */

void store_compact_init(store_compact_t *c, const char *dir, uint64_t segment_size,
                        uint64_t log_start)
{
    memset(c, 0, sizeof(*c));
    c->dir = dir;
    c->segment_size = segment_size;
    c->log_start = log_start;
}

void store_compact_restored(store_compact_t *c, store_ctx_t *ctx, uint64_t from)
{
    if (from > c->log_start)
        store_compact_note(c, from, ctx->live.broken ? 0 : st_live_lowest(&ctx->live));
}

void store_compact_note(store_compact_t *c, uint64_t lsn, uint64_t min_ref)
{
    for (unsigned i = 0; i < c->nknown; i++) {
        if (c->known[i].lsn == lsn) {
            c->known[i].min_ref = min_ref;
            return;
        }
    }
    unsigned i =
        c->nknown < STORE_COMPACT_KNOWN ? c->nknown++ : c->next_known++ % STORE_COMPACT_KNOWN;
    c->known[i].lsn = lsn;
    c->known[i].min_ref = min_ref;
}

/* The lowest LSN the checkpoint at lsn refers to: known, or read from its
 * file (0 when it cannot be told: it may need the whole log). */
static uint64_t ckpt_min_ref(store_compact_t *c, uint64_t lsn)
{
    for (unsigned i = 0; i < c->nknown; i++)
        if (c->known[i].lsn == lsn) return c->known[i].min_ref;
    char path[4096];
    uint64_t m;
    ckpt_path(path, sizeof(path), c->dir, lsn, 0);
    if (store_ckpt_min_ref(path, c->segment_size, &m)) {
        log_info("store: checkpoint %s records no lowest log reference: no segment below it is "
                 "deleted while it is kept",
                 path);
        m = 0;
    }
    store_compact_note(c, lsn, m);
    return m;
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
    return a < b ? a : b;
}

/* The replicas' bound (banner, D67) on limit, the bound of everything else. */
static uint64_t backlog_hold(store_compact_t *c, uint64_t limit)
{
    repl_shm_t *r = c->repl;
    if (!r) return limit;
    uint64_t durable = atomic_load(c->durable);
    limit = min_u64(limit, repl_backlog_floor(r, durable));
    if (limit < c->log_start + c->segment_size) return limit; /* nothing goes anyway */
    atomic_store(&r->deleting_below, limit);
    if (io_fault_point(IO_FAULT_BACKLOG_TRIM) == IO_FAULT_KILL) raise(SIGKILL);
    return min_u64(limit, repl_backlog_keep_below(atomic_load(&r->keep_lsn)));
}

/* The pass is over: its start is published, handshakes need not wait on it. */
static void backlog_done(store_compact_t *c)
{
    if (!c->repl) return;
    if (c->log_start_pub) atomic_store(c->log_start_pub, c->log_start);
    atomic_store(&c->repl->deleting_below, 0);
}

int store_compact_released(const store_compact_t *c, uint64_t durable)
{
    if (!c->held || !c->repl) return 0;
    uint64_t b = min_u64(repl_backlog_floor(c->repl, durable),
                         repl_backlog_keep_below(atomic_load(&c->repl->keep_lsn)));
    return b >= c->log_start + c->segment_size;
}

int store_compact_delete(store_compact_t *c, store_ctx_t *ctx, const store_ckpt_sched_t *sched)
{
    if (ctx->live.broken) return 0;
    uint64_t *v;
    size_t n;
    if (ckpt_list(c->dir, 0, &v, &n)) {
        log_warn("store: cannot list checkpoints in %s: %s", c->dir, strerror(errno));
        return -1;
    }
    if (!n) {
        free(v);
        return 0;
    }
    uint64_t limit = v[0];
    for (size_t i = 0; i < n; i++)
        limit = min_u64(limit, ckpt_min_ref(c, v[i]));
    free(v);
    if (sched->child) limit = min_u64(limit, sched->child_min_ref);
    limit = min_u64(limit, st_live_lowest(&ctx->live));
    limit = min_u64(limit, ctx->reply_pin); /* a value's reply still in parts (D48) */
    uint64_t own = limit;
    limit = backlog_hold(c, limit);
    c->held = limit < own && own >= c->log_start + c->segment_size;
    int deleted = 0;
    while (c->log_start + c->segment_size <= limit) {
        char path[4096];
        seg_path(path, sizeof(path), c->dir, c->log_start);
        if (io_fault_point(IO_FAULT_SEG_DELETE) == IO_FAULT_KILL) raise(SIGKILL);
        st_log_forget(ctx, c->log_start);
        if (io->unlink(path) && errno != ENOENT) {
            log_warn("store: cannot delete %s: %s", path, strerror(errno));
            backlog_done(c);
            return deleted ? deleted : -1;
        }
        if (io_fault_point(IO_FAULT_SEG_DELETED) == IO_FAULT_KILL) raise(SIGKILL);
        if (io_fsync_dir(c->dir)) {
            /* The next unlink waits for this one to be durable (banner). */
            log_warn("store: cannot fsync %s after deleting %s: %s", c->dir, path, strerror(errno));
            backlog_done(c);
            return deleted ? deleted : -1;
        }
        c->log_start += c->segment_size;
        c->deleted++;
        deleted++;
    }
    if (deleted)
        log_info("store: deleted %d log segment%s: the log now starts at LSN %" PRIu64, deleted,
                 deleted > 1 ? "s" : "", c->log_start);
    backlog_done(c);
    return deleted;
}

/* ---- relocation ---------------------------------------------------------- */

void store_compact_free(store_compact_t *c)
{
    free(c->buf);
    c->buf = NULL;
    c->buf_cap = 0;
}

/* Extents of one bucket below the line, found by idx_scan (which must
 * not be asked to remove anything: the visitor returns 0). */
#define RELOC_BUCKET_MAX 64
typedef struct reloc_scan {
    uint64_t below;
    store_compact_t *c;
    unsigned db;
    unsigned n;
    idx_entry_t *e[RELOC_BUCKET_MAX];
} reloc_scan_t;

static int reloc_visit(void *arg, idx_entry_t *e)
{
    reloc_scan_t *a = arg;
    if (st_ent_kind(e) == VK_OBJ && a->c->note) a->c->note(a->c->note_arg, a->db, e);
    if (st_ent_kind(e) != VK_EXTENT || a->n == RELOC_BUCKET_MAX) return 0;
    uint64_t lsn;
    uint32_t len;
    st_ent_get_ext1(e, &lsn, &len);
    if (lsn < a->below) a->e[a->n++] = e;
    return 0;
}

/* Should a pass start? Sets c->below when it should. */
static int reloc_due(store_compact_t *c, store_ctx_t *ctx)
{
    uint64_t live = ctx->live.total, low = st_live_lowest(&ctx->live), applied = ctx->applied;
    if (!live || low == UINT64_MAX || low >= applied) return 0;
    /* The last pass left the lowest reference where it was (a value it
     * cannot move: a piece list, one too large for the ring): scan again
     * only after another segment of log, not in a loop. */
    if (c->passes && low == c->last_low && applied < c->last_applied + c->segment_size) return 0;
    if ((double)(applied - low) <= c->target * (double)live) return 0;
    uint64_t keep = (uint64_t)(c->target * (double)live);
    uint64_t below = applied > keep ? (applied - keep) & ~(c->segment_size - 1) : 0;
    uint64_t low_end = (low & ~(c->segment_size - 1)) + c->segment_size;
    if (below < low_end) below = low_end;
    /* Never from the segment being written: that frees nothing. */
    if (below > (applied & ~(c->segment_size - 1))) return 0;
    c->below = below;
    return 1;
}

/* Encode and commit one CMD_RELOCATE for e (in database db). Returns 1
 * when committed, 0 when the ring had no room (try again later), -1 when
 * e cannot be relocated (too large for the ring, unreadable: skipped). */
static int reloc_one(store_compact_t *c, store_ctx_t *ctx, shm_t *shm, int db, idx_entry_t *e)
{
    ring_t *ring = shm_ring(shm);
    uint64_t lsn;
    uint32_t len;
    st_ent_get_ext1(e, &lsn, &len);
    uint32_t lens[3] = {e->klen, len, 8};
    size_t payload = rec_cmd_payload_size(3, lens);
    if (payload + REC_HDR_SIZE > ring_max_record(ring)) return -1;
    if (c->buf_cap < len) {
        unsigned char *b = realloc(c->buf, len);
        if (!b) return -1;
        c->buf = b;
        c->buf_cap = len;
    }
    if (st_read_log(ctx, lsn, len, c->buf)) return -1;
    unsigned char old[8];
    cmd_put_i64(old, (int64_t)lsn);
    const unsigned char *argv[3] = {e->data, c->buf, old};
    uint32_t space = rec_space((uint32_t)payload);
    uint64_t pos;
    if (ring_claim(ring, shm_store_claimer(shm), space, &pos) != 0) return 0;
    uint64_t durable = atomic_load_explicit(&shm->durable_lsn, memory_order_acquire);
    /* The store's apply clock as the record's time: applying it moves no
     * clock (route.c: now = max(now, record time)). */
    rec_encode_cmd_durable(ring_ptr(ring, pos), pos, durable, 0, ctx->now,
                           REC_OP_DB(CMD_RELOCATE, db), 3, argv, lens);
    ring_commit(ring, shm_store_claimer(shm), pos);
    c->space_written += space;
    c->relocated++;
    c->relocated_bytes += len;
    return 1;
}

int store_compact_claimer_ready(store_compact_t *c, shm_t *shm)
{
    if (atomic_load(&shm->logger_state) != LOGGER_RUNNING) return 0;
    /* A replica's log is its leader's: relocations, evictions and aborts
     * of large values included (D33). */
    if (atomic_load(&shm->repl.is_replica)) return 0;
    if (!c->adopted)
        c->adopted = ring_claimer_adopt(
            shm_store_claimer(shm), atomic_load_explicit(&shm->durable_lsn, memory_order_acquire));
    return c->adopted;
}

uint64_t store_compact_relocate(store_compact_t *c, store_ctx_t *ctx, shm_t *shm, uint64_t budget)
{
    if (c->target <= 0 || ctx->live.broken) return 0;
    if (!store_compact_claimer_ready(c, shm)) return 0;
    if (!c->pass) {
        if (!reloc_due(c, ctx)) return 0;
        c->pass = 1;
        c->last_low = st_live_lowest(&ctx->live);
        c->last_applied = ctx->applied;
        c->db = 0;
        c->cursor = 0;
        c->passes++;
        log_info("store: relocating the values below LSN %" PRIu64 " (live %" PRIu64
                 " bytes, the log spans %" PRIu64 " from LSN %" PRIu64 ")",
                 c->below, ctx->live.total, ctx->applied - st_live_lowest(&ctx->live),
                 st_live_lowest(&ctx->live));
    }
    uint64_t done = 0;
    int buckets = 0;
    while (c->pass && done < budget && buckets < 4096) {
        reloc_scan_t a = {.below = c->below, .c = c, .db = (unsigned)c->db};
        uint64_t next = idx_scan(&ctx->dbs[c->db]->ix, c->cursor, reloc_visit, &a);
        buckets++;
        for (unsigned i = 0; i < a.n; i++) {
            uint64_t lsn;
            uint32_t len;
            st_ent_get_ext1(a.e[i], &lsn, &len);
            int rc = reloc_one(c, ctx, shm, c->db, a.e[i]);
            if (rc == 0) goto full; /* this bucket again next time */
            if (rc > 0) done += len;
        }
        c->cursor = next;
        if (next == 0 && ++c->db == ctx->ndb) c->pass = 0;
    }
full:
    if (done) shm_wake(&shm->logger_wake);
    return done;
}

/* ---- large values whose writer died (D31) ------------------------------- */

static int owner_alive(shm_t *shm, uint64_t owner)
{
    uint32_t slot = (uint32_t)(owner >> 32);
    return slot < shm->nfrontends && atomic_load(&shm->fe[slot].pid) == (int32_t)(uint32_t)owner;
}

int store_abort_orphans(store_compact_t *c, store_ctx_t *ctx, shm_t *shm)
{
    int written = 0;
    for (uint32_t i = 0; i < ctx->groups.n; i++) {
        st_group_t *g = &ctx->groups.g[i];
        if (g->aborting || owner_alive(shm, g->owner)) continue;
        if (!store_compact_claimer_ready(c, shm)) break;
        ring_t *ring = shm_ring(shm);
        unsigned char id[8];
        cmd_put_i64(id, (int64_t)g->id);
        const unsigned char *argv[1] = {id};
        uint32_t lens[1] = {8};
        uint32_t space = rec_space((uint32_t)rec_cmd_payload_size(1, lens));
        uint64_t pos;
        if (ring_claim(ring, shm_store_claimer(shm), space, &pos) != 0) break;
        uint64_t durable = atomic_load_explicit(&shm->durable_lsn, memory_order_acquire);
        rec_encode_cmd_durable(ring_ptr(ring, pos), pos, durable, 0, ctx->now,
                               REC_OP_DB(CMD_BIGABORT, 0), 1, argv, lens);
        ring_commit(ring, shm_store_claimer(shm), pos);
        g->aborting = 1;
        written++;
        log_info("store: the writer of value group %" PRIu64 " (frontend %u, pid %u) is gone: "
                 "its %" PRIu64 " pending bytes are dropped",
                 g->id, (unsigned)(g->owner >> 32), (unsigned)(uint32_t)g->owner,
                 st_pieces_len(g->l));
    }
    if (written) shm_wake(&shm->logger_wake);
    return written;
}
