/*
 * backup.c - the backup format and its file work (backup.h): the MANIFEST,
 * copying with checksums, verifying, restoring. Run by the store's
 * checkpoint child (writing a backup, store/backup.c) and by
 * tools/atticdb-backup (verify, restore).
 *
 * Invariants:
 *   - A MANIFEST exists only in a directory whose every other file was
 *     complete and fdatasynced before it was written; it is itself written
 *     to a .tmp, synced and renamed. So a crash at any moment leaves either
 *     a directory without MANIFEST (never a backup) or a complete backup.
 *   - Nothing a restore writes is under datadir's name until every file is
 *     copied, synced and checked: a crash leaves only "<datadir>.restore".
 *   - All file I/O goes through the seam (io->...), so tests fail any step.
 */
#include "backup.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ckpt.h"
#include "crc32c.h"
#include "io.h"
#include "io_fault.h"
#include "strutil.h"

#define COPY_CHUNK (1u << 20)

void backup_dir_resolve(const config_t *cfg, char *out, size_t outlen)
{
    const char *bd = cfg->backup_dir && *cfg->backup_dir ? cfg->backup_dir : "backups";
    if (bd[0] == '/') {
        snprintf(out, outlen, "%s", bd);
        return;
    }
    char *abs = realpath(cfg->dir ? cfg->dir : ".", NULL);
    snprintf(out, outlen, "%s/%s", abs ? abs : cfg->dir ? cfg->dir : ".", bd);
    free(abs);
}

void backup_dir_path(char *out, size_t outlen, const char *dir, uint64_t lsn, int tmp)
{
    snprintf(out, outlen, "%s/backup-%016" PRIx64 "%s", dir, lsn, tmp ? ".tmp" : "");
}

int backup_manifest_add(backup_manifest_t *m, const char *name, uint64_t size, uint32_t crc)
{
    if (strlen(name) >= BACKUP_NAME_MAX) {
        errno = ENAMETOOLONG;
        return -1;
    }
    backup_file_t *f = realloc(m->files, (m->nfiles + 1) * sizeof(*f));
    if (!f) return -1;
    m->files = f;
    f = &m->files[m->nfiles++];
    memset(f, 0, sizeof(*f));
    strcpy(f->name, name);
    f->size = size;
    f->crc = crc;
    return 0;
}

void backup_manifest_free(backup_manifest_t *m)
{
    free(m->files);
    m->files = NULL;
    m->nfiles = 0;
}

void backup_manifest_format(const backup_manifest_t *m, buf_t *out)
{
    size_t start = out->len;
    buf_appendf(out,
                "AtticDB backup %d\nlsn %" PRIu64 "\nsegment-size %" PRIu64 "\ntime-ms %" PRId64
                "\nfiles %zu\n",
                BACKUP_VERSION, m->lsn, m->segment_size, m->time_ms, m->nfiles);
    for (size_t i = 0; i < m->nfiles; i++)
        buf_appendf(out, "%s %" PRIu64 " %08x\n", m->files[i].name, m->files[i].size,
                    m->files[i].crc);
    buf_appendf(out, "crc %08x\n", crc32c(0, out->data + start, out->len - start));
}

/* ---- parsing ------------------------------------------------------------ */

typedef struct line_reader {
    const char *p, *end;
    int n; /* lines read, for messages */
} line_reader_t;

/* The next line into out (without its '\n'). 0, or -1 at the end or for a
 * line without '\n', too long, or holding a NUL. */
static int next_line(line_reader_t *r, char *out, size_t outlen)
{
    const char *nl = memchr(r->p, '\n', (size_t)(r->end - r->p));
    if (!nl || (size_t)(nl - r->p) >= outlen || memchr(r->p, '\0', (size_t)(nl - r->p))) return -1;
    memcpy(out, r->p, (size_t)(nl - r->p));
    out[nl - r->p] = '\0';
    r->p = nl + 1;
    r->n++;
    return 0;
}

/* A decimal u64 with nothing else around it. */
static int parse_u64(const char *s, uint64_t *v)
{
    if (*s < '0' || *s > '9') return -1;
    char *end;
    errno = 0;
    unsigned long long x = strtoull(s, &end, 10);
    if (errno || *end) return -1;
    *v = x;
    return 0;
}

