/*
 * bench_sqlite.c - the SQLite peer of the durable-ack benchmark: SQLite in the
 * writer's own process, journal_mode=WAL, synchronous=FULL, one row (one
 * append) per transaction, one connection per writer thread.
 *
 * Runs in the atticdb-bench process, one thread per writer: SQLite's API is
 * blocking, so a thread is the only way to keep one transaction in flight per
 * writer. Writer counts here are those of BENCHMARK.md (up to 256), well
 * within what threads handle. Latency is the sqlite3_step() of the INSERT,
 * whose autocommit includes the WAL fsync; there is no socket to cross.
 *
 * SQLite admits one writer at a time. By default the writers of this process
 * queue on a mutex for it, as a multi-threaded application would, and the
 * wait counts in their latency. With --sqlite-busy they contend through
 * SQLite's own lock and a busy handler instead: measured on a 2-vCPU VM that
 * cost 16 writers half their throughput and put p99 near 100 ms (lock
 * polling, no queue), which measures the polling rather than the database.
 */
#include "bench.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef BENCH_WITH_SQLITE
#include <sqlite3.h>

/* Writers wait for the WAL write lock; with 16 writers and 1 ms fsyncs the
 * queue can be long, and a busy error would be a benchmark artefact. */
#define SQLITE_BUSY_TIMEOUT_MS 30000

/* Busy handler: retry the write lock after a short sleep, for up to
 * SQLITE_BUSY_TIMEOUT_MS. sqlite3_busy_timeout() would do the same but sleeps
 * 1, 2, 5, 10, ... up to 100 ms between tries, so the tail would measure
 * that sleep schedule, not SQLite: a writer that wakes 25 ms after the lock
 * came free reports 25 ms no disk ever took. Sleeping 20 us, then up to 1 ms,
 * is what an application tuned for latency would install. */
static int sql_busy_handler(void *arg, int tries)
{
    uint64_t us = tries < 50 ? 20 : tries < 200 ? 100 : 1000;
    uint64_t waited_us = tries < 50    ? (uint64_t)tries * 20
                         : tries < 200 ? 1000 + (uint64_t)(tries - 50) * 100
                                       : 16000 + (uint64_t)(tries - 200) * 1000;
    if (waited_us >= (uint64_t)SQLITE_BUSY_TIMEOUT_MS * 1000) return 0;
    struct timespec ts = {0, (long)us * 1000};
    nanosleep(&ts, NULL);
    return 1;
}

typedef struct sql_writer {
    const bench_config_t *cfg;
    pthread_mutex_t *write_lock; /* NULL with --sqlite-busy */
    const char *value;
    int index;
    pthread_barrier_t *barrier;
    uint64_t deadline_ns;
    uint64_t first_ns, last_ns;
    bench_result_t res;
    pthread_t tid;
} sql_writer_t;

static int sql_open(const char *path, sqlite3 **db)
{
    if (sqlite3_open_v2(path, db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                        NULL) != SQLITE_OK) {
        fprintf(stderr, "atticdb-bench: sqlite open %s: %s\n", path, sqlite3_errmsg(*db));
        return -1;
    }
    sqlite3_busy_handler(*db, sql_busy_handler, NULL);
    char *err = NULL;
    if (sqlite3_exec(*db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;", NULL, NULL, &err) !=
        SQLITE_OK) {
        fprintf(stderr, "atticdb-bench: sqlite pragmas: %s\n", err ? err : "?");
        sqlite3_free(err);
        return -1;
    }
    return 0;
}

static void sleep_us(uint64_t us)
{
    struct timespec ts = {(time_t)(us / 1000000), (long)(us % 1000000) * 1000};
    while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR) {
    }
}

static void *sql_writer_main(void *arg)
{
    sql_writer_t *w = arg;
    const bench_config_t *cfg = w->cfg;
    sqlite3 *db = NULL;
    sqlite3_stmt *stmt = NULL;
    int ok = sql_open(cfg->sqlite, &db) == 0;
    const char *sql = cfg->command == CMD_SET ? "INSERT OR REPLACE INTO kv(k, v) VALUES (?1, ?2)"
                                              : "INSERT INTO log(k, v) VALUES (?1, ?2)";
    if (ok && sqlite3_prepare_v2(db, sql, -1, &stmt, NULL) != SQLITE_OK) {
        fprintf(stderr, "atticdb-bench: sqlite prepare: %s\n", sqlite3_errmsg(db));
        ok = 0;
    }
    if (!ok) w->res.errors++;
    /* Everyone opens first; the clock starts when all are ready. */
    pthread_barrier_wait(w->barrier);
    bench_think_t think;
    bench_think_init(&think, (uint64_t)(cfg->think_ms * 1000.0 + 0.5), (uint64_t)w->index,
                     cfg->seed);
    for (long seq = 0; ok && (cfg->requests == 0 || seq < cfg->requests); seq++) {
        if (cfg->think_ms > 0) sleep_us(bench_think_next_us(&think));
        if (w->deadline_ns && bench_now_ns() >= w->deadline_ns) break;
        char key[256];
        bench_format_key(key, sizeof(key), cfg->key_prefix, bench_key_kind(cfg->command), w->index,
                         cfg->command == CMD_SET ? seq : -1);
        sqlite3_bind_text(stmt, 1, key, -1, SQLITE_TRANSIENT);
        sqlite3_bind_blob(stmt, 2, w->value, cfg->value_size, SQLITE_STATIC);
        w->res.sent++;
        uint64_t t0 = bench_now_ns();
        if (!w->first_ns) w->first_ns = t0;
        if (w->write_lock) pthread_mutex_lock(w->write_lock);
        int rc = sqlite3_step(stmt);
        if (w->write_lock) pthread_mutex_unlock(w->write_lock);
        uint64_t t1 = bench_now_ns();
        sqlite3_reset(stmt);
        w->res.acked++;
        w->last_ns = t1;
        if (bench_samples_add(&w->res.samples, t1 - t0) < 0) w->res.errors++;
        if (rc != SQLITE_DONE) {
            if (w->res.errors++ == 0)
                fprintf(stderr, "atticdb-bench: sqlite writer %d: %s\n", w->index,
                        sqlite3_errmsg(db));
        }
    }
    sqlite3_finalize(stmt);
    sqlite3_close(db);
    return NULL;
}

