/*
 * log.c - diagnostic logging for every process (log.h). Each line is built in
 * a local buffer and written with one write(2), so lines from different
 * processes sharing the file never interleave mid-line.
 */
#include "log.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static char log_role = 'M';
static int log_level = LOG_NOTICE;
static int log_fd = 2;

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
        log_fd = 2;
        return 0;
    }
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return -1;
    log_fd = fd;
    return 0;
}

void log_msg(int level, const char *fmt, ...)
{
    if (level < log_level) return;
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
