/*
 * test_backup.c - unit tests of backups (common/backup.c, store/save.c):
 * the MANIFEST's format and every way its parser refuses one; a backup
 * written from the store harness's state restores into a data directory
 * that loads to the same digest, with only the segments its checkpoint
 * needs and nothing after its LSN; a failure at any I/O step of writing a
 * backup, or of restoring one, leaves nothing that verifies or restores;
 * a replica's full copy (a backup in incoming/, D50) swapped in with any
 * step of the swap failed ends, at the next swap, on the old data or on
 * the whole copy.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backup.h"
#include "command.h"
#include "crc32c.h"
#include "fullcopy.h"
#include "ckpt.h"
#include "io.h"
#include "io_fault.h"
#include "record.h"
#include "seg.h"
#include "store/checkpoint.h"
#include "store/save.h"
#include "store/store-internal.h"
#include "store_harness.h"

#define T0 1000000
#define MB (1024ull * 1024)

/* ---- the manifest ---------------------------------------------------------- */

/* text + a correct final crc line, into out. */
static void with_crc(const char *text, char *out, size_t outlen)
{
    snprintf(out, outlen, "%scrc %08x\n", text, crc32c(0, text, strlen(text)));
}

static int parse(const char *text, char *err, size_t errlen)
{
    backup_manifest_t m;
    int rc = backup_manifest_parse(text, strlen(text), &m, err, errlen);
    if (rc == 0) backup_manifest_free(&m);
    return rc;
}

/* A valid body: LSN 0x180000 in 1 MiB segments, segments 0x100000 (from
 * the checkpoint's lowest reference) and the one holding the LSN's last
 * record. */
#define HEAD      "AtticDB backup 1\nlsn 1572864\nsegment-size 1048576\ntime-ms 5\n"
#define CKPT_LINE "checkpoint-0000000000180000.ckpt 4096 0000abcd\n"
#define SEG1      "log-0000000000100000.seg 1048576 12345678\n"

