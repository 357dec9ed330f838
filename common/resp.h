/*
 * resp.h - the Redis protocol codec: an incremental request parser, RESP2
 * reply writers, RESP3 writers that degrade to RESP2 for clients that did not
 * ask for RESP3 (HELLO 3), and converters between the two.
 *
 * The parser reads requests from a contiguous buffer that grows as bytes
 * arrive: it either returns one whole command, or says it needs more bytes,
 * or reports a protocol error with Redis' own error text. It never reads past
 * `len` and never trusts a length it has not checked against the limits, so
 * malformed or hostile input cannot crash it (ARCHITECTURE.md, contract 7).
 * Both forms are accepted: multibulk (`*2\r\n$3\r\nGET\r\n$1\r\nk\r\n`) and
 * inline (`PING\r\n`, as typed in telnet, with redis-cli style quoting).
 */
#ifndef ATTIC_RESP_H
#define ATTIC_RESP_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"

typedef struct resp_limits {
    int64_t max_bulk_len;  /* proto-max-bulk-len (Redis default 512 MiB) */
    int64_t max_args;      /* most arguments in one multibulk (Redis: 1024*1024) */
    size_t max_inline_len; /* longest inline request line (Redis: 64 KiB) */
} resp_limits_t;

/* Redis' defaults. */
#define RESP_LIMITS_DEFAULT                                                                        \
    {                                                                                              \
        512ll * 1024 * 1024, 1024 * 1024, 64 * 1024                                                \
    }

typedef struct resp_arg {
    size_t off; /* offset of the argument's first byte in the parsed buffer */
    size_t len;
} resp_arg_t;

typedef struct resp_cmd {
    int argc;
    resp_arg_t *args; /* argc entries, owned by the cmd (grown with realloc) */
    size_t cap;
    /* Inline arguments with quotes or escapes are unescaped into this buffer;
     * for them args[i].off is an offset into `unescaped` and the
     * RESP_ARG_UNESCAPED bit is set in the matching `flags` entry. */
    buf_t unescaped;
    unsigned char *flags;
    /* Storage for an error text that quotes input ("expected '$', got 'X'");
     * *err may point here, valid until the next resp_parse on this cmd. */
    char err_text[48];
    /* After RESP_NEED_MORE in the bytes of a multibulk's bulk: that bulk,
     * so a caller can take a large value as it arrives (D48). Its index
     * (-1 when the wait is elsewhere), the request's argument count, the
     * offsets of its '$' and of its first byte, and its declared length;
     * args[0, partial_arg) are the arguments before it. */
    int partial_arg;
    int partial_count;
    size_t partial_hdr, partial_data;
    size_t partial_len;
} resp_cmd_t;

#define RESP_ARG_UNESCAPED 1u

void resp_cmd_init(resp_cmd_t *cmd);
void resp_cmd_free(resp_cmd_t *cmd);

/* Pointer to argument i's bytes, given the buffer that was parsed. */
const char *resp_arg_ptr(const resp_cmd_t *cmd, const char *buf, int i);

#define RESP_NEED_MORE 0
#define RESP_ERROR     (-1)

/*
 * Parse one command at the start of buf[0, len).
 * Returns the number of bytes the command took (> 0) and fills *cmd, whose
 * argc may be 0 (an empty inline line or `*0`, which Redis skips silently);
 * RESP_NEED_MORE when the command is not complete yet (call again with the
 * same start and more bytes); or RESP_ERROR with *err set to Redis' error text
 * without the leading '-' and trailing CRLF, e.g. "ERR Protocol error: invalid
 * bulk length". After an error the caller replies and closes the connection.
 * *need (optional) is set on RESP_NEED_MORE to the total bytes known to be
 * required so far, so a caller can skip re-parsing until that many arrived.
 */
int64_t resp_parse(const resp_limits_t *lim, const char *buf, size_t len, resp_cmd_t *cmd,
                   const char **err, size_t *need);

/* Reply writers: append one RESP2 value to b. A simple string or error is
 * one line, so CR and LF in s are written as spaces; resp_bulk_cstr(b, NULL)
 * writes the null bulk, as Redis' addReplyBulkCString() does. */
/* Make the NUL-terminated error text s safe to send as one line, as Redis
 * does with the errors it formats: CR and LF at its end are dropped, the
 * others become spaces. Returns the new length. */
size_t resp_error_clean(char *s);

void resp_simple(buf_t *b, const char *s);         /* +s\r\n */
void resp_error(buf_t *b, const char *s);          /* -s\r\n */
void resp_integer(buf_t *b, long long v);          /* :v\r\n */
void resp_bulk(buf_t *b, const void *p, size_t n); /* $n\r\n...\r\n */
void resp_bulk_cstr(buf_t *b, const char *s);
void resp_null(buf_t *b);                  /* $-1\r\n */
void resp_null_array(buf_t *b);            /* *-1\r\n */
void resp_array(buf_t *b, long long n);    /* *n\r\n */
void resp_bulk_header(buf_t *b, size_t n); /* $n\r\n (body and CRLF follow) */

/* RESP3 writers. `proto` is the connection's protocol (2 or 3); with 2 each
 * writes the RESP2 form Redis 7 sends to a RESP2 client. */
void resp_map(buf_t *b, int proto, long long npairs); /* %n, or *2n */
void resp_set(buf_t *b, int proto, long long n);      /* ~n, or *n */
void resp_push(buf_t *b, int proto, long long n);     /* >n, or *n */
void resp_null3(buf_t *b, int proto);                 /* _, or $-1 */
void resp_null_array3(buf_t *b, int proto);           /* _, or *-1 */
void resp_bool(buf_t *b, int proto, int v);           /* #t/#f, or :1/:0 */
/* ,<%.17g> (inf, -inf, nan spelled so), or the same text as a bulk string */
void resp_double(buf_t *b, int proto, double d);
/* =<n+4>\r\n<fmt>:<text>, or a bulk string of the text alone; fmt is three
 * characters ("txt", "mkd"). */
void resp_verbatim(buf_t *b, int proto, const char *fmt, const void *p, size_t n);

/*
 * Convert one complete RESP2 reply (as the store writes it) for a RESP3
 * client: every null bulk ($-1) and null array (*-1), at any depth inside
 * arrays (and maps, which the store writes for RESP3 clients: HGETALL),
 * becomes the RESP3 null `_`. Returns 1 when something was converted
 * (the result was appended to out), 0 when the reply needs no change (out
 * untouched: send the input as it is), -1 when in[0, n) is not exactly one
 * well-formed RESP2 value (out may hold partial output then). A reply that
 * starts with a bulk, an integer, a status or an error is returned as 0 at
 * once, unchecked: it holds no null to convert.
 */
int resp3_from_resp2(const char *in, size_t n, buf_t *out);

/*
 * The reverse, for RESP3 text (built-in replies kept in RESP3 form) sent to a
 * RESP2 client: maps become flat arrays of 2n, sets and pushes arrays, `_`
 * the null bulk, booleans 1/0, doubles, big numbers and verbatim strings bulk
 * strings (verbatim without its "txt:" prefix), attributes are dropped.
 * Appends to out; returns 0, or -1 if in[0, n) is not a sequence of
 * well-formed RESP3 values.
 */
int resp3_to_resp2(const char *in, size_t n, buf_t *out);

/* The end of the one RESP2 or RESP3 value at p, or NULL when p[0, end)
 * does not hold a whole one (or it nests deeper than 64). */
const char *resp_value_end(const char *p, const char *end);

#endif
