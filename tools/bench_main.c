/*
 * bench_main.c - atticdb-bench: the client of AtticDB's durable-ack
 * benchmark (docs/BENCHMARKS.md, ../shared/BENCHMARK.md is the spec).
 *
 * One process, one run: parse the options, pick the mode (network writers or
 * readers, in-process SQLite, the device floor), run it, and print one
 * machine-readable `result key=value ...` line on stdout and a human summary
 * on stderr. Exit status: 0 when every request was acked without error,
 * 1 when any error happened (error reply, lost connection, timeout), 2 on a
 * usage error or when the run could not start. tools/bench-durable and
 * tools/bench-reads parse the result line; its keys are only ever added to.
 */
#include "bench.h"

#include <event2/event.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#define BENCH_VERSION "0.1.0"

void bench_fill_value(char *value, int size, uint64_t seed)
{
    static const char alphabet[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    bench_rng_t r;
    bench_rng_seed(&r, seed ^ 0x76616c7565ull);
    for (int i = 0; i < size; i++)
        value[i] = alphabet[bench_rng_next(&r) % 62];
    value[size] = '\0';
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: atticdb-bench [target] [load] [options]\n"
            "target (one of):\n"
            "  -h HOST -p PORT      Redis-protocol server over TCP (default 127.0.0.1:6379)\n"
            "  -s PATH              ... over a unix socket\n"
            "  --sqlite PATH        SQLite in this process (WAL, synchronous=FULL,\n"
            "                       one row per transaction, one thread per writer;\n"
            "                       writers queue on a mutex for SQLite's write lock)\n"
            "  --sqlite-busy        ... contend through SQLite's lock + busy handler instead\n"
            "  --floor FILE         the device's durable-write floor (fdatasync, O_DSYNC,\n"
            "                       O_DIRECT|O_DSYNC); FILE is created and removed\n"
            "load:\n"
            "  -c N                 writers (connections), default 1\n"
            "  -n N                 requests per writer (closed loop), default 5000\n"
            "  --duration S         stop issuing after S seconds (0 = only -n counts)\n"
            "  --think MS           agent-shaped: sleep uniform [0, 2*MS] ms before each\n"
            "                       request; seeded by writer index (and --seed)\n"
            "  -d BYTES             value size, default 256\n"
            "  --command C          set (new key per append, default) | append | rpush | xadd\n"
            "  --key-prefix P       default 'bench'\n"
            "  --threads T          event-loop threads sharing the connections, default 1\n"
            "wake-ups:\n"
            "  --wake blpop|xread   -c readers blocked on their own keys (BLPOP / XREAD\n"
            "                       BLOCK), one writer pushing to each per round (RPUSH /\n"
            "                       XADD), -n rounds; latency = reader's reply minus the\n"
            "                       writer's ack\n"
            "reads:\n"
            "  --get                GET random keys of P:k0..P:k<N-1> instead of writing\n"
            "  --keys N             key space size, default 100000\n"
            "  --load               SET every key first (pipelined, not measured)\n"
            "  --load-only          only load, then exit\n"
            "  --zipf [THETA]       zipfian key choice (THETA default 0.99); --uniform (default)\n"
            "other:\n"
            "  --floor-count N      writes per floor method, default 2000\n"
            "  --label L            copied into the result line\n"
            "  --seed S             run seed mixed into the generators, default 0\n"
            "  --wait-ready S       PING the server until it answers (up to S s), then exit\n"
            "  -q                   no human summary on stderr\n"
            "  --version, --help\n"
            "output: 'result key=value ...' on stdout (latencies in microseconds),\n"
            "a summary on stderr; exit 0 = all acked, 1 = errors, 2 = could not run.\n");
}

enum {
    OPT_SQLITE = 256,
    OPT_FLOOR,
    OPT_DURATION,
    OPT_THINK,
    OPT_COMMAND,
    OPT_PREFIX,
    OPT_THREADS,
    OPT_GET,
    OPT_KEYS,
    OPT_LOAD,
    OPT_LOAD_ONLY,
    OPT_ZIPF,
    OPT_UNIFORM,
    OPT_FLOOR_COUNT,
    OPT_LABEL,
    OPT_SEED,
    OPT_WAIT,
    OPT_VERSION,
    OPT_HELP,
    OPT_SQLITE_BUSY,
    OPT_WAKE,
};

