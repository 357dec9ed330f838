/*
 * diff_wire.h - what the differential test (test_diff.c) needs to talk to
 * two servers byte for byte: a growable buffer, a printable escape of
 * binary data, a raw RESP connection that returns each reply as the exact
 * bytes received, a small parser of those bytes (for the comparisons that
 * cannot be byte-exact: sets of keys, TTLs), and a redis-server process of
 * our own (free port, temporary directory, own process group).
 */
#ifndef ATTIC_DIFF_WIRE_H
#define ATTIC_DIFF_WIRE_H

#include <stddef.h>
#include <sys/types.h>

typedef struct wire_buf {
    char *p;
    size_t len, cap;
} wire_buf_t;

void wire_buf_add(wire_buf_t *b, const void *p, size_t n);
void wire_buf_printf(wire_buf_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void wire_buf_free(wire_buf_t *b);

/* Printable form of bytes ("\r\n", "\x00" ...) in quotes, cut after max
 * bytes with the total length noted; malloc'd. */
char *wire_escape(const char *p, size_t n, size_t max);

typedef struct wire_conn {
    int fd;
    wire_buf_t in; /* received, not yet returned */
} wire_conn_t;

/* Connect to 127.0.0.1:port; reads and writes time out after timeout_s
 * seconds. NULL on failure. */
wire_conn_t *wire_open(int port, int timeout_s);
void wire_close(wire_conn_t *c);

/* Send one command (RESP array of bulk strings). 0 or -1. */
int wire_send(wire_conn_t *c, int argc, char *const *argv, const size_t *lens);

/* Read one whole reply: its exact bytes, malloc'd and NUL-terminated, length
 * in *len. On EOF, timeout or bytes that are not RESP: a description that
 * starts with '<' (wire_is_failure). */
char *wire_reply(wire_conn_t *c, size_t *len);

static inline int wire_is_failure(const char *reply)
{
    return reply[0] == '<';
}

/* A parsed reply; strings point into the bytes parsed (keep them). */
typedef struct wire_val {
    char type;          /* '+', '-', ':', '$', '*', '_' (RESP3 null) ... */
    long long integer;  /* ':' */
    const char *str;    /* '+', '-', '$' (NULL for a null bulk) */
    size_t len;
    long long n;        /* '*': element count, -1 for a null array */
    struct wire_val *elem;
} wire_val_t;

/* Parse one reply from p[0..n); 0 on success, -1 if it is not one
 * complete RESP value. Free with wire_val_free. */
int wire_parse(const char *p, size_t n, wire_val_t *out);
void wire_val_free(wire_val_t *v);

/* A redis-server of our own. */
typedef struct wire_redis {
    pid_t pid; /* also its process group */
    int port;
    char dir[64];
} wire_redis_t;

/* REDIS_SERVER, else redis-server on PATH; NULL when there is none. */
const char *wire_redis_path(void);

/* Start on a free port with a fresh temporary directory, no persistence;
 * wait until it answers PING (10 s). 0, or -1 (and nothing left behind). */
int wire_redis_start(wire_redis_t *r);

/* SIGKILL its group, reap it, remove its directory. Idempotent. */
void wire_redis_stop(wire_redis_t *r);

#endif
