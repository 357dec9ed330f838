/*
 * info.c - INFO and the command statistics behind INFO commandstats and
 * INFO stats, in the frontends.
 *
 * Every frontend counts its own commands in its own table in shared memory
 * (shm_fe_stats_t: one writer, so plain loads and stores, no atomic
 * read-modify-write on the hot path); INFO adds the tables of all
 * frontends, so any frontend gives the server's totals. CONFIG RESETSTAT
 * bumps an epoch instead of writing into other frontends' tables: each
 * frontend zeroes its own table when it sees the new epoch (it looks once
 * per batch of requests or completions, before counting them:
 * fe_stats_sync_epoch), and INFO skips a table still marked with an old
 * one.
 *
 * What a command's "usec" is: see slowlog.c (the time from its parsed
 * request to its reply being ready, durability wait included).
 *
 * The text follows Redis 7.0's field names and section order; fields Redis
 * has and AtticDB has no meaning for are reported with Redis' idle values
 * (0, ok, no-failover), and AtticDB's own figures carry an atticdb_ prefix.
 */
#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "frontend/cmd/cmd.h"
#include "frontend/core/core.h"
#include "strutil.h"
#include "frontend/admin/admin.h"
#include "frontend/admin/sha256.h"
#include "backup.h"
#include "procstat.h"
#include "rcache.h"

/* ---- statistics ---- */

static inline void add_u64(_Atomic uint64_t *p, uint64_t v)
{
    /* One writer per table: a load and a store, not a locked add. */
    atomic_store_explicit(p, atomic_load_explicit(p, memory_order_relaxed) + v,
                          memory_order_relaxed);
}

/* An EXEC's command indexes (fe_conn_admin_t.exec_cur and its queue). */
static void exec_idx_add(fe_conn_t *c, unsigned idx)
{
    fe_exec_idx_t *x = c->admin->exec_cur;
    if (!x || x->n == x->cap) {
        uint32_t cap = x ? 2 * x->cap : 8;
        fe_exec_idx_t *y = realloc(x, sizeof(*y) + cap * sizeof(y->idx[0]));
        if (!y) abort();
        if (!x) y->n = 0, y->next = NULL;
        y->cap = cap;
        c->admin->exec_cur = x = y;
    }
    x->idx[x->n++] = (uint16_t)idx;
}

fe_exec_idx_t *fe_exec_idx_take_cur(fe_conn_t *c)
{
    fe_exec_idx_t *x = c->admin->exec_cur;
    c->admin->exec_cur = NULL;
    return x;
}

void fe_exec_idx_push(fe_conn_t *c, fe_exec_idx_t *x)
{
    fe_conn_admin_t *a = c->admin;
    x->next = NULL;
    if (a->exec_tail)
        a->exec_tail->next = x;
    else
        a->exec_head = x;
    a->exec_tail = x;
}

fe_exec_idx_t *fe_exec_idx_pop(fe_conn_t *c)
{
    fe_conn_admin_t *a = c->admin;
    fe_exec_idx_t *x = a->exec_head;
    if (!x) return NULL;
    a->exec_head = x->next;
    if (!a->exec_head) a->exec_tail = NULL;
    return x;
}

void fe_exec_idx_free_all(fe_conn_t *c)
{
    free(fe_exec_idx_take_cur(c));
    for (fe_exec_idx_t *x; (x = fe_exec_idx_pop(c)) != NULL;)
        free(x);
}

void fe_cmdstat(fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a)
{
    fe_t *fe = c->fe;
    /* fe_acl_check computed the index (subcommand included) for this call;
     * one of an EXEC's commands has its own (CLIENT SETNAME inside MULTI
     * counts as client|setname, as in Redis). */
    unsigned idx = c->exec_counting          ? fe_cmd_index(d, a->argc, a->argv, a->lens)
                   : c->admin->cur_desc == d ? c->admin->cur_idx
                                             : (unsigned)d->id;
    add_u64(&fe->stats->cmd[idx].calls, 1);
    if (c->exec_counting) exec_idx_add(c, idx);
    if (!c->admin->stat_idx) {
        c->admin->stat_idx = (uint16_t)(idx + 1);
        c->admin->stat_desc = d;
    }
    c->admin->last_idx = (uint16_t)idx;
    if (atomic_load_explicit(&shm_pubsub(fe->shm)->monitors_total, memory_order_relaxed)) {
        /* Redis shows a command once it ran: EXEC after its commands, and
         * SELECT and RESET (outside EXEC) with the database they leave
         * (fe_admin_command_done). */
        if (d->id == CMD_EXEC || ((d->id == CMD_SELECT || d->id == CMD_RESET) && !c->multi))
            c->admin->monitor_after = 1;
        else
            fe_monitor_feed(c, d, a);
    }
    if (c->admin->reg) atomic_store_explicit(&c->admin->reg->last_cmd, idx, memory_order_relaxed);
}

void fe_stat_done(fe_t *fe, unsigned idx, uint64_t nsec, int failed)
{
    add_u64(&fe->stats->cmd[idx].nsec, nsec);
    fe_latency_command(fe, idx, nsec);
    if (failed) add_u64(&fe->stats->cmd[idx].failed, 1);
}