/* "<key> <decimal>" */
static int keyed_u64(const char *line, const char *key, uint64_t *v)
{
    size_t k = strlen(key);
    if (strncmp(line, key, k) != 0 || line[k] != ' ') return -1;
    return parse_u64(line + k + 1, v);
}

static int parse_hex32(const char *s, uint32_t *v)
{
    if (strlen(s) != 8) return -1;
    uint32_t x = 0;
    for (int i = 0; i < 8; i++) {
        int c = s[i], d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (d < 0) return -1;
        x = x << 4 | (uint32_t)d;
    }
    *v = x;
    return 0;
}

/* A file line: "<name> <size> <crc>". *kind 'c' (checkpoint) or 's'
 * (segment), *at its LSN. */
static int parse_file_line(char *line, backup_file_t *f, int *kind, uint64_t *at)
{
    char *sp1 = strchr(line, ' ');
    if (!sp1) return -1;
    *sp1 = '\0';
    char *sp2 = strchr(sp1 + 1, ' ');
    if (!sp2) return -1;
    *sp2 = '\0';
    if (strlen(line) >= BACKUP_NAME_MAX) return -1;
    if (parse_u64(sp1 + 1, &f->size) || parse_hex32(sp2 + 1, &f->crc)) return -1;
    unsigned long long lsn;
    int used = 0;
    if (strlen(line) == 28 + 4 && sscanf(line, "checkpoint-%16llx.ckpt%n", &lsn, &used) == 1 &&
        used == 32)
        *kind = 'c';
    else if (strlen(line) == 24 && sscanf(line, "log-%16llx.seg%n", &lsn, &used) == 1 && used == 24)
        *kind = 's';
    else
        return -1;
    /* sscanf's %llx takes a sign or "0x": only 16 lower-case hex digits are
     * a name the server would write. */
    for (const char *h = line + (*kind == 'c' ? 11 : 4), *e = h + 16; h < e; h++)
        if (!((*h >= '0' && *h <= '9') || (*h >= 'a' && *h <= 'f'))) return -1;
    strcpy(f->name, line);
    *at = lsn;
    return 0;
}

