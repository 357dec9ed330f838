/*
 * test_stream_groups.c - a stream's consumer groups (store/core/sgroup.c,
 * D42) and XGROUP / XINFO GROUPS / XINFO CONSUMERS in the store
 * (store/types/t_stream_group.c), driven record by record through the
 * store harness: Redis' replies and errors, names kept in Redis' order,
 * times from the record's clock, RAM accounting back to zero, replay
 * reaching the same digest and replies, and the checkpoint hooks
 * round-tripping groups, consumers and pending entries (a cut stream
 * refused, version 1 streams still read).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "command.h"
#include "store/core/block.h"
#include "store/core/entry.h"
#include "store/core/index.h"
#include "store/core/object.h"
#include "store/core/sgroup.h"
#include "store/core/stream.h"
#include "store/store-internal.h"
#include "store_harness.h"

#define T0 1000000

#define wr(t, id, ...)   sh_wr((t), (id), __VA_ARGS__)
#define rd(now, id, ...) sh_rd((now), 0, (id), __VA_ARGS__)

#define NOKEY                                                                                      \
    "-ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to "  \
    "use the MKSTREAM option to create an empty stream automatically.\r\n"

static void setup(void)
{
    sh_setup("sgroups", 0, 42);
}

TestSuite(sgroups, .init = setup, .fini = sh_teardown, .timeout = 240);

static st_stream_t *stream_of(const char *key)
{
    idx_entry_t **slot = idx_find(&ctx->dbs[0]->ix, key, (uint32_t)strlen(key));
    cr_assert_not_null(slot);
    return st_ent_stream(*slot);
}

Test(sgroups, xgroup_replies_and_errors)
{
    cr_assert_str_eq(wr(T0, CMD_XGROUP, "CREATE", "s", "g", "$", NULL), NOKEY);
    cr_assert_str_eq(wr(T0, CMD_XGROUP, "CREATE", "s", "g", "$", "ENTRIESREAD", "-2", NULL),
                     "-ERR value for ENTRIESREAD must be positive or -1\r\n");
    cr_assert_str_eq(wr(T0, CMD_XGROUP, "CREATE", "s", "g", "$", "BOGUS", NULL),
                     "-ERR unknown subcommand or wrong number of arguments for 'CREATE'. Try "
                     "XGROUP HELP.\r\n");
    cr_assert_str_eq(wr(T0, CMD_XGROUP, "CREATE", "s", "g", "1-x", "MKSTREAM", NULL),
                     "-ERR Invalid stream ID specified as stream command argument\r\n");
    cr_assert_str_eq(rd(T0, CMD_EXISTS, "s", NULL), ":0\r\n", "a refused MKSTREAM makes nothing");
    cr_assert_str_eq(wr(T0, CMD_XGROUP, "CREATE", "s", "g", "$", "MKSTREAM", NULL), "+OK\r\n");
    cr_assert_str_eq(wr(T0, CMD_XGROUP, "CREATE", "s", "g", "0", NULL),
                     "-BUSYGROUP Consumer Group name already exists\r\n");
    cr_assert_str_eq(wr(T0, CMD_XGROUP, "CREATE", "s", "a", "0", "ENTRIESREAD", "3", NULL),
                     "+OK\r\n");
    cr_assert_str_eq(wr(T0, CMD_XGROUP, "CREATE", "s", "gg", "7-1", NULL), "+OK\r\n");
    st_sgroups_t *t = st_stream_groups(stream_of("s"));
    cr_assert_eq(t->n, 3);
    cr_assert(!memcmp(t->g[0]->name, "a", 1) && !memcmp(t->g[1]->name, "g", 1) &&
                  t->g[2]->nlen == 2,
              "groups in name order, a prefix first");
    cr_assert_eq(t->g[0]->entries_read, 3);
    cr_assert_eq(t->g[1]->entries_read, SG_ENTRIES_UNKNOWN);
    cr_assert_str_eq(wr(T0, CMD_XGROUP, "SETID", "s", "nog", "0", NULL),
                     "-NOGROUP No such consumer group 'nog' for key name 's'\r\n");
    cr_assert_str_eq(wr(T0, CMD_XGROUP, "SETID", "s", "g", "5", "ENTRIESREAD", "2", NULL),
                     "+OK\r\n");
    cr_assert_eq(t->g[1]->last_id.ms, 5);
    cr_assert_eq(t->g[1]->entries_read, 2);
    cr_assert_str_eq(wr(T0, CMD_XGROUP, "SETID", "s", "g", "0", "MKSTREAM", NULL),
                     "-ERR unknown subcommand or wrong number of arguments for 'SETID'. Try "
                     "XGROUP HELP.\r\n");
    cr_assert_str_eq(wr(T0, CMD_XGROUP, "CREATECONSUMER", "s", "g", "c2", NULL), ":1\r\n");
    cr_assert_str_eq(wr(T0 + 5, CMD_XGROUP, "CREATECONSUMER", "s", "g", "c1", NULL), ":1\r\n");
    cr_assert_str_eq(wr(T0, CMD_XGROUP, "CREATECONSUMER", "s", "g", "c1", NULL), ":0\r\n");
    cr_assert_eq(t->g[1]->nc, 2);
    cr_assert_eq(t->g[1]->c[0]->seen, T0 + 5, "the record's time, not the apply's clock");
    cr_assert_str_eq(rd(T0 + 100, CMD_XINFO, "CONSUMERS", "s", "g", NULL),
                     "*2\r\n*6\r\n$4\r\nname\r\n$2\r\nc1\r\n$7\r\npending\r\n:0\r\n$4\r\nidle\r\n"
                     ":95\r\n*6\r\n$4\r\nname\r\n$2\r\nc2\r\n$7\r\npending\r\n:0\r\n$4\r\nidle\r\n"
                     ":100\r\n");
    cr_assert_str_eq(wr(T0, CMD_XGROUP, "DELCONSUMER", "s", "g", "c9", NULL), ":0\r\n");
    cr_assert_str_eq(wr(T0, CMD_XGROUP, "DELCONSUMER", "s", "g", "c2", NULL), ":0\r\n");
    cr_assert_eq(t->g[1]->nc, 1);
    cr_assert_str_eq(wr(T0, CMD_XGROUP, "DESTROY", "s", "g", NULL), ":1\r\n");
    cr_assert_str_eq(wr(T0, CMD_XGROUP, "DESTROY", "s", "g", NULL), ":0\r\n");
    cr_assert_str_eq(wr(T0, CMD_XGROUP, "DESTROY", "nokey", "g", NULL), NOKEY);
    cr_assert_str_eq(wr(T0, CMD_XGROUP, "FOO", "s", "g", NULL),
                     "-ERR unknown subcommand or wrong number of arguments for 'FOO'. Try "
                     "XGROUP HELP.\r\n");
    cr_assert_eq(t->n, 2);
    wr(T0, CMD_SET, "str", "v", "#u32:0", "#i64:0", NULL);
    cr_assert_str_eq(wr(T0, CMD_XGROUP, "CREATE", "str", "g", "$", "MKSTREAM", NULL),
                     "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n");
    cr_assert_str_eq(rd(T0, CMD_XINFO, "GROUPS", "nokey", NULL), "-ERR no such key\r\n");
    cr_assert_str_eq(rd(T0, CMD_XINFO, "CONSUMERS", "s", "g", NULL),
                     "-NOGROUP No such consumer group 'g' for key name 's'\r\n");
    sh_check_replay("sgroups");
}

Test(sgroups, xinfo_groups_lag)
{
    wr(T0, CMD_XADD, "s", "1-1", "f", "v", NULL);
    wr(T0, CMD_XADD, "s", "2-1", "f", "v", NULL);
    wr(T0, CMD_XADD, "s", "3-1", "f", "v", NULL);
    wr(T0, CMD_XGROUP, "CREATE", "s", "first", "1-1", NULL);
    wr(T0, CMD_XGROUP, "CREATE", "s", "last", "$", NULL);
    wr(T0, CMD_XGROUP, "CREATE", "s", "read", "0", "ENTRIESREAD", "1", NULL);
    cr_assert_str_eq(
        rd(T0, CMD_XINFO, "GROUPS", "s", NULL),
        "*3\r\n"
        "*12\r\n$4\r\nname\r\n$5\r\nfirst\r\n$9\r\nconsumers\r\n:0\r\n$7\r\npending\r\n:0\r\n"
        "$17\r\nlast-delivered-id\r\n$3\r\n1-1\r\n$12\r\nentries-read\r\n$-1\r\n$3\r\nlag\r\n"
        ":2\r\n"
        "*12\r\n$4\r\nname\r\n$4\r\nlast\r\n$9\r\nconsumers\r\n:0\r\n$7\r\npending\r\n:0\r\n"
        "$17\r\nlast-delivered-id\r\n$3\r\n3-1\r\n$12\r\nentries-read\r\n$-1\r\n$3\r\nlag\r\n"
        ":0\r\n"
        "*12\r\n$4\r\nname\r\n$4\r\nread\r\n$9\r\nconsumers\r\n:0\r\n$7\r\npending\r\n:0\r\n"
        "$17\r\nlast-delivered-id\r\n$3\r\n0-0\r\n$12\r\nentries-read\r\n:1\r\n$3\r\nlag\r\n"
        ":2\r\n");
    wr(T0, CMD_XDEL, "s", "2-1", NULL);
    cr_assert(strstr(rd(T0, CMD_XINFO, "GROUPS", "s", NULL),
                     "$5\r\nfirst\r\n$9\r\nconsumers\r\n:0\r\n$7\r\npending\r\n:0\r\n$17\r\n"
                     "last-delivered-id\r\n$3\r\n1-1\r\n$12\r\nentries-read\r\n$-1\r\n$3\r\nlag\r\n"
                     "$-1\r\n"),
              "a deletion after the group's ID makes its lag unknown");
    cr_assert(strstr(rd(T0, CMD_XINFO, "STREAM", "s", NULL), "$6\r\ngroups\r\n:3\r\n"));
    sh_check_replay("sgroups");
}

/* s written to a checkpoint and read back: the copy (the caller frees
 * it), asserted to digest as s does; b holds the bytes. */
