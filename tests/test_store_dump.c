/*
 * test_store_dump.c - DUMP (store/types/t_dump.c, D34) through the store
 * harness: the CRC64 check value, and payloads byte-equal to the ones a
 * real redis-server 7.0.15 gave for the same values (strings in both
 * encodings, intsets of two widths, listpack hashes with every integer and
 * string entry form used), the table forms' headers and checksums, nil for
 * a missing key.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "command.h"
#include "store/dump.h"
#include "store_harness.h"

#define T0 1000000

#define wr(t, id, ...)   sh_wr((t), (id), __VA_ARGS__)
#define rd(now, id, ...) sh_rd((now), 0, (id), __VA_ARGS__)
#define MAX              "#i64:512"

static void setup(void)
{
    sh_setup("dump", 0, 42);
    sh_canonical_only = 1;
}

TestSuite(dump, .init = setup, .fini = sh_teardown, .timeout = 120);

static const char *set(const char *key, const char *val)
{
    return sh_put_key(T0, CMD_SET, key, "bui", val, strlen(val), (uint32_t)0, (int64_t)0);
}

/* The payload of DUMP key as hex ("nil" for a null reply). */
static const char *dump_hex(const char *key)
{
    static char out[8192];
    const char *r = rd(T0, CMD_DUMP, key, NULL);
    if (!strcmp(r, "$-1\r\n")) return "nil";
    cr_assert_eq(r[0], '$', "reply %s", r);
    char *end;
    long n = strtol(r + 1, &end, 10);
    const unsigned char *p = (const unsigned char *)end + 2;
    cr_assert_lt((size_t)n * 2, sizeof out);
    for (long i = 0; i < n; i++) snprintf(out + 2 * i, 3, "%02x", p[i]);
    out[2 * n] = 0;
    return out;
}

Test(dump, crc64_check_value)
{
    cr_assert_eq(st_crc64(0, (const unsigned char *)"123456789", 9), UINT64_C(0xe9c6d914c4b8d9ca));
}

Test(dump, strings_match_redis)
{
    set("s1", "hello");
    set("s2", "12");
    set("s3", "1000");
    set("s4", "100000");
    set("s5", "12345678901");
    set("s6", "");
    cr_assert_str_eq(dump_hex("s1"), "000568656c6c6f0a006372df766534200a");
    cr_assert_str_eq(dump_hex("s2"), "00c00c0a003c2af8515c04bcd5");
    cr_assert_str_eq(dump_hex("s3"), "00c1e8030a0089d1478ebac4b764");
    cr_assert_str_eq(dump_hex("s4"), "00c2a08601000a00f12403506f2fa674");
    cr_assert_str_eq(dump_hex("s5"), "000b31323334353637383930310a00304e52d727176510");
    cr_assert_str_eq(dump_hex("s6"), "00000a005d9b5c400f7fa2da");
    cr_assert_str_eq(dump_hex("missing"), "nil");
}

Test(dump, intsets_match_redis)
{
    wr(T0, CMD_SADD, "i1", MAX, "3", "1", "2", NULL);
    wr(T0, CMD_SADD, "i2", MAX, "1", "70000", NULL);
    cr_assert_str_eq(dump_hex("i1"), "0b0e02000000030000000100020003000a00a5025ce26d6e4d1b");
    cr_assert_str_eq(dump_hex("i2"), "0b10040000000200000001000000701101000a002735436efd6656c4");
}

Test(dump, listpack_hashes_match_redis)
{
    wr(T0, CMD_HSET, "h1", "#i64:274877907456", "#u32:0", "a", "1", "b", "hello", NULL);
    wr(T0, CMD_HSET, "h2", "#i64:274877907456", "#u32:0", "f", "300", "g", "-5000", NULL);
    cr_assert_str_eq(dump_hex("h1"),
                     "101616000000040081610201018162028568656c6c6f06ff0a00e8c5fe99ee07955d");
    cr_assert_str_eq(dump_hex("h2"), "1014140000000400816602c12c02816702f178ec03ff0a00a74697eec828f683");
}

/* The payload's last 8 bytes are the CRC64 of the rest, little-endian. */
static void check_crc(const char *hex)
{
    size_t n = strlen(hex) / 2;
    unsigned char *p = malloc(n);
    for (size_t i = 0; i < n; i++) sscanf(hex + 2 * i, "%2hhx", &p[i]);
    cr_assert_geq(n, 10);
    uint64_t crc = 0;
    for (int i = 0; i < 8; i++) crc |= (uint64_t)p[n - 8 + i] << (8 * i);
    cr_assert_eq(crc, st_crc64(0, p, n - 8));
    cr_assert_eq(p[n - 10], 10);
    cr_assert_eq(p[n - 9], 0);
    free(p);
}

Test(dump, table_forms)
{
    wr(T0, CMD_SADD, "s", MAX, "x", "y", NULL);
    const char *h = dump_hex("s");
    cr_assert_eq(strncmp(h, "0202", 4), 0, "%s", h); /* RDB_TYPE_SET, 2 members */
    check_crc(h);
    /* hash-max-listpack-entries 1: a table */
    wr(T0, CMD_HSET, "t", "#i64:274877906945", "#u32:0", "a", "1", "b", "2", NULL);
    h = dump_hex("t");
    cr_assert_eq(strncmp(h, "0402", 4), 0, "%s", h); /* RDB_TYPE_HASH, 2 fields */
    check_crc(h);
    check_crc("00000a005d9b5c400f7fa2da"); /* Redis's DUMP of "" */
}
