/*
 * copy.c - the replica's side of a full copy (docs/DECISIONS.md D50): the
 * leader's backup (its MANIFEST, then each file) written into this server's
 * `incoming/` directory, each file fdatasynced, the directory fsynced, the
 * MANIFEST last (common/fullcopy.h: the copy's marker), then checked as a
 * whole; the replication process then exits with EXIT_FULLCOPY and the
 * master restarts the server, whose start swaps the copy in.
 *
 * Run by: the replication process (receiver.c hands it the frames after
 * `+FULLCOPY`). Invariants: nothing outside incoming/ is touched; a file
 * name comes only from a MANIFEST that parsed (a checkpoint's or a
 * segment's name, no '/'); a frame that does not continue the file being
 * written drops the link. A crash here leaves an incoming/ without a
 * MANIFEST, which the next start removes (the old data stays), or a
 * complete one, which it swaps in (the fault point "replcopied").
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fullcopy.h"
#include "io.h"
#include "io_fault.h"
#include "log.h"
#include "repl/repl-internal.h"
#include "strutil.h"

void copy_begin(repl_proc_t *p)
{
    repl_copy_t *c = &p->recv.copy;
    memset(c, 0, sizeof(*c));
    c->fd = -1;
    atomic_store(&p->shm->repl.sync_total_bytes, 0);
    atomic_store(&p->shm->repl.sync_read_bytes, 0);
    atomic_store(&p->shm->repl.sync_in_progress, 1);
}

void copy_abort(repl_proc_t *p)
{
    repl_copy_t *c = &p->recv.copy;
    if (c->fd >= 0) io->close(c->fd);
    c->fd = -1;
    if (c->have_manifest) backup_manifest_free(&c->m);
    c->have_manifest = 0;
    atomic_store(&p->shm->repl.sync_in_progress, 0);
}

static void file_path(const repl_proc_t *p, const char *name, char *out, size_t n)
{
    char incoming[4096];
    fullcopy_path(incoming, sizeof(incoming), p->cfg->dir, 0);
    snprintf(out, n, "%s/%s", incoming, name);
}

/* Open the next file to write (skipping empty ones, each created). */
static int next_file(repl_proc_t *p, char *err, size_t errlen)
{
    repl_copy_t *c = &p->recv.copy;
    while (c->fd < 0 && c->file < c->m.nfiles) {
        char path[4200];
        file_path(p, c->m.files[c->file].name, path, sizeof(path));
        c->fd = io->open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (c->fd < 0) return str_fail(err, errlen, "can't create %s: %s", path, strerror(errno));
        c->off = 0;
        if (c->m.files[c->file].size) break;
        int rc = io->fdatasync(c->fd);
        io->close(c->fd);
        c->fd = -1;
        if (rc) return str_fail(err, errlen, "can't sync %s: %s", path, strerror(errno));
        c->file++;
    }
    return 0;
}

static int take_manifest(repl_proc_t *p, const repl_frame_t *f, const char *data, char *err,
                         size_t errlen)
{
    repl_copy_t *c = &p->recv.copy;
    char why[512], incoming[4096];
    if (c->have_manifest) return str_fail(err, errlen, "the leader sent a second MANIFEST");
    if (backup_manifest_parse(data, f->len, &c->m, why, sizeof(why)) != 0)
        return str_fail(err, errlen, "the leader's full copy has a bad MANIFEST: %s", why);
    c->have_manifest = 1;
    if (c->m.segment_size != p->cfg->segment_size || c->m.lsn != f->lsn)
        return str_fail(err, errlen, "the leader's full copy is of another segment size or LSN");
    /* An unfinished copy from an earlier attempt is never a copy. */
    fullcopy_path(incoming, sizeof(incoming), p->cfg->dir, 0);
    if (backup_remove_dir(incoming) || io->mkdir(incoming, 0755))
        return str_fail(err, errlen, "can't make %s: %s", incoming, strerror(errno));
    uint64_t total = 0;
    for (size_t i = 0; i < c->m.nfiles; i++)
        total += c->m.files[i].size;
    atomic_store(&p->shm->repl.sync_total_bytes, total);
    log_info("repl: receiving a full copy of the leader at LSN %" PRIu64 ": %zu files, %" PRIu64
             " bytes",
             c->m.lsn, c->m.nfiles, total);
    return next_file(p, err, errlen);
}

/* Every file is written: the directory, the MANIFEST, then a check of it
 * all. Returns 0 or -1 (err set; incoming/ removed). */
static int finish(repl_proc_t *p, char *err, size_t errlen)
{
    repl_copy_t *c = &p->recv.copy;
    char incoming[4096], why[512];
    fullcopy_path(incoming, sizeof(incoming), p->cfg->dir, 0);
    int rc = io_fsync_dir(incoming) || backup_manifest_write(incoming, &c->m) ||
             io_fsync_dir(p->cfg->dir);
    if (rc) snprintf(why, sizeof(why), "can't sync it: %s", strerror(errno));
    if (!rc && backup_verify(incoming, NULL, why, sizeof(why)) != 0) rc = -1;
    if (rc) {
        backup_remove_dir(incoming);
        return str_fail(err, errlen, "the full copy in %s is not usable: %s", incoming, why);
    }
    log_info("repl: the full copy at LSN %" PRIu64 " is complete in %s: restarting on it", c->m.lsn,
             incoming);
    /* Killed here, the whole server: its next start swaps the copy in. */
    if (io_fault_point(IO_FAULT_REPL_COPIED) == IO_FAULT_KILL) {
        kill(getppid(), SIGKILL);
        raise(SIGKILL);
    }
    p->exit_status = EXIT_FULLCOPY;
    return 0;
}

int copy_frame(repl_proc_t *p, const repl_frame_t *f, const char *data, char *err, size_t errlen)
{
    repl_copy_t *c = &p->recv.copy;
    if (f->kind == REPL_FRAME_PING) return 0;
    if (f->kind == REPL_FRAME_MANIFEST) {
        if (take_manifest(p, f, data, err, errlen)) return -1;
    } else if (f->kind != REPL_FRAME_FILE) {
        return str_fail(err, errlen, "the leader sent a frame of kind %u in a full copy", f->kind);
    } else {
        if (!c->have_manifest || c->fd < 0 || f->lsn != c->off ||
            f->len > c->m.files[c->file].size - c->off)
            return str_fail(err, errlen,
                            "the leader sent file bytes (%u at %" PRIu64
                            ") that do not continue its full copy",
                            f->len, f->lsn);
        if (io_pwrite_all(c->fd, data, f->len, (off_t)c->off))
            return str_fail(err, errlen, "can't write the full copy: %s", strerror(errno));
        c->off += f->len;
        atomic_fetch_add(&p->shm->repl.sync_read_bytes, f->len);
        if (c->off == c->m.files[c->file].size) {
            int rc = io->fdatasync(c->fd);
            io->close(c->fd);
            c->fd = -1;
            if (rc) return str_fail(err, errlen, "can't sync the full copy: %s", strerror(errno));
            c->file++;
            if (next_file(p, err, errlen)) return -1;
        }
    }
    if (c->file < c->m.nfiles) return 0;
    if (finish(p, err, errlen)) return -1;
    return 1;
}