static st_obj_t *ckpt_round_trip(st_stream_t *s, buf_t *b)
{
    st_stream_ops.ckpt_write((st_obj_t *)s, b);
    st_obj_t *o = NULL;
    cr_assert_eq(st_stream_ops.ckpt_read((const unsigned char *)b->data, b->len, &o), (long)b->len);
    uint64_t d0, d1;
    cr_assert_eq(st_stream_ops.digest(ctx, (st_obj_t *)s, &d0), 0);
    cr_assert_eq(st_stream_ops.digest(ctx, o, &d1), 0);
    cr_assert_eq(d0, d1, "read back as written");
    return o;
}

Test(sgroups, accounting_and_checkpoint_round_trip)
{
    uint64_t base = ctx->entry_bytes;
    wr(T0, CMD_XADD, "s", "1-1", "f", "v", NULL);
    wr(T0, CMD_XADD, "s", "2-1", "f", "v", NULL);
    wr(T0, CMD_XGROUP, "CREATE", "s", "g1", "0", NULL);
    wr(T0, CMD_XGROUP, "CREATE", "s", "g2", "$", "ENTRIESREAD", "2", NULL);
    wr(T0 + 3, CMD_XGROUP, "CREATECONSUMER", "s", "g1", "alice", NULL);
    wr(T0 + 4, CMD_XGROUP, "CREATECONSUMER", "s", "g1", "bob", NULL);
    st_stream_t *s = stream_of("s");
    st_sgroup_t *g = sg_find(st_stream_groups(s), "g1", 2);
    cr_assert_not_null(g);
    /* Pending entries come from XREADGROUP; put two in to round-trip them. */
    st_spending_t *p = sg_pel_add(g, (st_sid_t){2, 1}, g->c[1], T0 + 9);
    p->count = 3;
    sg_pel_add(g, (st_sid_t){1, 1}, g->c[0], T0 + 8);
    cr_assert_eq(g->pel[0].id.ms, 1, "the PEL is in ID order");
    cr_assert_eq(sg_consumer_pending(g, g->c[1]), 1);
    cr_assert(strstr(rd(T0, CMD_XINFO, "STREAM", "s", "FULL", "COUNT", "1", NULL),
                     "$7\r\npending\r\n*1\r\n*4\r\n$3\r\n1-1\r\n$5\r\nalice\r\n:1000008\r\n"
                     ":1\r\n$9\r\nconsumers\r\n*2\r\n*8\r\n$4\r\nname\r\n$5\r\nalice\r\n"
                     "$9\r\nseen-time\r\n:1000003\r\n$9\r\npel-count\r\n:1\r\n$7\r\npending\r\n"
                     "*1\r\n*3\r\n$3\r\n1-1\r\n:1000008\r\n:1\r\n"),
              "FULL shows the PEL and each consumer's, COUNT bounding both");
    buf_t b;
    buf_init(&b);
    st_obj_t *o = ckpt_round_trip(s, &b);
    uint64_t d0, d1;
    cr_assert_eq(st_stream_ops.digest(ctx, (st_obj_t *)s, &d0), 0);
    st_sgroup_t *r = sg_find(st_stream_groups((st_stream_t *)o), "g1", 2);
    cr_assert_eq(r->npel, 2);
    cr_assert_eq(r->pel[1].count, 3);
    cr_assert_eq(r->pel[1].delivered, T0 + 9);
    cr_assert(r->pel[1].owner == r->c[1] && r->c[1]->nlen == 3, "bob owns 2-1");
    for (size_t cut = 0; cut < b.len; cut++) {
        st_obj_t *x = NULL;
        cr_assert_eq(st_stream_ops.ckpt_read((const unsigned char *)b.data, cut, &x), -1,
                     "a cut stream is refused (%zu)", cut);
    }
    st_obj_t *c = st_stream_ops.dup(o);
    cr_assert_eq(st_stream_ops.digest(ctx, c, &d1), 0);
    cr_assert_eq(d0, d1, "a copy digests the same");
    cr_assert_eq(st_stream_ops.mem_usage(c), st_stream_ops.mem_usage(o));
    st_stream_ops.free(c);
    st_stream_ops.free(o);
    /* A version 1 stream (before groups) still reads, with no groups. */
    st_stream_t *plain = st_stream_new();
    buf_t v1;
    buf_init(&v1);
    st_stream_ops.ckpt_write((st_obj_t *)plain, &v1);
    v1.data[0] = 1;
    v1.len -= 8; /* version 1 had no chunk count (version 3's, D64) nor group count */
    cr_assert_eq(st_stream_ops.ckpt_read((const unsigned char *)v1.data, v1.len, &o), (long)v1.len);
    cr_assert_eq(st_stream_groups((st_stream_t *)o)->n, 0);
    st_stream_ops.free(o);
    st_stream_free(plain);
    buf_free(&v1);
    buf_free(&b);
    /* The two pending entries were put in by hand, not by a record: drop
     * them so that the replay check compares what the records made. */
    free(g->pel);
    g->pel = NULL;
    g->npel = g->cappel = 0;
    wr(T0, CMD_XGROUP, "DELCONSUMER", "s", "g1", "alice", NULL);
    wr(T0, CMD_XGROUP, "DESTROY", "s", "g2", NULL);
    sh_check_replay("sgroups");
    wr(T0, CMD_DEL, "s", NULL);
    cr_assert_eq(ctx->entry_bytes, base, "RAM accounting back to where it was");
}

