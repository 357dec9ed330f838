/*
 * test_diff.c - a seeded random differential test of AtticDB against
 * redis-server. Starts both, sends both the same N random commands (see
 * diff_gen.c: every string, keyspace, expiry, database and transaction
 * command of issue 5, with bad arguments, binary data, MULTI/EXEC blocks and
 * WATCH), one at a time, and compares each pair of replies byte for byte,
 * except where Redis' own reply depends on the clock or on hash-table order:
 *   TTL, PTTL, EXPIRETIME, PEXPIRETIME  both -1/-2 alike, or both >= 0 and
 *                        within a few seconds (absolute times set by the
 *                        *AT commands must be equal);
 *   KEYS, SCAN           the same set of keys (SCAN: a whole iteration);
 *   RANDOMKEY            on each side a key that EXISTS there, or nil when
 *                        that side's DBSIZE is 0;
 *   HKEYS, HVALS, HGETALL the same elements (HGETALL: pairs), any order
 *                        (a hashtable-encoded hash lists in table order);
 *   HSCAN                the same pairs over a whole iteration;
 *   HRANDFIELD, ZRANDMEMBER  the same reply shape (types, counts);
 *   HELLO                a reply of the same kind (server facts differ);
 *   SORT ... ALPHA       without STORE: the same elements, any order;
 *   OBJECT ENCODING      once a SORT ran: Redis' skiplist may be AtticDB's
 *                        listpack (Redis converts a zset it sorts, D47),
 *                        alone or in an EXEC's reply.
 * Before each SORT and SORT_RO both servers get SCAN 0 COUNT 0 (an error,
 * or QUEUED inside MULTI): Redis 7.0.15's numeric SORT refuses an element
 * when errno is ERANGE after its strtod, but never clears errno first, so
 * an earlier command that left ERANGE behind (SCAN's cursor past 2^64,
 * a score such as 1e-310) makes a later SORT of "" or "1.5" fail there;
 * SCAN sets errno to 0 before parsing its cursor. Compared exactly.
 * Then compares the whole state: every key of the 16 databases, its value
 * and whether it has a TTL (and its expiry time, loosely as above).
 *
 * The seed is printed first; a mismatch prints the seed, the command's
 * index, the command, both replies and the commands before it. Rerun one
 * exactly with ATTIC_SEED=<seed>.
 *
 * Environment:
 *   ATTIC_SEED                 seed (default: DEFAULT_SEED, a fixed run;
 *                              "random": from the clock)
 *   ATTIC_DIFF_N               commands (default 20000)
 *   ATTIC_DIFF_BOTH_REDIS=1    a second redis-server instead of AtticDB:
 *                              proves the generator and comparisons sound
 *   ATTIC_DIFF_SKIP=A,B        command names not to generate
 *   ATTIC_DIFF_ONLY=A,B        generate only these (MULTI, EXEC, DISCARD
 *                              are commands here too)
 *   ATTIC_DIFF_MAX_MISMATCHES  stop after this many (default 10)
 *   ATTIC_DIFF_TIMEOUT         hard limit in seconds (default 240)
 *   ATTIC_DIFF_VERBOSE=1       print every command and reply
 *   ATTIC_DIFF_ARGS            settings given to both servers
 *                              ("--hash-max-listpack-entries 4")
 *   ATTIC_DIFF_ATTIC_ARGS      settings given to AtticDB only
 *                              ("--collection-paging-entries 2": D60)
 *   ATTIC_DIFF_RECORD=FILE     write each generated command to FILE as
 *                              RESP (the Nth command is the Nth in FILE), to
 *                              replay a prefix against servers one can then
 *                              question (tools/diff-replay)
 *   ATTICDB_SERVER, REDIS_SERVER  the binaries
 * Exit: 0 all identical, 1 differences, 77 no redis-server (skipped),
 * 99 a server did not start.
 */
#include <inttypes.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "diff_gen.h"
#include "harness.h"
#include "redis_diff.h"

typedef struct side {
    const char *name;
    int port;
    wire_conn_t *c;
} side_t;

static side_t sides[2]; /* [0] redis-server, the reference; [1] under test */
static wire_redis_t ref_redis, second_redis;
static srv_t atticdb;
static int both_redis;
static uint64_t seed;
#define DEFAULT_SEED 1ull
static long total_cmds;
static int mismatches, max_mismatches, verbose, lost;

