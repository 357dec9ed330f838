/*
 * t_bitmap.c - the store's bit commands on string values: SETBIT (apply),
 * GETBIT, BITCOUNT and BITPOS (reads), with Redis 7.0's argument rules and
 * replies (handlers.h). Store process only; a type handler: it calls
 * core/ (entries, values, WATCH) and is called by route.c.
 *
 * Bits are numbered from the most significant bit of byte 0. BITCOUNT and
 * BITPOS turn their range (bytes, or bits with BIT) into one inclusive bit
 * range [sb, eb] and walk the value's bytes with st_scan_range, so runs of
 * zeros (core/pieces.h's PIECE_ZERO) cost nothing however long they are, and a
 * value kept in the log is read in large chunks.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "handlers.h"
#include "bitfield.h"
#include "log.h"
#include "pubsub.h"
#include "resp.h"
#include "store/core/alloc.h"
#include "store/core/entry.h"
#include "store/core/object.h"
#include "store/core/value.h"
#include "store/core/watch.h"
#include "strutil.h"

#define ERR_NOT_INT "ERR value is not an integer or out of range"
#define ERR_SYNTAX  "ERR syntax error"

/* True when arg is `word` in any case (BYTE, BIT). */
static int word_is(const rec_arg_t *arg, const char *word)
{
    return strlen(word) == arg->len && strncasecmp((const char *)arg->ptr, word, arg->len) == 0;
}

/* One byte of e's value while applying: a failed read stops the store. */
static unsigned char apply_byte(store_ctx_t *ctx, idx_entry_t *e, uint64_t off)
{
    unsigned char b;
    st_apply_read(ctx, e, off, 1, &b, "SETBIT");
    return b;
}

/* SETBIT key offset bit; the frontend checked the offset and the bit. */
void st_apply_setbit(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    const rec_arg_t *key = &a->argv[0];
    uint64_t bitoff = (uint64_t)cmd_get_i64(a->argv[1].ptr);
    unsigned on = cmd_get_u32(a->argv[2].ptr) ? 1 : 0;
    uint64_t byte = bitoff >> 3;
    unsigned shift = 7 - (unsigned)(bitoff & 7);
    idx_entry_t **slot = st_find_live(a->db, key, ctx->now, 1);
    if (st_wrongtype(slot, ST_STRING, r)) return;
    int created = 0;
    if (!slot) {
        rec_arg_t empty = {key->ptr, 0};
        st_ent_store(a->db, NULL, st_ent_new(key, &empty, 0, 0));
        slot = st_find_live(a->db, key, ctx->now, 0);
        created = 1;
    }
    /* Redis unshares the value (raw) even when the bit does not change. */
    st_ent_set_enc(*slot, VENC_RAW);
    uint64_t vlen = st_ent_vlen(*slot);
    unsigned old = byte < vlen ? (apply_byte(ctx, *slot, byte) >> shift) & 1u : 0;
    /* Redis 7 signals a change only when the key is new, grows or the bit
     * flips. */
    if (created || byte >= vlen || old != on) {
        unsigned char *p = st_val_byte(ctx, a->db, slot, byte);
        *p = (unsigned char)((*p & ~(1u << shift)) | (on << shift));
        st_key_changed(ctx, a, a->dbnum, key);
    }
    if (r) resp_integer(r, old);
}

/* BITOP's operations, as the frontend numbers them (fe_enc_bitop). */
enum { BITOP_AND, BITOP_OR, BITOP_XOR, BITOP_NOT };

/* CMD_BITOP destkey op key [key ...]: Redis' bitopCommand. Each source is
 * looked up as a read (keyspace hits and misses, "keymiss"); one that is
 * not a string answers WRONGTYPE before anything changes. A missing one is
 * a run of zero bytes; the result is as long as the longest source. An
 * empty result deletes destkey ("del"); any other replaces whatever it
 * held with a raw string without a TTL ("set"), as Redis' setKey. */
