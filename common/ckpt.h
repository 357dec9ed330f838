/*
 * ckpt.h - the checkpoint file format: naming, a writer that lays blocks
 * out with their checksums, and a reader that verifies them. Shared by the
 * store (store/checkpoint.c writes and loads checkpoints) and atticdb-check
 * (verifies them); neither knows the other's code. What goes into the blocks
 * (entries, the WATCH table) is store/checkpoint.c's business.
 *
 * A checkpoint is the store's state at one LSN X (everything below X
 * applied, nothing above): `checkpoint-<X as %016llx>.ckpt` in the data
 * directory, written as `checkpoint-<X>.tmp`, fdatasynced, renamed, and the
 * directory fsynced, all through the I/O seam (common/io.h). Layout, all
 * integers little-endian as in the log (record.h):
 *
 *   header   64 bytes: "ATTICCKP", u32 version (1), u32 header size (64),
 *            u64 segment size, u64 LSN, i64 apply clock, u64 keys, u32
 *            databases, u32 flags, u32 0, u32 CRC32C of the 60 bytes before
 *   blocks   each a 24-byte head: u32 type, u32 items, u64 payload bytes,
 *            u32 CRC32C of the head's first 16 bytes and the payload, u32 0;
 *            then the payload
 *   trailer  48 bytes: "ATTICEND", u64 LSN, u64 keys, u64 blocks, u64 the
 *            trailer's offset, u32 0, u32 CRC32C of every byte of the file
 *            before this field
 *
 * A file verifies only whole: a bad header, block or trailer CRC, a
 * trailer that disagrees with the header, a wrong segment size, or bytes
 * after the trailer make it invalid, and the store then uses an older one
 * or replays the whole log (docs/DECISIONS.md, D23).
 */
#ifndef ATTIC_CKPT_H
#define ATTIC_CKPT_H

#include <stddef.h>
#include <stdint.h>

#define CKPT_VERSION     1
#define CKPT_HEADER_SIZE 64u
#define CKPT_BLOCK_HEAD  24u
#define CKPT_TRAILER     48u
/* A block's payload is cut after the item that takes it past this (an item
 * is never split, so one large value makes one large block). */
#define CKPT_BLOCK_TARGET (1u << 20)

/* Block types (the payloads are store/checkpoint.c's banner). */
enum {
    CKPT_BLK_DB = 1,      /* starts a database: u32 number, u32 watch id, u64 keys */
    CKPT_BLK_ENTRIES = 2, /* entries of the database last started */
    CKPT_BLK_WATCH = 3,   /* the WATCH table's state, in pieces, concatenated */
    CKPT_BLK_MINREF = 4,  /* first, when CKPT_F_MINREF: u64 the lowest LSN any entry
                           * refers to (UINT64_MAX: none), so the store knows which
                           * log segments this checkpoint still needs (D27) */
    CKPT_BLK_BLOCKED = 5, /* the blocked clients' queues (store/core/block.c), in pieces,
                           * concatenated; after the WATCH blocks, only when some wait */
    CKPT_BLK_ACCESS = 6,  /* when CKPT_F_ACCESS, last: each key's access data (LRU clock or
                           * LFU counter, store/core/access.h), per item u32 database, u32
                           * key length, u32 the 24 bits, the key (D49) */
    CKPT_BLK_GROUPS = 7,  /* when CKPT_F_GROUPS, after the BLOCKED blocks: the pending value
                           * groups (store/core/groups.h), one item per group (D55) */
};

/* Header flags. */
#define CKPT_F_WATCH 1u /* the WATCH table exists (its blocks follow the databases) */
#define CKPT_F_MINREF                                                                              \
    2u /* a CKPT_BLK_MINREF block comes first (files without it:                                   \
        * the checkpoint may need any segment) */
#define CKPT_F_ACCESS                                                                              \
    4u /* CKPT_BLK_ACCESS blocks come last, one item per key (files                                \
        * without them: every key's access data starts afresh, D49) */
#define CKPT_F_GROUPS                                                                              \
    8u /* CKPT_BLK_GROUPS blocks follow the databases: value groups were pending                   \
        * (files without them: none was, D55) */

typedef struct ckpt_info {
    uint32_t version;
    uint64_t segment_size;
    uint64_t lsn;
    int64_t now;
    uint64_t keys;
    uint32_t ndb;
    uint32_t flags;
    uint64_t blocks;    /* from the trailer (reader: once verified) */
    uint64_t file_size; /* trailer offset + CKPT_TRAILER */
} ckpt_info_t;

/* "<dir>/checkpoint-<lsn>.ckpt", or ".tmp" when tmp is set. */
void ckpt_path(char *out, size_t outlen, const char *dir, uint64_t lsn, int tmp);

