/*
 * procstat.h - memory and CPU of the server's processes, read from /proc
 * (INFO memory and cpu in the frontends, MEMORY STATS in the store).
 */
#ifndef ATTIC_PROCSTAT_H
#define ATTIC_PROCSTAT_H

#include <stdint.h>

typedef struct proc_usage {
    uint64_t rss;     /* resident bytes held: anonymous and shared memory, not file pages */
    double user, sys; /* CPU seconds */
} proc_usage_t;

/* Add process pid's RSS and CPU times to *u. 0, or -1 (no such process). */
int proc_add_usage(int pid, proc_usage_t *u);

/* The whole server: the master master_pid and all its children. Falls back
 * to the calling process alone when the master's list of children can't be
 * read. */
void proc_server_usage(int master_pid, proc_usage_t *u);

#endif
