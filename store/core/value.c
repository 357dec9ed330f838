/*
 * value.c - string values (value.h): reading any byte range of any value
 * back (from the entry, RAM or the log's segment files), the replies that
 * carry a value, and the shapes APPEND, SETRANGE, SETBIT and INCRBYFLOAT
 * leave behind (values that are not simply one argument of one record).
 * Store process only (and tests); single-threaded.
 *
 * Value design (why values are not in RAM): the log already holds every
 * value byte, durably, at a known position. The index keeps {lsn, len} of
 * the bytes inside the record that carried them (SET's value argument,
 * each APPEND's argument) and GET preads them from the segment file, which
 * the page cache serves when hot. RAM then scales with the number of keys,
 * not with the data, which is the point of AtticDB. Values that fit in 24
 * bytes (every INCR result, flags, short strings) stay inline: an extent
 * costs 12 bytes anyway, and INCR must parse its operand without I/O.
 *
 * Design. A value is an inline prefix (at most STORE_INLINE_MAX bytes, in
 * the entry) followed by a tail (core/entry.c's banner has the entry layout).
 * SET keeps its value where the record put it: one extent (VK_EXTENT). Any
 * other shape is a piece list (VK_LIST, st_pieces_t), each piece one of
 *     PIECE_LOG   {lsn, len}: bytes of some record in the log (an APPEND's
 *                 or SETRANGE's argument, or any sub-range of one: a
 *                 sub-range of an extent is just {lsn + skip, len})
 *     PIECE_ZERO  len zero bytes (SETRANGE/SETBIT past the end)
 *     PIECE_RAM   len bytes held in RAM: bytes no record holds (SETBIT's
 *                 changed bytes, INCRBYFLOAT's result)
 * Pieces store their end offset, so the piece holding a byte is found by
 * binary search, and overwriting a range inside the value (SETRANGE,
 * SETBIT) never renumbers the pieces after it: it replaces the pieces the
 * range covers with one new piece, cutting the two at its edges (a "splice").
 *
 * SETBIT turns the changed byte's neighbourhood into RAM: the aligned
 * ST_RAM_CHUNK block around it, clipped to the piece it falls in, read
 * once from the log (or zero); later SETBITs in that block change RAM in
 * place. A bitmap built by SETBIT is therefore held in RAM (about its size,
 * as in Redis): its bytes exist in no record. SETRANGE writes that land
 * inside one RAM piece are copied into it, so such bitmaps stay compact.
 *
 * RAM per key is bounded. Pieces cost 16 bytes each. When a list has more
 * than ST_COMPACT_MIN pieces and they average under 32 bytes (e.g. many
 * one-byte APPENDs or SETRANGEs), compaction merges every run of pieces
 * shorter than ST_PIECE_SMALL bytes into RAM chunks of up to ST_RAM_CHUNK
 * bytes, leaving at most 2 * len / ST_PIECE_SMALL + 1 pieces. So a tail of
 * len bytes has at most max(64, len / 32 + 16) pieces (an array of up to
 * twice that capacity: 32 bytes per piece) plus the bytes held in RAM,
 * which are never more than len: at worst about 2x the value's length (a
 * value made of tiny writes; Redis holds 1x), and ~16 bytes per piece for
 * values built of large writes (SET, APPEND or SETRANGE arguments keep
 * their bytes in the log; a 500 MB run of zeros is one piece).
 * store_index_bytes counts all of it.
 *
 * Determinism: splices, growth and compaction depend only on the sequence
 * of applied records, and the bytes read from the log at apply time are the
 * ones replay reads, so replay rebuilds the same value bytes (store_digest).
 * A read of the log that fails while applying is fatal (EXIT_FATAL): the
 * state could no longer follow the log, and the log is the truth.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alloc.h"
#include "io.h"
#include "log.h"
#include "object.h"
#include "pieces.h"
#include "resp.h"
#include "seg.h"
#include "value.h"

_Static_assert(ST_VALUE_MAX == PIECE_END_MASK, "the largest value is what pieces can describe");

#define ST_PIECE_SMALL 128u   /* pieces shorter than this are merged when compacting */
#define ST_COMPACT_MIN 64u    /* never compact lists of this many pieces or fewer */
#define ST_SCAN_BUF    65536u /* bytes read from the log at once when scanning */

/* ---- reading values back from the log -------------------------------- */

