/*
 * resp.c - the Redis protocol codec: request parser, reply writers (RESP2,
 * and RESP3 with their RESP2 fallbacks), RESP2 <-> RESP3 reply conversion
 * (resp.h).
 *
 * Run by the frontends: every byte a client sends goes through resp_parse(),
 * every reply is built with the writers below. Pure functions over memory:
 * no I/O, no globals; the only state is the caller's resp_cmd_t, whose
 * argument arrays are reused from one command to the next so that the hot
 * path does not allocate.
 *
 * Invariants (ARCHITECTURE.md, contract 7): the parser never reads at or past
 * buf[len]; every length taken from the input is checked against the limits
 * and against the bytes present before it is used, so hostile input yields
 * RESP_ERROR or RESP_NEED_MORE, never a crash. A crash in this file therefore
 * means a bug here; it takes down one frontend and the connections it holds
 * (the master respawns it), never the log.
 *
 * Why the parser looks the way it does. It is stateless: each call parses
 * from the start of the command again, so a command split across reads costs
 * a re-parse of its headers, and the caller avoids even that by waiting for
 * the `need` bytes we report. It mirrors Redis 7 (networking.c,
 * processMultibulkBuffer / processInlineBuffer, and sds.c sdssplitargs)
 * decision for decision, so that clients see the same replies and errors as
 * from Redis, including Redis' quirks:
 *  - Redis searches its NUL-terminated query buffer with strchr(), so a NUL
 *    byte before the '\r' of a length line (or the '\n' of an inline line)
 *    hides the line end: Redis waits, and fails with "too big ... string"
 *    only once more than 64 KiB (max_inline_len) are buffered. find_eol()
 *    stops at NUL the same way.
 *  - The byte after a length line's '\r' and the two bytes after a bulk's
 *    payload are skipped, not checked to be "\n" / "\r\n".
 *  - `*0` and every negative count (`*-1`, `*-7`) are empty commands; `$-1`
 *    inside a request is an invalid bulk length.
 *  - Numbers are read with Redis' string2ll rules: no sign '+', no leading
 *    zeros, at most 20 characters, overflow rejected.
 *  - Inline lines are split by sdssplitargs' rules (see split_inline()).
 */
#include "resp.h"

#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROTO_ERR "ERR Protocol error: "

static const char ERR_MBULK_LEN[] = PROTO_ERR "invalid multibulk length";
static const char ERR_BULK_LEN[] = PROTO_ERR "invalid bulk length";
static const char ERR_BIG_MBULK[] = PROTO_ERR "too big mbulk count string";
static const char ERR_BIG_BULK[] = PROTO_ERR "too big bulk count string";
static const char ERR_BIG_INLINE[] = PROTO_ERR "too big inline request";
static const char ERR_QUOTES[] = PROTO_ERR "unbalanced quotes in request";

#define NOT_FOUND SIZE_MAX

/* ------------------------------------------------------------------------ */
/* The command structure                                                    */

void resp_cmd_init(resp_cmd_t *cmd)
{
    memset(cmd, 0, sizeof(*cmd));
    buf_init(&cmd->unescaped);
}

void resp_cmd_free(resp_cmd_t *cmd)
{
    free(cmd->args);
    free(cmd->flags);
    buf_free(&cmd->unescaped);
    resp_cmd_init(cmd);
}

const char *resp_arg_ptr(const resp_cmd_t *cmd, const char *buf, int i)
{
    if (cmd->flags[i] & RESP_ARG_UNESCAPED) return cmd->unescaped.data + cmd->args[i].off;
    return buf + cmd->args[i].off;
}

/* Room for one more argument. Doubling, but never beyond `at_most` (the
 * count a multibulk announced, 0 = no bound): a client that announces a
 * million arguments and sends three must not make us allocate for a million,
 * which is why Redis, too, sizes argv from what arrives. Out of memory aborts,
 * as buf.c does. */
