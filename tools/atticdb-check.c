/*
 * atticdb-check - verify an AtticDB data directory offline, and cut its log
 * at a chosen LSN on request.
 *
 *   atticdb-check [--segment-size BYTES] [--dump] DIR
 *   atticdb-check --cut LSN DIR
 *
 * Verification walks the log from its first segment (which need not start
 * at LSN 0: the store deletes segments nothing needs, D27), checking each record's
 * position, length and CRC32C, and reports where the valid log ends and why:
 * a clean end (zeros), a torn tail (what recovery would cut), or damage in the
 * middle (a bad record that a later valid record shows was durable, which
 * the server refuses to start on; record.h, durable_gap). Then each store
 * checkpoint (common/ckpt.h) is read through and its CRCs checked: its LSN,
 * keys and size, its access data (D49: items and blocks, verified as the
 * store's loader verifies them), or why it is invalid (the server skips such a one for an
 * older one or a full replay), and whether it lies beyond the log's end.
 * Exit status: 0 the log is whole (or ends in a torn tail) and every
 * checkpoint verifies, 1 damage in the middle or an invalid checkpoint, 2
 * usage or I/O error.
 *
 * --cut removes the segments after LSN's and zeroes everything from LSN to the
 * end of its segment (common/datadir.c, the same cut recovery makes of a torn
 * tail), so the server starts with the log ending there, and removes the
 * checkpoints of LSNs after it (states the log no longer leads to: once the
 * log grew past them again they would be loaded). It takes the data
 * directory's lock, so it refuses while a server runs there. What is cut is
 * gone: acknowledged writes after LSN included.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ckpt.h"
#include "command.h"
#include "datadir.h"
#include "io.h"
#include "io_fault.h"
#include "record.h"
#include "seg.h"

static void usage(void)
{
    fprintf(stderr, "usage: atticdb-check [--segment-size BYTES] [--dump] DIR\n"
                    "       atticdb-check --cut LSN DIR\n");
    exit(2);
}

/* The segment size: given, or the size of the first segment file. */
static uint64_t find_segment_size(const char *dir, const uint64_t *segs, size_t n, uint64_t given)
{
    if (given) return given;
    if (!n) return 0;
    char path[4096];
    struct stat st;
    seg_path(path, sizeof(path), dir, segs[0]);
    if (io->stat(path, &st) != 0) {
        fprintf(stderr, "atticdb-check: can't stat %s: %s\n", path, strerror(errno));
        exit(2);
    }
    return (uint64_t)st.st_size;
}

static void dump_record(const void *rec)
{
    rec_hdr_t h;
    memcpy(&h, rec, sizeof(h));
    if (h.type == REC_PAD) {
        printf("%16" PRIu64 "  pad   %u bytes\n", h.lsn, h.len);
        return;
    }
    uint16_t id, argc;
    rec_arg_t args[4];
    if (rec_decode_cmd(rec, &id, &argc, args, 4) != 0) {
        printf("%16" PRIu64 "  cmd   (undecodable)\n", h.lsn);
        return;
    }
    const cmd_desc_t *d = cmd_by_id((cmd_id_t)id);
    printf("%16" PRIu64 "  %-9s time %" PRId64 " origin %u argc %u", h.lsn, d ? d->name : "?",
           h.time_ms, h.origin, argc);
    if (argc > 0) printf("  key '%.*s'", (int)(args[0].len > 40 ? 40 : args[0].len), args[0].ptr);
    printf("\n");
}

/* A checkpoint's access data (D49) as its blocks are read: blocks,
 * items, the databases started so far, and the first problem. */
typedef struct access_report {
    uint64_t blocks, items;
    uint32_t dbs;
    const char *why;
} access_report_t;

/* The ACCESS block p[0, n) of items items, in a file of ndb databases of
 * which dbs were started before it: NULL when it verifies, else why not. */
static const char *access_block_problem(const unsigned char *p, uint64_t n, uint32_t items,
                                        uint32_t ndb, uint32_t dbs)
{
    if (dbs != ndb) return "before a database";
    const unsigned char *end = p + n;
    for (uint32_t i = 0; i < items; i++) {
        ckpt_access_item_t it;
        if (ckpt_access_next(&p, end, ndb, &it))
            return "an item cut short, past the last database or with bits past 24";
    }
    return p == end ? NULL : "bytes after its last item";
}

static void access_block(void *arg, const ckpt_info_t *info, uint32_t type, uint32_t items,
                         const unsigned char *p, uint64_t n)
{
    access_report_t *ac = arg;
    ac->dbs += type == CKPT_BLK_DB;
    if (type != CKPT_BLK_ACCESS) return;
    ac->blocks++;
    ac->items += items;
    if (!ac->why) ac->why = access_block_problem(p, n, items, info->ndb, ac->dbs);
}