#define HISTORY 8
static char *history[HISTORY];
static long history_at;

/* ------------------------------------------------------------------ */
/* hard timeout and cleanup                                            */

static void stop_servers(void)
{
    for (int i = 0; i < 2; i++) {
        wire_close(sides[i].c);
        sides[i].c = NULL;
    }
    wire_redis_stop(&ref_redis);
    wire_redis_stop(&second_redis);
    if (atticdb.dir[0]) {
        srv_stop(&atticdb);
        srv_cleanup(&atticdb);
    }
}

static void on_alarm(int sig)
{
    (void)sig;
    char msg[200];
    int n = snprintf(msg, sizeof(msg),
                     "\ndiff: hard timeout (ATTIC_DIFF_TIMEOUT); ATTIC_SEED=%" PRIu64 "\n", seed);
    if (write(2, msg, (size_t)n) < 0) _exit(1);
    /* Only async-signal-safe calls: kill the groups, remove the
     * directories with a child rm, exit. */
    pid_t pids[3] = {ref_redis.pid, second_redis.pid, atticdb.pid};
    for (int i = 0; i < 3; i++)
        if (pids[i] > 0) kill(-pids[i], SIGKILL);
    pid_t rm = fork();
    if (rm == 0) {
        execl("/bin/rm", "rm", "-rf", ref_redis.dir[0] ? ref_redis.dir : "/nonexistent-attic",
              second_redis.dir[0] ? second_redis.dir : "/nonexistent-attic",
              atticdb.dir[0] ? atticdb.dir : "/nonexistent-attic",
              atticdb.log[0] ? atticdb.log : "/nonexistent-attic", (char *)NULL);
        _exit(1);
    }
    if (rm > 0) waitpid(rm, NULL, 0);
    _exit(1);
}

/* ------------------------------------------------------------------ */
/* reporting                                                           */

static void remember(const char *text)
{
    free(history[history_at % HISTORY]);
    history[history_at % HISTORY] = strdup(text);
    history_at++;
}

static void report(long idx, const char *what, const char *r0, size_t n0, const char *r1, size_t n1,
                   const char *note)
{
    mismatches++;
    char *e0 = wire_escape(r0, n0, 600), *e1 = wire_escape(r1, n1, 600);
    if (idx > total_cmds)
        printf("\nMISMATCH %d in the final state, after all %ld commands (ATTIC_SEED=%" PRIu64
               "): %s\n",
               mismatches, total_cmds, seed, what);
    else
        printf("\nMISMATCH %d at command %ld of %ld (ATTIC_SEED=%" PRIu64 "): %s\n", mismatches,
               idx, total_cmds, seed, what);
    printf("  %-8s %s\n  %-8s %s\n", sides[0].name, e0, sides[1].name, e1);
    if (note) printf("  (%s)\n", note);
    if (mismatches == 1 && history_at > 1) {
        printf("  commands before it, oldest first:\n");
        long from = history_at - HISTORY > 0 ? history_at - HISTORY : 0;
        for (long i = from; i < history_at - 1; i++)
            printf("    #%ld %s\n", idx - (history_at - 1 - i), history[i % HISTORY]);
    }
    fflush(stdout);
    free(e0);
    free(e1);
    if (wire_is_failure(r0) || wire_is_failure(r1)) lost = 1;
}

/* ------------------------------------------------------------------ */
/* sending                                                             */

typedef struct reply {
    char *p;
    size_t n;
} reply_t;

static reply_t reply_on(side_t *s)
{
    reply_t r;
    r.p = wire_reply(s->c, &r.n);
    return r;
}

static reply_t send_one(side_t *s, int argc, char *const *argv, const size_t *lens)
{
    if (wire_send(s->c, argc, (const char *const *)argv, lens) != 0) {
        reply_t r = {strdup("<write failed>"), strlen("<write failed>")};
        return r;
    }
    return reply_on(s);
}

/* Both sides at once: the two servers get the command within microseconds
 * of each other, which keeps time-dependent replies close. */
