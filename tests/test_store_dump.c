/*
 * test_store_dump.c - DUMP (store/types/t_dump.c, D34) through the store
 * harness: the CRC64 check value, and payloads byte-equal to the ones a
 * real redis-server 7.0.15 gave for the same values (strings in both
 * encodings, intsets of two widths, listpack hashes with every integer and
 * string entry form used), the table forms' headers and checksums, nil for
 * a missing key; LZF where Redis compresses (D57): byte-equal payloads of
 * compressible values of each form, rdbcompression no, and the middle
 * nodes of a list under list-compress-depth.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "command.h"
#include "store/core/access.h"
#include "store/core/list.h"
#include "store/core/value.h"
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
    for (long i = 0; i < n; i++)
        snprintf(out + 2 * i, 3, "%02x", p[i]);
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
    cr_assert_str_eq(dump_hex("h2"),
                     "1014140000000400816602c12c02816702f178ec03ff0a00a74697eec828f683");
}

/* The payload's last 8 bytes are the CRC64 of the rest, little-endian. */
static void check_crc(const char *hex)
{
    size_t n = strlen(hex) / 2;
    unsigned char *p = malloc(n);
    for (size_t i = 0; i < n; i++)
        sscanf(hex + 2 * i, "%2hhx", &p[i]);
    cr_assert_geq(n, 10);
    uint64_t crc = 0;
    for (int i = 0; i < 8; i++)
        crc |= (uint64_t)p[n - 8 + i] << (8 * i);
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

/* ---- LZF, where Redis 7.0 compresses (D57) ---- */

#define HLIM "#i64:274877907456" /* hash-max-listpack: 512 entries, 64 bytes */
#define ZLIM "#i64:274877907072" /* zset-max-listpack: 128 entries, 64 bytes */

/* Each payload is redis-server 7.0.15's DUMP of the same value under
 * rdbcompression yes: a string longer than 20 bytes is LZF when that
 * saves 4 bytes, and so are a listpack, an intset and a table's members
 * and values, each as one string. */
Test(dump, compressible_values_match_redis)
{
    char a21[22], v40[41], x70[71], y30[31];
    memset(a21, 'a', 21), a21[21] = 0;
    memset(v40, 'v', 40), v40[40] = 0;
    memset(x70, 'x', 70), x70[70] = 0;
    memset(y30, 'y', 30), y30[30] = 0;
    set("s21", a21);
    set("s20", a21 + 1);
    set("rnd21", "defghijklmnopqrstuvwx");
    wr(T0, CMD_HSET, "h", HLIM, "#u32:0", "field", v40, "n", "123", NULL);
    wr(T0, CMD_SADD, "is8", MAX, "1099511627776", "1099511627777", "1099511627778", "1099511627779",
       "1099511627780", "1099511627781", NULL);
    wr(T0, CMD_ZADD, "z", ZLIM, "#u32:2", "1", "member-a", "2", "member-b", "3", "member-c", NULL);
    wr(T0, CMD_HSET, "ht", HLIM, "#u32:0", "f", x70, NULL);
    wr(T0, CMD_SADD, "st", MAX, y30, NULL);
    wr(T0, CMD_LPUSH, "l", "#u32:1", "eeeeeeeeee", "eeeeeeeeee", "eeeeeeeeee", "eeeeeeeeee",
       "eeeeeeeeee", NULL);
    cr_assert_str_eq(dump_hex("s21"), "00c30615016161e00a000a00fd0cb36807413f68");
    cr_assert_str_eq(dump_hex("s20"),
                     "001461616161616161616161616161616161616161610a0083b46b5e1b11acf1",
                     "20 bytes: never compressed");
    cr_assert_str_eq(dump_hex("rnd21"),
                     "00156465666768696a6b6c6d6e6f7071727374757677780a0081ed3c86abc82d1c",
                     "nothing to gain: plain");
    cr_assert_str_eq(dump_hex("h"), "10c31b3d0e3d0000000400856669656c6406a876e01e000629816e027b01ff"
                                    "0a00a7381594d725e2b3");
    cr_assert_str_eq(dump_hex("is8"),
                     "0bc32a380408000000062003600000016002600400022006400f000320064"
                     "00700042006400700052006200700000a002da1261cffc8ec98");
    cr_assert_str_eq(dump_hex("z"),
                     "11c3222b112b0000000600886d656d6265722d61090101c00b02620902e0000b"
                     "0463090301ff0a0013c167eada8851cb");
    cr_assert_str_eq(dump_hex("ht"), "04010166c3094046017878e039000178780a003e6c955f2e52e7c1");
    cr_assert_str_eq(dump_hex("st"), "0201c3091e017979e011000179790a002973b299c3a7bc93");
    cr_assert_str_eq(dump_hex("l"), "120102c3144043074300000005008a65e00000000be0260b010bff0a00a040"
                                    "806b7746022e");
}

/* rdbcompression no (what CONFIG SET leaves in ctx): plain strings, as
 * Redis writes them then. */
Test(dump, rdbcompression_no_writes_plain_strings)
{
    char a21[22], v40[41];
    memset(a21, 'a', 21), a21[21] = 0;
    memset(v40, 'v', 40), v40[40] = 0;
    set("s21", a21);
    wr(T0, CMD_HSET, "h", HLIM, "#u32:0", "field", v40, "n", "123", NULL);
    ctx->rdb_compression = 0;
    cr_assert_str_eq(dump_hex("s21"),
                     "00156161616161616161616161616161616161616161610a0017e5a5206213f"
                     "47e");
    cr_assert_str_eq(dump_hex("h"), "103d3d0000000400856669656c6406a8767676767676767676767676767676"
                                    "7676767676767676767676767676767676767676767676767629816e027b01"
                                    "ff0a00dd2d8b67aa868557");
    ctx->rdb_compression = 1;
    cr_assert_str_eq(dump_hex("s21"), "00c30615016161e00a000a00fd0cb36807413f68");
}

/* ---- RESTORE (store/types/t_restore.c) ---- */

static size_t unhex(const char *hex, unsigned char *p)
{
    size_t n = strlen(hex) / 2;
    for (size_t i = 0; i < n; i++)
        sscanf(hex + 2 * i, "%2hhx", &p[i]);
    return n;
}

#define LIMITS ((int64_t)(512 | (uint64_t)64 << 32))

static const char *restore_limits(const char *key, const unsigned char *p, size_t n, uint32_t flags,
                                  int64_t at, int64_t hash_limits)
{
    return sh_put_key(T0, CMD_RESTORE, key, "buiii", p, n, flags, at, hash_limits, (int64_t)512);
}

static const char *restore_bytes(const char *key, const unsigned char *p, size_t n, uint32_t flags,
                                 int64_t at)
{
    return restore_limits(key, p, n, flags, at, LIMITS);
}

static const char *restore(const char *key, const char *hex, uint32_t flags)
{
    unsigned char p[4096];
    size_t n = unhex(hex, p);
    return restore_bytes(key, p, n, flags, 0);
}

static const char *encoding(const char *key)
{
    return rd(T0, CMD_OBJECT, "encoding", key, NULL);
}

Test(dump, restore_round_trips_redis_payloads)
{
    static const char *const hex[] = {
        "000568656c6c6f0a006372df766534200a",
        "00c00c0a003c2af8515c04bcd5",
        "00c1e8030a0089d1478ebac4b764",
        "00c2a08601000a00f12403506f2fa674",
        "000b31323334353637383930310a00304e52d727176510",
        "00000a005d9b5c400f7fa2da",
        "0b0e02000000030000000100020003000a00a5025ce26d6e4d1b",
        "0b10040000000200000001000000701101000a002735436efd6656c4",
        "101616000000040081610201018162028568656c6c6f06ff0a00e8c5fe99ee07955d",
        "1014140000000400816602c12c02816702f178ec03ff0a00a74697eec828f683",
    };
    for (size_t i = 0; i < sizeof hex / sizeof hex[0]; i++) {
        char key[8];
        snprintf(key, sizeof key, "k%zu", i);
        cr_assert_str_eq(restore(key, hex[i], 0), "+OK\r\n", "payload %zu", i);
        cr_assert_str_eq(dump_hex(key), hex[i], "payload %zu", i);
    }
    cr_assert_str_eq(encoding("k6"), "$6\r\nintset\r\n");
    cr_assert_str_eq(encoding("k8"), "$8\r\nlistpack\r\n");
    cr_assert_str_eq(rd(T0, CMD_HGET, "k9", "g", NULL), "$5\r\n-5000\r\n");
}

Test(dump, restore_lzf_string)
{
    /* redis-server's DUMP of "abcabcabc" x 20: LZF-compressed */
    cr_assert_str_eq(restore("lz", "00c30b40b40361626361e0a5020162630a002b5b6bac6c26c36d", 0),
                     "+OK\r\n");
    char want[200];
    for (int i = 0; i < 20; i++)
        memcpy(want + 9 * i, "abcabcabc", 9);
    const char *r = rd(T0, CMD_GET, "lz", NULL);
    cr_assert_eq(strncmp(r, "$180\r\n", 6), 0);
    cr_assert_eq(memcmp(r + 6, want, 180), 0);
}

Test(dump, restore_table_forms_and_thresholds)
{
    /* A large set and a table hash dumped here restore to the same. */
    for (int i = 0; i < 600; i++) {
        char m[16];
        snprintf(m, sizeof m, "m%d", i);
        wr(T0, CMD_SADD, "s", MAX, m, NULL);
    }
    wr(T0, CMD_HSET, "h", "#i64:274877906945", "#u32:0", "a", "1", "b", "2", NULL);
    char s[8192], h[1024];
    snprintf(s, sizeof s, "%s", dump_hex("s"));
    snprintf(h, sizeof h, "%s", dump_hex("h"));
    cr_assert_str_eq(restore("s2", s, 0), "+OK\r\n");
    cr_assert_str_eq(rd(T0, CMD_SCARD, "s2", NULL), ":600\r\n");
    cr_assert_str_eq(encoding("s2"), "$9\r\nhashtable\r\n");
    /* two fields under limit 512: the restored hash is a listpack again */
    cr_assert_str_eq(restore("h2", h, 0), "+OK\r\n");
    cr_assert_str_eq(encoding("h2"), "$8\r\nlistpack\r\n");
    cr_assert_str_eq(rd(T0, CMD_HGET, "h2", "b", NULL), "$1\r\n2\r\n");
}

/* RESTORE under hash-max-listpack-value 1: Redis 7.0.15 loads a listpack
 * hash (type 16) as a listpack whatever its values' lengths, converting it
 * only when it has more fields than hash-max-listpack-entries; a table hash
 * (type 4) is converted by a long field or value, as it is read. Encodings
 * taken from a redis-server 7.0.15 (test_diff seed 5 with small thresholds). */
Test(dump, restore_listpack_hash_ignores_the_value_limit_as_redis)
{
    const char *lp = "101616000000040081610201018162028568656c6c6f06ff0a00e8c5fe99ee07955d";
    const char *table = "04030162c0020161c0010163c0030a00a786738cd05ede59";
    unsigned char p[256];
    size_t n = unhex(lp, p);
    int64_t value1 = (int64_t)(512 | (uint64_t)1 << 32),
            entries1 = (int64_t)(1 | (uint64_t)64 << 32);
    cr_assert_str_eq(restore_limits("y", p, n, 0, 0, value1), "+OK\r\n");
    cr_assert_str_eq(encoding("y"), "$8\r\nlistpack\r\n", "\"hello\" is past the value limit");
    cr_assert_str_eq(rd(T0, CMD_HGET, "y", "b", NULL), "$5\r\nhello\r\n");
    cr_assert_str_eq(restore_limits("z", p, n, 0, 0, entries1), "+OK\r\n");
    cr_assert_str_eq(encoding("z"), "$9\r\nhashtable\r\n", "two fields, one allowed");
    n = unhex(table, p);
    int64_t value0 = (int64_t)512;
    cr_assert_str_eq(restore_limits("x", p, n, 0, 0, value0), "+OK\r\n");
    cr_assert_str_eq(encoding("x"), "$9\r\nhashtable\r\n");
    cr_assert_str_eq(restore_limits("w", p, n, 0, 0, value1), "+OK\r\n");
    cr_assert_str_eq(encoding("w"), "$8\r\nlistpack\r\n");
    sh_check_replay("dump");
}

Test(dump, restore_errors)
{
    const char *ok = "00c00c0a003c2af8515c04bcd5"; /* 12 */
    cr_assert_str_eq(restore("k", ok, 0), "+OK\r\n");
    cr_assert_str_eq(restore("k", ok, 0), "-BUSYKEY Target key name already exists.\r\n");
    /* BUSYKEY comes before the TTL's and the payload's errors, as Redis */
    cr_assert_str_eq(restore("k", "00", 4), "-BUSYKEY Target key name already exists.\r\n");
    cr_assert_str_eq(restore("n", ok, 4), "-ERR Invalid TTL value, must be >= 0\r\n");
    cr_assert_str_eq(restore("n", ok, 2), "-ERR value is not an integer or out of range\r\n");
    const char *bad = "-ERR DUMP payload version or checksum are wrong\r\n";
    cr_assert_str_eq(restore("n", "00c00c0a003c2af8515c04bcd6", 0), bad); /* CRC damaged */
    cr_assert_str_eq(restore("n", "00c00d0a003c2af8515c04bcd5", 0), bad); /* value damaged */
    cr_assert_str_eq(restore("n", "00c00c0b003c2af8515c04bcd5", 0), bad); /* version 11 */
    cr_assert_str_eq(restore("n", "00c00c0a003c2af8515c04", 0), bad);     /* truncated */
    cr_assert_str_eq(restore("n", "", 0), bad);
    /* a right checksum over garbage: build one */
    unsigned char p[32] = {0x63, 0x01, 0x02};
    size_t n = 3;
    p[n++] = 10;
    p[n++] = 0;
    uint64_t crc = st_crc64(0, p, n);
    for (int i = 0; i < 8; i++)
        p[n++] = (unsigned char)(crc >> (8 * i));
    cr_assert_str_eq(restore_bytes("n", p, n, 0, 0), "-ERR Bad data format\r\n");
    /* a string shorter than its length says */
    n = 0;
    p[n++] = 0, p[n++] = 5, p[n++] = 'a', p[n++] = 10, p[n++] = 0;
    crc = st_crc64(0, p, n);
    for (int i = 0; i < 8; i++)
        p[n++] = (unsigned char)(crc >> (8 * i));
    cr_assert_str_eq(restore_bytes("n", p, n, 0, 0), "-ERR Bad data format\r\n");
    cr_assert_str_eq(rd(T0, CMD_EXISTS, "n", NULL), ":0\r\n");
    /* REPLACE overwrites; an already-expired TTL deletes the key */
    cr_assert_str_eq(restore("k", "000568656c6c6f0a006372df766534200a", 1), "+OK\r\n");
    cr_assert_str_eq(rd(T0, CMD_GET, "k", NULL), "$5\r\nhello\r\n");
    unsigned char q[64];
    size_t qn = unhex(ok, q);
    cr_assert_str_eq(restore_bytes("k", q, qn, 1, 5), "+OK\r\n");
    cr_assert_str_eq(rd(T0, CMD_EXISTS, "k", NULL), ":0\r\n");
    cr_assert_str_eq(restore_bytes("k", q, qn, 0, T0 + 5000), "+OK\r\n");
    cr_assert_str_eq(rd(T0, CMD_PTTL, "k", NULL), ":5000\r\n");
}

/* A plain string longer than an inline value is kept as a log extent
 * inside the payload argument: it reads back, and a replay agrees. */
Test(dump, restore_long_plain_string_is_an_extent)
{
    unsigned char p[400] = {0x00, 0x40, 200};
    memset(p + 3, 'q', 200);
    size_t n = 203;
    p[n++] = 10;
    p[n++] = 0;
    uint64_t crc = st_crc64(0, p, n);
    for (int i = 0; i < 8; i++)
        p[n++] = (unsigned char)(crc >> (8 * i));
    cr_assert_str_eq(restore_bytes("long", p, n, 0, 0), "+OK\r\n");
    const char *r = rd(T0, CMD_GET, "long", NULL);
    cr_assert_eq(strncmp(r, "$200\r\nqqqq", 10), 0, "%.20s", r);
    cr_assert_eq(r[6 + 199], 'q');
    cr_assert_str_eq(rd(T0, CMD_STRLEN, "long", NULL), ":200\r\n");
}

/* Give payload p[0, n) a right CRC64 after an edit. */
static void fix_crc(unsigned char *p, size_t n)
{
    uint64_t crc = st_crc64(0, p, n - 8);
    for (int i = 0; i < 8; i++)
        p[n - 8 + i] = (unsigned char)(crc >> (8 * i));
}

/* The DUMP reply's payload bytes (the bulk string's body) into p. */
static size_t dump_bytes(const char *key, unsigned char *p, size_t cap)
{
    const char *r = rd(T0, CMD_DUMP, key, NULL);
    cr_assert_eq(r[0], '$', "DUMP %s: %s", key, r);
    char *end;
    size_t n = strtoul(r + 1, &end, 10);
    cr_assert_leq(n, cap);
    memcpy(p, end + 2, n);
    return n;
}

/* Sorted sets (RDB types 17 and 5) DUMP and RESTORE back to the same
 * members, scores and encodings; the zset limits come from the record (a
 * seventh argument), and a six-argument record (written before zsets)
 * loads with Redis' defaults. Replay decides the same. */
Test(dump, zsets_round_trip)
{
    const char *zlim = "#i64:274877906947"; /* 3 members, 64-byte values */
    wr(T0, CMD_ZADD, "lp", "#i64:274877907072", "#u32:2", "1", "a", "-inf", "b", "2.5", "c", NULL);
    wr(T0, CMD_ZADD, "sk", zlim, "#u32:2", "1", "a", "2", "b", "3", "c", "4", "d", NULL);
    static unsigned char p[4096];
    const char *keys[] = {"lp", "sk"};
    for (int k = 0; k < 2; k++) {
        size_t n = dump_bytes(keys[k], p, sizeof p);
        cr_assert_eq(p[0], k ? 5 : 17, "RDB type of %s", keys[k]);
        char to[16];
        snprintf(to, sizeof to, "%s-copy", keys[k]);
        cr_assert_str_eq(sh_put_key(T0, CMD_RESTORE, to, "buiiii", p, n, (uint32_t)0, (int64_t)0,
                                    LIMITS, (int64_t)512, (int64_t)274877907072),
                         "+OK\r\n");
        static char want[1024];
        rd(T0, CMD_ZRANGE, keys[k], "0", "-1", "WITHSCORES", NULL);
        cr_assert_lt(reply_len, sizeof want);
        memcpy(want, reply, reply_len + 1);
        cr_assert_str_eq(rd(T0, CMD_ZRANGE, to, "0", "-1", "WITHSCORES", NULL), want);
    }
    /* a skiplist payload that fits the limits loads as a listpack, as Redis */
    cr_assert_str_eq(encoding("sk-copy"), "$8\r\nlistpack\r\n");
    cr_assert_str_eq(encoding("lp-copy"), "$8\r\nlistpack\r\n");
    size_t n = dump_bytes("sk", p, sizeof p);
    cr_assert_str_eq(sh_put_key(T0, CMD_RESTORE, "sk-small", "buiiii", p, n, (uint32_t)0,
                                (int64_t)0, LIMITS, (int64_t)512, (int64_t)274877906947),
                     "+OK\r\n");
    cr_assert_str_eq(encoding("sk-small"), "$8\r\nskiplist\r\n");
    n = dump_bytes("lp", p, sizeof p);
    cr_assert_str_eq(restore_bytes("lp-old", p, n, 0, 0), "+OK\r\n", "a six-argument record");
    cr_assert_str_eq(encoding("lp-old"), "$8\r\nlistpack\r\n");
    /* a repeated member is bad data */
    wr(T0, CMD_ZADD, "two", "#i64:274877907072", "#u32:2", "1", "a", "2", "b", NULL);
    n = dump_bytes("two", p, sizeof p);
    unsigned char *b = memchr(p + 8, 'b', n - 18); /* the second member's byte */
    cr_assert_not_null(b);
    *b = 'a';
    fix_crc(p, n);
    cr_assert_str_eq(restore_bytes("dup", p, n, 0, 0), "-ERR Bad data format\r\n");
    sh_check_replay("dump of zsets");
}

/* ---- lists (RDB types 18, 14, 10, 1; D40) ---- */

/* A payload of type byte t and body b[0, n) with version and CRC64; its
 * length returned (p needs n + 11 bytes). */
static size_t payload(unsigned char *p, unsigned t, const unsigned char *b, size_t n)
{
    p[0] = (unsigned char)t;
    memcpy(p + 1, b, n);
    p[n + 1] = 10;
    p[n + 2] = 0;
    fix_crc(p, n + 11);
    return n + 11;
}

/* The reply to LRANGE key 0 -1, copied. */
static const char *lrange(const char *key)
{
    static char out[2][1 << 18];
    static int which;
    which ^= 1;
    rd(T0, CMD_LRANGE, key, "0", "-1", NULL);
    cr_assert_lt(reply_len, sizeof out[0]);
    memcpy(out[which], reply, reply_len + 1);
    return out[which];
}

#define LRANGE_SMALL "*5\r\n$1\r\na\r\n$1\r\n1\r\n$2\r\n-5\r\n$5\r\nhello\r\n$3\r\n300\r\n"

/* RPUSH l a 1 -5 hello 300 on redis-server 7.0.15, then DUMP l. */
Test(dump, small_list_matches_redis)
{
    const char *redis = "120102191900000005008161020101dffb028568656c6c6f06c12c02ff0a00cb60b3cce7"
                        "4c40bc";
    wr(T0, CMD_LPUSH, "l", "#u32:1", "a", "1", "-5", "hello", "300", NULL);
    cr_assert_str_eq(dump_hex("l"), redis);
    cr_assert_str_eq(restore("l2", redis, 0), "+OK\r\n");
    cr_assert_str_eq(lrange("l2"), LRANGE_SMALL);
    cr_assert_str_eq(encoding("l2"), "$9\r\nquicklist\r\n");
}

/* Long lists split into nodes of at most 8 KB; an element over 8 KB has a
 * node of its own; long elements restore as extents of the payload, and
 * replay agrees. */
Test(dump, long_lists_round_trip)
{
    static char big[10000];
    memset(big, 'B', sizeof big - 1);
    for (int i = 0; i < 3000; i++) {
        char e[32];
        snprintf(e, sizeof e, "element-%d-with-some-length", i);
        wr(T0, CMD_LPUSH, "long", "#u32:1", e, NULL);
        if (i == 1500) wr(T0, CMD_LPUSH, "long", "#u32:1", big, NULL);
    }
    static unsigned char p[1 << 17];
    size_t n = dump_bytes("long", p, sizeof p);
    cr_assert_eq(p[0], 18);
    cr_assert(p[1] >= 12 && p[1] < 20, "8 KB nodes, and one for the big element: %d", p[1]);
    cr_assert_str_eq(restore_bytes("copy", p, n, 0, 0), "+OK\r\n");
    static char want[1 << 18];
    strcpy(want, lrange("long"));
    cr_assert_str_eq(lrange("copy"), want);
    cr_assert_str_eq(rd(T0, CMD_LLEN, "copy", NULL), ":3001\r\n");
    sh_check_replay("restored long list");
}

/* Append a ziplist entry holding s (integers as Redis' ziplist writes
 * them: 0xF1..0xFD immediates, int8, int16) to z; returns its size. */
static size_t zl_entry(unsigned char *z, size_t prevlen, const char *s)
{
    size_t n = 0;
    z[n++] = (unsigned char)prevlen;
    char *end;
    long v = strtol(s, &end, 10);
    if (*s && !*end) {
        if (v >= 0 && v <= 12) {
            z[n++] = (unsigned char)(0xF1 + v);
        } else if (v >= -128 && v <= 127) {
            z[n++] = 0xFE;
            z[n++] = (unsigned char)v;
        } else {
            z[n++] = 0xC0;
            z[n++] = (unsigned char)v;
            z[n++] = (unsigned char)(v >> 8);
        }
        return n;
    }
    z[n++] = (unsigned char)strlen(s);
    memcpy(z + n, s, strlen(s));
    return n + strlen(s);
}

/* A ziplist of a 1 -5 hello 300 into z, as an RDB string (length byte
 * first); returns its size. */
static size_t small_ziplist(unsigned char *z)
{
    const char *el[] = {"a", "1", "-5", "hello", "300"};
    size_t at = 11, prev = 0, tail = 0;
    for (int i = 0; i < 5; i++) {
        tail = at - 1;
        prev = zl_entry(z + at, prev, el[i]);
        at += prev;
    }
    z[at++] = 0xFF;
    size_t bytes = at - 1;
    z[0] = (unsigned char)bytes;
    unsigned char hdr[10] = {(unsigned char)bytes, 0, 0, 0, (unsigned char)tail, 0, 0, 0, 5, 0};
    memcpy(z + 1, hdr, 10);
    return at;
}

/* The older forms a Redis 7.0 server still loads: a ziplist (10), a
 * quicklist of ziplists (14), a linked list (1), and type 18 with a PLAIN
 * node; each restores the same elements. */
Test(dump, older_list_forms_restore)
{
    unsigned char body[256], p[512];
    size_t zn = small_ziplist(body);
    size_t n = payload(p, 10, body, zn);
    cr_assert_str_eq(restore_bytes("zl", p, n, 0, 0), "+OK\r\n");
    cr_assert_str_eq(lrange("zl"), LRANGE_SMALL);

    unsigned char ql[256] = {1};
    memcpy(ql + 1, body, zn);
    n = payload(p, 14, ql, zn + 1);
    cr_assert_str_eq(restore_bytes("ql", p, n, 0, 0), "+OK\r\n");
    cr_assert_str_eq(lrange("ql"), LRANGE_SMALL);

    const unsigned char linked[] = {5,   1,   'a', 0xC0, 1,   0xC0, 0xFB, 5,
                                    'h', 'e', 'l', 'l',  'o', 0xC1, 0x2C, 0x01};
    n = payload(p, 1, linked, sizeof linked);
    cr_assert_str_eq(restore_bytes("ll", p, n, 0, 0), "+OK\r\n");
    cr_assert_str_eq(lrange("ll"), LRANGE_SMALL);

    /* two nodes: PLAIN "a" (as a big element would be), then a listpack */
    const unsigned char q2[] = {2,   1,   1,    'a', 2,    0x16, 0x16, 0,    0,   0,
                                4,   0,   0x01, 1,   0xDF, 0xFB, 2,    0x85, 'h', 'e',
                                'l', 'l', 'o',  6,   0xC1, 0x2C, 0x02, 0xFF};
    n = payload(p, 18, q2, sizeof q2);
    cr_assert_str_eq(restore_bytes("q2", p, n, 0, 0), "+OK\r\n");
    cr_assert_str_eq(lrange("q2"), LRANGE_SMALL);
    sh_check_replay("older list forms");
}

/* Damaged list payloads (with right CRCs) are Redis' "Bad data format"
 * and create nothing. */
Test(dump, corrupt_list_payloads)
{
    const char *bad = "-ERR Bad data format\r\n";
    unsigned char body[64], p[128];
    const unsigned char none[] = {0};
    size_t n = payload(p, 18, none, 1); /* no nodes */
    cr_assert_str_eq(restore_bytes("x", p, n, 0, 0), bad);
    const unsigned char empty_lp[] = {1, 2, 7, 7, 0, 0, 0, 0, 0, 0xFF};
    n = payload(p, 18, empty_lp, sizeof empty_lp); /* only an empty listpack */
    cr_assert_str_eq(restore_bytes("x", p, n, 0, 0), bad);
    const unsigned char container[] = {1, 3, 1, 'a'};
    n = payload(p, 18, container, sizeof container); /* unknown container */
    cr_assert_str_eq(restore_bytes("x", p, n, 0, 0), bad);
    const unsigned char badlen[] = {1, 2, 9, 10, 0, 0, 0, 1, 0, 0x81, 'a', 2, 0xFF};
    n = payload(p, 18, badlen, sizeof badlen); /* the header's length is wrong */
    cr_assert_str_eq(restore_bytes("x", p, n, 0, 0), bad);
    const unsigned char cut[] = {1, 2, 9, 9, 0, 0, 0, 1, 0, 0x85, 'a', 2, 0xFF};
    n = payload(p, 18, cut, sizeof cut); /* an entry runs past the end */
    cr_assert_str_eq(restore_bytes("x", p, n, 0, 0), bad);
    size_t zn = small_ziplist(body);
    body[12] = 0x85; /* the first entry claims 5 bytes */
    n = payload(p, 10, body, zn);
    cr_assert_str_eq(restore_bytes("x", p, n, 0, 0), bad);
    const unsigned char linked_short[] = {3, 1, 'a'};
    n = payload(p, 1, linked_short, sizeof linked_short);
    cr_assert_str_eq(restore_bytes("x", p, n, 0, 0), bad);
    cr_assert_str_eq(rd(T0, CMD_EXISTS, "x", NULL), ":0\r\n");
}

/* A Redis payload whose node is LZF-compressed (as Redis saves nodes over
 * 20 bytes when that is shorter) holds a 100-byte element that is not in
 * the log: it is held in RAM, reads back, DUMPs back, survives replay
 * and a checkpoint of the list (kind 2 of list.c's stream). */
Test(dump, long_element_of_a_compressed_node)
{
    const unsigned char body[] = {1, 2, 0xC3, 16,  0x40, 110,  8,  0x6E, 0, 0,    0,
                                  1, 0, 0xE0, 100, 'q',  0xE0, 90, 0x00, 1, 0x66, 0xFF};
    unsigned char p[128];
    size_t n = payload(p, 18, body, sizeof body);
    cr_assert_str_eq(restore_bytes("lz", p, n, 0, 0), "+OK\r\n");
    char want[128] = "*1\r\n$100\r\n";
    memset(want + 10, 'q', 100);
    strcpy(want + 110, "\r\n");
    cr_assert_str_eq(lrange("lz"), want);
    static unsigned char d[512];
    n = dump_bytes("lz", d, sizeof d);
    cr_assert_str_eq(restore_bytes("lz2", d, n, 0, 0), "+OK\r\n");
    cr_assert_str_eq(lrange("lz2"), want);
    sh_check_replay("a list element held in RAM");

    st_list_t *l = st_list_new();
    rec_arg_t name = {(const unsigned char *)"", 0};
    st_list_insert(NULL, l, 0, st_ent_new_ram(&name, (const unsigned char *)want + 10, 100, 0));
    st_list_insert(NULL, l, 1, st_list_elem_new("short", 5, 0));
    buf_t ck;
    buf_init(&ck);
    st_list_ops.ckpt_write((st_obj_t *)l, &ck);
    st_obj_t *back = NULL;
    cr_assert_eq(st_list_ops.ckpt_read((const unsigned char *)ck.data, ck.len, &back),
                 (long)ck.len);
    st_list_t *b = (st_list_t *)back;
    cr_assert_eq(st_list_len(b), 2);
    cr_assert_eq(st_ent_vlen(st_list_at(b, 0)), 100);
    cr_assert_eq(st_ent_kind(st_list_at(b, 0)), VK_LIST);
    cr_assert_eq(st_list_bytes(b), st_list_bytes(l));
    st_list_ops.free(back);
    st_list_ops.free((st_obj_t *)l);
    buf_free(&ck);
}

/* LZF strings RESTORE decodes as Redis' loader does (lzf_decompress, then
 * "the whole length or bad data"): redis-server 7.0.15 takes an empty
 * string with a byte of compressed data (the decompressor stops when the
 * output is full and reports 0 bytes, its length), refuses a literal run
 * longer than the data and a reference before the start (these four
 * payloads sent to a redis-server by hand: the same answers). */
Test(dump, restore_lzf_strings_as_redis)
{
    unsigned char p[64];
    const unsigned char empty[] = {0xC3, 1, 0, 0x00};
    size_t n = payload(p, 0, empty, sizeof empty);
    cr_assert_str_eq(restore_bytes("e", p, n, 0, 0), "+OK\r\n");
    cr_assert_str_eq(rd(T0, CMD_GET, "e", NULL), "$0\r\n\r\n");
    const unsigned char ab[] = {0xC3, 3, 2, 0x01, 'a', 'b'};
    n = payload(p, 0, ab, sizeof ab);
    cr_assert_str_eq(restore_bytes("ab", p, n, 0, 0), "+OK\r\n");
    cr_assert_str_eq(rd(T0, CMD_GET, "ab", NULL), "$2\r\nab\r\n");
    const unsigned char cut[] = {0xC3, 2, 5, 0x01, 'a'};
    n = payload(p, 0, cut, sizeof cut);
    cr_assert_str_eq(restore_bytes("cut", p, n, 0, 0), "-ERR Bad data format\r\n");
    const unsigned char far[] = {0xC3, 4, 5, 0x00, 'a', 0x40, 0x05}; /* back 6 of 1 */
    n = payload(p, 0, far, sizeof far);
    cr_assert_str_eq(restore_bytes("far", p, n, 0, 0), "-ERR Bad data format\r\n");
    cr_assert_str_eq(rd(T0, CMD_EXISTS, "cut", NULL), ":0\r\n");
    sh_check_replay("LZF strings");
}

/* An RDB length at *p (the plain forms DUMP writes), *p moved past it. */
static uint64_t rdb_len_at(const unsigned char **p)
{
    const unsigned char *q = *p;
    uint64_t v;
    if (q[0] < 0x40) {
        v = q[0];
        *p = q + 1;
    } else if (q[0] < 0x80) {
        v = (uint64_t)(q[0] & 0x3f) << 8 | q[1];
        *p = q + 2;
    } else {
        v = (uint64_t)q[1] << 24 | (uint64_t)q[2] << 16 | (uint64_t)q[3] << 8 | q[4];
        *p = q + 5;
    }
    return v;
}

/* Which nodes of list payload p are LZF blobs, as a string of 'z' (LZF)
 * and 'r' (plain), one letter a node. */
static const char *node_forms(const unsigned char *p)
{
    static char forms[64];
    cr_assert_eq(p[0], 18);
    p++;
    uint64_t n = rdb_len_at(&p);
    cr_assert_lt(n, sizeof forms);
    for (uint64_t i = 0; i < n; i++) {
        cr_assert_eq(rdb_len_at(&p), 2, "a packed node");
        if (*p == 0xC3) {
            p++;
            uint64_t clen = rdb_len_at(&p);
            rdb_len_at(&p);
            p += clen;
            forms[i] = 'z';
        } else {
            p += rdb_len_at(&p);
            forms[i] = 'r';
        }
    }
    forms[n] = 0;
    return forms;
}

/* list-compress-depth d: Redis holds all nodes but the d at each end
 * compressed, and DUMP writes those as LZF even under rdbcompression no
 * (the node forms are redis-server's for the same list: 1500 such
 * elements make seven nodes); the payload restores to the same list. */
Test(dump, list_compress_depth_compresses_the_middle_nodes)
{
    for (int i = 0; i < 1500; i++) {
        char e[64];
        snprintf(e, sizeof e, "element-%d-xxxxxxxxxxxxxxxxxxxx", i);
        wr(T0, CMD_LPUSH, "l", "#u32:1", e, NULL);
    }
    static unsigned char p[1 << 16];
    static const struct {
        int depth, compress;
        const char *forms;
    } cases[] = {{0, 0, "rrrrrrr"}, {0, 1, "zzzzzzz"}, {1, 0, "rzzzzzr"}, {2, 0, "rrzzzrr"},
                 {3, 0, "rrrzrrr"}, {4, 0, "rrrrrrr"}, {2, 1, "zzzzzzz"}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        ctx->list_compress_depth = cases[c].depth;
        ctx->rdb_compression = cases[c].compress;
        size_t n = dump_bytes("l", p, sizeof p);
        cr_assert_str_eq(node_forms(p), cases[c].forms, "depth %d, rdbcompression %d: %s",
                         cases[c].depth, cases[c].compress, node_forms(p));
        char to[16];
        snprintf(to, sizeof to, "copy%zu", c);
        cr_assert_str_eq(restore_bytes(to, p, n, 0, 0), "+OK\r\n");
        static char want[1 << 18];
        strcpy(want, lrange("l"));
        cr_assert_str_eq(lrange(to), want);
    }
    sh_check_replay("lists restored from compressed nodes");
}

/* ---- RESTORE's IDLETIME and FREQ in the record (D52) ---- */

#define ZLIMITS ((int64_t)(128 | (uint64_t)64 << 32))

/* OBJECT sub key read at now: its integer (asserted). */
static long long object_int(int64_t now, const char *sub, const char *key)
{
    const char *r = rd(now, CMD_OBJECT, sub, key, NULL);
    cr_assert_eq(r[0], ':', "OBJECT %s %s: %s", sub, key, r);
    return strtoll(r + 1, NULL, 10);
}

/* A RESTORE record of each age: six arguments (before zsets), seven
 * (before D52: no access value), eight (flags say IDLETIME or FREQ). */
static const char *restore_v(const char *key, int argc, uint32_t flags, int64_t access)
{
    unsigned char p[64];
    size_t n = unhex("000568656c6c6f0a006372df766534200a", p); /* "hello" */
    if (argc == 6) return restore_bytes(key, p, n, flags, 0);
    if (argc == 7)
        return sh_put_key(T0, CMD_RESTORE, key, "buiiii", p, n, flags, (int64_t)0, LIMITS,
                          (int64_t)512, ZLIMITS);
    return sh_put_key(T0, CMD_RESTORE, key, "buiiiii", p, n, flags, (int64_t)0, LIMITS,
                      (int64_t)512, ZLIMITS, access);
}

Test(dump, restore_records_without_the_access_value_still_apply)
{
    ctx->access.policy = CONFIG_POLICY_ALLKEYS_LFU;
    cr_assert_str_eq(restore_v("six", 6, 0, 0), "+OK\r\n");
    cr_assert_str_eq(restore_v("seven", 7, 0, 0), "+OK\r\n");
    /* an older record whose flags had no access bits: fresh data */
    cr_assert_eq(object_int(T0, "freq", "six"), ST_LFU_INIT);
    cr_assert_eq(object_int(T0, "freq", "seven"), ST_LFU_INIT);
    cr_assert_str_eq(rd(T0, CMD_GET, "seven", NULL), "$5\r\nhello\r\n");
    ctx->access.policy = CONFIG_POLICY_ALLKEYS_LRU;
    cr_assert_str_eq(restore_v("lru7", 7, 0, 0), "+OK\r\n");
    cr_assert_eq(object_int(T0 + 3000, "idletime", "lru7"), 3, "fresh at the record's time");
}

Test(dump, restore_access_value_sets_freq_or_idletime_by_policy)
{
    ctx->access.policy = CONFIG_POLICY_ALLKEYS_LFU;
    cr_assert_str_eq(restore_v("f", 8, ST_RESTORE_FREQ, 42), "+OK\r\n");
    cr_assert_str_eq(restore_v("fi", 8, ST_RESTORE_IDLETIME, 42), "+OK\r\n");
    cr_assert_eq(object_int(T0, "freq", "f"), 42);
    cr_assert_eq(object_int(T0, "freq", "fi"), ST_LFU_INIT, "IDLETIME ignored under LFU");
    ctx->access.policy = CONFIG_POLICY_NOEVICTION;
    cr_assert_str_eq(restore_v("i", 8, ST_RESTORE_IDLETIME, 100), "+OK\r\n");
    cr_assert_str_eq(restore_v("if", 8, ST_RESTORE_FREQ, 100), "+OK\r\n");
    cr_assert_eq(object_int(T0, "idletime", "i"), 100);
    cr_assert_eq(object_int(T0 + 5000, "idletime", "i"), 105, "idle since the record's time");
    cr_assert_eq(object_int(T0, "idletime", "if"), 0, "FREQ ignored under LRU");
    /* REPLACE: a fresh counter, not the replaced key's (as Redis) */
    ctx->access.policy = CONFIG_POLICY_ALLKEYS_LFU;
    cr_assert_str_eq(restore_v("r", 8, ST_RESTORE_FREQ, 200), "+OK\r\n");
    cr_assert_str_eq(restore_v("r", 8, ST_RESTORE_REPLACE, 0), "+OK\r\n");
    cr_assert_eq(object_int(T0, "freq", "r"), ST_LFU_INIT);
}