void st_apply_bitop(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    const rec_arg_t *dest = &a->argv[0];
    uint32_t op = cmd_get_u32(a->argv[1].ptr);
    uint16_t n = (uint16_t)(a->argc - 2);
    unsigned char **src = st_xmalloc(n * sizeof(*src));
    uint64_t *len = st_xmalloc(n * sizeof(*len)), max = 0;
    uint16_t got = 0;
    for (; got < n; got++) {
        idx_entry_t **slot = st_find_read(a->db, &a->argv[2 + got], ctx->now, 1);
        if (st_wrongtype(slot, ST_STRING, r)) break;
        len[got] = slot ? st_ent_vlen(*slot) : 0;
        src[got] = st_xmalloc(len[got] ? len[got] : 1);
        if (len[got]) st_apply_read(ctx, *slot, 0, len[got], src[got], "BITOP");
        if (len[got] > max) max = len[got];
    }
    if (got == n && max) {
        unsigned char *res = st_xmalloc(max);
        for (uint64_t i = 0; i < max; i++) {
            unsigned char v = i < len[0] ? src[0][i] : 0;
            if (op == BITOP_NOT) v = (unsigned char)~v;
            for (uint16_t k = 1; k < n; k++) {
                unsigned char b = i < len[k] ? src[k][i] : 0;
                v = op == BITOP_AND ? v & b : op == BITOP_OR ? v | b : v ^ b;
            }
            res[i] = v;
        }
        idx_entry_t **dslot = st_find_live(a->db, dest, ctx->now, 1);
        idx_entry_t *e = st_ent_new_ram(dest, res, max, 0);
        st_ent_set_enc(e, VENC_RAW);
        st_ent_store(a->db, dslot, e);
        st_key_changed_as(ctx, a, a->dbnum, dest, PS_NOTIFY_STRING, "set");
        free(res);
    } else if (got == n) {
        idx_entry_t **dslot = st_find_live(a->db, dest, ctx->now, 1);
        if (dslot) {
            st_remove(a->db, dslot);
            st_key_changed_as(ctx, a, a->dbnum, dest, PS_NOTIFY_GENERIC, "del");
        }
    }
    if (got == n && r) resp_integer(r, (long long)max);
    for (uint16_t k = 0; k < got; k++)
        free(src[k]);
    free(src);
    free(len);
}

/* ---- BITFIELD ------------------------------------------------------------ */

/* Bits [off, off + bits) of p, most significant first (Redis' layout). */
static uint64_t bf_get_u(const unsigned char *p, uint64_t off, unsigned bits)
{
    uint64_t v = 0;
    for (unsigned j = 0; j < bits; j++) {
        uint64_t b = off + j;
        v = (v << 1) | ((p[b >> 3] >> (7 - (b & 7))) & 1u);
    }
    return v;
}

static int64_t bf_get_i(const unsigned char *p, uint64_t off, unsigned bits)
{
    uint64_t v = bf_get_u(p, off, bits);
    if (bits < 64 && (v >> (bits - 1)) & 1u) v |= UINT64_MAX << bits;
    return (int64_t)v;
}

static void bf_set(unsigned char *p, uint64_t off, unsigned bits, uint64_t v)
{
    for (unsigned j = 0; j < bits; j++) {
        uint64_t b = off + j;
        unsigned char m = (unsigned char)(1u << (7 - (b & 7)));
        if ((v >> (bits - 1 - j)) & 1u)
            p[b >> 3] |= m;
        else
            p[b >> 3] &= (unsigned char)~m;
    }
}

/* value + incr in an unsigned field of bits: 0, or 1 / -1 when it goes
 * past the top / bottom, with *limit what WRAP or SAT make of it (Redis'
 * checkUnsignedBitfieldOverflow, the same conditions). */
