/*
 * test_resp.c - unit tests for the RESP parser (common/resp.c): multibulk
 * and inline commands, pipelines and splits at every byte, fuzzing, and a
 * loose speed bound. The writers, the RESP3 conversions and the byte buffer
 * are tested in test_resp_reply.c.
 *
 * What is pinned down here is Redis 7's server-side behaviour: the exact
 * protocol error texts, which inputs wait and which fail, and the quirks the
 * parser copies on purpose (see the banner of resp.c). The fuzz tests check
 * the parser's safety contract: no read outside [buf, buf + len) (every input
 * is in its own exact-size heap block, so run once under
 * -fsanitize=address,undefined), results within bounds, and "wait for *need
 * bytes, then parse again" giving the same answer as parsing all at once.
 */
#include <criterion/criterion.h>

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "buf.h"
#include "resp.h"
#include "resp_helpers.h"

/* ------------------------------------------------------------------------ */
/* Helpers                                                                  */

typedef struct parse_result {
    int64_t ret;
    const char *err;
    size_t need;
} parse_result_t;

static parse_result_t parse_with(const resp_limits_t *lim, resp_cmd_t *cmd, const char *s, size_t n)
{
    parse_result_t r = {0, NULL, 0};
    char *copy = exact_copy(s, n);
    r.ret = resp_parse(lim, copy, n, cmd, &r.err, &r.need);
    free(copy);
    return r;
}

/* Parse s (n bytes) with default limits and check that it is one command of
 * `used` bytes with the given arguments (NULL-terminated list of C strings,
 * or use expect_args_n for binary ones). */
static void expect_cmd(const char *s, size_t n, int64_t used, int argc, const char *const *argv)
{
    resp_cmd_t cmd;
    resp_cmd_init(&cmd);
    char *copy = exact_copy(s, n);
    const char *err = NULL;
    size_t need = 0;
    int64_t ret = resp_parse(&default_limits, copy, n, &cmd, &err, &need);
    cr_assert_eq(ret, used, "parse of %.*s: got %lld, want %lld (err %s)", (int)n, s,
                 (long long)ret, (long long)used, err ? err : "-");
    cr_assert_eq(cmd.argc, argc, "argc %d, want %d", cmd.argc, argc);
    for (int i = 0; i < argc; i++) {
        size_t want = strlen(argv[i]);
        cr_assert_eq(cmd.args[i].len, want, "arg %d len %zu, want %zu", i, cmd.args[i].len, want);
        cr_assert(memcmp(resp_arg_ptr(&cmd, copy, i), argv[i], want) == 0, "arg %d differs", i);
    }
    free(copy);
    resp_cmd_free(&cmd);
}

#define EXPECT_CMD(str, used, ...)                                                                 \
    do {                                                                                           \
        const char *const argv_[] = {__VA_ARGS__};                                                 \
        expect_cmd(str, sizeof(str) - 1, used, (int)(sizeof(argv_) / sizeof(argv_[0])), argv_);    \
    } while (0)

#define EXPECT_EMPTY(str, used) expect_cmd(str, sizeof(str) - 1, used, 0, NULL)

static void expect_error_lim(const resp_limits_t *lim, const char *s, size_t n, const char *text)
{
    resp_cmd_t cmd;
    resp_cmd_init(&cmd);
    parse_result_t r = parse_with(lim, &cmd, s, n);
    cr_assert_eq(r.ret, RESP_ERROR, "parse of %.*s: got %lld, want RESP_ERROR",
                 (int)(n > 80 ? 80 : n), s, (long long)r.ret);
    cr_assert_not_null(r.err);
    cr_assert_str_eq(r.err, text);
    cr_assert_eq(cmd.argc, 0);
    resp_cmd_free(&cmd);
}

static void expect_error(const char *s, size_t n, const char *text)
{
    expect_error_lim(&default_limits, s, n, text);
}

#define EXPECT_ERROR(str, text) expect_error(str, sizeof(str) - 1, text)

static void expect_more_lim(const resp_limits_t *lim, const char *s, size_t n, size_t need)
{
    resp_cmd_t cmd;
    resp_cmd_init(&cmd);
    parse_result_t r = parse_with(lim, &cmd, s, n);
    cr_assert_eq(r.ret, RESP_NEED_MORE, "parse of %.*s: got %lld, want NEED_MORE",
                 (int)(n > 80 ? 80 : n), s, (long long)r.ret);
    cr_assert_eq(r.need, need, "need %zu, want %zu", r.need, need);
    resp_cmd_free(&cmd);
}

#define EXPECT_MORE(str, need) expect_more_lim(&default_limits, str, sizeof(str) - 1, need)

#define E_MBULK      "ERR Protocol error: invalid multibulk length"
#define E_BULK       "ERR Protocol error: invalid bulk length"
#define E_BIG_MBULK  "ERR Protocol error: too big mbulk count string"
#define E_BIG_BULK   "ERR Protocol error: too big bulk count string"
#define E_BIG_INLINE "ERR Protocol error: too big inline request"
#define E_QUOTES     "ERR Protocol error: unbalanced quotes in request"

