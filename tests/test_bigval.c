/*
 * test_bigval.c - the store's side of values larger than one record (D31,
 * store/types/t_bigval.c, route.c's st_apply_bigfinal), through the store
 * harness: chunks then a final make the value (SET and APPEND), chunks
 * without a final change nothing visible, an abort or a final whose write
 * does not happen (NX, WRONGTYPE) drops the parts and their live bytes,
 * a final naming no pending group answers an error and changes nothing,
 * chunks that do not follow their group are ignored, and replay reaches
 * the same state and replies.
 */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ckpt.h"
#include "command.h"
#include "pubsub.h"
#include "record.h"
#include "store/checkpoint.h"
#include "store/compact.h"
#include "store/core/entry.h"
#include "store/core/groups.h"
#include "store/core/pieces.h"
#include "store/digest.h"
#include "store/store-internal.h"
#include "store_harness.h"

#define T0    1000000
#define OWNER ((int64_t)1 << 32 | 4242)

static void setup(void)
{
    sh_setup("bigval", 0, 42);
    sh_canonical_only = 1;
}

TestSuite(bigval, .init = setup, .fini = sh_teardown, .timeout = 120);

/* One chunk of group (its seq 0 is the group's own LSN); returns the
 * group. */
static uint64_t chunk(uint64_t group, uint32_t seq, const char *bytes, size_t n)
{
    if (seq == 0) group = lsn;
    sh_args_t x;
    memset(&x, 0, sizeof(x));
    unsigned char g[8], s[4], o[8];
    cmd_put_i64(g, (int64_t)group);
    cmd_put_u32(s, seq);
    cmd_put_i64(o, OWNER);
    const unsigned char *argv[4] = {g, s, o, (const unsigned char *)bytes};
    uint32_t lens[4] = {8, 4, 8, (uint32_t)n};
    sh_put(T0, CMD_CHUNK, 4, argv, lens);
    return group;
}

/* The final of group nesting op with these arguments, argument `which`
 * the parts (its own bytes must be empty); returns the reply. */
static const char *final_of(uint64_t group, uint32_t which, cmd_id_t op, uint16_t argc,
                            const unsigned char *const *nargv, const uint32_t *nlens)
{
    size_t n = rec_cmd_payload_size(argc, nlens);
    unsigned char *nested = malloc(n);
    cr_assert_not_null(nested);
    rec_encode_payload(nested, (uint16_t)op, argc, nargv, nlens);
    unsigned char g[8], w[4];
    cmd_put_i64(g, (int64_t)group);
    cmd_put_u32(w, which);
    const unsigned char *argv[3] = {g, w, nested};
    uint32_t lens[3] = {8, 4, (uint32_t)n};
    const char *r = sh_put(T0, CMD_BIGFINAL, 3, argv, lens);
    free(nested);
    return r;
}

/* The final of group for the write op on key (SET: flags; APPEND and
 * SETRANGE: no limit; SETRANGE at offset flags), its value argument
 * empty; returns the reply. */
static const char * final(uint64_t group, cmd_id_t op, const char *key, uint32_t flags)
{
    unsigned char f[4], at[8], limit[8], off[8];
    cmd_put_u32(f, flags);
    cmd_put_i64(at, 0);
    cmd_put_i64(limit, 0);
    cmd_put_i64(off, flags);
    const unsigned char *k = (const unsigned char *)key, *e = (const unsigned char *)"";
    uint32_t kl = (uint32_t)strlen(key);
    if (op == CMD_SET) {
        const unsigned char *argv[4] = {k, e, f, at};
        uint32_t lens[4] = {kl, 0, 4, 8};
        return final_of(group, 1, op, 4, argv, lens);
    }
    if (op == CMD_SETRANGE) {
        const unsigned char *argv[4] = {k, off, e, limit};
        uint32_t lens[4] = {kl, 8, 0, 8};
        return final_of(group, 2, op, 4, argv, lens);
    }
    const unsigned char *argv[3] = {k, e, limit};
    uint32_t lens[3] = {kl, 0, 8};
    return final_of(group, 1, op, 3, argv, lens);
}

static const char *get(const char *key)
{
    return sh_rd(T0, 0, CMD_GET, key, NULL);
}

static char *bytes(char c, size_t n)
{
    char *p = malloc(n + 1);
    cr_assert_not_null(p);
    memset(p, c, n);
    p[n] = 0;
    return p;
}

/* "$<n>\r\n" + the concatenation + CRLF, for comparing with GET's reply. */
static char *bulk(const char *a, const char *b, const char *c)
{
    size_t n = strlen(a) + strlen(b) + strlen(c);
    char *p = malloc(n + 32);
    cr_assert_not_null(p);
    snprintf(p, n + 32, "$%zu\r\n%s%s%s\r\n", n, a, b, c);
    return p;
}

Test(bigval, parts_then_final_are_the_value)
{
    char *a = bytes('a', 1000), *b = bytes('b', 2000), *c = bytes('c', 500);
    uint64_t live0 = store_live_total(ctx);
    uint64_t g = chunk(0, 0, a, 1000);
    chunk(g, 1, b, 2000);
    cr_assert_str_eq(get("k"), "$-1\r\n", "parts are not visible");
    chunk(g, 2, c, 500);
    cr_assert_eq(store_live_total(ctx) - live0, 3500, "pending parts are counted live");
    cr_assert_str_eq(final(g, CMD_SET, "k", 0), "+OK\r\n");
    char *want = bulk(a, b, c);
    cr_assert_str_eq(get("k"), want);
    cr_assert_eq(store_live_total(ctx) - live0, 3500, "the value's bytes, counted once");
    cr_assert(store_live_verify(ctx));
    cr_assert_str_eq(sh_rd(T0, 0, CMD_STRLEN, "k", NULL), ":3500\r\n");
    sh_check_replay("a large SET");
    free(want);
    free(a);
    free(b);
    free(c);
}

Test(bigval, parts_without_final_change_nothing)
{
    char *a = bytes('a', 1000);
    sh_put_key(T0, CMD_SET, "k", "bui", "old", (size_t)3, 0u, (int64_t)0);
    uint64_t live0 = store_live_total(ctx);
    uint64_t g = chunk(0, 0, a, 1000);
    chunk(g, 1, a, 1000);
    cr_assert_str_eq(get("k"), "$3\r\nold\r\n");
    cr_assert_eq(store_live_total(ctx) - live0, 2000);
    /* The abort: parts and their live bytes gone; a late final finds
     * nothing and changes nothing. */
    unsigned char id[8];
    cmd_put_i64(id, (int64_t)g);
    const unsigned char *argv[1] = {id};
    uint32_t lens[1] = {8};
    sh_put(T0, CMD_BIGABORT, 1, argv, lens);
    cr_assert_eq(store_live_total(ctx), live0);
    cr_assert(store_live_verify(ctx));
    sh_canonical_only = 0;
    cr_assert_str_eq(final(g, CMD_SET, "k", 0),
                     "-ERR the value's parts were dropped before it was complete (nothing was "
                     "written)\r\n");
    cr_assert_str_eq(get("k"), "$3\r\nold\r\n");
    cr_assert_eq(store_live_total(ctx), live0);
    sh_check_replay("an aborted large SET");
    free(a);
}