static int bf_over_u(uint64_t value, int64_t incr, unsigned bits, int owtype, uint64_t *limit)
{
    uint64_t max = bits == 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;
    int64_t maxincr = (int64_t)(max - value), minincr = (int64_t)(0 - value);
    int dir = value > max || (incr > 0 && incr > maxincr) ? 1 : incr < 0 && incr < minincr ? -1 : 0;
    if (dir && owtype == BF_WRAP)
        *limit = (value + (uint64_t)incr) & max;
    else if (dir && owtype == BF_SAT)
        *limit = dir > 0 ? max : 0;
    return dir;
}

/* The same in a signed field (checkSignedBitfieldOverflow): WRAP keeps the
 * low bits and extends their sign. */
static int bf_over_i(int64_t value, int64_t incr, unsigned bits, int owtype, int64_t *limit)
{
    int64_t max = bits == 64 ? INT64_MAX : (INT64_C(1) << (bits - 1)) - 1, min = -max - 1;
    int64_t maxincr = (int64_t)((uint64_t)max - (uint64_t)value);
    int64_t minincr = (int64_t)((uint64_t)min - (uint64_t)value);
    int dir = 0;
    if (value > max || (bits != 64 && incr > maxincr) || (value >= 0 && incr > 0 && incr > maxincr))
        dir = 1;
    else if (value < min || (bits != 64 && incr < minincr) ||
             (value < 0 && incr < 0 && incr < minincr))
        dir = -1;
    if (dir && owtype == BF_WRAP) {
        uint64_t c = (uint64_t)value + (uint64_t)incr;
        if (bits < 64)
            c = (c >> (bits - 1)) & 1u ? c | (UINT64_MAX << bits) : c & ~(UINT64_MAX << bits);
        *limit = (int64_t)c;
    } else if (dir && owtype == BF_SAT) {
        *limit = dir > 0 ? max : min;
    }
    return dir;
}

/* The 9 bytes from byte on of e's value, zero past its end: 0, or -1
 * when the read failed. */
static int bf_window(store_ctx_t *ctx, idx_entry_t *e, uint64_t byte, unsigned char buf[9])
{
    memset(buf, 0, 9);
    uint64_t vlen = e ? st_ent_vlen(e) : 0;
    if (byte >= vlen) return 0;
    uint64_t n = vlen - byte < 9 ? vlen - byte : 9;
    return st_read_range(ctx, e, byte, n, buf) ? -1 : 0;
}

/* One operation on the 9-byte window at its byte: the reply, and for SET
 * and INCRBY the new bits (*write set, unless FAIL refused them) and
 * whether they differ from the old. */
static void bf_run(const bf_op_t *op, unsigned char *w, uint64_t roff, buf_t *r, int *write,
                   int *changed)
{
    *write = *changed = 0;
    if (op->opcode == BF_GET) {
        if (r)
            resp_integer(r, op->sign ? bf_get_i(w, roff, op->bits)
                                     : (long long)bf_get_u(w, roff, op->bits));
        return;
    }
    int incr = op->opcode == BF_INCRBY, over;
    uint64_t newbits, oldbits;
    long long ret;
    if (op->sign) {
        int64_t old = bf_get_i(w, roff, op->bits), lim = 0;
        int64_t nv = incr ? (int64_t)((uint64_t)old + (uint64_t)op->value) : op->value;
        over = bf_over_i(incr ? old : op->value, incr ? op->value : 0, op->bits, op->owtype, &lim);
        if (over) nv = lim;
        ret = incr ? nv : old;
        newbits = (uint64_t)nv, oldbits = (uint64_t)old;
    } else {
        uint64_t old = bf_get_u(w, roff, op->bits), lim = 0;
        uint64_t nv = incr ? old + (uint64_t)op->value : (uint64_t)op->value;
        over = bf_over_u(incr ? old : (uint64_t)op->value, incr ? op->value : 0, op->bits,
                         op->owtype, &lim);
        if (over) nv = lim;
        ret = incr ? (long long)nv : (long long)old;
        newbits = nv, oldbits = old;
    }
    if (over && op->owtype == BF_FAIL) {
        if (r) resp_null(r);
        return;
    }
    if (r) resp_integer(r, ret);
    bf_set(w, roff, op->bits, newbits);
    *write = 1;
    *changed = oldbits != newbits;
}

