#!/usr/bin/python3
"""test_redis_py.py - redis-py (Debian's python3-redis) against the server.

Exercises what a Python application does through redis-py: strings (SET with
its options, GETEX, GETDEL, INCRBYFLOAT, SETRANGE/GETRANGE, bit operations,
MSETNX), keys (DEL/UNLINK/EXISTS/TYPE/RENAME/COPY/KEYS/SCAN/RANDOMKEY/TOUCH/
OBJECT ENCODING), expiry (NX/XX/GT/LT, TTL/PTTL/EXPIRETIME, PERSIST, keys
that really expire and are reclaimed untouched), the 16 databases (db=N,
MOVE, SWAPDB, FLUSHDB), pipelines, transactions (MULTI/EXEC, WATCH with a
concurrent writer, the transaction() retry helper), RESP3 (protocol=3 when
the installed redis-py has it, and HELLO 3 on a raw socket in any case),
CONFIG GET/SET, INFO sections, SLOWLOG, CLIENT LIST/KILL/SETNAME, and AUTH
(requirepass, HELLO ... AUTH, an ACL user from a config file, ACL SETUSER).

Every test's expectations are Redis 7's behaviour: run it against
redis-server first (ATTIC_TEST_SERVER=redis) to prove that.

Environment:
  ATTIC_TEST_SERVER  atticdb (default) or redis: which server to start
  ATTICDB_SERVER     atticdb-server binary (default ./atticdb-server, or
                     $top_builddir/atticdb-server)
  REDIS_SERVER       redis-server binary (default: from PATH)

The module starts its own servers with attic_server.py (free port,
temporary directory, own process group, killed with the test process by
PDEATHSIG) and stops them by pid in tearDownModule/tearDownClass; a watchdog
ends the whole run after ATTIC_PY_TIMEOUT seconds (default 240). Every
client has socket timeouts.
"""

import inspect
import os
import signal
import sys
import threading
import time
import unittest

import redis
from redis.exceptions import NoPermissionError

from attic_server import KIND, Server, as_str as _s, stop_all as _stop_all

MAIN = None


def setUpModule():
    global MAIN
    MAIN = Server().start()


def tearDownModule():
    _stop_all()


class Base(unittest.TestCase):
    def setUp(self):
        self.r = MAIN.client()
        self.r.flushall()

    def tearDown(self):
        self.r.close()