static int seg_fd(store_ctx_t *ctx, uint64_t start)
{
    unsigned i = (unsigned)((start / ctx->segment_size) % STORE_FD_CACHE);
    if (ctx->fds[i].fd >= 0 && ctx->fds[i].start == start) return ctx->fds[i].fd;
    if (ctx->fds[i].fd >= 0) io->close(ctx->fds[i].fd);
    char path[4096];
    seg_path(path, sizeof(path), ctx->dir, start);
    int fd = io->open(path, O_RDONLY, 0);
    ctx->fds[i].fd = fd;
    ctx->fds[i].start = start;
    if (fd < 0) {
        log_warn("store: cannot open %s: %s", path, strerror(errno));
        return fd;
    }
    /* Values are read at random places: readahead (8 MB on some devices)
     * would read, and cache in place of what is wanted, bytes nobody asked
     * for (D59). A large value's parts are read 1 MB at a time anyway. */
    (void)posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
    return fd;
}

void st_log_forget(store_ctx_t *ctx, uint64_t start)
{
    unsigned i = (unsigned)((start / ctx->segment_size) % STORE_FD_CACHE);
    if (ctx->fds[i].fd < 0 || ctx->fds[i].start != start) return;
    io->close(ctx->fds[i].fd);
    ctx->fds[i].fd = -1;
}

/* Leave [lsn, lsn + len) for later as a hole at dst, inside the buffer
 * st_reply_range_deferred copies into now. Returns 0, or -1 when there is
 * no room for another hole (the bytes are read now). */
static int defer_hole(st_defer_t *d, uint64_t lsn, uint64_t len, const unsigned char *dst)
{
    if (d->n == d->max) return -1;
    if (d->n == d->cap) {
        uint32_t cap = d->cap ? d->cap * 2 : 16;
        if (cap > d->max) cap = d->max;
        st_hole_t *h = realloc(d->hole, cap * sizeof(*h));
        if (!h) return -1;
        d->hole = h;
        d->cap = cap;
    }
    d->hole[d->n++] = (st_hole_t){(uint64_t)(dst - d->base), lsn, len};
    if (lsn < d->lowest) d->lowest = lsn;
    return 0;
}

void st_defer_cut(store_ctx_t *ctx, const buf_t *b, size_t mark)
{
    st_defer_t *d = ctx->defer;
    if (!d || d->buf != b) return;
    uint32_t keep = 0;
    d->lowest = UINT64_MAX;
    for (uint32_t i = 0; i < d->n; i++) {
        if (d->hole[i].off < mark) {
            d->hole[keep++] = d->hole[i];
            if (d->hole[i].lsn < d->lowest) d->lowest = d->hole[i].lsn;
        }
    }
    d->n = keep;
}

/* Copy len bytes of the log at lsn to dst. Returns 0 or -1 (logged). */
int st_read_log(store_ctx_t *ctx, uint64_t lsn, uint64_t len, unsigned char *dst)
{
    if (ctx && ctx->defer && ctx->defer->base && defer_hole(ctx->defer, lsn, len, dst) == 0)
        return 0;
    while (len > 0) {
        uint64_t start = lsn & ~(ctx->segment_size - 1);
        uint64_t chunk = start + ctx->segment_size - lsn;
        if (chunk > len) chunk = len;
        int fd = seg_fd(ctx, start);
        if (fd < 0) return -1;
        if (io_pread_all(fd, dst, (size_t)chunk, (off_t)(lsn - start))) {
            log_warn("store: reading %" PRIu64 " bytes at LSN %" PRIu64 ": %s", chunk, lsn,
                     strerror(errno));
            return -1;
        }
        lsn += chunk;
        dst += chunk;
        len -= chunk;
    }
    return 0;
}

/* Copy e's whole value (ent_vlen bytes) to dst. Returns 0 or -1. */
_Noreturn void st_apply_unreadable(const char *what)
{
    log_warn("store: cannot read a value back from the log while applying %s: the state would "
             "no longer follow the log; stopping",
             what);
    exit(EXIT_FATAL);
}

void st_apply_read(store_ctx_t *ctx, idx_entry_t *e, uint64_t off, uint64_t len, unsigned char *dst,
                   const char *what)
{
    if (st_read_range(ctx, e, off, len, dst)) st_apply_unreadable(what);
}

int st_read_value(store_ctx_t *ctx, idx_entry_t *e, unsigned char *dst)
{
    return st_read_range(ctx, e, 0, st_ent_vlen(e), dst);
}

/* Append bytes [off, off + len) of e's value as a bulk string (or an error
 * reply: too large, I/O), its log bytes left as holes when d is set. */