/* CMD_BITFIELD key ops: operations with a SET or INCRBY among them (the
 * frontend parsed them: common/bitfield.c). As Redis: the value is made,
 * or grown with zeros, up to the last bit any SET or INCRBY reaches before
 * the first runs, and left raw; then each runs in order on the bytes as
 * the ones before left them; the key counts as changed ("setbit", WATCH)
 * when one wrote different bits, or wrote any bits into a value this
 * command made or grew. A value made or grown whose every write FAIL
 * refused stays so without that (Redis does the same). */
void st_apply_bitfield(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    const rec_arg_t *key = &a->argv[0];
    uint32_t n = a->argv[1].len / BF_OP_BYTES;
    idx_entry_t **slot = st_find_live(a->db, key, ctx->now, 1);
    if (st_wrongtype(slot, ST_STRING, r)) return;
    uint64_t top = 0;
    for (uint32_t i = 0; i < n; i++) {
        bf_op_t op;
        bf_get(a->argv[1].ptr + (size_t)i * BF_OP_BYTES, &op);
        if (op.opcode != BF_GET && op.offset + op.bits - 1 > top) top = op.offset + op.bits - 1;
    }
    int dirty = 0;
    if (!slot) {
        rec_arg_t empty = {key->ptr, 0};
        st_ent_store(a->db, NULL, st_ent_new(key, &empty, 0, 0));
        slot = st_find_live(a->db, key, ctx->now, 0);
        dirty = 1;
    }
    st_ent_set_enc(*slot, VENC_RAW);
    if (st_ent_vlen(*slot) < (top >> 3) + 1) {
        (void)st_val_byte(ctx, a->db, slot, top >> 3);
        dirty = 1;
    }
    if (dirty) st_rcache_drop(ctx, a->dbnum, key); /* changed even if no operation counts */
    if (r) resp_array(r, n);
    int changes = 0;
    for (uint32_t i = 0; i < n; i++) {
        bf_op_t op;
        bf_get(a->argv[1].ptr + (size_t)i * BF_OP_BYTES, &op);
        uint64_t byte = op.offset >> 3;
        unsigned char w[9];
        if (bf_window(ctx, *slot, byte, w)) st_apply_unreadable("BITFIELD");
        int write, changed;
        bf_run(&op, w, op.offset - byte * 8, r, &write, &changed);
        if (!write) continue;
        for (uint64_t k = 0; k < ((op.offset & 7) + op.bits + 7) / 8; k++)
            *st_val_byte(ctx, a->db, slot, byte + k) = w[k];
        if (dirty || changed) changes++;
    }
    if (changes) st_key_changed_as(ctx, a, a->dbnum, key, PS_NOTIFY_STRING, "setbit");
}

/* BITFIELD_RO key [GET type offset] ..., and a BITFIELD of GETs only
 * (cmd_runs_as): the words parsed as the frontend parses BITFIELD's. */
