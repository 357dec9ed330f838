/*
 * record.c - encoding, checking and decoding of log records (record.h).
 * Runs in every process: frontends encode, the logger writes and recovers,
 * the store decodes. Pure functions over memory: no I/O, no state.
 *
 * Invariant: a record that rec_check() accepts at lsn L was written whole by
 * our encoder for position L: the lsn must match, the length must be sane
 * and the CRC32C over the padded record (crc field taken as zero) must match.
 */
#include "record.h"

#include <stdatomic.h>
#include <string.h>

#include "crc32c.h"

/* CRC of a record given its header (crc field taken as zero) and the rest of
 * its padded space. The header is passed separately so that a producer can
 * compute the CRC before the lsn word, its commit marker, is in the ring. */
static uint32_t rec_crc_parts(const rec_hdr_t *h, const unsigned char *body, uint32_t body_len)
{
    rec_hdr_t tmp = *h;
    tmp.crc = 0;
    uint32_t c = crc32c(0, &tmp, REC_HDR_SIZE);
    return crc32c(c, body, body_len);
}

static uint32_t rec_crc(const unsigned char *rec, uint32_t space)
{
    rec_hdr_t h;
    memcpy(&h, rec, REC_HDR_SIZE);
    return rec_crc_parts(&h, rec + REC_HDR_SIZE, space - REC_HDR_SIZE);
}

size_t rec_cmd_payload_size(uint16_t argc, const uint32_t *arg_lens)
{
    size_t n = 4;
    for (uint16_t i = 0; i < argc; i++)
        n += 4 + (size_t)arg_lens[i];
    return n;
}