static void cmd_grow(resp_cmd_t *cmd, size_t at_most)
{
    size_t cap = cmd->cap ? cmd->cap * 2 : 8;
    if (at_most && cap > at_most) cap = at_most;
    if (cap > SIZE_MAX / sizeof(resp_arg_t)) goto oom;
    resp_arg_t *args = realloc(cmd->args, cap * sizeof(resp_arg_t));
    if (args == NULL) goto oom;
    cmd->args = args;
    unsigned char *flags = realloc(cmd->flags, cap);
    if (flags == NULL) goto oom;
    cmd->flags = flags;
    cmd->cap = cap;
    return;
oom:
    fprintf(stderr, "atticdb: out of memory growing a command to %zu arguments\n", cap);
    abort();
}

static inline void cmd_push(resp_cmd_t *cmd, int argc, size_t at_most, size_t off, size_t len,
                            unsigned char flags)
{
    if ((size_t)argc == cmd->cap) cmd_grow(cmd, at_most);
    cmd->args[argc].off = off;
    cmd->args[argc].len = len;
    cmd->flags[argc] = flags;
}

/* ------------------------------------------------------------------------ */
/* Parser helpers                                                           */

static inline int64_t parse_fail(resp_cmd_t *cmd, const char **err, const char *text)
{
    cmd->argc = 0;
    if (err) *err = text;
    return RESP_ERROR;
}

static inline int64_t parse_more(resp_cmd_t *cmd, size_t *need, size_t total)
{
    cmd->argc = 0;
    if (need) *need = total;
    return RESP_NEED_MORE;
}

/* a + b, saturating: a `need` past SIZE_MAX just means "never enough". */
static inline size_t add_sat(size_t a, size_t b)
{
    return a > SIZE_MAX - b ? SIZE_MAX : a + b;
}

/*
 * Where Redis' strchr(buf + from, c) would stop in its NUL-terminated query
 * buffer: the offset of the first c in [from, len), or NOT_FOUND. *blocked
 * tells that a NUL byte came first: then no amount of further input reveals
 * a line end, and only the size limit can end the wait. Length lines are a
 * few bytes, so a plain loop beats the call overhead of memchr here.
 */
static inline size_t find_eol(const char *buf, size_t from, size_t len, char c, bool *blocked)
{
    for (size_t i = from; i < len; i++) {
        if (buf[i] == c) return i;
        if (buf[i] == '\0') {
            *blocked = true;
            return NOT_FOUND;
        }
    }
    *blocked = false;
    return NOT_FOUND;
}

/* Bytes needed before a line that starts at `start` and has no end yet can
 * change the answer: one more byte might be the end, unless a NUL hides it,
 * in which case only passing the limit matters (see find_eol()). */
static inline size_t line_need(size_t start, size_t len, bool blocked, size_t limit)
{
    return blocked ? add_sat(add_sat(start, limit), 1) : len + 1;
}

/* Redis' string2ll(): the only integers it accepts are "0" and an optional
 * '-' followed by a digit 1-9 and more digits, in fewer than 21 characters,
 * that fit a long long. Anything else (empty, '+', leading zeros, "-0",
 * spaces, overflow) is rejected, which the protocol errors depend on. */
static int parse_ll(const char *s, size_t n, long long *out)
{
    if (n == 0 || n >= 21) return 0;
    if (n == 1 && s[0] == '0') {
        *out = 0;
        return 1;
    }
    size_t i = 0;
    bool negative = false;
    if (s[0] == '-') {
        negative = true;
        if (++i == n) return 0;
    }
    if (s[i] < '1' || s[i] > '9') return 0;
    unsigned long long v = (unsigned long long)(s[i++] - '0');
    for (; i < n; i++) {
        unsigned d = (unsigned)((unsigned char)s[i] - '0');
        if (d > 9) return 0;
        if (v > ULLONG_MAX / 10) return 0;
        v *= 10;
        if (v > ULLONG_MAX - d) return 0;
        v += d;
    }
    if (negative) {
        if (v > (unsigned long long)LLONG_MAX + 1) return 0;
        *out = v == (unsigned long long)LLONG_MAX + 1 ? LLONG_MIN : -(long long)v;
    } else {
        if (v > (unsigned long long)LLONG_MAX) return 0;
        *out = (long long)v;
    }
    return 1;
}