void st_read_bitfield(store_ctx_t *ctx, const read_args_t *a, buf_t *r)
{
    int argc = a->argc - 1;
    const char **argv = st_xmalloc(((size_t)argc + 1) * sizeof(*argv));
    uint32_t *lens = st_xmalloc(((size_t)argc + 1) * sizeof(*lens));
    for (int i = 0; i < argc; i++) {
        argv[i] = (const char *)a->argv[1 + i].ptr;
        lens[i] = a->argv[1 + i].len;
    }
    bf_op_t *ops;
    int writes;
    const char *err;
    int n = bf_parse(argc, argv, lens, ctx->max_bulk, &ops, &writes, &err);
    free(argv);
    free(lens);
    if (n < 0) {
        resp_error(r, err);
        return;
    }
    if (writes) {
        resp_error(r, "ERR BITFIELD_RO only supports the GET subcommand");
        free(ops);
        return;
    }
    idx_entry_t **slot = st_find_live(a->db, &a->argv[0], a->now, 0);
    if (st_wrongtype(slot, ST_STRING, r)) {
        free(ops);
        return;
    }
    /* Every window is read before the reply starts: a failed read answers
     * this command's error alone (D59), as every read of a value does. */
    unsigned char(*w)[9] = st_xmalloc((size_t)n * 9 + 1);
    int failed = 0;
    for (int i = 0; i < n && !failed; i++)
        failed = bf_window(ctx, slot ? *slot : NULL, ops[i].offset >> 3, w[i]);
    if (failed) {
        resp_error(r, STORE_ERR_IO);
    } else {
        resp_array(r, n);
        for (int i = 0; i < n; i++) {
            int write, changed;
            bf_run(&ops[i], w[i], ops[i].offset & 7, r, &write, &changed);
        }
    }
    free(w);
    free(ops);
}

/* ---- reads ------------------------------------------------------------- */

/* A bit offset argument (GETBIT): a long long within proto-max-bulk-len
 * bytes. Returns 0, or -1 after the error reply. */
static int bit_offset(store_ctx_t *ctx, const rec_arg_t *arg, uint64_t *out, buf_t *r)
{
    long long v;
    if (str_to_ll((const char *)arg->ptr, arg->len, &v) || v < 0 ||
        (ctx->max_bulk > 0 && (v >> 3) >= ctx->max_bulk)) {
        resp_error(r, "ERR bit offset is not an integer or out of range");
        return -1;
    }
    *out = (uint64_t)v;
    return 0;
}

void st_read_getbit(store_ctx_t *ctx, const read_args_t *a, buf_t *r)
{
    uint64_t bitoff;
    if (bit_offset(ctx, &a->argv[1], &bitoff, r)) return;
    idx_entry_t **slot = st_find_live(a->db, &a->argv[0], a->now, 0);
    if (st_wrongtype(slot, ST_STRING, r)) return;
    uint64_t byte = bitoff >> 3;
    if (!slot || byte >= st_ent_vlen(*slot)) {
        resp_integer(r, 0);
        return;
    }
    unsigned char b;
    if (st_read_range(ctx, *slot, byte, 1, &b)) {
        resp_error(r, STORE_ERR_IO);
        return;
    }
    resp_integer(r, (b >> (7 - (bitoff & 7))) & 1);
}

/* An inclusive bit range and the bits outside it in its edge bytes. */
typedef struct bit_range {
    uint64_t b0, b1;    /* first and last byte */
    unsigned char out0; /* bits of byte b0 before the range */
    unsigned char out1; /* bits of byte b1 after the range */
    int64_t sb, eb;     /* the range, in bits */
} bit_range_t;

static void bit_range(bit_range_t *br, int64_t sb, int64_t eb)
{
    br->sb = sb;
    br->eb = eb;
    br->b0 = (uint64_t)sb >> 3;
    br->b1 = (uint64_t)eb >> 3;
    br->out0 = (unsigned char)(0xffu << (8 - (sb & 7)));
    br->out1 = (unsigned char)((1u << (7 - (eb & 7))) - 1);
}

/* Parse "start end" and an optional BYTE|BIT unit as BITCOUNT and BITPOS
 * do, then clamp Redis' way. On an empty range *empty is set. Returns 0 or
 * -1 after an error reply. `unit` may be NULL (no unit argument); end NULL
 * means "to the end" (BITPOS key bit start). */
