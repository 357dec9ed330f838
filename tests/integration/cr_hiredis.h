/*
 * cr_hiredis.h - hiredis commands under Criterion, for the integration
 * tests that talk to a server through hiredis (include criterion.h,
 * hiredis.h and harness.h first): a command whose reply must come, one
 * whose reply must be an integer, and a connection that must land on a
 * given frontend.
 */
#ifndef ATTIC_TEST_CR_HIREDIS_H
#define ATTIC_TEST_CR_HIREDIS_H

#include <stdarg.h>

/* The reply of fmt (hiredis' format); the test fails without one. */
static inline redisReply *q(redisContext *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    redisReply *r = redisvCommand(c, fmt, ap);
    va_end(ap);
    cr_assert_not_null(r, "no reply: %s", c->errstr);
    return r;
}

/* The integer reply of fmt; the test fails on any other. */
static inline long long qint(redisContext *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    redisReply *r = redisvCommand(c, fmt, ap);
    va_end(ap);
    cr_assert_not_null(r, "%s: no reply: %s", fmt, c->errstr);
    cr_assert_eq(r->type, REDIS_REPLY_INTEGER, "%s: %s", fmt, r->str ? r->str : "not an integer");
    long long v = r->integer;
    freeReplyObject(r);
    return v;
}

/* A connection to s on frontend fe (connecting until one lands there). */
static inline redisContext *cr_conn_on(const srv_t *s, int fe)
{
    redisContext *c = srv_connect_on(s, fe);
    cr_assert_not_null(c, "no connection landed on frontend %d", fe);
    return c;
}

#endif
