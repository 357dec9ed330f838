/*
 * test_resp_reply.c - unit tests for the reply side of the RESP codec
 * (common/resp.c) and the byte buffer it writes into (common/buf.c): the
 * RESP2 writers (exact bytes, integers as printf prints them, a 1 MB bulk
 * read back by the parser), the RESP3 writers in both protocols, the
 * conversions between RESP2 and RESP3 replies (and random bytes that must
 * not crash them), and buf itself. The parser is tested in test_resp.c.
 */
#include <criterion/criterion.h>

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "resp.h"
#include "resp_helpers.h"

/* ------------------------------------------------------------------------ */
/* Reply writers                                                            */

static void expect_buf(const buf_t *b, const char *want, size_t n)
{
    cr_assert_eq(b->len, n, "len %zu, want %zu: %.*s", b->len, n, (int)b->len, b->data);
    cr_assert(memcmp(b->data, want, n) == 0, "got %.*s want %.*s", (int)b->len, b->data, (int)n,
              want);
}

#define EXPECT_BUF(b, str) expect_buf(b, str, sizeof(str) - 1)

Test(writers, simple_and_error)
{
    buf_t b;
    buf_init(&b);
    resp_simple(&b, "OK");
    EXPECT_BUF(&b, "+OK\r\n");
    buf_reset(&b);
    resp_simple(&b, "");
    EXPECT_BUF(&b, "+\r\n");
    buf_reset(&b);
    resp_error(&b, "ERR unknown command 'FOO'");
    EXPECT_BUF(&b, "-ERR unknown command 'FOO'\r\n");
    buf_reset(&b);
    resp_error(&b, "ERR a\r\nb\nc");
    EXPECT_BUF(&b, "-ERR a  b c\r\n");
    buf_reset(&b);
    resp_simple(&b, "x\ry");
    EXPECT_BUF(&b, "+x y\r\n");
    buf_free(&b);
}

Test(writers, integer)
{
    buf_t b;
    buf_init(&b);
    resp_integer(&b, 0);
    resp_integer(&b, 1);
    resp_integer(&b, -1);
    resp_integer(&b, 9);
    resp_integer(&b, 10);
    resp_integer(&b, 99);
    resp_integer(&b, 100);
    resp_integer(&b, -12345);
    resp_integer(&b, LLONG_MAX);
    resp_integer(&b, LLONG_MIN);
    EXPECT_BUF(&b, ":0\r\n:1\r\n:-1\r\n:9\r\n:10\r\n:99\r\n:100\r\n:-12345\r\n"
                   ":9223372036854775807\r\n:-9223372036854775808\r\n");
    buf_free(&b);
}

Test(writers, integer_matches_printf)
{
    buf_t b;
    buf_init(&b);
    rng_state = 42;
    for (int i = 0; i < 200000; i++) {
        long long v;
        uint64_t r = rng();
        switch (i % 4) {
        case 0:
            v = (long long)r;
            break;
        case 1:
            v = (long long)(r % 1000) - 500;
            break;
        case 2:
            v = (long long)(r >> (r % 64));
            break;
        default: {
            /* Powers of ten and their neighbours. */
            long long p = 1;
            for (int e = (int)(r % 19); e > 0; e--)
                p *= 10;
            v = p + (long long)(r % 3) - 1;
            if (r & 64) v = -v;
        }
        }
        char want[32];
        int n = snprintf(want, sizeof(want), ":%lld\r\n", v);
        buf_reset(&b);
        resp_integer(&b, v);
        expect_buf(&b, want, (size_t)n);
    }
    buf_free(&b);
}

Test(writers, bulk_null_array)
{
    buf_t b;
    buf_init(&b);
    resp_bulk(&b, "hello", 5);
    EXPECT_BUF(&b, "$5\r\nhello\r\n");
    buf_reset(&b);
    resp_bulk(&b, NULL, 0);
    EXPECT_BUF(&b, "$0\r\n\r\n");
    buf_reset(&b);
    resp_bulk(&b, "a\0\r\n", 4);
    EXPECT_BUF(&b, "$4\r\na\0\r\n\r\n");
    buf_reset(&b);
    resp_bulk_cstr(&b, "foo");
    resp_bulk_cstr(&b, "");
    resp_bulk_cstr(&b, NULL);
    EXPECT_BUF(&b, "$3\r\nfoo\r\n$0\r\n\r\n$-1\r\n");
    buf_reset(&b);
    resp_null(&b);
    resp_null_array(&b);
    resp_array(&b, 0);
    resp_array(&b, 3);
    resp_array(&b, -1);
    resp_array(&b, 1234567);
    EXPECT_BUF(&b, "$-1\r\n*-1\r\n*0\r\n*3\r\n*-1\r\n*1234567\r\n");
    buf_reset(&b);
    resp_bulk_header(&b, 0);
    resp_bulk_header(&b, 300);
    resp_bulk_header(&b, SIZE_MAX);
    EXPECT_BUF(&b, "$0\r\n$300\r\n$18446744073709551615\r\n");
    buf_free(&b);
}

