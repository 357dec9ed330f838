/*
 * test_record.c - the log record codec (common/record.c) and CRC32C.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "command.h"
#include "crc32c.h"
#include "record.h"

Test(crc32c, standard_check_value)
{
    cr_assert_eq(crc32c(0, "123456789", 9), 0xE3069283u);
    /* Incremental use gives the same result as one call. */
    uint32_t c = crc32c(0, "1234", 4);
    cr_assert_eq(crc32c(c, "56789", 5), 0xE3069283u);
}

static size_t encode_set(unsigned char *buf, uint64_t lsn, const char *key, const char *val)
{
    const unsigned char *argv[2] = {(const unsigned char *)key, (const unsigned char *)val};
    uint32_t lens[2] = {(uint32_t)strlen(key), (uint32_t)strlen(val)};
    size_t payload = rec_cmd_payload_size(2, lens);
    rec_encode_cmd(buf, lsn, 3, 1234567, CMD_MSET, 2, argv, lens);
    rec_publish(buf, lsn);
    return rec_space((uint32_t)payload);
}

Test(record, round_trip)
{
    unsigned char buf[256];
    memset(buf, 0xAA, sizeof(buf));
    size_t space = encode_set(buf, 4096, "key", "value");
    cr_assert_eq(space % REC_ALIGN, 0);
    cr_assert_eq(rec_check(buf, 4096, sizeof(buf)), (int64_t)space);
    rec_hdr_t h;
    memcpy(&h, buf, sizeof(h));
    cr_assert_eq(h.type, REC_CMD);
    cr_assert_eq(h.origin, 3);
    cr_assert_eq(h.time_ms, 1234567);
    uint16_t id, argc;
    rec_arg_t args[4];
    cr_assert_eq(rec_decode_cmd(buf, &id, &argc, args, 4), 0);
    cr_assert_eq(id, CMD_MSET);
    cr_assert_eq(argc, 2);
    cr_assert_eq(args[0].len, 3);
    cr_assert(memcmp(args[0].ptr, "key", 3) == 0);
    cr_assert_eq(args[1].len, 5);
    cr_assert(memcmp(args[1].ptr, "value", 5) == 0);
    /* Padding after the payload is zeroed (it is part of the CRC). */
    for (size_t i = h.len; i < space; i++)
        cr_assert_eq(buf[i], 0);
}

Test(record, empty_arguments_and_binary)
{
    unsigned char buf[256];
    const unsigned char bin[3] = {0, '\r', '\n'};
    const unsigned char *argv[2] = {(const unsigned char *)"", bin};
    uint32_t lens[2] = {0, 3};
    rec_encode_cmd(buf, 0, 0, 0, CMD_SET, 2, argv, lens);
    rec_publish(buf, 0);
    cr_assert_gt(rec_check(buf, 0, sizeof(buf)), 0);
    uint16_t id, argc;
    rec_arg_t args[2];
    cr_assert_eq(rec_decode_cmd(buf, &id, &argc, args, 2), 0);
    cr_assert_eq(args[0].len, 0);
    cr_assert(memcmp(args[1].ptr, bin, 3) == 0);
}

Test(record, every_flipped_bit_is_detected)
{
    unsigned char buf[128];
    size_t space = encode_set(buf, 64, "k", "v");
    for (size_t byte = 8; byte < space; byte++) {
        for (int bit = 0; bit < 8; bit++) {
            buf[byte] ^= (unsigned char)(1u << bit);
            int64_t rc = rec_check(buf, 64, sizeof(buf));
            cr_assert(rc < 0, "flip of byte %zu bit %d not detected", byte, bit);
            buf[byte] ^= (unsigned char)(1u << bit);
        }
    }
    cr_assert_eq(rec_check(buf, 64, sizeof(buf)), (int64_t)space);
}