static int parse_range(const rec_arg_t *start_arg, const rec_arg_t *end_arg, const rec_arg_t *unit,
                       uint64_t vlen, bit_range_t *br, int *empty, int check_both_negative,
                       buf_t *r)
{
    long long start, end = 0;
    int isbit = 0;
    *empty = 0;
    if (str_to_ll((const char *)start_arg->ptr, start_arg->len, &start)) {
        resp_error(r, ERR_NOT_INT);
        return -1;
    }
    /* BITCOUNT reads both numbers, then the unit; BITPOS reads the unit
     * before the end. */
    if (check_both_negative) {
        if (str_to_ll((const char *)end_arg->ptr, end_arg->len, &end)) {
            resp_error(r, ERR_NOT_INT);
            return -1;
        }
        if (start < 0 && end < 0 && start > end) {
            *empty = 1;
            return 0;
        }
    }
    if (unit) {
        if (word_is(unit, "bit"))
            isbit = 1;
        else if (!word_is(unit, "byte")) {
            resp_error(r, ERR_SYNTAX);
            return -1;
        }
    }
    long long totlen = (long long)vlen;
    if (!check_both_negative) {
        if (end_arg) {
            if (str_to_ll((const char *)end_arg->ptr, end_arg->len, &end)) {
                resp_error(r, ERR_NOT_INT);
                return -1;
            }
        } else {
            end = totlen - 1;
        }
    }
    if (isbit) totlen <<= 3;
    if (start < 0) start += totlen;
    if (end < 0) end += totlen;
    if (start < 0) start = 0;
    if (end < 0) end = 0;
    if (end >= totlen) end = totlen - 1;
    if (start > end) {
        *empty = 1;
        return 0;
    }
    if (isbit)
        bit_range(br, start, end);
    else
        bit_range(br, start * 8, end * 8 + 7);
    return 0;
}

static size_t popcount(const unsigned char *p, size_t n)
{
    size_t c = 0, i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        c += (size_t)__builtin_popcountll(w);
    }
    for (; i < n; i++)
        c += (size_t)__builtin_popcount(p[i]);
    return c;
}

static int count_chunk(void *arg, const unsigned char *p, size_t n)
{
    if (p) *(uint64_t *)arg += popcount(p, n);
    return 0;
}

/* BITCOUNT key [start end [BYTE|BIT]]. Redis looks the key up first, so a
 * missing key is 0 whatever the arguments. */
void st_read_bitcount(store_ctx_t *ctx, const read_args_t *a, buf_t *r)
{
    idx_entry_t **slot = st_find_live(a->db, &a->argv[0], a->now, 0);
    if (st_wrongtype(slot, ST_STRING, r)) return;
    if (!slot) {
        resp_integer(r, 0);
        return;
    }
    uint64_t vlen = st_ent_vlen(*slot);
    bit_range_t br;
    int empty = 0;
    if (a->argc == 3 || a->argc == 4) {
        if (parse_range(&a->argv[1], &a->argv[2], a->argc == 4 ? &a->argv[3] : NULL, vlen, &br,
                        &empty, 1, r))
            return;
    } else if (a->argc == 1) {
        if (vlen == 0)
            empty = 1;
        else
            bit_range(&br, 0, (int64_t)(vlen * 8 - 1));
    } else {
        resp_error(r, ERR_SYNTAX);
        return;
    }
    if (empty) {
        resp_integer(r, 0);
        return;
    }
    uint64_t count = 0;
    unsigned char first = 0, last = 0;
    if (st_scan_range(ctx, *slot, br.b0, br.b1 - br.b0 + 1, count_chunk, &count) < 0 ||
        (br.out0 && st_read_range(ctx, *slot, br.b0, 1, &first)) ||
        (br.out1 && st_read_range(ctx, *slot, br.b1, 1, &last))) {
        resp_error(r, STORE_ERR_IO);
        return;
    }
    count -= (uint64_t)__builtin_popcount(first & br.out0);
    count -= (uint64_t)__builtin_popcount(last & br.out1);
    resp_integer(r, (long long)count);
}