int backup_manifest_parse(const char *text, size_t len, backup_manifest_t *m, char *err,
                          size_t errlen)
{
    memset(m, 0, sizeof(*m));
    line_reader_t r = {text, text + len, 0};
    char line[256];
    uint64_t version, nfiles, time_ms;
    if (next_line(&r, line, sizeof(line)) || strncmp(line, "AtticDB backup ", 15) ||
        parse_u64(line + 15, &version))
        return str_fail(err, errlen, "not an AtticDB backup manifest");
    if (version != BACKUP_VERSION)
        return str_fail(err, errlen, "manifest version %" PRIu64 " (this tool reads %d)", version,
                        BACKUP_VERSION);
    if (next_line(&r, line, sizeof(line)) || keyed_u64(line, "lsn", &m->lsn) ||
        next_line(&r, line, sizeof(line)) || keyed_u64(line, "segment-size", &m->segment_size) ||
        next_line(&r, line, sizeof(line)) || keyed_u64(line, "time-ms", &time_ms) ||
        next_line(&r, line, sizeof(line)) || keyed_u64(line, "files", &nfiles))
        return str_fail(err, errlen, "manifest line %d is missing or malformed", r.n);
    m->time_ms = (int64_t)time_ms;
    if (m->segment_size == 0 || (m->segment_size & (m->segment_size - 1)))
        return str_fail(err, errlen, "segment size %" PRIu64 " is not a power of two",
                        m->segment_size);
    if (nfiles > (uint64_t)(r.end - r.p) / 8)
        return str_fail(err, errlen, "manifest names %" PRIu64 " files, more than it holds",
                        nfiles);
    int checkpoints = 0;
    uint64_t next_seg = 0, segs = 0;
    for (uint64_t i = 0; i < nfiles; i++) {
        backup_file_t f;
        int kind;
        uint64_t at;
        if (next_line(&r, line, sizeof(line)) || parse_file_line(line, &f, &kind, &at)) {
            backup_manifest_free(m);
            return str_fail(err, errlen, "manifest line %d is not a file of a backup", r.n);
        }
        const char *bad = NULL;
        if (kind == 'c' && (checkpoints++ || at != m->lsn))
            bad = "a second checkpoint, or one of another LSN";
        else if (kind == 's' && (at % m->segment_size || (segs && at != next_seg)))
            bad = "segments that are not contiguous";
        else if (kind == 's' && f.size != m->segment_size)
            bad = "a segment that is not segment-size bytes";
        if (kind == 's') next_seg = at + m->segment_size, segs++;
        if (!bad && backup_manifest_add(m, f.name, f.size, f.crc)) bad = "out of memory";
        if (bad) {
            backup_manifest_free(m);
            return str_fail(err, errlen, "manifest line %d: %s", r.n, bad);
        }
    }
    const char *crc_at = r.p;
    uint32_t crc;
    if (next_line(&r, line, sizeof(line)) || strncmp(line, "crc ", 4) ||
        parse_hex32(line + 4, &crc) || r.p != r.end) {
        backup_manifest_free(m);
        return str_fail(err, errlen, "manifest line %d: no final crc line, or bytes after it", r.n);
    }
    if (crc != crc32c(0, text, (size_t)(crc_at - text))) {
        backup_manifest_free(m);
        return str_fail(err, errlen, "manifest checksum mismatch");
    }
    const char *bad = NULL;
    if (!checkpoints)
        bad = "no checkpoint";
    else if (m->lsn == 0 ? segs != 0
                         : !segs || next_seg < m->lsn || next_seg - m->segment_size >= m->lsn)
        bad = "segments that do not end with the one holding the backup's LSN";
    if (bad) {
        backup_manifest_free(m);
        return str_fail(err, errlen, "manifest names %s", bad);
    }
    return 0;
}

/* ---- files -------------------------------------------------------------- */

/* dir/name; an empty string (which no open finds) when it does not fit. */
static void join(char *out, size_t outlen, const char *dir, const char *name)
{
    int n = snprintf(out, outlen, "%s/%s", dir, name);
    if (n < 0 || (size_t)n >= outlen) out[0] = '\0';
}

int backup_manifest_write(const char *dir, const backup_manifest_t *m)
{
    char tmp[4096], final[4096];
    join(tmp, sizeof(tmp), dir, BACKUP_MANIFEST ".tmp");
    join(final, sizeof(final), dir, BACKUP_MANIFEST);
    buf_t b;
    buf_init(&b);
    backup_manifest_format(m, &b);
    int fd = io->open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int rc = fd < 0 ? -1 : 0;
    if (!rc) rc = io_pwrite_all(fd, b.data, b.len, 0);
    if (!rc) rc = io->fdatasync(fd);
    int e = errno;
    if (fd >= 0) io->close(fd);
    buf_free(&b);
    if (!rc && io_fault_point(IO_FAULT_BACKUP_MANIFEST) == IO_FAULT_KILL) raise(SIGKILL);
    if (!rc) rc = io->rename(tmp, final);
    if (rc) {
        e = errno;
        io->unlink(tmp);
        errno = e;
        return -1;
    }
    return io_fsync_dir(dir);
}

int backup_manifest_read(const char *dir, backup_manifest_t *m, char *err, size_t errlen)
{
    memset(m, 0, sizeof(*m));
    char path[4096];
    join(path, sizeof(path), dir, BACKUP_MANIFEST);
    struct stat st;
    if (io->stat(path, &st))
        return str_fail(err, errlen, "no %s in %s (%s): not a complete backup", BACKUP_MANIFEST,
                        dir, strerror(errno));
    if (st.st_size > BACKUP_MANIFEST_MAX)
        return str_fail(err, errlen, "%s is too large to be a manifest", path);
    int fd = io->open(path, O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0) return str_fail(err, errlen, "cannot open %s: %s", path, strerror(errno));
    size_t len = (size_t)st.st_size;
    char *text = malloc(len ? len : 1);
    int rc = text ? io_pread_all(fd, text, len, 0) : -1;
    int e = errno;
    io->close(fd);
    if (rc) {
        free(text);
        return str_fail(err, errlen, "cannot read %s: %s", path, strerror(e));
    }
    rc = backup_manifest_parse(text, len, m, err, errlen);
    free(text);
    return rc;
}