static void reply_range(store_ctx_t *ctx, idx_entry_t *e, uint64_t off, uint64_t len, buf_t *b,
                        st_defer_t *d)
{
    if (ctx->max_reply && len > ctx->max_reply) {
        resp_error(b, STORE_ERR_TOO_LARGE);
        return;
    }
    size_t mark = b->len;
    resp_bulk_header(b, (size_t)len);
    /* The room first: the holes' offsets are taken from b's bytes as they
     * are while st_read_range copies. */
    buf_reserve(b, (size_t)len + 2);
    if (d) d->base = (const unsigned char *)b->data;
    int rc = st_read_range(ctx, e, off, len, (unsigned char *)b->data + b->len);
    if (d) d->base = NULL;
    if (rc) { /* holes left before the failure are cut with the value */
        st_defer_cut(ctx, b, mark);
        b->len = mark;
        resp_error(b, STORE_ERR_IO);
        return;
    }
    b->len += (size_t)len;
    buf_append(b, "\r\n", 2);
}

void st_reply_range(store_ctx_t *ctx, idx_entry_t *e, uint64_t off, uint64_t len, buf_t *b)
{
    reply_range(ctx, e, off, len, b, NULL);
}

void st_reply_range_deferred(store_ctx_t *ctx, idx_entry_t *e, uint64_t off, uint64_t len, buf_t *b)
{
    st_defer_t *d = ctx->defer;
    reply_range(ctx, e, off, len, b, d && d->buf == b ? d : NULL);
}

/* Append e's whole value the same way. */
void st_reply_value(store_ctx_t *ctx, idx_entry_t *e, buf_t *b)
{
    st_reply_range(ctx, e, 0, st_ent_vlen(e), b);
}

/* ---- a range kept for a reply in parts (D48) ---------------------------- */

/* Runs of the range, in order: log bytes, zeros, or a copy in RAM (the
 * inline prefix, SETBIT's blocks). The log bytes stay where they are: the
 * snapshot pins them (ctx->reply_pin keeps compaction from deleting
 * their segments), so later writes to the key cannot change what the
 * rest of the reply carries. */
typedef struct st_vrun {
    uint64_t where; /* PIECE_LOG: LSN; PIECE_RAM: the copy; PIECE_ZERO: 0 */
    uint64_t len;
    unsigned kind;
} st_vrun_t;

struct st_vsnap {
    uint64_t len, lowest; /* bytes; the lowest LSN a run reads */
    uint32_t n, cap, cur; /* runs; cur: the run the next read starts in */
    uint64_t cur_off;     /* offset of run cur in the range */
    st_vrun_t *run;
    /* Or a reply made as it goes (st_vsnap_gen): no runs, no length. Its
     * bytes past a part's end wait in over (from over_at) for the next
     * part; done once the generator said so. */
    const st_vgen_ops_t *gen;
    void *gen_state;
    buf_t over;
    size_t over_at;
    int done;
};

struct st_vsnap *st_vsnap_gen(const st_vgen_ops_t *ops, void *state)
{
    struct st_vsnap *v = calloc(1, sizeof(*v));
    if (!v) return NULL;
    v->gen = ops;
    v->gen_state = state;
    return v;
}

int st_vsnap_is_gen(const struct st_vsnap *v)
{
    return v->gen != NULL;
}

int st_vsnap_gen_next(store_ctx_t *ctx, struct st_vsnap *v, buf_t *out, size_t max)
{
    size_t start = out->len;
    if (v->over.len) { /* what the last part could not take first */
        size_t n = v->over.len - v->over_at;
        if (n > max) n = max;
        buf_append(out, v->over.data + v->over_at, n);
        v->over_at += n;
        if (v->over_at < v->over.len) return 0;
        buf_reset(&v->over);
        v->over_at = 0;
    }
    size_t used = out->len - start;
    if (!v->done && used < max) {
        int rc = v->gen->next(ctx, v->gen_state, out, max - used);
        if (rc < 0) return -1;
        v->done = rc == 1;
    }
    if (out->len - start > max) { /* an element past the part's end: kept */
        buf_append(&v->over, out->data + start + max, out->len - start - max);
        out->len = start + max;
    }
    return v->done && !v->over.len ? 1 : 0;
}

#define ST_SNAP_RAM_MAX (1u << 20) /* RAM bytes a snapshot copies at most */

