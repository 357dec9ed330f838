#!/usr/bin/env bash
# A short run of tools/atticdb-chaos: a random child (frontend, logger or
# store) SIGKILLed every 0.3 s while 8 clients write. The server must still
# be up at the end (the master never gives up on children killed from
# outside) and every acked write must survive. Skipped (77) when Debian's
# python3-redis is missing. A long run: see tests/include.am.
set -euo pipefail
srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
if ! /usr/bin/python3 -c 'import redis' 2>/dev/null; then
    echo "chaos: /usr/bin/python3 has no redis module (apt-get install python3-redis): skipping"
    exit 77
fi
exec /usr/bin/python3 "$srcdir/tools/atticdb-chaos" --duration "${CHAOS_SECONDS:-12}" \
    --interval "${CHAOS_INTERVAL:-0.3}" --targets frontend,logger,store --writers 8 \
    --seed "${ATTIC_SEED:-$RANDOM}" ${ATTICDB_SERVER:+--server "$ATTICDB_SERVER"}