/* ------------------------------------------------------------------------ */
/* Multibulk                                                                */

Test(multibulk, get)
{
    EXPECT_CMD("*2\r\n$3\r\nGET\r\n$1\r\nk\r\n", 20, "GET", "k");
}

Test(multibulk, set_and_trailing_bytes_not_consumed)
{
    /* The next command's first bytes are left alone. */
    EXPECT_CMD("*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$5\r\nvalue\r\n*1", 33, "SET", "key", "value");
}

Test(multibulk, binary_payload)
{
    /* A payload may hold NUL, CR and LF: its length, not its content, ends it. */
    static const char s[] = "*2\r\n$4\r\na\0\r\n\r\n$0\r\n\r\n";
    resp_cmd_t cmd;
    resp_cmd_init(&cmd);
    parse_result_t r = parse_with(&default_limits, &cmd, s, sizeof(s) - 1);
    cr_assert_eq(r.ret, (int64_t)(sizeof(s) - 1));
    cr_assert_eq(cmd.argc, 2);
    cr_assert_eq(cmd.args[0].len, 4);
    cr_assert(memcmp(s + cmd.args[0].off, "a\0\r\n", 4) == 0);
    cr_assert_eq(cmd.args[1].len, 0);
    cr_assert_eq(cmd.flags[0], 0);
    cr_assert_eq(resp_arg_ptr(&cmd, s, 0), s + 8);
    resp_cmd_free(&cmd);
}

Test(multibulk, zero_and_negative_counts_are_empty_commands)
{
    EXPECT_EMPTY("*0\r\n", 4);
    EXPECT_EMPTY("*-1\r\n", 5);
    /* Redis treats every count <= 0 alike. */
    EXPECT_EMPTY("*-7\r\n", 5);
    EXPECT_EMPTY("*-1\r\n*1\r\n$4\r\nPING\r\n", 5);
    EXPECT_EMPTY("*-9223372036854775808\r\n", 23);
}

Test(multibulk, need_more_and_need)
{
    EXPECT_MORE("*", 2);
    EXPECT_MORE("*3", 3);
    EXPECT_MORE("*3\r", 4);   /* one byte after the CR is required */
    EXPECT_MORE("*3\r\n", 5); /* header of the first bulk: nothing yet */
    EXPECT_MORE("*3\r\n$3", 7);
    EXPECT_MORE("*3\r\n$3\r", 8);
    EXPECT_MORE("*3\r\n$3\r\n", 13); /* whole payload + CRLF now known */
    EXPECT_MORE("*3\r\n$3\r\nSE", 13);
    EXPECT_MORE("*3\r\n$3\r\nSET\r", 13);
    EXPECT_MORE("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$256\r\n", 20 + 6 + 256 + 2);
    EXPECT_MORE("*1\r\n$536870912\r\n", 16 + 536870912ull + 2);
}

/* Waiting inside a bulk's bytes, the parser says which bulk, where its
 * header and bytes start, and its length, with the arguments before it
 * (D48: a large value is taken as it arrives); anywhere else it says
 * none. */
Test(multibulk, need_more_inside_a_bulk_names_it)
{
    resp_cmd_t cmd;
    resp_cmd_init(&cmd);
    const char *in = "*4\r\n$3\r\nSET\r\n$1\r\nk\r\n$10\r\nabc";
    cr_assert_eq(resp_parse(&default_limits, in, strlen(in), &cmd, NULL, NULL), RESP_NEED_MORE);
    cr_assert_eq(cmd.partial_arg, 2);
    cr_assert_eq(cmd.partial_count, 4);
    cr_assert_eq(cmd.partial_hdr, 20);
    cr_assert_eq(cmd.partial_data, 25);
    cr_assert_eq(cmd.partial_len, 10);
    cr_assert_eq(cmd.args[0].off, 8);
    cr_assert_eq(cmd.args[0].len, 3);
    cr_assert_eq(cmd.args[1].off, 17);
    const char *head = "*4\r\n$3\r\nSET\r\n$1";
    cr_assert_eq(resp_parse(&default_limits, head, strlen(head), &cmd, NULL, NULL), RESP_NEED_MORE);
    cr_assert_eq(cmd.partial_arg, -1, "waiting in a header, not in a bulk's bytes");
    const char *whole = "*1\r\n$4\r\nPING\r\n";
    cr_assert_gt(resp_parse(&default_limits, whole, strlen(whole), &cmd, NULL, NULL), 0);
    cr_assert_eq(cmd.partial_arg, -1);
    resp_cmd_free(&cmd);
}

Test(multibulk, need_is_optional)
{
    resp_cmd_t cmd;
    resp_cmd_init(&cmd);
    cr_assert_eq(resp_parse(&default_limits, "*1\r\n$4\r\nPI", 10, &cmd, NULL, NULL),
                 RESP_NEED_MORE);
    cr_assert_eq(resp_parse(&default_limits, "*x\r\n", 4, &cmd, NULL, NULL), RESP_ERROR);
    cr_assert_eq(resp_parse(&default_limits, "", 0, &cmd, NULL, NULL), RESP_NEED_MORE);
    resp_cmd_free(&cmd);
}