Test(bigval, a_write_that_does_not_happen_drops_the_parts)
{
    char *a = bytes('a', 800);
    sh_put_key(T0, CMD_SET, "k", "bui", "old", (size_t)3, 0u, (int64_t)0);
    sh_wr(T0, CMD_HSET, "h", "#i64:0", "#u32:0", "f", "v", NULL);
    uint64_t live0 = store_live_total(ctx);
    uint64_t g = chunk(0, 0, a, 800);
    cr_assert_str_eq(final(g, CMD_SET, "k", SETF_NX), "$-1\r\n", "NX not met");
    cr_assert_str_eq(get("k"), "$3\r\nold\r\n");
    cr_assert_eq(store_live_total(ctx), live0);
    g = chunk(0, 0, a, 800);
    cr_assert_str_eq(final(g, CMD_APPEND, "h", 0),
                     "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n");
    cr_assert_eq(store_live_total(ctx), live0);
    cr_assert(store_live_verify(ctx));
    /* SET ... GET answers the old value and stores the parts. */
    g = chunk(0, 0, a, 800);
    cr_assert_str_eq(final(g, CMD_SET, "k", SETF_GET), "$3\r\nold\r\n");
    char *want = bulk(a, "", "");
    cr_assert_str_eq(get("k"), want);
    sh_check_replay("large writes that do not happen");
    free(want);
    free(a);
}

Test(bigval, append_takes_the_parts_after_the_old_value)
{
    char *a = bytes('a', 700), *b = bytes('b', 900);
    sh_put_key(T0, CMD_SET, "k", "bui", "0123456789", (size_t)10, 0u, (int64_t)0);
    uint64_t g = chunk(0, 0, a, 700);
    chunk(g, 1, b, 900);
    cr_assert_str_eq(final(g, CMD_APPEND, "k", 0), ":1610\r\n");
    char *want = bulk("0123456789", a, b);
    cr_assert_str_eq(get("k"), want);
    /* And to a key that does not exist. */
    g = chunk(0, 0, b, 900);
    cr_assert_str_eq(final(g, CMD_APPEND, "new", 0), ":900\r\n");
    cr_assert(store_live_verify(ctx));
    sh_check_replay("a large APPEND");
    free(want);
    free(a);
    free(b);
}

Test(bigval, chunks_that_do_not_follow_are_ignored_and_groups_interleave)
{
    char *a = bytes('a', 300), *b = bytes('b', 400);
    uint64_t live0 = store_live_total(ctx);
    uint64_t g1 = chunk(0, 0, a, 300);
    uint64_t g2 = chunk(0, 0, b, 400);
    chunk(g1, 2, a, 300); /* seq 1 skipped: ignored */
    chunk(g1, 1, a, 300);
    chunk(g2, 1, b, 400);
    chunk(12345, 1, a, 300); /* no such group */
    cr_assert_eq(store_live_total(ctx) - live0, 1400);
    cr_assert_str_eq(final(g2, CMD_SET, "two", 0), "+OK\r\n");
    cr_assert_str_eq(final(g1, CMD_SET, "one", 0), "+OK\r\n");
    char *w1 = bulk(a, a, ""), *w2 = bulk(b, b, "");
    cr_assert_str_eq(get("one"), w1);
    cr_assert_str_eq(get("two"), w2);
    cr_assert_eq(store_live_total(ctx) - live0, 1400);
    sh_check_replay("interleaved groups");
    free(w1);
    free(w2);
    free(a);
    free(b);
}

Test(bigval, setrange_writes_the_parts_over_inline_and_ram_bytes)
{
    char *a = bytes('a', 1000), *b = bytes('b', 5);
    /* Over an inline value from offset 2: its prefix bytes come from the
     * log (only the log holds the parts). */
    sh_put_key(T0, CMD_SET, "k", "bui", "0123456789", (size_t)10, 0u, (int64_t)0);
    uint64_t g = chunk(0, 0, a, 1000);
    cr_assert_str_eq(final(g, CMD_SETRANGE, "k", 2), ":1002\r\n");
    char *want = bulk("01", a, "");
    cr_assert_str_eq(get("k"), want);
    free(want);
    /* Into a RAM block SETBIT made: a short last part lands inside it. */
    sh_put_key(T0, CMD_SETBIT, "bits", "iu", (int64_t)800, 1u); /* 101 bytes, past inline */
    g = chunk(0, 0, b, 5);
    cr_assert_str_eq(final(g, CMD_SETRANGE, "bits", 30), ":101\r\n");
    sh_rd(T0, 0, CMD_GETRANGE, "bits", "29", "35", NULL);
    cr_assert(reply_len == 13 && memcmp(reply, "$7\r\n\0bbbbb\0\r\n", 13) == 0, "%s", reply);
    cr_assert(store_live_verify(ctx));
    sh_check_replay("a large SETRANGE");
    free(a);
    free(b);
}

Test(bigval, mset_and_msetnx_take_the_parts_as_one_value)
{
    char *a = bytes('a', 1200);
    const unsigned char *argv[4] = {(const unsigned char *)"x", (const unsigned char *)"1",
                                    (const unsigned char *)"y", (const unsigned char *)""};
    uint32_t lens[4] = {1, 1, 1, 0};
    uint64_t g = chunk(0, 0, a, 1200);
    cr_assert_str_eq(final_of(g, 3, CMD_MSET, 4, argv, lens), "+OK\r\n");
    char *want = bulk(a, "", "");
    cr_assert_str_eq(get("y"), want);
    cr_assert_str_eq(get("x"), "$1\r\n1\r\n");
    /* MSETNX with a key present: nothing set, the parts dropped. */
    uint64_t live0 = store_live_total(ctx);
    g = chunk(0, 0, a, 1200);
    cr_assert_str_eq(final_of(g, 3, CMD_MSETNX, 4, argv, lens), ":0\r\n");
    cr_assert_eq(store_live_total(ctx), live0);
    argv[0] = (const unsigned char *)"z";
    argv[2] = (const unsigned char *)"w";
    g = chunk(0, 0, a, 1200);
    cr_assert_str_eq(final_of(g, 3, CMD_MSETNX, 4, argv, lens), ":1\r\n");
    cr_assert_str_eq(get("w"), want);
    /* The parts as a key (an even argument) are refused. */
    sh_canonical_only = 0;
    g = chunk(0, 0, a, 1200);
    argv[2] = (const unsigned char *)"";
    lens[2] = 0;
    lens[3] = 1;
    argv[3] = (const unsigned char *)"v";
    cr_assert_str_eq(final_of(g, 2, CMD_MSET, 4, argv, lens),
                     "-ERR the store cannot apply this record\r\n");
    cr_assert_eq(store_live_total(ctx), live0 + 1200, "w's value only");
    sh_check_replay("large MSET and MSETNX");
    free(want);
    free(a);
}

