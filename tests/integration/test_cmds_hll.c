/*
 * test_cmds_hll.c - PFADD, PFCOUNT, PFMERGE, PFDEBUG and PFSELFTEST
 * against redis-server 7.0.15, reply for reply and, through GET and DUMP,
 * byte for byte in the strings they leave (common/hll.c writes Redis'
 * format). GET is compared before any PFCOUNT of the key: Redis' PFCOUNT
 * writes its estimate into the header, ours does not (t_hll.c), so after
 * one only the registers (GETRANGE 16 -1) are compared.
 */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "redis_diff.h"

TestSuite(hll, .fini = rdiff_teardown, .timeout = 180);

/* A command whose last argument is the n bytes at last (zero bytes in
 * them), the others C strings. */
static void dbin(diff_t *d, int argc, const char *const *argv, const char *last, size_t n)
{
    const char *all[8];
    size_t lens[8];
    for (int i = 0; i < argc; i++) {
        all[i] = argv[i];
        lens[i] = strlen(argv[i]);
    }
    all[argc] = last;
    lens[argc] = n;
    DLEN(d, argc + 1, all, lens);
}
#define BIN(s) (s), sizeof(s) - 1

/* Each command's cases and errors, in Redis' order: a new key with and
 * without elements, counts, a string that is not one (short, wrong magic,
 * wrong encoding, dense of the wrong length, an integer), another type,
 * corrupt sparse opcodes, PFMERGE's sources and destination (TTL kept,
 * nothing made on an error), PFDEBUG's subcommands, then a kill -9 and the
 * same strings from the log. */
Test(hll, commands_as_redis)
{
    diff_t d;
    rdiff_start_both(&d);
    D(&d, "PFADD", "e");
    D(&d, "GET", "e");
    D(&d, "PFADD", "e");
    D(&d, "PFCOUNT", "e");
    D(&d, "PFADD", "h", "a", "b", "c", "d", "");
    D(&d, "PFADD", "h", "a", "b");
    D(&d, "GET", "h");
    D(&d, "PFCOUNT", "h");
    D(&d, "PFCOUNT", "h", "e", "nokey");
    D(&d, "PFCOUNT", "nokey");
    D(&d, "PFCOUNT", "nokey", "nokey2");
    D(&d, "PFADD");
    D(&d, "PFCOUNT");
    D(&d, "PFMERGE");
    D(&d, "SET", "s", "hello");
    D(&d, "SET", "i", "12345678901234567890");
    D(&d, "SET", "m", "0123456789abcdefgh");
    D(&d, "SET", "x", "HYLL\x05...........");
    D(&d, "PFADD", "dense", "a");
    dbin(&d, 3, (const char *[]){"SETRANGE", "dense", "4"}, BIN("\x00"));
    D(&d, "RPUSH", "l", "a");
    static const char *const bad[] = {"s", "i", "m", "x", "dense", "l"};
    for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
        D(&d, "PFADD", bad[k], "a");
        D(&d, "PFCOUNT", bad[k]);
        D(&d, "PFCOUNT", "h", bad[k]);
        D(&d, "PFMERGE", bad[k], "h");
        D(&d, "PFMERGE", "new", "h", bad[k]);
        D(&d, "EXISTS", "new");
        D(&d, "PFDEBUG", "encoding", bad[k]);
    }
    /* Corrupt sparse opcodes: extra bytes after the last register, and
     * one register short. */
    D(&d, "PFADD", "c1", "a", "b", "c");
    D(&d, "APPEND", "c1", "hello");
    D(&d, "PFCOUNT", "c1");
    D(&d, "PFCOUNT", "c1", "h");
    D(&d, "PFMERGE", "c1", "h");
    dbin(&d, 2, (const char *[]){"SET", "c2"},
         BIN("HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\x7f\xfe"));
    D(&d, "PFCOUNT", "c2");
    D(&d, "PFCOUNT", "c2", "h");
    D(&d, "PFMERGE", "new", "c2");
    D(&d, "EXISTS", "new");
    D(&d, "PFADD", "c2", "a", "b", "c");
    D(&d, "PFDEBUG", "decode", "c2");
    /* PFMERGE: a missing destination, an existing one with a TTL, sources
     * missing, sparse into dense. */
    D(&d, "PFMERGE", "m1", "h", "nokey", "e");
    D(&d, "GET", "m1");
    D(&d, "PFMERGE", "m2");
    D(&d, "GET", "m2");
    D(&d, "PFADD", "t", "x", "y");
    D(&d, "EXPIRE", "t", "1000");
    D(&d, "PFMERGE", "t", "h");
    D(&d, "TTL", "t");
    D(&d, "GET", "t");
    D(&d, "PFADD", "t", "z");
    D(&d, "TTL", "t");
    D(&d, "PFDEBUG", "todense", "t");
    D(&d, "TTL", "t");
    D(&d, "PFMERGE", "m3", "h", "t");
    D(&d, "PFDEBUG", "encoding", "m3");
    D(&d, "GET", "m3");
    /* PFDEBUG. */
    D(&d, "PFDEBUG", "decode", "h");
    D(&d, "PFDEBUG", "ENCODING", "h");
    D(&d, "PFDEBUG", "decode", "e");
    D(&d, "PFDEBUG", "todense", "h");
    D(&d, "PFDEBUG", "todense", "h");
    D(&d, "PFDEBUG", "decode", "h");
    D(&d, "PFDEBUG", "getreg", "h");
    D(&d, "PFDEBUG", "getreg", "m1");
    D(&d, "PFDEBUG", "encoding", "m1");
    D(&d, "PFDEBUG", "nosuch", "h");
    D(&d, "PFDEBUG", "nosuch", "nokey");
    D(&d, "PFDEBUG", "getreg");
    D(&d, "PFDEBUG", "getreg", "h", "x");
    D(&d, "GETRANGE", "h", "16", "-1");
    rdiff_hello3(&d);
    D(&d, "PFDEBUG", "encoding", "h");
    D(&d, "PFCOUNT", "h", "m1");
    D(&d, "PFSELFTEST");
    D(&d, "PFSELFTEST", "x");
    D(&d, "DUMP", "m1");
    D(&d, "PFADD", "fresh", "x", "y");
    D(&d, "DUMP", "fresh");
    rdiff_kill9_restart(&d);
    rdiff_hello3(&d);
    static const char *const keys[] = {"e", "m1", "m2", "t", "c2"};
    for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
        D(&d, "GETRANGE", keys[k], "16", "-1");
    D(&d, "PFCOUNT", "h", "m3", "t");
    rdiff_end_both(&d);
}