/* XACK: pending entries are put in by hand (XREADGROUP is not built yet),
 * so this test checks no replay. */
Test(sgroups, xack_removes_pending_ids)
{
    cr_assert_str_eq(wr(T0, CMD_XACK, "s", "g", "1-1", NULL), ":0\r\n", "no key");
    wr(T0, CMD_XADD, "s", "1-1", "f", "v", NULL);
    cr_assert_str_eq(wr(T0, CMD_XACK, "s", "g", "x", NULL), ":0\r\n", "no group: IDs unread");
    wr(T0, CMD_XGROUP, "CREATE", "s", "g", "0", NULL);
    wr(T0, CMD_XGROUP, "CREATECONSUMER", "s", "g", "c", NULL);
    st_sgroup_t *g = sg_find(st_stream_groups(stream_of("s")), "g", 1);
    for (uint64_t i = 1; i <= 4; i++)
        sg_pel_add(g, (st_sid_t){i, 1}, g->c[0], T0);
    sg_consumer_add(g, "b", 1, T0);
    g->pel[3].owner = g->c[0]; /* 4-1 is b's */
    cr_assert_str_eq(rd(T0 + 10, CMD_XPENDING, "s", "g", NULL),
                     "*4\r\n:4\r\n$3\r\n1-1\r\n$3\r\n4-1\r\n*2\r\n*2\r\n$1\r\nb\r\n$1\r\n1\r\n"
                     "*2\r\n$1\r\nc\r\n$1\r\n3\r\n");
    cr_assert_str_eq(
        rd(T0 + 10, CMD_XPENDING, "s", "g", "IDLE", "5", "(1-1", "+", "2", "c", NULL),
        "*2\r\n*4\r\n$3\r\n2-1\r\n$1\r\nc\r\n:10\r\n:1\r\n*4\r\n$3\r\n3-1\r\n$1\r\nc\r\n"
        ":10\r\n:1\r\n");
    cr_assert_str_eq(rd(T0 + 10, CMD_XPENDING, "s", "g", "IDLE", "50", "-", "+", "9", NULL),
                     "*0\r\n");
    cr_assert_str_eq(rd(T0 + 10, CMD_XPENDING, "s", "g", "-", "+", "9", "nobody", NULL), "*0\r\n");
    cr_assert_str_eq(wr(T0, CMD_XACK, "s", "g", "1-1", "x", NULL),
                     "-ERR Invalid stream ID specified as stream command argument\r\n");
    cr_assert_eq(g->npel, 4, "all or nothing");
    cr_assert_str_eq(wr(T0, CMD_XACK, "s", "g", "1-1", "3-1", "3-1", "9-9", "2", NULL), ":2\r\n");
    cr_assert_eq(g->npel, 2);
    cr_assert(g->pel[0].id.ms == 2 && g->pel[1].id.ms == 4);
    wr(T0, CMD_SET, "str", "v", "#u32:0", "#i64:0", NULL);
    cr_assert_str_eq(wr(T0, CMD_XACK, "str", "g", "1", NULL),
                     "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n");
}