static void send_both(int argc, char *const *argv, const size_t *lens, reply_t out[2])
{
    int sent[2];
    for (int i = 0; i < 2; i++)
        sent[i] = wire_send(sides[i].c, argc, (const char *const *)argv, lens);
    for (int i = 0; i < 2; i++) {
        if (sent[i] != 0) {
            out[i].p = strdup("<write failed>");
            out[i].n = strlen(out[i].p);
        } else {
            out[i] = reply_on(&sides[i]);
        }
    }
}

static reply_t send_words(side_t *s, int argc, const char **words)
{
    size_t lens[8];
    for (int i = 0; i < argc; i++)
        lens[i] = strlen(words[i]);
    return send_one(s, argc, (char *const *)words, lens);
}

static int same(const reply_t r[2])
{
    return r[0].n == r[1].n && memcmp(r[0].p, r[1].p, r[0].n) == 0 && !wire_is_failure(r[0].p);
}

static void free_pair(reply_t r[2])
{
    free(r[0].p);
    free(r[1].p);
}

/* ------------------------------------------------------------------ */
/* comparisons                                                         */

static FILE *record; /* ATTIC_DIFF_RECORD: every command sent, as RESP */

static void record_cmd(int argc, char *const *argv, const size_t *lens)
{
    if (!record) return;
    wire_buf_t b = {0};
    wire_encode(&b, argc, (const char *const *)argv, lens);
    fwrite(b.p, 1, b.len, record);
    wire_buf_free(&b);
}

static void check_exact(long idx, const char *text, reply_t r[2])
{
    if (!same(r)) report(idx, text, r[0].p, r[0].n, r[1].p, r[1].n, NULL);
}

/* OBJECT ENCODING once a SORT ran, alone or inside an EXEC's reply:
 * exact, or Redis' skiplist where AtticDB has listpack (Redis converts
 * every zset it sorts, D47). */
static void check_encoding(long idx, const char *text, reply_t r[2])
{
    static const char redis_sl[] = "$8\r\nskiplist\r\n", attic_lp[] = "$8\r\nlistpack\r\n";
    const size_t n = sizeof(redis_sl) - 1;
    if (same(r)) return;
    if (r[0].n == r[1].n && !wire_is_failure(r[0].p)) {
        /* Redis' reply with each skiplist that AtticDB answers listpack
         * at the same place taken as listpack (same length). */
        int ok = 1;
        for (size_t i = 0; ok && i < r[0].n;) {
            if (r[0].p[i] == r[1].p[i]) {
                i++;
            } else {
                size_t at = i;
                while (at > 0 && r[0].p[at] != '$')
                    at--;
                ok = at + n <= r[0].n && !memcmp(r[0].p + at, redis_sl, n) &&
                     !memcmp(r[1].p + at, attic_lp, n);
                i = at + n;
            }
        }
        if (ok) return;
    }
    report(idx, text, r[0].p, r[0].n, r[1].p, r[1].n, NULL);
}

/* TTL family: -1/-2 exactly; >= 0 within tolerance, except absolute times
 * at or after the generator's epoch, which must be equal. */
static int time_equal(const dgen_cmd_t *cmd, const reply_t r[2])
{
    if (same(r)) return 1;
    wire_val_t a, b;
    int ok = 0;
    if (wire_parse(r[0].p, r[0].n, &a) == 0 && wire_parse(r[1].p, r[1].n, &b) == 0 &&
        a.type == ':' && b.type == ':' && a.integer >= 0 && b.integer >= 0) {
        long long abs_from = DGEN_ABS_EPOCH_S;
        if (strcasecmp(cmd->argv[0], "PEXPIRETIME") == 0) abs_from *= 1000;
        int absolute = (strcasecmp(cmd->argv[0], "EXPIRETIME") == 0 ||
                        strcasecmp(cmd->argv[0], "PEXPIRETIME") == 0) &&
                       (a.integer >= abs_from || b.integer >= abs_from);
        long long d = a.integer > b.integer ? a.integer - b.integer : b.integer - a.integer;
        ok = !absolute && d <= cmd->tolerance;
    }
    wire_val_free(&a);
    wire_val_free(&b);
    return ok;
}

/* The set as RESP (an array of bulks) for messages. */
static reply_t keys_render(const wire_keys_t *s)
{
    reply_t r;
    r.p = wire_keys_render(s, &r.n);
    return r;
}

/* Both replies as sorted sets of keys: 1 if both are arrays of bulks
 * (then s[] holds them), else 0. */
