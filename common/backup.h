/*
 * backup.h - backups of a data directory (docs/DECISIONS.md, D38): the
 * MANIFEST that says a backup is complete, copying files with their
 * checksums, verifying a backup, and turning one into a new data directory.
 * Shared by the store (store/backup.c writes backups from its checkpoint
 * child) and tools/atticdb-backup (verify, restore); neither knows the
 * other's code.
 *
 * A backup is a directory holding a checkpoint at LSN X (ckpt.h), the log
 * segments from the one holding the lowest LSN the checkpoint refers to up
 * to the one holding X's last record, the last one copied only up to X and
 * zero after it, and a MANIFEST, written last (MANIFEST.tmp, fdatasynced,
 * renamed, the directory fsynced). The MANIFEST is text, one item a line:
 *
 *   AtticDB backup 1
 *   lsn <X>
 *   segment-size <bytes>
 *   time-ms <unix ms when the backup was asked for>
 *   files <n>
 *   <name> <size> <CRC32C of the file, 8 hex digits>      (n lines)
 *   crc <CRC32C of every byte before this line, 8 hex digits>
 *
 * A directory without a MANIFEST that parses and checks (the rules in
 * backup_manifest_parse) is not a backup, whatever else is in it: every
 * interrupted backup is such a directory.
 */
#ifndef ATTIC_BACKUP_H
#define ATTIC_BACKUP_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "config.h"

#define BACKUP_MANIFEST     "MANIFEST"
#define BACKUP_VERSION      1
#define BACKUP_NAME_MAX     64
#define BACKUP_MANIFEST_MAX (1u << 20) /* a longer file is refused */

typedef struct backup_file {
    char name[BACKUP_NAME_MAX]; /* checkpoint-<X>.ckpt or log-<start>.seg, no '/' */
    uint64_t size;
    uint32_t crc;
} backup_file_t;

typedef struct backup_manifest {
    uint64_t lsn;
    uint64_t segment_size;
    int64_t time_ms;
    size_t nfiles;
    backup_file_t *files; /* allocated: backup_manifest_free */
} backup_manifest_t;

/* Where cfg's backups go: backup-dir, a relative one taken from dir (made
 * absolute when dir exists). */
void backup_dir_resolve(const config_t *cfg, char *out, size_t outlen);

/* "<dir>/backup-<lsn as %016llx>", or with ".tmp" appended when tmp. */
void backup_dir_path(char *out, size_t outlen, const char *dir, uint64_t lsn, int tmp);

/* Add a file to m. Returns 0, or -1 (ENOMEM, or ENAMETOOLONG). */
int backup_manifest_add(backup_manifest_t *m, const char *name, uint64_t size, uint32_t crc);
void backup_manifest_free(backup_manifest_t *m);

/* The MANIFEST text of m, appended to out. */
void backup_manifest_format(const backup_manifest_t *m, buf_t *out);

/*
 * Parse and check a MANIFEST's text. Refused (-1, the reason in err): a
 * wrong first line or version, a missing, repeated or malformed line, a
 * final crc that does not match, bytes after it; a file name that is not a
 * checkpoint's or a segment's; not exactly one checkpoint, or one of
 * another LSN; segments not of segment-size bytes, not contiguous, or not
 * ending with the one that holds X's last record (none when X is 0). On
 * success (0) m holds the manifest (free it).
 */
int backup_manifest_parse(const char *text, size_t len, backup_manifest_t *m, char *err,
                          size_t errlen);

/* Write m as dir/MANIFEST: MANIFEST.tmp, fdatasync, the fault point
 * "backupmanifest" (written and synced, not renamed), rename, fsync of dir.
 * Returns 0 or -1 with errno set (the .tmp removed when possible). */
int backup_manifest_write(const char *dir, const backup_manifest_t *m);

/* Read and parse dir/MANIFEST (backup_manifest_parse's rules). */
int backup_manifest_read(const char *dir, backup_manifest_t *m, char *err, size_t errlen);

/*
 * Copy src to dst (created, must not exist): the first `limit` bytes of src
 * (all of them when src is shorter), then zeros up to `size` bytes when size
 * is larger (size 0: only what was copied); fdatasync; close. *crc gets the
 * CRC32C of what dst holds, *out_size its size. Returns 0, or -1 with errno
 * set (dst removed). Through the I/O seam.
 */
int backup_copy_file(const char *src, const char *dst, uint64_t limit, uint64_t size,
                     uint64_t *out_size, uint32_t *crc);

/* CRC32C and size of a whole file. Returns 0 or -1 with errno. */
int backup_file_crc(const char *path, uint64_t *size, uint32_t *crc);

/* Remove a directory of plain files and the directory itself (a backup
 * that was never finished). Returns 0, or -1 with errno (ENOENT is 0). */
int backup_remove_dir(const char *path);

/*
 * Check the backup in dir: its MANIFEST (above), then every file it names:
 * present, of its size and CRC32C, and the checkpoint verifies as a whole
 * (ckpt_verify) at the manifest's LSN. Returns 0 (m filled in when not
 * NULL) or -1 with the reason in err.
 */
int backup_verify(const char *dir, backup_manifest_t *m, char *err, size_t errlen);

/*
 * Make a data directory of the backup in dir: verify it (above), copy every
 * file into "<datadir>.restore" (created; a stale one from an interrupted
 * restore is removed first), each fdatasynced and checked against its CRC
 * again, fsync it, the fault point "restorecopied", then rename it to
 * datadir and fsync datadir's parent. datadir must not exist, or be an
 * empty directory. A restore interrupted at any step leaves datadir as it
 * was (absent or empty) and at most the ".restore" directory, which no
 * server uses. Returns 0 or -1 with the reason in err.
 */
int backup_restore(const char *dir, const char *datadir, char *err, size_t errlen);

#endif