static const struct option long_options[] = {
    {"sqlite", required_argument, NULL, OPT_SQLITE},
    {"sqlite-busy", no_argument, NULL, OPT_SQLITE_BUSY},
    {"floor", required_argument, NULL, OPT_FLOOR},
    {"duration", required_argument, NULL, OPT_DURATION},
    {"think", required_argument, NULL, OPT_THINK},
    {"command", required_argument, NULL, OPT_COMMAND},
    {"key-prefix", required_argument, NULL, OPT_PREFIX},
    {"threads", required_argument, NULL, OPT_THREADS},
    {"get", no_argument, NULL, OPT_GET},
    {"keys", required_argument, NULL, OPT_KEYS},
    {"load", no_argument, NULL, OPT_LOAD},
    {"load-only", no_argument, NULL, OPT_LOAD_ONLY},
    {"zipf", optional_argument, NULL, OPT_ZIPF},
    {"uniform", no_argument, NULL, OPT_UNIFORM},
    {"floor-count", required_argument, NULL, OPT_FLOOR_COUNT},
    {"label", required_argument, NULL, OPT_LABEL},
    {"seed", required_argument, NULL, OPT_SEED},
    {"wait-ready", required_argument, NULL, OPT_WAIT},
    {"wake", required_argument, NULL, OPT_WAKE},
    {"version", no_argument, NULL, OPT_VERSION},
    {"help", no_argument, NULL, OPT_HELP},
    {NULL, 0, NULL, 0},
};

/* Parses a number within [lo, hi]; exits with status 2 otherwise. */
static double num_arg(const char *opt, const char *s, double lo, double hi)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end || !(v >= lo && v <= hi)) {
        fprintf(stderr, "atticdb-bench: %s: '%s' is not a number in [%g, %g]\n", opt, s, lo, hi);
        exit(2);
    }
    return v;
}