static int keys_of_pair(const reply_t r[2], wire_keys_t s[2])
{
    int ok = 1;
    for (int i = 0; i < 2; i++)
        ok &= wire_keys_of_reply(r[i].p, r[i].n, &s[i]) == 0;
    return ok;
}

/* Report the two sets (shown sorted) when they differ; free them. */
static void check_sets(long idx, const char *text, wire_keys_t s[2], const char *note)
{
    if (!wire_keys_equal(&s[0], &s[1])) {
        reply_t x = keys_render(&s[0]), y = keys_render(&s[1]);
        report(idx, text, x.p, x.n, y.p, y.n, note);
        free(x.p);
        free(y.p);
    }
    wire_keys_free(&s[0]);
    wire_keys_free(&s[1]);
}

static void check_keys(long idx, const char *text, reply_t r[2])
{
    if (same(r)) return;
    wire_keys_t s[2] = {{0}, {0}};
    if (keys_of_pair(r, s)) {
        check_sets(idx, text, s, "different sets of keys (shown sorted)");
        return;
    }
    report(idx, text, r[0].p, r[0].n, r[1].p, r[1].n, NULL);
    wire_keys_free(&s[0]);
    wire_keys_free(&s[1]);
}

static void check_scan(long idx, const char *text, dgen_cmd_t *cmd)
{
    wire_keys_t s[2] = {{0}, {0}};
    reply_t bad[2] = {{NULL, 0}, {NULL, 0}};
    int rc[2];
    for (int i = 0; i < 2; i++)
        rc[i] = wire_scan_all(sides[i].c, cmd->argc, (const char *const *)cmd->argv, cmd->lens,
                              &s[i], &bad[i].p, &bad[i].n);
    if (rc[0] == 0 && rc[1] == 0) {
        check_sets(idx, text, s, "a whole SCAN iteration: different sets of keys (shown sorted)");
        return;
    }
    /* an error (a bad option): it must be the same error */
    reply_t r[2];
    for (int i = 0; i < 2; i++)
        r[i] = rc[i] != 0 ? bad[i] : keys_render(&s[i]);
    if (!(rc[0] != 0 && rc[1] != 0 && same(r)))
        report(idx, text, r[0].p, r[0].n, r[1].p, r[1].n,
               "SCAN: an error on one side or different errors");
    free_pair(r);
    wire_keys_free(&s[0]);
    wire_keys_free(&s[1]);
}

/* HKEYS, HVALS (pairs 0) and HGETALL (pairs 1): a hashtable-encoded hash
 * lists its fields in its table's order, which differs between servers;
 * the same reply type and the same elements in any order is equal. */
static void check_unordered(long idx, const char *text, reply_t r[2], int pairs)
{
    if (same(r)) return;
    wire_val_t v[2];
    wire_keys_t s[2] = {{0}, {0}};
    int parsed[2], ok = 1;
    for (int i = 0; i < 2; i++) {
        parsed[i] = wire_parse(r[i].p, r[i].n, &v[i]) == 0;
        ok &= parsed[i] && (pairs ? wire_pairs_from_array(&v[i], &s[i])
                                  : wire_keys_from_array(&v[i], &s[i])) == 0;
    }
    if (ok && v[0].type == v[1].type) {
        wire_keys_sort(&s[0]);
        wire_keys_sort(&s[1]);
        check_sets(idx, text, s, "different elements (shown sorted)");
    } else {
        report(idx, text, r[0].p, r[0].n, r[1].p, r[1].n, NULL);
        wire_keys_free(&s[0]);
        wire_keys_free(&s[1]);
    }
    for (int i = 0; i < 2; i++)
        if (parsed[i]) wire_val_free(&v[i]);
}

/* A reply's shape: types and counts, bulk contents left out (HRANDFIELD
 * picks at random); other values (errors, integers) in full. */
static void shape_of(const wire_val_t *v, wire_buf_t *b)
{
    switch (v->type) {
    case '$':
        wire_buf_add(b, v->str ? "$" : "$nil", v->str ? 1 : 4);
        break;
    case '*':
    case '%':
    case '~': {
        long long n = v->type == '%' ? v->n * 2 : v->n;
        wire_buf_printf(b, "%c%lld[", v->type, v->n);
        for (long long i = 0; i < n; i++)
            shape_of(&v->elem[i], b);
        wire_buf_add(b, "]", 1);
        break;
    }
    case ':':
        wire_buf_printf(b, ":%lld", v->integer);
        break;
    case ',': /* ZRANDMEMBER's scores are as random as its members */
        wire_buf_add(b, ",", 1);
        break;
    default:
        wire_buf_add(b, &v->type, 1);
        if (v->str) wire_buf_add(b, v->str, v->len);
        break;
    }
}

