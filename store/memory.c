/*
 * memory.c - MEMORY (USAGE, STATS, DOCTOR, MALLOC-STATS, PURGE, HELP), in
 * the store, which holds the memory it describes: the key index and the
 * values kept in RAM. It sits beside digest.c, above the types' handlers,
 * as it looks at the state as a whole (docs/ARCHITECTURE.md, "The store").
 * Read handlers only: nothing here changes the state,
 * so a crash here is the store's crash (the master respawns it, it replays).
 *
 * What "memory" means here (docs/COMMANDS.md): RAM. A value longer than 24
 * bytes lives in the log on disk and costs the index only its extent, so
 * MEMORY USAGE of a 1 MB value is a few dozen bytes, not a megabyte; that is
 * the true cost in RAM, and what redis-cli --memkeys then ranks. The sizes
 * are the bytes asked of the allocator (entry, extent or piece list, RAM
 * pieces, the bucket pointer), not its rounding.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "procstat.h"
#include "resp.h"
#include "shm.h"
#include "store/core/alloc.h"
#include "store/core/entry.h"
#include "store/core/index.h"
#include "store/core/object.h"
#include "store/core/pieces.h"
#include "store/store-internal.h"
#include "store/types/handlers.h"
#include "strutil.h"

/* RAM one key costs: its entry (key, inline prefix, extent), a piece list
 * and the RAM it holds, a collection's object (its type's mem_usage), and
 * its bucket pointer. */
static uint64_t key_bytes(idx_entry_t *e)
{
    uint64_t n = st_ent_alloc_size(e) + sizeof(idx_entry_t *);
    if (st_ent_kind(e) == VK_LIST) n += st_pieces_bytes(st_ent_pieces(e));
    if (st_ent_kind(e) == VK_OBJ) {
        const st_obj_t *o = st_ent_obj(e);
        n += o->ops->mem_usage(o);
    }
    return n;
}

/* MEMORY USAGE key [SAMPLES count], Redis 7.0's parsing: SAMPLES counts
 * the elements of nested values sampled, and a string has none, so it
 * changes nothing here but is checked as Redis checks it. */
static void memory_usage(store_ctx_t *ctx, const read_args_t *a, buf_t *r)
{
    for (int j = 2; j < a->argc; j++) {
        long long samples;
        if (!st_arg_is(&a->argv[j], "samples") || j + 1 >= a->argc) {
            resp_error(r, "ERR syntax error");
            return;
        }
        if (str_to_ll((const char *)a->argv[j + 1].ptr, a->argv[j + 1].len, &samples) != 0) {
            resp_error(r, "ERR value is not an integer or out of range");
            return;
        }
        if (samples < 0) {
            resp_error(r, "ERR syntax error");
            return;
        }
        j++;
    }
    idx_entry_t **slot = st_find_quiet(a->db, &a->argv[1], a->now);
    if (!slot) {
        resp_null(r);
        return;
    }
    resp_integer(r, (long long)key_bytes(*slot));
}

static void pair_int(buf_t *r, const char *name, long long v)
{
    resp_bulk_cstr(r, name);
    resp_integer(r, v);
}

/* Redis replies its ratios as floats widened to double: the same digits. */
static void pair_double(buf_t *r, const char *name, double v)
{
    char s[64];
    int n = snprintf(s, sizeof(s), "%.17g", (double)(float)v);
    resp_bulk_cstr(r, name);
    resp_bulk(r, s, (size_t)n); /* RESP2's double: a bulk string, as Redis */
}

static double ratio(uint64_t a, uint64_t b)
{
    return b ? (double)a / (double)b : 0.0;
}