int backup_copy_file(const char *src, const char *dst, uint64_t limit, uint64_t size,
                     uint64_t *out_size, uint32_t *crc)
{
    int in = io->open(src, O_RDONLY | O_CLOEXEC, 0);
    if (in < 0) return -1;
    int out = io->open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (out < 0) {
        int e = errno;
        io->close(in);
        errno = e;
        return -1;
    }
    char *buf = malloc(COPY_CHUNK);
    uint32_t c = 0;
    uint64_t off = 0;
    int rc = buf ? 0 : -1;
    /* The copied part: until limit or the source's end. */
    while (!rc && off < limit) {
        size_t want = limit - off < COPY_CHUNK ? (size_t)(limit - off) : COPY_CHUNK;
        ssize_t n = io->pread(in, buf, want, (off_t)off);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) rc = -1;
        if (n <= 0) break;
        rc = io_pwrite_all(out, buf, (size_t)n, (off_t)off);
        c = crc32c(c, buf, (size_t)n);
        off += (uint64_t)n;
    }
    /* Zeros written, not a hole: a segment is pre-allocated (D5). */
    if (!rc && off < size) memset(buf, 0, COPY_CHUNK);
    while (!rc && off < size) {
        size_t n = size - off < COPY_CHUNK ? (size_t)(size - off) : COPY_CHUNK;
        rc = io_pwrite_all(out, buf, n, (off_t)off);
        c = crc32c(c, buf, n);
        off += n;
    }
    if (!rc) rc = io->fdatasync(out);
    int e = errno;
    free(buf);
    io->close(in);
    if (io->close(out) && !rc) rc = -1, e = errno;
    if (rc) {
        io->unlink(dst);
        errno = e;
        return -1;
    }
    *crc = c;
    *out_size = off;
    return 0;
}

int backup_file_crc(const char *path, uint64_t *size, uint32_t *crc)
{
    int fd = io->open(path, O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0) return -1;
    char *buf = malloc(COPY_CHUNK);
    uint32_t c = 0;
    uint64_t off = 0;
    int rc = buf ? 0 : -1;
    while (!rc) {
        ssize_t n = io->pread(fd, buf, COPY_CHUNK, (off_t)off);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) rc = -1;
        if (n <= 0) break;
        c = crc32c(c, buf, (size_t)n);
        off += (uint64_t)n;
    }
    int e = errno;
    free(buf);
    io->close(fd);
    if (rc) {
        errno = e;
        return -1;
    }
    *size = off;
    *crc = c;
    return 0;
}

