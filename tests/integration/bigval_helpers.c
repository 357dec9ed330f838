/*
 * bigval_helpers.c - the helpers of the large-value integration tests
 * (bigval_helpers.h says what each does). Runs in the test process; each
 * failure is a Criterion assertion of the test that called it.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bigval_helpers.h"

char *bv_pattern(size_t n, unsigned seed)
{
    char *p = malloc(n ? n : 1);
    cr_assert_not_null(p);
    uint32_t x = 2463534242u ^ seed;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        p[i] = (char)x;
    }
    return p;
}

redisContext *bv_conn(const srv_t *s)
{
    redisContext *c = srv_connect(s);
    cr_assert_not_null(c, "connect: %s", s->log);
    struct timeval tv = {120, 0};
    redisSetTimeout(c, tv);
    return c;
}

void bv_expect_status(redisContext *c, redisReply *r, const char *want, const char *what)
{
    cr_assert_not_null(r, "%s: no reply (%s)", what, c->errstr);
    cr_assert_eq(r->type, REDIS_REPLY_STATUS, "%s: type %d %s", what, r->type,
                 r->type == REDIS_REPLY_ERROR ? r->str : "");
    cr_assert_str_eq(r->str, want, "%s", what);
    freeReplyObject(r);
}

/* The reply of fmt, which must be of this type. */
static redisReply *typed_reply(redisContext *c, int type, const char *what, const char *fmt,
                               va_list ap)
{
    redisReply *r = redisvCommand(c, fmt, ap);
    cr_assert_not_null(r, "%s: no reply (%s)", what, c->errstr);
    cr_assert_eq(r->type, type, "%s: type %d %s", what, r->type,
                 r->type == REDIS_REPLY_ERROR ? r->str : "");
    return r;
}

long long bv_integer(redisContext *c, const char *what, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    redisReply *r = typed_reply(c, REDIS_REPLY_INTEGER, what, fmt, ap);
    va_end(ap);
    long long v = r->integer;
    freeReplyObject(r);
    return v;
}

void bv_expect_bulk(redisContext *c, const char *v, size_t n, const char *what, const char *fmt,
                    ...)
{
    va_list ap;
    va_start(ap, fmt);
    redisReply *r = typed_reply(c, REDIS_REPLY_STRING, what, fmt, ap);
    va_end(ap);
    cr_assert_eq(r->len, n, "%s: %zu bytes, want %zu", what, r->len, n);
    cr_assert(memcmp(r->str, v, n) == 0, "%s: the bytes differ", what);
    freeReplyObject(r);
}

void bv_expect_value(redisContext *c, const char *key, const char *v, size_t n, const char *what)
{
    bv_expect_bulk(c, v, n, what, "GET %s", key);
}

void bv_expect_error(redisContext *c, const char *want, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    redisReply *r = typed_reply(c, REDIS_REPLY_ERROR, fmt, fmt, ap);
    va_end(ap);
    cr_assert_str_eq(r->str, want, "%s", fmt);
    freeReplyObject(r);
}

void bv_digest(const srv_t *s, char out[64])
{
    redisContext *c = bv_conn(s);
    redisReply *r = redisCommand(c, "DEBUG DIGEST");
    cr_assert_not_null(r);
    cr_assert_eq(r->type, REDIS_REPLY_STATUS, "DEBUG DIGEST: %s", r->str);
    snprintf(out, 64, "%s", r->str);
    freeReplyObject(r);
    redisFree(c);
}

long long bv_live_total(const srv_t *s, const char *what)
{
    redisContext *c = bv_conn(s);
    redisReply *r = redisCommand(c, "DEBUG SEGMENTS");
    cr_assert_not_null(r);
    cr_assert_eq(r->type, REDIS_REPLY_ARRAY, "%s: DEBUG SEGMENTS: %s", what, r->str);
    cr_assert_eq(r->element[0]->integer, 1, "%s: the live table disagrees with a recount", what);
    long long total = r->element[1]->integer;
    freeReplyObject(r);
    redisFree(c);
    return total;
}