static int parse_options(int argc, char **argv, bench_config_t *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->host = "127.0.0.1";
    cfg->port = 6379;
    cfg->writers = 1;
    cfg->threads = 1;
    cfg->requests = -1; /* -1: not given */
    cfg->value_size = 256;
    cfg->command = CMD_SET;
    cfg->key_prefix = "bench";
    cfg->keys = 100000;
    cfg->floor_count = 2000;
    cfg->label = "-";
    int opt;
    while ((opt = getopt_long(argc, argv, "h:p:s:c:n:d:q", long_options, NULL)) != -1) {
        switch (opt) {
        case 'h':
            cfg->host = optarg;
            break;
        case 'p':
            cfg->port = (int)num_arg("-p", optarg, 1, 65535);
            break;
        case 's':
            cfg->socket = optarg;
            break;
        case 'c':
            cfg->writers = (int)num_arg("-c", optarg, 1, 100000);
            break;
        case 'n':
            cfg->requests = (long)num_arg("-n", optarg, 0, 1e12);
            break;
        case 'd':
            cfg->value_size = (int)num_arg("-d", optarg, 1, 64 << 20);
            break;
        case 'q':
            cfg->quiet = 1;
            break;
        case OPT_SQLITE:
            cfg->sqlite = optarg;
            break;
        case OPT_SQLITE_BUSY:
            cfg->sqlite_busy = 1;
            break;
        case OPT_FLOOR:
            cfg->floor = optarg;
            break;
        case OPT_DURATION:
            cfg->duration_s = num_arg("--duration", optarg, 0, 1e6);
            break;
        case OPT_THINK:
            cfg->think_ms = num_arg("--think", optarg, 0, 1e6);
            break;
        case OPT_PREFIX:
            cfg->key_prefix = optarg;
            break;
        case OPT_THREADS:
            cfg->threads = (int)num_arg("--threads", optarg, 1, 256);
            break;
        case OPT_GET:
            cfg->command = CMD_GET;
            break;
        case OPT_KEYS:
            cfg->keys = (long)num_arg("--keys", optarg, 1, 1e10);
            break;
        case OPT_LOAD:
            cfg->load = 1;
            break;
        case OPT_LOAD_ONLY:
            cfg->load = cfg->load_only = 1;
            break;
        case OPT_ZIPF:
            cfg->zipf_theta = optarg ? num_arg("--zipf", optarg, 0.01, 0.9999) : 0.99;
            break;
        case OPT_UNIFORM:
            cfg->zipf_theta = 0;
            break;
        case OPT_FLOOR_COUNT:
            cfg->floor_count = (long)num_arg("--floor-count", optarg, 1, 1e9);
            break;
        case OPT_LABEL:
            cfg->label = optarg;
            break;
        case OPT_SEED:
            cfg->seed = (uint64_t)num_arg("--seed", optarg, 0, 1e15);
            break;
        case OPT_WAIT:
            cfg->wait_ready_s = num_arg("--wait-ready", optarg, 0.001, 3600);
            break;
        case OPT_COMMAND:
            if (!strcmp(optarg, "set"))
                cfg->command = CMD_SET;
            else if (!strcmp(optarg, "append"))
                cfg->command = CMD_APPEND;
            else if (!strcmp(optarg, "rpush"))
                cfg->command = CMD_RPUSH;
            else if (!strcmp(optarg, "xadd"))
                cfg->command = CMD_XADD;
            else {
                fprintf(stderr, "atticdb-bench: --command: set, append, rpush or xadd\n");
                return -1;
            }
            break;
        case OPT_WAKE:
            if (!strcmp(optarg, "blpop"))
                cfg->wake = BENCH_WAKE_BLPOP;
            else if (!strcmp(optarg, "xread"))
                cfg->wake = BENCH_WAKE_XREAD;
            else {
                fprintf(stderr, "atticdb-bench: --wake: blpop or xread\n");
                return -1;
            }
            cfg->command = cfg->wake == BENCH_WAKE_XREAD ? CMD_XADD : CMD_RPUSH;
            break;
        case OPT_VERSION:
            printf("atticdb-bench %s (libevent %s, sqlite %s)\n", BENCH_VERSION,
                   event_get_version(), bench_sqlite_version() ? bench_sqlite_version() : "none");
            exit(0);
        case OPT_HELP:
            usage(stdout);
            exit(0);
        default:
            usage(stderr);
            return -1;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "atticdb-bench: unexpected argument '%s'\n", argv[optind]);
        return -1;
    }
    /* Without -n or --duration a closed loop would never end. */
    if (cfg->requests < 0) cfg->requests = cfg->duration_s > 0 ? 0 : 5000;
    if (cfg->requests == 0 && cfg->duration_s <= 0) {
        fprintf(stderr, "atticdb-bench: -n 0 needs --duration\n");
        return -1;
    }
    return 0;
}

static const char *command_name(enum bench_command c)
{
    static const char *names[] = {"set", "append", "rpush", "xadd", "get"};
    return names[c];
}

/* Raises the open-file limit to its hard maximum: 1,024 writers need more
 * descriptors than the usual soft limit of 1,024. */
static void raise_nofile(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
}

static void print_summary(const bench_config_t *cfg, const char *target, bench_result_t *r,
                          double rate)
{
    bench_samples_t *s = &r->samples;
    char per[64];
    if (cfg->requests > 0)
        snprintf(per, sizeof(per), "%ld", cfg->requests);
    else
        snprintf(per, sizeof(per), "%gs", cfg->duration_s);
    fprintf(stderr, "atticdb-bench: %s %d B, %d %s x %s, %s, %s\n", command_name(cfg->command),
            cfg->command == CMD_GET ? 0 : cfg->value_size, cfg->writers,
            cfg->command == CMD_GET ? "readers" : "writers", per,
            cfg->think_ms > 0 ? "agent-shaped" : "closed loop", target);
    fprintf(stderr, "  sent %llu, acked %llu, errors %llu%s, %.3f s, %.0f %s\n",
            (unsigned long long)r->sent, (unsigned long long)r->acked,
            (unsigned long long)r->errors, r->misses ? " (misses counted apart)" : "", r->elapsed_s,
            rate, cfg->command == CMD_GET ? "gets/s" : "acks/s");
    if (s->count == 0) return;
    fprintf(stderr, "  latency us: min %.1f  p50 %.1f  p99 %.1f  p99.9 %.1f  max %.1f  mean %.1f\n",
            bench_percentile(s, 0) / 1e3, bench_percentile(s, 50) / 1e3,
            bench_percentile(s, 99) / 1e3, bench_percentile(s, 99.9) / 1e3,
            bench_percentile(s, 100) / 1e3, bench_mean(s) / 1e3);
    bench_hist_t h;
    bench_hist_fill(&h, s);
    for (int b = 0; b < BENCH_HIST_BUCKETS; b++) {
        if (!h.bucket[b]) continue;
        double pct = 100.0 * (double)h.bucket[b] / (double)h.total;
        int bar = (int)(pct / 2 + 0.5);
        fprintf(stderr, "  %8llu-%-8llu us %6.2f%% %.*s\n", b ? 1ull << b : 0ull,
                (1ull << (b + 1)) - 1, pct, bar,
                "##################################################");
    }
}

