/*
 * test_cmds_zsets.c - the sorted-set commands checked against a real Redis
 * 7.0 byte for byte: ZADD's options, errors and score formats (inf, -0,
 * %.17g), the ZRANGE family, ZRANGESTORE and the other STORE forms with
 * the encodings they choose, the pops, ZRANDMEMBER's errors, ZSCAN of a
 * listpack, set operations with sets as inputs, WRONGTYPE from every zset
 * command and from other types' commands on a zset, COPY/RENAME/MOVE/
 * EXPIRE of zsets, OBJECT ENCODING across zset-max-listpack-*, RESP3
 * (doubles, pairs, nulls) and MULTI/EXEC. The same lines run twice, once
 * in RESP2 and once after HELLO 3.
 *
 * Environment: ATTICDB_SERVER, REDIS_SERVER (default: redis-server from
 * PATH; skipped without it).
 */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "redis_diff.h"

TestSuite(zsets, .fini = rdiff_teardown, .timeout = 120);

static void commands(diff_t *d)
{
    D(d, "set", "k", "v");
    D(d, "zpopmin", "k", "0");
    D(d, "zpopmin", "k");
    D(d, "zadd", "z", "1", "a", "2", "b", "3", "c");
    D(d, "zrangestore", "d", "z", "0", "-1");
    D(d, "object", "encoding", "d");
    D(d, "zrangestore", "d", "z", "-inf", "+inf", "byscore");
    D(d, "object", "encoding", "d");
    D(d, "zunionstore", "d", "1", "z");
    D(d, "object", "encoding", "d");
    D(d, "config", "set", "zset-max-listpack-entries", "2");
    D(d, "zrangestore", "d", "z", "0", "-1");
    D(d, "object", "encoding", "d");
    D(d, "zunionstore", "d", "1", "z");
    D(d, "object", "encoding", "d");
    D(d, "zadd", "z", "0", "x");
    D(d, "object", "encoding", "z");
    D(d, "zpopmin", "z", "3");
    D(d, "object", "encoding", "z");
    D(d, "config", "set", "zset-max-listpack-entries", "128");
    D(d, "zadd", "z2", "1",
      "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
      "aaaaaaa");
    D(d, "object", "encoding", "z2");
    D(d, "zadd", "z3", "1", "a");
    D(d, "zadd", "z3", "xx", "1",
      "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
      "aaaaaaa");
    D(d, "object", "encoding", "z3");
    D(d, "zadd", "z4", "xx", "1", "a");
    D(d, "exists", "z4");
    D(d, "zadd", "z5", "gt", "1", "a");
    D(d, "zadd", "z5", "gt", "ch", "0", "a", "2", "b");
    D(d, "zadd", "z5", "lt", "ch", "0", "a", "2", "b");
    D(d, "zadd", "z5", "incr", "gt", "0", "a");
    D(d, "zadd", "z5", "incr", "lt", "-1", "a");
    D(d, "zadd", "z5", "incr", "nx", "1", "a");
    D(d, "zrange", "z5", "0", "-1", "withscores");
    D(d, "zincrby", "z5", "nx", "a");
    D(d, "zadd", "z5", "1e400", "a");
    D(d, "zadd", "z5", "0x10", "a");
    D(d, "zadd", "z5", " 1", "a");
    D(d, "zadd", "z5", "1 ", "a");
    D(d, "zadd", "z5", "-0", "zero");
    D(d, "zscore", "z5", "zero");
    D(d, "zadd", "z5", "1.5e300", "big");
    D(d, "zscore", "z5", "big");
    D(d, "zadd", "z5", "+inf", "pinf");
    D(d, "zrangebyscore", "z5", "(-inf", "(inf");
    D(d, "zrangebyscore", "z5", "(", "1");
    D(d, "zrangebyscore", "z5", "(1", "(1.5e300");
    D(d, "zrangebylex", "z5", "[a", "(c");
    D(d, "zrangebylex", "z5", "a", "(c");
    D(d, "del", "z", "s", "k");
    D(d, "zadd", "z", "1", "a", "2", "b", "3", "c");
    D(d, "sadd", "s", "a", "x");
    D(d, "set", "k", "v");
    D(d, "zpopmin", "z");
    D(d, "zpopmin", "z", "2");
    D(d, "zmpop", "1", "z", "min");
    D(d, "zmpop", "1", "z", "min", "count", "0");
    D(d, "zmpop", "0", "z", "min");
    D(d, "zmpop", "1", "z", "foo");
    D(d, "zmpop", "2", "z", "min");
    D(d, "zpopmin", "z", "-1");
    D(d, "zpopmin", "z", "abc");
    D(d, "zpopmin", "z", "1", "2");
    D(d, "zadd", "z", "1", "a", "2", "b", "3", "c");
    D(d, "zunionstore", "d", "0", "z");
    D(d, "zunionstore", "d", "3", "z");
    D(d, "zunionstore", "d", "1", "z", "weights", "x");
    D(d, "zunionstore", "d", "1", "z", "weights", "2", "aggregate", "foo");
    D(d, "zunionstore", "d", "1", "k", "weights", "x");
    D(d, "zunionstore", "d", "2", "z", "s", "weights", "2", "3");
    D(d, "zrange", "d", "0", "-1", "withscores");
    D(d, "zunion", "2", "z", "s", "withscores");
    D(d, "zunion", "2", "z", "s", "weights", "1", "nan");
    D(d, "zintercard", "0", "z");
    D(d, "zintercard", "1", "z", "limit", "-1");
    D(d, "zintercard", "2", "z", "s", "limit", "1");
    D(d, "zinter", "2", "z", "s", "withscores", "aggregate", "max");
    D(d, "zadd", "z", "nx", "xx", "1", "a");
    D(d, "zadd", "z", "gt", "lt", "1", "a");
    D(d, "zadd", "z", "incr", "1", "a", "2", "b");
    D(d, "zadd", "z", "1", "a", "2");
    D(d, "zadd", "z", "nan", "a");
    D(d, "zadd", "z", "1", "a", "x", "b");
    D(d, "zadd", "k", "x", "a");
    D(d, "zadd", "k", "1", "a");
    D(d, "zadd", "z");
    D(d, "zadd", "z", "xx");
    D(d, "zadd", "z", "ch", "5", "a", "6", "new");
    D(d, "zincrby", "z", "nan", "a");
    D(d, "zadd", "z", "1", "inf");
    D(d, "zadd", "z", "inf", "inf", "-inf", "ninf");
    D(d, "zincrby", "z", "-inf", "inf");
    D(d, "zrange", "z", "0", "-1", "withscores");
    D(d, "zrange", "z", "0", "-1", "limit", "0", "1");
    D(d, "zrange", "z", "0", "-1", "limit", "0", "-1");
    D(d, "zrange", "z", "a", "b", "byscore");
    D(d, "zrange", "z", "(1", "(5", "byscore", "withscores", "limit", "1", "2");
    D(d, "zrange", "z", "-", "+", "bylex", "withscores");
    D(d, "zrange", "z", "-", "+", "bylex", "limit", "0", "1");
    D(d, "zrangebylex", "z", "a", "b");
    D(d, "zrangebyscore", "z", "1", "2", "bylex");
    D(d, "zrevrangebyscore", "z", "5", "1", "withscores");
    D(d, "zrange", "z", "5", "1", "byscore", "rev", "withscores");
    D(d, "zrangestore", "d", "z", "0", "-1", "withscores");
    D(d, "zrangestore", "d", "z", "0", "1");
    D(d, "zscore", "z", "inf");
    D(d, "zcount", "z", "-inf", "+inf");
    D(d, "zcount", "z", "a", "b");
    D(d, "zlexcount", "z", "a", "b");
    D(d, "zlexcount", "z", "-", "+");
    D(d, "zremrangebyrank", "z", "a", "b");
    D(d, "zremrangebyscore", "z", "a", "b");
    D(d, "zremrangebylex", "z", "a", "b");
    D(d, "zrandmember", "z", "1", "2");
    D(d, "zrandmember", "z", "x");
    D(d, "zrandmember", "z", "-9223372036854775808");
    D(d, "zrandmember", "z", "9223372036854775807", "withscores");
    D(d, "zrank", "z", "a", "withscore");
    D(d, "zscan", "z", "0", "count", "0");
    D(d, "zmscore", "z");
    D(d, "zmscore", "nokey", "a");
    D(d, "zrank", "z", "a");
    D(d, "zrevrank", "z", "a");
    D(d, "zrank", "z", "nope");
    D(d, "zrevrange", "z", "0", "1", "withscores");
    D(d, "zrevrange", "z", "-2", "-1");
    D(d, "zrange", "z", "1", "0");
    D(d, "zrange", "z", "100", "200");
    D(d, "zrangebyscore", "z", "-inf", "+inf", "limit", "1", "2");
    D(d, "zrevrangebyscore", "z", "+inf", "-inf", "limit", "1", "2", "withscores");
    D(d, "zrangebyscore", "z", "-inf", "+inf", "limit", "-1", "2");
    D(d, "zrangebyscore", "z", "-inf", "+inf", "limit", "1", "-5");
    D(d, "zremrangebyrank", "z", "0", "0");
    D(d, "zremrangebyscore", "z", "(2", "3");
    D(d, "zrange", "z", "0", "-1", "withscores");
    D(d, "zadd", "l", "0", "a", "0", "b", "0", "c", "0", "d", "0", "e");
    D(d, "zrangebylex", "l", "-", "+");
    D(d, "zrangebylex", "l", "[b", "(d");
    D(d, "zrevrangebylex", "l", "(d", "[b");
    D(d, "zrevrangebylex", "l", "+", "-", "limit", "1", "2");
    D(d, "zlexcount", "l", "(a", "[c");
    D(d, "zremrangebylex", "l", "[d", "+");
    D(d, "zrange", "l", "0", "-1");
    D(d, "zscan", "l", "0");
    D(d, "zscan", "l", "0", "match", "b*");
    D(d, "zscan", "l", "abc");
    D(d, "type", "z");
    D(d, "type", "l");
    D(d, "zcard", "l");
    D(d, "zcard", "nokey");
    D(d, "zdiff", "2", "z", "l", "withscores");
    D(d, "zdiffstore", "d2", "2", "z", "nokey");
    D(d, "zrange", "d2", "0", "-1", "withscores");
    D(d, "zinterstore", "d2", "2", "z", "nokey");
    D(d, "exists", "d2");
    D(d, "zinter", "2", "z", "s", "weights", "2", "inf", "withscores");
    D(d, "zunion", "1", "z", "aggregate", "min", "withscores");
    D(d, "zunion", "2", "z", "z", "aggregate", "max", "withscores");
    D(d, "zunion", "2", "z", "z", "withscores");
    D(d, "zintercard", "2", "z", "z");
    D(d, "zintercard", "2", "z", "z", "limit", "x");
    D(d, "zmpop", "2", "nokey", "z", "max", "count", "2");
    D(d, "zmpop", "1", "k", "min");
    D(d, "zpopmax", "z", "10");
    D(d, "exists", "z");
    D(d, "zrange", "nokey", "0", "-1");
    D(d, "zrangestore", "d", "nokey", "0", "-1");
    D(d, "exists", "d");
}