/*
 * Verify the checkpoint at path: its CRCs (ckpt_verify's checks) and its
 * access data as the store's loader does (store/checkpoint.c,
 * load_access): each block after every database, each item whole, of a
 * database the file has, with 24 bits, no bytes after the last, and one
 * item per key exactly when the header has CKPT_F_ACCESS. Not checked:
 * that each item's key is one the file holds (that needs the entries'
 * formats, which are the store's). Returns 0, or -1 with the reason in
 * err (the server skips such a file).
 */
static int verify_checkpoint(const char *path, uint64_t seg_size, ckpt_info_t *info,
                             access_report_t *ac, char *err, size_t errlen)
{
    memset(ac, 0, sizeof(*ac));
    if (ckpt_verify_each(path, seg_size, info, access_block, ac, err, errlen)) return -1;
    if (!ac->why && (!!(info->flags & CKPT_F_ACCESS) != (ac->items > 0) ||
                     (ac->items && ac->items != info->keys)))
        ac->why = "not one item per key";
    if (!ac->why) return 0;
    snprintf(err, errlen, "malformed access data (%s)", ac->why);
    return -1;
}

/* Each checkpoint, verified; log_start/log_end: the log present. A log
 * whose start was deleted (log_start > 0) needs one the server can load:
 * without, it refuses to start (store/checkpoint.c, D27). Returns the
 * number of problems. */
static int report_checkpoints(const char *dir, uint64_t seg_size, uint64_t log_start,
                              uint64_t log_end)
{
    uint64_t *v, *t;
    size_t n, nt;
    if (ckpt_list(dir, 0, &v, &n) || ckpt_list(dir, 1, &t, &nt)) return 0;
    int bad = 0, usable = 0;
    printf("checkpoints: %zu\n", n);
    for (size_t i = 0; i < n; i++) {
        char path[4096], err[256];
        ckpt_path(path, sizeof(path), dir, v[i], 0);
        ckpt_info_t info;
        access_report_t ac;
        if (verify_checkpoint(path, seg_size, &info, &ac, err, sizeof(err)) == 0) {
            char access[96] = ", no access data (its keys load fresh)";
            if (info.flags & CKPT_F_ACCESS)
                snprintf(access, sizeof(access),
                         ", access data: %" PRIu64 " items in %" PRIu64 " blocks", ac.items,
                         ac.blocks);
            printf("  checkpoint at LSN %" PRIu64 ": valid, %" PRIu64
                   " keys in %u databases, %" PRIu64 " blocks, %" PRIu64
                   " bytes, apply clock %" PRId64 "%s%s%s\n",
                   info.lsn, info.keys, (unsigned)info.ndb, info.blocks, info.file_size, info.now,
                   info.flags & CKPT_F_WATCH ? ", WATCH table" : "", access,
                   info.lsn > log_end     ? "; beyond the log's end: the server skips it"
                   : info.lsn < log_start ? "; below the log's start: the server skips it"
                                          : "");
            usable += info.lsn <= log_end && info.lsn >= log_start;
        } else {
            printf("  checkpoint at LSN %" PRIu64 ": INVALID (%s): the server skips it\n", v[i],
                   err);
            bad++;
        }
    }
    if (log_start > 0 && !usable) {
        printf("problem: the log starts at LSN %" PRIu64 " (earlier segments were deleted) and no "
               "checkpoint within it verifies: the server refuses to start\n",
               log_start);
        bad++;
    }
    for (size_t i = 0; i < nt; i++)
        printf("  unfinished checkpoint at LSN %" PRIu64
               " (.tmp): ignored, removed by the next one\n",
               t[i]);
    free(v);
    free(t);
    return bad;
}

/* Remove the checkpoints (and unfinished ones) of LSNs after lsn. */
static int cut_checkpoints(const char *dir, uint64_t lsn)
{
    for (int tmp = 0; tmp < 2; tmp++) {
        uint64_t *v;
        size_t n;
        if (ckpt_list(dir, tmp, &v, &n)) return -1;
        for (size_t i = 0; i < n; i++) {
            if (v[i] <= lsn) continue;
            char path[4096];
            ckpt_path(path, sizeof(path), dir, v[i], tmp);
            if (io->unlink(path) != 0) {
                fprintf(stderr, "atticdb-check: can't remove %s: %s\n", path, strerror(errno));
                free(v);
                return -1;
            }
            printf("removed %s (after the cut)\n", path);
        }
        free(v);
    }
    return 0;
}