/* A hash field's value and a list element (D45): the parts are read into
 * RAM as the element, so they no longer count live; HSETNX over a field
 * and LPUSHX onto no list drop them; replay gives the same. */
Test(bigval, hash_field_and_list_element_take_the_parts_in_ram)
{
    char *a = bytes('a', 1500), *b = bytes('b', 700);
    uint64_t live0 = store_live_total(ctx);
    unsigned char limits[8], flags[4], mode[4];
    cmd_put_i64(limits, 0);
    cmd_put_u32(flags, 0);
    cmd_put_u32(mode, 1); /* RPUSH */
    const unsigned char *e = (const unsigned char *)"";
    const unsigned char *hargv[7] = {(const unsigned char *)"h",
                                     limits,
                                     flags,
                                     (const unsigned char *)"s",
                                     (const unsigned char *)"x",
                                     (const unsigned char *)"big",
                                     e};
    uint32_t hlens[7] = {1, 8, 4, 1, 1, 3, 0};
    uint64_t g = chunk(0, 0, a, 1500);
    chunk(g, 1, b, 700);
    cr_assert_str_eq(final_of(g, 6, CMD_HSET, 7, hargv, hlens), ":2\r\n");
    char *want = bulk(a, b, "");
    cr_assert_str_eq(sh_rd(T0, 0, CMD_HGET, "h", "big", NULL), want);
    cr_assert_str_eq(sh_rd(T0, 0, CMD_HGET, "h", "s", NULL), "$1\r\nx\r\n");
    cr_assert_eq(store_live_total(ctx), live0, "the field is in RAM, the parts not live");
    cmd_put_u32(flags, 1); /* HSETNX */
    const unsigned char *nxargv[5] = {(const unsigned char *)"h", limits, flags,
                                      (const unsigned char *)"big", e};
    uint32_t nxlens[5] = {1, 8, 4, 3, 0};
    g = chunk(0, 0, b, 700);
    cr_assert_str_eq(final_of(g, 4, CMD_HSET, 5, nxargv, nxlens), ":0\r\n");
    cr_assert_str_eq(sh_rd(T0, 0, CMD_HGET, "h", "big", NULL), want);
    const unsigned char *largv[4] = {(const unsigned char *)"l", mode, (const unsigned char *)"a",
                                     e};
    uint32_t llens[4] = {1, 4, 1, 0};
    g = chunk(0, 0, a, 1500);
    chunk(g, 1, b, 700);
    cr_assert_str_eq(final_of(g, 3, CMD_LPUSH, 4, largv, llens), ":2\r\n");
    cr_assert_str_eq(sh_rd(T0, 0, CMD_LINDEX, "l", "1", NULL), want);
    cr_assert_str_eq(sh_rd(T0, 0, CMD_LINDEX, "l", "0", NULL), "$1\r\na\r\n");
    cmd_put_u32(mode, 3); /* RPUSHX */
    largv[0] = (const unsigned char *)"none";
    llens[0] = 4;
    g = chunk(0, 0, a, 1500);
    cr_assert_str_eq(final_of(g, 3, CMD_LPUSH, 4, largv, llens), ":0\r\n");
    cr_assert_str_eq(sh_rd(T0, 0, CMD_EXISTS, "none", NULL), ":0\r\n");
    cr_assert_eq(store_live_total(ctx), live0, "dropped parts are not live");
    /* The parts as a field name (an odd argument) are refused. */
    sh_canonical_only = 0;
    cmd_put_u32(flags, 0);
    g = chunk(0, 0, a, 1500);
    const unsigned char *badargv[5] = {(const unsigned char *)"h", limits, flags, e,
                                       (const unsigned char *)"v"};
    uint32_t badlens[5] = {1, 8, 4, 0, 1};
    cr_assert_str_eq(final_of(g, 3, CMD_HSET, 5, badargv, badlens),
                     "-ERR the store cannot apply this record\r\n");
    cr_assert(store_live_verify(ctx));
    sh_check_replay("a large hash field and list element");
    free(want);
    free(a);
    free(b);
}

/* ---- several values in one final, and transactions (D58) ---------------- */

/* One value of a final's layout: argument arg of payload at (0 in a plain
 * final, the CMD_EXEC argument in a transaction's) is the group's bytes
 * [off, off + len). */
typedef struct lv {
    uint32_t at, arg;
    uint64_t off, len;
} lv_t;

/* The final of group with the values v[0, nv), nesting the payload
 * opdb/argc/argv/lens; returns the reply. */
static const char *final_vals(uint64_t group, const lv_t *v, int nv, uint16_t opdb, uint16_t argc,
                              const unsigned char *const *nargv, const uint32_t *nlens)
{
    size_t n = rec_cmd_payload_size(argc, nlens);
    unsigned char *nested = malloc(n), *layout = malloc((size_t)nv * 24 + 1), g[8];
    cr_assert(nested && layout);
    rec_encode_payload(nested, opdb, argc, nargv, nlens);
    for (int k = 0; k < nv; k++) {
        cmd_put_u32(layout + 24 * k, v[k].at);
        cmd_put_u32(layout + 24 * k + 4, v[k].arg);
        cmd_put_i64(layout + 24 * k + 8, (int64_t)v[k].off);
        cmd_put_i64(layout + 24 * k + 16, (int64_t)v[k].len);
    }
    cmd_put_i64(g, (int64_t)group);
    const unsigned char *argv[3] = {g, layout, nested};
    uint32_t lens[3] = {8, (uint32_t)nv * 24, (uint32_t)n};
    const char *r = sh_put(T0, CMD_BIGFINAL, 3, argv, lens);
    free(nested);
    free(layout);
    return r;
}