/* Option combinations and edge ranges: repeated options, empty and
 * inverted ranges, extreme ranks, a destination that is also a source. */
static void edges(diff_t *d)
{
    D(d, "FLUSHALL");
    D(d, "zadd", "z", "1", "a", "2", "b", "3", "c");
    D(d, "zintercard", "5", "z");
    D(d, "zunion", "5", "z");
    D(d, "zinter", "0", "z");
    D(d, "zdiff", "2", "z");
    D(d, "zunion", "1", "z", "withscores", "withscores");
    D(d, "zinterstore", "d", "1", "z", "withscores");
    D(d, "zintercard", "1", "z", "limit", "1", "limit", "2");
    D(d, "zunion", "1", "z", "weights", "1", "weights", "2");
    D(d, "zdiff", "1", "z", "weights", "1");
    D(d, "zdiff", "1", "z", "aggregate", "sum");
    D(d, "zrangebyscore", "z", "0", "1", "limit", "0");
    D(d, "zrangebyscore", "z", "0", "1", "withscores", "limit", "0", "1", "withscores");
    D(d, "zrange", "z", "0", "1", "rev", "rev");
    D(d, "zrange", "z", "0", "1", "byscore", "bylex");
    D(d, "zrevrange", "z", "0", "1", "rev");
    D(d, "zrangestore", "d", "z", "0", "1", "rev", "limit", "0", "1");
    D(d, "zadd", "z", "INCR", "1");
    D(d, "zadd", "z", "gt", "nx", "1", "a");
    D(d, "zrandmember", "z", "0");
    D(d, "zrandmember", "nokey", "5");
    D(d, "zscan", "z", "0", "count", "1", "match");
    D(d, "zpopmin", "nokey", "0");
    D(d, "zmpop", "1", "z", "min", "count", "1", "count", "2");
    D(d, "zmpop", "1", "z", "MIN", "COUNT");
    D(d, "zrange", "z", "0", "-1", "byscore");
    D(d, "zrange", "z", "(1", "(1", "byscore");
    D(d, "zrange", "z", "[a", "[a", "bylex");
    D(d, "zrange", "z", "(a", "[a", "bylex");
    D(d, "zrange", "z", "+", "-", "bylex");
    D(d, "zrange", "z", "+", "+", "bylex");
    D(d, "zrange", "z", "-", "-", "bylex");
    D(d, "zrevrangebylex", "z", "-", "+");
    D(d, "zrevrangebylex", "z", "+", "-");
    D(d, "zlexcount", "z", "+", "-");
    D(d, "zrangebyscore", "z", "-inf", "+inf", "limit", "0", "0");
    D(d, "zrangebyscore", "z", "-inf", "+inf", "limit", "2", "100");
    D(d, "zrangebyscore", "z", "-inf", "+inf", "limit", "3", "1");
    D(d, "zrevrangebyscore", "z", "+inf", "-inf", "limit", "2", "5");
    D(d, "zremrangebyrank", "z", "-100", "100");
    D(d, "exists", "z");
    D(d, "zadd", "z", "1", "a");
    D(d, "zremrangebyrank", "z", "1", "0");
    D(d, "zremrangebyscore", "z", "(1", "1");
    D(d, "zremrangebylex", "z", "+", "-");
    D(d, "zcard", "z");
    D(d, "zadd", "z", "1", "a", "1", "b", "1", "c");
    D(d, "zrange", "z", "-1000000000000", "1000000000000");
    D(d, "zrange", "z", "9223372036854775807", "-9223372036854775808");
    D(d, "zrange", "z", "-9223372036854775808", "9223372036854775807");
    D(d, "zrange", "z", "0", "0", "withscores", "limit", "0", "-1");
    D(d, "zrangestore", "d", "z", "0", "-1", "byscore");
    D(d, "zrangestore", "d", "z", "0", "-1", "bylex");
    D(d, "zrangestore", "d", "z", "-", "+", "bylex", "limit", "1", "1");
    D(d, "zrange", "d", "0", "-1", "withscores");
    D(d, "zinterstore", "d", "1", "z", "aggregate", "max", "weights", "2");
    D(d, "zrange", "d", "0", "-1", "withscores");
    D(d, "zunionstore", "z", "2", "z", "z");
    D(d, "zrange", "z", "0", "-1", "withscores");
    D(d, "zrangestore", "z", "z", "0", "0");
    D(d, "zrange", "z", "0", "-1", "withscores");
}

