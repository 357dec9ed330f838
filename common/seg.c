/*
 * seg.c - naming, listing and sequential reading of log segments (seg.h).
 * Run by the logger (recovery), the store (replay) and atticdb-check.
 * Read-only: nothing here writes to the data directory.
 */
#include "seg.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io.h"

#define SEG_READ_WINDOW (1u << 20)

void seg_path(char *out, size_t outlen, const char *dir, uint64_t start_lsn)
{
    snprintf(out, outlen, "%s/log-%016" PRIx64 ".seg", dir, start_lsn);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

int seg_list(const char *dir, uint64_t **out, size_t *n)
{
    DIR *d = io->opendir(dir);
    if (!d) return -1;
    size_t cap = 16, cnt = 0;
    uint64_t *v = malloc(cap * sizeof(*v));
    if (!v) {
        io->closedir(d);
        errno = ENOMEM;
        return -1;
    }
    struct dirent *e;
    /* readdir's NULL is the end or an error: errno tells them apart. A
     * listing cut short would hide segments, and recovery would take the
     * last one it saw for the end of the log. */
    while ((errno = 0, e = io->readdir(d)) != NULL) {
        unsigned long long start;
        char tail[8];
        if (strlen(e->d_name) != 24) continue;
        if (sscanf(e->d_name, "log-%16llx.%4s", &start, tail) != 2 || strcmp(tail, "seg") != 0)
            continue;
        if (cnt == cap) {
            uint64_t *nv = realloc(v, 2 * cap * sizeof(*v));
            if (!nv) {
                free(v);
                io->closedir(d);
                errno = ENOMEM;
                return -1;
            }
            v = nv;
            cap *= 2;
        }
        v[cnt++] = start;
    }
    if (errno != 0) {
        int saved = errno;
        free(v);
        io->closedir(d);
        errno = saved;
        return -1;
    }
    io->closedir(d);
    qsort(v, cnt, sizeof(*v), cmp_u64);
    *out = v;
    *n = cnt;
    return 0;
}

int seg_reader_open(seg_reader_t *r, const char *dir, uint64_t segment_size, uint64_t lsn)
{
    memset(r, 0, sizeof(*r));
    r->dir = dir;
    r->segment_size = segment_size;
    r->lsn = lsn;
    r->fd = -1;
    r->buf_cap = SEG_READ_WINDOW;
    r->buf = malloc(r->buf_cap);
    if (!r->buf) {
        errno = ENOMEM;
        return -1;
    }
    return 0;
}

void seg_reader_close(seg_reader_t *r)
{
    if (r->fd >= 0) io->close(r->fd);
    r->fd = -1;
    free(r->buf);
    r->buf = NULL;
}

/* Make sure [lsn, lsn + want) is in the window (or as much of it as the
 * segment holds). Returns bytes available at lsn, or -1 on I/O error. */
static int64_t seg_fill(seg_reader_t *r, uint64_t lsn, size_t want)
{
    uint64_t seg_start = lsn & ~(r->segment_size - 1);
    uint64_t seg_end = seg_start + r->segment_size;
    if (lsn >= r->buf_lsn && lsn + want <= r->buf_lsn + r->buf_len)
        return (int64_t)(r->buf_lsn + r->buf_len - lsn);
    if (want > r->buf_cap) {
        unsigned char *nb = realloc(r->buf, want);
        if (!nb) {
            errno = ENOMEM;
            return -1;
        }
        r->buf = nb;
        r->buf_cap = want;
    }
    size_t n = r->buf_cap;
    if (n > seg_end - lsn) n = (size_t)(seg_end - lsn);
    ssize_t got = 0;
    while ((size_t)got < n) {
        ssize_t k = io->pread(r->fd, r->buf + got, n - (size_t)got, (off_t)(lsn - seg_start) + got);
        if (k < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        if (k == 0) break; /* short segment: the rest reads as empty */
        got += k;
    }
    memset(r->buf + got, 0, n - (size_t)got);
    r->buf_lsn = lsn;
    r->buf_len = n;
    return (int64_t)n;
}

int64_t seg_reader_next(seg_reader_t *r, const void **rec)
{
    uint64_t seg_start = r->lsn & ~(r->segment_size - 1);
    if (r->fd < 0 || r->fd_start != seg_start) {
        if (r->fd >= 0) io->close(r->fd);
        char path[4096];
        seg_path(path, sizeof(path), r->dir, seg_start);
        r->fd = io->open(path, O_RDONLY, 0);
        r->buf_len = 0;
        if (r->fd < 0) return errno == ENOENT ? REC_EMPTY : -3;
        r->fd_start = seg_start;
    }
    int64_t avail = seg_fill(r, r->lsn, REC_HDR_SIZE);
    if (avail < 0) return -3;
    const unsigned char *p = r->buf + (r->lsn - r->buf_lsn);
    rec_hdr_t h;
    if (avail < (int64_t)REC_HDR_SIZE) return REC_EMPTY;
    memcpy(&h, p, sizeof(h));
    if (h.lsn != r->lsn || h.len == 0) return REC_EMPTY;
    if (h.len < REC_HDR_SIZE) return REC_TORN;
    uint64_t space = rec_space(h.len - REC_HDR_SIZE);
    if (space > seg_start + r->segment_size - r->lsn) return REC_TORN;
    if ((uint64_t)avail < space) {
        avail = seg_fill(r, r->lsn, (size_t)space);
        if (avail < 0) return -3;
        p = r->buf + (r->lsn - r->buf_lsn);
    }
    int64_t rc = rec_check(p, r->lsn, (uint64_t)avail);
    if (rc <= 0) return rc;
    *rec = p;
    r->lsn += (uint64_t)rc;
    return rc;
}

/* The end of the record whose header is at p (header only: its CRC need
 * not hold), or 0 when r does not hold a header for p. */
static uint64_t header_end(const unsigned char *r, uint64_t p, uint64_t seg_end)
{
    rec_hdr_t h;
    memcpy(&h, r, sizeof(h));
    if (h.lsn != p || h.len < REC_HDR_SIZE) return 0;
    uint64_t space = rec_space(h.len - REC_HDR_SIZE);
    if (space < h.len || space > seg_end - p) return 0;
    return p + space;
}

static int all_zero(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i]) return 0;
    return 1;
}