/* "$<n>\r\n" + p[0, n) + CRLF. */
static char *bulk_of(const char *p, size_t n)
{
    char *b = malloc(n + 32);
    cr_assert_not_null(b);
    int h = snprintf(b, 32, "$%zu\r\n", n);
    memcpy(b + h, p, n);
    memcpy(b + h + n, "\r\n", 3);
    return b;
}

/* MSET of three keys, two of them large, from one group: the values'
 * boundaries fall inside chunks and on them, and bytes no value names are
 * dropped. Each value is its own piece list (log runs: nothing in RAM). */
Test(bigval, mset_takes_several_values_from_one_group)
{
    char *v = bytes('v', 3000);
    for (int i = 0; i < 3000; i++)
        v[i] = (char)('a' + i % 23);
    uint64_t live0 = store_live_total(ctx);
    uint64_t g = chunk(0, 0, v, 1000);
    chunk(g, 1, v + 1000, 1000);
    chunk(g, 2, v + 2000, 1000);
    const unsigned char *argv[6] = {(const unsigned char *)"x", (const unsigned char *)"",
                                    (const unsigned char *)"y", (const unsigned char *)"small",
                                    (const unsigned char *)"z", (const unsigned char *)""};
    uint32_t lens[6] = {1, 0, 1, 5, 1, 0};
    /* x: [0, 1500) across two chunks; z: [1600, 3000); [1500, 1600) no one's. */
    lv_t lv[2] = {{0, 1, 0, 1500}, {0, 5, 1600, 1400}};
    cr_assert_str_eq(final_vals(g, lv, 2, CMD_MSET, 6, argv, lens), "+OK\r\n");
    char *wx = bulk_of(v, 1500), *wz = bulk_of(v + 1600, 1400);
    cr_assert_str_eq(get("x"), wx);
    cr_assert_str_eq(get("z"), wz);
    cr_assert_str_eq(get("y"), "$5\r\nsmall\r\n");
    cr_assert_eq(store_live_total(ctx) - live0, 2900, "the values' bytes, the rest dropped");
    cr_assert(store_live_verify(ctx));
    /* MSETNX with one key present: nothing set, every part dropped. */
    g = chunk(0, 0, v, 1000);
    chunk(g, 1, v + 1000, 1000);
    argv[0] = (const unsigned char *)"new";
    lens[0] = 3;
    lv_t nx[2] = {{0, 1, 0, 1000}, {0, 5, 1000, 1000}};
    cr_assert_str_eq(final_vals(g, nx, 2, CMD_MSETNX, 6, argv, lens), ":0\r\n");
    cr_assert_str_eq(get("new"), "$-1\r\n");
    cr_assert_eq(store_live_total(ctx) - live0, 2900);
    sh_check_replay("several values from one group");
    free(wx);
    free(wz);
    free(v);
}

/* HSET with two large field values, RPUSH and SADD with two large
 * elements each: read into RAM at the final, no live bytes left. */
Test(bigval, collections_take_several_values_in_ram)
{
    char *a = bytes('a', 1500), *b = bytes('b', 900);
    uint64_t live0 = store_live_total(ctx);
    unsigned char limits[8], flags[4], mode[4];
    cmd_put_i64(limits, 0);
    cmd_put_u32(flags, 0);
    cmd_put_u32(mode, 1); /* RPUSH */
    const unsigned char *e = (const unsigned char *)"";
    const unsigned char *hargv[7] = {
        (const unsigned char *)"h",  limits, flags, (const unsigned char *)"f1", e,
        (const unsigned char *)"f2", e};
    uint32_t hlens[7] = {1, 8, 4, 2, 0, 2, 0};
    uint64_t g = chunk(0, 0, a, 1500);
    chunk(g, 1, b, 900);
    lv_t two[2] = {{0, 4, 0, 1500}, {0, 6, 1500, 900}};
    cr_assert_str_eq(final_vals(g, two, 2, CMD_HSET, 7, hargv, hlens), ":2\r\n");
    char *wa = bulk_of(a, 1500), *wb = bulk_of(b, 900);
    cr_assert_str_eq(sh_rd(T0, 0, CMD_HGET, "h", "f1", NULL), wa);
    cr_assert_str_eq(sh_rd(T0, 0, CMD_HGET, "h", "f2", NULL), wb);
    const unsigned char *largv[4] = {(const unsigned char *)"l", mode, e, e};
    uint32_t llens[4] = {1, 4, 0, 0};
    g = chunk(0, 0, a, 1500);
    chunk(g, 1, b, 900);
    lv_t el[2] = {{0, 2, 0, 1500}, {0, 3, 1500, 900}};
    cr_assert_str_eq(final_vals(g, el, 2, CMD_LPUSH, 4, largv, llens), ":2\r\n");
    cr_assert_str_eq(sh_rd(T0, 0, CMD_LINDEX, "l", "0", NULL), wa);
    cr_assert_str_eq(sh_rd(T0, 0, CMD_LINDEX, "l", "1", NULL), wb);
    const unsigned char *sargv[5] = {(const unsigned char *)"s", limits, e,
                                     (const unsigned char *)"m", e};
    uint32_t slens[5] = {1, 8, 0, 1, 0};
    g = chunk(0, 0, a, 1500);
    chunk(g, 1, a, 1500);
    lv_t sm[2] = {{0, 2, 0, 1500}, {0, 4, 1500, 1500}};
    cr_assert_str_eq(final_vals(g, sm, 2, CMD_SADD, 5, sargv, slens), ":2\r\n", "one twice");
    cr_assert_str_eq(sh_rd(T0, 0, CMD_SCARD, "s", NULL), ":2\r\n");
    cr_assert_eq(store_live_total(ctx), live0, "the elements are in RAM");
    cr_assert(store_live_verify(ctx));
    sh_check_replay("several values of a collection");
    free(wa);
    free(wb);
    free(a);
    free(b);
}

/* A layout the frontend never writes is refused whole: nothing applied,
 * the error replied, the parts dropped (their live bytes gone). */