void bv_live_back_to(const srv_t *s, long long want, const char *what)
{
    time_t deadline = time(NULL) + 60;
    long long now;
    while ((now = bv_live_total(s, what)) != want) {
        cr_assert_lt(time(NULL), deadline, "%s: live bytes %lld, want %lld", what, now, want);
        usleep(50000);
    }
}

void bv_restarts_keep(srv_t *s, const char *what)
{
    char before[64], after[64];
    bv_digest(s, before);
    cr_assert_eq(srv_stop(s), 0, "%s: clean stop", what);
    cr_assert_eq(srv_restart(s), 0, "%s: restart", what);
    bv_digest(s, after);
    cr_assert_str_eq(after, before, "%s: digest after a clean restart", what);
    srv_kill_all(s);
    cr_assert_eq(srv_restart(s), 0, "%s: restart after SIGKILL", what);
    bv_digest(s, after);
    cr_assert_str_eq(after, before, "%s: digest after SIGKILL and restart", what);
    bv_live_total(s, what);
}

redisContext *bv_start_small(srv_t *s)
{
    cr_assert_eq(srv_start(s, BV_SMALL_RING), 0);
    return bv_conn(s);
}

void bv_finish(srv_t *s)
{
    srv_kill_all(s);
    srv_cleanup(s);
}

void bv_send_head(redisContext *c, int argc, const char *const *args, size_t n)
{
    char head[512];
    int hl = snprintf(head, sizeof(head), "*%d\r\n", argc);
    for (int i = 0; i < argc - 1; i++)
        hl += snprintf(head + hl, sizeof(head) - (size_t)hl, "$%zu\r\n%s\r\n", strlen(args[i]),
                       args[i]);
    hl += snprintf(head + hl, sizeof(head) - (size_t)hl, "$%zu\r\n", n);
    cr_assert_eq(write(c->fd, head, (size_t)hl), hl);
}

void bv_send_bytes(redisContext *c, const char *v, size_t vn, size_t from, size_t to)
{
    while (from < to) {
        size_t at = from % vn, n = vn - at < to - from ? vn - at : to - from;
        ssize_t w = write(c->fd, v + at, n);
        cr_assert_gt(w, 0, "write: the server closed the connection");
        from += (size_t)w;
    }
}

long bv_proc_kb(pid_t pid, const char *field)
{
    char path[64], line[256];
    snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "%s", path);
    long kb = -1;
    while (fgets(line, sizeof(line), f))
        if (strncmp(line, field, strlen(field)) == 0) kb = atol(line + strlen(field));
    fclose(f);
    cr_assert_geq(kb, 0, "%s has no %s", path, field);
    return kb;
}

pid_t bv_the_frontend(const srv_t *s)
{
    pid_t fe;
    cr_assert_eq(srv_wait_children(s, "atticdb-server: frontend", &fe, 1, 1), 1, "no frontend");
    return fe;
}

unsigned long long bv_newest_checkpoint(const srv_t *s)
{
    DIR *d = opendir(s->dir);
    cr_assert_not_null(d);
    unsigned long long newest = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        unsigned long long at;
        if (strlen(e->d_name) == 32 && sscanf(e->d_name, "checkpoint-%16llx.ckpt", &at) == 1 &&
            at > newest)
            newest = at;
    }
    closedir(d);
    return newest;
}

/* Remove every checkpoint file of the stopped s: its restart replays the
 * whole log. */
static void remove_checkpoints(const srv_t *s)
{
    unsigned long long at;
    while ((at = bv_newest_checkpoint(s)) != 0) {
        char path[512];
        snprintf(path, sizeof(path), "%s/checkpoint-%016llx.ckpt", s->dir, at);
        cr_assert_eq(unlink(path), 0, "%s", path);
    }
}

void bv_expect_replay_digest(srv_t *s, const char *what)
{
    char before[64], after[64];
    bv_digest(s, before);
    cr_assert_eq(srv_stop(s), 0, "%s: clean stop", what);
    remove_checkpoints(s);
    cr_assert_eq(srv_restart(s), 0, "%s: restart", what);
    bv_digest(s, after);
    cr_assert_str_eq(after, before, "%s: the state a replay of the whole log reaches", what);
}