Test(record, wrong_lsn_or_zeros_is_empty)
{
    unsigned char buf[128];
    encode_set(buf, 64, "k", "v");
    cr_assert_eq(rec_check(buf, 96, sizeof(buf)), REC_EMPTY); /* stale lap */
    unsigned char zeros[128] = {0};
    cr_assert_eq(rec_check(zeros, 0, sizeof(zeros)), REC_EMPTY); /* fresh segment at LSN 0 */
    cr_assert_eq(rec_check(zeros, 4096, sizeof(zeros)), REC_EMPTY);
}

Test(record, torn_record_is_detected)
{
    unsigned char buf[128];
    size_t space = encode_set(buf, 64, "key", "a longer value here");
    rec_hdr_t h;
    memcpy(&h, buf, sizeof(h));
    /* Only part of it reached the disk: the rest reads as zeros (the zero
     * padding after h.len is the same either way). */
    for (size_t cut = 16; cut < h.len; cut += 4) {
        unsigned char torn[128] = {0};
        memcpy(torn, buf, cut);
        cr_assert_eq(rec_check(torn, 64, sizeof(torn)), REC_TORN, "cut at %zu", cut);
    }
    /* Fewer bytes available than the record claims. */
    cr_assert_eq(rec_check(buf, 64, space - 8), REC_TORN);
}

Test(record, pad_records)
{
    unsigned char buf[256];
    memset(buf, 0x55, sizeof(buf));
    rec_write_pad(buf, 128, 96);
    cr_assert_eq(rec_check(buf, 128, sizeof(buf)), 96);
    rec_hdr_t h;
    memcpy(&h, buf, sizeof(h));
    cr_assert_eq(h.type, REC_PAD);
    cr_assert_eq(rec_load_lsn(buf), 128);
}

Test(record, malformed_payload_rejected)
{
    unsigned char p[16] = {CMD_DEL, 0, 2, 0, 200, 0, 0, 0}; /* arg 0 claims 200 bytes */
    uint16_t id, argc;
    rec_arg_t args[2];
    cr_assert_eq(rec_decode_payload(p, sizeof(p), &id, &argc, args, 2), -1);
    cr_assert_eq(rec_decode_payload(p, 3, &id, &argc, args, 2), -1);
}

/* The command table's lookup (common/command.c) is pure data too. */
/* A payload sent in parts (D58): every cut of it, at every size, is the
 * bytes of the whole encoding, empty arguments and all. */
Test(record, payload_range_is_the_whole_cut_anywhere)
{
    const unsigned char *argv[4] = {(const unsigned char *)"key", (const unsigned char *)"",
                                    (const unsigned char *)"a somewhat longer member",
                                    (const unsigned char *)"x"};
    uint32_t lens[4] = {3, 0, 24, 1};
    size_t n = rec_cmd_payload_size(4, lens);
    unsigned char whole[128], cut[128];
    cr_assert_eq(rec_encode_payload(whole, 0x0345, 4, argv, lens), n);
    for (size_t step = 1; step <= n; step++) {
        memset(cut, 0xEE, sizeof(cut));
        for (size_t off = 0; off < n; off += step)
            rec_encode_payload_range(cut + off, off, off + step <= n ? step : n - off, 0x0345, 4,
                                     argv, lens);
        cr_assert(memcmp(cut, whole, n) == 0, "parts of %zu bytes", step);
        cr_assert_eq(cut[n], 0xEE, "nothing past the payload");
    }
}

Test(command, lookup_is_exact_and_case_insensitive)
{
    cr_assert_not_null(cmd_lookup("GET", 3));
    cr_assert_eq(cmd_lookup("gEt", 3)->id, CMD_GET);
    cr_assert_null(cmd_lookup("GE", 2));
    cr_assert_null(cmd_lookup("GETX", 4));
    /* A NUL inside the name makes it another name: no match. */
    cr_assert_null(cmd_lookup("GETDEL\0", 7));
    cr_assert_null(cmd_lookup("GET\0DEL", 7));
    size_t n;
    const cmd_desc_t *t = cmd_table(&n);
    for (size_t i = 0; i < n; i++)
        cr_assert_eq(cmd_lookup(t[i].name, strlen(t[i].name)), &t[i]);
}
