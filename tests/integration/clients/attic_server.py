"""attic_server.py - start and stop the server under test for the Python
client tests (test_redis_py.py), and a raw RESP socket for exact bytes.

  ATTIC_TEST_SERVER  atticdb (default) or redis: which server Server starts
  ATTICDB_SERVER     atticdb-server binary (default ./atticdb-server, or
                     $top_builddir/atticdb-server)
  REDIS_SERVER       redis-server binary (default: from PATH)

A Server runs on a free loopback port with a fresh temporary directory, in
its own process group (so its children go with it), dies with the test
process (PDEATHSIG), and is stopped by pid: SIGTERM, then SIGKILL of its
group. stop_all() stops every server still running.
"""

import ctypes
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time

import redis

KIND = os.environ.get("ATTIC_TEST_SERVER", "atticdb")
CLIENT_TIMEOUTS = dict(socket_timeout=10, socket_connect_timeout=5)
_servers = []  # every Server started and not yet stopped


def _server_binary():
    if KIND == "redis":
        return os.environ.get("REDIS_SERVER") or shutil.which("redis-server")
    if os.environ.get("ATTICDB_SERVER"):
        return os.environ["ATTICDB_SERVER"]
    return os.path.join(os.environ.get("top_builddir", "."), "atticdb-server")


def as_str(v):
    """bytes or str (redis-py decodes some replies itself) as str"""
    return v.decode() if isinstance(v, bytes) else v


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _die_with_parent():
    """In the child before exec: own session, SIGKILL when we die."""
    try:
        ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


class Server:
    """One server under test (atticdb-server or redis-server)."""

    def __init__(self, extra=(), config=None):
        self.extra = list(extra)
        self.config = config  # text of a config file given as first argument
        self.proc = None
        self.port = None
        self.dir = None

    def start(self):
        binary = _server_binary()
        if not binary or not os.access(binary, os.X_OK):
            raise RuntimeError("no server binary for ATTIC_TEST_SERVER=%s (%r)" % (KIND, binary))
        self.dir = tempfile.mkdtemp(prefix="attic-py-")
        os.mkdir(os.path.join(self.dir, "data"))
        self.log = os.path.join(self.dir, "server.log")
        argv = [binary]
        if self.config is not None:
            conf = os.path.join(self.dir, "server.conf")
            with open(conf, "w") as f:
                f.write(self.config)
            argv.append(conf)
        _servers.append(self)
        for _attempt in range(5):
            self.port = _free_port()
            args = argv + ["--port", str(self.port), "--bind", "127.0.0.1",
                           "--dir", os.path.join(self.dir, "data"), "--logfile", self.log]
            if KIND == "redis":
                args += ["--save", "", "--appendonly", "no"]
            else:
                args += ["--frontends", "2"]
            args += self.extra
            # its own stdout/stderr to a file: a config error is printed there
            with open(os.path.join(self.dir, "stderr.txt"), "wb") as out:
                self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=out, stderr=out,
                                             start_new_session=True, preexec_fn=_die_with_parent)
            if self._wait_ready():
                return self
            self._stop_process()
        raise RuntimeError("%s did not start; log:\n%s" % (binary, self.log_tail()))

    def _wait_ready(self):
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                return False
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1) as s:
                    s.settimeout(1)
                    s.sendall(b"PING\r\n")
                    if s.recv(64)[:1] in (b"+", b"-"):  # +PONG, or -NOAUTH
                        return True
            except OSError:
                pass
            time.sleep(0.05)
        return False

    def log_tail(self):
        out = []
        for path in (os.path.join(self.dir, "stderr.txt"), self.log):
            try:
                with open(path, errors="replace") as f:
                    out.append("".join(f.readlines()[-20:]))
            except OSError:
                pass
        return "\n".join(out) or "(no log)"

    def _stop_process(self):
        if self.proc is None:
            return
        stop_group(self.proc)
        self.proc = None

    def stop(self):
        self._stop_process()
        if self.dir:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None
        if self in _servers:
            _servers.remove(self)

    def client(self, **kw):
        args = dict(CLIENT_TIMEOUTS)
        args.update(kw)
        return redis.Redis(host="127.0.0.1", port=self.port, **args)

    def raw(self):
        s = socket.create_connection(("127.0.0.1", self.port), timeout=5)
        s.settimeout(5)
        return RawConn(s)


def stop_group(proc):
    """Stop a process started with start_new_session, by pid: SIGTERM, up
    to 10 s, then SIGKILL of the rest of its group (its pgid is its pid)."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pass


def stop_all():
    for s in list(_servers):
        s.stop()


class RawConn:
    """A plain socket for exact reply bytes (inline commands)."""

    def __init__(self, sock):
        self.sock = sock
        self.buf = b""

    def close(self):
        self.sock.close()

    def _line(self):
        while b"\r\n" not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("closed; got so far %r" % self.buf)
            self.buf += chunk
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line + b"\r\n"

    def _exact(self, n):
        while len(self.buf) < n:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("closed")
            self.buf += chunk
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def reply(self):
        """One whole RESP2/RESP3 reply, as its bytes."""
        line = self._line()
        t = line[:1]
        if t in b"$=!" and t:
            n = int(line[1:-2])
            return line if n < 0 else line + self._exact(n + 2)
        if t in (b"*", b"~", b">", b"%"):
            n = int(line[1:-2])
            if t == b"%":
                n *= 2
            return line + b"".join(self.reply() for _ in range(max(n, 0)))
        return line

    def cmd(self, *args):
        parts = [b"*%d\r\n" % len(args)]
        for a in args:
            a = a if isinstance(a, bytes) else str(a).encode()
            parts.append(b"$%d\r\n%s\r\n" % (len(a), a))
        self.sock.sendall(b"".join(parts))
        return self.reply()