static int snap_add(struct st_vsnap *v, unsigned kind, uint64_t where, uint64_t len, uint64_t *ram)
{
    if (!len) return 0;
    if (v->n == v->cap) {
        uint32_t cap = v->cap ? v->cap * 2 : 8;
        st_vrun_t *r = realloc(v->run, cap * sizeof(*r));
        if (!r) return -1;
        v->run = r;
        v->cap = cap;
    }
    if (kind == PIECE_RAM) {
        if ((*ram += len) > ST_SNAP_RAM_MAX) return -1;
        unsigned char *copy = malloc((size_t)len);
        if (!copy) return -1;
        memcpy(copy, (const void *)(uintptr_t)where, (size_t)len);
        where = (uintptr_t)copy;
    } else if (kind == PIECE_LOG && where < v->lowest) {
        v->lowest = where;
    }
    v->run[v->n++] = (st_vrun_t){where, len, kind};
    return 0;
}

void st_vsnap_free(struct st_vsnap *v)
{
    if (!v) return;
    if (v->gen) v->gen->free(v->gen_state);
    buf_free(&v->over);
    for (uint32_t i = 0; i < v->n; i++)
        if (v->run[i].kind == PIECE_RAM) free((void *)(uintptr_t)v->run[i].where);
    free(v->run);
    free(v);
}

/* Bytes [off, off + len) of e's value as runs; NULL when they would copy
 * more than ST_SNAP_RAM_MAX bytes of RAM (the reply is then built whole). */
static struct st_vsnap *vsnap_take(idx_entry_t *e, uint64_t off, uint64_t len)
{
    struct st_vsnap *v = calloc(1, sizeof(*v));
    if (!v) return NULL;
    v->len = len;
    v->lowest = UINT64_MAX;
    uint64_t ram = 0;
    int bad = 0;
    if (off < e->ilen) {
        uint64_t k = e->ilen - off < len ? e->ilen - off : len;
        bad |= snap_add(v, PIECE_RAM, (uintptr_t)(st_ent_inline(e) + off), k, &ram);
        off += k;
        len -= k;
    }
    uint64_t a = off - e->ilen;
    if (len && st_ent_kind(e) == VK_EXTENT) {
        uint64_t lsn;
        uint32_t elen;
        st_ent_get_ext1(e, &lsn, &elen);
        bad |= snap_add(v, PIECE_LOG, lsn + a, len, &ram);
    } else if (len && st_ent_kind(e) == VK_LIST) {
        const st_pieces_t *l = st_ent_pieces(e);
        for (uint32_t i = st_pieces_find(l, a); len > 0 && i < l->n && !bad; i++) {
            const st_piece_t *p = &l->p[i];
            uint64_t s = st_piece_start(l, i), take = st_piece_end(p) - a;
            if (take > len) take = len;
            unsigned kind = st_piece_kind(p);
            uint64_t where = kind == PIECE_ZERO ? 0 : p->where + (a - s);
            bad |= snap_add(v, kind, where, take, &ram);
            a += take;
            len -= take;
        }
    } else if (len) {
        bad = 1;
    }
    if (bad) {
        st_vsnap_free(v);
        return NULL;
    }
    return v;
}

uint64_t st_vsnap_lowest(const struct st_vsnap *v)
{
    return v->gen ? v->gen->lowest(v->gen_state) : v->lowest;
}

uint64_t st_vsnap_len(const struct st_vsnap *v)
{
    return v->len;
}

int st_vsnap_read(store_ctx_t *ctx, struct st_vsnap *v, uint64_t off, uint64_t n,
                  unsigned char *dst)
{
    if (off < v->cur_off) v->cur = 0, v->cur_off = 0; /* read again from the start */
    while (v->cur < v->n && v->cur_off + v->run[v->cur].len <= off)
        v->cur_off += v->run[v->cur++].len;
    for (uint32_t i = v->cur; n > 0 && i < v->n; i++) {
        const st_vrun_t *r = &v->run[i];
        uint64_t start = i == v->cur ? v->cur_off : off, skip = off - start;
        uint64_t take = r->len - skip < n ? r->len - skip : n;
        if (r->kind == PIECE_LOG) {
            if (st_read_log(ctx, r->where + skip, take, dst)) return -1;
        } else if (r->kind == PIECE_RAM) {
            memcpy(dst, (const unsigned char *)(uintptr_t)r->where + skip, (size_t)take);
        } else {
            memset(dst, 0, (size_t)take);
        }
        dst += take;
        off += take;
        n -= take;
    }
    return n ? -1 : 0;
}

void st_reply_range_parts(store_ctx_t *ctx, idx_entry_t *e, uint64_t off, uint64_t len, buf_t *b)
{
    if (ctx->reply_stream_ok && !ctx->reply_stream && len >= ST_STREAM_MIN &&
        (!ctx->max_reply || len <= ctx->max_reply)) {
        ctx->reply_stream = vsnap_take(e, off, len);
        if (ctx->reply_stream) {
            resp_bulk_header(b, (size_t)len);
            return;
        }
    }
    st_reply_range_deferred(ctx, e, off, len, b);
}

