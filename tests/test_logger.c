/*
 * test_logger.c - log recovery (logger/recover.c) and segment files
 * (logger/segfile.c): the end of the log is found, a torn tail is cut, and
 * damage in the middle of the log is refused.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "command.h"
#include "io.h"
#include "logger/logger.h"
#include "record.h"
#include "seg.h"

#define SEG (256u * 1024)

static char dir[256];

static void make_dir(void)
{
    snprintf(dir, sizeof(dir), "/tmp/attic-test-logger-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
}

static void remove_dir(void)
{
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
}

/* Write one record (key, val) at lsn, encoded when the log was durable up
 * to `durable` (UINT64_MAX: up to the record); pad to the segment's end
 * first when it would cross it, as the ring's wrap does. Returns the end. */
static uint64_t write_record(uint64_t lsn, const char *key, const unsigned char *val, uint32_t size,
                             uint64_t durable)
{
    uint64_t seg = lsn & ~(uint64_t)(SEG - 1);
    const unsigned char *argv[2] = {(const unsigned char *)key, val};
    uint32_t lens[2] = {(uint32_t)strlen(key), size};
    uint32_t space = rec_space((uint32_t)rec_cmd_payload_size(2, lens));
    if (lsn + space > seg + SEG) {
        uint32_t pad = (uint32_t)(seg + SEG - lsn);
        unsigned char *p = calloc(1, pad);
        rec_write_pad(p, lsn, pad);
        int fd = segfile_open(dir, seg, 0);
        cr_assert_geq(fd, 0);
        cr_assert_eq(io_pwrite_all(fd, p, pad, (off_t)(lsn - seg)), 0);
        close(fd);
        free(p);
        lsn += pad;
        seg = lsn;
        struct stat st;
        char path[512];
        seg_path(path, sizeof(path), dir, seg);
        if (stat(path, &st) != 0) cr_assert_eq(segfile_create(dir, seg, SEG, 0), 0);
    }
    unsigned char *buf = malloc(space);
    rec_encode_cmd_durable(buf, lsn, durable == UINT64_MAX ? lsn : durable, 0, 1000, CMD_MSET, 2,
                           argv, lens);
    rec_publish(buf, lsn);
    int fd = segfile_open(dir, seg, 0);
    cr_assert_geq(fd, 0);
    cr_assert_eq(io_pwrite_all(fd, buf, space, (off_t)(lsn - seg)), 0);
    close(fd);
    free(buf);
    return lsn + space;
}

/* Write n records of about `size` bytes each from lsn on, each encoded as if
 * everything before it was durable, unless `durable` (then: as one unsynced
 * batch encoded when the log was durable up to `durable`). Returns the end. */
static uint64_t write_records_d(uint64_t lsn, int n, size_t size, uint64_t durable)
{
    char key[32];
    unsigned char *val = malloc(size);
    memset(val, 'v', size);
    for (int i = 0; i < n; i++) {
        snprintf(key, sizeof(key), "key:%d", i);
        lsn = write_record(lsn, key, val, (uint32_t)size, durable);
    }
    free(val);
    return lsn;
}

static uint64_t write_records(uint64_t lsn, int n, size_t size)
{
    return write_records_d(lsn, n, size, UINT64_MAX);
}

static void scribble(uint64_t lsn, const void *p, size_t n)
{
    uint64_t seg = lsn & ~(uint64_t)(SEG - 1);
    int fd = segfile_open(dir, seg, 0);
    cr_assert_geq(fd, 0);
    cr_assert_eq(io_pwrite_all(fd, p, n, (off_t)(lsn - seg)), 0);
    close(fd);
}

