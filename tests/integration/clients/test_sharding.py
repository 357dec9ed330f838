"""test_sharding.py - AtticDB behind the sharding Redis users already run
(issue 16 item 4, D35), with real clients on loopback:

  ClusterTest     three atticdb-servers with cluster-enabled and one
                  topology file: CLUSTER's replies, -MOVED, -CROSSSLOT and
                  cluster mode's refusals byte for byte as Redis 7.0.15
                  gives them, redis-py's RedisCluster and redis-cli -c
                  writing and reading through every node, each key found on
                  the node its slot names and nowhere else; ioredis's
                  Cluster the same, when node and ioredis are there.
  TwemproxyTest   three plain atticdb-servers behind nutcracker (twemproxy,
                  fnv1a_64 + modula): every acked key is on the shard the
                  proxy's hash names. Skipped without /usr/sbin/nutcracker.
  BadTopologyTest a topology file with an error stops the start, with the
                  line and the reason.

Run by tests/integration/sharding.sh with Debian's /usr/bin/python3.
"""

import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import unittest
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attic_server  # noqa: E402
import redis  # noqa: E402
from redis.cluster import ClusterNode, RedisCluster  # noqa: E402

IDS = ["a" * 40, "b" * 40, "c" * 40]
RANGES = [(0, 5460), (5461, 10922), (10923, 16383)]


def free_ports(n):
    """n free loopback ports below 55536, so that a cluster bus port (port +
    10000, as Redis names it) is one too."""
    socks, ports = [], []
    while len(ports) < n:
        s = socket.socket()
        try:
            s.bind(("127.0.0.1", random.randint(20000, 45000)))
        except OSError:
            s.close()
            continue
        socks.append(s)
        ports.append(s.getsockname()[1])
    for s in socks:
        s.close()
    return ports


def crc16(data):
    crc = 0
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else crc << 1
            crc &= 0xFFFF
    return crc


def key_slot(key):
    k = key.encode()
    s = k.find(b"{")
    if s >= 0:
        e = k.find(b"}", s + 1)
        if e > s + 1:
            k = k[s + 1:e]
    return crc16(k) & 16383


def owner_of(slot):
    for i, (a, b) in enumerate(RANGES):
        if a <= slot <= b:
            return i
    raise AssertionError(slot)


class Proc:
    """A server (or proxy) in its own process group, stopped by pid."""

    def __init__(self, argv, workdir):
        self.dir = workdir
        self.out = open(os.path.join(workdir, "stderr.txt"), "wb")
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=self.out,
                                     stderr=self.out, start_new_session=True,
                                     preexec_fn=attic_server._die_with_parent)

    def wait_port(self, port, ping=True):
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                return False
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
                    if not ping:
                        return True
                    s.settimeout(1)
                    s.sendall(b"PING\r\n")
                    if s.recv(64)[:1] in (b"+", b"-"):
                        return True
            except OSError:
                pass
            time.sleep(0.05)
        return False

    def stop(self):
        attic_server.stop_group(self.proc)
        self.out.close()

    def output(self):
        with open(os.path.join(self.dir, "stderr.txt"), errors="replace") as f:
            return f.read()


def start_atticdb(workdir, port, extra=()):
    data = os.path.join(workdir, "data")
    os.makedirs(data, exist_ok=True)
    argv = [attic_server._server_binary(), "--port", str(port), "--bind", "127.0.0.1", "--dir",
            data, "--logfile", os.path.join(workdir, "server.log"), "--frontends", "2"]
    return Proc(argv + list(extra), workdir)


def raw(port):
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.settimeout(10)
    return attic_server.RawConn(s)


class ClusterTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.top = tempfile.mkdtemp(prefix="attic-cluster-")
        cls.ports = free_ports(3)
        cls.conf = os.path.join(cls.top, "nodes.conf")
        with open(cls.conf, "w") as f:
            f.write("# the same file on every node\n")
            for i in range(3):
                f.write("%s 127.0.0.1:%d@%d master - 0 0 %d connected %d-%d\n"
                        % (IDS[i], cls.ports[i], cls.ports[i] + 10000, i + 1, RANGES[i][0],
                           RANGES[i][1]))
        cls.procs = []
        for i, port in enumerate(cls.ports):
            d = os.path.join(cls.top, "n%d" % i)
            os.mkdir(d)
            p = start_atticdb(d, port, ["--cluster-enabled", "yes", "--cluster-config-file",
                                        cls.conf])
            cls.procs.append(p)
            if not p.wait_port(port):
                out = p.output()
                cls.tearDownClass()
                raise RuntimeError("node %d did not start: %s" % (i, out))

    @classmethod
    def tearDownClass(cls):
        for p in cls.procs:
            p.stop()
        shutil.rmtree(cls.top, ignore_errors=True)

    def node(self, i):
        return redis.Redis(host="127.0.0.1", port=self.ports[i], **attic_server.CLIENT_TIMEOUTS)

    def test_info_myid_and_nodes(self):
        for i in range(3):
            c = self.node(i)
            r = raw(self.ports[i])
            r.sock.sendall(b"CLUSTER INFO\r\n")
            info = r.reply().decode()
            r.close()
            self.assertIn("\r\ncluster_state:ok\r\n", info)
            self.assertIn("\r\ncluster_slots_assigned:16384\r\ncluster_slots_ok:16384\r\n", info)
            self.assertIn("\r\ncluster_known_nodes:3\r\ncluster_size:3\r\n", info)
            self.assertIn("\r\ncluster_current_epoch:3\r\ncluster_my_epoch:%d\r\n" % (i + 1),
                          info)
            self.assertEqual(c.execute_command("CLUSTER MYID"), IDS[i].encode())
            self.assertEqual(c.info("cluster")["cluster_enabled"], 1)
            r = raw(self.ports[i])
            r.sock.sendall(b"CLUSTER NODES\r\n")
            nodes = r.reply()
            r.close()
            self.assertTrue(nodes.startswith(b"$") and nodes.endswith(b"\n\r\n"), nodes)
            lines = nodes.split(b"\r\n", 1)[1][:-2].decode().splitlines()
            self.assertEqual(len(lines), 3)
            for j, line in enumerate(lines):
                want = "%s 127.0.0.1:%d@%d %smaster - 0 0 %d connected %d-%d" % (
                    IDS[j], self.ports[j], self.ports[j] + 10000, "myself," if i == j else "",
                    j + 1, RANGES[j][0], RANGES[j][1])
                self.assertEqual(line, want)
            c.close()

    def test_slots_and_shards_bytes(self):
        def node_entry(j, resp3):
            return b"*4\r\n$9\r\n127.0.0.1\r\n:%d\r\n$40\r\n%s\r\n%s" % (
                self.ports[j], IDS[j].encode(), b"%0\r\n" if resp3 else b"*0\r\n")

        for resp3 in (False, True):
            want = b"*3\r\n" + b"".join(
                b"*3\r\n:%d\r\n:%d\r\n" % RANGES[j] + node_entry(j, resp3) for j in range(3))
            r = raw(self.ports[1])
            if resp3:
                r.sock.sendall(b"HELLO 3\r\n")
                r.reply()
            r.sock.sendall(b"CLUSTER SLOTS\r\n")
            self.assertEqual(r.reply(), want)
            r.close()
        shards = self.node(0).execute_command("CLUSTER SHARDS")
        self.assertEqual(len(shards), 3)
        for j, shard in enumerate(shards):
            shard = dict(zip(shard[::2], shard[1::2]))
            self.assertEqual(shard[b"slots"], list(RANGES[j]))
            (node,) = shard[b"nodes"]
            node = dict(zip(node[::2], node[1::2]))
            self.assertEqual(node[b"id"], IDS[j].encode())
            self.assertEqual(node[b"port"], self.ports[j])
            self.assertEqual(node[b"role"], b"master")
            self.assertEqual(node[b"health"], b"online")

    def test_redirects_and_refusals_as_redis(self):
        p0, p2 = self.ports[0], self.ports[2]
        r = raw(p0)
        script = [
            # foo is slot 12182, node 2's; b 3300 and k2 449 are node 0's
            (b"SET foo 1", b"-MOVED 12182 127.0.0.1:%d\r\n" % p2),
            (b"GET foo", b"-MOVED 12182 127.0.0.1:%d\r\n" % p2),
            (b"MSET a 1 b 2", b"-CROSSSLOT Keys in request don't hash to the same slot\r\n"),
            (b"SET b 1", b"+OK\r\n"),
            (b"MSET {b}1 x {b}2 y", b"+OK\r\n"),
            (b"MGET b {b}1", b"*2\r\n$1\r\n1\r\n$1\r\nx\r\n"),
            (b"SELECT 1", b"-ERR SELECT is not allowed in cluster mode\r\n"),
            (b"SELECT 0", b"+OK\r\n"),
            (b"MOVE b 1", b"-ERR MOVE is not allowed in cluster mode\r\n"),
            (b"MOVE x 1", b"-MOVED 16287 127.0.0.1:%d\r\n" % p2),
            (b"SWAPDB 0 1", b"-ERR SWAPDB is not allowed in cluster mode\r\n"),
            (b"COPY b {b}x DB 1",
             b"-ERR Copying to another database is not allowed in cluster mode\r\n"),
            (b"CLUSTER KEYSLOT foo", b":12182\r\n"),
            (b"CLUSTER KEYSLOT {}a", b":10875\r\n"),
            (b"CLUSTER COUNTKEYSINSLOT 99999", b"-ERR Invalid slot\r\n"),
            (b"CLUSTER COUNTKEYSINSLOT x", b"-ERR value is not an integer or out of range\r\n"),
            (b"CLUSTER GETKEYSINSLOT 1 -1", b"-ERR Invalid slot or number of keys\r\n"),
            (b"CLUSTER GETKEYSINSLOT 16384 1", b"-ERR Invalid slot or number of keys\r\n"),
            (b"CLUSTER GETKEYSINSLOT 1 x", b"-ERR value is not an integer or out of range\r\n"),
            (b"CLUSTER KEYSLOT", b"-ERR wrong number of arguments for 'cluster|keyslot' command\r\n"),
            (b"CLUSTER FOO", b"-ERR unknown subcommand 'FOO'. Try CLUSTER HELP.\r\n"),
            (b"CLUSTER REPLICAS 1234", b"-ERR Unknown node 1234\r\n"),
            (b"CLUSTER REPLICAS " + IDS[0].encode(), b"*0\r\n"),
            (b"CLUSTER LINKS", b"*0\r\n"),
            (b"READONLY", b"+OK\r\n"),
            (b"READWRITE", b"+OK\r\n"),
            (b"ASKING", b"+OK\r\n"),
            # SORT (D47): BY with a pattern and every GET are refused in
            # cluster mode, as Redis 7.0.15 refuses them (checked against
            # redis-server with cluster-enabled); STORE's key is routed
            (b"RPUSH {b}l 3 1 2", b":3\r\n"),
            (b"SORT {b}l", b"*3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n"),
            (b"SORT {b}l BY nosort DESC", b"*3\r\n$1\r\n2\r\n$1\r\n1\r\n$1\r\n3\r\n"),
            (b"SORT {b}l BY {b}w_*", b"-ERR BY option of SORT denied in Cluster mode.\r\n"),
            (b"SORT {b}l GET #", b"-ERR GET option of SORT denied in Cluster mode.\r\n"),
            (b"SORT_RO {b}l GET {b}x*", b"-ERR GET option of SORT denied in Cluster mode.\r\n"),
            (b"SORT {b}l GET # STORE {b}d", b"-ERR GET option of SORT denied in Cluster mode.\r\n"),
            (b"SORT {b}l LIMIT x 1 GET #", b"-ERR value is not an integer or out of range\r\n"),
            (b"SORT {b}l STORE {b}d", b":3\r\n"),
            (b"LRANGE {b}d 0 -1", b"*3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n"),
            (b"SORT {b}l STORE k2", b"-CROSSSLOT Keys in request don't hash to the same slot\r\n"),
            (b"SORT {b}l STORE foo", b"-CROSSSLOT Keys in request don't hash to the same slot\r\n"),
            (b"MULTI", b"+OK\r\n"),
            (b"SORT {b}l GET #", b"+QUEUED\r\n"),
            (b"SORT {b}l DESC STORE {b}d", b"+QUEUED\r\n"),
            (b"EXEC", b"*2\r\n-ERR GET option of SORT denied in Cluster mode.\r\n:3\r\n"),
            (b"DEL {b}l {b}d", b":2\r\n"),
            # a queued command of another node's slot aborts the transaction
            (b"MULTI", b"+OK\r\n"),
            (b"SET b 1", b"+QUEUED\r\n"),
            (b"SET k1 1", b"-MOVED 12706 127.0.0.1:%d\r\n" % p2),
            (b"EXEC", b"-EXECABORT Transaction discarded because of previous errors.\r\n"),
            # two of this node's slots in one transaction: EXEC refuses it
            (b"MULTI", b"+OK\r\n"),
            (b"SET b 2", b"+QUEUED\r\n"),
            (b"SET k2 1", b"+QUEUED\r\n"),
            (b"EXEC", b"-CROSSSLOT Keys in request don't hash to the same slot\r\n"),
            (b"EXEC", b"-ERR EXEC without MULTI\r\n"),
            (b"GET k2", b"$-1\r\n"),
            (b"GET b", b"$1\r\n1\r\n"),
            (b"MULTI", b"+OK\r\n"),
            (b"SET b 3", b"+QUEUED\r\n"),
            (b"GET {b}2", b"+QUEUED\r\n"),
            (b"EXEC", b"*2\r\n+OK\r\n$1\r\ny\r\n"),
            (b"CLUSTER COUNTKEYSINSLOT 3300", b":3\r\n"),
        ]
        for cmd, want in script:
            r.sock.sendall(cmd + b"\r\n")
            self.assertEqual(r.reply(), want, cmd)
        r.sock.sendall(b"CLUSTER GETKEYSINSLOT 3300 10\r\n")
        got = r.reply()
        self.assertTrue(got.startswith(b"*3\r\n"), got)
        for k in (b"b", b"{b}1", b"{b}2"):
            self.assertIn(b"$%d\r\n%s\r\n" % (len(k), k), got)
        r.sock.sendall(b"CLUSTER GETKEYSINSLOT 3300 2\r\n")
        self.assertTrue(r.reply().startswith(b"*2\r\n"))
        r.close()

    def test_redis_py_cluster_client(self):
        rc = RedisCluster(startup_nodes=[ClusterNode("127.0.0.1", self.ports[0])],
                          **attic_server.CLIENT_TIMEOUTS)
        keys = ["user:%d" % i for i in range(300)]
        for k in keys:
            self.assertTrue(rc.set(k, k.upper()))
        self.assertTrue(all(rc.mset_nonatomic({"{t}a": "1", "{t}b": "2", "plain": "3"})))
        self.assertEqual(rc.mget_nonatomic(["{t}a", "{t}b", "plain"]), [b"1", b"2", b"3"])
        for k in keys:
            self.assertEqual(rc.get(k), k.upper().encode())
        rc.close()
        direct = [self.node(i) for i in range(3)]
        owners = [0, 0, 0]
        for k in keys:
            slot = key_slot(k)
            o = owner_of(slot)
            owners[o] += 1
            self.assertEqual(direct[o].get(k), k.upper().encode(), k)
            for j in range(3):
                if j == o:
                    continue
                with self.assertRaises(redis.exceptions.ResponseError) as e:
                    direct[j].get(k)
                self.assertEqual(str(e.exception),
                                 "MOVED %d 127.0.0.1:%d" % (slot, self.ports[o]))
        self.assertTrue(all(n > 50 for n in owners), owners)  # the keys spread over all three
        for c in direct:
            c.close()

    def test_ioredis_cluster_client(self):
        node = shutil.which("node") or shutil.which("nodejs")
        if not node:
            self.skipTest("no node (Debian: apt-get install nodejs)")
        here = os.path.dirname(os.path.abspath(__file__))
        env = dict(os.environ, ATTIC_CLUSTER_PORTS=",".join(map(str, self.ports)))
        out = subprocess.run([node, os.path.join(here, "cluster_ioredis.js")], cwd=here, env=env,
                             capture_output=True, timeout=90)
        if out.returncode == 77:
            self.skipTest(out.stdout.decode().strip() +
                          " (cd tests/integration/clients && npm install --no-save ioredis)")
        self.assertEqual(out.returncode, 0, out.stderr.decode() + out.stdout.decode())
        placed = dict(line.split() for line in out.stdout.decode().splitlines())
        self.assertEqual(len(placed), 200, "every key answered by exactly one node")
        for k, port in placed.items():
            self.assertEqual(int(port), self.ports[owner_of(key_slot(k))], k)

    def test_redis_cli_follows_redirects(self):
        cli = shutil.which("redis-cli")
        if not cli:
            self.skipTest("no redis-cli")

        def run(port, *args):
            out = subprocess.run([cli, "-c", "-p", str(port)] + list(args), capture_output=True,
                                 timeout=30)
            return out.stdout.decode().strip()

        self.assertEqual(run(self.ports[0], "SET", "cli:foo", "bar"), "OK")
        self.assertEqual(run(self.ports[1], "GET", "cli:foo"), "bar")
        self.assertEqual(run(self.ports[2], "INCR", "cli:n"), "1")
        self.assertEqual(run(self.ports[0], "INCR", "cli:n"), "2")