/* ---- pieces ------------------------------------------------------------ */

/* Read the log while applying a record: failing is fatal (banner). */
static void read_log_or_die(store_ctx_t *ctx, uint64_t lsn, uint64_t len, unsigned char *dst)
{
    if (st_read_log(ctx, lsn, len, dst) == 0) return;
    log_warn("store: cannot read back %llu bytes at LSN %llu while applying a record: the "
             "state would no longer follow the log; stopping",
             (unsigned long long)len, (unsigned long long)lsn);
    exit(EXIT_FATAL);
}

/* Copy bytes [skip, skip + n) of piece p (while applying). */
static void piece_copy(store_ctx_t *ctx, const st_piece_t *p, uint64_t skip, uint64_t n,
                       unsigned char *dst)
{
    switch (st_piece_kind(p)) {
    case PIECE_LOG:
        read_log_or_die(ctx, p->where + skip, n, dst);
        break;
    case PIECE_RAM:
        memcpy(dst, st_piece_ram(p) + skip, (size_t)n);
        break;
    default:
        memset(dst, 0, (size_t)n);
        break;
    }
}

unsigned char *st_pieces_read(store_ctx_t *ctx, const st_pieces_t *l, uint64_t *len)
{
    *len = st_pieces_len(l);
    unsigned char *buf = st_xmalloc(*len ? (size_t)*len : 1);
    for (uint32_t i = 0; i < l->n; i++) {
        uint64_t start = st_piece_start(l, i);
        piece_copy(ctx, &l->p[i], 0, st_piece_end(&l->p[i]) - start, buf + start);
    }
    return buf;
}

/* Move the accumulated chunk into the list as a RAM piece ending at end. */
static void flush_chunk(st_pieces_t *out, unsigned char **acc, size_t *acc_len, uint64_t end)
{
    if (!*acc_len) return;
    unsigned char *buf = st_xrealloc(*acc, *acc_len);
    out->p[out->n++] = st_piece_make(PIECE_RAM, (uintptr_t)buf, end);
    out->ram_bytes += *acc_len;
    *acc = NULL;
    *acc_len = 0;
}

/* Compaction (banner): merge runs of small pieces into RAM chunks once the
 * pieces average under 32 bytes. */
static st_pieces_t *maybe_compact(store_ctx_t *ctx, st_pieces_t *l)
{
    uint64_t len = st_pieces_len(l);
    if (l->n <= ST_COMPACT_MIN || l->n <= len / 32 + 16) return l;
    /* Each chunk takes at least one small piece: never more pieces out. */
    st_pieces_t *out = st_pieces_new(l->n);
    unsigned char *acc = NULL;
    size_t acc_len = 0;
    for (uint32_t i = 0; i < l->n; i++) {
        st_piece_t *p = &l->p[i];
        uint64_t s = st_piece_start(l, i), plen = st_piece_end(p) - s;
        if (plen >= ST_PIECE_SMALL) {
            flush_chunk(out, &acc, &acc_len, s);
            out->p[out->n++] = *p;
            if (st_piece_kind(p) == PIECE_RAM) out->ram_bytes += plen;
            continue;
        }
        /* Its bytes now live in RAM: the log's copy is no longer referred to. */
        if (st_piece_kind(p) == PIECE_LOG) st_live_add(&ctx->live, p->where, plen, -1);
        for (uint64_t done = 0; done < plen;) {
            if (!acc) acc = st_xmalloc(ST_RAM_CHUNK);
            uint64_t take = plen - done;
            if (take > ST_RAM_CHUNK - acc_len) take = ST_RAM_CHUNK - acc_len;
            piece_copy(ctx, p, done, take, acc + acc_len);
            acc_len += (size_t)take;
            done += take;
            if (acc_len == ST_RAM_CHUNK) flush_chunk(out, &acc, &acc_len, s + done);
        }
        if (st_piece_kind(p) == PIECE_RAM) free(st_piece_ram(p));
    }
    flush_chunk(out, &acc, &acc_len, len);
    free(l);
    return out;
}

/* ---- entries ----------------------------------------------------------- */

/* Uncount the LOG bytes of tail range [lo, hi) of l: a splice over that
 * range is about to replace them. */
