/*
 * paged_helpers.c - the helpers paged_helpers.h declares, for the
 * integration tests of collections in pages.
 */
#include "paged_helpers.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void ph_paged_stats(redisContext *c, const char *key, long long out[7])
{
    redisReply *r = redisCommand(c, "DEBUG PAGED %s", key);
    cr_assert(r && r->type == REDIS_REPLY_ARRAY && r->elements == 7, "DEBUG PAGED %s", key);
    for (int i = 0; i < 7; i++)
        out[i] = r->element[i]->integer;
    freeReplyObject(r);
}

void ph_digest(redisContext *c, char out[64])
{
    redisReply *r = redisCommand(c, "DEBUG DIGEST");
    cr_assert(r && r->type == REDIS_REPLY_STATUS, "DEBUG DIGEST");
    snprintf(out, 64, "%s", r->str);
    freeReplyObject(r);
}

void ph_same(wire_conn_t *a, wire_conn_t *b, const char *cmd)
{
    char *copy = strdup(cmd), *save = NULL;
    const char *argv[16];
    size_t lens[16];
    int argc = 0;
    for (char *w = strtok_r(copy, " ", &save); w && argc < 16; w = strtok_r(NULL, " ", &save)) {
        argv[argc] = w;
        lens[argc++] = strlen(w);
    }
    size_t la, lb;
    char *ra = wire_cmd(a, argc, argv, lens, &la), *rb = wire_cmd(b, argc, argv, lens, &lb);
    cr_assert(!wire_is_failure(ra), "%s: %s", cmd, ra);
    cr_assert(la == lb && memcmp(ra, rb, la) == 0, "%s: atticdb %.80s... redis %.80s...", cmd, ra,
              rb);
    free(ra);
    free(rb);
    free(copy);
}

void ph_same_each(wire_conn_t *a, wire_conn_t *b, const char *const *cmds, size_t n)
{
    for (size_t i = 0; i < n; i++)
        ph_same(a, b, cmds[i]);
}

redisContext *ph_write_until_store_killed(srv_t *s, const char *fault, int max_rounds,
                                          void (*round)(redisContext *c, int i, void *arg),
                                          void *arg)
{
    redisContext *c = srv_connect(s);
    cr_assert(c);
    for (int i = 0; i < max_rounds && !srv_log_contains(s, "killed by signal 9", "store"); i++) {
        if (c->err) {
            redisFree(c);
            c = srv_connect(s);
            cr_assert(c);
        }
        round(c, i, arg);
        usleep(100000);
    }
    cr_assert(srv_log_contains(s, "killed by signal 9", "store"), "%s: the store was killed",
              fault);
    redisFree(c);
    c = srv_connect(s);
    cr_assert(c);
    return c;
}

void ph_same_after_kill(srv_t *s, redisContext *c, const char *what)
{
    char d1[64], d2[64];
    ph_digest(c, d1);
    redisFree(c);
    srv_kill_all(s);
    cr_assert_eq(srv_restart(s), 0);
    c = srv_connect(s);
    ph_digest(c, d2);
    cr_assert_str_eq(d1, d2, "%s: the same digest after SIGKILL and a restart", what);
    redisFree(c);
    cr_assert_eq(srv_stop(s), 0);
    char out[8192];
    cr_assert_eq(srv_run_tool("atticdb-check", s->dir, out, sizeof(out)), 0, "%s", out);
    srv_cleanup(s);
}