/* XREADGROUP's record: CMD_BLPOP's head (client, protocol, two unused
 * words, the waiter's kind) then the user's words. */
#define XRG(t, ...)                                                                                \
    wr((t), CMD_XREADGROUP, "#i64:7", "#u32:2", "#u32:0", "#u32:6", "#i64:0", __VA_ARGS__, NULL)

/* XREADGROUP, XCLAIM and XAUTOCLAIM (D46) take every time from the
 * record: a delivery's time is its record's, idle is judged by the
 * claiming record's clock; the replay reaches the same digest, and a
 * checkpoint of the PEL they made reads back the same. */
Test(sgroups, readgroup_and_claims_use_the_record_time)
{
    wr(T0, CMD_XADD, "s", "1-1", "f", "a", NULL);
    wr(T0, CMD_XADD, "s", "2-1", "f", "b", NULL);
    wr(T0, CMD_XADD, "s", "3-1", "f", "c", NULL);
    wr(T0, CMD_XGROUP, "CREATE", "s", "g", "0", NULL);
    cr_assert_str_eq(XRG(T0 + 5, "GROUP", "g", "alice", "COUNT", "2", "STREAMS", "s", ">"),
                     "*1\r\n*2\r\n$1\r\ns\r\n*2\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\nf\r\n$1\r\na\r\n"
                     "*2\r\n$3\r\n2-1\r\n*2\r\n$1\r\nf\r\n$1\r\nb\r\n");
    st_sgroup_t *g = sg_find(st_stream_groups(stream_of("s")), "g", 1);
    cr_assert_eq(g->npel, 2);
    cr_assert_eq(g->pel[0].delivered, T0 + 5, "delivered at the record's time");
    cr_assert_eq(g->c[0]->seen, T0 + 5);
    cr_assert(g->last_id.ms == 2 && g->entries_read == 2);
    cr_assert_str_eq(
        XRG(T0 + 6, "GROUP", "g", "bob", "NOACK", "STREAMS", "s", ">"),
        "*1\r\n*2\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n3-1\r\n*2\r\n$1\r\nf\r\n$1\r\nc\r\n");
    cr_assert_eq(g->npel, 2, "NOACK pends nothing");
    cr_assert_eq(g->nc, 2, "bob made");
    cr_assert_str_eq(XRG(T0 + 7, "GROUP", "g", "bob", "STREAMS", "s", ">"), "*-1\r\n");
    cr_assert_eq(g->c[1]->seen, T0 + 6, "not seen by a read that answers nothing (7.0.15)");
    cr_assert_str_eq(XRG(T0 + 7, "GROUP", "g", "nobody", "STREAMS", "s", ">"), "*-1\r\n");
    cr_assert_eq(g->nc, 2, "nor made");
    wr(T0, CMD_XDEL, "s", "2-1", NULL);
    cr_assert_str_eq(XRG(T0 + 20, "GROUP", "g", "alice", "STREAMS", "s", "0"),
                     "*1\r\n*2\r\n$1\r\ns\r\n*2\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\nf\r\n$1\r\na\r\n"
                     "*2\r\n$3\r\n2-1\r\n*-1\r\n",
                     "history: a deleted entry is [id, null]");
    cr_assert(g->pel[0].delivered == T0 + 20 && g->pel[0].count == 2);
    cr_assert(g->pel[1].delivered == T0 + 5 && g->pel[1].count == 1,
              "a deleted one is not counted");
    cr_assert_str_eq(XRG(T0, "GROUP", "g", "alice", "STREAMS", "s", "$"),
                     "-ERR The $ ID is meaningless in the context of XREADGROUP: you want to read "
                     "the history of this consumer by specifying a proper ID, or use the > ID to "
                     "get new messages. The $ ID would just return an empty result set.\r\n");
    /* Idle by the claiming record's clock: 1-1 was delivered at T0 + 20. */
    cr_assert_str_eq(wr(T0 + 69, CMD_XCLAIM, "s", "g", "carol", "50", "1-1", "JUSTID", NULL),
                     "*0\r\n");
    cr_assert_eq(g->nc, 2, "nothing claimed: no consumer made");
    cr_assert_str_eq(wr(T0 + 70, CMD_XCLAIM, "s", "g", "carol", "50", "1-1", "JUSTID", NULL),
                     "*1\r\n$3\r\n1-1\r\n");
    cr_assert(g->pel[0].owner == g->c[2] && g->pel[0].delivered == T0 + 70 && g->pel[0].count == 2,
              "JUSTID keeps the count");
    cr_assert_str_eq(wr(T0 + 70, CMD_XCLAIM, "s", "g", "carol", "0", "1-1", "IDLE", "30",
                        "RETRYCOUNT", "9", NULL),
                     "*1\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\nf\r\n$1\r\na\r\n");
    cr_assert(g->pel[0].delivered == T0 + 40 && g->pel[0].count == 9);
    cr_assert_str_eq(rd(T0 + 100, CMD_XPENDING, "s", "g", "-", "+", "9", NULL),
                     "*2\r\n*4\r\n$3\r\n1-1\r\n$5\r\ncarol\r\n:60\r\n:9\r\n*4\r\n$3\r\n2-1\r\n"
                     "$5\r\nalice\r\n:95\r\n:1\r\n");
    cr_assert_str_eq(wr(T0 + 100, CMD_XAUTOCLAIM, "s", "g", "dave", "61", "0", NULL),
                     "*3\r\n$3\r\n0-0\r\n*0\r\n*1\r\n$3\r\n2-1\r\n",
                     "the deleted 2-1 leaves the PEL; 1-1 is idle 60 only");
    cr_assert_eq(g->npel, 1);
    cr_assert_str_eq(wr(T0 + 101, CMD_XAUTOCLAIM, "s", "g", "dave", "61", "0", NULL),
                     "*3\r\n$3\r\n0-0\r\n*1\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\nf\r\n$1\r\na\r\n"
                     "*0\r\n");
    cr_assert(g->pel[0].delivered == T0 + 101 && g->pel[0].count == 10);
    /* The PEL the records made round-trips through a checkpoint. */
    st_stream_t *s = stream_of("s");
    buf_t b;
    buf_init(&b);
    st_stream_ops.free(ckpt_round_trip(s, &b));
    buf_free(&b);
    sh_check_replay("sgroups");
}

