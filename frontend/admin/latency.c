/*
 * latency.c - LATENCY (DOCTOR, LATEST, HISTORY, RESET, HELP) and the latency
 * monitor behind it, as Redis 7.0 keeps it, in the frontends.
 *
 * Events (shm_latency_t, frontend/fe-shm.h, one table for the server):
 *   command       a command not flagged fast took at least
 *                 latency-monitor-threshold ms, from its request being read
 *                 to its reply being ready (the time SLOWLOG measures: a
 *                 write's includes waiting for fdatasync);
 *   fast-command  the same for a fast command (GET, SET, INCR, ...). Fast
 *                 commands answered together in one batch share its time
 *                 (hooks.c's batch clock), so one slow among them shows as
 *                 their average;
 *   fsync         one of the logger's fdatasyncs took that long. The logger
 *                 keeps a histogram of them in shared memory (shm.h,
 *                 fsync_hist); frontend 0 looks at it every tick (10 ms),
 *                 and the slowest bucket that grew since its last look is
 *                 the sample, its upper edge (within 12.5% above the true
 *                 value).
 * A sample is the maximum of its second, as Redis': a second already
 * sampled keeps the larger value. Threshold 0 (the default) records
 * nothing. Nothing here blocks: the lock is held for short copies only.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "frontend/admin/admin.h"
#include "frontend/cmd/cmd.h"
#include "frontend/core/core.h"

static shm_latency_t *table(fe_t *fe)
{
    return &fe_shm(fe->shm)->latency;
}

/* Under the lock: the event named s[0, n), created when `create`; NULL if
 * missing (or the table is full). */
static shm_latency_event_t *find_event(shm_latency_t *t, const char *s, size_t n, int create)
{
    shm_latency_event_t *free_ev = NULL;
    for (int i = 0; i < SHM_LATENCY_EVENTS; i++) {
        shm_latency_event_t *e = &t->ev[i];
        if (!e->name[0]) {
            if (!free_ev) free_ev = e;
            continue;
        }
        if (strlen(e->name) == n && !memcmp(e->name, s, n)) return e;
    }
    if (!create || !free_ev || n >= sizeof(free_ev->name)) return NULL;
    memset(free_ev, 0, sizeof(*free_ev));
    memcpy(free_ev->name, s, n);
    return free_ev;
}

/* Redis' latencyAddSample. */
static void add_sample(fe_t *fe, const char *event, uint64_t ms)
{
    uint32_t latency = ms > UINT32_MAX ? UINT32_MAX : (uint32_t)ms;
    int32_t now = (int32_t)time(NULL);
    shm_latency_t *t = table(fe);
    fe_shm_lock(&t->lock);
    shm_latency_event_t *e = find_event(t, event, strlen(event), 1);
    if (e) {
        uint32_t prev = (e->idx + SHM_LATENCY_SAMPLES - 1) % SHM_LATENCY_SAMPLES;
        if (latency > e->max) e->max = latency;
        if (e->samples[prev].time_s == now) {
            if (latency > e->samples[prev].latency_ms) e->samples[prev].latency_ms = latency;
        } else {
            e->samples[e->idx].time_s = now;
            e->samples[e->idx].latency_ms = latency;
            e->idx = (e->idx + 1) % SHM_LATENCY_SAMPLES;
        }
    }
    fe_shm_unlock(&t->lock);
}

void fe_latency_command(fe_t *fe, unsigned idx, uint64_t nsec)
{
    uint64_t threshold = fe->admin->latency_threshold_ns;
    if (!threshold || nsec < threshold) return;
    add_sample(fe, (fe_cmd_index_cats(idx) & CAT_FAST) ? "fast-command" : "command",
               nsec / 1000000);
}

