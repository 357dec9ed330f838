/*
 * store_harness.c - see store_harness.h: the miniature logger of the
 * store's unit tests.
 */
#include "store_harness.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "command.h"
#include "record.h"
#include "seg.h"
#include "store/digest.h"

char dir[256];
config_t cfg;
store_ctx_t *ctx;
uint64_t lsn;
int seg_fd = -1;
unsigned char *log_copy;
size_t log_len;
buf_t live_replies;
char reply[1 << 21];
size_t reply_len;
int sh_canonical_only;
void (*sh_before_put)(void);

static uint64_t seg_start = UINT64_MAX;
static size_t log_cap;

/* ---- the log ------------------------------------------------------------- */

void sh_write_log(const unsigned char *rec, uint32_t space)
{
    uint64_t start = lsn & ~(cfg.segment_size - 1);
    if (start != seg_start) {
        if (seg_fd >= 0) close(seg_fd);
        char path[512];
        seg_path(path, sizeof(path), dir, start);
        seg_fd = open(path, O_RDWR | O_CREAT, 0644);
        cr_assert_geq(seg_fd, 0, "open %s: %s", path, strerror(errno));
        cr_assert_eq(ftruncate(seg_fd, (off_t)cfg.segment_size), 0);
        seg_start = start;
    }
    cr_assert_eq(pwrite(seg_fd, rec, space, (off_t)(lsn - start)), (ssize_t)space);
    if (log_len + space > log_cap) {
        log_cap = (log_len + space) * 2;
        log_copy = realloc(log_copy, log_cap);
        cr_assert(log_copy);
    }
    memcpy(log_copy + log_len, rec, space);
    log_len += space;
}

static void keep_reply(const buf_t *b)
{
    cr_assert_lt(b->len, sizeof(reply));
    if (b->len) memcpy(reply, b->data, b->len); /* an empty buf has no data */
    reply[b->len] = 0;
    reply_len = b->len;
}

const char *sh_put(int64_t t, uint16_t opdb, uint16_t argc, const unsigned char *const *argv,
                   const uint32_t *lens)
{
    uint32_t space = rec_space((uint32_t)rec_cmd_payload_size(argc, lens));
    uint64_t end = (lsn & ~(cfg.segment_size - 1)) + cfg.segment_size;
    if (lsn + space > end) { /* no record crosses a segment: pad, as the ring does */
        unsigned char *pad = aligned_alloc(REC_ALIGN, end - lsn);
        rec_write_pad(pad, lsn, (uint32_t)(end - lsn));
        sh_write_log(pad, (uint32_t)(end - lsn));
        cr_assert_eq(store_apply(ctx, pad, NULL), 0);
        free(pad);
        lsn = end;
    }
    if (sh_before_put) sh_before_put();
    unsigned char *rec = aligned_alloc(REC_ALIGN, space);
    rec_encode_cmd(rec, lsn, 1, t, opdb, argc, argv, lens);
    rec_publish(rec, lsn);
    cr_assert_eq(rec_check(rec, lsn, space), space);
    sh_write_log(rec, space);
    buf_t b;
    buf_init(&b);
    int rc = store_apply(ctx, rec, &b);
    if (sh_canonical_only)
        cr_assert_eq(rc, 0);
    else
        cr_assert_geq(rc, 0);
    /* Poison the record: values must come back from the segment file. */
    memset(rec, 0xAA, space);
    free(rec);
    lsn += space;
    cr_assert_eq(store_applied(ctx), lsn);
    keep_reply(&b);
    buf_append(&live_replies, b.data, b.len);
    buf_free(&b);
    return reply;
}

store_ctx_t *sh_replay(store_ctx_t *c, buf_t *all)
{
    return sh_replay_from(c, 0, all);
}

store_ctx_t *sh_replay_from(store_ctx_t *c, uint64_t from, buf_t *all)
{
    cr_assert(c);
    for (size_t off = (size_t)from; off < log_len;) {
        const unsigned char *rec = log_copy + off;
        rec_hdr_t h;
        memcpy(&h, rec, sizeof(h));
        cr_assert_geq(store_apply(c, rec, all), 0);
        off += rec_space(h.len - REC_HDR_SIZE);
    }
    return c;
}

void sh_check_replay(const char *what)
{
    buf_t again;
    buf_init(&again);
    store_ctx_t *quiet = sh_replay(store_ctx_create(&cfg, 7), NULL);
    store_ctx_t *loud = sh_replay(store_ctx_create(&cfg, 9), &again);
    uint64_t d0, d1, d2;
    int64_t now = store_now(ctx);
    cr_assert_eq(store_digest(ctx, now, &d0), 0);
    cr_assert_eq(store_digest(quiet, now, &d1), 0);
    cr_assert_eq(store_digest(loud, now, &d2), 0);
    cr_assert_eq(d0, d1, "a silent replay rebuilds the same %s", what);
    cr_assert_eq(d0, d2, "a replay with replies rebuilds the same %s", what);
    size_t k = 0;
    while (k < again.len && k < live_replies.len && again.data[k] == live_replies.data[k])
        k++;
    if (k < live_replies.len || k < again.len)
        fprintf(stderr, "replies differ at byte %zu: live '%.60s' replay '%.60s'\n", k,
                live_replies.data + (k > 20 ? k - 20 : 0), again.data + (k > 20 ? k - 20 : 0));
    cr_assert_eq(again.len, live_replies.len, "%s: replayed replies as long as live ones", what);
    cr_assert(memcmp(again.data, live_replies.data, live_replies.len) == 0,
              "%s: replayed replies equal live ones", what);
    store_ctx_destroy(quiet);
    store_ctx_destroy(loud);
    buf_free(&again);
}