Test(bigval, malformed_layouts_are_refused_whole)
{
    char *a = bytes('a', 1000);
    sh_canonical_only = 0;
    uint64_t live0 = store_live_total(ctx);
    const unsigned char *argv[4] = {(const unsigned char *)"x", (const unsigned char *)"",
                                    (const unsigned char *)"y", (const unsigned char *)""};
    uint32_t lens[4] = {1, 0, 1, 0};
    const lv_t cases[][2] = {
        {{0, 1, 0, 600}, {0, 3, 500, 500}}, /* overlapping */
        {{0, 3, 600, 400}, {0, 1, 0, 600}}, /* out of the group's order */
        {{0, 1, 0, 600}, {0, 3, 600, 401}}, /* past the group's end */
        {{0, 1, 0, 600}, {0, 1, 600, 400}}, /* one argument twice */
        {{0, 1, 0, 600}, {0, 2, 600, 400}}, /* a key */
        {{0, 1, 0, 600}, {1, 3, 600, 400}}, /* a payload a plain final has not */
        {{0, 1, 0, 0}, {0, 3, 0, 1000}},    /* an empty value */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        uint64_t g = chunk(0, 0, a, 1000);
        cr_assert_str_eq(final_vals(g, cases[i], 2, CMD_MSET, 4, argv, lens),
                         "-ERR the store cannot apply this record\r\n", "case %zu", i);
        cr_assert_str_eq(get("x"), "$-1\r\n", "case %zu", i);
        cr_assert_eq(store_live_total(ctx), live0, "case %zu", i);
    }
    /* A value whose argument is not empty. */
    argv[3] = (const unsigned char *)"v";
    lens[3] = 1;
    uint64_t g = chunk(0, 0, a, 1000);
    lv_t full[2] = {{0, 1, 0, 500}, {0, 3, 500, 500}};
    cr_assert_str_eq(final_vals(g, full, 2, CMD_MSET, 4, argv, lens),
                     "-ERR the store cannot apply this record\r\n");
    cr_assert_eq(store_live_total(ctx), live0);
    cr_assert(store_live_verify(ctx));
    sh_check_replay("refused layouts");
    free(a);
}

/* A transaction's payloads, for a final nesting CMD_EXEC: the header
 * (watch point, nwatch, flags), watched keys, then commands. */
typedef struct tx {
    unsigned char hdr[24];
    const unsigned char *argv[16];
    uint32_t lens[16];
    unsigned char *own[16];
    uint16_t argc;
} tx_t;

static void tx_begin(tx_t *t, uint64_t watch_lsn, uint32_t nwatch)
{
    memset(t, 0, sizeof(*t));
    cmd_put_i64(t->hdr, (int64_t)watch_lsn);
    cmd_put_i64(t->hdr + 8, T0);
    cmd_put_u32(t->hdr + 16, nwatch);
    t->argv[0] = t->hdr;
    t->lens[0] = 24;
    t->argc = 1;
}

static void tx_raw(tx_t *t, const void *p, size_t n)
{
    unsigned char *c = malloc(n + 1);
    memcpy(c, p, n);
    t->own[t->argc] = c;
    t->argv[t->argc] = c;
    t->lens[t->argc++] = (uint32_t)n;
}

/* A nested command op with the arguments of sh_collect. */
static void tx_cmd(tx_t *t, uint16_t op, ...)
{
    sh_args_t a;
    va_list ap;
    va_start(ap, op);
    sh_collect(&a, ap);
    va_end(ap);
    size_t n = rec_cmd_payload_size(a.argc, a.lens);
    unsigned char *p = malloc(n);
    rec_encode_payload(p, op, a.argc, a.argv, a.lens);
    tx_raw(t, p, n);
    free(p);
}

static const char *tx_final(tx_t *t, uint64_t group, const lv_t *v, int nv)
{
    const char *r = final_vals(group, v, nv, CMD_EXEC, t->argc, t->argv, t->lens);
    for (int i = 0; i < t->argc; i++)
        free(t->own[i]);
    return r;
}

/* A transaction nested in a final (D58): SET and HSET take their large
 * values from the group, SADD a large member and a read (SISMEMBER) its
 * large argument; a literal and a plain command go between; the whole is
 * applied in one step, in order. */
Test(bigval, a_transaction_takes_its_values_from_the_group)
{
    char *a = bytes('a', 1200), *b = bytes('b', 800);
    sh_wr(T0, CMD_SADD, "s", "#i64:0", "x", NULL);
    uint64_t live0 = store_live_total(ctx), before = lsn;
    uint64_t g = chunk(0, 0, a, 1200);
    chunk(g, 1, b, 800);
    chunk(g, 2, a, 1200);
    chunk(g, 3, a, 1200);
    tx_t t;
    tx_begin(&t, 0, 0);
    tx_cmd(&t, CMD_SET, "k", "", "#u32:0", "#i64:0", NULL);       /* at 1 */
    tx_cmd(&t, CMD_LITERAL, "+PONG\r\n", NULL);                   /* at 2 */
    tx_cmd(&t, CMD_HSET, "h", "#i64:0", "#u32:0", "f", "", NULL); /* at 3 */
    tx_cmd(&t, CMD_SADD, "s", "#i64:0", "", NULL);                /* at 4 */
    tx_cmd(&t, CMD_SISMEMBER, "s", "", NULL);                     /* at 5 */
    tx_cmd(&t, CMD_STRLEN, "k", NULL);                            /* at 6 */
    lv_t v[4] = {{1, 1, 0, 1200}, {3, 4, 1200, 800}, {4, 2, 2000, 1200}, {5, 1, 3200, 1200}};
    cr_assert_str_eq(tx_final(&t, g, v, 4), "*6\r\n+OK\r\n+PONG\r\n:1\r\n:1\r\n:1\r\n:1200\r\n");
    char *wa = bulk_of(a, 1200), *wb = bulk_of(b, 800);
    cr_assert_str_eq(get("k"), wa);
    cr_assert_str_eq(sh_rd(T0, 0, CMD_HGET, "h", "f", NULL), wb);
    cr_assert_eq(store_live_total(ctx) - live0, 1200, "k's value only (the rest is RAM)");
    cr_assert(store_live_verify(ctx));

    /* WATCH k from before that transaction: the next one is aborted, its
     * parts dropped, nothing applied. */
    g = chunk(0, 0, b, 800);
    tx_begin(&t, before, 1);
    tx_raw(&t, "\0k", 2);
    tx_cmd(&t, CMD_SET, "k", "", "#u32:0", "#i64:0", NULL); /* at 2 */
    lv_t w[1] = {{2, 1, 0, 800}};
    cr_assert_str_eq(tx_final(&t, g, w, 1), "*-1\r\n");
    cr_assert_str_eq(get("k"), wa, "the aborted transaction changed nothing");
    cr_assert_eq(store_live_total(ctx) - live0, 1200, "its parts were dropped");

    /* Values aimed at what cannot take one: refused whole. */
    sh_canonical_only = 0;
    const char *bad = "-ERR the store cannot apply this transaction record\r\n";
    const lv_t cases[][2] = {
        {{1, 1, 0, 400}, {2, 0, 400, 400}}, /* a literal */
        {{1, 1, 0, 400}, {1, 0, 400, 400}}, /* the SET's key */
        {{1, 1, 0, 400}, {3, 1, 400, 400}}, /* past the commands */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        g = chunk(0, 0, b, 800);
        tx_begin(&t, 0, 0);
        tx_cmd(&t, CMD_SET, "k", "", "#u32:0", "#i64:0", NULL);
        tx_cmd(&t, CMD_LITERAL, "+OK\r\n", NULL);
        cr_assert_str_eq(tx_final(&t, g, cases[i], 2), bad, "case %zu", i);
        cr_assert_str_eq(get("k"), wa, "case %zu", i);
        cr_assert_eq(store_live_total(ctx) - live0, 1200, "case %zu", i);
    }
    /* The watched key's slot (nwatch 1: argument 1 is the key). */
    g = chunk(0, 0, b, 800);
    tx_begin(&t, lsn, 1);
    tx_raw(&t, "\0k", 2);
    tx_cmd(&t, CMD_SET, "k", "", "#u32:0", "#i64:0", NULL);
    lv_t wk[1] = {{1, 0, 0, 800}};
    cr_assert_str_eq(tx_final(&t, g, wk, 1), bad);
    cr_assert_str_eq(get("k"), wa);
    cr_assert(store_live_verify(ctx));
    sh_check_replay("transactions with large values");
    free(wa);
    free(wb);
    free(a);
    free(b);
}

