/*
 * test_notify.c - the store's keyspace events (store/core/notify.c, D37,
 * D41) without a server: which events a record publishes, in which order,
 * and that a replay (notify_flags 0) publishes none. The differential
 * comparison with Redis is tests/integration/test_pubsub's.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "command.h"
#include "pubsub.h"
#include "store/store-internal.h"
#include "store_harness.h"

#define wr(t, db, op, ...) sh_wr((t), REC_OP_DB((op), (db)), __VA_ARGS__)
#define T0                 1000000

/* Every event published, "channel=message;" after each other. */
static char events[4096];

static void collect(void *arg, const char *chan, size_t clen, const char *msg, size_t mlen)
{
    (void)arg;
    size_t n = strlen(events);
    snprintf(events + n, sizeof(events) - n, "%.*s=%.*s;", (int)clen, chan, (int)mlen, msg);
}

static void setup(void)
{
    sh_setup("notify", 16, 1234);
    events[0] = 0;
    store_set_notify_out(ctx, collect, NULL);
}

TestSuite(notify, .init = setup, .fini = sh_teardown);

/* A second store replaying the log as a restart does (notify_flags 0)
 * publishes nothing. */
static void replay_tells_nothing(const char *what)
{
    events[0] = 0;
    store_ctx_t *c = store_ctx_create(&cfg, 987654321);
    cr_assert(c);
    store_set_notify_out(c, collect, NULL);
    store_set_notify_flags(c, 0);
    sh_replay(c, NULL);
    cr_expect_str_eq(events, "", "%s told: %s", what, events);
    store_ctx_destroy(c);
}

Test(notify, new_keys_are_told_where_they_are_added)
{
    store_set_notify_flags(ctx, PS_NOTIFY_KEYEVENT | PS_NOTIFY_ALL | PS_NOTIFY_NEW);
    wr(T0, 0, CMD_MSET, "a", "1", NULL);
    events[0] = 0;
    wr(T0, 0, CMD_MSET, "a", "2", "b", "3", "c", "4", NULL);
    cr_expect_str_eq(events, "__keyevent@0__:set=a;__keyevent@0__:new=b;__keyevent@0__:set=b;"
                             "__keyevent@0__:new=c;__keyevent@0__:set=c;");
    events[0] = 0;
    wr(T0, 0, CMD_MOVE, "b", "#u32:3", NULL);
    cr_expect_str_eq(events,
                     "__keyevent@3__:new=b;__keyevent@0__:move_from=b;__keyevent@3__:move_to=b;");
    /* without n: no "new" */
    store_set_notify_flags(ctx, PS_NOTIFY_KEYEVENT | PS_NOTIFY_ALL);
    events[0] = 0;
    wr(T0, 0, CMD_MSET, "d", "1", NULL);
    cr_expect_str_eq(events, "__keyevent@0__:set=d;");
}

Test(notify, sorted_set_pops_and_an_emptied_key)
{
    store_set_notify_flags(ctx, PS_NOTIFY_KEYSPACE | PS_NOTIFY_ZSET | PS_NOTIFY_GENERIC);
    wr(T0, 0, CMD_ZREM, "z", "a", NULL); /* nothing to remove: nothing told */
    cr_expect_str_eq(events, "");
    wr(T0, 0, CMD_ZPOPMIN, "z", "#u32:1", "#i64:-1", "#u32:2", NULL);
    cr_expect_str_eq(events, "", "a pop of a missing key tells nothing");
    wr(T0, 0, CMD_ZADD, "z", "#i64:0", "#u32:2", "INCR", "1", "a", NULL);
    wr(T0, 0, CMD_ZADD, "z", "#i64:0", "#u32:2", "2", "b", NULL);
    wr(T0, 0, CMD_ZPOPMIN, "z", "#u32:0", "#i64:-1", "#u32:2", NULL);
    wr(T0, 0, CMD_ZPOPMIN, "z", "#u32:1", "#i64:5", "#u32:2", NULL);
    cr_expect_str_eq(events, "__keyspace@0__:z=zincr;__keyspace@0__:z=zadd;"
                             "__keyspace@0__:z=zpopmin;__keyspace@0__:z=zpopmax;"
                             "__keyspace@0__:z=del;");
}