static void uncount_range(store_ctx_t *ctx, const st_pieces_t *l, uint64_t lo, uint64_t hi)
{
    for (uint32_t i = st_pieces_find(l, lo); i < l->n && st_piece_start(l, i) < hi; i++) {
        const st_piece_t *p = &l->p[i];
        if (st_piece_kind(p) != PIECE_LOG) continue;
        uint64_t s = st_piece_start(l, i), e = st_piece_end(p);
        uint64_t a = lo > s ? lo : s, b = hi < e ? hi : e;
        if (b > a) st_live_add(&ctx->live, p->where + (a - s), b - a, -1);
    }
}

static uint64_t list_bytes(idx_entry_t *e)
{
    return st_ent_kind(e) == VK_LIST ? st_pieces_bytes(st_ent_pieces(e)) : 0;
}

/* Turn *slot's entry into VK_LIST (an extent becomes one LOG piece). */
static idx_entry_t *to_list(st_db_t *db, idx_entry_t **slot)
{
    idx_entry_t *e = *slot;
    unsigned kind = st_ent_kind(e);
    if (kind == VK_LIST) return e;
    st_pieces_t *l = st_pieces_new(4);
    if (kind == VK_EXTENT) {
        uint64_t lsn;
        uint32_t len;
        st_ent_get_ext1(e, &lsn, &len);
        l->p[l->n++] = st_piece_make(PIECE_LOG, lsn, len);
    }
    e = st_ent_resize(db, slot, e->ilen, VK_LIST);
    st_ent_set_pieces(e, l);
    return e;
}

/* Grow *slot's value by delta zero bytes. */
static idx_entry_t *grow(st_db_t *db, idx_entry_t **slot, uint64_t delta)
{
    idx_entry_t *e = *slot;
    uint64_t vlen = st_ent_vlen(e);
    if (st_ent_kind(e) == VK_INLINE && vlen + delta <= STORE_INLINE_MAX) {
        e = st_ent_resize(db, slot, (uint8_t)(vlen + delta), VK_INLINE);
        memset(st_ent_inline(e) + vlen, 0, (size_t)delta);
        return e;
    }
    e = to_list(db, slot);
    st_ent_set_pieces(e, st_pieces_grow_zero(st_ent_pieces(e), delta));
    return e;
}

/* Copy len bytes of a write into RAM: from src, or, when src is NULL (a
 * large value's parts, D31: only the log has them), from the log. */
static void put_bytes(store_ctx_t *ctx, unsigned char *dst, const unsigned char *src,
                      uint64_t src_lsn, uint64_t len)
{
    if (src)
        memcpy(dst, src, (size_t)len);
    else
        read_log_or_die(ctx, src_lsn, len, dst);
}

idx_entry_t *st_val_write(store_ctx_t *ctx, st_db_t *db, idx_entry_t **slot, uint64_t off,
                          const unsigned char *src, uint64_t src_lsn, uint64_t len)
{
    idx_entry_t *e = *slot;
    if (len == 0) return e;
    uint64_t before = list_bytes(e), vlen = st_ent_vlen(e), end = off + len;
    if (st_ent_kind(e) == VK_INLINE && end <= STORE_INLINE_MAX) {
        if (end > vlen) {
            e = st_ent_resize(db, slot, (uint8_t)end, VK_INLINE);
            if (off > vlen) memset(st_ent_inline(e) + vlen, 0, (size_t)(off - vlen));
        }
        put_bytes(ctx, st_ent_inline(e) + off, src, src_lsn, len);
        return e;
    }
    if (off > vlen) {
        e = grow(db, slot, off - vlen);
        vlen = off;
    }
    if (st_ent_kind(e) == VK_INLINE && off == vlen && len <= UINT32_MAX) {
        /* Appending to a short value: the prefix stays, one extent follows
         * (no list: 12 bytes in the entry). */
        e = st_ent_resize(db, slot, e->ilen, VK_EXTENT);
        st_ent_set_ext1(e, src_lsn, (uint32_t)len);
        st_live_add(&ctx->live, src_lsn, len, 1);
        return e;
    }
    e = to_list(db, slot);
    if (off < e->ilen) {
        uint64_t k = e->ilen - off < len ? e->ilen - off : len;
        put_bytes(ctx, st_ent_inline(e) + off, src, src_lsn, k);
        off += k;
        if (src) src += k;
        src_lsn += k;
        len -= k;
    }
    if (len) {
        st_pieces_t *l = st_ent_pieces(e);
        uint64_t a = off - e->ilen, tail = st_pieces_len(l);
        uint32_t i = st_pieces_find(l, a);
        if (i < l->n && st_piece_kind(&l->p[i]) == PIECE_RAM && a + len <= st_piece_end(&l->p[i])) {
            put_bytes(ctx, st_piece_ram(&l->p[i]) + (a - st_piece_start(l, i)), src, src_lsn, len);
        } else {
            uint64_t hi = a + len < tail ? a + len : tail;
            uncount_range(ctx, l, a, hi);
            st_live_add(&ctx->live, src_lsn, len, 1);
            l = st_pieces_splice(l, a, hi, PIECE_LOG, src_lsn, len);
            l = maybe_compact(ctx, l);
            st_ent_set_pieces(e, l);
        }
    }
    ctx->entry_bytes += list_bytes(e) - before;
    return e;
}