Test(multibulk, invalid_multibulk_length)
{
    EXPECT_ERROR("*abc\r\n", E_MBULK);
    EXPECT_ERROR("*\r\n", E_MBULK);
    EXPECT_ERROR("*+1\r\n", E_MBULK);
    EXPECT_ERROR("*01\r\n", E_MBULK);
    EXPECT_ERROR("*-0\r\n", E_MBULK);
    EXPECT_ERROR("*-\r\n", E_MBULK);
    EXPECT_ERROR("* 1\r\n", E_MBULK);
    EXPECT_ERROR("*1 \r\n", E_MBULK);
    EXPECT_ERROR("*1x\r\n", E_MBULK);
    EXPECT_ERROR("*99999999999999999999\r\n", E_MBULK);  /* overflows 64 bits */
    EXPECT_ERROR("*9223372036854775808\r\n", E_MBULK);   /* LLONG_MAX + 1 */
    EXPECT_ERROR("*-9223372036854775809\r\n", E_MBULK);  /* LLONG_MIN - 1 */
    EXPECT_ERROR("*000000000000000000001\r\n", E_MBULK); /* too long for string2ll */
    EXPECT_ERROR("*1048577\r\n", E_MBULK);               /* > max_args (1024*1024) */
    EXPECT_MORE("*1048576\r\n", 11);                     /* = max_args: fine so far */
    /* A missing CRLF after the count runs the next line into it. */
    EXPECT_ERROR("*1$4\r\nPING\r\n", E_MBULK);
}

Test(multibulk, count_above_int_max_is_invalid_whatever_the_limit)
{
    resp_limits_t lim = RESP_LIMITS_DEFAULT;
    lim.max_args = INT64_MAX;
    expect_error_lim(&lim, "*2147483648\r\n", 13, E_MBULK);
    expect_more_lim(&lim, "*2147483647\r\n", 13, 14);
}

Test(multibulk, invalid_bulk_length)
{
    EXPECT_ERROR("*1\r\n$-1\r\n", E_BULK); /* null bulk is a reply, not a request */
    EXPECT_ERROR("*1\r\n$-5\r\n", E_BULK);
    EXPECT_ERROR("*1\r\n$99999999999999999999\r\n", E_BULK);
    EXPECT_ERROR("*1\r\n$18446744073709551616\r\n", E_BULK);
    EXPECT_ERROR("*1\r\n$9223372036854775807\r\n", E_BULK); /* fits, > max_bulk_len */
    EXPECT_ERROR("*1\r\n$536870913\r\n", E_BULK);           /* max_bulk_len + 1 */
    EXPECT_ERROR("*1\r\n$abc\r\n", E_BULK);
    EXPECT_ERROR("*1\r\n$\r\n", E_BULK);
    EXPECT_ERROR("*1\r\n$ 3\r\nfoo\r\n", E_BULK);
    EXPECT_ERROR("*1\r\n$03\r\nfoo\r\n", E_BULK);
    EXPECT_ERROR("*1\r\n$+3\r\nfoo\r\n", E_BULK);
    EXPECT_ERROR("*1\r\n$3x\r\nfoo\r\n", E_BULK);
    /* Missing CRLF after the length. */
    EXPECT_ERROR("*1\r\n$4PING\r\n", E_BULK);
    /* The second argument's header is checked too. */
    EXPECT_ERROR("*2\r\n$3\r\nGET\r\n$-1\r\n", E_BULK);
}

Test(multibulk, expected_dollar)
{
    EXPECT_ERROR("*1\r\nX\r\n", "ERR Protocol error: expected '$', got 'X'");
    EXPECT_ERROR("*2\r\n$1\r\na\r\n:1\r\n", "ERR Protocol error: expected '$', got ':'");
    EXPECT_ERROR("*1\r\n*1\r\n", "ERR Protocol error: expected '$', got '*'");
    /* CR and LF are shown as spaces, as Redis' error formatting does. */
    EXPECT_ERROR("*1\r\n\r\n", "ERR Protocol error: expected '$', got ' '");
    EXPECT_ERROR("*1\r\n\n\r\n", "ERR Protocol error: expected '$', got ' '");
    /* A bulk whose CRLF is missing: the next header starts inside it. */
    EXPECT_ERROR("*2\r\n$1\r\nab$1\r\nc\r\n", "ERR Protocol error: expected '$', got '1'");
    /* The '$' check waits for the whole line, as in Redis. */
    EXPECT_MORE("*1\r\nX", 6);
    EXPECT_MORE("*1\r\nX\r", 7);
}

Test(multibulk, error_text_lives_in_cmd)
{
    resp_cmd_t cmd;
    resp_cmd_init(&cmd);
    const char *err = NULL;
    cr_assert_eq(resp_parse(&default_limits, "*1\r\n\xff\r\n", 7, &cmd, &err, NULL), RESP_ERROR);
    cr_assert_str_eq(err, "ERR Protocol error: expected '$', got '\xff'");
    cr_assert_eq(err, cmd.err_text);
    resp_cmd_free(&cmd);
}