static void keyspace(diff_t *d)
{
    D(d, "zadd", "z", "1", "a", "2", "b");
    D(d, "type", "z");
    D(d, "object", "encoding", "z");
    D(d, "get", "z");
    D(d, "incr", "z");
    D(d, "lpush", "z", "a");
    D(d, "sadd", "z", "a");
    D(d, "hset", "z", "a", "b");
    D(d, "llen", "z");
    D(d, "scard", "z");
    D(d, "hlen", "z");
    D(d, "sinter", "z");
    D(d, "sunion", "z");
    D(d, "zadd", "s", "1", "a");
    D(d, "set", "str", "v");
    D(d, "zadd", "str", "1", "a");
    D(d, "zcard", "str");
    D(d, "zscore", "str", "a");
    D(d, "zrange", "str", "0", "-1");
    D(d, "zrangebyscore", "str", "0", "1");
    D(d, "zrank", "str", "a");
    D(d, "zcount", "str", "0", "1");
    D(d, "zlexcount", "str", "-", "+");
    D(d, "zrandmember", "str");
    D(d, "zscan", "str", "0");
    D(d, "zunion", "1", "str");
    D(d, "zinter", "1", "str");
    D(d, "zdiff", "1", "str");
    D(d, "zintercard", "1", "str");
    D(d, "zrem", "str", "a");
    D(d, "zincrby", "str", "1", "a");
    D(d, "zremrangebyrank", "str", "0", "1");
    D(d, "zpopmin", "str");
    D(d, "zpopmax", "str", "1");
    D(d, "zmpop", "1", "str", "min");
    D(d, "zrangestore", "d", "str", "0", "-1");
    D(d, "zunionstore", "d", "1", "str");
    D(d, "copy", "z", "z2");
    D(d, "zrange", "z2", "0", "-1", "withscores");
    D(d, "object", "encoding", "z2");
    D(d, "rename", "z2", "z3");
    D(d, "zrange", "z3", "0", "-1", "withscores");
    D(d, "move", "z3", "1");
    D(d, "exists", "z3");
    D(d, "select", "1");
    D(d, "zrange", "z3", "0", "-1", "withscores");
    D(d, "select", "0");
    D(d, "expire", "z", "100");
    DT(d, "ttl", "z");
    D(d, "persist", "z");
    D(d, "del", "z");
    D(d, "exists", "z");
    D(d, "zadd", "big", "1",
      "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
      "aaaaaaa");
    D(d, "object", "encoding", "big");
    D(d, "copy", "big", "big2");
    D(d, "object", "encoding", "big2");
    D(d, "multi");
    D(d, "zadd", "m", "1", "a", "2", "b");
    D(d, "zincrby", "m", "2", "a");
    D(d, "zrange", "m", "0", "-1", "withscores");
    D(d, "zpopmin", "m");
    D(d, "zscore", "m", "b");
    D(d, "zadd", "m", "nx", "xx", "1", "a");
    D(d, "exec");
}

Test(zsets, commands_resp2)
{
    diff_t d;
    rdiff_start_both(&d);
    commands(&d);
    rdiff_end_both(&d);
}

Test(zsets, commands_resp3)
{
    diff_t d;
    rdiff_start_both(&d);
    rdiff_hello3(&d);
    commands(&d);
    rdiff_end_both(&d);
}

Test(zsets, edges_resp2)
{
    diff_t d;
    rdiff_start_both(&d);
    edges(&d);
    rdiff_end_both(&d);
}

Test(zsets, edges_resp3)
{
    diff_t d;
    rdiff_start_both(&d);
    rdiff_hello3(&d);
    edges(&d);
    rdiff_end_both(&d);
}

Test(zsets, keyspace_wrongtype_multi_resp2)
{
    diff_t d;
    rdiff_start_both(&d);
    keyspace(&d);
    DS(&d, "KEYS", "*");
    rdiff_end_both(&d);
}

Test(zsets, keyspace_wrongtype_multi_resp3)
{
    diff_t d;
    rdiff_start_both(&d);
    rdiff_hello3(&d);
    keyspace(&d);
    rdiff_end_both(&d);
}