static void put16(unsigned char *p, uint16_t v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
}
static void put32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}
static uint16_t get16(const unsigned char *p)
{
    return (uint16_t)(p[0] | (p[1] << 8));
}
static uint32_t get32(const unsigned char *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

size_t rec_encode_payload(unsigned char *dst, uint16_t cmd_id, uint16_t argc,
                          const unsigned char *const *argv, const uint32_t *arg_lens)
{
    unsigned char *p = dst;
    put16(p, cmd_id);
    put16(p + 2, argc);
    p += 4;
    for (uint16_t i = 0; i < argc; i++) {
        put32(p, arg_lens[i]);
        if (arg_lens[i]) memcpy(p + 4, argv[i], arg_lens[i]);
        p += 4 + arg_lens[i];
    }
    return (size_t)(p - dst);
}

/* The part of [from, from + len) (the payload's bytes p) that falls in
 * [off, off + n), copied to dst + its offset from off. */
static void copy_overlap(unsigned char *dst, size_t off, size_t n, size_t from,
                         const unsigned char *p, size_t len)
{
    size_t lo = from > off ? from : off, hi = from + len < off + n ? from + len : off + n;
    if (lo < hi) memcpy(dst + (lo - off), p + (lo - from), hi - lo);
}

void rec_encode_payload_range(unsigned char *dst, size_t off, size_t n, uint16_t cmd_id,
                              uint16_t argc, const unsigned char *const *argv,
                              const uint32_t *arg_lens)
{
    unsigned char head[4];
    put16(head, cmd_id);
    put16(head + 2, argc);
    copy_overlap(dst, off, n, 0, head, 4);
    size_t at = 4;
    for (uint16_t i = 0; i < argc && at < off + n; i++) {
        put32(head, arg_lens[i]);
        copy_overlap(dst, off, n, at, head, 4);
        if (arg_lens[i]) copy_overlap(dst, off, n, at + 4, argv[i], arg_lens[i]);
        at += 4 + (size_t)arg_lens[i];
    }
}

void rec_encode_cmd(void *dst, uint64_t lsn, uint16_t origin, int64_t time_ms, uint16_t cmd_id,
                    uint16_t argc, const unsigned char *const *argv, const uint32_t *arg_lens)
{
    rec_encode_cmd_durable(dst, lsn, UINT64_MAX, origin, time_ms, cmd_id, argc, argv, arg_lens);
}

uint64_t rec_proven_durable(const void *rec)
{
    rec_hdr_t h;
    memcpy(&h, rec, sizeof(h));
    if (h.durable_gap == REC_GAP_UNKNOWN || h.durable_gap > h.lsn) return 0;
    return h.lsn - h.durable_gap;
}

void rec_encode_cmd_durable(void *dst, uint64_t lsn, uint64_t durable, uint16_t origin,
                            int64_t time_ms, uint16_t cmd_id, uint16_t argc,
                            const unsigned char *const *argv, const uint32_t *arg_lens)
{
    unsigned char *d = dst;
    size_t payload = rec_encode_payload(d + REC_HDR_SIZE, cmd_id, argc, argv, arg_lens);
    uint32_t len = (uint32_t)(REC_HDR_SIZE + payload);
    uint32_t space = rec_space((uint32_t)payload);
    memset(d + len, 0, space - len);

    uint32_t gap = REC_GAP_UNKNOWN;
    if (durable <= lsn && lsn - durable < REC_GAP_UNKNOWN) gap = (uint32_t)(lsn - durable);
    rec_hdr_t h = {.lsn = lsn,
                   .len = len,
                   .crc = 0,
                   .type = REC_CMD,
                   .origin = origin,
                   .durable_gap = gap,
                   .time_ms = time_ms};
    h.crc = rec_crc_parts(&h, d + REC_HDR_SIZE, space - REC_HDR_SIZE);
    /* The lsn word is the ring's commit marker: write everything after it
     * now, and let rec_publish() store it last. The CRC already covers it. */
    memcpy(d + 8, (const unsigned char *)&h + 8, REC_HDR_SIZE - 8);
}

void rec_write_pad(void *dst, uint64_t lsn, uint32_t space)
{
    unsigned char *d = dst;
    rec_hdr_t h = {
        .lsn = lsn, .len = space, .crc = 0, .type = REC_PAD, .durable_gap = REC_GAP_UNKNOWN};
    memset(d + REC_HDR_SIZE, 0, space - REC_HDR_SIZE);
    h.crc = rec_crc_parts(&h, d + REC_HDR_SIZE, space - REC_HDR_SIZE);
    memcpy(d + 8, (const unsigned char *)&h + 8, REC_HDR_SIZE - 8);
    rec_publish(d, lsn);
}

void rec_publish(void *dst, uint64_t lsn)
{
    atomic_store_explicit((_Atomic uint64_t *)dst, lsn, memory_order_release);
}

uint64_t rec_load_lsn(const void *src)
{
    return atomic_load_explicit((_Atomic uint64_t *)src, memory_order_acquire);
}

int64_t rec_check(const void *src, uint64_t lsn, uint64_t avail)
{
    const unsigned char *s = src;
    if (avail < REC_HDR_SIZE) return REC_EMPTY;
    rec_hdr_t h;
    memcpy(&h, s, REC_HDR_SIZE);
    /* A zero length is a fresh zero-filled segment (at LSN 0 the zero lsn
     * word would otherwise match): the end of the log, not a torn record. */
    if (h.lsn != lsn || h.len == 0) return REC_EMPTY;
    if (h.len < REC_HDR_SIZE || (h.type != REC_PAD && h.type != REC_CMD)) return REC_TORN;
    uint32_t space = rec_space(h.len - REC_HDR_SIZE);
    if (space < h.len || space > avail) return REC_TORN;
    if (rec_crc(s, space) != h.crc) return REC_TORN;
    return space;
}

int rec_decode_payload(const unsigned char *p, size_t len, uint16_t *cmd_id, uint16_t *argc,
                       rec_arg_t *args, uint16_t max_args)
{
    if (len < 4) return -1;
    *cmd_id = get16(p);
    uint16_t n = get16(p + 2);
    size_t off = 4;
    for (uint16_t i = 0; i < n; i++) {
        if (len - off < 4) return -1;
        uint32_t alen = get32(p + off);
        off += 4;
        if (alen > len - off) return -1;
        if (i < max_args) {
            args[i].ptr = p + off;
            args[i].len = alen;
        }
        off += alen;
    }
    *argc = n;
    return 0;
}

int rec_decode_cmd(const void *rec, uint16_t *cmd_id, uint16_t *argc, rec_arg_t *args,
                   uint16_t max_args)
{
    rec_hdr_t h;
    memcpy(&h, rec, REC_HDR_SIZE);
    if (h.type != REC_CMD || h.len < REC_HDR_SIZE + 4) return -1;
    return rec_decode_payload((const unsigned char *)rec + REC_HDR_SIZE, h.len - REC_HDR_SIZE,
                              cmd_id, argc, args, max_args);
}