Test(multibulk, redis_skips_bytes_after_cr_and_after_payload)
{
    /* Redis does not check that "\n" follows a length line's "\r", nor that
     * "\r\n" follows a payload: it skips them. We do the same. */
    EXPECT_CMD("*1\r\n$4\r\nPINGxx", 14, "PING");
    EXPECT_CMD("*1\rX$4\rYPING\r\n", 14, "PING");
}

Test(multibulk, too_big_count_strings)
{
    size_t n = 64 * 1024 + 1;
    char *s = malloc(n + 16);
    s[0] = '*';
    memset(s + 1, '1', n - 1);
    expect_error(s, n, E_BIG_MBULK);
    expect_more_lim(&default_limits, s, n - 1, n); /* exactly 64 KiB: still waits */

    memcpy(s, "*1\r\n$", 5);
    memset(s + 5, '1', n + 4 - 5);
    expect_error(s, n + 4, E_BIG_BULK);
    expect_more_lim(&default_limits, s, n + 3, n + 4);
    free(s);

    resp_limits_t lim = RESP_LIMITS_DEFAULT;
    lim.max_inline_len = 8;
    expect_error_lim(&lim, "*12345678", 9, E_BIG_MBULK); /* 9 bytes, limit 8 */
    expect_more_lim(&lim, "*1234567", 8, 9);
    expect_error_lim(&lim, "*2\r\n$3\r\nGET\r\n$123456789", 22, E_BIG_BULK);
    expect_more_lim(&lim, "*2\r\n$3\r\nGET\r\n$12345678", 21, 22);
}

Test(multibulk, nul_hides_the_line_end_as_in_redis)
{
    /* Redis finds line ends with strchr(), which stops at NUL: it waits
     * until more than 64 KiB are buffered, then fails. */
    EXPECT_MORE("*1\0\r\n", 64 * 1024 + 1);
    EXPECT_MORE("*1\r\n$\0\r\n", 4 + 64 * 1024 + 1);
    resp_limits_t lim = RESP_LIMITS_DEFAULT;
    lim.max_inline_len = 4;
    expect_error_lim(&lim, "*1\0\r\n", 5, E_BIG_MBULK);
    expect_error_lim(&lim, "*1\r\n$3\0\r\n", 9, E_BIG_BULK);
}

Test(multibulk, limits)
{
    resp_limits_t lim = {.max_bulk_len = 4, .max_args = 2, .max_inline_len = 64};
    expect_error_lim(&lim, "*3\r\n", 4, E_MBULK);
    expect_error_lim(&lim, "*1\r\n$5\r\n", 8, E_BULK);
    resp_cmd_t cmd;
    resp_cmd_init(&cmd);
    parse_result_t r = parse_with(&lim, &cmd, "*2\r\n$4\r\nabcd\r\n$0\r\n\r\n", 20);
    cr_assert_eq(r.ret, 20);
    cr_assert_eq(cmd.argc, 2);
    resp_cmd_free(&cmd);
}

Test(multibulk, args_array_is_reused_and_grown)
{
    resp_cmd_t cmd;
    resp_cmd_init(&cmd);
    buf_t b;
    buf_init(&b);
    resp_array(&b, 1000);
    for (int i = 0; i < 1000; i++) {
        char tmp[16];
        int n = snprintf(tmp, sizeof(tmp), "a%d", i);
        resp_bulk(&b, tmp, (size_t)n);
    }
    parse_result_t r = parse_with(&default_limits, &cmd, b.data, b.len);
    cr_assert_eq(r.ret, (int64_t)b.len);
    cr_assert_eq(cmd.argc, 1000);
    for (int i = 0; i < 1000; i++) {
        char tmp[16];
        int n = snprintf(tmp, sizeof(tmp), "a%d", i);
        cr_assert_eq(cmd.args[i].len, (size_t)n);
        cr_assert(memcmp(b.data + cmd.args[i].off, tmp, (size_t)n) == 0);
    }
    cr_assert_geq(cmd.cap, 1000);
    resp_arg_t *args = cmd.args;
    size_t cap = cmd.cap;
    for (int i = 0; i < 100; i++) {
        cr_assert_eq(
            resp_parse(&default_limits, "*2\r\n$3\r\nGET\r\n$1\r\nk\r\n", 20, &cmd, NULL, NULL),
            20);
        cr_assert_eq(cmd.args, args);
        cr_assert_eq(cmd.cap, cap);
    }
    buf_free(&b);
    resp_cmd_free(&cmd);
}

Test(multibulk, huge_announced_count_does_not_preallocate)
{
    resp_cmd_t cmd;
    resp_cmd_init(&cmd);
    parse_result_t r = parse_with(&default_limits, &cmd, "*1048576\r\n$1\r\na\r\n", 17);
    cr_assert_eq(r.ret, RESP_NEED_MORE);
    cr_assert_eq(r.need, 18);
    cr_assert_leq(cmd.cap, 16);
    resp_cmd_free(&cmd);
}

/* ------------------------------------------------------------------------ */
/* Inline                                                                   */