int main(int argc, char **argv)
{
    bench_config_t cfg;
    if (parse_options(argc, argv, &cfg) < 0) return 2;
    raise_nofile();

    if (cfg.floor) return bench_floor_run(&cfg) == 0 ? 0 : 1;
    if (cfg.wait_ready_s > 0) {
        if (bench_net_wait_ready(&cfg) == 0) return 0;
        fprintf(stderr, "atticdb-bench: no PONG from %s:%d within %.1f s\n",
                cfg.socket ? cfg.socket : cfg.host, cfg.port, cfg.wait_ready_s);
        return 2;
    }
    if (cfg.load && !cfg.sqlite && bench_net_load(&cfg) < 0) return 2;
    if (cfg.load_only) return 0;

    char target[512];
    if (cfg.sqlite)
        snprintf(target, sizeof(target), "sqlite:%s", cfg.sqlite);
    else if (cfg.socket)
        snprintf(target, sizeof(target), "unix:%s", cfg.socket);
    else
        snprintf(target, sizeof(target), "%s:%d", cfg.host, cfg.port);

    bench_result_t res;
    memset(&res, 0, sizeof(res));
    bench_samples_init(&res.samples);
    long across = 0, early = 0;
    int rc = cfg.sqlite ? bench_sqlite_run(&cfg, &res)
             : cfg.wake ? bench_wake_run(&cfg, &res, &across, &early)
                        : bench_net_run(&cfg, &res);
    if (rc < 0) return 2;

    bench_samples_sort(&res.samples);
    bench_samples_t *s = &res.samples;
    double rate = res.elapsed_s > 0 ? (double)res.acked / res.elapsed_s : 0;
    /* The label and target carry no spaces by construction of the scripts;
     * the line stays one record per run either way. */
    printf("result label=%s target=%s command=%s writers=%d threads=%d requests=%ld "
           "duration_s=%g think_ms=%g value_size=%d sent=%llu acked=%llu errors=%llu "
           "misses=%llu elapsed_s=%.6f ops_per_s=%.1f min_us=%.1f p50_us=%.1f p99_us=%.1f "
           "p999_us=%.1f max_us=%.1f mean_us=%.1f wake=%s across=%ld early=%ld\n",
           cfg.label, target, command_name(cfg.command), cfg.writers,
           cfg.sqlite ? cfg.writers : cfg.threads, cfg.requests, cfg.duration_s, cfg.think_ms,
           cfg.command == CMD_GET ? 0 : cfg.value_size, (unsigned long long)res.sent,
           (unsigned long long)res.acked, (unsigned long long)res.errors,
           (unsigned long long)res.misses, res.elapsed_s, rate, bench_percentile(s, 0) / 1e3,
           bench_percentile(s, 50) / 1e3, bench_percentile(s, 99) / 1e3,
           bench_percentile(s, 99.9) / 1e3, bench_percentile(s, 100) / 1e3, bench_mean(s) / 1e3,
           cfg.wake == BENCH_WAKE_XREAD ? "xread"
           : cfg.wake                   ? "blpop"
                                        : "none",
           across, early);
    fflush(stdout);
    if (!cfg.quiet) print_summary(&cfg, target, &res, rate);
    int failed = res.errors > 0 || res.acked != res.sent || res.sent == 0;
    bench_samples_free(&res.samples);
    return failed ? 1 : 0;
}