/* The LSNs of the finished checkpoints (.ckpt) in dir, ascending; *out is
 * allocated (free it). With tmp set, the LSNs of .tmp files instead.
 * Returns 0 or -1 with errno set. */
int ckpt_list(const char *dir, int tmp, uint64_t **out, size_t *n);

/* ---- writing ---- */

typedef struct ckpt_writer {
    int fd;
    char tmp[4096], final[4096];
    const char *dir;
    uint64_t off;       /* bytes written so far */
    uint32_t file_crc;  /* over those bytes */
    unsigned char *buf; /* the block being built: head, then payload */
    size_t len, cap;
    uint32_t type, items; /* of the block being built (type 0: none) */
    uint64_t blocks;
    int err; /* errno of a block write that failed in ckpt_put */
    ckpt_info_t info;
} ckpt_writer_t;

/* Create the .tmp file for info->lsn in dir (replacing a stale one) and
 * write the header. Returns 0, or -1 (errno set; nothing left behind). */
int ckpt_writer_open(ckpt_writer_t *w, const char *dir, const ckpt_info_t *info);
/* Append n bytes to the current block of this type (a new block begins
 * when the type changes). */
void ckpt_put(ckpt_writer_t *w, uint32_t type, const void *p, size_t n);
/* One item of the current block is complete: count it, and write the block
 * out once it passed CKPT_BLOCK_TARGET. Returns 0 or -1 (errno). */
int ckpt_item_done(ckpt_writer_t *w);
/* Write the current block out now (the next ckpt_put starts another). */
int ckpt_flush_block(ckpt_writer_t *w);
/* Write the trailer, fdatasync, rename to .ckpt, fsync the directory (with
 * the fault points "ckptwritten" and "ckptrenamed" between the steps).
 * Returns 0, or -1 (errno set; the .tmp removed when the rename had not
 * happened). Frees the writer's buffer either way. */
int ckpt_writer_commit(ckpt_writer_t *w);
/* Give up: close and remove the .tmp. */
void ckpt_writer_abort(ckpt_writer_t *w);

/* ---- reading ---- */

typedef struct ckpt_reader {
    int fd;
    uint64_t off, size;
    uint32_t file_crc;
    uint64_t blocks;
    unsigned char *buf;
    size_t cap;
    ckpt_info_t info;
    char err[256]; /* why the file is invalid */
} ckpt_reader_t;

/* Open path and check its header (segment_size 0: any). Returns 0, or -1
 * with the reason in r->err (the file is not usable). */
int ckpt_reader_open(ckpt_reader_t *r, const char *path, uint64_t segment_size);
/*
 * The next block: returns 1 with its type, items and payload (valid until
 * the next call), 0 at the trailer once the whole file verified, -1 when the
 * file is invalid (reason in r->err). Nothing read from a file is trusted
 * until 0 came back.
 */
int ckpt_reader_next(ckpt_reader_t *r, uint32_t *type, uint32_t *items, const unsigned char **p,
                     uint64_t *n);
void ckpt_reader_close(ckpt_reader_t *r);

/* ckpt_verify calling fn (when not NULL) with each block as it is read
 * (info: the header's); a block's payload is trusted only once the whole
 * file verified (0 returned). */
typedef void (*ckpt_block_fn)(void *arg, const ckpt_info_t *info, uint32_t type, uint32_t items,
                              const unsigned char *p, uint64_t n);
int ckpt_verify_each(const char *path, uint64_t segment_size, ckpt_info_t *info, ckpt_block_fn fn,
                     void *arg, char *err, size_t errlen);

/* ---- access data (CKPT_BLK_ACCESS) ---- */

#define CKPT_ACCESS_BITS_MAX 0xffffffu /* an item's bits: 24 (store/core/index.h) */

typedef struct ckpt_access_item {
    uint32_t db, klen, bits;
    const unsigned char *key; /* klen bytes, inside the payload */
} ckpt_access_item_t;

/* The next item of an ACCESS payload at *p (before end) in a file of ndb
 * databases: 0 with *it filled in and *p past the item, or -1 (nothing
 * moved) when the item is cut short, names a database past the last or
 * has bits past 24: what the store's loader and atticdb-check both refuse
 * as malformed access data (D49). The rest of the loader's checks need
 * the state: the key must be one the file holds, the blocks must follow
 * every database, and their items, with no bytes after the last, must be
 * one per key exactly when the header has CKPT_F_ACCESS. */
int ckpt_access_next(const unsigned char **p, const unsigned char *end, uint32_t ndb,
                     ckpt_access_item_t *it);

/* Read a whole file through: 0 when it verifies (info filled in, blocks
 * and items by type counted into items_by_type[0..3] when not NULL), -1
 * with the reason in err. */
int ckpt_verify(const char *path, uint64_t segment_size, ckpt_info_t *info,
                uint64_t items_by_type[4], char *err, size_t errlen);

#endif