/* Random elements into three keys under random hll-sparse-max-bytes, the
 * setting changed between additions: the same replies and the same
 * strings (sparse, promoted, dense) at every step, the same estimates of
 * each key and of their unions, PFMERGE's strings; then the setting
 * changed once more and a kill -9: the checkpoint and the replay make the
 * same strings, as each record carries the setting it was written under. */
Test(hll, random_additions_as_redis_and_after_a_replay)
{
    diff_t d;
    /* Checkpoints as it goes: the restart loads the strings from one (RAM
     * values, D23) and replays the records after it. */
    rdiff_start_both_with(&d, "--frontends 2 --checkpoint-bytes 64kb", NULL, 1);
    uint64_t rng = rdiff_seed();
    char label[96];
    snprintf(label, sizeof(label), "[ATTIC_SEED=%" PRIu64 "] ", rng);
    d.label = label;
    static const char *const keys[] = {"h1", "h2", "h3"};
    static const char *const maxes[] = {"0", "25", "200", "700", "3000", "20000"};
    for (int round = 0; round < 12; round++) {
        const char *mx = maxes[rdiff_below(&rng, 6)];
        D(&d, "CONFIG", "SET", "hll-sparse-max-bytes", mx);
        int adds = 1 + (int)rdiff_below(&rng, 40);
        for (int i = 0; i < adds; i++) {
            const char *argv[2 + 60];
            size_t lens[2 + 60];
            static char ele[60][24];
            int n = 1 + (int)rdiff_below(&rng, round < 4 ? 4 : 60);
            argv[0] = "PFADD";
            argv[1] = keys[rdiff_below(&rng, 3)];
            lens[0] = 5;
            lens[1] = 2;
            for (int k = 0; k < n; k++) {
                size_t len = rdiff_below(&rng, 12);
                for (size_t b = 0; b < len; b++)
                    ele[k][b] = (char)rdiff_below(&rng, 256);
                argv[2 + k] = ele[k];
                lens[2 + k] = len;
            }
            DLEN(&d, 2 + n, argv, lens);
        }
        for (int k = 0; k < 3; k++) { /* all but the estimate Redis' PFCOUNT wrote */
            D(&d, "GETRANGE", keys[k], "0", "7");
            D(&d, "GETRANGE", keys[k], "16", "-1");
        }
        D(&d, "PFMERGE", "u", "h1", "h2");
        D(&d, "GET", "u");
        D(&d, "PFCOUNT", "h1", "h2", "h3");
        D(&d, "PFCOUNT", keys[rdiff_below(&rng, 3)]);
        D(&d, "DEL", "u");
    }
    for (int k = 0; k < 3; k++) {
        D(&d, "GETRANGE", keys[k], "16", "-1");
        D(&d, "PFDEBUG", "encoding", keys[k]);
    }
    D(&d, "CONFIG", "SET", "hll-sparse-max-bytes", "5");
    rdiff_kill9_restart(&d);
    for (int k = 0; k < 3; k++) {
        D(&d, "GETRANGE", keys[k], "16", "-1");
        D(&d, "PFDEBUG", "encoding", keys[k]);
        D(&d, "PFCOUNT", keys[k]);
    }
    rdiff_end_both(&d);
}

/* A PFADD that raised a register touches WATCH, one that raised none
 * does not, and PFMERGE always does, as in Redis. */
Test(hll, pfadd_touches_watch_only_when_it_changed_something)
{
    diff_t d;
    rdiff_start_both_with(&d, "--frontends 2", NULL, 2);
    D(&d, "PFADD", "w", "a");
    D(&d, "WATCH", "w");
    DC(&d, 1, "PFADD", "w", "a");
    D(&d, "MULTI");
    D(&d, "PFCOUNT", "w");
    D(&d, "EXEC");
    D(&d, "WATCH", "w");
    DC(&d, 1, "PFADD", "w", "b", "c", "d", "e", "f");
    D(&d, "MULTI");
    D(&d, "PFCOUNT", "w");
    D(&d, "EXEC");
    D(&d, "WATCH", "w");
    DC(&d, 1, "PFMERGE", "w");
    D(&d, "MULTI");
    D(&d, "PFCOUNT", "w");
    D(&d, "EXEC");
    rdiff_end_both(&d);
}