class StringsTest(Base):
    def test_set_options(self):
        r = self.r
        self.assertTrue(r.set("s", "v1"))
        self.assertIsNone(r.set("s", "v2", nx=True))
        self.assertEqual(r.get("s"), b"v1")
        self.assertIsNone(r.set("missing", "x", xx=True))
        self.assertEqual(r.exists("missing"), 0)
        self.assertTrue(r.set("s", "v3", xx=True))
        self.assertEqual(r.set("s", "v4", get=True), b"v3")
        self.assertIsNone(r.set("fresh", "f", get=True))
        self.assertEqual(r.get("fresh"), b"f")
        self.assertTrue(r.set("e", "v", ex=100))
        self.assertIn(r.ttl("e"), (99, 100))
        self.assertTrue(r.set("p", "v", px=100000))
        self.assertTrue(99000 < r.pttl("p") <= 100000)
        at = int(time.time()) + 1000
        self.assertTrue(r.set("ea", "v", exat=at))
        self.assertEqual(r.expiretime("ea"), at)
        self.assertTrue(r.set("pa", "v", pxat=at * 1000 + 123))
        self.assertEqual(r.pexpiretime("pa"), at * 1000 + 123)
        # KEEPTTL keeps it, a plain SET drops it
        self.assertTrue(r.set("ea", "w", keepttl=True))
        self.assertEqual(r.expiretime("ea"), at)
        self.assertTrue(r.set("ea", "w2"))
        self.assertEqual(r.ttl("ea"), -1)
        # NX and GET together (Redis 7): no change, returns the old value
        self.assertEqual(r.set("s", "zz", nx=True, get=True), b"v4")
        self.assertEqual(r.get("s"), b"v4")
        with self.assertRaisesRegex(redis.ResponseError, "invalid expire time in 'set' command"):
            r.set("s", "v", ex=0)
        with self.assertRaisesRegex(redis.ResponseError, "syntax error"):
            r.execute_command("SET", "s", "v", "NX", "XX")
        with self.assertRaisesRegex(redis.ResponseError, "syntax error"):
            r.execute_command("SET", "s", "v", "EX", "10", "PX", "10000")
        self.assertEqual(r.get("s"), b"v4")

    def test_values_binary_long_and_empty(self):
        r = self.r
        vals = {
            "empty": b"",
            "bin": b"a\x00b\r\nc\xff",
            "24": b"x" * 24,
            "25": b"y" * 25,
            "big": bytes(range(256)) * 40,  # 10,240 bytes
        }
        for k, v in vals.items():
            self.assertTrue(r.set(k, v))
        for k, v in vals.items():
            self.assertEqual(r.get(k), v, k)
            self.assertEqual(r.strlen(k), len(v), k)
        self.assertEqual(r.mget(list(vals)), list(vals.values()))
        key = b"key\x00with\r\nbytes"
        self.assertTrue(r.set(key, b"val\x00"))
        self.assertEqual(r.get(key), b"val\x00")
        self.assertEqual(r.append("big", b"!" * 10), 10250)
        self.assertEqual(r.getrange("big", 10238, -1), b"\xfe\xff" + b"!" * 10)

    def test_getex_getdel(self):
        r = self.r
        r.set("g", "v")
        self.assertEqual(r.getex("g"), b"v")
        self.assertEqual(r.ttl("g"), -1)
        self.assertEqual(r.getex("g", ex=100), b"v")
        self.assertIn(r.ttl("g"), (99, 100))
        self.assertEqual(r.getex("g", persist=True), b"v")
        self.assertEqual(r.ttl("g"), -1)
        self.assertEqual(r.getex("g", px=50000), b"v")
        self.assertTrue(49000 < r.pttl("g") <= 50000)
        at = int(time.time()) + 5000
        self.assertEqual(r.getex("g", exat=at), b"v")
        self.assertEqual(r.expiretime("g"), at)
        self.assertIsNone(r.getex("nope", ex=10))
        self.assertEqual(r.getdel("g"), b"v")
        self.assertEqual(r.exists("g"), 0)
        self.assertIsNone(r.getdel("g"))
        with self.assertRaisesRegex(redis.ResponseError, "syntax error"):
            r.execute_command("GETEX", "g", "EX", "10", "PERSIST")

    def test_incr_family_and_incrbyfloat(self):
        r = self.r
        self.assertEqual(r.incr("n"), 1)
        self.assertEqual(r.incrby("n", 41), 42)
        self.assertEqual(r.decr("n"), 41)
        self.assertEqual(r.decrby("n", 50), -9)
        self.assertEqual(r.incrbyfloat("f", 10.5), 10.5)
        self.assertAlmostEqual(r.incrbyfloat("f", 0.1), 10.6)
        self.assertEqual(r.get("f"), b"10.6")
        r.set("f2", "5.0e3")
        self.assertEqual(r.incrbyfloat("f2", 200), 5200.0)
        self.assertEqual(r.get("f2"), b"5200")
        self.assertEqual(r.execute_command("INCRBYFLOAT", "f3", "3.0"), 3.0)
        self.assertEqual(r.get("f3"), b"3")  # no trailing zeros
        self.assertEqual(r.execute_command("INCRBYFLOAT", "f3", "1e2"), 103.0)
        self.assertEqual(r.get("f3"), b"103")
        r.set("str", "abc")
        with self.assertRaisesRegex(redis.ResponseError, "^value is not a valid float$"):
            r.incrbyfloat("str", 1)
        with self.assertRaisesRegex(redis.ResponseError, "^value is not an integer or out of range$"):
            r.incr("str")
        r.set("max", str(2 ** 63 - 1))
        with self.assertRaisesRegex(redis.ResponseError, "increment or decrement would overflow"):
            r.incr("max")

    def test_setrange_getrange_substr(self):
        r = self.r
        self.assertEqual(r.setrange("sr", 6, "Redis"), 11)
        self.assertEqual(r.get("sr"), b"\x00" * 6 + b"Redis")
        self.assertEqual(r.setrange("sr", 0, "Hello "), 11)
        self.assertEqual(r.get("sr"), b"Hello Redis")
        self.assertEqual(r.getrange("sr", 0, 4), b"Hello")
        self.assertEqual(r.getrange("sr", -5, -1), b"Redis")
        self.assertEqual(r.getrange("sr", 5, 3), b"")
        self.assertEqual(r.getrange("sr", 0, 1000), b"Hello Redis")
        self.assertEqual(r.getrange("nope", 0, 10), b"")
        self.assertEqual(r.execute_command("SUBSTR", "sr", 6, 8), b"Red")
        self.assertEqual(r.setrange("sr", 3000, "end"), 3003)
        self.assertEqual(r.strlen("sr"), 3003)
        self.assertEqual(r.getrange("sr", 2999, -1), b"\x00end")
        with self.assertRaisesRegex(redis.ResponseError, "offset is out of range"):
            r.setrange("sr", -1, "x")
        with self.assertRaisesRegex(redis.ResponseError, "string exceeds maximum allowed size"):
            r.setrange("sr", 536870912, "x")

    def test_bits(self):
        r = self.r
        self.assertEqual(r.setbit("b", 7, 1), 0)
        self.assertEqual(r.setbit("b", 7, 1), 1)
        self.assertEqual(r.getbit("b", 7), 1)
        self.assertEqual(r.getbit("b", 6), 0)
        self.assertEqual(r.getbit("b", 100000), 0)
        self.assertEqual(r.bitcount("b"), 1)
        self.assertEqual(r.setbit("b", 100, 1), 0)
        self.assertEqual(r.get("b"), b"\x01" + b"\x00" * 11 + b"\x08")
        self.assertEqual(r.bitcount("b"), 2)
        self.assertEqual(r.bitcount("b", 1, -1), 1)
        self.assertEqual(r.bitcount("b", 0, 7, mode="BIT"), 1)
        self.assertEqual(r.bitpos("b", 1), 7)
        self.assertEqual(r.bitpos("b", 0), 0)
        self.assertEqual(r.bitpos("b", 1, 1), 100)
        self.assertEqual(r.bitpos("b", 1, 8, 99, mode="BIT"), -1)
        self.assertEqual(r.bitpos("nope", 0), 0)
        self.assertEqual(r.bitpos("nope", 1), -1)
        r.set("ff", b"\xff\xf0")
        self.assertEqual(r.bitpos("ff", 0), 12)
        self.assertEqual(r.bitcount("ff"), 12)
        with self.assertRaisesRegex(redis.ResponseError, "bit offset is not an integer or out of range"):
            r.setbit("b", 2 ** 32, 1)
        with self.assertRaisesRegex(redis.ResponseError, "bit is not an integer or out of range"):
            r.execute_command("SETBIT", "b", "1", "2")

    def test_mset_msetnx_mget(self):
        r = self.r
        self.assertTrue(r.mset({"a": 1, "b": 2}))
        self.assertTrue(r.msetnx({"c": 3, "d": 4}))
        self.assertFalse(r.msetnx({"d": 5, "e": 6}))
        self.assertEqual(r.mget("a", "b", "c", "d", "e"), [b"1", b"2", b"3", b"4", None])
        with self.assertRaisesRegex(redis.ResponseError, "wrong number of arguments for 'mset' command"):
            r.execute_command("MSET", "a", "1", "b")


