/*
 * log.c - diagnostic logging for every process (log.h). Each line is built in
 * a local buffer and written with one write(2), so lines from different
 * processes sharing the file never interleave mid-line.
 *
 * Log rotation (logrotate: rename, then SIGHUP): every process inherits the
 * master's descriptor, so all of them must move to the new file. The master
 * reopens on SIGHUP and bumps a generation counter in shared memory
 * (log_follow_generation); each process compares it before writing a line
 * and reopens the path when it moved. No signal reaches the children, so
 * none of their blocking calls is interrupted, and a process that logs
 * nothing keeps nothing but an idle descriptor of the old file.
 */
#include "log.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static char log_role = 'M';
static int log_level = LOG_NOTICE;
static int log_fd = 2;
static char *log_path;                   /* NULL = stderr */
static _Atomic uint32_t *log_generation; /* shared; NULL = never reopen */
static uint32_t log_generation_seen;

void log_set_role(char role)
{
    log_role = role;
}

void log_set_level(int level)
{
    log_level = level;
}

int log_set_file(const char *path)
{
    if (!path || !*path) {
        if (log_fd > 2) close(log_fd);
        log_fd = 2;
        free(log_path);
        log_path = NULL;
        return 0;
    }
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return -1;
    char *copy = strdup(path);
    if (!copy) {
        close(fd);
        return -1;
    }
    if (log_fd > 2) close(log_fd);
    log_fd = fd;
    free(log_path);
    log_path = copy;
    return 0;
}

int log_reopen(void)
{
    if (!log_path) return 0;
    int fd = open(log_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return -1; /* keep writing to the old file: better than nothing */
    if (log_fd > 2) close(log_fd);
    log_fd = fd;
    return 0;
}

void log_follow_generation(_Atomic uint32_t *generation)
{
    log_generation = generation;
    log_generation_seen = generation ? atomic_load(generation) : 0;
}

/* Before a line: reopen the file if the master asked since the last one. */
static void reopen_if_asked(void)
{
    if (!log_generation) return;
    uint32_t g = atomic_load_explicit(log_generation, memory_order_acquire);
    if (g == log_generation_seen) return;
    log_generation_seen = g;
    log_reopen();
}

void log_msg(int level, const char *fmt, ...)
{
    if (level < log_level) return;
    reopen_if_asked();
    static const char marks[] = ".-*#";
    char line[1024];
    struct timeval tv;
    gettimeofday(&tv, NULL);
    struct tm tm;
    localtime_r(&tv.tv_sec, &tm);
    int n = snprintf(line, sizeof(line), "%d:%c ", (int)getpid(), log_role);
    n += (int)strftime(line + n, sizeof(line) - (size_t)n, "%d %b %Y %H:%M:%S", &tm);
    n += snprintf(line + n, sizeof(line) - (size_t)n, ".%03d %c ", (int)(tv.tv_usec / 1000),
                  marks[level & 3]);
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
    va_end(ap);
    if (m < 0) m = 0;
    n += m;
    if (n > (int)sizeof(line) - 2) n = (int)sizeof(line) - 2;
    line[n++] = '\n';
    ssize_t w = write(log_fd, line, (size_t)n);
    (void)w; /* nowhere to report a failed log write */
}
