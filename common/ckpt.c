/*
 * ckpt.c - the checkpoint file format (ckpt.h): naming, listing, a block
 * writer and a verifying reader. Run by the store's checkpoint child (writing),
 * the store at start (reading) and atticdb-check (verifying).
 *
 * Invariants:
 *   - A .ckpt name only ever points at a file that was complete and
 *     fdatasynced before the rename; a crash at any step leaves at worst a
 *     .tmp (removed by the next checkpoint) or a .ckpt whose directory
 *     entry is not durable yet (then the older ones are still there).
 *   - Every byte a reader hands out is covered by a block CRC; the file as
 *     a whole by the trailer's CRC, which is checked before the reader says
 *     the file is good (ckpt_reader_next returning 0).
 *   - All file I/O goes through the seam (io->...), so tests fail any step.
 */
#include "ckpt.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "crc32c.h"
#include "io.h"
#include "io_fault.h"

static const char ckpt_magic[8] = {'A', 'T', 'T', 'I', 'C', 'C', 'K', 'P'};
static const char ckpt_end_magic[8] = {'A', 'T', 'T', 'I', 'C', 'E', 'N', 'D'};

static void put32(unsigned char *p, uint32_t v)
{
    memcpy(p, &v, 4); /* little-endian hosts only, as the log (record.h) */
}
static void put64(unsigned char *p, uint64_t v)
{
    memcpy(p, &v, 8);
}
static uint32_t get32(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}
static uint64_t get64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