class KeysTest(Base):
    def test_del_unlink_exists_type_touch(self):
        r = self.r
        r.mset({"a": 1, "b": 2, "c": 3})
        self.assertEqual(r.exists("a", "a", "b", "nope"), 3)
        self.assertEqual(r.type("a"), b"string")
        self.assertEqual(r.type("nope"), b"none")
        self.assertEqual(r.touch("a", "b", "nope"), 2)
        self.assertEqual(r.delete("a", "nope"), 1)
        self.assertEqual(r.unlink("b", "c", "b"), 2)
        self.assertEqual(r.dbsize(), 0)

    def test_rename_copy(self):
        r = self.r
        r.set("src", "v", ex=1000)
        self.assertTrue(r.rename("src", "dst"))
        self.assertEqual(r.exists("src"), 0)
        self.assertEqual(r.get("dst"), b"v")
        self.assertGreater(r.ttl("dst"), 0)  # the TTL moves with the key
        with self.assertRaisesRegex(redis.ResponseError, "^no such key$"):
            r.rename("src", "x")
        r.set("other", "o")
        self.assertFalse(r.renamenx("dst", "other"))
        self.assertTrue(r.renamenx("dst", "new"))
        self.assertTrue(r.copy("new", "cp"))
        self.assertEqual(r.get("cp"), b"v")
        self.assertGreater(r.ttl("cp"), 0)
        self.assertFalse(r.copy("new", "other"))
        self.assertEqual(r.get("other"), b"o")
        self.assertTrue(r.copy("new", "other", replace=True))
        self.assertEqual(r.get("other"), b"v")
        self.assertTrue(r.copy("new", "new", destination_db=2))
        r2 = MAIN.client(db=2)
        try:
            self.assertEqual(r2.get("new"), b"v")
        finally:
            r2.close()
        with self.assertRaisesRegex(redis.ResponseError, "source and destination objects are the same"):
            r.copy("new", "new")

    def test_keys_scan_randomkey(self):
        r = self.r
        pipe = r.pipeline(transaction=False)
        for i in range(500):
            pipe.set("k:%d" % i, i)
        pipe.set("other", 1)
        pipe.set("k?", 1)
        pipe.execute()
        self.assertEqual(sorted(r.keys("k:1?")), sorted(b"k:1%d" % i for i in range(10)))
        self.assertEqual(r.keys("k\\?"), [b"k?"])
        self.assertEqual(sorted(r.keys("k:[2-3]0")), [b"k:20", b"k:30"])
        self.assertEqual(sorted(r.keys("k:[^0-8]")), [b"k:9"])
        self.assertEqual(len(r.keys("*")), 502)
        got = set(r.scan_iter(match="k:*", count=10))
        self.assertEqual(got, set(b"k:%d" % i for i in range(500)))
        self.assertEqual(len(set(r.scan_iter())), 502)
        self.assertEqual(len(set(r.scan_iter(_type="string"))), 502)
        self.assertEqual(set(r.scan_iter(_type="list")), set())
        for _ in range(20):
            k = r.randomkey()
            self.assertEqual(r.exists(k), 1, k)
        r.flushdb()
        self.assertIsNone(r.randomkey())
        with self.assertRaisesRegex(redis.ResponseError, "invalid cursor"):
            r.scan(cursor="abc")

    def test_scan_sees_keys_present_throughout(self):
        """A full SCAN returns every key that exists from start to end,
        even while other keys are added during the iteration."""
        r = self.r
        r.mset({"stay:%d" % i: i for i in range(1000)})
        seen = set()
        cursor = 0
        added = 0
        while True:
            cursor, keys = r.scan(cursor=cursor, count=50)
            seen.update(keys)
            r.mset({"new:%d:%d" % (added, j): 1 for j in range(20)})
            added += 1
            if cursor == 0:
                break
            self.assertLess(added, 5000, "SCAN does not end")
        missing = set(b"stay:%d" % i for i in range(1000)) - seen
        self.assertEqual(missing, set())

    def test_object_encoding(self):
        r = self.r
        r.set("int", "12345")
        r.set("short", "hello")
        r.set("long", "x" * 100)
        self.assertEqual(r.object("encoding", "int"), b"int")
        self.assertEqual(r.object("encoding", "short"), b"embstr")
        self.assertEqual(r.object("encoding", "long"), b"raw")
        self.assertIsNone(r.object("encoding", "nope"))
        r.append("short", "!")
        self.assertEqual(r.object("encoding", "short"), b"raw")