static void take_reply(void *arg, uint16_t origin, uint64_t id, const buf_t *body)
{
    (void)origin;
    buf_t *all = arg;
    char t[32];
    buf_append(all, t, (size_t)snprintf(t, sizeof(t), "[%llu]", (unsigned long long)id));
    buf_append(all, body->data, body->len);
}

/* A waiter of XREADGROUP BLOCK is served inside the XADD that adds an
 * entry: the serve writes the PEL at the XADD's time; one of another
 * group behind a waiter with nothing new is still served; a group
 * destroyed answers -NOGROUP. (The waiters are added directly, with
 * chosen ids and names.) */
Test(sgroups, blocked_readgroup_served_inside_xadd)
{
    wr(T0, CMD_XGROUP, "CREATE", "s", "g", "$", "MKSTREAM", NULL);
    wr(T0, CMD_XGROUP, "CREATE", "s", "h", "$", NULL);
    st_block_set_live(ctx, 1);
    const char *names[3] = {"\x01\0\0\0gc1", "\x01\0\0\0gc2", "\x01\0\0\0hc3"};
    for (int i = 0; i < 3; i++) {
        rec_arg_t key = {(const unsigned char *)"s", 1};
        st_waiter_spec_t sp = {.id = 100 + (uint64_t)i,
                               .client_id = 10 + (uint64_t)i,
                               .origin = 1,
                               .kind = ST_BLOCK_STREAM_GROUP,
                               .proto = 2,
                               .count = 1000,
                               .nkeys = 1,
                               .keys = &key,
                               .dst = {(const unsigned char *)names[i], 7}};
        cr_assert_eq(st_block_add(ctx, &sp), 0);
    }
    /* The waiters through a checkpoint's block state, back in order. */
    size_t n = st_block_state_size(ctx);
    unsigned char *saved = malloc(n);
    st_block_state_save(ctx, saved);
    st_block_free(ctx);
    cr_assert_eq(st_block_count(ctx), 0);
    cr_assert_eq(st_block_state_load(ctx, saved, n), 0);
    free(saved);
    cr_assert_eq(st_block_count(ctx), 3);
    st_block_set_live(ctx, 1);
    wr(T0 + 50, CMD_XADD, "s", "1-1", "f", "v", NULL);
    cr_assert_eq(st_block_count(ctx), 1, "c1 (group g) and c3 (group h) served, c2 waits");
    st_sgroup_t *g = sg_find(st_stream_groups(stream_of("s")), "g", 1);
    st_sgroup_t *h = sg_find(st_stream_groups(stream_of("s")), "h", 1);
    cr_assert(g->npel == 1 && g->pel[0].delivered == T0 + 50 && g->c[0]->nlen == 2);
    cr_assert(h->npel == 1 && h->pel[0].owner == h->c[0]);
    wr(T0, CMD_XGROUP, "DESTROY", "s", "g", NULL);
    cr_assert_eq(st_block_count(ctx), 0, "c2 leaves when its group is destroyed");
    buf_t all;
    buf_init(&all);
    st_block_take_replies(ctx, take_reply, &all);
    buf_append(&all, "", 1);
    cr_assert_str_eq(all.data,
                     "[100]*1\r\n*2\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\nf\r\n"
                     "$1\r\nv\r\n"
                     "[102]*1\r\n*2\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\nf\r\n"
                     "$1\r\nv\r\n"
                     "[101]-NOGROUP the consumer group this client was blocked on no longer "
                     "exists\r\n");
    buf_free(&all);
    st_block_set_live(ctx, 0);
}