/* Keyspace events of large writes: each tells what its write tells at
 * any size (Redis' "set", "hset", "rpush"), in a plain final as in a
 * transaction's. */
static char events[512];

static void collect(void *arg, const char *chan, size_t clen, const char *msg, size_t mlen)
{
    (void)arg;
    size_t n = strlen(events);
    snprintf(events + n, sizeof(events) - n, "%.*s=%.*s;", (int)clen, chan, (int)mlen, msg);
}

Test(bigval, large_writes_tell_their_keyspace_events)
{
    store_set_notify_out(ctx, collect, NULL);
    store_set_notify_flags(ctx, PS_NOTIFY_KEYEVENT | PS_NOTIFY_ALL);
    char *a = bytes('a', 700);
    uint64_t g = chunk(0, 0, a, 700);
    cr_assert_str_eq(final(g, CMD_SET, "k", 0), "+OK\r\n");
    cr_assert_str_eq(events, "__keyevent@0__:set=k;");
    events[0] = 0;
    const unsigned char *e = (const unsigned char *)"";
    const unsigned char *margv[4] = {(const unsigned char *)"x", e, (const unsigned char *)"y", e};
    uint32_t mlens[4] = {1, 0, 1, 0};
    g = chunk(0, 0, a, 700);
    chunk(g, 1, a, 700);
    lv_t mv[2] = {{0, 1, 0, 700}, {0, 3, 700, 700}};
    cr_assert_str_eq(final_vals(g, mv, 2, CMD_MSET, 4, margv, mlens), "+OK\r\n");
    cr_assert_str_eq(events, "__keyevent@0__:set=x;__keyevent@0__:set=y;");
    events[0] = 0;
    unsigned char mode[4];
    cmd_put_u32(mode, 1); /* RPUSH */
    const unsigned char *largv[3] = {(const unsigned char *)"l", mode, e};
    uint32_t llens[3] = {1, 4, 0};
    g = chunk(0, 0, a, 700);
    cr_assert_str_eq(final_of(g, 2, CMD_LPUSH, 3, largv, llens), ":1\r\n");
    cr_assert_str_eq(events, "__keyevent@0__:rpush=l;");
    events[0] = 0;
    g = chunk(0, 0, a, 700);
    tx_t t;
    tx_begin(&t, 0, 0);
    tx_cmd(&t, CMD_SET, "k2", "", "#u32:0", "#i64:0", NULL);
    lv_t tv[1] = {{1, 1, 0, 700}};
    cr_assert_str_eq(tx_final(&t, g, tv, 1), "*1\r\n+OK\r\n");
    cr_assert_str_eq(events, "__keyevent@0__:set=k2;");
    free(a);
}

/* ---- pending groups in a checkpoint (D55) ------------------------------- */

/* Load the checkpoint at `at` into a fresh context (fails when refused). */
static store_ctx_t *load_ckpt(uint64_t at)
{
    char path[512], err[256];
    ckpt_path(path, sizeof(path), dir, at, 0);
    store_ctx_t *c = store_ctx_create(&cfg, 77);
    cr_assert(c);
    cr_assert_eq(store_ckpt_load(c, path, err, sizeof(err)), 0, "load %s: %s", path, err);
    return c;
}

static void abort_group(uint64_t g)
{
    unsigned char id[8];
    cmd_put_i64(id, (int64_t)g);
    const unsigned char *argv[1] = {id};
    uint32_t lens[1] = {8};
    sh_put(T0, CMD_BIGABORT, 1, argv, lens);
}

/* ctx and c hold the same groups: ids, owners, next seqs, pieces. */
static void expect_same_groups(const store_ctx_t *c, const char *what)
{
    cr_assert_eq(c->groups.n, ctx->groups.n, "%s: pending groups", what);
    for (uint32_t i = 0; i < ctx->groups.n; i++) {
        const st_group_t *a = &ctx->groups.g[i], *b = &c->groups.g[i];
        cr_assert_eq(a->id, b->id, "%s: group %u", what, i);
        cr_assert_eq(a->owner, b->owner, "%s: owner", what);
        cr_assert_eq(a->next_seq, b->next_seq, "%s: next seq", what);
        cr_assert_eq(a->l->n, b->l->n, "%s: pieces", what);
        cr_assert_eq(a->l->cap, b->l->cap, "%s: capacity", what);
        cr_assert(memcmp(a->l->p, b->l->p, a->l->n * sizeof(st_piece_t)) == 0, "%s: pieces", what);
    }
    cr_assert_eq(c->live.total, ctx->live.total, "%s: the pending parts are counted live", what);
}

/* Three groups pending at the checkpoint (a SET of three parts, an APPEND
 * of one, one the log then aborts) and one opened after it: loading it and
 * replaying the log after it gives the state, the replies and the live
 * bytes a replay of the whole log gives. */