class ExpiryTest(Base):
    def test_expire_options(self):
        r = self.r
        r.set("k", "v")
        self.assertFalse(r.expire("k", 100, xx=True))  # no TTL yet
        self.assertTrue(r.expire("k", 100, nx=True))
        self.assertFalse(r.expire("k", 200, nx=True))
        self.assertTrue(r.expire("k", 200, xx=True))
        self.assertFalse(r.expire("k", 50, gt=True))
        self.assertTrue(r.expire("k", 300, gt=True))
        self.assertFalse(r.expire("k", 400, lt=True))
        self.assertTrue(r.expire("k", 150, lt=True))
        self.assertIn(r.ttl("k"), (149, 150))
        self.assertTrue(149000 < r.pttl("k") <= 150000)
        r.set("nottl", "v")
        self.assertFalse(r.expire("nottl", 100, gt=True))  # no TTL = infinite
        self.assertTrue(r.expire("nottl", 100, lt=True))
        self.assertFalse(r.expire("nope", 100))
        with self.assertRaisesRegex(redis.ResponseError, "NX and XX, GT or LT options at the same time are not compatible"):
            r.execute_command("EXPIRE", "k", "10", "NX", "XX")
        with self.assertRaisesRegex(redis.ResponseError, "GT and LT options at the same time are not compatible"):
            r.execute_command("EXPIRE", "k", "10", "GT", "LT")
        with self.assertRaisesRegex(redis.ResponseError, "Unsupported option foo"):
            r.execute_command("EXPIRE", "k", "10", "foo")

    def test_ttl_expiretime_persist(self):
        r = self.r
        self.assertEqual(r.ttl("nope"), -2)
        self.assertEqual(r.pttl("nope"), -2)
        self.assertEqual(r.expiretime("nope"), -2)
        self.assertEqual(r.pexpiretime("nope"), -2)
        r.set("k", "v")
        self.assertEqual(r.ttl("k"), -1)
        self.assertEqual(r.expiretime("k"), -1)
        self.assertEqual(r.pexpiretime("k"), -1)
        at = int(time.time()) + 3600
        self.assertTrue(r.expireat("k", at))
        self.assertEqual(r.expiretime("k"), at)
        self.assertEqual(r.pexpiretime("k"), at * 1000)
        self.assertTrue(r.pexpireat("k", at * 1000 + 555))
        self.assertEqual(r.pexpiretime("k"), at * 1000 + 555)
        self.assertEqual(r.expiretime("k"), at + 1)  # rounded
        self.assertTrue(r.pexpire("k", 123456))
        self.assertTrue(123000 < r.pttl("k") <= 123456)
        self.assertTrue(r.persist("k"))
        self.assertFalse(r.persist("k"))
        self.assertEqual(r.ttl("k"), -1)
        # a time in the past deletes the key
        self.assertTrue(r.expire("k", -1))
        self.assertEqual(r.exists("k"), 0)
        r.set("k2", "v")
        self.assertTrue(r.expireat("k2", 1000))
        self.assertEqual(r.exists("k2"), 0)
        with self.assertRaisesRegex(redis.ResponseError, "invalid expire time in 'expire' command"):
            r.execute_command("EXPIRE", "k", str(2 ** 63 - 1))

    def test_keys_really_expire(self):
        r = self.r
        r.set("short", "v", px=100)
        r.set("long", "v", ex=1000)
        deadline = time.monotonic() + 10
        while r.exists("short") and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertIsNone(r.get("short"))
        self.assertEqual(r.ttl("short"), -2)
        self.assertEqual(r.get("long"), b"v")
        self.assertEqual(r.keys("*"), [b"long"])

    def test_expired_keys_reclaimed_untouched(self):
        """DBSIZE drops to 0 with no client touching the expired keys."""
        r9 = MAIN.client(db=9)
        try:
            r9.mset({"x:%d" % i: "v" * (i % 50) for i in range(200)})
            pipe = r9.pipeline(transaction=False)
            for i in range(200):
                pipe.pexpire("x:%d" % i, 100)
            pipe.execute()
            deadline = time.monotonic() + 15
            while r9.dbsize() > 0 and time.monotonic() < deadline:
                time.sleep(0.1)
            self.assertEqual(r9.dbsize(), 0)
        finally:
            r9.close()