/* ------------------------------------------------------------------------ */
/* Multibulk: *<count>\r\n then <count> times $<len>\r\n<len bytes>\r\n     */

/* Redis formats this one with %c and then maps CR and LF to spaces so that
 * the error line cannot break the reply framing; we do the same. */
static int64_t fail_expected_dollar(resp_cmd_t *cmd, const char **err, char got)
{
    if (got == '\r' || got == '\n') got = ' ';
    snprintf(cmd->err_text, sizeof(cmd->err_text), PROTO_ERR "expected '$', got '%c'", got);
    return parse_fail(cmd, err, cmd->err_text);
}

static int64_t parse_multibulk(const resp_limits_t *lim, const char *buf, size_t len,
                               resp_cmd_t *cmd, const char **err, size_t *need)
{
    bool blocked;
    size_t cr = find_eol(buf, 0, len, '\r', &blocked);
    if (cr == NOT_FOUND) {
        if (len > lim->max_inline_len) return parse_fail(cmd, err, ERR_BIG_MBULK);
        return parse_more(cmd, need, line_need(0, len, blocked, lim->max_inline_len));
    }
    /* Redis wants one byte after the '\r' and skips it unread. */
    if (cr + 2 > len) return parse_more(cmd, need, cr + 2);

    long long count;
    if (!parse_ll(buf + 1, cr - 1, &count) || count > INT_MAX || count > lim->max_args)
        return parse_fail(cmd, err, ERR_MBULK_LEN);
    size_t pos = cr + 2;
    if (count <= 0) {
        /* Redis skips these silently; the caller sees argc 0. */
        cmd->argc = 0;
        return (int64_t)pos;
    }

    int argc = 0;
    while (argc < count) {
        cr = find_eol(buf, pos, len, '\r', &blocked);
        if (cr == NOT_FOUND) {
            if (len - pos > lim->max_inline_len) return parse_fail(cmd, err, ERR_BIG_BULK);
            return parse_more(cmd, need, line_need(pos, len, blocked, lim->max_inline_len));
        }
        if (cr + 2 > len) return parse_more(cmd, need, cr + 2);
        /* Checked only once the whole line is here, as Redis does: "*1\r\nX"
         * waits, "*1\r\nX\r\n" fails. */
        if (buf[pos] != '$') return fail_expected_dollar(cmd, err, buf[pos]);

        long long bulk_len;
        if (!parse_ll(buf + pos + 1, cr - pos - 1, &bulk_len) || bulk_len < 0 ||
            bulk_len > lim->max_bulk_len)
            return parse_fail(cmd, err, ERR_BULK_LEN);
        size_t data = cr + 2;
        /* bulk_len is in [0, LLONG_MAX], so the +2 cannot overflow 64 bits;
         * comparing with the bytes left avoids forming data + bulk_len. */
        if ((unsigned long long)bulk_len + 2 > (unsigned long long)(len - data)) {
            size_t whole = (unsigned long long)bulk_len + 2 > SIZE_MAX - data
                               ? SIZE_MAX
                               : data + (size_t)bulk_len + 2;
            int64_t rc = parse_more(cmd, need, whole);
            cmd->partial_arg = argc;
            cmd->partial_count = (int)count;
            cmd->partial_hdr = pos;
            cmd->partial_data = data;
            cmd->partial_len = (size_t)bulk_len;
            return rc;
        }

        cmd_push(cmd, argc, (size_t)count, data, (size_t)bulk_len, 0);
        argc++;
        pos = data + (size_t)bulk_len + 2;
    }
    cmd->argc = argc;
    return (int64_t)pos;
}

/* ------------------------------------------------------------------------ */
/* Inline: one line of whitespace-separated words, redis-cli style quoting  */

