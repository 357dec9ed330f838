/*
 * direct.c - log-sync direct (direct.h): a batch becomes whole 4 KiB blocks
 * copied out of the ring into an aligned buffer and written with one
 * O_DIRECT|O_DSYNC pwrite, which returns once they are on stable storage:
 * no page cache, no separate fdatasync. Run by the logger's main thread.
 *
 * Records are contiguous (the log is a byte image of the ring, D1), so a
 * batch usually starts inside the block where the previous one ended. That
 * block is written again, with the previous batch's bytes (kept in `tail`:
 * the ring may already have reused them) followed by the new ones. This is
 * safe because writes here are synchronous: the earlier write of the block
 * has completed before the next one is issued, so two writes of one block
 * with different contents are never in flight together (the device could
 * apply them in either order). The rewrite carries the block's durable
 * head unchanged, as the fdatasync path's writeback of a whole page does;
 * a power cut during it can tear only the bytes that are not acked yet.
 * The rest of a batch's last block is zeros, as the segment holds there.
 * A crash of the logger loses nothing acked: the next one reads the tail
 * block back from disk (direct_start) and rewrites from durable_lsn.
 */
#include "direct.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "io.h"

/* Bytes of one write; a longer batch is several writes, each durable. */
#define DIRECT_CHUNK (1u << 20)

int direct_init(direct_t *d)
{
    memset(d, 0, sizeof(*d));
    void *buf, *tail;
    if (posix_memalign(&buf, DIRECT_BLOCK, DIRECT_CHUNK) != 0) {
        errno = ENOMEM;
        return -1;
    }
    if (posix_memalign(&tail, DIRECT_BLOCK, DIRECT_BLOCK) != 0) {
        free(buf);
        errno = ENOMEM;
        return -1;
    }
    d->buf = buf;
    d->tail = tail;
    return 0;
}

void direct_free(direct_t *d)
{
    free(d->buf);
    free(d->tail);
    memset(d, 0, sizeof(*d));
}

int direct_start(direct_t *d, int fd, uint64_t seg_start, uint64_t end)
{
    d->tail_lsn = end & ~(uint64_t)(DIRECT_BLOCK - 1);
    d->tail_len = (uint32_t)(end - d->tail_lsn);
    memset(d->tail, 0, DIRECT_BLOCK);
    if (!d->tail_len) return 0;
    if (io_pread_all(fd, d->tail, DIRECT_BLOCK, (off_t)(d->tail_lsn - seg_start)) != 0) return -1;
    memset(d->tail + d->tail_len, 0, DIRECT_BLOCK - d->tail_len);
    return 0;
}

/* Copy [from, to) of the ring to dst, across the data area's wrap. */
static void copy_ring(unsigned char *dst, const ring_t *r, uint64_t from, uint64_t to)
{
    while (from < to) {
        uint64_t lap_end = (from | r->mask) + 1;
        uint64_t stop = to < lap_end ? to : lap_end;
        memcpy(dst, ring_ptr(r, from), (size_t)(stop - from));
        dst += stop - from;
        from = stop;
    }
}

int direct_write(direct_t *d, int fd, const ring_t *r, uint64_t seg_start, uint64_t from,
                 uint64_t to)
{
    while (from < to) {
        uint64_t blk = from & ~(uint64_t)(DIRECT_BLOCK - 1);
        if (blk != d->tail_lsn || from - blk != d->tail_len) {
            errno = EINVAL; /* not where the log ends: a logger bug, never write */
            return -1;
        }
        uint64_t stop = to - blk > DIRECT_CHUNK ? blk + DIRECT_CHUNK : to;
        size_t len = (size_t)(stop - blk);
        size_t padded = (len + DIRECT_BLOCK - 1) & ~(size_t)(DIRECT_BLOCK - 1);
        memcpy(d->buf, d->tail, d->tail_len);
        copy_ring(d->buf + d->tail_len, r, from, stop);
        memset(d->buf + len, 0, padded - len);
        if (io_pwrite_all(fd, d->buf, padded, (off_t)(blk - seg_start)) != 0) return -1;
        /* The new last block, for the next write. */
        d->tail_lsn = stop & ~(uint64_t)(DIRECT_BLOCK - 1);
        d->tail_len = (uint32_t)(stop - d->tail_lsn);
        memset(d->tail, 0, DIRECT_BLOCK);
        if (d->tail_len) memcpy(d->tail, d->buf + (d->tail_lsn - blk), d->tail_len);
        from = stop;
    }
    return 0;
}