Test(inline_cmd, simple)
{
    EXPECT_CMD("PING\r\n", 6, "PING");
    EXPECT_CMD("PING\n", 5, "PING"); /* a lone LF ends the line too */
    EXPECT_CMD("SET k v\r\nGET k\r\n", 9, "SET", "k", "v");
    EXPECT_CMD("  SET \t k   v  \r\n", 17, "SET", "k", "v");
    EXPECT_CMD("PING\r\r\n", 7, "PING");        /* the extra CR is a blank */
    EXPECT_CMD("a\rb\n", 4, "a", "b");          /* CR inside the line splits words */
    EXPECT_CMD("a\vb \vc\r\n", 8, "a\vb", "c"); /* VT skipped as blank, not a separator */
    EXPECT_CMD("\xff\xfe x\r\n", 6, "\xff\xfe", "x");
}

Test(inline_cmd, empty_lines_are_empty_commands)
{
    EXPECT_EMPTY("\r\n", 2);
    EXPECT_EMPTY("\n", 1);
    EXPECT_EMPTY("   \t \r\n", 7);
    EXPECT_EMPTY("\r\nPING\r\n", 2);
}

Test(inline_cmd, need_more)
{
    EXPECT_MORE("P", 2);
    EXPECT_MORE("PING", 5);
    EXPECT_MORE("PING\r", 6);
    EXPECT_MORE("SET \"a b", 9);
    /* A NUL hides the newline from Redis' strchr(): wait for the limit. */
    EXPECT_MORE("PI\0NG\r\n", 64 * 1024 + 1);
    EXPECT_MORE("\0", 64 * 1024 + 1);
}

Test(inline_cmd, too_big)
{
    size_t n = 64 * 1024 + 1;
    char *s = malloc(n + 2);
    memset(s, 'a', n);
    expect_error(s, n, E_BIG_INLINE);
    expect_more_lim(&default_limits, s, n - 1, n);
    /* As in Redis, a longer line is fine if it arrives whole. */
    s[n] = '\r';
    s[n + 1] = '\n';
    resp_cmd_t cmd;
    resp_cmd_init(&cmd);
    parse_result_t r = parse_with(&default_limits, &cmd, s, n + 2);
    cr_assert_eq(r.ret, (int64_t)n + 2);
    cr_assert_eq(cmd.argc, 1);
    cr_assert_eq(cmd.args[0].len, n);
    resp_cmd_free(&cmd);
    free(s);

    resp_limits_t lim = RESP_LIMITS_DEFAULT;
    lim.max_inline_len = 4;
    expect_error_lim(&lim, "PING ", 5, E_BIG_INLINE);
    expect_error_lim(&lim, "P\0ING", 5, E_BIG_INLINE);
}

Test(inline_cmd, quotes)
{
    EXPECT_CMD("SET \"a b\" 'c d'\r\n", 17, "SET", "a b", "c d");
    EXPECT_CMD("SET k \"\"\r\n", 10, "SET", "k", "");
    EXPECT_CMD("SET k ''\r\n", 10, "SET", "k", "");
    EXPECT_CMD("a\"b c\" d\r\n", 10, "ab c", "d"); /* quote opening mid-word */
    EXPECT_CMD("\"a\"\t'b'\r\n", 9, "a", "b");
    EXPECT_CMD("'a\"b' \"c'd\"\n", 12, "a\"b", "c'd");
    EXPECT_CMD("'x'\v\"y\"\r\n", 9, "x", "y"); /* any isspace may follow a quote */
}

Test(inline_cmd, escapes)
{
    EXPECT_CMD("\"\\n\\r\\t\\b\\a\\\\\\\"\\q\"\r\n", 20, "\n\r\t\b\a\\\"q");
    EXPECT_CMD("\"\\x41\\x6a\\x4A\\x7A\"\r\n", 20, "AjJz");
    EXPECT_CMD("\"\\xZZ\\x4\"\r\n", 11, "xZZx4");            /* not two hex digits: plain escape */
    EXPECT_CMD("'it\\'s' 'a\\nb'\r\n", 16, "it's", "a\\nb"); /* single quotes: only \' */
    EXPECT_CMD("a\\nb\r\n", 6, "a\\nb");                     /* no quotes: literal */
}

Test(inline_cmd, unescaped_args_are_flagged)
{
    static const char s[] = "SET \"k\\x00\" v 'w'\r\n";
    resp_cmd_t cmd;
    resp_cmd_init(&cmd);
    parse_result_t r = parse_with(&default_limits, &cmd, s, sizeof(s) - 1);
    cr_assert_eq(r.ret, (int64_t)(sizeof(s) - 1));
    cr_assert_eq(cmd.argc, 4);
    cr_assert_eq(cmd.flags[0], 0);
    cr_assert_eq(cmd.flags[1], RESP_ARG_UNESCAPED);
    cr_assert_eq(cmd.flags[2], 0);
    cr_assert_eq(cmd.flags[3], RESP_ARG_UNESCAPED);
    cr_assert_eq(cmd.args[1].len, 2);
    cr_assert(memcmp(resp_arg_ptr(&cmd, s, 1), "k\0", 2) == 0);
    cr_assert_eq(resp_arg_ptr(&cmd, s, 2), s + 12);
    cr_assert(memcmp(resp_arg_ptr(&cmd, s, 3), "w", 1) == 0);
    cr_assert_eq(resp_arg_ptr(&cmd, s, 0), s);
    /* The next inline command starts from an empty unescape buffer. */
    r = parse_with(&default_limits, &cmd, "'x'\r\n", 5);
    cr_assert_eq(r.ret, 5);
    cr_assert_eq(cmd.args[0].off, 0);
    cr_assert_eq(cmd.unescaped.len, 1);
    resp_cmd_free(&cmd);
}