Test(writers, big_bulk_and_round_trip)
{
    /* What the writers produce, the parser reads back. */
    buf_t b;
    buf_init(&b);
    size_t n = 1 << 20;
    char *big = malloc(n);
    for (size_t i = 0; i < n; i++)
        big[i] = (char)(i * 7);
    resp_array(&b, 2);
    resp_bulk_cstr(&b, "SET");
    resp_bulk(&b, big, n);
    resp_cmd_t cmd;
    resp_cmd_init(&cmd);
    cr_assert_eq(resp_parse(&default_limits, b.data, b.len, &cmd, NULL, NULL), (int64_t)b.len);
    cr_assert_eq(cmd.argc, 2);
    cr_assert_eq(cmd.args[1].len, n);
    cr_assert(memcmp(resp_arg_ptr(&cmd, b.data, 1), big, n) == 0);
    resp_cmd_free(&cmd);
    free(big);
    buf_free(&b);
}

/* ------------------------------------------------------------------------ */
/* RESP3 writers and conversions                                            */

Test(resp3, writers_in_both_protocols)
{
    buf_t b;
    buf_init(&b);
    resp_map(&b, 3, 2);
    resp_map(&b, 2, 2);
    resp_set(&b, 3, 1);
    resp_set(&b, 2, 1);
    resp_push(&b, 3, 3);
    resp_push(&b, 2, 3);
    EXPECT_BUF(&b, "%2\r\n*4\r\n~1\r\n*1\r\n>3\r\n*3\r\n");
    buf_reset(&b);
    resp_null3(&b, 3);
    resp_null3(&b, 2);
    resp_null_array3(&b, 3);
    resp_null_array3(&b, 2);
    EXPECT_BUF(&b, "_\r\n$-1\r\n_\r\n*-1\r\n");
    buf_reset(&b);
    resp_bool(&b, 3, 1);
    resp_bool(&b, 3, 0);
    resp_bool(&b, 2, 1);
    resp_bool(&b, 2, 0);
    EXPECT_BUF(&b, "#t\r\n#f\r\n:1\r\n:0\r\n");
    buf_reset(&b);
    resp_double(&b, 3, 1.5);
    resp_double(&b, 2, 1.5);
    resp_double(&b, 3, 0.1);
    resp_double(&b, 3, -1.0 / 0.0);
    resp_double(&b, 2, 1.0 / 0.0);
    EXPECT_BUF(&b, ",1.5\r\n$3\r\n1.5\r\n,0.10000000000000001\r\n,-inf\r\n$3\r\ninf\r\n");
    buf_reset(&b);
    resp_verbatim(&b, 3, "txt", "a\r\nb", 4);
    resp_verbatim(&b, 2, "txt", "a\r\nb", 4);
    EXPECT_BUF(&b, "=8\r\ntxt:a\r\nb\r\n$4\r\na\r\nb\r\n");
    buf_free(&b);
}

/* resp3_from_resp2 on s: expect rc and, when rc is 1, the output want. */
static void expect_up(const char *s, size_t n, int rc, const char *want, size_t wn)
{
    buf_t b;
    buf_init(&b);
    char *copy = exact_copy(s, n);
    int got = resp3_from_resp2(copy, n, &b);
    free(copy);
    cr_assert_eq(got, rc, "resp3_from_resp2(%.*s) = %d, want %d", (int)n, s, got, rc);
    if (rc == 1) {
        cr_assert_eq(b.len, wn, "output %.*s", (int)b.len, b.data);
        cr_assert(memcmp(b.data, want, wn) == 0, "output %.*s", (int)b.len, b.data);
    }
    if (rc == 0) cr_assert_eq(b.len, 0);
    buf_free(&b);
}
#define UP(s, rc, w) expect_up(s, sizeof(s) - 1, rc, w, sizeof(w) - 1)