int bench_sqlite_run(const bench_config_t *cfg, bench_result_t *res)
{
    if (cfg->command == CMD_GET) {
        fprintf(stderr, "atticdb-bench: --sqlite measures writes only\n");
        return -1;
    }
    sqlite3 *db = NULL;
    if (sql_open(cfg->sqlite, &db) < 0) {
        sqlite3_close(db);
        return -1;
    }
    char *err = NULL;
    if (sqlite3_exec(db,
                     "CREATE TABLE IF NOT EXISTS kv(k TEXT PRIMARY KEY, v BLOB);"
                     "CREATE TABLE IF NOT EXISTS log(id INTEGER PRIMARY KEY, k TEXT, v BLOB);",
                     NULL, NULL, &err) != SQLITE_OK) {
        fprintf(stderr, "atticdb-bench: sqlite schema: %s\n", err ? err : "?");
        sqlite3_free(err);
        sqlite3_close(db);
        return -1;
    }
    sqlite3_close(db);

    int rc = -1;
    char *value = malloc((size_t)cfg->value_size + 1);
    sql_writer_t *ws = calloc((size_t)cfg->writers, sizeof(*ws));
    pthread_barrier_t barrier;
    pthread_mutex_t write_lock = PTHREAD_MUTEX_INITIALIZER;
    if (!value || !ws) goto out;
    bench_fill_value(value, cfg->value_size, cfg->seed);
    pthread_barrier_init(&barrier, NULL, (unsigned)cfg->writers);
    uint64_t start = bench_now_ns();
    /* The deadline counts from thread creation; opening 256 connections takes
     * milliseconds, small against any --duration worth running. */
    uint64_t deadline = cfg->duration_s > 0 ? start + (uint64_t)(cfg->duration_s * 1e9) : 0;
    for (int i = 0; i < cfg->writers; i++) {
        ws[i].cfg = cfg;
        ws[i].value = value;
        ws[i].write_lock = cfg->sqlite_busy ? NULL : &write_lock;
        ws[i].index = i;
        ws[i].barrier = &barrier;
        ws[i].deadline_ns = deadline;
        bench_samples_init(&ws[i].res.samples);
        if (pthread_create(&ws[i].tid, NULL, sql_writer_main, &ws[i]) != 0) {
            /* A barrier that never fills would hang the others: give up. */
            fprintf(stderr, "atticdb-bench: cannot start sqlite writer %d\n", i);
            exit(1);
        }
    }
    uint64_t first = 0, last = 0;
    for (int i = 0; i < cfg->writers; i++) {
        pthread_join(ws[i].tid, NULL);
        if (bench_samples_merge(&res->samples, &ws[i].res.samples) < 0) res->errors++;
        res->sent += ws[i].res.sent;
        res->acked += ws[i].res.acked;
        res->errors += ws[i].res.errors;
        if (ws[i].first_ns && (!first || ws[i].first_ns < first)) first = ws[i].first_ns;
        if (ws[i].last_ns > last) last = ws[i].last_ns;
        bench_samples_free(&ws[i].res.samples);
    }
    pthread_barrier_destroy(&barrier);
    res->elapsed_s = last > first ? (double)(last - first) / 1e9 : 0;
    rc = 0;
out:
    free(ws);
    free(value);
    return rc;
}

const char *bench_sqlite_version(void)
{
    return sqlite3_libversion();
}

#else /* !BENCH_WITH_SQLITE */

int bench_sqlite_run(const bench_config_t *cfg, bench_result_t *res)
{
    fprintf(stderr, "atticdb-bench: built without SQLite (install libsqlite3-dev and rebuild)\n");
    return -1;
}

const char *bench_sqlite_version(void)
{
    return NULL;
}

#endif