Test(inline_cmd, unbalanced_quotes)
{
    EXPECT_ERROR("SET \"abc\r\n", E_QUOTES);
    EXPECT_ERROR("SET 'abc\r\n", E_QUOTES);
    EXPECT_ERROR("SET \"a\"b\r\n", E_QUOTES); /* closing quote must end the word */
    EXPECT_ERROR("SET 'a'b\r\n", E_QUOTES);
    EXPECT_ERROR("\"abc\\\"\r\n", E_QUOTES); /* escaped quote does not close */
    EXPECT_ERROR("\"abc\\\r\n", E_QUOTES);   /* backslash at end of line */
    EXPECT_ERROR("'abc\\'\n", E_QUOTES);
    EXPECT_ERROR("\"\n", E_QUOTES);
}

/* ------------------------------------------------------------------------ */
/* Pipelines and splits                                                     */

static const char pipeline[] = "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n"
                               "PING\r\n"
                               "*0\r\n"
                               "\r\n"
                               "*2\r\n$3\r\nGET\r\n$1\r\nk\r\n"
                               "SET \"a b\" 'c'\n"
                               "*-1\r\n"
                               "*1\r\n$4\r\nQUIT\r\n";

Test(pipeline, sequential)
{
    static const int want_argc[] = {3, 1, 0, 0, 2, 3, 0, 1};
    static const char *const want_first[] = {"SET", "PING", NULL, NULL, "GET", "SET", NULL, "QUIT"};
    resp_cmd_t cmd;
    resp_cmd_init(&cmd);
    size_t len = sizeof(pipeline) - 1;
    char *buf = exact_copy(pipeline, len);
    size_t off = 0;
    int n = 0;
    while (off < len) {
        const char *err = NULL;
        int64_t used = resp_parse(&default_limits, buf + off, len - off, &cmd, &err, NULL);
        cr_assert_gt(used, 0, "command %d: %lld (%s)", n, (long long)used, err ? err : "-");
        cr_assert_lt(n, 8);
        cr_assert_eq(cmd.argc, want_argc[n], "command %d argc %d", n, cmd.argc);
        if (want_first[n]) {
            cr_assert_eq(cmd.args[0].len, strlen(want_first[n]));
            cr_assert(memcmp(resp_arg_ptr(&cmd, buf + off, 0), want_first[n], cmd.args[0].len) ==
                      0);
        }
        off += (size_t)used;
        n++;
    }
    cr_assert_eq(n, 8);
    cr_assert_eq(off, len);
    free(buf);
    resp_cmd_free(&cmd);
}

Test(pipeline, many_commands_one_buffer)
{
    buf_t b;
    buf_init(&b);
    for (int i = 0; i < 10000; i++) {
        char key[32];
        int n = snprintf(key, sizeof(key), "key:%d", i);
        if (i % 3 == 0) {
            buf_appendf(&b, "SET %s %d\r\n", key, i);
        } else {
            resp_array(&b, 3);
            resp_bulk_cstr(&b, "SET");
            resp_bulk(&b, key, (size_t)n);
            char val[32];
            int m = snprintf(val, sizeof(val), "%d", i);
            resp_bulk(&b, val, (size_t)m);
        }
    }
    char *buf = exact_copy(b.data, b.len);
    resp_cmd_t cmd;
    resp_cmd_init(&cmd);
    size_t off = 0;
    for (int i = 0; i < 10000; i++) {
        int64_t used = resp_parse(&default_limits, buf + off, b.len - off, &cmd, NULL, NULL);
        cr_assert_gt(used, 0);
        cr_assert_eq(cmd.argc, 3);
        char key[32];
        int n = snprintf(key, sizeof(key), "key:%d", i);
        cr_assert_eq(cmd.args[1].len, (size_t)n);
        cr_assert(memcmp(resp_arg_ptr(&cmd, buf + off, 1), key, (size_t)n) == 0);
        off += (size_t)used;
    }
    cr_assert_eq(off, b.len);
    free(buf);
    buf_free(&b);
    resp_cmd_free(&cmd);
}

/* Feed every prefix of s: each must wait, with a need that is more than the
 * prefix and no more than the whole command; the whole must then parse to
 * the same command as when it arrives at once with more bytes behind it. */