static int cut(const char *dir, uint64_t seg_size, const uint64_t *segs, size_t n, uint64_t lsn)
{
    if (lsn % REC_ALIGN) {
        fprintf(stderr,
                "atticdb-check: LSN %" PRIu64 " is not a record boundary (multiple of %u)\n", lsn,
                REC_ALIGN);
        return 2;
    }
    char msg[4608];
    int lock = datadir_lock(dir, 0, msg, sizeof(msg));
    if (lock < 0) {
        if (errno == EWOULDBLOCK)
            fprintf(stderr, "atticdb-check: %s is in use by a running server: stop it first\n",
                    dir);
        else
            fprintf(stderr, "atticdb-check: %s\n", msg);
        return 2;
    }
    uint64_t seg = lsn & ~(seg_size - 1), zeroed;
    char path[4096];
    seg_path(path, sizeof(path), dir, seg);
    int rc = datadir_cut_log(dir, seg_size, segs, n, lsn, &zeroed, msg, sizeof(msg));
    if (rc == 1) {
        fprintf(stderr, "atticdb-check: no segment holds LSN %" PRIu64 " (%s)\n", lsn, path);
        return 2;
    }
    if (rc != 0) {
        fprintf(stderr, "atticdb-check: cutting the log at LSN %" PRIu64 ": %s\n", lsn, msg);
        return 2;
    }
    if (cut_checkpoints(dir, lsn)) return 2;
    io_fsync_dir(dir);
    printf("log cut at LSN %" PRIu64 ": %" PRIu64 " bytes zeroed in %s, later segments removed\n",
           lsn, seg + seg_size - lsn, path);
    io->close(lock);
    return 0;
}

/* Large values' groups (D31) opened by a chunk and not yet closed by a
 * final or an abort, as the log is read. */
typedef struct open_groups {
    uint64_t *id;
    size_t n, cap;
} open_groups_t;

static void track_group(open_groups_t *g, unsigned op, uint64_t lsn, uint16_t argc,
                        const rec_arg_t *a)
{
    if (op == CMD_CHUNK && argc >= 2 && a[1].len == 4 && cmd_get_u32(a[1].ptr) == 0) {
        if (g->n == g->cap) {
            g->cap = g->cap ? 2 * g->cap : 16;
            g->id = realloc(g->id, g->cap * sizeof(*g->id));
            if (!g->id) abort();
        }
        g->id[g->n++] = lsn;
    } else if ((op == CMD_BIGFINAL || op == CMD_BIGABORT) && argc >= 1 && a[0].len == 8) {
        uint64_t id = (uint64_t)cmd_get_i64(a[0].ptr);
        for (size_t i = 0; i < g->n; i++)
            if (g->id[i] == id) {
                g->id[i] = g->id[--g->n];
                break;
            }
    }
}