Test(bigval, pending_groups_round_trip_through_a_checkpoint)
{
    char *a = bytes('a', 1000), *b = bytes('b', 2000), *c = bytes('c', 500);
    sh_put_key(T0, CMD_SET, "app", "bui", "0123456789", (size_t)10, 0u, (int64_t)0);
    uint64_t g1 = chunk(0, 0, a, 1000);
    uint64_t g2 = chunk(0, 0, b, 2000);
    chunk(g1, 1, b, 2000);
    uint64_t g3 = chunk(0, 0, c, 500);
    uint64_t at = lsn;
    cr_assert_eq(store_ckpt_save(ctx, dir), 0);
    char path[512];
    ckpt_path(path, sizeof(path), dir, at, 0);
    ckpt_info_t info;
    char err[256];
    cr_assert_eq(ckpt_verify(path, 0, &info, NULL, err, sizeof(err)), 0, "%s", err);
    cr_assert(info.flags & CKPT_F_GROUPS, "the header says groups are pending");
    store_ctx_t *loaded = load_ckpt(at);
    expect_same_groups(loaded, "loaded");
    /* The log after it: g1 goes on and completes, g2 completes, g3 is
     * aborted, g4 opens and stays pending. */
    chunk(g1, 2, c, 500);
    cr_assert_str_eq(final(g1, CMD_SET, "k", 0), "+OK\r\n");
    cr_assert_str_eq(final(g2, CMD_APPEND, "app", 0), ":2010\r\n");
    abort_group(g3);
    chunk(0, 0, a, 1000);
    buf_t tail;
    buf_init(&tail);
    sh_replay_from(loaded, at, &tail);
    expect_same_groups(loaded, "after the tail");
    uint64_t d0, d1;
    cr_assert_eq(store_digest(ctx, T0, &d0), 0);
    cr_assert_eq(store_digest(loaded, T0, &d1), 0);
    cr_assert_eq(d0, d1, "checkpoint + tail = the live state");
    cr_assert(store_live_verify(loaded));
    /* The tail's replies are the live ones for those records. */
    cr_assert_geq(live_replies.len, tail.len);
    cr_assert(memcmp(live_replies.data + live_replies.len - tail.len, tail.data, tail.len) == 0,
              "the tail's replies: %.*s", (int)tail.len, tail.data);
    char *want = bulk(a, b, c);
    store_ctx_t *live = ctx;
    ctx = loaded;
    cr_assert_str_eq(get("k"), want, "the value whose first parts were in the checkpoint");
    ctx = live;
    sh_check_replay("groups across a checkpoint");
    buf_free(&tail);
    store_ctx_destroy(loaded);
    free(want);
    free(a);
    free(b);
    free(c);
}

/* No group pending: no flag and no GROUPS block, the file as before D55
 * (which is what an older checkpoint is), and it loads. */
Test(bigval, no_pending_group_writes_no_groups_block)
{
    char *a = bytes('a', 1000);
    uint64_t g = chunk(0, 0, a, 1000);
    cr_assert_str_eq(final(g, CMD_SET, "k", 0), "+OK\r\n");
    uint64_t at = lsn;
    cr_assert_eq(store_ckpt_save(ctx, dir), 0);
    char path[512];
    ckpt_path(path, sizeof(path), dir, at, 0);
    ckpt_reader_t r;
    cr_assert_eq(ckpt_reader_open(&r, path, 0), 0);
    cr_assert(!(r.info.flags & CKPT_F_GROUPS));
    uint32_t type, items;
    const unsigned char *p;
    uint64_t n;
    int k;
    while ((k = ckpt_reader_next(&r, &type, &items, &p, &n)) == 1)
        cr_assert_neq(type, CKPT_BLK_GROUPS);
    cr_assert_eq(k, 0, "%s", r.err);
    ckpt_reader_close(&r);
    store_ctx_t *c = load_ckpt(at);
    cr_assert_eq(c->groups.n, 0);
    store_ctx_destroy(c);
    free(a);
}

/* The checkpoint at `at` written again with its GROUPS block's payload
 * replaced by p[0, n) of `items` items (none: no block), placed before
 * the access data (where 0), first (1) or last (2), its header's flags
 * less `drop`: CRCs right, contents not. */
static void rewrite_groups(uint64_t at, const void *gp, size_t gn, uint32_t gitems, int where,
                           uint32_t drop)
{
    char path[512];
    ckpt_path(path, sizeof(path), dir, at, 0);
    ckpt_reader_t r;
    cr_assert_eq(ckpt_reader_open(&r, path, 0), 0);
    ckpt_info_t info = r.info;
    info.flags &= ~drop;
    buf_t blocks; /* per block: u32 type, u32 items, u64 n, bytes */
    buf_init(&blocks);
    uint32_t type, items;
    const unsigned char *p;
    uint64_t n;
    int k;
    while ((k = ckpt_reader_next(&r, &type, &items, &p, &n)) == 1) {
        if (type == CKPT_BLK_GROUPS) continue;
        buf_append(&blocks, &type, 4);
        buf_append(&blocks, &items, 4);
        buf_append(&blocks, &n, 8);
        buf_append(&blocks, p, (size_t)n);
    }
    cr_assert_eq(k, 0, "%s", r.err);
    ckpt_reader_close(&r);
    ckpt_writer_t w;
    cr_assert_eq(ckpt_writer_open(&w, dir, &info), 0);
    int put = !gitems;
    for (size_t off = 0; off <= blocks.len;) {
        int end = off == blocks.len;
        if (!end) {
            memcpy(&type, blocks.data + off, 4);
            memcpy(&items, blocks.data + off + 4, 4);
            memcpy(&n, blocks.data + off + 8, 8);
        }
        if (!put && (where == 1 || (where == 0 && type == CKPT_BLK_ACCESS) || end)) {
            ckpt_put(&w, CKPT_BLK_GROUPS, gp, gn);
            for (uint32_t i = 0; i < gitems; i++)
                cr_assert_eq(ckpt_item_done(&w), 0);
            cr_assert_eq(ckpt_flush_block(&w), 0);
            put = 1;
        }
        if (end) break;
        ckpt_put(&w, type, blocks.data + off + 16, (size_t)n);
        for (uint32_t i = 0; i < items; i++)
            cr_assert_eq(ckpt_item_done(&w), 0);
        cr_assert_eq(ckpt_flush_block(&w), 0);
        off += 16 + (size_t)n;
    }
    cr_assert(type == CKPT_BLK_ACCESS, "the checkpoint has access data, last");
    cr_assert_eq(ckpt_writer_commit(&w), 0);
    buf_free(&blocks);
}

static void expect_refused(uint64_t at, const char *why)
{
    char path[512], err[256];
    ckpt_path(path, sizeof(path), dir, at, 0);
    cr_assert_eq(ckpt_verify(path, 0, NULL, NULL, err, sizeof(err)), 0, "its CRCs are right");
    store_ctx_t *c = store_ctx_create(&cfg, 77);
    cr_assert_eq(store_ckpt_load(c, path, err, sizeof(err)), -1, "%s", why);
    cr_assert(strstr(err, "malformed value groups"), "%s: %s", why, err);
    store_ctx_destroy(c);
}

