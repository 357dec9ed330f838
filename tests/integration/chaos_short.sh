#!/usr/bin/env bash
# A short run of tools/atticdb-chaos: random SIGKILLs of frontends, logger,
# store and the whole server while 8 clients write; every acked write must
# survive. Skipped (77) when Debian's python3-redis is missing.
set -euo pipefail
srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
if ! /usr/bin/python3 -c 'import redis' 2>/dev/null; then
    echo "chaos: /usr/bin/python3 has no redis module (apt-get install python3-redis): skipping"
    exit 77
fi
exec /usr/bin/python3 "$srcdir/tools/atticdb-chaos" --duration "${CHAOS_SECONDS:-8}" \
    --seed "${ATTIC_SEED:-$RANDOM}" ${ATTICDB_SERVER:+--server "$ATTICDB_SERVER"}