/* C-locale isspace(): what sdssplitargs uses to skip blanks and to check the
 * byte after a closing quote. Note that it is wider than the set of bytes
 * that end an unquoted word (' ', '\t', '\r', '\n'): "a\vb" is one word. */
static inline bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

static inline bool is_hex(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static inline int hex_value(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return c - 'A' + 10;
}

/* sdssplitargs' one-letter escapes inside double quotes; any other escaped
 * byte stands for itself, which is how \" and \\ work. */
static inline char unescape(char c)
{
    static const char letters[] = "nrtba", bytes[] = "\n\r\t\b\a";
    const char *hit = memchr(letters, c, 5);
    return hit ? bytes[hit - letters] : c;
}

/*
 * Split buf[0, end) into cmd's arguments exactly as Redis' sdssplitargs()
 * does, reading the end of the line as the NUL that ends sdssplitargs'
 * string (the line holds no NUL: find_eol() stopped at it). Words without
 * quotes stay where they are in buf; a word with a quote anywhere in it is
 * built in cmd->unescaped. Returns argc, or -1 for unbalanced quotes (which
 * in Redis includes a closing quote followed by anything but a space), or -2
 * if the line has more words than an int counts.
 */
static int split_inline(resp_cmd_t *cmd, const char *buf, size_t end)
{
#define AT(k) ((k) < end ? buf[k] : '\0')
    buf_t *u = &cmd->unescaped;
    u->len = 0;
    int argc = 0;
    size_t i = 0;
    for (;;) {
        while (i < end && is_space(buf[i]))
            i++;
        if (i >= end) return argc;
        if (argc == INT_MAX) return -2;

        size_t word = i, word_end = 0, uoff = 0;
        bool in_dq = false, in_sq = false, done = false, copied = false;
        while (!done) {
            char c = AT(i);
            if (in_dq) {
                if (c == '\\' && AT(i + 1) == 'x' && is_hex(AT(i + 2)) && is_hex(AT(i + 3))) {
                    char byte = (char)(hex_value(AT(i + 2)) * 16 + hex_value(AT(i + 3)));
                    buf_append(u, &byte, 1);
                    i += 3;
                } else if (c == '\\' && AT(i + 1)) {
                    i++;
                    c = unescape(buf[i]);
                    buf_append(u, &c, 1);
                } else if (c == '"') {
                    if (AT(i + 1) && !is_space(AT(i + 1))) return -1;
                    done = true;
                } else if (c == '\0') {
                    return -1; /* the line ended inside the quotes */
                } else {
                    buf_append(u, &c, 1);
                }
            } else if (in_sq) {
                if (c == '\\' && AT(i + 1) == '\'') {
                    i++;
                    buf_append(u, "'", 1);
                } else if (c == '\'') {
                    if (AT(i + 1) && !is_space(AT(i + 1))) return -1;
                    done = true;
                } else if (c == '\0') {
                    return -1;
                } else {
                    buf_append(u, &c, 1);
                }
            } else {
                switch (c) {
                case ' ':
                case '\n':
                case '\r':
                case '\t':
                case '\0':
                    done = true;
                    word_end = i;
                    break;
                case '"':
                case '\'':
                    /* A quote may open mid-word (a"b c" is "ab c"): the
                     * unquoted bytes so far start the unescaped copy. The
                     * reserve keeps unescaped.data non-NULL even for "". */
                    if (!copied) {
                        copied = true;
                        uoff = u->len;
                        buf_reserve(u, i - word + 1);
                        buf_append(u, buf + word, i - word);
                    }
                    if (c == '"')
                        in_dq = true;
                    else
                        in_sq = true;
                    break;
                default:
                    if (copied) buf_append(u, &c, 1);
                    break;
                }
            }
            if (i < end) i++; /* sdssplitargs: if (*p) p++ */
        }
        if (copied)
            cmd_push(cmd, argc, 0, uoff, u->len - uoff, RESP_ARG_UNESCAPED);
        else
            cmd_push(cmd, argc, 0, word, word_end - word, 0);
        argc++;
    }
#undef AT
}

static int64_t parse_inline(const resp_limits_t *lim, const char *buf, size_t len, resp_cmd_t *cmd,
                            const char **err, size_t *need)
{
    bool blocked;
    size_t nl = find_eol(buf, 0, len, '\n', &blocked);
    if (nl == NOT_FOUND) {
        /* As in Redis the limit applies only while the line is incomplete:
         * a longer line that arrives whole is accepted. */
        if (len > lim->max_inline_len) return parse_fail(cmd, err, ERR_BIG_INLINE);
        return parse_more(cmd, need, line_need(0, len, blocked, lim->max_inline_len));
    }
    /* "\r\n" and a lone "\n" both end a line (telnet and `echo` users). */
    size_t end = nl;
    if (end > 0 && buf[end - 1] == '\r') end--;
    int argc = split_inline(cmd, buf, end);
    if (argc == -1) return parse_fail(cmd, err, ERR_QUOTES);
    if (argc < 0) return parse_fail(cmd, err, ERR_BIG_INLINE);
    cmd->argc = argc;
    return (int64_t)(nl + 1);
}

int64_t resp_parse(const resp_limits_t *lim, const char *buf, size_t len, resp_cmd_t *cmd,
                   const char **err, size_t *need)
{
    cmd->partial_arg = -1;
    if (len == 0) return parse_more(cmd, need, 1);
    /* Redis picks the form from the first byte of each request. */
    if (buf[0] == '*') return parse_multibulk(lim, buf, len, cmd, err, need);
    return parse_inline(lim, buf, len, cmd, err, need);
}

/* ------------------------------------------------------------------------ */
/* Reply writers                                                            */

static const char digit_pairs[] = "00010203040506070809"
                                  "10111213141516171819"
                                  "20212223242526272829"
                                  "30313233343536373839"
                                  "40414243444546474849"
                                  "50515253545556575859"
                                  "60616263646566676869"
                                  "70717273747576777879"
                                  "80818283848586878889"
                                  "90919293949596979899";

/* Write v's decimal digits so that they end just before `end`; returns where
 * they start. Two digits per division: replies are full of integers and
 * lengths, and snprintf would cost several times more. */
static char *format_ull(char *end, unsigned long long v)
{
    while (v >= 100) {
        unsigned pair = (unsigned)(v % 100) * 2;
        v /= 100;
        end -= 2;
        memcpy(end, digit_pairs + pair, 2);
    }
    if (v >= 10) {
        end -= 2;
        memcpy(end, digit_pairs + v * 2, 2);
    } else {
        *--end = (char)('0' + v);
    }
    return end;
}

/* <prefix>[-]<digits>\r\n; 24 bytes hold the longest (prefix, '-', 20 digits,
 * CRLF). */
static void number_line(buf_t *b, char prefix, bool negative, unsigned long long magnitude)
{
    char tmp[24];
    char *end = tmp + sizeof(tmp);
    end[-2] = '\r';
    end[-1] = '\n';
    char *p = format_ull(end - 2, magnitude);
    if (negative) *--p = '-';
    *--p = prefix;
    buf_append(b, p, (size_t)(end - p));
}

static void signed_line(buf_t *b, char prefix, long long v)
{
    /* 0 - (unsigned)v is |v| even for LLONG_MIN, where -v would overflow. */
    if (v < 0)
        number_line(b, prefix, true, 0ULL - (unsigned long long)v);
    else
        number_line(b, prefix, false, (unsigned long long)v);
}

/* Simple strings and errors are one line: a CR or LF inside would end it
 * early and desynchronise the client, so they become spaces (what Redis does
 * for its formatted errors). */
static void line_reply(buf_t *b, char prefix, const char *s)
{
    size_t n = strlen(s);
    buf_reserve(b, n + 3);
    b->data[b->len++] = prefix;
    char *start = b->data + b->len;
    memcpy(start, s, n);
    for (size_t i = 0; i < n; i++)
        if (start[i] == '\r' || start[i] == '\n') start[i] = ' ';
    b->len += n;
    b->data[b->len++] = '\r';
    b->data[b->len++] = '\n';
}

void resp_simple(buf_t *b, const char *s)
{
    line_reply(b, '+', s);
}

void resp_error(buf_t *b, const char *s)
{
    line_reply(b, '-', s);
}

void resp_integer(buf_t *b, long long v)
{
    signed_line(b, ':', v);
}

void resp_bulk_header(buf_t *b, size_t n)
{
    number_line(b, '$', false, n);
}

void resp_bulk(buf_t *b, const void *p, size_t n)
{
    /* One reserve for header, body and CRLF: at most one realloc. */
    buf_reserve(b, add_sat(n, 24 + 2));
    number_line(b, '$', false, n);
    buf_append(b, p, n);
    buf_append(b, "\r\n", 2);
}

/* NULL is the null bulk, as with Redis' addReplyBulkCString(). */
void resp_bulk_cstr(buf_t *b, const char *s)
{
    if (s == NULL)
        resp_null(b);
    else
        resp_bulk(b, s, strlen(s));
}

void resp_null(buf_t *b)
{
    buf_append(b, "$-1\r\n", 5);
}

void resp_null_array(buf_t *b)
{
    buf_append(b, "*-1\r\n", 5);
}

void resp_array(buf_t *b, long long n)
{
    signed_line(b, '*', n);
}

/* ------------------------------------------------------------------------ */
/* RESP3 writers                                                            */

void resp_map(buf_t *b, int proto, long long npairs)
{
    if (proto >= 3)
        signed_line(b, '%', npairs);
    else
        signed_line(b, '*', npairs * 2);
}

void resp_set(buf_t *b, int proto, long long n)
{
    signed_line(b, proto >= 3 ? '~' : '*', n);
}

void resp_push(buf_t *b, int proto, long long n)
{
    signed_line(b, proto >= 3 ? '>' : '*', n);
}

void resp_null3(buf_t *b, int proto)
{
    if (proto >= 3)
        buf_append(b, "_\r\n", 3);
    else
        resp_null(b);
}

void resp_null_array3(buf_t *b, int proto)
{
    if (proto >= 3)
        buf_append(b, "_\r\n", 3);
    else
        resp_null_array(b);
}

void resp_bool(buf_t *b, int proto, int v)
{
    if (proto >= 3)
        buf_append(b, v ? "#t\r\n" : "#f\r\n", 4);
    else
        buf_append(b, v ? ":1\r\n" : ":0\r\n", 4);
}

void resp_double(buf_t *b, int proto, double d)
{
    char text[64];
    int n;
    if (isinf(d))
        n = snprintf(text, sizeof(text), "%s", d > 0 ? "inf" : "-inf");
    else
        n = snprintf(text, sizeof(text), "%.17g", d);
    if (proto >= 3) {
        buf_append(b, ",", 1);
        buf_append(b, text, (size_t)n);
        buf_append(b, "\r\n", 2);
    } else {
        resp_bulk(b, text, (size_t)n);
    }
}

void resp_verbatim(buf_t *b, int proto, const char *fmt, const void *p, size_t n)
{
    if (proto < 3) {
        resp_bulk(b, p, n);
        return;
    }
    buf_reserve(b, add_sat(n, 24 + 6));
    number_line(b, '=', false, n + 4);
    buf_append(b, fmt, 3);
    buf_append(b, ":", 1);
    buf_append(b, p, n);
    buf_append(b, "\r\n", 2);
}

/* ------------------------------------------------------------------------ */
/* RESP2 <-> RESP3 conversion                                               */

/* Deep enough for any reply AtticDB builds (EXEC results nest two levels);
 * deeper input is refused rather than recursed into. */
#define CONVERT_MAX_DEPTH 64

/* The signed number on the line starting at p (after the type byte), and
 * where the next line starts; -1 when malformed. */
static int read_line_number(const char *p, const char *end, long long *v, const char **next)
{
    const char *cr = memchr(p, '\r', (size_t)(end - p));
    if (!cr || cr + 1 >= end || cr[1] != '\n') return -1;
    if (!parse_ll(p, (size_t)(cr - p), v)) return -1;
    *next = cr + 2;
    return 0;
}

static const char *skip_line(const char *p, const char *end)
{
    const char *cr = memchr(p, '\r', (size_t)(end - p));
    if (!cr || cr + 1 >= end || cr[1] != '\n') return NULL;
    return cr + 2;
}

typedef struct convert {
    const char *end;
    const char *run; /* input not yet copied to out */
    buf_t *out;
    int converted;
} convert_t;

/* Replace the null at [p, p + 5) with `_`: copy the run before it first. */
static void convert_null(convert_t *cv, const char *p)
{
    buf_append(cv->out, cv->run, (size_t)(p - cv->run));
    buf_append(cv->out, "_\r\n", 3);
    cv->run = p + 5;
    cv->converted = 1;
}

/* One RESP2 value at p; returns the position after it, or NULL. */
static const char *walk_resp2(convert_t *cv, const char *p, int depth)
{
    const char *end = cv->end;
    if (p >= end || depth > CONVERT_MAX_DEPTH) return NULL;
    long long v;
    const char *next;
    switch (*p) {
    case '+':
    case '-':
    case ':':
    /* RESP3 already, from a handler that knew the client's protocol (a
     * list's `_` inside an EXEC reply): kept as it is. */
    case '_':
    case ',':
    case '#':
    case '(':
        return skip_line(p + 1, end);
    case '$':
    case '=':
    case '!':
        if (read_line_number(p + 1, end, &v, &next) != 0) return NULL;
        if (v == -1 && *p == '$') {
            convert_null(cv, p);
            return next;
        }
        if (v < 0 || (unsigned long long)v > (unsigned long long)(end - next) ||
            (size_t)(end - next) - (size_t)v < 2)
            return NULL;
        if (next[v] != '\r' || next[v + 1] != '\n') return NULL;
        return next + v + 2;
    case '*':
    case '~': /* a set, as SMEMBERS writes for RESP3 */
        if (read_line_number(p + 1, end, &v, &next) != 0) return NULL;
        if (v == -1 && *p == '*') {
            convert_null(cv, p);
            return next;
        }
        if (v < 0) return NULL;
        for (long long i = 0; i < v && next; i++)
            next = walk_resp2(cv, next, depth + 1);
        return next;
    case '%': /* a map the store wrote for a RESP3 client (HGETALL) */
        if (read_line_number(p + 1, end, &v, &next) != 0 || v < 0 || v > LLONG_MAX / 2) return NULL;
        for (long long i = 0; i < 2 * v && next; i++)
            next = walk_resp2(cv, next, depth + 1);
        return next;
    default:
        return NULL;
    }
}

int resp3_from_resp2(const char *in, size_t n, buf_t *out)
{
    /* The common replies (a bulk, an integer, +OK) need no walk at all. */
    if (n > 1 && (in[0] == '+' || in[0] == ':' || in[0] == '-' || (in[0] == '$' && in[1] != '-')))
        return 0;
    convert_t cv = {.end = in + n, .run = in, .out = out, .converted = 0};
    const char *p = walk_resp2(&cv, in, 0);
    if (p != in + n) return -1;
    if (!cv.converted) return 0;
    buf_append(out, cv.run, (size_t)(cv.end - cv.run));
    return 1;
}

/* A blob ($, = or !) at p: its length in *v (-1: $'s null) and its bytes
 * at *body; returns the position after it, or NULL when malformed or cut
 * short (a verbatim string holds at least its "txt:"). */
static const char *blob_end(const char *p, const char *end, long long *v, const char **body)
{
    const char *next;
    if (read_line_number(p + 1, end, v, &next) != 0) return NULL;
    *body = next;
    if (*v == -1 && *p == '$') return next;
    if (*v < 0 || (unsigned long long)*v > (unsigned long long)(end - next) ||
        (size_t)(end - next) - (size_t)*v < 2)
        return NULL;
    if (*p == '=' && *v < 4) return NULL;
    return next + *v + 2;
}

static const char *value_end(const char *p, const char *end, int depth)
{
    if (p >= end || depth > CONVERT_MAX_DEPTH) return NULL;
    long long v;
    const char *next;
    switch (*p) {
    case '+':
    case '-':
    case ':':
    case '_':
    case '#':
    case ',':
    case '(':
        return skip_line(p + 1, end);
    case '$':
    case '=':
    case '!':
        return blob_end(p, end, &v, &next);
    case '*':
    case '~':
    case '>':
    case '%':
    case '|':
        if (read_line_number(p + 1, end, &v, &next) != 0) return NULL;
        if (v == -1 && *p == '*') return next;
        if (v < 0) return NULL;
        for (long long i = 0; i < (*p == '%' || *p == '|' ? 2 * v : v) && next; i++)
            next = value_end(next, end, depth + 1);
        return *p == '|' && next ? value_end(next, end, depth) : next; /* the attributed value */
    default:
        return NULL;
    }
}

/* One RESP3 value at p, written to out in RESP2 form; returns the position
 * after it, or NULL. */
static const char *down_resp3(const char *p, const char *end, buf_t *out, int depth)
{
    if (p >= end || depth > CONVERT_MAX_DEPTH) return NULL;
    long long v;
    const char *next, *body;
    switch (*p) {
    case '+':
    case '-':
    case ':':
        if (!(next = skip_line(p + 1, end))) return NULL;
        buf_append(out, p, (size_t)(next - p));
        return next;
    case '_':
        if (!(next = skip_line(p + 1, end))) return NULL;
        resp_null(out);
        return next;
    case '#':
        if (!(next = skip_line(p + 1, end))) return NULL;
        buf_append(out, p[1] == 't' ? ":1\r\n" : ":0\r\n", 4);
        return next;
    case ',':
    case '(':
        if (!(next = skip_line(p + 1, end))) return NULL;
        resp_bulk(out, p + 1, (size_t)(next - 2 - (p + 1)));
        return next;
    case '$':
    case '=':
    case '!':
        if (!(next = blob_end(p, end, &v, &body))) return NULL;
        if (v == -1) {
            resp_null(out);
        } else if (*p == '=') {
            resp_bulk(out, body + 4, (size_t)v - 4); /* drop "txt:" */
        } else if (*p == '!') {
            buf_append(out, "-", 1); /* blob error: a one-line error in RESP2 */
            buf_append(out, body, (size_t)v);
            buf_append(out, "\r\n", 2);
        } else {
            buf_append(out, p, (size_t)(next - p));
        }
        return next;
    case '*':
    case '~':
    case '>':
    case '%':
    case '|':
        if (read_line_number(p + 1, end, &v, &next) != 0) return NULL;
        if (v == -1 && *p == '*') {
            resp_null_array(out);
            return next;
        }
        if (v < 0) return NULL;
        if (*p == '|') {
            /* An attribute: RESP2 has no place for it; skip its pairs. */
            for (long long i = 0; i < 2 * v && next; i++)
                next = value_end(next, end, depth + 1);
            return next ? down_resp3(next, end, out, depth) : NULL;
        }
        long long items = *p == '%' ? 2 * v : v;
        resp_array(out, items);
        for (long long i = 0; i < items && next; i++)
            next = down_resp3(next, end, out, depth + 1);
        return next;
    default:
        return NULL;
    }
}

const char *resp_value_end(const char *p, const char *end)
{
    return value_end(p, end, 0);
}

int resp3_to_resp2(const char *in, size_t n, buf_t *out)
{
    const char *p = in, *end = in + n;
    while (p && p < end)
        p = down_resp3(p, end, out, 0);
    return p == end ? 0 : -1;
}

size_t resp_error_clean(char *s)
{
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == '\r' || s[n - 1] == '\n'))
        s[--n] = '\0';
    for (size_t i = 0; i < n; i++)
        if (s[i] == '\r' || s[i] == '\n') s[i] = ' ';
    return n;
}