int main(int argc, char **argv)
{
    uint64_t seg_given = 0, cut_lsn = UINT64_MAX;
    int dump = 0;
    const char *dir = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--segment-size") && i + 1 < argc)
            seg_given = strtoull(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--cut") && i + 1 < argc)
            cut_lsn = strtoull(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--dump"))
            dump = 1;
        else if (argv[i][0] == '-')
            usage();
        else if (!dir)
            dir = argv[i];
        else
            usage();
    }
    if (!dir) usage();
    const char *faults = getenv("ATTICDB_TEST_FAULTS");
    if (faults) {
        /* A test hook (common/io_fault.h): entries of role "check". */
        fprintf(stderr, "atticdb-check: ATTICDB_TEST_FAULTS is set (%s): faults are injected\n",
                faults);
        if (io_fault_install(faults, "check", 1) < 0) {
            fprintf(stderr, "atticdb-check: malformed ATTICDB_TEST_FAULTS: %s\n", faults);
            return 2;
        }
    }
    uint64_t *segs;
    size_t n;
    if (seg_list(dir, &segs, &n) != 0) {
        fprintf(stderr, "atticdb-check: can't read %s: %s\n", dir, strerror(errno));
        return 2;
    }
    uint64_t seg_size = find_segment_size(dir, segs, n, seg_given);
    printf("data directory: %s\nsegments: %zu", dir, n);
    if (n)
        printf(" (LSN %" PRIu64 " to %" PRIu64 "), %" PRIu64 " bytes each", segs[0],
               segs[n - 1] + seg_size, seg_size);
    printf("\n");
    if (!n) {
        free(segs);
        return report_checkpoints(dir, seg_given, 0, 0) ? 1 : 0;
    }
    if (!seg_size || (seg_size & (seg_size - 1))) {
        fprintf(stderr, "atticdb-check: segment size %" PRIu64 " is not a power of two\n",
                seg_size);
        return 2;
    }
    int bad_layout = 0;
    for (size_t i = 0; i < n; i++) {
        char path[4096];
        struct stat st;
        seg_path(path, sizeof(path), dir, segs[i]);
        if (io->stat(path, &st) != 0) {
            fprintf(stderr, "atticdb-check: can't stat %s: %s\n", path, strerror(errno));
            return 2;
        }
        if ((uint64_t)st.st_size != seg_size) {
            printf("problem: %s has %lld bytes, not %" PRIu64 "\n", path, (long long)st.st_size,
                   seg_size);
            bad_layout = 1;
        }
        if (i > 0 && segs[i] != segs[i - 1] + seg_size) {
            printf("problem: a segment is missing before %s\n", path);
            bad_layout = 1;
        }
    }
    if (cut_lsn != UINT64_MAX) {
        int rc = cut(dir, seg_size, segs, n, cut_lsn);
        free(segs);
        return rc;
    }

    seg_reader_t r;
    if (seg_reader_open(&r, dir, seg_size, segs[0]) != 0) return 2;
    uint64_t counts[256] = {0}, pads = 0, nrec = 0;
    open_groups_t groups = {0};
    int64_t rc;
    const void *rec;
    while ((rc = seg_reader_next(&r, &rec)) > 0) {
        rec_hdr_t h;
        memcpy(&h, rec, sizeof(h));
        if (dump) dump_record(rec);
        if (h.type == REC_PAD) {
            pads++;
            continue;
        }
        nrec++;
        uint16_t id = 0, ac;
        rec_arg_t a[2];
        if (rec_decode_cmd(rec, &id, &ac, a, 2) == 0) {
            counts[REC_OP(id)]++;
            track_group(&groups, REC_OP(id), h.lsn, ac, a);
        }
    }
    uint64_t end = r.lsn;
    seg_reader_close(&r);
    if (rc == -3) {
        fprintf(stderr, "atticdb-check: I/O error at LSN %" PRIu64 ": %s\n", end, strerror(errno));
        return 2;
    }
    printf("records: %" PRIu64 " (+%" PRIu64 " padding)\n", nrec, pads);
    for (int i = 0; i < 256; i++) {
        if (!counts[i]) continue;
        const cmd_desc_t *d = cmd_by_id((cmd_id_t)i);
        if (d)
            printf("  %-10s %" PRIu64 "\n", d->name, counts[i]);
        else if (i == CMD_TICK)
            printf("  %-10s %" PRIu64 "\n", "(tick)", counts[i]);
        else if (i == CMD_RELOCATE)
            printf("  %-10s %" PRIu64 "\n", "(relocate)", counts[i]);
        else if (i == CMD_CHUNK || i == CMD_BIGFINAL || i == CMD_BIGABORT)
            printf("  %-10s %" PRIu64 "\n",
                   i == CMD_CHUNK      ? "(chunk)"
                   : i == CMD_BIGFINAL ? "(bigfinal)"
                                       : "(bigabort)",
                   counts[i]);
        else if (i == CMD_EVICT)
            printf("  %-10s %" PRIu64 "\n", "(evict)", counts[i]);
        else
            printf("  op %-7d %" PRIu64 "\n", i, counts[i]);
    }
    if (groups.n)
        printf("value groups abandoned (chunks, no final or abort): %zu (not an error: the "
               "store drops them)\n",
               groups.n);
    free(groups.id);
    uint64_t seg = end & ~(seg_size - 1);
    char path[4096];
    seg_path(path, sizeof(path), dir, seg);
    seg_untrusted_t shipped; /* a replica's leader records: as recovery (D56) */
    char why[4608];
    if (datadir_shipped_read(dir, &shipped.from, &shipped.to, why, sizeof(why)) < 0) {
        fprintf(stderr, "atticdb-check: %s\n", why);
        return 2;
    }
    uint64_t later;
    int damaged = seg_find_damage_proof(dir, seg_size, end, &shipped, &later);
    if (damaged < 0) {
        fprintf(stderr, "atticdb-check: I/O error after LSN %" PRIu64 ": %s\n", end,
                strerror(errno));
        return 2;
    }
    int bad_ckpt = report_checkpoints(dir, seg_size, segs[0], end);
    if (damaged) {
        printf("DAMAGE: no valid record at LSN %" PRIu64 " (%s offset %" PRIu64
               "), but the record at LSN %" PRIu64 " shows it was durable\n"
               "the server will not start; cutting at LSN %" PRIu64
               " (atticdb-check --cut) loses every record after it\n",
               end, path, end - seg, later, end);
        free(segs);
        return 1;
    }
    printf("log ends at LSN %" PRIu64 " (%s offset %" PRIu64 ")%s\n", end, path, end - seg,
           rc == REC_TORN ? ": a torn record there, which recovery cuts" : "");
    free(segs);
    return bad_layout || bad_ckpt ? 1 : 0;
}