/* One GROUPS item: group id, owner, next seq, capacity, then np pieces of
 * (end, kind, lsn). Returns its size. */
static size_t group_item(unsigned char *b, uint64_t id, uint32_t next_seq, uint32_t cap,
                         uint32_t np, const uint64_t (*pieces)[3])
{
    uint64_t owner = (uint64_t)OWNER;
    uint32_t h[3] = {next_seq, np, cap};
    memcpy(b, &id, 8);
    memcpy(b + 8, &owner, 8);
    memcpy(b + 16, h, 12);
    size_t at = 28;
    for (uint32_t i = 0; i < np; i++) {
        uint64_t endw = pieces[i][0] | pieces[i][1] << PIECE_KIND_SHIFT;
        memcpy(b + at, &endw, 8);
        memcpy(b + at + 8, &pieces[i][2], 8);
        at += 16;
    }
    return at;
}

Test(bigval, malformed_or_truncated_groups_are_refused)
{
    /* A checkpoint with a key (so it has access data) and a pending
     * group, whose block the cases replace. */
    char *a = bytes('a', 1000);
    sh_put_key(T0, CMD_SET, "k", "bui", "v", (size_t)1, 0u, (int64_t)0);
    uint64_t g = chunk(0, 0, a, 1000);
    chunk(g, 1, a, 1000);
    uint64_t at = lsn;
    cr_assert_eq(store_ckpt_save(ctx, dir), 0);
    uint32_t flags = 0;
    const st_piece_t *lp = ctx->groups.g[0].l->p;
    uint64_t ok[2][3] = {{1000, PIECE_LOG, lp[0].where}, {2000, PIECE_LOG, lp[1].where}};
    unsigned char b[256];
    size_t n = group_item(b, g, 2, 4, 2, (const uint64_t(*)[3])ok);
    /* The control: the same bytes, rewritten, load. */
    rewrite_groups(at, b, n, 1, 0, flags);
    store_ctx_t *c = load_ckpt(at);
    expect_same_groups(c, "rewritten");
    store_ctx_destroy(c);

    rewrite_groups(at, b, n - 1, 1, 0, flags);
    expect_refused(at, "an item cut short");
    rewrite_groups(at, b, 20, 1, 0, flags);
    expect_refused(at, "an item cut inside its header");
    b[n] = 0;
    rewrite_groups(at, b, n + 1, 1, 0, flags);
    expect_refused(at, "a byte after the last item");
    rewrite_groups(at, b, n, 1, 1, flags);
    expect_refused(at, "the block before the databases");
    rewrite_groups(at, b, n, 1, 2, flags);
    expect_refused(at, "the block after the access data");
    unsigned char two[512];
    memcpy(two, b, n);
    memcpy(two + n, b, n);
    rewrite_groups(at, two, 2 * n, 2, 0, flags);
    expect_refused(at, "one group twice");

    uint64_t bad[2][3];
    memcpy(bad, ok, sizeof(bad));
    bad[1][2] = at; /* the second piece ends past the checkpoint */
    rewrite_groups(at, b, group_item(b, g, 2, 4, 2, (const uint64_t(*)[3])bad), 1, 0, flags);
    expect_refused(at, "a piece past the checkpoint");
    memcpy(bad, ok, sizeof(bad));
    bad[1][1] = PIECE_ZERO;
    rewrite_groups(at, b, group_item(b, g, 2, 4, 2, (const uint64_t(*)[3])bad), 1, 0, flags);
    expect_refused(at, "a piece that is not in the log");
    memcpy(bad, ok, sizeof(bad));
    bad[1][0] = 1000; /* empty */
    rewrite_groups(at, b, group_item(b, g, 2, 4, 2, (const uint64_t(*)[3])bad), 1, 0, flags);
    expect_refused(at, "an empty piece");
    rewrite_groups(at, b, group_item(b, g, 2, 4, 0, (const uint64_t(*)[3])ok), 1, 0, flags);
    expect_refused(at, "a group of no piece");
    rewrite_groups(at, b, group_item(b, g, 1, 4, 2, (const uint64_t(*)[3])ok), 1, 0, flags);
    expect_refused(at, "more pieces than chunks");
    rewrite_groups(at, b, group_item(b, g, 2, 1, 2, (const uint64_t(*)[3])ok), 1, 0, flags);
    expect_refused(at, "a capacity below the pieces");
    rewrite_groups(at, b, group_item(b, lp[0].where + 1, 2, 4, 2, (const uint64_t(*)[3])ok), 1, 0,
                   flags);
    expect_refused(at, "an id after its first part");
    rewrite_groups(at, NULL, 0, 0, 0, flags);
    expect_refused(at, "the flag without the block");
    rewrite_groups(at, b, group_item(b, g, 2, 4, 2, (const uint64_t(*)[3])ok), 1, 0, CKPT_F_GROUPS);
    expect_refused(at, "the block without the flag");

    /* A file cut inside the block does not verify: restore skips it and
     * replays the whole log, reaching the same groups. */
    rewrite_groups(at, b, n, 1, 0, flags);
    char path[512], err[256];
    ckpt_path(path, sizeof(path), dir, at, 0);
    struct stat st;
    cr_assert_eq(stat(path, &st), 0);
    off_t cut = 0;
    {
        /* The offset of the GROUPS payload: find the item's bytes. */
        FILE *f = fopen(path, "rb");
        cr_assert_not_null(f);
        unsigned char *all = malloc((size_t)st.st_size);
        cr_assert_eq(fread(all, 1, (size_t)st.st_size, f), (size_t)st.st_size);
        fclose(f);
        for (off_t i = 0; i + (off_t)n <= st.st_size && !cut; i++)
            if (memcmp(all + i, b, n) == 0) cut = i + (off_t)n / 2;
        free(all);
    }
    cr_assert_gt(cut, 0, "the item is in the file");
    cr_assert_eq(truncate(path, cut), 0);
    cr_assert_eq(ckpt_verify(path, 0, NULL, NULL, err, sizeof(err)), -1, "a truncated file");
    uint64_t from = 0;
    c = store_ckpt_restore(&cfg, 5, 0, lsn, &from);
    cr_assert_not_null(c);
    cr_assert_eq(from, 0, "the whole log is replayed");
    sh_replay_from(c, from, NULL);
    expect_same_groups(c, "replayed after the truncated checkpoint");
    store_ctx_destroy(c);
    free(a);
}