unsigned char *st_val_byte(store_ctx_t *ctx, st_db_t *db, idx_entry_t **slot, uint64_t byte)
{
    idx_entry_t *e = *slot;
    uint64_t before = list_bytes(e), vlen = st_ent_vlen(e);
    if (byte >= vlen) e = grow(db, slot, byte + 1 - vlen);
    unsigned char *at;
    if (byte < e->ilen) {
        at = st_ent_inline(e) + byte;
    } else {
        e = to_list(db, slot);
        st_pieces_t *l = st_ent_pieces(e);
        uint64_t t = byte - e->ilen;
        uint32_t i = st_pieces_find(l, t);
        if (st_piece_kind(&l->p[i]) != PIECE_RAM) {
            st_piece_t *p = &l->p[i];
            uint64_t s = st_piece_start(l, i), block = t - t % ST_RAM_CHUNK;
            uint64_t lo = block > s ? block : s;
            uint64_t hi =
                block + ST_RAM_CHUNK < st_piece_end(p) ? block + ST_RAM_CHUNK : st_piece_end(p);
            unsigned char *buf = st_xmalloc((size_t)(hi - lo));
            piece_copy(ctx, p, lo - s, hi - lo, buf);
            l->ram_bytes += hi - lo;
            uncount_range(ctx, l, lo, hi);
            l = st_pieces_splice(l, lo, hi, PIECE_RAM, (uintptr_t)buf, hi - lo);
            l = maybe_compact(ctx, l);
            st_ent_set_pieces(e, l);
            i = st_pieces_find(l, t);
        }
        at = st_piece_ram(&l->p[i]) + (t - st_piece_start(l, i));
    }
    ctx->entry_bytes += list_bytes(e) - before;
    return at;
}

idx_entry_t *st_ent_new_ram(const rec_arg_t *key, const unsigned char *p, size_t len,
                            int64_t expire_at)
{
    if (len <= STORE_INLINE_MAX) {
        rec_arg_t val = {p, (uint32_t)len};
        return st_ent_new(key, &val, 0, expire_at);
    }
    st_pieces_t *l = st_pieces_new(1);
    unsigned char *buf = st_xmalloc(len);
    memcpy(buf, p, len);
    l->ram_bytes = len;
    l->p[l->n++] = st_piece_make(PIECE_RAM, (uintptr_t)buf, len);
    return st_ent_new_pieces(key, l, expire_at);
}

idx_entry_t *st_ent_new_pieces(const rec_arg_t *key, st_pieces_t *l, int64_t expire_at)
{
    idx_entry_t *e = st_ent_alloc(key->ptr, key->len, 0, VK_LIST, expire_at);
    st_ent_set_pieces(e, l);
    return e;
}

/* A copy's aux argument to st_ent_alloc: e's room and word. */
static int64_t dup_aux(const idx_entry_t *e)
{
    if (!(e->eflags & ENT_AUX)) return 0;
    return st_ent_aux(e) ? st_ent_aux(e) : ST_AUX_ROOM;
}

idx_entry_t *st_ent_dup(idx_entry_t *e, const rec_arg_t *key)
{
    unsigned kind = st_ent_kind(e);
    if (kind == VK_OBJ) {
        st_obj_t *o = st_ent_obj(e);
        return st_ent_new_obj(key, o->ops->dup(o), dup_aux(e));
    }
    idx_entry_t *d = st_ent_alloc(key->ptr, key->len, e->ilen, e->vkind, dup_aux(e));
    memcpy(st_ent_inline(d), st_ent_inline(e), e->ilen);
    if (kind == VK_EXTENT) {
        uint64_t lsn;
        uint32_t len;
        st_ent_get_ext1(e, &lsn, &len);
        st_ent_set_ext1(d, lsn, len);
    } else if (kind == VK_LIST) {
        const st_pieces_t *l = st_ent_pieces(e);
        st_pieces_t *c = st_pieces_new(l->n ? l->n : 1);
        c->n = l->n;
        c->ram_bytes = l->ram_bytes;
        for (uint32_t i = 0; i < l->n; i++) {
            c->p[i] = l->p[i];
            if (st_piece_kind(&l->p[i]) != PIECE_RAM) continue;
            size_t n = (size_t)(st_piece_end(&l->p[i]) - st_piece_start(l, i));
            unsigned char *buf = st_xmalloc(n);
            memcpy(buf, st_piece_ram(&l->p[i]), n);
            c->p[i].where = (uintptr_t)buf;
        }
        st_ent_set_pieces(d, c);
    }
    return d;
}

