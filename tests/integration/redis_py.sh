#!/usr/bin/env bash
# redis_py.sh - runs tests/integration/clients/test_redis_py.py (a unittest
# module: redis-py against the server) with Debian's /usr/bin/python3, where
# python3-redis is installed. Exit 77 (skipped) when that python has no
# redis module. The module starts and stops its own servers:
#   ATTIC_TEST_SERVER=redis tests/integration/redis_py.sh   proves it on Redis
#   tests/integration/redis_py.sh                           runs it on AtticDB
# Extra arguments go to unittest (e.g. AuthTest, -k expire).
set -u
srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
PY=${ATTIC_PYTHON:-/usr/bin/python3}
if [ ! -x "$PY" ]; then
    echo "SKIP: $PY not found (Debian: apt-get install python3 python3-redis)"
    exit 77
fi
if ! "$PY" -c 'import redis' 2>/dev/null; then
    echo "SKIP: $PY has no redis module (Debian: apt-get install python3-redis)"
    exit 77
fi
# No __pycache__ in the source tree (it may be read-only: make distcheck).
export PYTHONDONTWRITEBYTECODE=1
# A hard bound on the whole run besides the module's own watchdog.
exec timeout -k 10 300 "$PY" "$srcdir/tests/integration/clients/test_redis_py.py" "$@"
