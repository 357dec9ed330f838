/*
 * recover.c - finding the end of the log after any stop, clean or not.
 * Run by the logger process at the server's first start, before the ring
 * opens; nothing else touches the log until it returns.
 *
 * The log ends at the first position that does not hold a valid record. What
 * follows it in that segment is a torn or never-finished write (power loss
 * during a batch that was never acked: contract 6) and is zeroed, so the next
 * record written there cannot be confused with leftovers. A valid record
 * further on that proves the bad one was durable (record.h, durable_gap)
 * means damage in the middle of the log: recovery refuses, naming file and
 * offset, and leaves the decision to an operator (atticdb-check). Records a
 * leader shipped (datadir.h, SHIPPED) prove nothing here: their gap is the
 * leader's (D56). Records
 * after the end are found by walking their headers, never by reading client
 * values as headers (seg.c), so no value can stop the server from starting.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "datadir.h"
#include "io.h"
#include "log.h"
#include "strutil.h"
#include "logger.h"
#include "seg.h"

/* Remove leftovers of segment creation interrupted by a crash. */
static void remove_tmp_files(const char *dir, const uint64_t *segs, size_t n, uint64_t seg_size)
{
    char path[4096], tmp[4200];
    uint64_t last = n ? segs[n - 1] : 0;
    for (uint64_t s = last; s <= last + 2 * seg_size; s += seg_size) {
        seg_path(path, sizeof(path), dir, s);
        snprintf(tmp, sizeof(tmp), "%s.tmp", path);
        io->unlink(tmp);
    }
}

int logger_recover(const char *dir, uint64_t segment_size, uint64_t *start, uint64_t *end,
                   char *err, size_t errlen)
{
    uint64_t *segs = NULL;
    size_t nsegs = 0;
    if (seg_list(dir, &segs, &nsegs) != 0)
        return str_fail(err, errlen, "can't list %s: %s", dir, strerror(errno));
    remove_tmp_files(dir, segs, nsegs, segment_size);
    for (size_t i = 0; i < nsegs; i++) {
        char path[4096];
        struct stat st;
        seg_path(path, sizeof(path), dir, segs[i]);
        if (io->stat(path, &st) != 0) {
            int e = errno;
            free(segs);
            return str_fail(err, errlen, "can't stat %s: %s", path, strerror(e));
        }
        if ((uint64_t)st.st_size != segment_size || segs[i] % segment_size) {
            free(segs);
            return str_fail(err, errlen,
                            "%s is not a segment of segment-size %" PRIu64
                            " bytes (was the data directory written with another segment-size?)",
                            path, segment_size);
        }
        if (i > 0 && segs[i] != segs[i - 1] + segment_size) {
            free(segs);
            return str_fail(err, errlen, "log segment missing before %s", path);
        }
    }
    uint64_t first = nsegs ? segs[0] : 0;
    seg_reader_t r;
    if (seg_reader_open(&r, dir, segment_size, first) != 0) {
        free(segs);
        return str_fail(err, errlen, "out of memory");
    }
    uint64_t nrec = 0;
    int64_t rc;
    const void *rec;
    while ((rc = seg_reader_next(&r, &rec)) > 0)
        nrec++;
    uint64_t e = r.lsn;
    seg_reader_close(&r);
    if (rc == -3) {
        free(segs);
        return str_fail(err, errlen, "I/O error reading the log at LSN %" PRIu64 ": %s", e,
                        strerror(errno));
    }
    uint64_t e_seg = e & ~(segment_size - 1);
    /* A valid record further on that proves e was durable when it was
     * written means e is damage, not a torn tail (record.h, durable_gap):
     * cutting there would drop acknowledged writes. */
    /* On a replica the leader's records prove only the leader's
     * durability (D56): they may come from a batch this server never
     * synced, and a cut there loses nothing the leader cannot send again. */
    seg_untrusted_t shipped;
    if (datadir_shipped_read(dir, &shipped.from, &shipped.to, err, errlen) < 0) {
        free(segs);
        return -1;
    }
    uint64_t proof;
    int damaged = seg_find_damage_proof(dir, segment_size, e, &shipped, &proof);
    if (damaged < 0) {
        free(segs);
        return str_fail(err, errlen, "I/O error reading the log after LSN %" PRIu64 ": %s", e,
                        strerror(errno));
    }
    if (damaged) {
        char path[4096];
        seg_path(path, sizeof(path), dir, e_seg);
        free(segs);
        return str_fail(err, errlen,
                        "log corrupt in the middle: %s offset %" PRIu64 " (LSN %" PRIu64
                        ") is not a valid record, but the record at LSN %" PRIu64
                        " shows it was durable; inspect with atticdb-check",
                        path, e - e_seg, e, proof);
    }
    /* Whatever follows e was never acknowledged: later segments go (they are
     * recreated, zero-filled, when needed), and the rest of e's segment is
     * zeroed, so the next record written there can't be confused with
     * leftovers (common/datadir.c, the cut atticdb-check --cut makes too). */
    uint64_t zeroed;
    char msg[4608];
    int cut = datadir_cut_log(dir, segment_size, segs, nsegs, e, &zeroed, msg, sizeof(msg));
    free(segs);
    if (cut < 0)
        return str_fail(err, errlen, "can't cut the log's tail at LSN %" PRIu64 ": %s", e, msg);
    if (cut == 1) {
        /* No segment holds e: it is the end of the last one (or the log is
         * empty), and the segment list is contiguous, so none is after it. */
        if (segfile_create(dir, e_seg, segment_size, 0) != 0)
            return str_fail(err, errlen, "can't create log segment at LSN %" PRIu64 ": %s", e_seg,
                            strerror(errno));
    } else if (zeroed) {
        log_warn("Recovery cut the log's torn tail at LSN %" PRIu64 " (%" PRIu64
                 " bytes zeroed in its segment)",
                 e, zeroed);
    }
    log_info("Log recovered: %" PRIu64 " records, LSN %" PRIu64 " to %" PRIu64, nrec, first, e);
    *start = nsegs ? first : e_seg;
    *end = e;
    return 0;
}