const char *sh_read(int64_t now, unsigned db, uint16_t op, uint16_t argc,
                    const unsigned char *const *argv, const uint32_t *lens)
{
    static unsigned char p[1 << 16];
    cr_assert_leq(rec_cmd_payload_size(argc, lens), sizeof(p));
    size_t n = rec_encode_payload(p, op, argc, argv, lens);
    buf_t b;
    buf_init(&b);
    /* store_read_at is store_read_db in database 0 */
    if (db == 0)
        cr_assert_eq(store_read_at(ctx, p, n, now, &b), 0);
    else
        cr_assert_eq(store_read_db(ctx, db, p, n, now, &b), 0);
    keep_reply(&b);
    buf_free(&b);
    return reply;
}

/* ---- arguments ------------------------------------------------------------ */

void sh_collect(sh_args_t *x, va_list ap)
{
    const char *s;
    x->argc = 0;
    while ((s = va_arg(ap, const char *)) != NULL) {
        cr_assert_lt(x->argc, 64);
        uint16_t i = x->argc++;
        if (strncmp(s, "#u32:", 5) == 0) {
            cmd_put_u32(x->ints[i], (uint32_t)strtoul(s + 5, NULL, 10));
            x->argv[i] = x->ints[i];
            x->lens[i] = 4;
        } else if (strncmp(s, "#i64:", 5) == 0) {
            cmd_put_i64(x->ints[i], strtoll(s + 5, NULL, 10));
            x->argv[i] = x->ints[i];
            x->lens[i] = 8;
        } else {
            x->argv[i] = (const unsigned char *)s;
            x->lens[i] = (uint32_t)strlen(s);
        }
    }
}

const char *sh_wr(int64_t t, uint16_t opdb, ...)
{
    sh_args_t x;
    va_list ap;
    va_start(ap, opdb);
    sh_collect(&x, ap);
    va_end(ap);
    return sh_put(t, opdb, x.argc, x.argv, x.lens);
}

const char *sh_rd(int64_t now, unsigned db, uint16_t op, ...)
{
    sh_args_t x;
    va_list ap;
    va_start(ap, op);
    sh_collect(&x, ap);
    va_end(ap);
    return sh_read(now, db, op, x.argc, x.argv, x.lens);
}

static void key_args(sh_args_t *x, const char *key, const char *fmt, va_list ap)
{
    x->argv[0] = (const unsigned char *)key;
    x->lens[0] = (uint32_t)strlen(key);
    x->argc = 1;
    for (const char *f = fmt; *f; f++) {
        cr_assert_lt(x->argc, 64);
        uint16_t i = x->argc++;
        if (*f == 'u') {
            cmd_put_u32(x->ints[i], va_arg(ap, uint32_t));
            x->argv[i] = x->ints[i];
            x->lens[i] = 4;
        } else if (*f == 'i') {
            cmd_put_i64(x->ints[i], va_arg(ap, int64_t));
            x->argv[i] = x->ints[i];
            x->lens[i] = 8;
        } else {
            cr_assert_eq(*f, 'b', "sh_key_args: %s", fmt);
            x->argv[i] = va_arg(ap, const unsigned char *);
            x->lens[i] = (uint32_t)va_arg(ap, size_t);
        }
    }
}

void sh_key_args(sh_args_t *x, const char *key, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    key_args(x, key, fmt, ap);
    va_end(ap);
}

const char *sh_put_key(int64_t t, uint16_t opdb, const char *key, const char *fmt, ...)
{
    sh_args_t x;
    va_list ap;
    va_start(ap, fmt);
    key_args(&x, key, fmt, ap);
    va_end(ap);
    return sh_put(t, opdb, x.argc, x.argv, x.lens);
}

/* ---- setup ---------------------------------------------------------------- */

void sh_new_store(uint64_t segment_size, int databases, uint64_t seed)
{
    if (ctx) store_ctx_destroy(ctx);
    memset(&cfg, 0, sizeof(cfg));
    cfg.dir = dir;
    cfg.segment_size = segment_size;
    cfg.proto_max_bulk_len = 512ll << 20;
    cfg.databases = databases;
    cfg.list_max_listpack_size = -2; /* Redis' default (DUMP splits lists by it) */
    cfg.rdb_compression = 1;         /* Redis' default (DUMP compresses, D57) */
    ctx = store_ctx_create(&cfg, seed);
    cr_assert(ctx);
}

void sh_setup(const char *name, int databases, uint64_t seed)
{
    snprintf(dir, sizeof(dir), "/tmp/attic-%s-XXXXXX", name);
    cr_assert(mkdtemp(dir));
    lsn = 0;
    seg_fd = -1;
    seg_start = UINT64_MAX;
    log_len = 0;
    sh_canonical_only = 0;
    sh_before_put = NULL;
    buf_init(&live_replies);
    sh_new_store(1u << 20, databases, seed);
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

void sh_teardown(void)
{
    if (ctx) store_ctx_destroy(ctx);
    ctx = NULL;
    if (seg_fd >= 0) close(seg_fd);
    seg_fd = -1;
    seg_start = UINT64_MAX;
    free(log_copy);
    log_copy = NULL;
    log_len = log_cap = 0;
    lsn = 0;
    buf_free(&live_replies);
    nftw(dir, rm_one, 8, FTW_DEPTH | FTW_PHYS);
}
