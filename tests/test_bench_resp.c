/*
 * test_bench_resp.c - unit tests of atticdb-bench's RESP2 client side: the
 * request encoder and the reply framer, including partial and malformed
 * input (the framer must say "need more" or "error", never read past len).
 */
#include <criterion/criterion.h>
#include <string.h>

#include "bench_resp.h"

static int scan(const char *s, size_t *used, int *kind)
{
    return bench_resp_scan(s, strlen(s), used, kind);
}

Test(bench_resp, encodes_multibulk)
{
    bench_buf_t b = {0};
    const char *argv[] = {"SET", "k", "hello"};
    size_t lens[] = {3, 1, 5};
    cr_assert_eq(bench_resp_append_cmd(&b, 3, argv, lens), 0);
    const char *want = "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\nhello\r\n";
    cr_assert_eq(b.len, strlen(want));
    cr_assert_eq(memcmp(b.data, want, b.len), 0);
    bench_buf_free(&b);
}

Test(bench_resp, simple_replies)
{
    size_t used;
    int kind;
    cr_assert_eq(scan("+OK\r\n", &used, &kind), 1);
    cr_assert_eq(used, 5);
    cr_assert_eq(kind, BENCH_REPLY_VALUE);
    cr_assert_eq(scan(":42\r\n", &used, &kind), 1);
    cr_assert_eq(kind, BENCH_REPLY_VALUE);
    cr_assert_eq(scan("-ERR nope\r\n", &used, &kind), 1);
    cr_assert_eq(kind, BENCH_REPLY_ERROR);
    cr_assert_eq(scan("$-1\r\n", &used, &kind), 1);
    cr_assert_eq(kind, BENCH_REPLY_NIL);
    cr_assert_eq(scan("*-1\r\n", &used, &kind), 1);
    cr_assert_eq(kind, BENCH_REPLY_NIL);
}

Test(bench_resp, bulk_and_nested_arrays)
{
    size_t used;
    int kind;
    cr_assert_eq(scan("$5\r\nhello\r\n", &used, &kind), 1);
    cr_assert_eq(used, 11);
    cr_assert_eq(scan("$0\r\n\r\n", &used, &kind), 1);
    cr_assert_eq(used, 6);
    const char *arr = "*2\r\n$1\r\na\r\n*2\r\n:1\r\n-ERR x\r\n";
    cr_assert_eq(scan(arr, &used, &kind), 1);
    cr_assert_eq(used, strlen(arr));
    cr_assert_eq(kind, BENCH_REPLY_VALUE);
    cr_assert_eq(scan("*0\r\n", &used, &kind), 1);
}

Test(bench_resp, every_prefix_needs_more)
{
    const char *full = "*2\r\n$5\r\nhello\r\n:123\r\n";
    size_t n = strlen(full), used;
    int kind;
    for (size_t i = 0; i < n; i++)
        cr_assert_eq(bench_resp_scan(full, i, &used, &kind), 0, "len %zu", i);
    cr_assert_eq(bench_resp_scan(full, n, &used, &kind), 1);
    cr_assert_eq(used, n);
}

Test(bench_resp, reports_only_first_reply)
{
    size_t used;
    int kind;
    cr_assert_eq(scan("+OK\r\n+OK\r\n", &used, &kind), 1);
    cr_assert_eq(used, 5);
}

Test(bench_resp, malformed_is_error)
{
    size_t used;
    int kind;
    cr_assert_eq(scan("?\r\n", &used, &kind), -1);
    cr_assert_eq(scan("$abc\r\n", &used, &kind), -1);
    cr_assert_eq(scan("$-2\r\n", &used, &kind), -1);
    cr_assert_eq(scan("$3\r\nabcde\r\n", &used, &kind), -1);
    cr_assert_eq(scan("*1\r\n?\r\n", &used, &kind), -1);
    cr_assert_eq(scan(":\r\n", &used, &kind), -1);
    cr_assert_eq(scan("$99999999999999999999999\r\n", &used, &kind), -1);
    /* 17 nested arrays exceed the depth limit. */
    char deep[128] = "";
    for (int i = 0; i < 18; i++)
        strcat(deep, "*1\r\n");
    strcat(deep, ":1\r\n");
    cr_assert_eq(scan(deep, &used, &kind), -1);
}