static void check_every_split(const char *s, size_t n)
{
    resp_cmd_t whole, part;
    resp_cmd_init(&whole);
    resp_cmd_init(&part);
    parse_result_t w = parse_with(&default_limits, &whole, s, n);
    cr_assert_eq(w.ret, (int64_t)n, "whole %.*s: %lld", (int)n, s, (long long)w.ret);
    for (size_t k = 0; k < n; k++) {
        parse_result_t r = parse_with(&default_limits, &part, s, k);
        cr_assert_eq(r.ret, RESP_NEED_MORE, "prefix %zu of %.*s: %lld (%s)", k, (int)n, s,
                     (long long)r.ret, r.err ? r.err : "-");
        cr_assert_gt(r.need, k);
        cr_assert_leq(r.need, n, "prefix %zu need %zu > %zu", k, r.need, n);
    }
    /* Whole command followed by the start of another. */
    char *more = malloc(n + 3);
    memcpy(more, s, n);
    memcpy(more + n, "*1\r", 3);
    char *copy = exact_copy(more, n + 3);
    int64_t ret = resp_parse(&default_limits, copy, n + 3, &part, NULL, NULL);
    cr_assert_eq(ret, (int64_t)n);
    cr_assert_eq(part.argc, whole.argc);
    for (int i = 0; i < whole.argc; i++) {
        cr_assert_eq(part.args[i].len, whole.args[i].len);
        cr_assert_eq(part.flags[i], whole.flags[i]);
        cr_assert(memcmp(resp_arg_ptr(&part, copy, i), resp_arg_ptr(&whole, s, i),
                         part.args[i].len) == 0);
    }
    free(copy);
    free(more);
    resp_cmd_free(&whole);
    resp_cmd_free(&part);
}

#define CHECK_EVERY_SPLIT(str) check_every_split(str, sizeof(str) - 1)

Test(split, every_byte_boundary)
{
    CHECK_EVERY_SPLIT("*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$5\r\nva\r\nl\r\n");
    CHECK_EVERY_SPLIT("*1\r\n$0\r\n\r\n");
    CHECK_EVERY_SPLIT("*0\r\n");
    CHECK_EVERY_SPLIT("*-1\r\n");
    CHECK_EVERY_SPLIT("*2\r\n$10\r\n0123456789\r\n$1\r\n\0\r\n");
    CHECK_EVERY_SPLIT("PING\r\n");
    CHECK_EVERY_SPLIT("PING\n");
    CHECK_EVERY_SPLIT("\r\n");
    CHECK_EVERY_SPLIT("SET \"a\\x20b\\n\" 'it\\'s' plain\r\n");
}

Test(split, big_value_every_byte_boundary)
{
    /* The hot-path shape: SET with a 256-byte value. */
    buf_t b;
    buf_init(&b);
    char val[256];
    for (int i = 0; i < 256; i++)
        val[i] = (char)i;
    resp_array(&b, 3);
    resp_bulk_cstr(&b, "SET");
    resp_bulk_cstr(&b, "key:000123");
    resp_bulk(&b, val, sizeof(val));
    check_every_split(b.data, b.len);
    buf_free(&b);
}

Test(split, errors_are_reported_once_the_line_is_whole)
{
    /* Before the bad line is whole the parser waits (never past the line's
     * end); once it is, it fails, as Redis does. */
    static const char s[] = "*2\r\n$3\r\nGET\r\n$-1\r\n";
    size_t n = sizeof(s) - 1;
    resp_cmd_t cmd;
    resp_cmd_init(&cmd);
    for (size_t k = 0; k < n; k++) {
        parse_result_t r = parse_with(&default_limits, &cmd, s, k);
        cr_assert_eq(r.ret, RESP_NEED_MORE, "prefix %zu", k);
        cr_assert_gt(r.need, k);
        cr_assert_leq(r.need, n);
    }
    resp_cmd_free(&cmd);
    expect_error(s, n, E_BULK);
}

/* ------------------------------------------------------------------------ */
/* Fuzz                                                                     */

/* Check one parse result against the contract, and check that waiting for
 * *need bytes at a time (what the frontend does) ends in the same result as
 * parsing the whole buffer at once. */