class DatabasesTest(Base):
    def test_select_move_swapdb_flushdb(self):
        r0 = self.r
        r3 = MAIN.client(db=3)
        r15 = MAIN.client(db=15)
        try:
            r3.set("k", "three")
            self.assertIsNone(r0.get("k"))
            self.assertEqual(r3.get("k"), b"three")
            r0.set("m", "zero")
            self.assertTrue(r0.move("m", 3))
            self.assertFalse(r0.move("m", 3))  # gone from db 0
            self.assertEqual(r3.get("m"), b"zero")
            r0.set("m", "again")
            self.assertFalse(r0.move("m", 3))  # exists in db 3 already
            self.assertEqual(r0.get("m"), b"again")
            with self.assertRaisesRegex(redis.ResponseError, "source and destination objects are the same"):
                r0.move("m", 0)
            self.assertTrue(r0.swapdb(0, 3))
            self.assertEqual(r0.get("k"), b"three")
            self.assertEqual(r3.get("m"), b"again")
            self.assertEqual(r0.dbsize(), 2)
            self.assertEqual(r3.dbsize(), 1)
            r15.set("last", "15")
            self.assertTrue(r3.flushdb())
            self.assertEqual(r3.dbsize(), 0)
            self.assertEqual(r0.dbsize(), 2)
            self.assertEqual(r15.get("last"), b"15")
            self.assertTrue(r0.execute_command("SELECT", "15"))
            with self.assertRaisesRegex(redis.ResponseError, "DB index is out of range"):
                r0.execute_command("SELECT", "16")
            info = r0.info("keyspace")
            self.assertIn("db0", info)
            self.assertIn("db15", info)
            self.assertEqual(info["db0"]["keys"], 2)
        finally:
            r3.close()
            r15.close()
        bad = MAIN.client(db=16)
        try:
            with self.assertRaises((redis.ResponseError, redis.ConnectionError)):
                bad.ping()
        finally:
            bad.close()