/*
 * MEMORY STATS: Redis 7.0.15's fields in its order, counting what INFO's
 * used_memory counts (shm_memory, D49): total.allocated is used_memory
 * (the index and entries, the clients' buffers, the shared memory),
 * startup.allocated the shared memory, overhead.total that plus the
 * clients' buffers and the bucket arrays, as INFO's used_memory_overhead.
 * What AtticDB does not have (a replication backlog in RAM: replicas read
 * the log; replicas' output buffers, cluster links, an AOF buffer, Lua,
 * functions) is 0. The allocator (mimalloc) is not asked: its fields are
 * what Redis shows for an allocator it cannot ask (allocated = used,
 * active = resident = the processes' RSS), so the ratios read alike. A
 * flat array, Redis' RESP2 form, for RESP3 clients too (store replies are
 * RESP2). Without the shared memory (tests) the index alone.
 */
static void memory_stats(store_ctx_t *ctx, const read_args_t *a, buf_t *r)
{
    (void)a;
    uint64_t index = store_index_bytes(ctx), keys = store_key_count(ctx);
    shm_memory_t m = {.used = index, .peak = index, .tables = store_table_bytes(ctx)};
    if (ctx->shm)
        shm_memory(ctx->shm, index, m.tables, &m);
    else
        m.overhead = m.tables, m.dataset = index - m.tables;
    int ndb = store_db_count(ctx), used_dbs = 0;
    for (int i = 0; i < ndb; i++) {
        uint64_t k, x;
        store_db_stats(ctx, i, &k, &x);
        used_dbs += k > 0;
    }
    proc_usage_t u;
    proc_server_usage((int)getppid(), &u);
    uint64_t net = m.used - m.startup;
    resp_array(r, 2 * (27 + used_dbs));
    pair_int(r, "peak.allocated", (long long)m.peak);
    pair_int(r, "total.allocated", (long long)m.used);
    pair_int(r, "startup.allocated", (long long)m.startup);
    pair_int(r, "replication.backlog", 0);
    pair_int(r, "clients.slaves", 0);
    pair_int(r, "clients.normal", (long long)m.clients);
    pair_int(r, "cluster.links", 0);
    pair_int(r, "aof.buffer", 0);
    pair_int(r, "lua.caches", 0);
    pair_int(r, "functions.caches", 0);
    for (int i = 0; i < ndb; i++) {
        uint64_t k, x;
        store_db_stats(ctx, i, &k, &x);
        if (!k) continue;
        char name[16];
        snprintf(name, sizeof(name), "db.%d", i);
        resp_bulk_cstr(r, name);
        resp_array(r, 6);
        pair_int(r, "overhead.hashtable.main", (long long)idx_table_bytes(&ctx->dbs[i]->ix));
        pair_int(r, "overhead.hashtable.expires", 0); /* TTLs live in the entries */
        pair_int(r, "overhead.hashtable.slot-to-keys", 0);
    }
    pair_int(r, "overhead.total", (long long)m.overhead);
    pair_int(r, "keys.count", (long long)keys);
    pair_int(r, "keys.bytes-per-key", keys ? (long long)(net / keys) : 0);
    pair_int(r, "dataset.bytes", (long long)m.dataset);
    pair_double(r, "dataset.percentage", 100.0 * ratio(m.dataset, net));
    pair_double(r, "peak.percentage", 100.0 * ratio(m.used, m.peak));
    pair_int(r, "allocator.allocated", (long long)m.used);
    pair_int(r, "allocator.active", (long long)u.rss);
    pair_int(r, "allocator.resident", (long long)u.rss);
    pair_double(r, "allocator-fragmentation.ratio", ratio(u.rss, m.used));
    pair_int(r, "allocator-fragmentation.bytes", (long long)u.rss - (long long)m.used);
    pair_double(r, "allocator-rss.ratio", 1.0);
    pair_int(r, "allocator-rss.bytes", 0);
    pair_double(r, "rss-overhead.ratio", 1.0);
    pair_int(r, "rss-overhead.bytes", 0);
    pair_double(r, "fragmentation", ratio(u.rss, m.used));
    pair_int(r, "fragmentation.bytes", (long long)u.rss - (long long)m.used);
}