void ckpt_path(char *out, size_t outlen, const char *dir, uint64_t lsn, int tmp)
{
    snprintf(out, outlen, "%s/checkpoint-%016" PRIx64 ".%s", dir, lsn, tmp ? "tmp" : "ckpt");
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

int ckpt_list(const char *dir, int tmp, uint64_t **out, size_t *n)
{
    DIR *d = io->opendir(dir);
    if (!d) return -1;
    size_t cap = 8, cnt = 0;
    uint64_t *v = malloc(cap * sizeof(*v));
    int err = v ? 0 : ENOMEM;
    const char *want = tmp ? "tmp" : "ckpt";
    struct dirent *e;
    while (!err) {
        errno = 0;
        if ((e = io->readdir(d)) == NULL) {
            err = errno; /* 0 at the end; else a partial list would hide files */
            break;
        }
        unsigned long long lsn;
        char ext[8];
        int used = 0;
        if (strncmp(e->d_name, "checkpoint-", 11) != 0) continue;
        if (sscanf(e->d_name, "checkpoint-%16llx.%5[a-z]%n", &lsn, ext, &used) != 2) continue;
        if (e->d_name[used] || strcmp(ext, want) || strlen(e->d_name) != 28 + strlen(want))
            continue;
        if (cnt == cap) {
            uint64_t *nv = realloc(v, 2 * cap * sizeof(*v));
            if (!nv) {
                err = ENOMEM;
                break;
            }
            v = nv;
            cap *= 2;
        }
        v[cnt++] = lsn;
    }
    io->closedir(d);
    if (err) {
        free(v);
        errno = err;
        return -1;
    }
    qsort(v, cnt, sizeof(*v), cmp_u64);
    *out = v;
    *n = cnt;
    return 0;
}

/* ---- writing ------------------------------------------------------------ */

static int write_out(ckpt_writer_t *w, const void *p, size_t n)
{
    if (io_pwrite_all(w->fd, p, n, (off_t)w->off)) return -1;
    w->file_crc = crc32c(w->file_crc, p, n);
    w->off += n;
    return 0;
}

static void reserve(ckpt_writer_t *w, size_t more)
{
    if (w->len + more <= w->cap) return;
    size_t cap = w->cap ? w->cap : CKPT_BLOCK_TARGET + 4096;
    while (cap < w->len + more)
        cap *= 2;
    unsigned char *b = realloc(w->buf, cap);
    if (!b) abort(); /* the checkpoint child: out of memory is its death, not the store's */
    w->buf = b;
    w->cap = cap;
}

int ckpt_writer_open(ckpt_writer_t *w, const char *dir, const ckpt_info_t *info)
{
    memset(w, 0, sizeof(*w));
    w->fd = -1;
    w->dir = dir;
    w->info = *info;
    ckpt_path(w->tmp, sizeof(w->tmp), dir, info->lsn, 1);
    ckpt_path(w->final, sizeof(w->final), dir, info->lsn, 0);
    w->fd = io->open(w->tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (w->fd < 0) return -1;
    unsigned char h[CKPT_HEADER_SIZE] = {0};
    memcpy(h, ckpt_magic, 8);
    put32(h + 8, CKPT_VERSION);
    put32(h + 12, CKPT_HEADER_SIZE);
    put64(h + 16, info->segment_size);
    put64(h + 24, info->lsn);
    put64(h + 32, (uint64_t)info->now);
    put64(h + 40, info->keys);
    put32(h + 48, info->ndb);
    put32(h + 52, info->flags);
    put32(h + 60, crc32c(0, h, 60));
    if (write_out(w, h, sizeof(h))) {
        int e = errno;
        ckpt_writer_abort(w);
        errno = e;
        return -1;
    }
    return 0;
}

int ckpt_flush_block(ckpt_writer_t *w)
{
    if (!w->type) return 0;
    unsigned char *h = w->buf;
    uint64_t n = w->len - CKPT_BLOCK_HEAD;
    put32(h, w->type);
    put32(h + 4, w->items);
    put64(h + 8, n);
    uint32_t crc = crc32c(0, h, 16);
    put32(h + 16, crc32c(crc, h + CKPT_BLOCK_HEAD, (size_t)n));
    put32(h + 20, 0);
    w->type = 0;
    w->items = 0;
    size_t len = w->len;
    w->len = 0;
    w->blocks++;
    return write_out(w, h, len);
}

void ckpt_put(ckpt_writer_t *w, uint32_t type, const void *p, size_t n)
{
    if (w->type != type) {
        /* A failed write is reported by the next ckpt_item_done or the
         * commit (w->err). */
        if (w->type && ckpt_flush_block(w) && !w->err) w->err = errno ? errno : EIO;
        reserve(w, CKPT_BLOCK_HEAD);
        memset(w->buf, 0, CKPT_BLOCK_HEAD);
        w->len = CKPT_BLOCK_HEAD;
        w->type = type;
        w->items = 0;
    }
    reserve(w, n);
    if (n) memcpy(w->buf + w->len, p, n);
    w->len += n;
}

/* A write that failed inside ckpt_put (a block flushed on a type change). */
static int writer_failed(ckpt_writer_t *w)
{
    if (!w->err) return 0;
    errno = w->err;
    return 1;
}

int ckpt_item_done(ckpt_writer_t *w)
{
    if (writer_failed(w)) return -1;
    w->items++;
    if (w->len - CKPT_BLOCK_HEAD >= CKPT_BLOCK_TARGET) return ckpt_flush_block(w);
    return 0;
}

void ckpt_writer_abort(ckpt_writer_t *w)
{
    if (w->fd >= 0) io->close(w->fd);
    w->fd = -1;
    io->unlink(w->tmp);
    free(w->buf);
    w->buf = NULL;
}

int ckpt_writer_commit(ckpt_writer_t *w)
{
    int e = 0;
    if (writer_failed(w) || ckpt_flush_block(w)) goto fail;
    unsigned char t[CKPT_TRAILER] = {0};
    memcpy(t, ckpt_end_magic, 8);
    put64(t + 8, w->info.lsn);
    put64(t + 16, w->info.keys);
    put64(t + 24, w->blocks);
    put64(t + 32, w->off);
    put32(t + 44, crc32c(w->file_crc, t, 44));
    if (io_pwrite_all(w->fd, t, sizeof(t), (off_t)w->off)) goto fail;
    if (io->fdatasync(w->fd)) goto fail;
    io->close(w->fd);
    w->fd = -1;
    free(w->buf);
    w->buf = NULL;
    /* Tests: killed with a complete .tmp (io_fault.h). */
    if (io_fault_point(IO_FAULT_CKPT_WRITTEN)) raise(SIGKILL);
    if (io->rename(w->tmp, w->final)) goto fail;
    /* Tests: killed with the new name not yet durable. */
    if (io_fault_point(IO_FAULT_CKPT_RENAMED)) raise(SIGKILL);
    /* A failure here leaves a complete, synced .ckpt whose name may not
     * survive a power cut: still correct either way, but report it so the
     * caller does not delete the older ones on its strength. */
    if (io_fsync_dir(w->dir)) return -1;
    return 0;
fail:
    e = errno;
    ckpt_writer_abort(w);
    errno = e;
    return -1;
}

/* ---- reading ------------------------------------------------------------ */

static int bad(ckpt_reader_t *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int bad(ckpt_reader_t *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->err, sizeof(r->err), fmt, ap);
    va_end(ap);
    return -1;
}

static int read_at(ckpt_reader_t *r, void *p, size_t n, uint64_t off)
{
    if (off + n > r->size) {
        memset(p, 0, n);
        errno = ENODATA;
        return -1;
    }
    return io_pread_all(r->fd, p, n, (off_t)off);
}

int ckpt_reader_open(ckpt_reader_t *r, const char *path, uint64_t segment_size)
{
    memset(r, 0, sizeof(*r));
    r->fd = io->open(path, O_RDONLY, 0);
    if (r->fd < 0) return bad(r, "cannot open: %s", strerror(errno));
    struct stat st;
    if (io->stat(path, &st)) return bad(r, "cannot stat: %s", strerror(errno));
    r->size = (uint64_t)st.st_size;
    unsigned char h[CKPT_HEADER_SIZE];
    if (r->size < CKPT_HEADER_SIZE + CKPT_TRAILER)
        return bad(r, "truncated (%" PRIu64 " bytes)", r->size);
    if (read_at(r, h, sizeof(h), 0)) return bad(r, "cannot read the header: %s", strerror(errno));
    if (memcmp(h, ckpt_magic, 8)) return bad(r, "not a checkpoint (magic)");
    if (get32(h + 60) != crc32c(0, h, 60)) return bad(r, "header CRC mismatch");
    r->info.version = get32(h + 8);
    if (r->info.version != CKPT_VERSION || get32(h + 12) != CKPT_HEADER_SIZE)
        return bad(r, "unknown version %u", (unsigned)r->info.version);
    r->info.segment_size = get64(h + 16);
    r->info.lsn = get64(h + 24);
    r->info.now = (int64_t)get64(h + 32);
    r->info.keys = get64(h + 40);
    r->info.ndb = get32(h + 48);
    r->info.flags = get32(h + 52);
    if (segment_size && r->info.segment_size != segment_size)
        return bad(r, "written for segments of %" PRIu64 " bytes, not %" PRIu64,
                   r->info.segment_size, segment_size);
    r->file_crc = crc32c(0, h, sizeof(h));
    r->off = CKPT_HEADER_SIZE;
    return 0;
}

int ckpt_reader_next(ckpt_reader_t *r, uint32_t *type, uint32_t *items, const unsigned char **p,
                     uint64_t *n)
{
    unsigned char h[CKPT_BLOCK_HEAD];
    if (r->off + CKPT_TRAILER > r->size)
        return bad(r, "truncated (no trailer) at offset %" PRIu64, r->off);
    if (read_at(r, h, 8, r->off)) return bad(r, "read error at offset %" PRIu64, r->off);
    if (!memcmp(h, ckpt_end_magic, 8)) {
        unsigned char t[CKPT_TRAILER];
        if (read_at(r, t, sizeof(t), r->off))
            return bad(r, "read error at offset %" PRIu64, r->off);
        if (get32(t + 44) != crc32c(r->file_crc, t, 44))
            return bad(r, "whole-file CRC mismatch at offset %" PRIu64, r->off);
        if (get64(t + 8) != r->info.lsn || get64(t + 16) != r->info.keys ||
            get64(t + 24) != r->blocks || get64(t + 32) != r->off)
            return bad(r, "trailer disagrees with the file at offset %" PRIu64, r->off);
        if (r->off + CKPT_TRAILER != r->size)
            return bad(r, "%s at offset %" PRIu64, "bytes after the trailer",
                       r->off + CKPT_TRAILER);
        r->info.blocks = r->blocks;
        r->info.file_size = r->size;
        return 0;
    }
    if (r->off + CKPT_BLOCK_HEAD > r->size || read_at(r, h, CKPT_BLOCK_HEAD, r->off))
        return bad(r, "truncated block at offset %" PRIu64, r->off);
    uint64_t len = get64(h + 8);
    if (len > r->size - r->off - CKPT_BLOCK_HEAD)
        return bad(r, "block runs past the end at offset %" PRIu64, r->off);
    if (len > r->cap) {
        unsigned char *b = realloc(r->buf, (size_t)len);
        if (!b) return bad(r, "out of memory for the block at offset %" PRIu64, r->off);
        r->buf = b;
        r->cap = (size_t)len;
    }
    if (len && read_at(r, r->buf, (size_t)len, r->off + CKPT_BLOCK_HEAD))
        return bad(r, "read error at offset %" PRIu64, r->off);
    uint32_t crc = crc32c(crc32c(0, h, 16), r->buf, (size_t)len);
    if (crc != get32(h + 16)) return bad(r, "block CRC mismatch at offset %" PRIu64, r->off);
    r->file_crc = crc32c(r->file_crc, h, sizeof(h));
    r->file_crc = crc32c(r->file_crc, r->buf, (size_t)len);
    r->off += CKPT_BLOCK_HEAD + len;
    r->blocks++;
    *type = get32(h);
    *items = get32(h + 4);
    *p = r->buf;
    *n = len;
    return 1;
}

void ckpt_reader_close(ckpt_reader_t *r)
{
    if (r->fd >= 0) io->close(r->fd);
    r->fd = -1;
    free(r->buf);
    r->buf = NULL;
}

int ckpt_verify_each(const char *path, uint64_t segment_size, ckpt_info_t *info, ckpt_block_fn fn,
                     void *arg, char *err, size_t errlen)
{
    ckpt_reader_t r;
    int rc = ckpt_reader_open(&r, path, segment_size);
    while (rc == 0) {
        uint32_t type, items;
        const unsigned char *p;
        uint64_t n;
        int k = ckpt_reader_next(&r, &type, &items, &p, &n);
        if (k < 0) rc = -1;
        if (k <= 0) break;
        if (fn) fn(arg, &r.info, type, items, p, n);
    }
    if (info) *info = r.info;
    if (rc) snprintf(err, errlen, "%s", r.err);
    ckpt_reader_close(&r);
    return rc;
}

static void count_items(void *arg, const ckpt_info_t *info, uint32_t type, uint32_t items,
                        const unsigned char *p, uint64_t n)
{
    (void)info, (void)p, (void)n;
    uint64_t *items_by_type = arg;
    if (type < 4) items_by_type[type] += items;
}

int ckpt_verify(const char *path, uint64_t segment_size, ckpt_info_t *info,
                uint64_t items_by_type[4], char *err, size_t errlen)
{
    if (items_by_type) memset(items_by_type, 0, 4 * sizeof(uint64_t));
    return ckpt_verify_each(path, segment_size, info, items_by_type ? count_items : NULL,
                            items_by_type, err, errlen);
}

int ckpt_access_next(const unsigned char **p, const unsigned char *end, uint32_t ndb,
                     ckpt_access_item_t *it)
{
    uint32_t h[3];
    if ((size_t)(end - *p) < sizeof(h)) return -1;
    memcpy(h, *p, sizeof(h));
    if (h[0] >= ndb || h[2] > CKPT_ACCESS_BITS_MAX || h[1] > (size_t)(end - *p) - sizeof(h))
        return -1;
    it->db = h[0];
    it->klen = h[1];
    it->bits = h[2];
    it->key = *p + sizeof(h);
    *p = it->key + h[1];
    return 0;
}