class PipelineTest(Base):
    def test_pipeline_1000_in_order(self):
        r = self.r
        pipe = r.pipeline(transaction=False)
        want = []
        for i in range(1000):
            m = i % 4
            if m == 0:
                pipe.set("p:%d" % (i % 50), i)
                want.append(True)
            elif m == 1:
                pipe.get("p:%d" % ((i - 1) % 50))
                want.append(str(i - 1).encode())
            elif m == 2:
                pipe.incr("counter")
                want.append(i // 4 + 1)
            else:
                pipe.echo("e%d" % i)
                want.append(b"e%d" % i)
        self.assertEqual(pipe.execute(), want)

    def test_pipeline_errors_in_place(self):
        r = self.r
        pipe = r.pipeline(transaction=False)
        pipe.set("a", "x").incr("a").set("b", "y").get("b")
        res = pipe.execute(raise_on_error=False)
        self.assertTrue(res[0])
        self.assertIsInstance(res[1], redis.ResponseError)
        self.assertEqual(res[2:], [True, b"y"])


class TransactionTest(Base):
    def test_multi_exec(self):
        r = self.r
        pipe = r.pipeline(transaction=True)
        pipe.set("t", 1).incr("t").get("t").set("u", "x", ex=100)
        self.assertEqual(pipe.execute(), [True, 2, b"2", True])
        self.assertGreater(r.ttl("u"), 0)

    def test_runtime_error_inside_exec(self):
        r = self.r
        pipe = r.pipeline(transaction=True)
        pipe.set("s", "x").incr("s").set("t", "y")
        res = pipe.execute(raise_on_error=False)
        self.assertTrue(res[0])
        self.assertIsInstance(res[1], redis.ResponseError)
        self.assertTrue(res[2])
        self.assertEqual(r.get("t"), b"y")

    def test_queue_time_error_aborts(self):
        r = self.r
        pipe = r.pipeline(transaction=True)
        pipe.set("before", "1")
        pipe.execute_command("NOSUCHCOMMAND", "x")
        pipe.set("after", "1")
        with self.assertRaises(redis.ResponseError):
            pipe.execute()
        self.assertEqual(r.exists("before", "after"), 0)
        # the raw replies: QUEUED, the error, QUEUED, EXECABORT
        c = MAIN.raw()
        try:
            self.assertEqual(c.cmd("MULTI"), b"+OK\r\n")
            self.assertEqual(c.cmd("SET", "k", "v"), b"+QUEUED\r\n")
            self.assertEqual(c.cmd("GET"), b"-ERR wrong number of arguments for 'get' command\r\n")
            self.assertEqual(c.cmd("EXEC"), b"-EXECABORT Transaction discarded because of previous errors.\r\n")
            self.assertEqual(c.cmd("EXISTS", "k"), b":0\r\n")
            self.assertEqual(c.cmd("EXEC"), b"-ERR EXEC without MULTI\r\n")
            self.assertEqual(c.cmd("MULTI"), b"+OK\r\n")
            self.assertEqual(c.cmd("MULTI"), b"-ERR MULTI calls can not be nested\r\n")
            self.assertEqual(c.cmd("SET", "k", "v"), b"+QUEUED\r\n")
            self.assertEqual(c.cmd("DISCARD"), b"+OK\r\n")
            self.assertEqual(c.cmd("EXISTS", "k"), b":0\r\n")
        finally:
            c.close()

    def test_watch_concurrent_modification(self):
        r = self.r
        other = MAIN.client()
        try:
            r.set("w", "0")
            with r.pipeline() as pipe:
                pipe.watch("w")
                self.assertEqual(pipe.get("w"), b"0")
                other.set("w", "changed")  # another connection
                pipe.multi()
                pipe.set("w", "mine")
                with self.assertRaises(redis.WatchError):
                    pipe.execute()
            self.assertEqual(r.get("w"), b"changed")
            # not changed: EXEC runs
            with r.pipeline() as pipe:
                pipe.watch("w")
                pipe.multi()
                pipe.set("w", "mine")
                self.assertEqual(pipe.execute(), [True])
            self.assertEqual(r.get("w"), b"mine")
            # UNWATCH forgets the watch
            with r.pipeline() as pipe:
                pipe.watch("w")
                other.set("w", "again")
                pipe.unwatch()
                pipe.multi()
                pipe.set("w", "after-unwatch")
                self.assertEqual(pipe.execute(), [True])
            self.assertEqual(r.get("w"), b"after-unwatch")
            # a watched key that did not exist and is created aborts too
            with r.pipeline() as pipe:
                pipe.watch("created")
                other.set("created", "1")
                pipe.multi()
                pipe.set("created", "2")
                with self.assertRaises(redis.WatchError):
                    pipe.execute()
            # a change in another database does not abort
            o5 = MAIN.client(db=5)
            try:
                with r.pipeline() as pipe:
                    pipe.watch("w")
                    o5.set("w", "db5")
                    pipe.multi()
                    pipe.set("w", "ok")
                    self.assertEqual(pipe.execute(), [True])
            finally:
                o5.close()
        finally:
            other.close()

    def test_transaction_helper_retries(self):
        r = self.r
        other = MAIN.client()
        attempts = []
        r.set("t", "10")

        def func(pipe):
            v = int(pipe.get("t"))
            attempts.append(v)
            if len(attempts) == 1:
                other.incr("t")  # makes the first EXEC fail
            pipe.multi()
            pipe.set("t", v * 2)

        try:
            res = r.transaction(func, "t")
        finally:
            other.close()
        self.assertEqual(attempts, [10, 11])
        self.assertEqual(res, [True])
        self.assertEqual(r.get("t"), b"22")

    def test_concurrent_optimistic_increments(self):
        """4 threads x 25 WATCH/GET/MULTI/SET/EXEC increments, each on its
        own connection: every one lands exactly once."""
        errors = []

        def worker():
            c = MAIN.client()
            try:
                for _ in range(25):
                    c.transaction(lambda p: (lambda v: (p.multi(), p.set("ctr", int(v or 0) + 1)))(p.get("ctr")),
                                  "ctr")
            except Exception as e:  # reported below
                errors.append(e)
            finally:
                c.close()

        threads = [threading.Thread(target=worker) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        self.assertFalse(any(t.is_alive() for t in threads), "a worker hung")
        self.assertEqual(errors, [])
        self.assertEqual(self.r.get("ctr"), b"100")


def _has_protocol_param():
    return "protocol" in inspect.signature(redis.Redis.__init__).parameters


class Resp3Test(Base):
    @unittest.skipUnless(_has_protocol_param(),
                         "redis-py %s has no protocol=3 (added in redis-py 5.0)" % redis.__version__)
    def test_protocol_3_client(self):
        r3 = MAIN.client(protocol=3)
        try:
            self.assertTrue(r3.set("a", "1"))
            self.assertEqual(r3.get("a"), b"1")
            self.assertIsNone(r3.get("nope"))
            self.assertEqual(r3.mget("a", "nope"), [b"1", None])
            self.assertEqual(r3.incrbyfloat("f", 1.5), 1.5)
            self.assertEqual(r3.execute_command("HELLO")[b"proto"], 3)
            pipe = r3.pipeline()
            pipe.set("b", 2).incr("b").ttl("b")
            self.assertEqual(pipe.execute(), [True, 3, -1])
        finally:
            r3.close()

    def test_hello_3_raw(self):
        """HELLO 3 on a plain socket: RESP3 maps and nulls, back with HELLO 2."""
        c = MAIN.raw()
        try:
            hello = c.cmd("HELLO", "3")
            self.assertTrue(hello.startswith(b"%7\r\n$6\r\nserver\r\n"), hello)
            self.assertIn(b"$5\r\nproto\r\n:3\r\n", hello)
            for field in (b"version", b"id", b"mode", b"role", b"modules"):
                self.assertIn(b"\r\n$%d\r\n%s\r\n" % (len(field), field), hello)
            self.assertEqual(c.cmd("GET", "nope"), b"_\r\n")
            self.assertEqual(c.cmd("SET", "a", "1"), b"+OK\r\n")
            self.assertEqual(c.cmd("MGET", "a", "nope"), b"*2\r\n$1\r\n1\r\n_\r\n")
            self.assertEqual(c.cmd("CONFIG", "GET", "maxclients"), b"%1\r\n$10\r\nmaxclients\r\n$5\r\n10000\r\n")
            self.assertEqual(c.cmd("HELLO", "4"), b"-NOPROTO unsupported protocol version\r\n")
            hello2 = c.cmd("HELLO", "2", "SETNAME", "py-raw")
            self.assertTrue(hello2.startswith(b"*14\r\n$6\r\nserver\r\n"), hello2)
            self.assertIn(b"$5\r\nproto\r\n:2\r\n", hello2)
            self.assertEqual(c.cmd("GET", "nope"), b"$-1\r\n")
            self.assertEqual(c.cmd("CLIENT", "GETNAME"), b"$6\r\npy-raw\r\n")
        finally:
            c.close()

    def test_client_name_and_id(self):
        c = MAIN.client(client_name="py-test")
        try:
            self.assertEqual(_s(c.client_getname()), "py-test")
            cid = c.client_id()
            self.assertIsInstance(cid, int)
            listing = c.client_list()
            self.assertIn("py-test", [e.get("name") for e in listing])
            self.assertEqual(len(c.time()), 2)
        finally:
            c.close()


class ServerCommandsTest(Base):
    """CONFIG GET/SET, INFO sections, SLOWLOG and CLIENT as redis-py uses them."""

    def test_config_get_set(self):
        r = self.r
        self.assertEqual(r.config_get("maxclients"), {"maxclients": "10000"})
        self.assertTrue(r.config_set("timeout", 300))
        self.assertEqual(r.config_get("timeout"), {"timeout": "300"})
        self.assertTrue(r.config_set("timeout", 0))
        self.assertEqual(r.config_get("timeout"), {"timeout": "0"})
        self.assertEqual(r.config_get("no-such-setting"), {})
        with self.assertRaisesRegex(redis.ResponseError, "Unknown option or number of arguments for CONFIG SET"):
            r.config_set("no-such-setting", "1")

    def test_info_sections(self):
        r = self.r
        r.set("a", "1")
        r.set("b", "2", ex=1000)
        server = r.info("server")
        self.assertIn("redis_version", server)
        self.assertIn("tcp_port", server)
        self.assertEqual(server["tcp_port"], MAIN.port)
        clients = r.info("clients")
        self.assertGreaterEqual(clients["connected_clients"], 1)
        self.assertIn("used_memory", r.info("memory"))
        self.assertIn("total_commands_processed", r.info("stats"))
        self.assertIn("loading", r.info("persistence"))
        self.assertEqual(r.info("keyspace")["db0"]["keys"], 2)
        self.assertEqual(r.info("keyspace")["db0"]["expires"], 1)
        stats = r.info("commandstats")
        self.assertIn("cmdstat_set", stats)
        self.assertGreaterEqual(stats["cmdstat_set"]["calls"], 2)
        everything = r.info()
        for field in ("redis_version", "connected_clients", "used_memory", "db0"):
            self.assertIn(field, everything)
        r.config_resetstat()
        self.assertNotIn("cmdstat_set", r.info("commandstats"))

    def test_slowlog(self):
        r = self.r
        old = r.config_get("slowlog-log-slower-than")["slowlog-log-slower-than"]
        try:
            self.assertTrue(r.slowlog_reset())
            self.assertTrue(r.config_set("slowlog-log-slower-than", 0))  # log everything
            r.set("slow", "v")
            r.get("slow")
            self.assertGreaterEqual(r.slowlog_len(), 2)
            entries = r.slowlog_get(10)
            commands = [e["command"] for e in entries]
            self.assertIn(b"SET slow v", commands)
            for e in entries:
                self.assertGreaterEqual(e["duration"], 0)
                self.assertIsInstance(e["id"], int)
            self.assertTrue(r.slowlog_reset())
            self.assertLessEqual(r.slowlog_len(), 1)  # SLOWLOG RESET itself may be logged after
        finally:
            r.config_set("slowlog-log-slower-than", old)

    def test_client_list_kill(self):
        victim = MAIN.client(client_name="victim")
        try:
            victim.ping()
            vid = victim.client_id()
            listing = self.r.client_list()
            mine = [e for e in listing if e.get("name") == "victim"]
            self.assertEqual(len(mine), 1, listing)
            self.assertEqual(int(mine[0]["id"]), vid)
            self.assertIn("addr", mine[0])
            self.assertEqual(self.r.client_kill_filter(_id=vid), 1)
            # the victim may live on another frontend: allow it a moment
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline:
                names = [e.get("name") for e in self.r.client_list()]
                if "victim" not in names:
                    break
                time.sleep(0.05)
            self.assertNotIn("victim", names)
        finally:
            victim.close()
        self.assertIn("id=", _s(self.r.execute_command("CLIENT", "INFO")))


class AuthTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.pw = Server(extra=["--requirepass", "secret"]).start()
        try:
            cls.acl = Server(config="user alice on >pw ~app:* +@all\n").start()
        except Exception:
            cls.pw.stop()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.pw.stop()
        cls.acl.stop()

    def test_requirepass(self):
        anon = self.pw.client()
        try:
            with self.assertRaisesRegex(redis.AuthenticationError, "Authentication required"):
                anon.get("x")
        finally:
            anon.close()
        wrong = self.pw.client(password="wrong")
        try:
            # redis-py 4.3 raises ResponseError for a failed AUTH at connect
            with self.assertRaisesRegex((redis.AuthenticationError, redis.ResponseError), "^WRONGPASS"):
                wrong.ping()
        finally:
            wrong.close()
        good = self.pw.client(password="secret")
        try:
            self.assertTrue(good.ping())
            self.assertTrue(good.set("x", "1"))
            self.assertEqual(_s(good.acl_whoami()), "default")
        finally:
            good.close()
        c = self.pw.raw()
        try:
            self.assertEqual(c.cmd("GET", "x"), b"-NOAUTH Authentication required.\r\n")
            self.assertEqual(c.cmd("AUTH", "wrong"),
                             b"-WRONGPASS invalid username-password pair or user is disabled.\r\n")
            self.assertEqual(c.cmd("AUTH", "secret"), b"+OK\r\n")
            self.assertEqual(c.cmd("GET", "x"), b"$1\r\n1\r\n")
        finally:
            c.close()
        # HELLO with AUTH and SETNAME authenticates in the same command
        c = self.pw.raw()
        try:
            self.assertEqual(c.cmd("HELLO", "2", "AUTH", "default", "wrong"),
                             b"-WRONGPASS invalid username-password pair or user is disabled.\r\n")
            self.assertEqual(c.cmd("GET", "x"), b"-NOAUTH Authentication required.\r\n")
            hello = c.cmd("HELLO", "2", "AUTH", "default", "secret", "SETNAME", "app1")
            self.assertTrue(hello.startswith(b"*14\r\n$6\r\nserver\r\n"), hello)
            self.assertEqual(c.cmd("CLIENT", "GETNAME"), b"$4\r\napp1\r\n")
            self.assertEqual(c.cmd("GET", "x"), b"$1\r\n1\r\n")
        finally:
            c.close()

    def test_acl_user_from_config(self):
        alice = self.acl.client(username="alice", password="pw")
        try:
            self.assertEqual(_s(alice.acl_whoami()), "alice")
            self.assertTrue(alice.set("app:1", "x"))
            self.assertEqual(alice.get("app:1"), b"x")
            with self.assertRaises(NoPermissionError):
                alice.get("other")
            with self.assertRaises(NoPermissionError):
                alice.set("other", "y")
        finally:
            alice.close()
        bad = self.acl.client(username="alice", password="nope")
        try:
            with self.assertRaisesRegex((redis.AuthenticationError, redis.ResponseError), "^WRONGPASS"):
                bad.ping()
        finally:
            bad.close()
        default = self.acl.client()  # the default user has no password here
        try:
            self.assertEqual(default.exists("other"), 0)
            self.assertEqual(default.get("app:1"), b"x")
            users = [u.decode() if isinstance(u, bytes) else u for u in default.execute_command("ACL", "LIST")]
            line = [u for u in users if u.startswith("user alice ")]
            self.assertEqual(len(line), 1, users)
            self.assertIn("~app:*", line[0])
            self.assertIn("+@all", line[0])
        finally:
            default.close()
        c = self.acl.raw()
        try:
            self.assertEqual(c.cmd("AUTH", "alice", "pw"), b"+OK\r\n")
            self.assertEqual(c.cmd("GET", "other"),
                             b"-NOPERM this user has no permissions to access one of the keys used as arguments\r\n")
        finally:
            c.close()

    def test_acl_setuser(self):
        admin = self.acl.client()
        try:
            self.assertTrue(admin.acl_setuser("bob", enabled=True, passwords=["+pw2"], keys=["bob:*"],
                                              commands=["+get", "+set"]))
        finally:
            admin.close()
        bob = self.acl.client(username="bob", password="pw2")
        try:
            self.assertTrue(bob.set("bob:1", "1"))
            self.assertEqual(bob.get("bob:1"), b"1")
            with self.assertRaisesRegex(NoPermissionError, "no permissions to run the 'incr' command"):
                bob.execute_command("INCR", "bob:1")
            with self.assertRaises(NoPermissionError):
                bob.get("app:1")
        finally:
            bob.close()


def _watchdog(seconds):
    def fire(signum, frame):
        sys.stderr.write("test_redis_py: watchdog: no result after %d s, stopping\n" % seconds)
        _stop_all()
        os._exit(1)

    signal.signal(signal.SIGALRM, fire)
    signal.alarm(seconds)


if __name__ == "__main__":
    _watchdog(int(os.environ.get("ATTIC_PY_TIMEOUT", "240")))
    print("test_redis_py: redis-py %s against %s" % (redis.__version__, KIND))
    try:
        unittest.main(verbosity=2)
    finally:
        _stop_all()