int backup_remove_dir(const char *path)
{
    DIR *d = io->opendir(path);
    if (!d) return errno == ENOENT ? 0 : -1;
    struct dirent *e;
    char p[4096];
    int rc = 0;
    while ((e = io->readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        join(p, sizeof(p), path, e->d_name);
        if (io->unlink(p) && errno != ENOENT) rc = -1;
    }
    io->closedir(d);
    if (rmdir(path) && errno != ENOENT) rc = -1;
    return rc;
}

/* Every file of m in dir has its size and CRC. */
static int check_files(const char *dir, const backup_manifest_t *m, char *err, size_t errlen)
{
    for (size_t i = 0; i < m->nfiles; i++) {
        const backup_file_t *f = &m->files[i];
        char path[4096];
        join(path, sizeof(path), dir, f->name);
        uint64_t size;
        uint32_t crc;
        if (backup_file_crc(path, &size, &crc))
            return str_fail(err, errlen, "cannot read %s: %s", path, strerror(errno));
        if (size != f->size || crc != f->crc)
            return str_fail(err, errlen,
                            "%s is damaged: %" PRIu64 " bytes, CRC32C %08x; the manifest says "
                            "%" PRIu64 " bytes, %08x",
                            path, size, crc, f->size, f->crc);
    }
    return 0;
}

int backup_verify(const char *dir, backup_manifest_t *out, char *err, size_t errlen)
{
    backup_manifest_t m;
    if (backup_manifest_read(dir, &m, err, errlen)) return -1;
    int rc = check_files(dir, &m, err, errlen);
    for (size_t i = 0; !rc && i < m.nfiles; i++) {
        if (strncmp(m.files[i].name, "checkpoint-", 11)) continue;
        char path[4096], why[256];
        ckpt_info_t info;
        join(path, sizeof(path), dir, m.files[i].name);
        if (ckpt_verify(path, m.segment_size, &info, NULL, why, sizeof(why)))
            rc = str_fail(err, errlen, "%s does not verify: %s", path, why);
        else if (info.lsn != m.lsn)
            rc = str_fail(err, errlen, "%s is at LSN %" PRIu64 ", the manifest says %" PRIu64, path,
                          info.lsn, m.lsn);
    }
    if (rc || !out)
        backup_manifest_free(&m);
    else
        *out = m;
    return rc;
}

/* datadir absent (1), an empty directory (0), or anything else (-1). */
static int datadir_state(const char *datadir)
{
    struct stat st;
    if (io->stat(datadir, &st)) return errno == ENOENT ? 1 : -1;
    if (!S_ISDIR(st.st_mode)) return -1;
    DIR *d = io->opendir(datadir);
    if (!d) return -1;
    struct dirent *e;
    int empty = 1;
    while ((e = io->readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) empty = 0;
    io->closedir(d);
    return empty ? 0 : -1;
}

int backup_restore(const char *dir, const char *target, char *err, size_t errlen)
{
    /* "d/" would put d.restore inside d: the name without its slashes. */
    char datadir[4096];
    snprintf(datadir, sizeof(datadir), "%s", target);
    for (size_t n = strlen(datadir); n > 1 && datadir[n - 1] == '/'; n--)
        datadir[n - 1] = '\0';
    int state = datadir_state(datadir);
    if (state < 0)
        return str_fail(err, errlen,
                        "%s exists and is not an empty directory: restore only "
                        "makes a new data directory",
                        datadir);
    backup_manifest_t m;
    if (backup_verify(dir, &m, err, errlen)) return -1;
    char tmp[4096];
    snprintf(tmp, sizeof(tmp), "%s.restore", datadir);
    int rc = 0;
    if (backup_remove_dir(tmp) || io->mkdir(tmp, 0755))
        rc = str_fail(err, errlen, "cannot make %s: %s", tmp, strerror(errno));
    for (size_t i = 0; !rc && i < m.nfiles; i++) {
        char src[4096], dst[4096];
        join(src, sizeof(src), dir, m.files[i].name);
        join(dst, sizeof(dst), tmp, m.files[i].name);
        uint64_t size;
        uint32_t crc;
        if (backup_copy_file(src, dst, UINT64_MAX, 0, &size, &crc))
            rc = str_fail(err, errlen, "cannot copy %s to %s: %s", src, dst, strerror(errno));
        else if (size != m.files[i].size || crc != m.files[i].crc)
            rc = str_fail(err, errlen, "%s changed while it was copied", src);
    }
    if (!rc && io_fsync_dir(tmp))
        rc = str_fail(err, errlen, "cannot fsync %s: %s", tmp, strerror(errno));
    if (!rc && io_fault_point(IO_FAULT_RESTORE_COPIED) == IO_FAULT_KILL) raise(SIGKILL);
    if (!rc && state == 0 && rmdir(datadir))
        rc = str_fail(err, errlen, "cannot replace the empty %s: %s", datadir, strerror(errno));
    if (!rc && io->rename(tmp, datadir))
        rc = str_fail(err, errlen, "cannot rename %s to %s: %s", tmp, datadir, strerror(errno));
    if (!rc) {
        char *copy = strdup(datadir);
        if (!copy || io_fsync_dir(dirname(copy)))
            rc = str_fail(err, errlen, "cannot fsync the parent of %s: %s", datadir,
                          strerror(errno));
        free(copy);
    }
    backup_manifest_free(&m);
    return rc;
}
