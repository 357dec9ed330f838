/*
 * conn_helpers.h - what test_conn_protocol and test_conn_admin share:
 * raw connections to a server (send bytes, read whole RESP2/RESP3 replies
 * as their exact bytes) and the servers of a test: an atticdb-server
 * started by the harness (S), and processes of our own (proc_t: the
 * reference redis-server R, and an atticdb-server A the harness cannot wait
 * for) that teardown (a test's .fini) stops and removes.
 * Environment: ATTICDB_SERVER (atticdb_path).
 */
#ifndef ATTIC_TEST_CONN_HELPERS_H
#define ATTIC_TEST_CONN_HELPERS_H

#include <stddef.h>
#include <sys/types.h>

#include "harness.h"

/* ---- raw connections ---------------------------------------------------- */

typedef struct raw {
    int fd;
    char *buf;
    size_t len, cap;
} raw_t;

/* Connect to 127.0.0.1:port (TCP_NODELAY) from loopback address src
 * (NULL: any); NULL on failure. */
raw_t *raw_open_from(const char *src, int port);
/* raw_open_from(NULL, port). */
raw_t *raw_open(int port);
void raw_close(raw_t *r);
/* Send all of s[0, n) (stops quietly if the peer is gone). */
void raw_send(raw_t *r, const char *s, size_t n);
/* Read the next `count` replies (2 s timeout); returns them as one
 * NUL-terminated string (caller frees), "<EOF>" appended if the server
 * closed the connection first. */
char *raw_read(raw_t *r, int count);
/* Send an inline command line (CRLF added), read one reply. The returned
 * string lives until the next call. */
const char *cmd(raw_t *r, const char *fmt, ...);
/* True when the server closed r (EOF within 5 s); what it sent before is
 * read and dropped. */
int raw_closed(raw_t *r);
/* "id=" of a CLIENT ID reply (":<n>\r\n"); -1 if not an integer reply. */
long long int_reply(const char *s);

/* ---- servers ------------------------------------------------------------ */

/* A process of our own (a redis-server, or an atticdb-server the harness
 * can't wait for because it answers PING with NOAUTH): its own process
 * group, waits until a connection gets `ready_prefix` for PING. */
typedef struct proc {
    pid_t pid;
    int port;
    char dir[128];
} proc_t;

extern srv_t S;  /* the atticdb-server of a test (start) */
extern proc_t R; /* the reference Redis, when present */
extern proc_t A; /* an atticdb-server the harness can't start (NOAUTH, config file) */

/* Start S with extra arguments (may be NULL); asserts it started. */
void start(const char *extra);
/* Start path [first] --port <free> --dir <new temp dir> args... (args
 * NULL-terminated, may be NULL) in its own process group; 0 once a
 * connection gets a reply starting with ready_prefix for PING (5 s), or -1. */
int proc_start(proc_t *p, const char *path, const char *first, const char *const *args,
               const char *ready_prefix);
/* SIGTERM its group (SIGKILL after 5 s), reap it, remove its directory. */
void proc_stop(proc_t *p);
/* ATTICDB_SERVER, else ./atticdb-server. */
const char *atticdb_path(void);
/* Stop R and A and every server the harness started (a test's .fini). */
void teardown(void);

#endif