Test(resp3, nulls_of_store_replies_become_resp3_nulls)
{
    UP("$-1\r\n", 1, "_\r\n");
    UP("*-1\r\n", 1, "_\r\n");
    UP("$3\r\nfoo\r\n", 0, "");
    UP("+OK\r\n", 0, "");
    UP(":12\r\n", 0, "");
    UP("-ERR x\r\n", 0, "");
    UP("*0\r\n", 0, "");
    UP("*2\r\n$1\r\na\r\n:1\r\n", 0, "");
    /* MGET with missing keys */
    UP("*3\r\n$1\r\na\r\n$-1\r\n$-1\r\n", 1, "*3\r\n$1\r\na\r\n_\r\n_\r\n");
    /* EXEC: nested arrays, a null array inside, a bulk whose bytes look
     * like a null */
    UP("*3\r\n*2\r\n$-1\r\n$5\r\n$-1\r\n\r\n*-1\r\n+OK\r\n", 1,
       "*3\r\n*2\r\n_\r\n$5\r\n$-1\r\n\r\n_\r\n+OK\r\n");
    /* EXEC: a list command's own RESP3 null and a set beside an MGET's
     * RESP2 nulls (only the latter change) */
    UP("*3\r\n_\r\n~1\r\n$1\r\nx\r\n*2\r\n$-1\r\n,1.5\r\n", 1,
       "*3\r\n_\r\n~1\r\n$1\r\nx\r\n*2\r\n_\r\n,1.5\r\n");
    UP("*2\r\n_\r\n#t\r\n", 0, "");
    /* malformed: truncated, trailing garbage, bad length, unknown type */
    UP("*2\r\n$1\r\na\r\n", -1, "");
    UP("*1\r\n$-1\r\nX", -1, "");
    UP("*1\r\n$5\r\nab\r\n", -1, "");
    UP("*1\r\n?x\r\n", -1, "");
    UP("*1\r\n$-2\r\n", -1, "");
}

static void expect_down(const char *s, size_t n, int rc, const char *want, size_t wn)
{
    buf_t b;
    buf_init(&b);
    char *copy = exact_copy(s, n);
    int got = resp3_to_resp2(copy, n, &b);
    free(copy);
    cr_assert_eq(got, rc, "resp3_to_resp2(%.*s) = %d", (int)n, s, got);
    if (rc == 0) {
        cr_assert_eq(b.len, wn, "output %.*s", (int)b.len, b.data);
        cr_assert(memcmp(b.data, want, wn) == 0, "output %.*s", (int)b.len, b.data);
    }
    buf_free(&b);
}
#define DOWN(s, rc, w) expect_down(s, sizeof(s) - 1, rc, w, sizeof(w) - 1)

Test(resp3, downgrade_to_resp2)
{
    DOWN("%2\r\n$1\r\na\r\n:1\r\n$1\r\nb\r\n~2\r\n+x\r\n+y\r\n", 0,
         "*4\r\n$1\r\na\r\n:1\r\n$1\r\nb\r\n*2\r\n+x\r\n+y\r\n");
    DOWN("_\r\n#t\r\n#f\r\n,1.5\r\n(123\r\n", 0, "$-1\r\n:1\r\n:0\r\n$3\r\n1.5\r\n$3\r\n123\r\n");
    DOWN("=7\r\ntxt:abc\r\n", 0, "$3\r\nabc\r\n");
    DOWN(">2\r\n$1\r\na\r\n*-1\r\n", 0, "*2\r\n$1\r\na\r\n*-1\r\n");
    DOWN("|1\r\n+k\r\n+v\r\n:5\r\n", 0, ":5\r\n");
    DOWN("%1\r\n$1\r\na\r\n", -1, "");
    DOWN("=2\r\nab\r\n", -1, "");
    /* the writers' RESP3 output, downgraded, is their RESP2 output */
    buf_t w3, w2, d;
    buf_init(&w3);
    buf_init(&w2);
    buf_init(&d);
    for (int proto = 2; proto <= 3; proto++) {
        buf_t *w = proto == 3 ? &w3 : &w2;
        resp_map(w, proto, 1);
        resp_bulk_cstr(w, "k");
        resp_set(w, proto, 2);
        resp_double(w, proto, 2.25);
        resp_bool(w, proto, 1);
        resp_verbatim(w, proto, "txt", "hello", 5);
        resp_null3(w, proto);
    }
    cr_assert_eq(resp3_to_resp2(w3.data, w3.len, &d), 0);
    cr_assert_eq(d.len, w2.len);
    cr_assert(memcmp(d.data, w2.data, d.len) == 0, "%.*s", (int)d.len, d.data);
    buf_free(&w3);
    buf_free(&w2);
    buf_free(&d);
}

Test(resp3, random_bytes_never_crash_the_converters)
{
    srand(12345);
    buf_t b;
    buf_init(&b);
    static const char alphabet[] = "*$%~_#,=:+-\r\n0123-1";
    for (int iter = 0; iter < 20000; iter++) {
        size_t n = (size_t)(rand() % 40);
        char *p = malloc(n ? n : 1);
        for (size_t i = 0; i < n; i++)
            p[i] = alphabet[rand() % (int)(sizeof(alphabet) - 1)];
        buf_reset(&b);
        int rc = resp3_from_resp2(p, n, &b);
        cr_assert(rc >= -1 && rc <= 1);
        buf_reset(&b);
        rc = resp3_to_resp2(p, n, &b);
        cr_assert(rc == 0 || rc == -1);
        free(p);
    }
    buf_free(&b);
}

