#!/usr/bin/env bash
# sharding.sh - runs tests/integration/clients/test_sharding.py (AtticDB in
# cluster mode with redis-py's RedisCluster and redis-cli -c, and behind
# twemproxy) with Debian's /usr/bin/python3, where python3-redis is
# installed. Exit 77 (skipped) when that python has no redis module; the
# twemproxy case skips itself without nutcracker. The module starts and
# stops its own servers, by pid. Extra arguments go to unittest.
set -u
srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
PY=${ATTIC_PYTHON:-/usr/bin/python3}
if [ ! -x "$PY" ] || ! "$PY" -c 'import redis.cluster' 2>/dev/null; then
    echo "SKIP: $PY with redis-py's cluster client not found (Debian: apt-get install python3-redis)"
    exit 77
fi
export PYTHONDONTWRITEBYTECODE=1
exec timeout -k 10 300 "$PY" "$srcdir/tests/integration/clients/test_sharding.py" "$@"