void fe_latency_tick(fe_t *fe)
{
    if (fe->slot != 0) return; /* one sampler for the server */
    _Atomic uint64_t *h = fe->shm->stats.fsync_hist;
    if (!fe->admin->fsync_seen) {
        fe->admin->fsync_seen = calloc(SHM_HIST_BUCKETS, sizeof(uint64_t));
        if (!fe->admin->fsync_seen) return;
        for (unsigned i = 0; i < SHM_HIST_BUCKETS; i++)
            fe->admin->fsync_seen[i] = atomic_load_explicit(&h[i], memory_order_relaxed);
        return; /* what happened before this frontend started is not known */
    }
    uint64_t *seen = fe->admin->fsync_seen;
    int slowest = -1;
    for (int i = SHM_HIST_BUCKETS - 1; i >= 0; i--) {
        uint64_t v = atomic_load_explicit(&h[i], memory_order_relaxed);
        if (v != seen[i] && slowest < 0) slowest = i;
        seen[i] = v;
    }
    uint64_t threshold = fe->admin->latency_threshold_ns;
    if (slowest < 0 || !threshold) return;
    uint64_t upper = shm_hist_lower((unsigned)slowest + 1);
    if (upper >= threshold) add_sample(fe, "fsync", upper / 1000000);
}

/* ---- the command ---- */

/* A copy of the table, taken under the lock. */
static void snapshot(fe_t *fe, shm_latency_t *copy)
{
    shm_latency_t *t = table(fe);
    fe_shm_lock(&t->lock);
    memcpy(copy->ev, t->ev, sizeof(copy->ev));
    fe_shm_unlock(&t->lock);
}

static int event_count(const shm_latency_t *t)
{
    int n = 0;
    for (int i = 0; i < SHM_LATENCY_EVENTS; i++)
        n += t->ev[i].name[0] != 0;
    return n;
}

static void latency_latest(fe_conn_t *c, buf_t *out)
{
    static shm_latency_t t;
    snapshot(c->fe, &t);
    resp_array(out, event_count(&t));
    for (int i = 0; i < SHM_LATENCY_EVENTS; i++) {
        const shm_latency_event_t *e = &t.ev[i];
        if (!e->name[0]) continue;
        uint32_t last = (e->idx + SHM_LATENCY_SAMPLES - 1) % SHM_LATENCY_SAMPLES;
        resp_array(out, 4);
        resp_bulk_cstr(out, e->name);
        resp_integer(out, e->samples[last].time_s);
        resp_integer(out, e->samples[last].latency_ms);
        resp_integer(out, e->max);
    }
}

static void latency_history(fe_conn_t *c, const char *name, size_t n, buf_t *out)
{
    static shm_latency_t t;
    snapshot(c->fe, &t);
    shm_latency_event_t *e = find_event(&t, name, n, 0);
    if (!e) {
        resp_array(out, 0);
        return;
    }
    int count = 0;
    for (int j = 0; j < SHM_LATENCY_SAMPLES; j++)
        count += e->samples[j].time_s != 0;
    resp_array(out, count);
    for (int j = 0; j < SHM_LATENCY_SAMPLES; j++) {
        uint32_t k = (e->idx + (uint32_t)j) % SHM_LATENCY_SAMPLES;
        if (!e->samples[k].time_s) continue;
        resp_array(out, 2);
        resp_integer(out, e->samples[k].time_s);
        resp_integer(out, e->samples[k].latency_ms);
    }
}

/* RESET [event ...]: how many events were reset (all without names). */
static void latency_reset(fe_conn_t *c, int argc, const char **argv, const uint32_t *lens,
                          buf_t *out)
{
    shm_latency_t *t = table(c->fe);
    long long n = 0;
    fe_shm_lock(&t->lock);
    if (argc == 2) {
        for (int i = 0; i < SHM_LATENCY_EVENTS; i++)
            if (t->ev[i].name[0]) {
                memset(&t->ev[i], 0, sizeof(t->ev[i]));
                n++;
            }
    } else {
        for (int a = 2; a < argc; a++) {
            shm_latency_event_t *e = find_event(t, argv[a], lens[a], 0);
            if (!e) continue;
            memset(e, 0, sizeof(*e));
            n++;
        }
    }
    fe_shm_unlock(&t->lock);
    resp_integer(out, n);
}