static void check_shape(long idx, const char *text, reply_t r[2])
{
    if (same(r)) return;
    wire_val_t v[2];
    wire_buf_t b[2] = {{0}, {0}};
    int ok = 1;
    for (int i = 0; i < 2; i++) {
        int p = wire_parse(r[i].p, r[i].n, &v[i]) == 0;
        if (p) shape_of(&v[i], &b[i]), wire_val_free(&v[i]);
        ok &= p;
    }
    if (!ok || b[0].len != b[1].len || memcmp(b[0].p, b[1].p, b[0].len) != 0)
        report(idx, text, r[0].p, r[0].n, r[1].p, r[1].n, "HRANDFIELD: different reply shapes");
    wire_buf_free(&b[0]);
    wire_buf_free(&b[1]);
}

static void check_hscan(long idx, const char *text, dgen_cmd_t *cmd, int pairs)
{
    wire_keys_t s[2] = {{0}, {0}};
    reply_t bad[2] = {{NULL, 0}, {NULL, 0}};
    int rc[2];
    for (int i = 0; i < 2; i++)
        rc[i] = wire_scan_all_at(sides[i].c, cmd->argc, (const char *const *)cmd->argv, cmd->lens,
                                 2, pairs, &s[i], &bad[i].p, &bad[i].n);
    if (rc[0] == 0 && rc[1] == 0) {
        check_sets(idx, text, s, "a whole HSCAN iteration: different pairs (shown sorted)");
        return;
    }
    reply_t r[2];
    for (int i = 0; i < 2; i++)
        r[i] = rc[i] != 0 ? bad[i] : keys_render(&s[i]);
    if (!(rc[0] != 0 && rc[1] != 0 && same(r)))
        report(idx, text, r[0].p, r[0].n, r[1].p, r[1].n,
               "HSCAN: an error on one side or different errors");
    free_pair(r);
    wire_keys_free(&s[0]);
    wire_keys_free(&s[1]);
}

/* HELLO: the servers describe themselves differently; both must answer
 * with a map (RESP3) or an array (RESP2) of the same kind, or the same error. */
static void check_hello(long idx, const char *text, reply_t r[2])
{
    if (r[0].n && r[1].n && r[0].p[0] == r[1].p[0] && r[0].p[0] != '-') return;
    check_exact(idx, text, r);
}

/* RANDOMKEY: the same kind of reply; a key must exist on its side, nil
 * only on an empty database. */
static void check_randomkey(long idx, const char *text, reply_t r[2])
{
    if (r[0].p[0] != '$' || r[1].p[0] != '$') {
        check_exact(idx, text, r);
        return;
    }
    int nil0 = strcmp(r[0].p, "$-1\r\n") == 0, nil1 = strcmp(r[1].p, "$-1\r\n") == 0;
    if (nil0 != nil1) {
        report(idx, text, r[0].p, r[0].n, r[1].p, r[1].n, "RANDOMKEY: nil on one side only");
        return;
    }
    for (int i = 0; i < 2; i++) {
        reply_t chk;
        const char *want;
        if (nil0) {
            chk = send_words(&sides[i], 1, (const char *[]){"DBSIZE"});
            want = ":0\r\n";
        } else {
            wire_val_t v;
            if (wire_parse(r[i].p, r[i].n, &v) != 0) {
                report(idx, text, r[0].p, r[0].n, r[1].p, r[1].n,
                       "RANDOMKEY: reply does not parse");
                return;
            }
            char *argv[] = {"EXISTS", (char *)v.str};
            size_t lens[] = {6, v.len};
            chk = send_one(&sides[i], 2, argv, lens);
            wire_val_free(&v);
            want = ":1\r\n";
        }
        if (strcmp(chk.p, want) != 0) {
            char note[200];
            snprintf(note, sizeof(note), "RANDOMKEY on %s: %s there answers %.40s", sides[i].name,
                     nil0 ? "nil, but DBSIZE" : "a key, but EXISTS of it", chk.p);
            report(idx, text, r[0].p, r[0].n, r[1].p, r[1].n, note);
        }
        free(chk.p);
    }
}

