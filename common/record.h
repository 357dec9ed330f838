/*
 * record.h - the log record: the unit that travels through the ring, lands in
 * the log segments byte for byte, and is replayed by the store.
 *
 * A record is a 32-byte header followed by a payload, padded with zeros to a
 * multiple of REC_ALIGN. Its LSN is its byte position in the logical log, and
 * the ring position it was claimed at is the same number (ARCHITECTURE.md,
 * contract 1), so the logger writes ring bytes to disk unchanged.
 *
 * The header's first word, `lsn`, doubles as the ring's commit marker: a
 * producer fills everything else, then stores lsn == its position with release
 * semantics. A reader that sees lsn equal to the position it expects knows the
 * rest of the record is there; stale bytes from an earlier lap of the ring (or
 * zeros in a fresh segment) carry another lsn.
 *
 * Payload of a REC_CMD record (all integers little-endian):
 *     u16 cmd_id, u16 argc, then argc times { u32 len, len bytes }
 * The arguments are in the canonical form of command.h (relative expiry
 * already turned into absolute time), so replay is deterministic (contract 4).
 */
#ifndef ATTIC_RECORD_H
#define ATTIC_RECORD_H

#include <stddef.h>
#include <stdint.h>

#define REC_ALIGN    32u
#define REC_HDR_SIZE 32u
#define REC_MAX_ARGS 65535u

enum rec_type {
    REC_PAD = 1, /* filler up to a ring wrap, or an abandoned claim */
    REC_CMD = 2, /* a write command in canonical form */
};

typedef struct rec_hdr {
    uint64_t lsn;         /* position in the log; written last (commit marker) */
    uint32_t len;         /* header + payload, unpadded */
    uint32_t crc;         /* CRC32C of the padded record with this field zero */
    uint16_t type;        /* enum rec_type */
    uint16_t origin;      /* frontend slot + 1 that waits for a reply, 0 = none */
    uint32_t durable_gap; /* lsn - durable_lsn when encoded, REC_GAP_UNKNOWN if not known */
    int64_t time_ms;      /* wall clock when encoded: the "now" of replay */
} rec_hdr_t;

/*
 * durable_gap lets recovery tell a torn tail from damage in the middle of the
 * log. A record encoded at LSN p with gap g proves that everything below
 * p - g was durable at that time. So if the log stops being valid at e and a
 * valid record further on proves e durable, e is damage (refuse to start);
 * if none does, e is the torn tail of writes that were never acked (cut).
 */
#define REC_GAP_UNKNOWN UINT32_MAX

_Static_assert(sizeof(rec_hdr_t) == REC_HDR_SIZE, "record header is 32 bytes");

/* Bytes a record of payload length `payload` occupies in the ring and log. */
static inline uint32_t rec_space(uint32_t payload)
{
    return (REC_HDR_SIZE + payload + REC_ALIGN - 1) & ~(REC_ALIGN - 1);
}

/* A decoded argument: points into the record it came from. */
typedef struct rec_arg {
    const unsigned char *ptr;
    uint32_t len;
} rec_arg_t;

/* Payload size of a command with these arguments. */
size_t rec_cmd_payload_size(uint16_t argc, const uint32_t *arg_lens);

/*
 * Encode a whole REC_CMD record into dst (rec_space(payload) bytes, already
 * claimed). Fills header fields except lsn, zero-pads, and computes the CRC as
 * if lsn were `lsn`. The caller then publishes with rec_publish().
 */
void rec_encode_cmd(void *dst, uint64_t lsn, uint16_t origin, int64_t time_ms, uint16_t cmd_id,
                    uint16_t argc, const unsigned char *const *argv, const uint32_t *arg_lens);

/* The same, recording that everything below `durable` (<= lsn) was durable
 * when the record was encoded (the frontends use this one). */
void rec_encode_cmd_durable(void *dst, uint64_t lsn, uint64_t durable, uint16_t origin,
                            int64_t time_ms, uint16_t cmd_id, uint16_t argc,
                            const unsigned char *const *argv, const uint32_t *arg_lens);

/* The LSN below which a valid record proves the log durable, or 0. */
uint64_t rec_proven_durable(const void *rec);

/* Write a REC_PAD record covering exactly `space` bytes (a multiple of
 * REC_ALIGN, at least REC_HDR_SIZE) at dst, and publish it. */
void rec_write_pad(void *dst, uint64_t lsn, uint32_t space);

/* Release-store the header's lsn: the record becomes visible to readers. */
void rec_publish(void *dst, uint64_t lsn);

/* Acquire-load the lsn of the record at src. */
uint64_t rec_load_lsn(const void *src);

/*
 * Check the record at src, expected at `lsn`, with `avail` bytes readable.
 * Returns the record's space (> 0) when valid, or:
 *   REC_EMPTY   lsn does not match (zeros, stale bytes: end of the log)
 *   REC_TORN    lsn matches but length or CRC is wrong, or it runs past avail
 */
#define REC_EMPTY (-1)
#define REC_TORN  (-2)
int64_t rec_check(const void *src, uint64_t lsn, uint64_t avail);

/*
 * Decode a REC_CMD payload. Fills *cmd_id, *argc and up to max_args
 * arguments. Returns 0, or -1 when the payload is malformed (which a record
 * that passed rec_check cannot be unless our own encoder is wrong).
 */
int rec_decode_cmd(const void *rec, uint16_t *cmd_id, uint16_t *argc, rec_arg_t *args,
                   uint16_t max_args);

/* The same payload decoder for a bare payload (the store's request channel). */
int rec_decode_payload(const unsigned char *p, size_t len, uint16_t *cmd_id, uint16_t *argc,
                       rec_arg_t *args, uint16_t max_args);

/* Bytes [off, off + n) of the bare payload rec_encode_payload would make
 * of these arguments, into dst (a payload sent in parts, without a whole
 * copy of it). */
void rec_encode_payload_range(unsigned char *dst, size_t off, size_t n, uint16_t cmd_id,
                              uint16_t argc, const unsigned char *const *argv,
                              const uint32_t *arg_lens);

/* Encode a bare payload (no header) into dst; returns bytes written. */
size_t rec_encode_payload(unsigned char *dst, uint16_t cmd_id, uint16_t argc,
                          const unsigned char *const *argv, const uint32_t *arg_lens);

#endif