/*
 * Look for a proof in one segment image (buf holds [seg, seg_end)) from p,
 * a known record boundary (`end`, or the segment's start). Walk the records
 * by their headers: a header at a boundary is its producer's, never a
 * client's bytes, so its length is trusted even when the CRC fails (a torn
 * or damaged payload), and the values it spans are never read as headers.
 * A forged header in a value cannot be reached this way (issue 9).
 *   - A zero header at a boundary is space never written (segments are
 *     zero-filled; a torn batch loses whole pages): the walk ends.
 *   - Anything else there was written but is not a header: damage (or a
 *     header torn within itself, followed by zeros). Only then does the scan
 *     go on at 32-byte steps, still stepping over every header it finds, so
 *     the records after the damage are found (docs/DECISIONS.md, D11).
 */
static int segment_proof(const unsigned char *buf, uint64_t seg, uint64_t seg_end, uint64_t p,
                         uint64_t end, const seg_untrusted_t *u, uint64_t *at)
{
    int at_boundary = 1;
    while (p + REC_HDR_SIZE <= seg_end) {
        const unsigned char *r = buf + (p - seg);
        uint64_t next = header_end(r, p, seg_end);
        if (next) {
            int trusted = !u || p < u->from || p >= u->to;
            if (trusted && rec_check(r, p, seg_end - p) > 0 && rec_proven_durable(r) > end) {
                *at = p;
                return 1;
            }
            p = next;
        } else if (at_boundary && all_zero(r, REC_HDR_SIZE)) {
            return 0;
        } else {
            at_boundary = 0; /* past damage: no boundary is known any more */
            p += REC_ALIGN;
        }
    }
    return 0;
}

int seg_find_damage_proof(const char *dir, uint64_t segment_size, uint64_t end,
                          const seg_untrusted_t *untrusted, uint64_t *at)
{
    uint64_t *segs;
    size_t n;
    if (seg_list(dir, &segs, &n) != 0) return -1;
    unsigned char *buf = malloc(segment_size);
    if (!buf) {
        free(segs);
        return -1;
    }
    int found = 0, rc = 0;
    for (size_t i = 0; i < n && !found; i++) {
        uint64_t seg = segs[i];
        if (seg + segment_size <= end) continue;
        char path[4096];
        seg_path(path, sizeof(path), dir, seg);
        int fd = io->open(path, O_RDONLY, 0);
        if (fd < 0) continue;
        if (io_pread_all(fd, buf, segment_size, 0) != 0 && errno != ENODATA) rc = -1;
        io->close(fd);
        if (rc) break;
        found =
            segment_proof(buf, seg, seg + segment_size, seg > end ? seg : end, end, untrusted, at);
    }
    free(buf);
    free(segs);
    return rc ? -1 : found;
}