static void print_replies(const reply_t r[2])
{
    for (int i = 0; i < 2; i++) {
        char *e = wire_escape(r[i].p, r[i].n, 200);
        printf("    %-8s %s\n", sides[i].name, e);
        free(e);
    }
}

/* Redis' errno to 0 before a SORT (see the banner): SCAN clears it to
 * parse its cursor, and COUNT 0 makes it an error that does nothing. */
static void clear_redis_errno(long idx)
{
    static const char *const words[] = {"SCAN", "0", "COUNT", "0"};
    static const size_t lens[] = {4, 1, 5, 1};
    reply_t r[2];
    send_both(4, (char *const *)words, lens, r); /* not recorded: diff-replay does the same */
    if (verbose) {
        printf("#%ld (before a SORT) SCAN 0 COUNT 0\n", idx);
        print_replies(r);
    }
    check_exact(idx, "(before a SORT, clears Redis' errno) SCAN 0 COUNT 0", r);
    free_pair(r);
}

/* ------------------------------------------------------------------ */
/* the final state                                                     */

/* sorted: a SORT ran, so zset encodings may differ (check_encoding). */
static void compare_state(int sorted)
{
    long idx = total_cmds + 1;
    reply_t r[2];
    const char *unwatch[] = {"UNWATCH"};
    size_t ulen[] = {7};
    send_both(1, (char *const *)unwatch, ulen, r);
    free_pair(r);
    for (int db = 0; db < 16 && !lost && mismatches < max_mismatches; db++) {
        char dbs[16], what[64];
        snprintf(dbs, sizeof(dbs), "%d", db);
        char *sel[] = {"SELECT", dbs};
        size_t sel_len[] = {6, strlen(dbs)};
        send_both(2, sel, sel_len, r);
        snprintf(what, sizeof(what), "(final state) SELECT %d", db);
        check_exact(idx, what, r);
        free_pair(r);
        char *keys[] = {"KEYS", "*"};
        size_t keys_len[] = {4, 1};
        send_both(2, keys, keys_len, r);
        snprintf(what, sizeof(what), "(final state) db %d: KEYS *", db);
        wire_keys_t s[2] = {{0}, {0}};
        int ok = keys_of_pair(r, s);
        if (!ok || !wire_keys_equal(&s[0], &s[1])) {
            if (ok) {
                free_pair(r);
                r[0] = keys_render(&s[0]);
                r[1] = keys_render(&s[1]);
            }
            report(idx, what, r[0].p, r[0].n, r[1].p, r[1].n, "the databases hold different keys");
        }
        free_pair(r);
        for (size_t k = 0; ok && k < s[0].n && mismatches < max_mismatches; k++) {
            char *ek = wire_escape(s[0].k[k], s[0].len[k], 60);
            static const char *const reads[] = {"GET",     "PEXPIRETIME", "TYPE",
                                                "HGETALL", "SMEMBERS",    "OBJECT"};
            for (int q = 0; q < 6; q++) {
                char *argv[] = {(char *)reads[q], s[0].k[k], NULL};
                size_t lens[] = {strlen(reads[q]), s[0].len[k], 0};
                if (q == 5) { /* OBJECT ENCODING key: the encodings agree too */
                    argv[1] = "ENCODING", lens[1] = 8;
                    argv[2] = s[0].k[k], lens[2] = s[0].len[k];
                }
                send_both(q == 5 ? 3 : 2, argv, lens, r);
                snprintf(what, sizeof(what), "(final state) db %d: %s ", db, reads[q]);
                char *label = malloc(strlen(what) + strlen(ek) + 1);
                strcpy(label, what);
                strcat(label, ek);
                dgen_cmd_t fake = {.argc = 2, .check = DGEN_TIME, .tolerance = 5000};
                fake.argv[0] = (char *)reads[q];
                if (q == 0 || q == 2)
                    check_exact(idx, label, r);
                else if (q == 3)
                    check_unordered(idx, label, r, 1);
                else if (q == 4)
                    check_unordered(idx, label, r, 0);
                else if (q == 5 && sorted)
                    check_encoding(idx, label, r);
                else if (q == 5)
                    check_exact(idx, label, r);
                else if (!time_equal(&fake, r))
                    report(idx, label, r[0].p, r[0].n, r[1].p, r[1].n, "expiry");
                free(label);
                free_pair(r);
            }
            free(ek);
        }
        wire_keys_free(&s[0]);
        wire_keys_free(&s[1]);
    }
}