/* Recovery starts, and the log ends at want. */
static void expect_end(uint64_t want)
{
    uint64_t start, end;
    char err[512];
    cr_assert_eq(logger_recover(dir, SEG, &start, &end, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(end, want);
}

TestSuite(recover, .init = make_dir, .fini = remove_dir);

Test(recover, empty_directory_starts_at_zero)
{
    uint64_t start = 99, end = 99;
    char err[256];
    cr_assert_eq(logger_recover(dir, SEG, &start, &end, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(start, 0);
    cr_assert_eq(end, 0);
    char path[512];
    seg_path(path, sizeof(path), dir, 0);
    struct stat st;
    cr_assert_eq(stat(path, &st), 0);
    cr_assert_eq(st.st_size, SEG);
}

Test(recover, finds_end_across_segments)
{
    cr_assert_eq(segfile_create(dir, 0, SEG, 0), 0);
    uint64_t written = write_records(0, 2000, 300); /* ~700 KB: three segments */
    cr_assert_gt(written, 2 * SEG);
    uint64_t start, end;
    char err[256];
    cr_assert_eq(logger_recover(dir, SEG, &start, &end, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(start, 0);
    cr_assert_eq(end, written);
}

Test(recover, torn_tail_is_cut)
{
    cr_assert_eq(segfile_create(dir, 0, SEG, 0), 0);
    uint64_t good = write_records(0, 10, 100);
    uint64_t torn_end = write_records(good, 1, 100);
    /* Tear the last record: half of it reached the disk, then garbage. */
    unsigned char junk[64];
    memset(junk, 0x5A, sizeof(junk));
    scribble(good + (torn_end - good) / 2, junk, sizeof(junk));
    uint64_t start, end;
    char err[256];
    cr_assert_eq(logger_recover(dir, SEG, &start, &end, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(end, good);
    /* Everything after the end is zero now. */
    int fd = segfile_open(dir, 0, 0);
    unsigned char *rest = malloc(SEG - good);
    cr_assert_eq(io_pread_all(fd, rest, SEG - good, (off_t)good), 0);
    for (uint64_t i = 0; i < SEG - good; i++)
        cr_assert_eq(rest[i], 0, "byte %lu", (unsigned long)i);
    free(rest);
    close(fd);
    /* A second recovery agrees. */
    cr_assert_eq(logger_recover(dir, SEG, &start, &end, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(end, good);
}

Test(recover, unsynced_records_after_a_torn_one_are_a_tail)
{
    /* A batch written but not synced when the power went: its first record
     * reached the disk torn, later ones whole. None was acked, and none
     * claims the torn spot was durable: recovery cuts them all. */
    cr_assert_eq(segfile_create(dir, 0, SEG, 0), 0);
    uint64_t good = write_records(0, 10, 100);
    uint64_t end = write_records_d(good, 5, 100, good);
    unsigned char junk[16];
    memset(junk, 0x33, sizeof(junk));
    scribble(good + 40, junk, sizeof(junk));
    expect_end(good);
    cr_assert_gt(end, good);
}

Test(recover, corruption_in_the_middle_is_refused)
{
    cr_assert_eq(segfile_create(dir, 0, SEG, 0), 0);
    uint64_t written = write_records(0, 2000, 300);
    cr_assert_gt(written, 2 * SEG);
    unsigned char junk[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    scribble(SEG / 2 + 4096, junk, sizeof(junk)); /* inside some record of segment 0 */
    /* Later records of the same segment, and the next ones, prove that
     * spot was durable: cutting there would lose acknowledged writes. */
    uint64_t start, end;
    char err[512];
    cr_assert_eq(logger_recover(dir, SEG, &start, &end, err, sizeof(err)), -1);
    cr_assert(strstr(err, "corrupt in the middle") != NULL, "%s", err);
    cr_assert(strstr(err, "log-0000000000000000.seg") != NULL, "%s", err);
}

/* Write at lsn a record (key "k", unsynced: encoded when the log was
 * durable up to `durable`) whose value carries a well-formed record: valid
 * CRC, its own LSN, and claiming that everything before it was durable,
 * placed where a 32-byte step scan would look. Returns the end. */
static uint64_t write_forging_record(uint64_t lsn, uint64_t durable)
{
    /* The value starts after the header, cmd and argc (2 + 2), and the key
     * (4 + 1) and value (4) lengths. */
    uint64_t val_at = lsn + REC_HDR_SIZE + 4 + 4 + 1 + 4;
    uint64_t forged_at = (val_at + REC_ALIGN - 1) & ~(uint64_t)(REC_ALIGN - 1);
    unsigned char forged[64];
    const unsigned char *argv[2] = {(const unsigned char *)"x", (const unsigned char *)"y"};
    uint32_t lens[2] = {1, 1};
    cr_assert_eq(rec_space((uint32_t)rec_cmd_payload_size(2, lens)), sizeof(forged));
    rec_encode_cmd_durable(forged, forged_at, forged_at, 0, 1000, CMD_MSET, 2, argv, lens);
    rec_publish(forged, forged_at);
    cr_assert_eq(rec_check(forged, forged_at, sizeof(forged)), (int64_t)sizeof(forged));
    unsigned char val[400];
    memset(val, 'v', sizeof(val));
    memcpy(val + (forged_at - val_at), forged, sizeof(forged));
    return write_record(lsn, "k", val, sizeof(val), durable);
}

/* A power cut tore a record whose value carries a forged record header. A
 * value's bytes are not a record boundary: they prove nothing, and the torn
 * tail is cut (issue 9: a client could otherwise stop the server from
 * starting after any power cut). */
Test(recover, forged_header_in_a_torn_value_is_cut)
{
    cr_assert_eq(segfile_create(dir, 0, SEG, 0), 0);
    uint64_t good = write_records(0, 10, 100);
    uint64_t torn_end = write_forging_record(good, good);
    /* Torn: the end of the value never reached the disk. */
    unsigned char junk[16];
    memset(junk, 0x5A, sizeof(junk));
    scribble(torn_end - 48, junk, sizeof(junk));
    expect_end(good);
}

/* The same value in a batch that lost the page holding its record's header
 * (zeros: never written), while the page with the value reached the disk. */
Test(recover, forged_header_after_a_lost_header_is_cut)
{
    cr_assert_eq(segfile_create(dir, 0, SEG, 0), 0);
    uint64_t good = write_records(0, 10, 100);
    uint64_t lost = write_records_d(good, 1, 100, good);
    uint64_t after = write_forging_record(lost, good);
    write_records_d(after, 3, 100, good);
    unsigned char zeros[REC_HDR_SIZE] = {0};
    scribble(lost, zeros, sizeof(zeros));
    expect_end(lost);
}

/* Damage to a record in the last segment, with acknowledged records after
 * it in the same segment: found whether it hits the payload (the header
 * still says where the next record starts) or the header itself (garbage
 * where a header must be: the scan goes on at 32-byte steps). */
static void damage_in_the_last_segment(uint64_t offset, size_t len)
{
    cr_assert_eq(segfile_create(dir, 0, SEG, 0), 0);
    uint64_t first = write_records(0, 3, 100);
    cr_assert_gt(write_records(first, 10, 100), first + offset + len);
    unsigned char junk[REC_HDR_SIZE];
    memset(junk, 0xA5, sizeof(junk));
    scribble(first + offset, junk, len);
    uint64_t start, e;
    char err[512];
    cr_assert_eq(logger_recover(dir, SEG, &start, &e, err, sizeof(err)), -1);
    cr_assert(strstr(err, "corrupt in the middle") != NULL, "%s", err);
}

Test(recover, payload_damage_in_the_last_segment_is_refused)
{
    damage_in_the_last_segment(64, 4);
}

Test(recover, header_damage_in_the_last_segment_is_refused)
{
    damage_in_the_last_segment(0, REC_HDR_SIZE);
}

Test(recover, wrong_segment_size_is_refused)
{
    cr_assert_eq(segfile_create(dir, 0, SEG, 0), 0);
    uint64_t start, end;
    char err[512];
    cr_assert_eq(logger_recover(dir, SEG * 2, &start, &end, err, sizeof(err)), -1);
    cr_assert(strstr(err, "segment-size") != NULL, "%s", err);
}

Test(recover, leftover_tmp_file_is_removed)
{
    cr_assert_eq(segfile_create(dir, 0, SEG, 0), 0);
    char path[512], tmp[600];
    seg_path(path, sizeof(path), dir, SEG);
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    int fd = open(tmp, O_CREAT | O_WRONLY, 0644);
    cr_assert_geq(fd, 0);
    close(fd);
    uint64_t start, end;
    char err[256];
    cr_assert_eq(logger_recover(dir, SEG, &start, &end, err, sizeof(err)), 0, "%s", err);
    cr_assert_neq(access(tmp, F_OK), 0);
}

/* A respawned logger checks the segment it continues in rather than assume
 * it (segfile_check): missing, whole, or not a segment of this size. */
Test(recover, segment_check_tells_missing_from_whole)
{
    cr_assert_eq(segfile_check(dir, SEG, SEG), 0);
    cr_assert_eq(segfile_create(dir, SEG, SEG, 0), 0);
    cr_assert_eq(segfile_check(dir, SEG, SEG), 1);
    cr_assert_eq(segfile_check(dir, SEG, 2 * SEG), -1);
    cr_assert_eq(errno, EFBIG);
}