typedef struct bitpos {
    bit_range_t br;
    unsigned bit;
    uint64_t cur;  /* byte offset of the next chunk */
    int64_t found; /* bit position, -1 while none */
} bitpos_t;

/* Index (0 = most significant) of the first bit of v equal to bit. */
static int first_bit(unsigned char v, unsigned bit)
{
    unsigned x = bit ? v : (unsigned char)~v;
    return __builtin_clz(x) - (int)(8 * sizeof(unsigned) - 8);
}

static int pos_chunk(void *arg, const unsigned char *p, size_t n)
{
    bitpos_t *s = arg;
    uint64_t base = s->cur;
    s->cur += n;
    unsigned char none = s->bit ? 0x00 : 0xff; /* a byte without the bit */
    uint64_t wnone = s->bit ? 0 : UINT64_MAX;
    /* Bytes before lim need no mask (byte b1 may; b0 is only ever first). */
    size_t lim = s->br.b1 - base < n ? (size_t)(s->br.b1 - base) : n;
    size_t i = 0;
    while (i < n) {
        uint64_t at = base + i;
        unsigned char v = p ? p[i] : 0;
        if (at == s->br.b0) v = s->bit ? (unsigned char)(v & ~s->br.out0) : (v | s->br.out0);
        if (at == s->br.b1) v = s->bit ? (unsigned char)(v & ~s->br.out1) : (v | s->br.out1);
        if (v != none) {
            s->found = (int64_t)(at * 8) + first_bit(v, s->bit);
            return 1;
        }
        i++;
        if (!p) {
            if (s->bit && i < lim) i = lim; /* zeros hold no 1 up to b1 */
            continue;
        }
        while (i + 8 <= lim) {
            uint64_t w;
            memcpy(&w, p + i, 8);
            if (w != wnone) break;
            i += 8;
        }
        while (i < lim && p[i] == none)
            i++;
    }
    return 0;
}

/* BITPOS key bit [start [end [BYTE|BIT]]] (Redis 7): the first bit equal
 * to `bit` in the range; none found is -1, except that a 0 looked for
 * without an explicit end is found just past the value (its zero padding). */
void st_read_bitpos(store_ctx_t *ctx, const read_args_t *a, buf_t *r)
{
    long long bit;
    if (str_to_ll((const char *)a->argv[1].ptr, a->argv[1].len, &bit)) {
        resp_error(r, ERR_NOT_INT);
        return;
    }
    if (bit != 0 && bit != 1) {
        resp_error(r, "ERR The bit argument must be 1 or 0.");
        return;
    }
    idx_entry_t **slot = st_find_live(a->db, &a->argv[0], a->now, 0);
    if (st_wrongtype(slot, ST_STRING, r)) return;
    if (!slot) {
        resp_integer(r, bit ? -1 : 0);
        return;
    }
    uint64_t vlen = st_ent_vlen(*slot);
    bitpos_t s = {.bit = (unsigned)bit, .found = -1};
    int empty = 0, end_given = a->argc >= 4;
    if (a->argc >= 3 && a->argc <= 5) {
        if (parse_range(&a->argv[2], a->argc >= 4 ? &a->argv[3] : NULL,
                        a->argc == 5 ? &a->argv[4] : NULL, vlen, &s.br, &empty, 0, r))
            return;
    } else if (a->argc == 2) {
        if (vlen == 0)
            empty = 1;
        else
            bit_range(&s.br, 0, (int64_t)(vlen * 8 - 1));
    } else {
        resp_error(r, ERR_SYNTAX);
        return;
    }
    if (empty) {
        resp_integer(r, -1);
        return;
    }
    s.cur = s.br.b0;
    if (st_scan_range(ctx, *slot, s.br.b0, s.br.b1 - s.br.b0 + 1, pos_chunk, &s) < 0) {
        resp_error(r, STORE_ERR_IO);
        return;
    }
    if (s.found < 0 && bit == 0 && !end_given) s.found = s.br.eb + 1;
    resp_integer(r, s.found);
}