/* ------------------------------------------------------------------ */
/* main                                                                */

static long env_long(const char *name, long def)
{
    const char *e = getenv(name);
    return e && *e ? strtol(e, NULL, 0) : def;
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    signal(SIGPIPE, SIG_IGN);
    /* make check runs a fixed sequence, so CI is repeatable (a seed that
     * finds a difference becomes a test of its own); ATTIC_SEED=random
     * explores, as long runs should. */
    const char *env_seed = getenv("ATTIC_SEED");
    if (!env_seed || !*env_seed) {
        seed = DEFAULT_SEED;
    } else if (strcmp(env_seed, "random") != 0) {
        seed = strtoull(env_seed, NULL, 0);
    } else {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        seed = ((uint64_t)ts.tv_sec * 1000003u ^ (uint64_t)ts.tv_nsec ^ (uint64_t)getpid()) %
               1000000000000ull;
    }
    total_cmds = env_long("ATTIC_DIFF_N", 20000);
    max_mismatches = (int)env_long("ATTIC_DIFF_MAX_MISMATCHES", 10);
    verbose = env_long("ATTIC_DIFF_VERBOSE", 0) != 0;
    both_redis = env_long("ATTIC_DIFF_BOTH_REDIS", 0) != 0;
    printf("diff: ATTIC_SEED=%" PRIu64 " ATTIC_DIFF_N=%ld%s\n", seed, total_cmds,
           both_redis ? " ATTIC_DIFF_BOTH_REDIS=1" : "");

    if (!wire_redis_path()) {
        printf("SKIP: redis-server not found (PATH or REDIS_SERVER): the differential test needs "
               "Redis 7\n");
        return 77;
    }
    signal(SIGALRM, on_alarm);
    alarm((unsigned)env_long("ATTIC_DIFF_TIMEOUT", 240));

    const char *both_args = getenv("ATTIC_DIFF_ARGS");
    char attic_args[1024];
    snprintf(attic_args, sizeof(attic_args), "--frontends 2 %s %s", both_args ? both_args : "",
             getenv("ATTIC_DIFF_ATTIC_ARGS") ? getenv("ATTIC_DIFF_ATTIC_ARGS") : "");
    if (wire_redis_start(&ref_redis, both_args) != 0) {
        printf("FAIL: redis-server did not start\n");
        stop_servers();
        return 99;
    }
    sides[0] = (side_t){"redis", ref_redis.port, NULL};
    if (both_redis) {
        if (wire_redis_start(&second_redis, both_args) != 0) {
            printf("FAIL: the second redis-server did not start\n");
            stop_servers();
            return 99;
        }
        sides[1] = (side_t){"redis2", second_redis.port, NULL};
    } else {
        if (srv_start(&atticdb, attic_args) != 0) {
            char tail[2000];
            printf("FAIL: atticdb-server (%s) did not start; log:\n%s\n",
                   getenv("ATTICDB_SERVER") ? getenv("ATTICDB_SERVER") : "./atticdb-server",
                   srv_log_tail(&atticdb, tail, sizeof(tail)));
            stop_servers();
            return 99;
        }
        sides[1] = (side_t){"atticdb", atticdb.port, NULL};
    }
    for (int i = 0; i < 2; i++) {
        sides[i].c = wire_open(sides[i].port, 10);
        if (!sides[i].c) {
            printf("FAIL: cannot connect to %s on port %d\n", sides[i].name, sides[i].port);
            stop_servers();
            return 99;
        }
    }
    printf("diff: %s on port %d vs %s on port %d\n", sides[0].name, sides[0].port, sides[1].name,
           sides[1].port);

    dgen_t gen;
    dgen_init(&gen, seed, getenv("ATTIC_DIFF_SKIP"), getenv("ATTIC_DIFF_ONLY"));
    const char *record_path = getenv("ATTIC_DIFF_RECORD");
    record = record_path && *record_path ? fopen(record_path, "wb") : NULL;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    long done = 0;
    for (long i = 1; i <= total_cmds && mismatches < max_mismatches && !lost; i++) {
        dgen_cmd_t cmd;
        dgen_next(&gen, &cmd);
        char *text = dgen_cmd_text(&cmd);
        remember(text);
        if (cmd.argc && !strncasecmp(cmd.argv[0], "SORT", 4)) clear_redis_errno(i);
        record_cmd(cmd.argc, cmd.argv, cmd.lens);
        if (cmd.check == DGEN_SCAN) {
            if (verbose) printf("#%ld %s (whole iteration)\n", i, text);
            check_scan(i, text, &cmd);
        } else if (cmd.check == DGEN_HSCAN) {
            if (verbose) printf("#%ld %s (whole iteration)\n", i, text);
            check_hscan(i, text, &cmd, 1);
        } else if (cmd.check == DGEN_SSCAN) {
            if (verbose) printf("#%ld %s (whole iteration)\n", i, text);
            check_hscan(i, text, &cmd, 0);
        } else {
            reply_t r[2];
            send_both(cmd.argc, cmd.argv, cmd.lens, r);
            if (verbose) {
                printf("#%ld %s\n", i, text);
                print_replies(r);
            }
            switch (cmd.check) {
            case DGEN_TIME:
                if (!time_equal(&cmd, r))
                    report(i, text, r[0].p, r[0].n, r[1].p, r[1].n,
                           "times differ beyond the tolerance");
                break;
            case DGEN_KEYS:
                check_keys(i, text, r);
                break;
            case DGEN_RANDOMKEY:
                check_randomkey(i, text, r);
                break;
            case DGEN_UNORDERED:
                check_unordered(i, text, r, 0);
                break;
            case DGEN_PAIRS:
                check_unordered(i, text, r, 1);
                break;
            case DGEN_SHAPE:
                check_shape(i, text, r);
                break;
            case DGEN_HELLO:
                check_hello(i, text, r);
                break;
            case DGEN_ENCODING:
                check_encoding(i, text, r);
                break;
            default:
                check_exact(i, text, r);
                break;
            }
            free_pair(r);
        }
        free(text);
        dgen_cmd_free(&cmd);
        done = i;
    }
    dgen_done(&gen);
    if (record) fclose(record);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;

    if (!lost) {
        /* leave any MULTI the sequence ended in */
        reply_t r[2];
        const char *discard[] = {"DISCARD"};
        size_t dlen[] = {7};
        send_both(1, (char *const *)discard, dlen, r);
        free_pair(r);
    }
    if (mismatches == 0 && !lost) {
        compare_state(gen.sorted);
    } else if (!lost) {
        printf("diff: final state not compared (the replies already differ)\n");
    }
    int alive_rc = 0;
    for (int i = 0; i < 2 && !lost; i++) {
        reply_t r = send_words(&sides[i], 1, (const char *[]){"PING"});
        if (strcmp(r.p, "+PONG\r\n") != 0) {
            printf("FAIL: %s does not answer PING at the end: %s\n", sides[i].name, r.p);
            alive_rc = 1;
        }
        free(r.p);
    }
    if (!both_redis && atticdb.pid > 0 && waitpid(atticdb.pid, NULL, WNOHANG) != 0) {
        printf("FAIL: atticdb-server exited during the run\n");
        alive_rc = 1;
    }
    if (mismatches || lost || alive_rc) {
        if (!both_redis) {
            char tail[3000];
            printf("---- atticdb log (last lines)\n%s\n",
                   srv_log_tail(&atticdb, tail, sizeof(tail)));
        }
        printf("diff: FAILED: %d mismatch%s in %ld of %ld commands (%.1f s); rerun with "
               "ATTIC_SEED=%" PRIu64 "\n",
               mismatches, mismatches == 1 ? "" : "es", done, total_cmds, secs, seed);
        stop_servers();
        for (int i = 0; i < HISTORY; i++)
            free(history[i]);
        return 1;
    }
    printf("diff: %ld commands, seed %" PRIu64
           ", all replies identical (%s vs %s, %.1f s; final state of 16 dbs equal)\n",
           total_cmds, seed, sides[0].name, sides[1].name, secs);
    stop_servers();
    for (int i = 0; i < HISTORY; i++)
        free(history[i]);
    return 0;
}