/* ------------------------------------------------------------------------ */
/* buf                                                                      */

Test(buf, append_reserve_reset)
{
    buf_t b;
    buf_init(&b);
    cr_assert_null(b.data);
    cr_assert_eq(b.len, 0);
    buf_append(&b, NULL, 0); /* allowed, no-op */
    cr_assert_eq(b.len, 0);
    for (int i = 0; i < 100000; i++)
        buf_append(&b, "abc", 3);
    cr_assert_eq(b.len, 300000);
    cr_assert_geq(b.cap, b.len);
    for (size_t i = 0; i < b.len; i++)
        cr_assert_eq(b.data[i], "abc"[i % 3]);
    char *data = b.data;
    size_t cap = b.cap;
    buf_reset(&b);
    cr_assert_eq(b.len, 0);
    cr_assert_eq(b.data, data);
    cr_assert_eq(b.cap, cap);
    buf_reserve(&b, cap); /* fits already: no realloc */
    cr_assert_eq(b.data, data);
    buf_reserve(&b, cap + 1);
    cr_assert_geq(b.cap, cap + 1);
    buf_free(&b);
    cr_assert_null(b.data);
    cr_assert_eq(b.cap, 0);
}

Test(buf, appendf)
{
    buf_t b;
    buf_init(&b);
    buf_appendf(&b, "%s=%d", "x", 42); /* from an empty buffer */
    EXPECT_BUF(&b, "x=42");
    buf_appendf(&b, "%s", "");
    EXPECT_BUF(&b, "x=42");
    /* Exactly filling the remaining space, then overflowing it. */
    size_t room = b.cap - b.len;
    char *fill = malloc(room + 1);
    memset(fill, 'f', room);
    fill[room] = '\0';
    buf_appendf(&b, "%s", fill);
    cr_assert_eq(b.len, 4 + room);
    cr_assert_eq(b.data[b.len - 1], 'f');
    cr_assert_eq(b.data[3], '2');
    free(fill);
    char big[5000];
    memset(big, 'z', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    size_t before = b.len;
    buf_appendf(&b, "[%s]", big);
    cr_assert_eq(b.len, before + sizeof(big) + 1);
    cr_assert_eq(b.data[before], '[');
    cr_assert_eq(b.data[b.len - 1], ']');
    cr_assert_eq(b.data[b.len - 2], 'z');
    buf_free(&b);
}

Test(writers, error_clean_trims_line_ends_then_maps_the_rest)
{
    char a[] = "ERR Unsupported option x\r";
    cr_assert_eq(resp_error_clean(a), strlen("ERR Unsupported option x"));
    cr_assert_str_eq(a, "ERR Unsupported option x", "a trailing CR is dropped, as Redis trims");
    char b[] = "ERR a\r\nb\n\r\n";
    resp_error_clean(b);
    cr_assert_str_eq(b, "ERR a  b", "inner CR/LF become spaces, trailing ones go");
    char c[] = "\r\n";
    cr_assert_eq(resp_error_clean(c), 0);
}

/* resp_value_end: where each kind of value ends, nested ones and the
 * attribute before a value included; NULL for a value cut short or
 * malformed (errorstats walks EXEC's array with it). */
Test(resp3, value_end_of_every_kind)
{
    static const char *const whole[] = {
        "+OK\r\n",
        "-ERR x\r\n",
        ":12\r\n",
        "_\r\n",
        "#t\r\n",
        ",1.5\r\n",
        "(123\r\n",
        "$3\r\nabc\r\n",
        "$-1\r\n",
        "=7\r\ntxt:abc\r\n",
        "!3\r\nERR\r\n",
        "*-1\r\n",
        "*0\r\n",
        "*3\r\n:1\r\n$1\r\na\r\n*1\r\n-WRONGTYPE w\r\n",
        "%1\r\n+k\r\n~2\r\n:1\r\n:2\r\n",
        ">2\r\n+message\r\n$2\r\nhi\r\n",
        "|1\r\n+ttl\r\n:3\r\n$1\r\nv\r\n",
    };
    for (size_t i = 0; i < sizeof(whole) / sizeof(whole[0]); i++) {
        size_t n = strlen(whole[i]);
        char buf[128];
        memcpy(buf, whole[i], n);
        memcpy(buf + n, ":9\r\n", 4); /* the next value */
        cr_expect_eq(resp_value_end(buf, buf + n + 4), buf + n, "%s", whole[i]);
        for (size_t cut = 0; cut < n; cut++)
            cr_expect_null(resp_value_end(buf, buf + cut), "%s cut at %zu", whole[i], cut);
    }
    static const char *const bad[] = {"?x\r\n", "$x\r\nab\r\n", "*-2\r\n", "$-2\r\n"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        cr_expect_null(resp_value_end(bad[i], bad[i] + strlen(bad[i])), "%s", bad[i]);
}