Test(manifest, format_then_parse_gives_it_back)
{
    backup_manifest_t m = {.lsn = 1572864, .segment_size = MB, .time_ms = 1796305690468};
    cr_assert_eq(backup_manifest_add(&m, "checkpoint-0000000000180000.ckpt", 4096, 0xabcd), 0);
    cr_assert_eq(backup_manifest_add(&m, "log-0000000000100000.seg", MB, 0x12345678), 0);
    buf_t b;
    buf_init(&b);
    backup_manifest_format(&m, &b);
    char want[1024];
    with_crc(HEAD "files 2\n" CKPT_LINE SEG1, want, sizeof(want));
    backup_manifest_t p;
    char err[256];
    cr_assert_eq(backup_manifest_parse(b.data, b.len, &p, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(p.lsn, m.lsn);
    cr_assert_eq(p.segment_size, m.segment_size);
    cr_assert_eq(p.time_ms, m.time_ms);
    cr_assert_eq(p.nfiles, 2);
    cr_assert_str_eq(p.files[1].name, "log-0000000000100000.seg");
    cr_assert_eq(p.files[1].size, MB);
    cr_assert_eq(p.files[1].crc, 0x12345678);
    cr_assert_eq(p.files[0].crc, 0xabcd);
    backup_manifest_free(&p);
    backup_manifest_free(&m);
    buf_free(&b);
}

/* An empty server's backup: a checkpoint at 0 and no segment. */
Test(manifest, lsn_zero_has_no_segment)
{
    char t[1024], err[256];
    with_crc("AtticDB backup 1\nlsn 0\nsegment-size 1048576\ntime-ms 1\nfiles 1\n"
             "checkpoint-0000000000000000.ckpt 200 00000001\n",
             t, sizeof(t));
    cr_assert_eq(parse(t, err, sizeof(err)), 0, "%s", err);
    with_crc("AtticDB backup 1\nlsn 0\nsegment-size 1048576\ntime-ms 1\nfiles 2\n"
             "checkpoint-0000000000000000.ckpt 200 00000001\n"
             "log-0000000000000000.seg 1048576 00000002\n",
             t, sizeof(t));
    cr_assert_eq(parse(t, err, sizeof(err)), -1, "a segment after LSN 0");
}

typedef struct bad_case {
    const char *body; /* without its crc line (with_crc adds a correct one) */
    const char *why;  /* a word of the error */
} bad_case_t;

Test(manifest, every_malformed_one_is_refused)
{
    static const bad_case_t cases[] = {
        {"AtticDB backup\n"
         "lsn 1\n",
         "not an AtticDB"},
        {"AtticDB backup 2\nlsn 1572864\n", "version 2"},
        {"AtticDB backup 1\nsegment-size 1048576\n", "line 2"},
        {"AtticDB backup 1\nlsn -5\nsegment-size 1048576\ntime-ms 5\nfiles 0\n", "line 2"},
        {"AtticDB backup 1\nlsn 1572864\nsegment-size 1000000\ntime-ms 5\nfiles 0\n",
         "power of two"},
        {HEAD "files 9\n" CKPT_LINE SEG1, "line"},
        {HEAD "files 2\n" CKPT_LINE "log-0000000000100000.seg 4096 12345678\n",
         "segment-size bytes"},
        {HEAD "files 3\n" CKPT_LINE "log-0000000000000000.seg 1048576 1\n"
              "log-0000000000100000.seg 1048576 12345678\n"
              "log-0000000000300000.seg 1048576 12345678\n",
         "line"},
        {HEAD "files 3\n" CKPT_LINE "log-0000000000000000.seg 1048576 00000001\n"
              "log-0000000000200000.seg 1048576 12345678\n",
         "contiguous"},
        {HEAD "files 2\n" CKPT_LINE "log-0000000000000000.seg 1048576 00000001\n",
         "holding the backup's LSN"},
        {HEAD "files 2\n" CKPT_LINE "log-0000000000200000.seg 1048576 00000001\n",
         "holding the backup's LSN"},
        {HEAD "files 1\n" SEG1, "no checkpoint"},
        {HEAD "files 2\ncheckpoint-0000000000100000.ckpt 4096 0000abcd\n" SEG1, "another LSN"},
        {HEAD "files 3\n" CKPT_LINE CKPT_LINE SEG1, "second checkpoint"},
        {HEAD "files 2\n" CKPT_LINE "../log-0000000000100000.seg 1048576 12345678\n", "not a file"},
        {HEAD "files 2\n" CKPT_LINE "log-000000000010000X.seg 1048576 12345678\n", "not a file"},
        {HEAD "files 2\n" CKPT_LINE "log-0x00000000100000.seg 1048576 12345678\n", "not a file"},
        {HEAD "files 2\n" CKPT_LINE "log-0000000000100000.seg 1048576 1234567\n", "not a file"},
        {HEAD "files 2\n" CKPT_LINE "log-0000000000100000.seg 1048576 1234567G\n", "not a file"},
        {HEAD "files 2\n" CKPT_LINE "log-0000000000100000.seg 12345678\n", "not a file"},
        {HEAD "files 2\n" CKPT_LINE "log-0000000000100000.tmp 1048576 12345678\n", "not a file"},
    };
    char t[4096], err[256];
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        with_crc(cases[i].body, t, sizeof(t));
        err[0] = '\0';
        cr_expect_eq(parse(t, err, sizeof(err)), -1, "case %zu accepted", i);
        cr_expect(strstr(err, cases[i].why), "case %zu: \"%s\" lacks \"%s\"", i, err, cases[i].why);
    }
}

Test(manifest, checksum_and_trailing_bytes_are_checked)
{
    char t[4096], err[256];
    with_crc(HEAD "files 2\n" CKPT_LINE SEG1, t, sizeof(t));
    cr_assert_eq(parse(t, err, sizeof(err)), 0, "%s", err);
    /* One byte changed anywhere before the crc line. */
    for (size_t i = 0; i < strlen(t) - 13; i++) {
        char u[4096];
        strcpy(u, t);
        u[i] ^= 0x01;
        cr_expect_eq(parse(u, err, sizeof(err)), -1, "byte %zu flipped: accepted", i);
    }
    /* Every prefix: an interrupted write of the file. */
    for (size_t n = 0; n < strlen(t); n++) {
        backup_manifest_t m;
        cr_expect_eq(backup_manifest_parse(t, n, &m, err, sizeof(err)), -1, "prefix %zu", n);
    }
    char u[4200];
    snprintf(u, sizeof(u), "%sx\n", t);
    cr_expect_eq(parse(u, err, sizeof(err)), -1, "bytes after the crc line");
    snprintf(u, sizeof(u), "%.*s%s", (int)(strlen(t) - 1), t, "\0");
    cr_expect_eq(parse(u, err, sizeof(err)), -1, "no newline at the end");
}

/* ---- a backup of the harness's state ------------------------------------ */

static char bdir[512], rdir[512];

static void setup(void)
{
    sh_setup("backup", 16, 77);
    snprintf(bdir, sizeof(bdir), "%s/backups", dir);
    snprintf(rdir, sizeof(rdir), "%s/restored", dir);
}

static void teardown(void)
{
    io_set(NULL);
    char cmd[2000];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s' '%s' '%s.restore'", bdir, rdir, rdir);
    cr_assert_eq(system(cmd), 0);
    sh_teardown();
}

TestSuite(backup, .init = setup, .fini = teardown);

static void set(int i, int round)
{
    char key[32], val[600];
    snprintf(key, sizeof(key), "key:%d", i);
    memset(val, 'a' + (i + round) % 26, sizeof(val) - 1);
    val[sizeof(val) - 1] = '\0';
    snprintf(val, 32, "%d/%d/", i, round); /* the rest stays letters */
    val[strlen(val)] = '-';
    sh_put_key(T0 + round, REC_OP_DB(CMD_SET, i % 3), key, "bui", val, strlen(val), (uint32_t)0,
               (int64_t)0);
}

/* A state whose log spans three 1 MiB segments, the first no longer
 * referred to (every key overwritten since). */
static void overwritten_load(void)
{
    for (int round = 0; round < 4; round++)
        for (int i = 0; i < 1000; i++)
            set(i, round);
    cr_assert_gt(lsn, 2 * MB, "three segments");
    cr_assert_lt(lsn, 3 * MB - 4096, "room after the LSN in the third");
}

static store_ctx_t *load_restored(uint64_t log_start, uint64_t end)
{
    config_t c = cfg;
    c.dir = rdir;
    uint64_t from = 0;
    store_ctx_t *r = store_ckpt_restore(&c, 5, log_start, end, &from);
    cr_assert(r, "the restored directory loads");
    cr_assert_eq(from, end, "from the checkpoint at the backup's LSN");
    return r;
}

static void expect_same(store_ctx_t *a, store_ctx_t *b)
{
    uint64_t da, db;
    cr_assert_eq(store_digest(a, T0 + 10, &da), 0);
    cr_assert_eq(store_digest(b, T0 + 10, &db), 0);
    cr_assert_eq(da, db, "the restored state is the backed-up one");
    cr_assert_eq(store_key_count(a), store_key_count(b));
}

Test(backup, restores_the_state_with_only_the_segments_it_needs)
{
    overwritten_load();
    /* What the logger appended meanwhile, past what the store applied:
     * not part of the state at the backup's LSN. */
    char live[1024];
    seg_path(live, sizeof(live), dir, 2 * MB);
    int lfd = open(live, O_WRONLY);
    cr_assert_geq(lfd, 0);
    cr_assert_eq(pwrite(lfd, "appended later", 14, (off_t)(lsn - 2 * MB)), 14);
    close(lfd);
    uint64_t first = store_backup_first(ctx, 0);
    cr_assert_eq(first, MB, "segment 0 is referred to by nothing");
    cr_assert_eq(store_backup_write(ctx, bdir, first, 1234), 0);
    char path[1024], err[512];
    backup_dir_path(path, sizeof(path), bdir, lsn, 0);
    backup_manifest_t m;
    cr_assert_eq(backup_verify(path, &m, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(m.lsn, lsn);
    cr_assert_eq(m.time_ms, 1234);
    cr_assert_eq(m.nfiles, 3, "the checkpoint and segments 1 and 2");
    backup_manifest_free(&m);
    cr_assert_eq(backup_restore(path, rdir, err, sizeof(err)), 0, "%s", err);
    /* The last segment stops at the LSN: zeros after it. */
    char seg[1024];
    seg_path(seg, sizeof(seg), rdir, 2 * MB);
    int fd = open(seg, O_RDONLY);
    cr_assert_geq(fd, 0);
    unsigned char tail[4096], zero[4096] = {0};
    cr_assert_eq(pread(fd, tail, sizeof(tail), (off_t)(lsn - 2 * MB)), (ssize_t)sizeof(tail));
    close(fd);
    cr_assert_eq(memcmp(tail, zero, sizeof(tail)), 0, "nothing after the backup's LSN");
    store_ctx_t *r = load_restored(MB, lsn);
    expect_same(ctx, r);
    store_ctx_destroy(r);
    /* Writes after the backup are not in it. */
    set(1, 9);
    cr_assert_eq(backup_verify(path, NULL, err, sizeof(err)), 0, "%s", err);
}

Test(backup, restore_refuses_a_data_directory_in_use)
{
    overwritten_load();
    cr_assert_eq(store_backup_write(ctx, bdir, store_backup_first(ctx, 0), 1), 0);
    char path[1024], err[512];
    backup_dir_path(path, sizeof(path), bdir, lsn, 0);
    cr_assert_eq(backup_restore(path, dir, err, sizeof(err)), -1, "the live data directory");
    cr_assert(strstr(err, "not an empty directory"), "%s", err);
    cr_assert_eq(mkdir(rdir, 0755), 0);
    cr_assert_eq(backup_restore(path, rdir, err, sizeof(err)), 0, "an empty one: %s", err);
}

Test(backup, a_damaged_file_is_found_and_refused)
{
    overwritten_load();
    cr_assert_eq(store_backup_write(ctx, bdir, store_backup_first(ctx, 0), 1), 0);
    char path[1024], seg[1100], err[512];
    backup_dir_path(path, sizeof(path), bdir, lsn, 0);
    seg_path(seg, sizeof(seg), path, MB);
    int fd = open(seg, O_WRONLY);
    cr_assert_geq(fd, 0);
    cr_assert_eq(pwrite(fd, "X", 1, 1000), 1);
    close(fd);
    cr_assert_eq(backup_verify(path, NULL, err, sizeof(err)), -1);
    cr_assert(strstr(err, "damaged"), "%s", err);
    cr_assert_eq(backup_restore(path, rdir, err, sizeof(err)), -1);
    struct stat st;
    cr_assert_eq(stat(rdir, &st), -1, "no data directory made");
}

/* What a failure left: no backup at the final name that verifies, and a
 * retry works (a fault hits once). */
static int backup_after_fault(const char *op, long nth)
{
    char spec[64], path[1024], err[512];
    snprintf(spec, sizeof(spec), "%s:%ld:EIO", op, nth);
    cr_assert_eq(io_fault_install(spec, NULL, 1), 1);
    int rc = store_backup_write(ctx, bdir, store_backup_first(ctx, 0), 1);
    io_set(NULL);
    backup_dir_path(path, sizeof(path), bdir, lsn, 0);
    int valid = backup_verify(path, NULL, err, sizeof(err)) == 0;
    /* The directory's fsync after the rename (its open or the fsync) is
     * the one step whose failure leaves a complete backup, whose name may
     * not be durable. */
    int dir_sync = !strcmp(op, "open") || !strcmp(op, "fsync");
    cr_assert(valid == (rc == 0) || (valid && dir_sync), "%s: %s, and the backup %s", spec,
              rc ? "failed" : "worked", valid ? "verifies" : "does not verify");
    if (rc == 0) backup_remove_dir(path);
    return rc;
}

Test(backup, a_failed_step_never_leaves_a_backup_that_verifies)
{
    overwritten_load();
    static const char *const ops[] = {"open", "pwrite", "fdatasync", "rename", "fsync", "mkdir"};
    for (size_t o = 0; o < sizeof(ops) / sizeof(ops[0]); o++) {
        long nth = 1;
        while (backup_after_fault(ops[o], nth) != 0)
            nth++;
        cr_assert_gt(nth, 1, "%s: some call failed the backup", ops[o]);
    }
}

Test(backup, a_failed_restore_step_leaves_no_data_directory)
{
    overwritten_load();
    cr_assert_eq(store_backup_write(ctx, bdir, store_backup_first(ctx, 0), 1), 0);
    char path[1024], err[512];
    backup_dir_path(path, sizeof(path), bdir, lsn, 0);
    static const char *const ops[] = {"open", "pwrite", "fdatasync", "rename", "fsync"};
    for (size_t o = 0; o < sizeof(ops) / sizeof(ops[0]); o++) {
        for (long nth = 1;; nth++) {
            char spec[64];
            snprintf(spec, sizeof(spec), "%s:%ld:EIO", ops[o], nth);
            cr_assert_eq(io_fault_install(spec, NULL, 1), 1);
            int rc = backup_restore(path, rdir, err, sizeof(err));
            io_set(NULL);
            struct stat st;
            int made = stat(rdir, &st) == 0;
            if (rc == 0) {
                cr_assert(made);
                cr_assert_gt(nth, 1, "%s: some call failed the restore", ops[o]);
                store_ctx_t *r = load_restored(MB, lsn);
                expect_same(ctx, r);
                store_ctx_destroy(r);
                char cmd[1100];
                snprintf(cmd, sizeof(cmd), "rm -rf '%s'", rdir);
                cr_assert_eq(system(cmd), 0);
                break;
            }
            /* A failed fsync of the parent after the rename (its open or
             * the fsync) is the one step that leaves the directory:
             * complete, its name not durable. */
            if (made) {
                cr_assert(!strcmp(ops[o], "fsync") || !strcmp(ops[o], "open"),
                          "%s: a data directory after a failure", spec);
                char cmd[1100];
                snprintf(cmd, sizeof(cmd), "rm -rf '%s'", rdir);
                cr_assert_eq(system(cmd), 0);
            }
        }
    }
}

/* ---- a replica's full copy swapped in (common/fullcopy.c, D50) ------------ */

/* The state a data directory loads to: its one checkpoint, the log from
 * its first segment (the copy's log ends at the checkpoint). */
static uint64_t digest_of_dir(const char *d)
{
    config_t c = cfg;
    c.dir = (char *)d;
    uint64_t *lsns, from = 0, dg;
    size_t n;
    cr_assert_eq(ckpt_list(d, 0, &lsns, &n), 0);
    cr_assert_eq(n, 1, "one checkpoint in %s, not %zu", d, n);
    uint64_t at = lsns[0];
    free(lsns);
    cr_assert_eq(seg_list(d, &lsns, &n), 0);
    uint64_t first = n ? lsns[0] : 0;
    free(lsns);
    store_ctx_t *r = store_ckpt_restore(&c, 5, first, at, &from);
    cr_assert(r, "%s loads", d);
    cr_assert_eq(from, at);
    cr_assert_eq(store_digest(r, T0 + 10, &dg), 0);
    store_ctx_destroy(r);
    return dg;
}

static int dir_has(const char *d, const char *name)
{
    char path[1200];
    struct stat st;
    snprintf(path, sizeof(path), "%s/%s", d, name);
    return stat(path, &st) == 0;
}

/* rdir: a replica's data directory (backup a restored) with the complete
 * copy b in its incoming/, as the receiver leaves it. */
static void replica_with_copy(const char *a, const char *b)
{
    char cmd[4000], err[512];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", rdir);
    cr_assert_eq(system(cmd), 0);
    cr_assert_eq(backup_restore(a, rdir, err, sizeof(err)), 0, "%s", err);
    snprintf(cmd, sizeof(cmd), "cp -r '%s' '%s/incoming'", b, rdir);
    cr_assert_eq(system(cmd), 0);
}

Test(backup, a_full_copys_swap_failed_at_any_step_ends_on_the_old_data_or_the_whole_copy)
{
    overwritten_load();
    char a[1024], b[1024], err[512];
    uint64_t da, db;
    cr_assert_eq(store_backup_write(ctx, bdir, store_backup_first(ctx, 0), 1), 0);
    backup_dir_path(a, sizeof(a), bdir, lsn, 0);
    cr_assert_eq(store_digest(ctx, T0 + 10, &da), 0);
    for (int i = 0; i < 300; i++)
        set(i, 7);
    cr_assert_eq(store_backup_write(ctx, bdir, store_backup_first(ctx, 0), 1), 0);
    backup_dir_path(b, sizeof(b), bdir, lsn, 0);
    cr_assert_eq(store_digest(ctx, T0 + 10, &db), 0);
    cr_assert_neq(da, db);
    /* Without a fault: the copy, and nothing of it left over. */
    replica_with_copy(a, b);
    cr_assert_eq(digest_of_dir(rdir), da, "the replica's old data");
    cr_assert_eq(fullcopy_swap(rdir, MB, NULL, err, sizeof(err)), 1, "%s", err);
    cr_assert_eq(digest_of_dir(rdir), db, "the copy");
    cr_assert(!dir_has(rdir, "incoming") && !dir_has(rdir, "old"));
    cr_assert_eq(fullcopy_swap(rdir, MB, NULL, err, sizeof(err)), 0, "nothing more to swap");
    /* Each call of the swap failed in turn (the swap stops there, as a
     * crash would stop it); the next start's swap ends the job. */
    static const char *const ops[] = {"rename", "fsync", "open",   "unlink",
                                      "stat",   "mkdir", "opendir"};
    for (size_t o = 0; o < sizeof(ops) / sizeof(ops[0]); o++) {
        for (long nth = 1; nth < 200; nth++) {
            char spec[64];
            snprintf(spec, sizeof(spec), "%s:%ld:EIO", ops[o], nth);
            replica_with_copy(a, b);
            cr_assert_eq(io_fault_install(spec, NULL, 1), 1);
            int rc = fullcopy_swap(rdir, MB, NULL, err, sizeof(err));
            io_set(NULL);
            /* A failed swap stops the start (nothing loads the directory
             * half swapped); one that returned swapped it all (1), or kept
             * the old data when the copy could not be read before any old
             * file moved (0: the replica asks for a copy again). */
            if (rc >= 0) {
                cr_assert_eq(digest_of_dir(rdir), rc ? db : da, "%s: the swap said %d", spec, rc);
                cr_assert(!dir_has(rdir, "incoming") && !dir_has(rdir, "old"), "%s", spec);
                if (rc == 0) continue;
                cr_assert_gt(nth, 1, "%s: some call failed the swap", ops[o]);
                break; /* past the swap's last call */
            }
            int again = fullcopy_swap(rdir, MB, NULL, err, sizeof(err));
            cr_assert_geq(again, 0, "%s, then: %s", spec, err);
            uint64_t now = digest_of_dir(rdir);
            cr_assert(now == da || now == db, "%s: neither the old data nor the copy", spec);
            cr_assert(!dir_has(rdir, "incoming") && !dir_has(rdir, "old"), "%s: left over", spec);
        }
    }
}
