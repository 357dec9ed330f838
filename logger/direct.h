/*
 * direct.h - log-sync direct: each batch is one O_DIRECT|O_DSYNC write of
 * whole 4 KiB blocks (docs/DECISIONS.md, D24). Run by the logger's main
 * thread.
 */
#ifndef ATTIC_DIRECT_H
#define ATTIC_DIRECT_H

#include <stdint.h>

#include "ring.h"

#define DIRECT_BLOCK 4096u

/* The staging area, and the log's last partial block as it is on disk. */
typedef struct direct {
    unsigned char *buf;  /* DIRECT_CHUNK bytes, block-aligned */
    unsigned char *tail; /* one block, block-aligned */
    uint64_t tail_lsn;   /* LSN of tail[0] (a block boundary) */
    uint32_t tail_len;   /* bytes of log in it: the log ends at tail_lsn + tail_len */
} direct_t;

/* Allocate the buffers. Returns 0 or -1 with errno (ENOMEM). */
int direct_init(direct_t *d);
void direct_free(direct_t *d);

/*
 * The log ends at `end` in the segment open as fd (O_DIRECT) that starts at
 * seg_start: read the durable bytes of end's block, which the next write
 * rewrites. Returns 0 or -1 with errno.
 */
int direct_start(direct_t *d, int fd, uint64_t seg_start, uint64_t end);

/*
 * Write [from, to) of the ring, from == the end given to direct_start or to
 * the last direct_write, and all of it within the segment at seg_start:
 * the partial block before `from` is rewritten with what it held, the one
 * after `to` is padded with zeros (what a fresh segment holds there). On
 * an O_DSYNC fd the records are durable when it returns 0; -1 with errno
 * otherwise (never retried: the caller fail-stops).
 */
int direct_write(direct_t *d, int fd, const ring_t *r, uint64_t seg_start, uint64_t from,
                 uint64_t to);

#endif