/* CMD_XREADBLOCK (XREAD with BLOCK, D46): answered by the record in log
 * order, or its client waits after the IDs ("$": the last ID when the
 * record is applied); a waiter is served by an XADD past its ID only, one
 * passed over leaving those behind it free to be served. */
Test(sgroups, xread_block_record_and_waiter)
{
    wr(T0, CMD_XADD, "s", "1-1", "f", "a", NULL);
    cr_assert_str_eq(wr(T0, CMD_XREADBLOCK, "#i64:7", "#u32:3", "#u32:0", "#u32:7", "#i64:0",
                        "BLOCK", "0", "STREAMS", "s", "0", NULL),
                     "%1\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\nf\r\n$1\r\na\r\n");
    cr_assert_str_eq(wr(T0, CMD_XREADBLOCK, "#i64:7", "#u32:2", "#u32:0", "#u32:7", "#i64:0",
                        "BLOCK", "0", "STREAMS", "s", "$", NULL),
                     "", "nothing after 1-1: its client waits, the reply deferred");
    cr_assert_eq(st_block_count(ctx), 1);
    cr_assert_str_eq(wr(T0, CMD_XREADBLOCK, "#i64:7", "#u32:2", "#u32:0", "#u32:7", "#i64:0",
                        "BLOCK", "0", "GROUP", "g", "c", "STREAMS", "s", "$", NULL),
                     "-ERR The GROUP option is only supported by XREADGROUP. You called XREAD "
                     "instead.\r\n");
    st_block_set_live(ctx, 1);
    rec_arg_t key = {(const unsigned char *)"s", 1};
    unsigned char after[16];
    cmd_put_i64(after, 3); /* 3-0 */
    cmd_put_i64(after + 8, 0);
    st_waiter_spec_t sp = {.id = 200,
                           .client_id = 20,
                           .origin = 1,
                           .kind = ST_BLOCK_STREAM_READ,
                           .proto = 2,
                           .count = 1000,
                           .nkeys = 1,
                           .keys = &key,
                           .dst = {after, 16}};
    cr_assert_eq(st_block_add(ctx, &sp), 0);
    wr(T0, CMD_XADD, "s", "2-1", "f", "b", NULL);
    cr_assert_eq(st_block_count(ctx), 1, "the record's waiter served; 2-1 is not after 3-0");
    wr(T0, CMD_XADD, "s", "4-1", "f", "c", NULL);
    cr_assert_eq(st_block_count(ctx), 0);
    buf_t all;
    buf_init(&all);
    st_block_take_replies(ctx, take_reply, &all);
    buf_append(&all, "", 1);
    const char *mine = strstr(all.data, "[200]");
    cr_assert_not_null(mine);
    cr_assert_str_eq(mine, "[200]*1\r\n*2\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n4-1\r\n*2\r\n$1\r\nf\r\n"
                           "$1\r\nc\r\n");
    const char *first = strstr(all.data, "$3\r\n2-1\r\n");
    cr_assert(first && first < mine, "the record's waiter got 2-1, first");
    buf_free(&all);
    st_block_set_live(ctx, 0);
    sh_check_replay("sgroups");
}