static void check_contract(const resp_limits_t *lim, resp_cmd_t *cmd, const char *s, size_t n)
{
    char *buf = exact_copy(s, n);
    const char *err = NULL;
    size_t need = 0;
    int64_t ret = resp_parse(lim, buf, n, cmd, &err, &need);
    cr_assert(ret == RESP_NEED_MORE || ret == RESP_ERROR || (ret > 0 && (size_t)ret <= n),
              "ret %lld for %zu bytes", (long long)ret, n);
    if (ret == RESP_ERROR) {
        cr_assert_not_null(err);
        cr_assert(strncmp(err, "ERR Protocol error: ", 20) == 0, "%s", err);
    } else if (ret == RESP_NEED_MORE) {
        cr_assert_gt(need, n);
    } else {
        cr_assert_geq(cmd->argc, 0);
        for (int i = 0; i < cmd->argc; i++) {
            size_t end = cmd->args[i].off + cmd->args[i].len;
            if (cmd->flags[i] & RESP_ARG_UNESCAPED)
                cr_assert_leq(end, cmd->unescaped.len);
            else
                cr_assert_leq(end, (size_t)ret);
            /* Touch every byte so ASan checks it. */
            const char *p = resp_arg_ptr(cmd, buf, i);
            volatile unsigned sum = 0;
            for (size_t j = 0; j < cmd->args[i].len; j++)
                sum += (unsigned char)p[j];
            (void)sum;
        }
    }
    int64_t whole = ret;
    int whole_argc = ret > 0 ? cmd->argc : 0;
    const char *whole_err = ret == RESP_ERROR ? err : NULL;
    char whole_err_copy[64] = "";
    if (whole_err) snprintf(whole_err_copy, sizeof(whole_err_copy), "%s", whole_err);
    free(buf);

    /* Incremental: k bytes available; skip parsing until need is met. */
    size_t k = 0;
    for (;;) {
        char *part = exact_copy(s, k);
        err = NULL;
        ret = resp_parse(lim, part, k, cmd, &err, &need);
        free(part);
        if (ret != RESP_NEED_MORE) break;
        if (need > n) break;
        cr_assert_gt(need, k);
        k = need;
    }
    /* The one allowed difference is Redis' own: a line longer than the
     * limit is refused while it is incomplete, but accepted (or refused for
     * its content) if it arrives whole. */
    bool too_big = ret == RESP_ERROR && strstr(err, "too big") != NULL;
    if (ret != whole || (ret == RESP_ERROR && strcmp(err, whole_err_copy) != 0)) {
        cr_assert(too_big, "incremental %lld (%s) vs whole %lld (%s) at k=%zu n=%zu",
                  (long long)ret, ret == RESP_ERROR ? err : "-", (long long)whole, whole_err_copy,
                  k, n);
        return;
    }
    if (ret > 0) cr_assert_eq(cmd->argc, whole_argc);
}

Test(fuzz, random_garbage)
{
    static const char alphabet[] = "*$\r\n0123456789-+ \t\"'\\xaA\v\0";
    rng_state = 0x9e3779b97f4a7c15ull;
    resp_limits_t small = {.max_bulk_len = 64, .max_args = 8, .max_inline_len = 16};
    resp_cmd_t cmd;
    resp_cmd_init(&cmd);
    char s[96];
    for (int iter = 0; iter < 100000; iter++) {
        size_t n = rng() % sizeof(s);
        int mode = (int)(rng() % 4);
        for (size_t i = 0; i < n; i++) {
            uint64_t r = rng();
            if (mode == 0)
                s[i] = (char)r;
            else
                s[i] = alphabet[r % (sizeof(alphabet) - 1)];
        }
        if (mode == 3 && n > 0) s[0] = '*';
        check_contract(iter & 1 ? &small : &default_limits, &cmd, s, n);
    }
    resp_cmd_free(&cmd);
}

Test(fuzz, mutated_valid_commands)
{
    rng_state = 12345;
    resp_limits_t small = {.max_bulk_len = 64, .max_args = 8, .max_inline_len = 16};
    resp_cmd_t cmd;
    resp_cmd_init(&cmd);
    size_t seed_len = sizeof(pipeline) - 1;
    char s[sizeof(pipeline)];
    for (int iter = 0; iter < 20000; iter++) {
        size_t start = rng() % seed_len;
        size_t n = rng() % (seed_len - start + 1);
        memcpy(s, pipeline + start, n);
        int flips = (int)(rng() % 4);
        for (int f = 0; f < flips && n > 0; f++) {
            size_t at = rng() % n;
            switch (rng() % 4) {
            case 0:
                s[at] = (char)rng();
                break;
            case 1:
                s[at] = "0123456789"[rng() % 10];
                break;
            case 2:
                s[at] = "*$\r\n-\"'\\"[rng() % 8];
                break;
            default:
                s[at] ^= 1;
                break;
            }
        }
        check_contract(iter & 1 ? &small : &default_limits, &cmd, s, n);
    }
    resp_cmd_free(&cmd);
}

/* ------------------------------------------------------------------------ */
/* Speed (loose bound: a sanity check, not a benchmark)                     */

Test(speed, set_256_byte_value)
{
    buf_t b;
    buf_init(&b);
    char val[256];
    memset(val, 'v', sizeof(val));
    resp_array(&b, 3);
    resp_bulk_cstr(&b, "SET");
    resp_bulk_cstr(&b, "key:000123");
    resp_bulk(&b, val, sizeof(val));
    resp_cmd_t cmd;
    resp_cmd_init(&cmd);
    const int rounds = 1000000;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int64_t total = 0;
    for (int i = 0; i < rounds; i++)
        total += resp_parse(&default_limits, b.data, b.len, &cmd, NULL, NULL);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    cr_assert_eq(total, (int64_t)b.len * rounds);
    double ns =
        ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) / rounds;
    cr_log_info("resp_parse SET 256B: %.1f ns", ns);
    /* Well under a microsecond in an optimised build; the bound is loose so
     * that sanitizer and -O0 builds pass too. */
    cr_assert_lt(ns, 2000.0, "%.1f ns per parse", ns);
    resp_cmd_free(&cmd);
    buf_free(&b);
}