void fe_stat_rejected(fe_t *fe, unsigned idx)
{
    add_u64(&fe->stats->cmd[idx].rejected, 1);
}

void fe_cmd_rejected(fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a)
{
    fe_stat_rejected(c->fe, fe_cmd_index(d, a->argc, a->argv, a->lens));
}

void fe_stat_error_reply(fe_t *fe, const char *p, size_t n)
{
    add_u64(&fe->stats->error_replies, 1);
    /* The code as Redis' afterErrorReply takes it: from after the '-' to
     * the first space within 32 bytes; without one, ERR. */
    const char *code = "ERR", *sp = n ? memchr(p, ' ', n < 32 ? n : 32) : NULL;
    size_t len = 3;
    if (sp && p[0] == '-') code = p + 1, len = (size_t)(sp - p) - 1;
    shm_errstat_t *t = fe->stats->err;
    for (unsigned i = 0; i < SHM_ERRSTAT_SLOTS; i++) {
        if (!atomic_load_explicit(&t[i].count, memory_order_relaxed)) {
            memcpy(t[i].code, code, len); /* a free slot: this code's from now on */
            t[i].code[len] = '\0';
            atomic_store_explicit(&t[i].count, 1, memory_order_release);
            return;
        }
        if (strlen(t[i].code) == len && !memcmp(t[i].code, code, len)) {
            add_u64(&t[i].count, 1);
            return;
        }
    }
}

void fe_stat_exec_errors(fe_t *fe, const char *p, size_t n, const fe_exec_idx_t *cmds)
{
    const char *end = p + n, *cr = n > 1 && p[0] == '*' ? memchr(p, '\r', n) : NULL;
    long long count;
    if (!cr || str_to_ll(p + 1, (size_t)(cr - p - 1), &count) != 0 || end - cr < 2) return;
    const char *q = cr + 2;
    for (long long i = 0; i < count && q < end; i++) {
        const char *e = resp_value_end(q, end);
        if (!e) return; /* a reply in parts: the rest is not here */
        if (*q == '-') {
            fe_stat_error_reply(fe, q, (size_t)(e - q));
            if (cmds && i < (long long)cmds->n) add_u64(&fe->stats->cmd[cmds->idx[i]].failed, 1);
        }
        q = e;
    }
}

/* The sum of one counter over the frontends whose table is current. */
#define SUM_STAT(fe, expr)                                                                         \
    ({                                                                                             \
        uint64_t sum_ = 0, epoch_ = atomic_load(&fe_shm((fe)->shm)->stat_epoch);                   \
        for (uint32_t i_ = 0; i_ < (fe)->shm->nfrontends; i_++) {                                  \
            shm_fe_stats_t *s_ = &fe_shm((fe)->shm)->fe_stats[i_];                                 \
            if (atomic_load(&s_->epoch_seen) == epoch_) sum_ += atomic_load(&(expr));              \
        }                                                                                          \
        sum_;                                                                                      \
    })

/* ---- the server's processes (memory and CPU): common/procstat.c ---- */

static void server_usage(fe_t *fe, proc_usage_t *u)
{
    proc_server_usage(fe->shm->master_pid, u);
}

static void human_bytes(char *out, size_t n, uint64_t v)
{
    double d = (double)v;
    if (v < 1024)
        snprintf(out, n, "%" PRIu64 "B", v);
    else if (d < 1024.0 * 1024)
        snprintf(out, n, "%.2fK", d / 1024);
    else if (d < 1024.0 * 1024 * 1024)
        snprintf(out, n, "%.2fM", d / (1024 * 1024));
    else if (d < 1024.0 * 1024 * 1024 * 1024)
        snprintf(out, n, "%.2fG", d / (1024.0 * 1024 * 1024));
    else
        snprintf(out, n, "%.2fT", d / (1024.0 * 1024 * 1024 * 1024));
}

/* A 40-hex-digit id that is the same from every frontend of one server run
 * (Redis' run_id, master_replid). */
static void run_id(fe_t *fe, const char *salt, char out[41])
{
    char seed[128];
    int n = snprintf(seed, sizeof(seed), "%s:%d:%" PRId64, salt, fe->shm->master_pid,
                     atomic_load(&fe->shm->start_time_ms));
    unsigned char h[SHA256_LEN];
    sha256(seed, (size_t)n, h);
    char hex[2 * SHA256_LEN + 1];
    sha256_hex(h, hex);
    memcpy(out, hex, 40);
    out[40] = '\0';
}

/* ---- sections ---- */