/* MEMORY DOCTOR: Redis' openings, AtticDB's checks. */
static void memory_doctor(store_ctx_t *ctx, buf_t *r)
{
    uint64_t total = store_index_bytes(ctx), keys = store_key_count(ctx);
    proc_usage_t u;
    proc_server_usage((int)getppid(), &u);
    buf_t b;
    buf_init(&b);
    if (total < 5u * 1024 * 1024) {
        buf_appendf(&b, "Hi Sam, this instance is empty or is using very little memory, my "
                        "issues detector can't be used in these conditions. Please, leave for "
                        "your mission on Earth and fill it with some data. The new Sam and I "
                        "will be back to our programming as soon as I finished rebooting.\n");
    } else {
        buf_appendf(&b,
                    "Hi Sam, this is what I see: %" PRIu64 " keys take %" PRIu64
                    " bytes of the key index (%" PRIu64
                    " per key); the server's processes hold %" PRIu64 " bytes resident.\n",
                    keys, total, keys ? total / keys : 0, u.rss);
        /* The ring, the channels and each frontend's buffers are fixed
         * costs; past twice the index plus 256 MB, something grew. */
        if (u.rss > 2 * total + (256ull << 20))
            buf_appendf(&b, "\n * The resident memory is far above what the index needs: the "
                            "shared ring (ring-size), the channels (channel-size per frontend) "
                            "and client buffers come on top. CLIENT LIST shows clients with "
                            "large output buffers (omem); client-output-buffer-limit bounds "
                            "them.\n");
        else
            buf_appendf(&b, "\nI can't find any memory issue in your instance. I can only "
                            "account for what occurs on this base.\n");
    }
    resp_bulk(r, b.data, b.len);
    buf_free(&b);
}

static const char *const memory_help[] = {
    "MEMORY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "DOCTOR",
    "    Return memory problems reports.",
    "MALLOC-STATS",
    "    Return internal statistics report from the memory allocator.",
    "PURGE",
    "    Attempt to purge dirty pages for reclamation by the allocator.",
    "STATS",
    "    Return information about the memory usage of the server.",
    "USAGE <key> [SAMPLES <count>]",
    "    Return memory in bytes used by <key> and its value. Nested values are",
    "    sampled up to <count> times (default: 5, 0 means sample all).",
    "HELP",
    "    Prints this help.",
};

void st_read_memory(store_ctx_t *ctx, const read_args_t *a, buf_t *r)
{
    static const char *const subs[] = {"usage", "stats", "doctor", "malloc-stats", "purge", "help"};
    static const int arity[] = {-2, 1, 1, 1, 1, 1}; /* arguments after MEMORY */
    int which = -1;
    for (int i = 0; i < 6; i++)
        if (st_arg_is(&a->argv[0], subs[i])) which = i;
    if (which < 0) {
        char msg[200];
        size_t n = a->argv[0].len > 128 ? 128 : a->argv[0].len;
        snprintf(msg, sizeof(msg), "ERR unknown subcommand '%.*s'. Try MEMORY HELP.", (int)n,
                 (const char *)a->argv[0].ptr);
        for (char *p = msg; *p; p++)
            if (*p == '\r' || *p == '\n') *p = ' ';
        resp_error(r, msg);
        return;
    }
    if (arity[which] > 0 ? a->argc != arity[which] : a->argc < -arity[which]) {
        char msg[96];
        snprintf(msg, sizeof(msg), "ERR wrong number of arguments for 'memory|%s' command",
                 subs[which]);
        resp_error(r, msg);
        return;
    }
    switch (which) {
    case 0:
        memory_usage(ctx, a, r);
        break;
    case 1:
        memory_stats(ctx, a, r);
        break;
    case 2:
        memory_doctor(ctx, r);
        break;
    case 3:
        resp_bulk_cstr(r, "Stats not supported for the current allocator");
        break;
    case 4:
        /* As Redis asks jemalloc: freed memory back to the system (a no-op
         * where the allocator cannot be asked: the unit tests). */
        st_alloc_release();
        resp_simple(r, "OK");
        break;
    default: {
        size_t n = sizeof(memory_help) / sizeof(memory_help[0]);
        resp_array(r, (long long)n);
        for (size_t i = 0; i < n; i++)
            resp_simple(r, memory_help[i]);
    }
    }
}
