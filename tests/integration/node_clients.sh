#!/usr/bin/env bash
# node_clients.sh - a Node.js client (ioredis) against the server: runs
# tests/integration/clients/smoke_ioredis.js on a fresh server (set/get,
# pipeline, multi/exec, watch, expire, select, quit).
#
# Skipped (exit 77, with a "SKIP: ..." line saying why) when `node` is not
# installed or the ioredis module cannot be resolved. ioredis is not in the
# repository and the test never downloads it; to run this test:
#     cd tests/integration/clients && npm install --no-save ioredis
# (node_modules there is ignored by git), or point NODE_PATH at a
# node_modules directory that has ioredis (e.g. NODE_PATH=/usr/lib/node_modules
# after `npm install -g ioredis`).
#
#   ATTIC_TEST_SERVER=redis tests/integration/node_clients.sh   proves it on Redis
#   tests/integration/node_clients.sh                           runs it on AtticDB
set -u
srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
clients="$srcdir/tests/integration/clients"
. "$srcdir/tests/integration/server_lib.sh"

NODE=${NODE:-$(command -v node || command -v nodejs || true)}
if [ -z "$NODE" ]; then
    echo "SKIP: node is not installed (Debian: apt-get install nodejs npm; then npm install ioredis in $clients)"
    exit 77
fi
# Resolve as the smoke test will: from its directory (clients/node_modules
# and its parents), then NODE_PATH.
if ! (cd "$clients" && timeout 30 "$NODE" -e 'require.resolve("ioredis")') >/dev/null 2>&1; then
    echo "SKIP: node ($("$NODE" --version 2>/dev/null)) cannot resolve the ioredis module" \
        "(run: cd $clients && npm install --no-save ioredis; or set NODE_PATH)"
    exit 77
fi

trap srv_stop EXIT
trap 'exit 1' INT TERM
extra=()
[ "$SRV_KIND" = atticdb ] && extra=(--frontends 2)
if ! srv_start "${extra[@]}"; then
    echo "FAIL: the server ($SRV_KIND) did not start"
    exit 1
fi
echo "node_clients: ioredis against $SRV_KIND on port $SRV_PORT"
ATTIC_TEST_PORT=$SRV_PORT timeout -k 5 90 "$NODE" "$clients/smoke_ioredis.js"
rc=$?
if [ $rc -ne 0 ] && [ $rc -ne 77 ]; then
    echo "---- server log (last lines)"
    tail -20 "$SRV_LOG" 2>/dev/null
    [ $rc -eq 124 ] && echo "FAIL: smoke_ioredis timed out"
    rc=1
fi
exit $rc