def crc32a(key):
    """twemproxy's crc32a: the whole key's CRC-32 (zlib's)."""
    return zlib.crc32(key.encode())


class TwemproxyTest(unittest.TestCase):
    NUTCRACKER = shutil.which("nutcracker") or (
        "/usr/sbin/nutcracker" if os.access("/usr/sbin/nutcracker", os.X_OK) else None)

    def setUp(self):
        if not self.NUTCRACKER:
            self.skipTest("no nutcracker (Debian: apt-get install nutcracker)")
        self.top = tempfile.mkdtemp(prefix="attic-twem-")
        self.procs = []
        *self.ports, self.proxy_port = free_ports(4)
        # nutcracker orders its servers by name before it shards (modula's
        # index is into that order): listed in that order, index = shard.
        self.ports.sort(key=lambda p: "127.0.0.1:%d:1" % p)
        for i, port in enumerate(self.ports):
            d = os.path.join(self.top, "s%d" % i)
            os.mkdir(d)
            p = start_atticdb(d, port)
            self.procs.append(p)
            self.assertTrue(p.wait_port(port), p.output())
        conf = os.path.join(self.top, "nutcracker.yml")
        with open(conf, "w") as f:
            f.write("attic:\n  listen: 127.0.0.1:%d\n  hash: crc32a\n  distribution: modula\n"
                    "  redis: true\n  auto_eject_hosts: false\n  timeout: 10000\n"
                    "  servers:\n" % self.proxy_port)
            for port in self.ports:
                f.write("   - 127.0.0.1:%d:1\n" % port)
        d = os.path.join(self.top, "proxy")
        os.mkdir(d)
        p = Proc([self.NUTCRACKER, "-c", conf, "-o", os.path.join(d, "nutcracker.log"),
                  "-s", str(free_ports(1)[0])], d)
        self.procs.append(p)
        self.assertTrue(p.wait_port(self.proxy_port, ping=False), p.output())

    def tearDown(self):
        for p in reversed(self.procs):
            p.stop()
        shutil.rmtree(self.top, ignore_errors=True)

    def test_every_acked_key_is_on_the_shard_the_hash_names(self):
        proxy = redis.Redis(host="127.0.0.1", port=self.proxy_port, **attic_server.CLIENT_TIMEOUTS)
        keys = ["session:%d" % i for i in range(300)]
        for k in keys:
            self.assertTrue(proxy.set(k, k[::-1]))
        self.assertEqual(proxy.incr("counter"), 1)
        self.assertEqual(proxy.mget(keys[:20]), [k[::-1].encode() for k in keys[:20]])
        direct = [redis.Redis(host="127.0.0.1", port=p, **attic_server.CLIENT_TIMEOUTS)
                  for p in self.ports]
        counts = [0, 0, 0]
        for k in keys:
            shard = crc32a(k) % 3
            counts[shard] += 1
            for j in range(3):
                self.assertEqual(direct[j].get(k), k[::-1].encode() if j == shard else None,
                                 "%s on shard %d" % (k, j))
        self.assertTrue(all(n > 50 for n in counts), counts)
        self.assertEqual(sum(c.dbsize() for c in direct), len(keys) + 1)
        for c in direct + [proxy]:
            c.close()


class BadTopologyTest(unittest.TestCase):
    def test_a_bad_file_stops_the_start_with_its_reason(self):
        top = tempfile.mkdtemp(prefix="attic-badtopo-")
        try:
            (port,) = free_ports(1)
            conf = os.path.join(top, "nodes.conf")
            with open(conf, "w") as f:
                f.write("%s 127.0.0.1:%d master - 0 0 1 connected 0-100\n" % (IDS[0], port))
                f.write("%s 127.0.0.1:%d master - 0 0 1 connected 100-16383\n" % (IDS[1], port + 1))
            p = start_atticdb(top, port, ["--cluster-enabled", "yes", "--cluster-config-file",
                                          conf])
            try:
                rc = p.proc.wait(timeout=20)
            finally:
                p.stop()
            self.assertNotEqual(rc, 0)
            self.assertIn("cluster-config-file line 2: slot 100 is owned by %s already" % IDS[0],
                          p.output())
        finally:
            shutil.rmtree(top, ignore_errors=True)


if __name__ == "__main__":
    unittest.main()