/* A waited key's TTL passed by a record's clock (D46): the record whose
 * time reaches it (here a tick) answers the XREADGROUP waiter -UNBLOCKED,
 * as after a DEL; the XREAD waiter on the key waits on; a record before
 * the TTL answers nothing. Replay reaches the same state. */
Test(sgroups, blocked_readgroup_answered_by_the_record_past_its_key_ttl)
{
    wr(T0, CMD_XGROUP, "CREATE", "s", "g", "$", "MKSTREAM", NULL);
    wr(T0, CMD_PEXPIREAT, "s", "#i64:1000100", "#u32:0", NULL);
    st_block_set_live(ctx, 1);
    cr_assert_str_eq(XRG(T0, "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s", ">"), "");
    cr_assert_str_eq(wr(T0, CMD_XREADBLOCK, "#i64:8", "#u32:2", "#u32:0", "#u32:7", "#i64:0",
                        "BLOCK", "0", "STREAMS", "s", "$", NULL),
                     "");
    cr_assert_eq(st_block_count(ctx), 2);
    wr(T0 + 99, CMD_TICK, NULL);
    cr_assert_eq(st_block_count(ctx), 2, "the TTL is not passed yet");
    wr(T0 + 100, CMD_TICK, NULL);
    cr_assert_eq(st_block_count(ctx), 1, "XREADGROUP's waiter answered, XREAD's waits");
    buf_t all;
    buf_init(&all);
    st_block_take_replies(ctx, take_reply, &all);
    buf_append(&all, "", 1);
    cr_assert_eq(strstr(all.data, "-UNBLOCKED the stream key no longer exists\r\n") -
                     strchr(all.data, ']'),
                 1, "one reply, -UNBLOCKED: %s", all.data);
    cr_assert_null(strchr(strchr(all.data, ']') + 1, '['), "only one reply: %s", all.data);
    /* A write at the key past its TTL makes a new stream first, so the
     * waiter finds no group: -NOGROUP, as Redis (its XADD deletes the
     * expired key, then serves). */
    buf_reset(&all);
    wr(T0 + 100, CMD_XGROUP, "CREATE", "t", "g", "$", "MKSTREAM", NULL);
    wr(T0 + 100, CMD_PEXPIREAT, "t", "#i64:1000200", "#u32:0", NULL);
    cr_assert_str_eq(XRG(T0 + 100, "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "t", ">"), "");
    wr(T0 + 200, CMD_XADD, "t", "1-1", "f", "v", NULL);
    cr_assert_eq(st_block_count(ctx), 1);
    st_block_take_replies(ctx, take_reply, &all);
    buf_append(&all, "", 1);
    cr_assert_not_null(strstr(all.data, "]-NOGROUP the consumer group this client was blocked on "
                                        "no longer exists\r\n"),
                       "%s", all.data);
    cr_assert_eq(st_stream_len(stream_of("t")), 1);
    buf_free(&all);
    st_block_set_live(ctx, 0);
    sh_check_replay("sgroups");
}
