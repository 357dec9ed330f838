#!/usr/bin/env bash
# The layering rule of docs/ARCHITECTURE.md ("Where the code lives"), as a
# test: no two source files call into each other, directly or round a
# circle. tools/dep-graph reads the built objects' symbols (nm) and exits 1
# when it finds a mutual pair or a circle; its output names them. Skipped
# (77) without /usr/bin/python3 or nm.
set -euo pipefail
srcdir=${srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
builddir=${top_builddir:-$PWD}
if [ ! -x /usr/bin/python3 ] || ! command -v nm >/dev/null 2>&1; then
    echo "dep_graph: needs /usr/bin/python3 and nm: skipping"
    exit 77
fi
exec /usr/bin/python3 "$srcdir/tools/dep-graph" "$builddir"
