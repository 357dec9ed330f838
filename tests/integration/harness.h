/*
 * harness.h - start and stop a real atticdb-server for integration tests:
 * a free loopback port, a fresh temporary data directory, its own process
 * group (so a test can SIGKILL the whole server at once), and cleanup by pid.
 */
#ifndef ATTIC_TEST_HARNESS_H
#define ATTIC_TEST_HARNESS_H

#include <hiredis/hiredis.h>
#include <sys/types.h>

typedef struct srv {
    pid_t pid; /* the master; also the process group id */
    int port;
    char dir[256];   /* data directory (temporary) */
    char log[300];   /* the server's log file */
    char extra[512]; /* extra arguments, space separated, reused by srv_restart */
    char conf[256];  /* config file given first, "" = none (srv_start_conf) */
} srv_t;

/* A free TCP port on 127.0.0.1 (bound and released). */
int srv_free_port(void);

/* Fork and exec argv[0] with argv in its own process group (the pid),
 * stdin/stdout/stderr on /dev/null, killed when the test process dies.
 * Returns the pid, or -1. */
pid_t srv_spawn(char *const *argv);

/* Start a server on a new temp dir with extra arguments ("--frontends 2 ...",
 * may be NULL); wait until it answers PING. Returns 0 or -1. */
int srv_start(srv_t *s, const char *extra);

/* srv_start with a config file as the first argument (the harness's own
 * --port, --bind, --dir and --logfile still follow it). */
int srv_start_conf(srv_t *s, const char *conf, const char *extra);

/* Wait up to `seconds` for the master to exit by itself (SHUTDOWN); its
 * exit status, or -1 if it is still running. */
int srv_wait_exit(srv_t *s, int seconds);

/* srv_start with ATTICDB_TEST_FAULTS=faults (common/io_fault.h) in the
 * server's environment only. */
int srv_start_faults(srv_t *s, const char *faults, const char *extra);

/* Start again on the same dir and port (after a stop or kill); returns
 * once the store serves too (INFO loading:0), or, if it does not within
 * 30 s, once PING is answered. */
int srv_restart(srv_t *s);

/* SIGTERM and wait for exit; returns the exit status (or -1 on timeout,
 * after which the group is SIGKILLed). */
int srv_stop(srv_t *s);

/* SIGKILL the whole process group and reap the master. */
void srv_kill_all(srv_t *s);

/* Remove the data directory (after stop/kill). */
void srv_cleanup(srv_t *s);

/* Stop and remove every server this process started and did not clean up
 * yet. Use it as the suite's .fini, so a failed assertion leaks nothing. */
void srv_cleanup_all(void);

/* Connect with hiredis (2 s timeout); NULL on failure. */
redisContext *srv_connect(const srv_t *s);

/* The frontend that serves connection c (INFO server's frontend: field),
 * or -1 when INFO does not say. */
int srv_frontend_of(redisContext *c);

/* The numeric value of `field:` in an INFO text, -1 when missing. */
long long srv_info_text_num(const char *text, const char *field);

/* INFO section's numeric field, asked on a new connection to s; -1 when
 * s does not answer (a server restarting) or has no such field. */
long long srv_info_num(const srv_t *s, const char *section, const char *field);

/* A connection that landed on frontend fe (the kernel spreads them over
 * the SO_REUSEPORT sockets: up to 200 tries), or NULL. */
redisContext *srv_connect_on(const srv_t *s, int fe);

/* Pids of the server's children whose /proc cmdline starts with title
 * (e.g. "atticdb-server: frontend"); returns how many were found. */
int srv_find_children(const srv_t *s, const char *title, pid_t *out, int max);

/* True when a line of the server's log contains needle (and also `also`,
 * when not NULL). */
int srv_log_contains(const srv_t *s, const char *needle, const char *also);

/* The last lines of the server's log (for assertion messages). */
const char *srv_log_tail(const srv_t *s, char *buf, size_t len);
/* The same for the server this process started on port (a connection's
 * c->tcp.port), "" when none: which server a failed query went to. */
const char *srv_log_tail_of_port(int port, char *buf, size_t len);

/* Run a program built beside atticdb-server ("atticdb-server",
 * "atticdb-check") with args, its stdout and stderr into out; returns its
 * exit status (-1 if it did not exit normally). */
int srv_run_tool(const char *tool, const char *args, char *out, size_t outlen);

/* srv_find_children, retried for up to 2 s until it finds `want` (a child
 * renames itself when it first runs, which may be just after the server
 * answered PING). Returns the last count found. */
int srv_wait_children(const srv_t *s, const char *title, pid_t *out, int max, int want);

/* Run a command and return the reply as its RESP text in buf, for
 * byte-exact checks. Returns buf. */
const char *srv_cmd_raw(redisContext *c, char *buf, size_t len, const char *fmt, ...);

/* The value of `field` ("atticdb_log_state") in INFO persistence, into out;
 * "" when the field is missing, "<error>" when the command failed. Returns out. */
const char *srv_info_persistence(redisContext *c, const char *field, char *out, size_t n);

/* Whether an RSS bound means anything: under AddressSanitizer (CI's second
 * pass builds server and tests with it) freed memory waits in its
 * quarantine (up to 256 MB), so growth and peaks measure the sanitizer, not
 * the server; the plain pass checks the bounds. */
#if defined(__SANITIZE_ADDRESS__)
#define SRV_RSS_BOUNDS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SRV_RSS_BOUNDS 0
#endif
#endif
#ifndef SRV_RSS_BOUNDS
#define SRV_RSS_BOUNDS 1
#endif

#endif