/* ---- reading ----------------------------------------------------------- */

int st_read_range(store_ctx_t *ctx, idx_entry_t *e, uint64_t off, uint64_t len, unsigned char *dst)
{
    if (off < e->ilen) {
        uint64_t k = e->ilen - off < len ? e->ilen - off : len;
        memcpy(dst, st_ent_inline(e) + off, (size_t)k);
        dst += k;
        off += k;
        len -= k;
    }
    if (!len) return 0;
    uint64_t a = off - e->ilen;
    if (st_ent_kind(e) == VK_INLINE) return -1; /* past the end: a caller's bug */
    if (st_ent_kind(e) == VK_EXTENT) {
        uint64_t lsn;
        uint32_t elen;
        st_ent_get_ext1(e, &lsn, &elen);
        return st_read_log(ctx, lsn + a, len, dst);
    }
    const st_pieces_t *l = st_ent_pieces(e);
    for (uint32_t i = st_pieces_find(l, a); len > 0 && i < l->n; i++) {
        const st_piece_t *p = &l->p[i];
        uint64_t s = st_piece_start(l, i), take = st_piece_end(p) - a;
        if (take > len) take = len;
        switch (st_piece_kind(p)) {
        case PIECE_LOG:
            if (st_read_log(ctx, p->where + (a - s), take, dst)) return -1;
            break;
        case PIECE_RAM:
            memcpy(dst, st_piece_ram(p) + (a - s), (size_t)take);
            break;
        default:
            memset(dst, 0, (size_t)take);
            break;
        }
        dst += take;
        a += take;
        len -= take;
    }
    return 0;
}

/* Pass [lsn, lsn + n) of the log to fn through buf. */
static int scan_log(store_ctx_t *ctx, uint64_t lsn, uint64_t n, unsigned char **buf, st_chunk_fn fn,
                    void *arg)
{
    if (!*buf) *buf = st_xmalloc(ST_SCAN_BUF);
    while (n > 0) {
        uint64_t take = n < ST_SCAN_BUF ? n : ST_SCAN_BUF;
        if (st_read_log(ctx, lsn, take, *buf)) return -1;
        if (fn(arg, *buf, (size_t)take)) return 1;
        lsn += take;
        n -= take;
    }
    return 0;
}

int st_scan_range(store_ctx_t *ctx, idx_entry_t *e, uint64_t off, uint64_t len, st_chunk_fn fn,
                  void *arg)
{
    if (off < e->ilen && len > 0) {
        uint64_t k = e->ilen - off < len ? e->ilen - off : len;
        if (fn(arg, st_ent_inline(e) + off, (size_t)k)) return 1;
        off += k;
        len -= k;
    }
    if (!len) return 0;
    if (st_ent_kind(e) == VK_INLINE) return -1; /* past the end: a caller's bug */
    uint64_t a = off - e->ilen;
    unsigned char *buf = NULL;
    int rc = 0;
    if (st_ent_kind(e) == VK_EXTENT) {
        uint64_t lsn;
        uint32_t elen;
        st_ent_get_ext1(e, &lsn, &elen);
        rc = scan_log(ctx, lsn + a, len, &buf, fn, arg);
    } else {
        const st_pieces_t *l = st_ent_pieces(e);
        for (uint32_t i = st_pieces_find(l, a); rc == 0 && len > 0 && i < l->n; i++) {
            const st_piece_t *p = &l->p[i];
            uint64_t s = st_piece_start(l, i), take = st_piece_end(p) - a;
            if (take > len) take = len;
            switch (st_piece_kind(p)) {
            case PIECE_LOG:
                rc = scan_log(ctx, p->where + (a - s), take, &buf, fn, arg);
                break;
            case PIECE_RAM:
                rc = fn(arg, st_piece_ram(p) + (a - s), (size_t)take) ? 1 : 0;
                break;
            default:
                rc = fn(arg, NULL, (size_t)take) ? 1 : 0;
                break;
            }
            a += take;
            len -= take;
        }
    }
    free(buf);
    return rc;
}
