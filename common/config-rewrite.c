/*
 * config-rewrite.c - CONFIG REWRITE's file work (config.h,
 * config_rewrite): put the running values of the settings CONFIG SET can
 * change back into the file the server was started with. Run by the
 * frontend that got the command; the file is not the data directory, so
 * plain system calls, not the I/O seam (common/io.h).
 *
 * What changes, as Redis does it: a line whose setting now has another
 * value is replaced by "name value" in place; the same setting's later
 * lines are dropped (the loader takes the last one, which would undo the
 * change); a setting the file does not name and whose value is no longer
 * the default is appended. Every other line (comments, blank lines, the
 * settings CONFIG SET can't change, `user` lines, unknown text) stays
 * byte for byte, in its order. A line that already says the running value
 * in other words (512mb for 536870912) stays as written.
 *
 * Crash safety: the new text goes to a temporary file in the same
 * directory, which is fsynced, renamed over the old name, and the directory
 * fsynced; a crash at any point leaves the old file or the new one whole.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "strutil.h"

/* Does the setting's value in c read the same as in d? */
static int same_value(const config_t *c, const config_t *d, const config_entry_t *e)
{
    buf_t a, b;
    buf_init(&a);
    buf_init(&b);
    config_format(c, e, &a);
    config_format(d, e, &b);
    /* An empty value (cluster-announce-ip unset) has no bytes at all. */
    int same = a.len == b.len && (!a.len || !memcmp(a.data, b.data, a.len));
    buf_free(&a);
    buf_free(&b);
    return same;
}

/* The settings the rewrite owns: those CONFIG SET can change. */
static int rewritten(const config_entry_t *e)
{
    return (e->flags & CONFIG_MUTABLE) && !(e->flags & CONFIG_FILE_ONLY) &&
           e->type != CONFIG_IGNORED;
}

/* "name value" as the file should say it: sizes with Redis' units when
 * they divide evenly, a value that is empty or holds a blank or a quote
 * in quotes (the loader takes "..." and '...', with no escapes). */
static void render_line(const config_t *c, const config_entry_t *e, buf_t *out)
{
    buf_t v;
    buf_init(&v);
    config_format(c, e, &v);
    buf_appendf(out, "%s ", e->name);
    if (e->type == CONFIG_MEMORY) {
        unsigned long long n = strtoull(v.len ? v.data : "0", NULL, 10);
        static const char *const units[] = {"gb", "mb", "kb"};
        static const unsigned long long muls[] = {1ull << 30, 1ull << 20, 1ull << 10};
        int done = 0;
        for (int i = 0; i < 3 && !done; i++)
            if (n && n % muls[i] == 0) {
                buf_appendf(out, "%llu%s", n / muls[i], units[i]);
                done = 1;
            }
        if (!done) buf_appendf(out, "%llu", n);
    } else if (e->flags & CONFIG_WORDS) {
        buf_append(out, v.data, v.len);
    } else {
        int plain = v.len > 0;
        for (size_t i = 0; i < v.len && plain; i++)
            plain = v.data[i] != ' ' && v.data[i] != '\t' && v.data[i] != '"' &&
                    v.data[i] != '\'' && v.data[i] != '#';
        char q = memchr(v.data, '"', v.len) ? '\'' : '"';
        if (plain)
            buf_append(out, v.data, v.len);
        else
            buf_appendf(out, "%c%.*s%c", q, (int)v.len, v.data, q);
    }
    buf_append(out, "\n", 1);
    buf_free(&v);
}

/* The entry a line sets (its first word), or NULL; its words parsed into a
 * defaults copy in *as_read when it is one of the rewritten settings. */
static const config_entry_t *line_setting(const char *line, config_t *as_read, int *parsed)
{
    char copy[8192];
    *parsed = 0;
    size_t n = strlen(line);
    if (n >= sizeof(copy)) return NULL;
    memcpy(copy, line, n + 1);
    char *words[64];
    int nw = config_split_words(copy, words, 64);
    if (nw <= 0) return NULL;
    const config_entry_t *e = config_find(words[0], strlen(words[0]));
    if (!e || !rewritten(e)) return e;
    char err[256];
    config_defaults(as_read);
    *parsed = config_set(as_read, words[0], nw - 1, words + 1, err, sizeof(err)) == 0;
    return e;
}

static int write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Write text to path crash-safely (the banner). 0, or -1 with errno. */
static int replace_file(const char *path, const buf_t *text, mode_t mode)
{
    char tmp[4200];
    snprintf(tmp, sizeof(tmp), "%s.rewrite-%d.tmp", path, (int)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode & 07777);
    if (fd < 0) return -1;
    if (write_all(fd, text->data, text->len) != 0 || fchmod(fd, mode & 07777) != 0 ||
        fsync(fd) != 0) {
        int saved = errno;
        close(fd);
        unlink(tmp);
        errno = saved;
        return -1;
    }
    if (close(fd) != 0 || rename(tmp, path) != 0) {
        int saved = errno;
        unlink(tmp);
        errno = saved;
        return -1;
    }
    char dir[4200];
    snprintf(dir, sizeof(dir), "%s", path);
    int dfd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) return -1;
    int rc = fsync(dfd);
    int saved = errno;
    close(dfd);
    errno = saved;
    return rc;
}

int config_rewrite(const char *path, const config_t *cur, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f) return str_fail(err, errlen, "%s", strerror(errno));
    struct stat st;
    if (fstat(fileno(f), &st) != 0) {
        int saved = errno;
        fclose(f);
        return str_fail(err, errlen, "%s", strerror(saved));
    }
    config_t dflt;
    config_defaults(&dflt);
    char seen[256] = {0}; /* by table position: a line of the setting was written */
    buf_t out;
    buf_init(&out);
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    while ((n = getline(&line, &cap, f)) > 0) {
        config_t as_read;
        int parsed;
        const config_entry_t *e = line_setting(line, &as_read, &parsed);
        if (!e || !rewritten(e)) {
            buf_append(&out, line, (size_t)n);
            continue;
        }
        size_t pos = 0;
        while (config_entry_at(pos) != e)
            pos++;
        if (!seen[pos]) {
            seen[pos] = 1;
            if (parsed && same_value(&as_read, cur, e)) {
                buf_append(&out, line, (size_t)n);
                if (line[n - 1] != '\n') buf_append(&out, "\n", 1);
            } else {
                render_line(cur, e, &out);
            }
        }
        config_free(&as_read); /* line_setting filled it for a rewritten setting */
    }
    free(line);
    int read_error = ferror(f);
    fclose(f);
    if (read_error) {
        config_free(&dflt);
        buf_free(&out);
        return str_fail(err, errlen, "can't read %s", path);
    }
    int header = 0;
    const config_entry_t *e;
    for (size_t i = 0; (e = config_entry_at(i)) && i < sizeof(seen); i++) {
        if (!rewritten(e) || seen[i] || same_value(cur, &dflt, e)) continue;
        if (!header) {
            if (out.len && out.data[out.len - 1] != '\n') buf_append(&out, "\n", 1);
            buf_appendf(&out, "# Generated by CONFIG REWRITE\n");
            header = 1;
        }
        render_line(cur, e, &out);
    }
    config_free(&dflt);
    int rc = replace_file(path, &out, st.st_mode);
    int saved = errno;
    buf_free(&out);
    if (rc != 0) return str_fail(err, errlen, "%s", strerror(saved));
    return 0;
}