static void info_server(fe_t *fe, buf_t *b)
{
    struct utsname u;
    uname(&u);
    int64_t now = shm_now_ms();
    int64_t up = (now - atomic_load(&fe->shm->start_time_ms)) / 1000;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    char rid[41];
    run_id(fe, "run", rid);
    int gmaj = 0, gmin = 0, gpat = 0;
#ifdef __GNUC__
    gmaj = __GNUC__;
    gmin = __GNUC_MINOR__;
    gpat = __GNUC_PATCHLEVEL__;
#endif
    char exe[512] = "";
    ssize_t en = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    exe[en > 0 ? en : 0] = '\0';
    buf_appendf(b,
                "# Server\r\n"
                "redis_version:" FE_REDIS_VERSION "\r\n"
                "redis_git_sha1:00000000\r\n"
                "redis_git_dirty:0\r\n"
                "redis_build_id:0\r\n"
                "redis_mode:standalone\r\n"
                "os:%s %s %s\r\n"
                "arch_bits:%d\r\n"
                "monotonic_clock:POSIX clock_gettime\r\n"
                "multiplexing_api:epoll\r\n"
                "atomicvar_api:c11-builtin\r\n"
                "gcc_version:%d.%d.%d\r\n"
                "process_id:%d\r\n"
                "process_supervised:%s\r\n"
                "run_id:%s\r\n"
                "tcp_port:%d\r\n"
                "server_time_usec:%" PRId64 "\r\n"
                "uptime_in_seconds:%" PRId64 "\r\n"
                "uptime_in_days:%" PRId64 "\r\n"
                "hz:10\r\n"
                "configured_hz:10\r\n"
                "lru_clock:%" PRId64 "\r\n"
                "executable:%s\r\n"
                "config_file:%s\r\n"
                "io_threads_active:0\r\n"
                "atticdb_version:%s\r\n"
                "frontend:%d\r\n"
                "frontends:%u\r\n",
                u.sysname, u.release, u.machine, (int)(sizeof(void *) * 8), gmaj, gmin, gpat,
                (int)getpid(), getenv("NOTIFY_SOCKET") ? "systemd" : "no", rid, fe->cfg->port,
                (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000, up, up / 86400,
                (int64_t)(ts.tv_sec & ((1 << 24) - 1)), exe,
                fe->cfg->config_file ? fe->cfg->config_file : "", PACKAGE_VERSION, fe->slot,
                fe->shm->nfrontends);
}

static uint64_t total_clients(fe_t *fe)
{
    uint64_t n = 0;
    for (uint32_t i = 0; i < fe->shm->nfrontends; i++)
        n += atomic_load(&fe_shm(fe->shm)->fe_stats[i].clients);
    return n;
}

/* Clients blocked in BLPOP and the like, every frontend's (D36). */
static uint64_t blocked_clients(fe_t *fe)
{
    uint64_t n = 0;
    for (uint32_t i = 0; i < fe->shm->nfrontends; i++)
        n += atomic_load(&fe_shm(fe->shm)->fe_stats[i].blocked);
    return n;
}

static void info_clients(fe_t *fe, buf_t *b)
{
    buf_appendf(b,
                "# Clients\r\n"
                "connected_clients:%" PRIu64 "\r\n"
                "cluster_connections:0\r\n"
                "maxclients:%" PRId64 "\r\n"
                "client_recent_max_input_buffer:0\r\n"
                "client_recent_max_output_buffer:0\r\n"
                "blocked_clients:%" PRIu64 "\r\n"
                "tracking_clients:0\r\n"
                "clients_in_timeout_table:0\r\n",
                total_clients(fe), atomic_load(&fe_shm(fe->shm)->config.maxclients),
                blocked_clients(fe));
}

/* maxmemory-policy's name, from the settings table (common/config.c). */
static const char *policy_name(int64_t v)
{
    const config_entry_t *e = config_find("maxmemory-policy", strlen("maxmemory-policy"));
    for (int64_t i = 0; e && e->names && e->names[i]; i++)
        if (i == v) return e->names[i];
    return "noeviction";
}

static void info_memory(fe_t *fe, buf_t *b)
{
    proc_usage_t u;
    server_usage(fe, &u);
    /* used_memory is all the server holds (D43, shm_memory): the store's
     * index and entries, the clients' buffers and the shared memory mapped
     * at start (the ring, channels and tables; a constant of the settings,
     * also used_memory_startup). As Redis leaves its AOF and replicas'
     * buffers out of the comparison, maxmemory bounds used_memory less the
     * shared memory (mem_not_counted_for_evict): shm_used_memory, what the
     * frontends and the store compare. MEMORY STATS reads the same. */
    shm_memory_t m;
    uint64_t index = atomic_load(&fe->shm->store_index_bytes);
    shm_memory(fe->shm, index, atomic_load(&fe->shm->store_table_bytes), &m);
    uint64_t clients = m.clients, shared = m.startup, used = m.used, peak = m.peak;
    long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
    uint64_t total = pages > 0 && psize > 0 ? (uint64_t)pages * (uint64_t)psize : 0;
    char h_used[32], h_rss[32], h_total[32], h_peak[32], h_max[32];
    shm_config_t *sc = &fe_shm(fe->shm)->config;
    uint64_t maxmem = (uint64_t)atomic_load(&sc->maxmemory);
    int64_t policy = atomic_load(&sc->maxmemory_policy);
    human_bytes(h_max, sizeof(h_max), maxmem);
    human_bytes(h_used, sizeof(h_used), used);
    human_bytes(h_rss, sizeof(h_rss), u.rss);
    human_bytes(h_total, sizeof(h_total), total);
    human_bytes(h_peak, sizeof(h_peak), peak);
    buf_appendf(b,
                "# Memory\r\n"
                "used_memory:%" PRIu64 "\r\n"
                "used_memory_human:%s\r\n"
                "used_memory_rss:%" PRIu64 "\r\n"
                "used_memory_rss_human:%s\r\n"
                "used_memory_peak:%" PRIu64 "\r\n"
                "used_memory_peak_human:%s\r\n"
                "used_memory_peak_perc:%.2f%%\r\n"
                "used_memory_overhead:%" PRIu64 "\r\n"
                "used_memory_startup:%" PRIu64 "\r\n"
                "used_memory_dataset:%" PRIu64 "\r\n"
                "used_memory_dataset_perc:%.2f%%\r\n"
                "total_system_memory:%" PRIu64 "\r\n"
                "total_system_memory_human:%s\r\n"
                "maxmemory:%" PRIu64 "\r\n"
                "maxmemory_human:%s\r\n"
                "maxmemory_policy:%s\r\n"
                "mem_fragmentation_ratio:%.2f\r\n"
                "mem_fragmentation_bytes:%" PRId64 "\r\n"
                "mem_not_counted_for_evict:%" PRIu64 "\r\n"
                "mem_clients_slaves:0\r\n"
                "mem_clients_normal:%" PRIu64 "\r\n"
                "mem_allocator:mimalloc\r\n"
                "lazyfree_pending_objects:0\r\n"
                "atticdb_index_bytes:%" PRIu64 "\r\n"
                "atticdb_shared_memory:%" PRIu64 "\r\n",
                used, h_used, u.rss, h_rss, peak, h_peak,
                peak ? 100.0 * (double)used / (double)peak : 100.0, m.overhead, shared, m.dataset,
                used > shared ? 100.0 * (double)m.dataset / (double)(used - shared) : 0.0, total,
                h_total, maxmem, h_max, policy_name(policy),
                used ? (double)u.rss / (double)used : 0.0, (int64_t)u.rss - (int64_t)used, shared,
                clients, index, shared);
}

/* The latency below which a fraction q of the recorded fsyncs fell, in
 * microseconds (the upper edge of the histogram bucket it lands in). */
static double fsync_percentile(fe_t *fe, double q)
{
    _Atomic uint64_t *h = fe->shm->stats.fsync_hist;
    uint64_t total = 0;
    for (unsigned i = 0; i < SHM_HIST_BUCKETS; i++)
        total += atomic_load_explicit(&h[i], memory_order_relaxed);
    if (!total) return 0;
    uint64_t want = (uint64_t)((double)total * q);
    if (want >= total) want = total - 1;
    uint64_t seen = 0;
    for (unsigned i = 0; i < SHM_HIST_BUCKETS; i++) {
        seen += atomic_load_explicit(&h[i], memory_order_relaxed);
        if (seen > want) return (double)shm_hist_lower(i + 1) / 1000.0;
    }
    return 0;
}

/* LASTSAVE and rdb_last_save_time: when the last backup (SAVE, BGSAVE)
 * completed, or the server's start before the first, as Redis counts its
 * start as a save (D38). Every acknowledged write is on disk already; what
 * an operator's "no save for a day" alert asks is how old the newest copy
 * elsewhere is. */
static int64_t last_save_time(const shm_t *s)
{
    int64_t ms = atomic_load(&s->backup_last_ms);
    return (ms ? ms : atomic_load(&s->start_time_ms)) / 1000;
}

void fe_cmd_lastsave(fe_conn_t *c, int argc, const char **argv, const uint32_t *lens, buf_t *out)
{
    (void)argc, (void)argv, (void)lens;
    resp_integer(out, last_save_time(c->fe->shm));
}

/* The persistence fields a backup moves (D38). */
static void info_backup(fe_t *fe, buf_t *b)
{
    shm_t *s = fe->shm;
    int running = atomic_load(&s->backup_in_progress) != 0;
    int64_t started = atomic_load(&s->backup_started_ms);
    int failed =
        atomic_load(&s->backup_last_failed) || atomic_load(&s->logger_state) == LOGGER_FAILED;
    buf_appendf(b,
                "rdb_changes_since_last_save:%" PRIu64 "\r\n"
                "rdb_bgsave_in_progress:%d\r\n"
                "rdb_last_save_time:%" PRId64 "\r\n"
                "rdb_last_bgsave_status:%s\r\n"
                "rdb_last_bgsave_time_sec:%" PRId64 "\r\n"
                "rdb_current_bgsave_time_sec:%" PRId64 "\r\n"
                "rdb_saves:%" PRIu64 "\r\n",
                atomic_load(&s->backup_changes), running, last_save_time(s), failed ? "err" : "ok",
                atomic_load(&s->backup_last_secs),
                running ? (shm_now_ms() - started) / 1000 : (int64_t)-1,
                atomic_load(&s->backup_saves));
}

/* AtticDB's own backup fields: where the last one is, and its LSN. */
static void info_backup_path(fe_t *fe, buf_t *b)
{
    uint64_t lsn = atomic_load(&fe->shm->backup_last_lsn);
    char dir[4096], path[4200] = "";
    if (atomic_load(&fe->shm->backup_saves) || atomic_load(&fe->shm->backup_last_ms)) {
        backup_dir_resolve(fe->cfg, dir, sizeof(dir));
        backup_dir_path(path, sizeof(path), dir, lsn, 0);
    }
    buf_appendf(b, "atticdb_last_backup_lsn:%" PRIu64 "\r\natticdb_last_backup_path:%s\r\n", lsn,
                path);
}

/* How the store reads values (D59), as the store started it. */
static const char *read_io_name(shm_t *s)
{
    switch (atomic_load(&s->read_io)) {
    case CONFIG_READ_URING:
        return "uring";
    case CONFIG_READ_BUFFERED:
        return "buffered";
    default:
        return "pread";
    }
}

static void info_persistence(fe_t *fe, buf_t *b)
{
    shm_t *s = fe->shm;
    shm_stats_t *st = &s->stats;
    uint64_t fsyncs = atomic_load(&st->fsyncs);
    uint64_t records = atomic_load(&st->records);
    uint64_t bytes = atomic_load(&st->bytes);
    uint64_t total_ns = atomic_load(&st->total_fsync_ns);
    const char *states[] = {"starting", "running", "failed", "stopped"};
    uint32_t ls = atomic_load(&s->logger_state);
    buf_appendf(b,
                "# Persistence\r\n"
                "loading:%d\r\n"
                "async_loading:0\r\n",
                !atomic_load(&s->store_ready));
    info_backup(fe, b);
    buf_appendf(b,
                "aof_enabled:0\r\n"
                "aof_rewrite_in_progress:0\r\n"
                "aof_rewrite_scheduled:0\r\n"
                "aof_last_rewrite_time_sec:-1\r\n"
                "aof_current_rewrite_time_sec:-1\r\n"
                "aof_last_bgrewrite_status:ok\r\n"
                "aof_last_write_status:%s\r\n"
                "atticdb_log_state:%s\r\n"
                "atticdb_log_no_space:%u\r\n"
                "atticdb_fsyncs:%" PRIu64 "\r\n"
                "atticdb_records:%" PRIu64 "\r\n"
                "atticdb_bytes:%" PRIu64 "\r\n"
                "atticdb_avg_batch_records:%.2f\r\n"
                "atticdb_avg_batch_bytes:%.1f\r\n"
                "atticdb_max_batch_records:%" PRIu64 "\r\n"
                "atticdb_last_fsync_us:%.1f\r\n"
                "atticdb_avg_fsync_us:%.1f\r\n"
                "atticdb_fsync_p50_us:%.3f\r\n"
                "atticdb_fsync_p99_us:%.3f\r\n"
                "atticdb_fsync_p999_us:%.3f\r\n"
                "atticdb_segments_created:%" PRIu64 "\r\n"
                "atticdb_log_start_lsn:%" PRIu64 "\r\n"
                "atticdb_durable_lsn:%" PRIu64 "\r\n"
                "atticdb_applied_lsn:%" PRIu64 "\r\n"
                "atticdb_read_io:%s\r\n"
                "atticdb_value_reads_cached:%" PRIu64 "\r\n"
                "atticdb_value_reads_device:%" PRIu64 "\r\n",
                ls == LOGGER_FAILED ? "err" : "ok", ls < 4 ? states[ls] : "unknown",
                atomic_load(&s->log_no_space), fsyncs, records, bytes,
                fsyncs ? (double)records / (double)fsyncs : 0.0,
                fsyncs ? (double)bytes / (double)fsyncs : 0.0, atomic_load(&st->max_batch_records),
                (double)atomic_load(&st->last_fsync_ns) / 1000.0,
                fsyncs ? (double)total_ns / (double)fsyncs / 1000.0 : 0.0,
                fsync_percentile(fe, 0.50), fsync_percentile(fe, 0.99), fsync_percentile(fe, 0.999),
                atomic_load(&st->segments_created), atomic_load(&s->log_start_lsn),
                atomic_load(&s->durable_lsn), atomic_load(&shm_ring(s)->tail), read_io_name(s),
                atomic_load(&s->value_reads_cached), atomic_load(&s->value_reads_device));
    info_backup_path(fe, b);
}

/* A store counter since the last RESETSTAT (its base); a respawned store
 * counts from 0 again, below the base: then since its start. */
static uint64_t since_base(_Atomic uint64_t *count, _Atomic uint64_t *base)
{
    uint64_t n = atomic_load(count), b = atomic_load(base);
    return n >= b ? n - b : n;
}

/* INFO total_/current_eviction_exceeded_time in ms (D43): the store's
 * spells over maxmemory (shm), less what was shown at the last RESETSTAT,
 * which also restarts the current spell, as Redis' does. */
void fe_eviction_exceeded(shm_t *shm, int64_t now_ms, int64_t *total, int64_t *current)
{
    shm_admin_t *adm = fe_shm(shm);
    int64_t since = atomic_load(&shm->evict_exceeded_since_ms);
    int64_t sum = atomic_load(&shm->evict_exceeded_total_ms);
    int64_t reset = atomic_load(&adm->exceeded_reset_ms),
            base = atomic_load(&adm->exceeded_base_ms);
    int64_t spell = since && now_ms > since ? now_ms - since : 0;
    int64_t from = since > reset ? since : reset;
    *current = since && now_ms > from ? now_ms - from : 0;
    *total = sum + spell >= base ? sum + spell - base : sum + spell;
}

static void info_stats(fe_t *fe, buf_t *b)
{
    /* Commands and connections since the last RESETSTAT, every frontend. */
    uint64_t conns = SUM_STAT(fe, s_->conns), cmds = SUM_STAT(fe, s_->cmds);
    uint64_t rejected = SUM_STAT(fe, s_->rejected_conns);
    uint64_t in = SUM_STAT(fe, s_->net_in), out = SUM_STAT(fe, s_->net_out);
    uint64_t errors = SUM_STAT(fe, s_->error_replies);
    uint64_t reads = SUM_STAT(fe, s_->reads), writes = SUM_STAT(fe, s_->writes);
    uint64_t probes = SUM_STAT(fe, s_->write_probes), unlogged = SUM_STAT(fe, s_->writes_unlogged);
    uint64_t ops = 0, in_bps = 0, out_bps = 0;
    shm_admin_t *adm = fe_shm(fe->shm);
    uint64_t evicted = since_base(&fe->shm->evicted_keys, &adm->evicted_base);
    uint64_t expired = since_base(&fe->shm->expired_keys, &adm->expired_base);
    /* The store's lookups, and the GETs the frontends answered from the
     * read cache (D70). */
    uint64_t cache_hits = SUM_STAT(fe, s_->cache_hits),
             cache_misses = SUM_STAT(fe, s_->cache_misses);
    uint64_t hits = since_base(&fe->shm->keyspace_hits, &adm->hits_base) + cache_hits;
    uint64_t misses = since_base(&fe->shm->keyspace_misses, &adm->misses_base) + cache_misses;
    int64_t exceeded_total, exceeded_now;
    fe_eviction_exceeded(fe->shm, (int64_t)(shm_mono_ns() / 1000000), &exceeded_total,
                         &exceeded_now);
    for (uint32_t i = 0; i < fe->shm->nfrontends; i++) {
        ops += atomic_load(&fe_shm(fe->shm)->fe_stats[i].inst_ops);
        in_bps += atomic_load(&fe_shm(fe->shm)->fe_stats[i].inst_in_bps);
        out_bps += atomic_load(&fe_shm(fe->shm)->fe_stats[i].inst_out_bps);
    }
    buf_appendf(b,
                "# Stats\r\n"
                "total_connections_received:%" PRIu64 "\r\n"
                "total_commands_processed:%" PRIu64 "\r\n"
                "instantaneous_ops_per_sec:%" PRIu64 "\r\n"
                "total_net_input_bytes:%" PRIu64 "\r\n"
                "total_net_output_bytes:%" PRIu64 "\r\n"
                "instantaneous_input_kbps:%.2f\r\n"
                "instantaneous_output_kbps:%.2f\r\n"
                "rejected_connections:%" PRIu64 "\r\n"
                "sync_full:%" PRIu64 "\r\n"
                "sync_partial_ok:%" PRIu64 "\r\n"
                "sync_partial_err:%" PRIu64 "\r\n"
                "expired_keys:%" PRIu64 "\r\n"
                "evicted_keys:%" PRIu64 "\r\n"
                "total_eviction_exceeded_time:%" PRId64 "\r\n"
                "current_eviction_exceeded_time:%" PRId64 "\r\n"
                "keyspace_hits:%" PRIu64 "\r\n"
                "keyspace_misses:%" PRIu64 "\r\n"
                "pubsub_channels:%" PRIu64 "\r\n"
                "pubsub_patterns:%" PRIu64 "\r\n"
                "pubsubshard_channels:%" PRIu64 "\r\n"
                "total_error_replies:%" PRIu64 "\r\n"
                "total_reads_processed:%" PRIu64 "\r\n"
                "total_writes_processed:%" PRIu64 "\r\n"
                "atticdb_write_probes:%" PRIu64 "\r\n"
                "atticdb_writes_without_log:%" PRIu64 "\r\n"
                "atticdb_read_cache_bytes:%" PRIu64 "\r\n"
                "atticdb_read_cache_hits:%" PRIu64 "\r\n"
                "atticdb_read_cache_absent_hits:%" PRIu64 "\r\n"
                "atticdb_read_cache_fills:%" PRIu64 "\r\n"
                "atticdb_read_cache_invalidations:%" PRIu64 "\r\n",
                conns, cmds, ops, in, out, (double)in_bps / 1024.0, (double)out_bps / 1024.0,
                rejected, atomic_load(&fe->shm->repl.sent_full),
                atomic_load(&fe->shm->repl.sent_partial_ok),
                atomic_load(&fe->shm->repl.sent_partial_err), expired, evicted, exceeded_total,
                exceeded_now, hits, misses, fe_pubsub_count(fe, PS_CHANNEL),
                fe_pubsub_count(fe, PS_PATTERN), fe_pubsub_count(fe, PS_SHARD), errors, reads,
                writes, probes, unlogged, rcache_shared ? rcache_shared->size : 0, cache_hits,
                cache_misses, rcache_shared ? atomic_load(&rcache_shared->fills) : 0,
                rcache_shared ? atomic_load(&rcache_shared->invalidations) : 0);
}

static void info_replication(fe_t *fe, buf_t *b)
{
    char rid[41];
    run_id(fe, "replid", rid);
    fe_info_replication(fe, b, rid); /* frontend/admin/repl.c */
}

static void info_cpu(fe_t *fe, buf_t *b)
{
    proc_usage_t u;
    server_usage(fe, &u);
    struct rusage self;
    getrusage(RUSAGE_SELF, &self);
    buf_appendf(b,
                "# CPU\r\n"
                "used_cpu_sys:%.6f\r\n"
                "used_cpu_user:%.6f\r\n"
                "used_cpu_sys_children:0.000000\r\n"
                "used_cpu_user_children:0.000000\r\n"
                "used_cpu_sys_main_thread:%.6f\r\n"
                "used_cpu_user_main_thread:%.6f\r\n",
                u.sys, u.user, (double)self.ru_stime.tv_sec + (double)self.ru_stime.tv_usec / 1e6,
                (double)self.ru_utime.tv_sec + (double)self.ru_utime.tv_usec / 1e6);
}

static void info_commandstats(fe_t *fe, buf_t *b)
{
    buf_appendf(b, "# Commandstats\r\n");
    for (unsigned idx = 0; idx < FE_CMD_INDEXES; idx++) {
        uint64_t calls = SUM_STAT(fe, s_->cmd[idx].calls);
        uint64_t rejected = SUM_STAT(fe, s_->cmd[idx].rejected);
        uint64_t failed = SUM_STAT(fe, s_->cmd[idx].failed);
        if (!calls && !rejected && !failed) continue;
        const char *name = fe_cmd_index_name(idx);
        if (!name) continue;
        uint64_t nsec = SUM_STAT(fe, s_->cmd[idx].nsec), usec = nsec / 1000;
        buf_appendf(b,
                    "cmdstat_%s:calls=%" PRIu64 ",usec=%" PRIu64 ",usec_per_call=%.2f,"
                    "rejected_calls=%" PRIu64 ",failed_calls=%" PRIu64 "\r\n",
                    name, calls, usec, calls ? (double)nsec / 1000.0 / (double)calls : 0.0,
                    rejected, failed);
    }
}

/* INFO errorstats: each code's count summed over the frontends whose
 * table is current, in byte order of the codes (as Redis' radix tree). */
typedef struct errstat_sum {
    const char *code;
    uint64_t count;
} errstat_sum_t;

static int errstat_cmp(const void *x, const void *y)
{
    return strcmp(((const errstat_sum_t *)x)->code, ((const errstat_sum_t *)y)->code);
}

static void info_errorstats(fe_t *fe, buf_t *b)
{
    buf_appendf(b, "# Errorstats\r\n");
    static errstat_sum_t sum[SHM_ERRSTAT_SLOTS * 4];
    size_t n = 0, cap = sizeof sum / sizeof sum[0];
    uint64_t epoch = atomic_load(&fe_shm(fe->shm)->stat_epoch);
    for (uint32_t f = 0; f < fe->shm->nfrontends; f++) {
        shm_fe_stats_t *st = &fe_shm(fe->shm)->fe_stats[f];
        if (atomic_load(&st->epoch_seen) != epoch) continue;
        for (unsigned i = 0; i < SHM_ERRSTAT_SLOTS; i++) {
            uint64_t c = atomic_load_explicit(&st->err[i].count, memory_order_acquire);
            if (!c) break;
            size_t k = 0;
            while (k < n && strcmp(sum[k].code, st->err[i].code))
                k++;
            if (k < n)
                sum[k].count += c;
            else if (n < cap)
                sum[n++] = (errstat_sum_t){st->err[i].code, c};
        }
    }
    qsort(sum, n, sizeof sum[0], errstat_cmp);
    for (size_t k = 0; k < n; k++)
        buf_appendf(b, "errorstat_%s:count=%" PRIu64 "\r\n", sum[k].code, sum[k].count);
}

static void info_cluster(fe_t *fe, buf_t *b)
{
    buf_appendf(b, "# Cluster\r\ncluster_enabled:%d\r\n", fe->cluster != NULL);
}

static void info_keyspace(fe_t *fe, buf_t *b)
{
    buf_appendf(b, "# Keyspace\r\n");
    int ndb = fe->cfg->databases > 0 && fe->cfg->databases <= 256 ? fe->cfg->databases : 1;
    uint64_t per_db = 0;
    for (int db = 0; db < ndb; db++)
        per_db += atomic_load(&fe->shm->db_keys[db]);
    uint64_t all = atomic_load(&fe->shm->store_keys);
    if (!per_db && all) {
        /* A store that publishes only its total: all of it in db0. */
        buf_appendf(b, "db0:keys=%" PRIu64 ",expires=%" PRIu64 ",avg_ttl=0\r\n", all,
                    atomic_load(&fe->shm->store_expires));
        return;
    }
    for (int db = 0; db < ndb; db++) {
        uint64_t keys = atomic_load(&fe->shm->db_keys[db]);
        if (!keys) continue;
        buf_appendf(b, "db%d:keys=%" PRIu64 ",expires=%" PRIu64 ",avg_ttl=0\r\n", db, keys,
                    atomic_load(&fe->shm->db_expires[db]));
    }
}

static const struct {
    const char *name;
    void (*fn)(fe_t *, buf_t *);
    int in_default;
} sections[] = {
    {"server", info_server, 1},
    {"clients", info_clients, 1},
    {"memory", info_memory, 1},
    {"persistence", info_persistence, 1},
    {"stats", info_stats, 1},
    {"replication", info_replication, 1},
    {"cpu", info_cpu, 1},
    {"commandstats", info_commandstats, 0},
    {"errorstats", info_errorstats, 1},
    {"cluster", info_cluster, 1},
    {"keyspace", info_keyspace, 1},
};
#define NSECTIONS (sizeof(sections) / sizeof(sections[0]))

/* The INFO text for the sections asked for (argv[1..argc), none = default),
 * as Redis 7 builds it: sections in their fixed order, a blank line
 * between two, none after the last. */
static void info_text(fe_t *fe, int argc, const char *const *argv, const uint32_t *lens, buf_t *b)
{
    int want[NSECTIONS] = {0};
    if (argc <= 1) {
        for (size_t i = 0; i < NSECTIONS; i++)
            want[i] = sections[i].in_default;
    }
    for (int a = 1; a < argc; a++) {
        for (size_t i = 0; i < NSECTIONS; i++) {
            if (fe_word_eq(argv[a], lens[a], "all") || fe_word_eq(argv[a], lens[a], "everything"))
                want[i] = 1;
            else if (fe_word_eq(argv[a], lens[a], "default"))
                want[i] |= sections[i].in_default;
            else if (fe_word_eq(argv[a], lens[a], sections[i].name))
                want[i] = 1;
        }
    }
    int first = 1;
    for (size_t i = 0; i < NSECTIONS; i++) {
        if (!want[i]) continue;
        if (!first) buf_append(b, "\r\n", 2);
        first = 0;
        sections[i].fn(fe, b);
    }
}

/*
 * The store's figures (keys per database, used memory) are of what it has
 * applied, and it applies the records nobody waits for only once the log
 * idles (D25). So that a write acked before INFO is in them, wait for the
 * store to reach the durable LSN of now: woken, it applies in microseconds.
 * Bounded, in case the store stops answering while it counts as ready:
 * past 1 s, INFO tells what was published. (100 ms was too short for a
 * store that a loaded machine - load 11 on 2 CPUs - did not schedule:
 * test_ops saw an empty Keyspace section.) A store being respawned is not
 * ready and is not waited for at all.
 */
static void store_catch_up(fe_t *fe)
{
    shm_t *shm = fe->shm;
    uint64_t target = atomic_load_explicit(&shm->durable_lsn, memory_order_acquire);
    if (atomic_load_explicit(&shm->store_counts_lsn, memory_order_acquire) >= target ||
        !atomic_load(&shm->store_ready))
        return;
    uint64_t start = shm_mono_ns(), woke = 0;
    while (atomic_load_explicit(&shm->store_counts_lsn, memory_order_acquire) < target) {
        uint64_t now = shm_mono_ns();
        if (now - start > 1000 * 1000000ull) return;
        if (now - woke > 1000000ull) {
            fe_wake_store(fe);
            woke = now;
        }
        struct timespec ts = {0, 20 * 1000};
        nanosleep(&ts, NULL);
    }
}

void fe_info(fe_t *fe, const char *section, buf_t *out)
{
    const char *argv[2] = {"info", section};
    uint32_t lens[2] = {4, section ? (uint32_t)strlen(section) : 0};
    buf_t b;
    buf_init(&b);
    store_catch_up(fe);
    info_text(fe, section ? 2 : 1, argv, lens, &b);
    resp_bulk(out, b.data, b.len);
    buf_free(&b);
}

void fe_cmd_info(fe_conn_t *c, int argc, const char **argv, const uint32_t *lens, buf_t *out)
{
    buf_t b;
    buf_init(&b);
    store_catch_up(c->fe);
    info_text(c->fe, argc, argv, lens, &b);
    resp_verbatim(out, c->proto, "txt", b.data, b.len);
    buf_free(&b);
}
