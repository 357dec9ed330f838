/*
 * seg.h - log segments on disk, and reading records back from them.
 *
 * The log is a series of fixed-size files in the data directory, named by the
 * LSN of their first byte: `log-%016llx.seg`. Segment k starts at k *
 * segment_size; a record never crosses a segment's end (ring.h). The logger
 * writes them; the store and atticdb-check read them with seg_reader_t.
 */
#ifndef ATTIC_SEG_H
#define ATTIC_SEG_H

#include <stddef.h>
#include <stdint.h>

#include "record.h"

/* Path of the segment starting at start_lsn into out. */
void seg_path(char *out, size_t outlen, const char *dir, uint64_t start_lsn);

/*
 * The start LSNs of the segments present in dir, sorted. *out is allocated
 * (free it), *n their count. Returns 0 or -1 with errno set.
 */
int seg_list(const char *dir, uint64_t **out, size_t *n);

/* Reads records sequentially across segments, through the I/O seam. */
typedef struct seg_reader {
    const char *dir;
    uint64_t segment_size;
    uint64_t lsn;       /* position of the next record */
    int fd;             /* segment containing lsn, -1 if not open */
    uint64_t fd_start;  /* its start LSN */
    unsigned char *buf; /* read-ahead window */
    size_t buf_cap;
    uint64_t buf_lsn; /* LSN of buf[0] */
    size_t buf_len;
} seg_reader_t;

/* Start reading at lsn. Returns 0 or -1 with errno. */
int seg_reader_open(seg_reader_t *r, const char *dir, uint64_t segment_size, uint64_t lsn);
void seg_reader_close(seg_reader_t *r);

/*
 * Next record at r->lsn: on success returns its space (> 0), points *rec at
 * it (valid until the next call) and advances r->lsn. Returns REC_EMPTY at
 * the end of the log (or a missing segment), REC_TORN for a record that
 * fails its check, or -3 on an I/O error (errno set).
 */
int64_t seg_reader_next(seg_reader_t *r, const void **rec);

/*
 * After the log stops being valid at `end`: look for a valid record further
 * on (the rest of end's segment, then later segments) that proves `end` was
 * durable (rec_proven_durable() > end). Records are found by walking their
 * headers from known boundaries (`end`, each segment's start), so a client
 * value shaped like a record is never read as one; only garbage where a
 * header must be (damage) makes the rest of that segment be searched at
 * 32-byte steps (seg.c, segment_proof).
 * Returns 1 and its LSN in *at when found (damage in the middle of the log),
 * 0 when none (a torn tail), -1 on an I/O error. Records at LSNs in
 * *untrusted (NULL: none) prove nothing: their durable_gap is another
 * server's (a replica's shipped records, datadir.h DATADIR_SHIPPED, D56).
 */
typedef struct seg_untrusted {
    uint64_t from, to; /* [from, to) */
} seg_untrusted_t;
int seg_find_damage_proof(const char *dir, uint64_t segment_size, uint64_t end,
                          const seg_untrusted_t *untrusted, uint64_t *at);

#endif