static const char *advice(const char *event)
{
    if (!strcmp(event, "fsync"))
        return "the disk's fdatasync was slow: every write acknowledged in that batch waited "
               "for it. Compare INFO persistence's atticdb_fsync_p99_us with the disk's own "
               "floor (tools/bench-durable measures it), and look for other writers on the "
               "same device.";
    if (!strcmp(event, "fast-command"))
        return "fast commands (O(1) ones) were slow, which for a write is mostly the wait for "
               "its fdatasync (see the fsync event), for a read a value read back from the "
               "disk. SLOWLOG GET names the commands.";
    if (!strcmp(event, "command"))
        return "slow commands: SLOWLOG GET names them. KEYS and a SCAN with a large COUNT "
               "walk the whole keyspace; writes include the wait for their fdatasync.";
    return "no advice for this event.";
}

/* DOCTOR: the event summary, then what each means here. Redis' opening
 * sentences, so that an operator who knows them knows where they are. */
static void latency_doctor(fe_conn_t *c, buf_t *out)
{
    static shm_latency_t t;
    snapshot(c->fe, &t);
    buf_t b;
    buf_init(&b);
    int n = event_count(&t);
    if (!n && !c->fe->admin->latency_threshold_ns) {
        buf_appendf(&b, "I'm sorry, Dave, I can't do that. Latency monitoring is disabled in "
                        "this AtticDB instance. You may use \"CONFIG SET "
                        "latency-monitor-threshold <milliseconds>.\" in order to enable it.\n");
    } else if (!n) {
        buf_appendf(&b, "Dave, no latency spike was observed during the lifetime of this AtticDB "
                        "instance, not in the slightest bit. I honestly think you ought to "
                        "sleep tonight.\n");
    } else {
        buf_appendf(&b, "Dave, I have observed latency spikes in this AtticDB instance. You "
                        "don't mind talking about it, do you Dave?\n\n");
        int k = 0;
        for (int i = 0; i < SHM_LATENCY_EVENTS; i++) {
            const shm_latency_event_t *e = &t.ev[i];
            if (!e->name[0]) continue;
            uint64_t sum = 0, cnt = 0;
            int32_t first = 0, last = 0;
            for (int j = 0; j < SHM_LATENCY_SAMPLES; j++) {
                if (!e->samples[j].time_s) continue;
                sum += e->samples[j].latency_ms;
                cnt++;
                if (!first || e->samples[j].time_s < first) first = e->samples[j].time_s;
                if (e->samples[j].time_s > last) last = e->samples[j].time_s;
            }
            buf_appendf(&b,
                        "%d. %s: %" PRIu64 " latency spikes (average %" PRIu64
                        "ms, over %d s). Worst all time event %ums.\n",
                        ++k, e->name, cnt, cnt ? sum / cnt : 0, (int)(last - first), e->max);
        }
        buf_appendf(&b, "\nI have a few advices for you:\n\n");
        for (int i = 0; i < SHM_LATENCY_EVENTS; i++)
            if (t.ev[i].name[0]) buf_appendf(&b, "- %s: %s\n", t.ev[i].name, advice(t.ev[i].name));
    }
    resp_verbatim(out, c->proto, "txt", b.data, b.len);
    buf_free(&b);
}

static const char *const latency_help[] = {
    "LATENCY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "DOCTOR",
    "    Return a human readable latency analysis report.",
    "HISTORY <event>",
    "    Return time-latency samples for the <event> class.",
    "LATEST",
    "    Return the latest latency samples for all events.",
    "RESET [<event> ...]",
    "    Reset latency data of one or more <event> classes.",
    "    (default: reset all data for all event classes)",
    "HELP",
    "    Prints this help.",
    NULL,
};

void fe_cmd_latency(fe_conn_t *c, int argc, const char **argv, const uint32_t *lens, buf_t *out)
{
    if (fe_subcmd_arity_check(cmd_by_id(CMD_LATENCY), argc, argv, lens, out) != 0) return;
    const char *sub = argv[1];
    size_t sl = lens[1];
    if (fe_word_eq(sub, sl, "latest"))
        latency_latest(c, out);
    else if (fe_word_eq(sub, sl, "history"))
        latency_history(c, argv[2], lens[2], out);
    else if (fe_word_eq(sub, sl, "reset"))
        latency_reset(c, argc, argv, lens, out);
    else if (fe_word_eq(sub, sl, "doctor"))
        latency_doctor(c, out);
    else if (fe_word_eq(sub, sl, "help"))
        fe_reply_help(out, latency_help);
    else
        fe_reply_unknown_subcmd(out, "LATENCY", sub, sl);
}
