/*
 * bench_resp.c - request encoding and reply framing for atticdb-bench.
 *
 * Runs in the benchmark client. The scanner is re-run from the start of the
 * buffer whenever bytes arrive: with one request in flight per connection a
 * reply is a few bytes (or, for GET, one value), so rescanning costs less than
 * keeping parser state, and it cannot get out of step.
 */
#include "bench_resp.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void bench_buf_free(bench_buf_t *b)
{
    free(b->data);
    memset(b, 0, sizeof(*b));
}

static int buf_reserve(bench_buf_t *b, size_t extra)
{
    if (b->len + extra <= b->cap) return 0;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + extra)
        cap *= 2;
    char *p = realloc(b->data, cap);
    if (!p) return -1;
    b->data = p;
    b->cap = cap;
    return 0;
}

int bench_resp_append_cmd(bench_buf_t *b, int argc, const char *const *argv, const size_t *lens)
{
    size_t need = 24;
    for (int i = 0; i < argc; i++)
        need += lens[i] + 24;
    if (buf_reserve(b, need) < 0) return -1;
    char *p = b->data + b->len;
    p += sprintf(p, "*%d\r\n", argc);
    for (int i = 0; i < argc; i++) {
        p += sprintf(p, "$%zu\r\n", lens[i]);
        memcpy(p, argv[i], lens[i]);
        p += lens[i];
        *p++ = '\r';
        *p++ = '\n';
    }
    b->len = (size_t)(p - b->data);
    return 0;
}

/* Finds the CRLF ending the line that starts at `pos`; returns the index of
 * the '\r', or -1 if the line is not complete yet. */
static long line_end(const char *buf, size_t len, size_t pos)
{
    for (size_t i = pos; i + 1 < len; i++)
        if (buf[i] == '\r' && buf[i + 1] == '\n') return (long)i;
    return -1;
}

/* Parses the signed decimal in buf[from..to). Returns 0 or -1. */
static int parse_len(const char *buf, size_t from, size_t to, long long *out)
{
    if (from >= to || to - from > 20) return -1;
    int neg = 0;
    size_t i = from;
    if (buf[i] == '-') {
        neg = 1;
        i++;
        if (i == to) return -1;
    }
    long long v = 0;
    for (; i < to; i++) {
        if (buf[i] < '0' || buf[i] > '9') return -1;
        if (v > (INT64_MAX - 9) / 10) return -1;
        v = v * 10 + (buf[i] - '0');
    }
    *out = neg ? -v : v;
    return 0;
}

static int scan_at(const char *buf, size_t len, size_t pos, int depth, size_t *end, int *kind)
{
    if (depth > 16) return -1;
    if (pos >= len) return 0;
    long eol = line_end(buf, len, pos);
    if (eol < 0) return 0;
    size_t after = (size_t)eol + 2;
    long long n;
    switch (buf[pos]) {
    case '+':
        *kind = BENCH_REPLY_VALUE;
        *end = after;
        return 1;
    case '-':
        *kind = BENCH_REPLY_ERROR;
        *end = after;
        return 1;
    case ':':
        if (parse_len(buf, pos + 1, (size_t)eol, &n) < 0) return -1;
        *kind = BENCH_REPLY_VALUE;
        *end = after;
        return 1;
    case '$':
        if (parse_len(buf, pos + 1, (size_t)eol, &n) < 0 || n < -1) return -1;
        if (n == -1) {
            *kind = BENCH_REPLY_NIL;
            *end = after;
            return 1;
        }
        if (len - after < (size_t)n + 2) return 0;
        if (buf[after + n] != '\r' || buf[after + n + 1] != '\n') return -1;
        *kind = BENCH_REPLY_VALUE;
        *end = after + (size_t)n + 2;
        return 1;
    case '*': {
        if (parse_len(buf, pos + 1, (size_t)eol, &n) < 0 || n < -1) return -1;
        if (n == -1) {
            *kind = BENCH_REPLY_NIL;
            *end = after;
            return 1;
        }
        size_t at = after;
        for (long long i = 0; i < n; i++) {
            int sub_kind;
            int r = scan_at(buf, len, at, depth + 1, &at, &sub_kind);
            if (r <= 0) return r;
        }
        *kind = BENCH_REPLY_VALUE;
        *end = at;
        return 1;
    }
    default:
        return -1;
    }
}

int bench_resp_scan(const char *buf, size_t len, size_t *used, int *kind)
{
    size_t end = 0;
    int k = BENCH_REPLY_VALUE;
    int r = scan_at(buf, len, 0, 0, &end, &k);
    if (r == 1) {
        *used = end;
        *kind = k;
    }
    return r;
}
