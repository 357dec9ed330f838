/*
 * log.h - the server's own diagnostic log (not the data log). One line per
 * event, prefixed with pid, role and time, as Redis does:
 *   12345:L 02 Dec 2026 11:52:01.123 * message
 */
#ifndef ATTIC_LOG_H
#define ATTIC_LOG_H

#include <stdatomic.h>
#include <stdint.h>

enum { LOG_DEBUG = 0, LOG_VERBOSE = 1, LOG_NOTICE = 2, LOG_WARNING = 3 };

/* Set this process's role letter (M master, L logger, S store, F frontend). */
void log_set_role(char role);
void log_set_level(int level);
/* Log to this file (opened for append) instead of stderr; NULL = stderr.
 * Returns 0, or -1 with errno set (the previous destination stays). */
int log_set_file(const char *path);
/* Open the file's path again (logrotate renamed it): 0, or -1 with errno
 * set, the old file still in use. Nothing to do when logging to stderr. */
int log_reopen(void);
/* Reopen before the next line whenever *generation moved (the master bumps
 * it in shared memory on SIGHUP, after reopening its own). NULL = never. */
void log_follow_generation(_Atomic uint32_t *generation);

void log_msg(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)
#define log_info(...)  log_msg(LOG_NOTICE, __VA_ARGS__)
#define log_warn(...)  log_msg(LOG_WARNING, __VA_ARGS__)

/* Exit statuses the master understands. */
#define EXIT_FATAL  2 /* configuration or data problem: do not respawn, stop the server */
#define EXIT_IOFAIL 3 /* the logger fail-stopped on an I/O error */
/* The replication process wrote a leader's full copy into incoming/: the
 * master restarts the server on it (D50). */
#define EXIT_FULLCOPY 5

#endif
