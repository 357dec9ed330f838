/*
 * procstat.c - see procstat.h. Run by the frontends (INFO) and the store
 * (MEMORY STATS); read-only, /proc only, nothing kept between calls.
 */
#include "procstat.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static uint64_t proc_held(int pid);

int proc_add_usage(int pid, proc_usage_t *u)
{
    char path[64], buf[1024];
    snprintf(path, sizeof(path), "/proc/%d/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    char *p = strrchr(buf, ')'); /* the name may hold spaces */
    if (!p) return -1;
    unsigned long long utime = 0, stime = 0;
    long long rss = 0;
    /* fields after the name: state(3) ... utime(14) stime(15) ... rss(24) */
    int field = 2;
    char *save = NULL;
    for (char *tok = strtok_r(p + 1, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
        field++;
        if (field == 14)
            utime = strtoull(tok, NULL, 10);
        else if (field == 15)
            stime = strtoull(tok, NULL, 10);
        else if (field == 24) {
            rss = strtoll(tok, NULL, 10);
            break;
        }
    }
    double hz = (double)sysconf(_SC_CLK_TCK);
    u->user += (double)utime / hz;
    u->sys += (double)stime / hz;
    uint64_t mem = proc_held(pid);
    u->rss +=
        mem != UINT64_MAX ? mem : (uint64_t)(rss > 0 ? rss : 0) * (uint64_t)sysconf(_SC_PAGESIZE);
    return 0;
}

/* Resident bytes the process holds: anonymous and shared-memory pages
 * (RssAnon + RssShmem), not file pages. The store maps the log's segments
 * to copy values out of the page cache (D59): those pages are the kernel's
 * cache, reclaimable, and would otherwise count as the server's memory as
 * soon as they were read. UINT64_MAX when /proc does not say (before
 * Linux 4.5). */
static uint64_t proc_held(int pid)
{
    char path[64], line[256];
    snprintf(path, sizeof(path), "/proc/%d/status", pid);
    FILE *f = fopen(path, "r");
    if (!f) return UINT64_MAX;
    unsigned long long kb, anon = 0, shmem = 0;
    int seen = 0;
    while (fgets(line, sizeof(line), f)) {
        if (sscanf(line, "RssAnon: %llu", &kb) == 1)
            anon = kb, seen |= 1;
        else if (sscanf(line, "RssShmem: %llu", &kb) == 1)
            shmem = kb, seen |= 2;
    }
    fclose(f);
    return seen == 3 ? (uint64_t)(anon + shmem) * 1024 : UINT64_MAX;
}

void proc_server_usage(int master_pid, proc_usage_t *u)
{
    memset(u, 0, sizeof(*u));
    char path[96];
    snprintf(path, sizeof(path), "/proc/%d/task/%d/children", master_pid, master_pid);
    FILE *f = fopen(path, "r");
    if (!f || proc_add_usage(master_pid, u) != 0) {
        if (f) fclose(f);
        memset(u, 0, sizeof(*u));
        proc_add_usage((int)getpid(), u);
        return;
    }
    int pid;
    while (fscanf(f, "%d", &pid) == 1)
        proc_add_usage(pid, u);
    fclose(f);
}