Test(notify, replay_publishes_nothing)
{
    store_set_notify_flags(ctx,
                           PS_NOTIFY_KEYSPACE | PS_NOTIFY_KEYEVENT | PS_NOTIFY_ALL | PS_NOTIFY_NEW);
    wr(T0, 0, CMD_MSET, "a", "1", "b", "2", NULL);
    wr(T0, 0, CMD_DEL, "a", NULL);
    cr_assert(strstr(events, "__keyspace@0__:a=new;"), "%s", events);
    /* the store replays with notify_flags 0 (D37): the same records, no event */
    replay_tells_nothing("a replay");
}

/* "keymiss" (m, D51): told by a read's lookup that finds nothing, and by
 * the read lookups of writes (SET GET, GETDEL) before their own events;
 * not by OBJECT, not without m, never on replay. */
Test(notify, key_misses_of_reads_and_of_writes_that_read)
{
    const uint32_t km = PS_NOTIFY_KEYSPACE | PS_NOTIFY_KEYEVENT | PS_NOTIFY_KEY_MISS;
    wr(T0, 0, CMD_MSET, "a", "1", NULL);
    store_set_notify_flags(ctx, km);
    sh_rd(T0, 0, CMD_GET, "nx", NULL);
    cr_expect_str_eq(events, "__keyspace@0__:nx=keymiss;__keyevent@0__:keymiss=nx;");
    events[0] = 0;
    sh_rd(T0, 3, CMD_EXISTS, "a", "nx", "a", "ny", NULL);
    cr_expect_str_eq(events, "__keyspace@3__:a=keymiss;__keyevent@3__:keymiss=a;"
                             "__keyspace@3__:nx=keymiss;__keyevent@3__:keymiss=nx;"
                             "__keyspace@3__:a=keymiss;__keyevent@3__:keymiss=a;"
                             "__keyspace@3__:ny=keymiss;__keyevent@3__:keymiss=ny;");
    events[0] = 0;
    sh_rd(T0, 0, CMD_EXISTS, "a", NULL);
    sh_rd(T0, 0, CMD_OBJECT, "ENCODING", "nx", NULL); /* LOOKUP_NONOTIFY in Redis */
    cr_expect_str_eq(events, "", "a hit and OBJECT tell nothing");
    store_set_notify_flags(ctx, km | PS_NOTIFY_STRING);
    wr(T0, 0, CMD_SET, "g", "v", "#u32:4", "#i64:0", NULL); /* SET g v GET */
    wr(T0, 0, CMD_GETDEL, "nz", NULL);
    cr_expect_str_eq(events, "__keyspace@0__:g=keymiss;__keyevent@0__:keymiss=g;"
                             "__keyspace@0__:g=set;__keyevent@0__:set=g;"
                             "__keyspace@0__:nz=keymiss;__keyevent@0__:keymiss=nz;");
    events[0] = 0;
    wr(T0, 0, CMD_SET, "g", "v", "#u32:0", "#i64:0", NULL); /* a write's own lookup */
    store_set_notify_flags(ctx, PS_NOTIFY_KEYSPACE | PS_NOTIFY_KEYEVENT | PS_NOTIFY_ALL);
    sh_rd(T0, 0, CMD_GET, "nx", NULL);
    wr(T0, 0, CMD_GETDEL, "nz", NULL);
    cr_expect_str_eq(events, "__keyspace@0__:g=set;__keyevent@0__:set=g;", "A has no m");
    replay_tells_nothing("the replay of SET GET and GETDEL");
}
