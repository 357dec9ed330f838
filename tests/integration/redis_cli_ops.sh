#!/usr/bin/env bash
# redis_cli_ops.sh - the stock redis-cli's operator modes against the server
# on a small dataset (20 strings of 10..200 bytes and one with a TTL), each
# bounded by `timeout`, its output parsed:
#   --stat            a line per second: keys, mem, clients, blocked,
#                     requests (+delta), connections;
#   --bigkeys         every key sampled, the biggest string and the totals;
#   --memkeys         the same ranked by MEMORY USAGE (RAM: store/memory.c);
#   --latency         one "min max avg samples" line after -i seconds;
#   --latency-history ranges of -i seconds until stopped.
# tests/integration/redis_cli.sh covers the other modes (pipes, --scan).
#
# Usage: tests/integration/redis_cli_ops.sh; ATTIC_TEST_SERVER=redis runs it
# against redis-server, which proves the expectations are Redis 7's.
# Exit 0 pass, 1 fail, 77 skipped (no redis-cli).
set -u
srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$srcdir/tests/integration/server_lib.sh"

if ! command -v redis-cli >/dev/null 2>&1; then
    echo "SKIP: redis-cli not installed (Debian: apt-get install redis-tools)"
    exit 77
fi
if ! command -v timeout >/dev/null 2>&1 || ! command -v stdbuf >/dev/null 2>&1; then
    echo "SKIP: timeout(1) or stdbuf(1) not available"
    exit 77
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/redis_cli_ops.XXXXXX")
cleanup() {
    srv_stop
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

FAILS=0
fail() {
    echo "FAIL: $*"
    FAILS=$((FAILS + 1))
}
ok() { echo "ok: $*"; }

extra=()
[ "$SRV_KIND" = atticdb ] && extra=(--frontends 2)
if ! srv_start "${extra[@]}"; then
    echo "FAIL: the server ($SRV_KIND) did not start"
    exit 1
fi
echo "redis_cli_ops: testing $SRV_KIND on port $SRV_PORT"
cli() { timeout 20 redis-cli -p "$SRV_PORT" "$@"; }

# The dataset: key:i holds 10*i bytes; 2100 bytes in all, plus "v".
for i in $(seq 1 20); do
    printf 'SET key:%d %s\n' "$i" "$(head -c $((10 * i)) /dev/zero | tr '\0' x)"
done >"$WORK/load.txt"
echo "SETEX ttl:1 1000 v" >>"$WORK/load.txt"
cli <"$WORK/load.txt" >/dev/null
got=$(cli dbsize)
[ "$got" = 21 ] || fail "DBSIZE after the load: '$got'"

# --stat: runs until stopped; 2.5 s give at least two lines after the header.
timeout 2.5 stdbuf -oL redis-cli -p "$SRV_PORT" --stat -i 1 >"$WORK/stat.out" 2>&1
rc=$?
head=$(grep -c -- '^------- data ------ ' "$WORK/stat.out")
lines=$(grep -cE '^21 +[0-9.]+[BKMGT]? +[0-9]+ +0 +[0-9]+ \(\+[0-9]+\) +[0-9]+ *$' "$WORK/stat.out")
if [ $rc -eq 124 ] && [ "$head" -ge 1 ] && [ "$lines" -ge 2 ]; then
    ok "--stat: $lines lines of 21 keys"
else
    fail "--stat: exit $rc, $head headers, $lines good lines: $(head -c 400 "$WORK/stat.out")"
fi

# --bigkeys: SCAN, TYPE, STRLEN.
cli --bigkeys >"$WORK/big.out" 2>&1
rc=$?
if [ $rc -eq 0 ] && grep -q '^Sampled 21 keys in the keyspace!$' "$WORK/big.out" &&
    grep -q "^Biggest string found '\"key:20\"' has 200 bytes$" "$WORK/big.out" &&
    grep -q '^21 strings with 2101 bytes (100.00% of keys, avg size 100.05)$' "$WORK/big.out"; then
    ok "--bigkeys: key:20, 200 bytes; 21 strings, 2101 bytes"
else
    fail "--bigkeys: exit $rc: $(cat "$WORK/big.out")"
fi

# --memkeys: MEMORY USAGE key SAMPLES 0 for each; any positive sizes.
cli --memkeys >"$WORK/mem.out" 2>&1
rc=$?
big=$(sed -nE "s/^Biggest string found '\"(key:[0-9]+|ttl:1)\"' has ([1-9][0-9]*) bytes$/\2/p" "$WORK/mem.out")
total=$(sed -nE 's/^21 strings with ([1-9][0-9]*) bytes \(100.00% of keys, avg size [0-9.]+\)$/\1/p' "$WORK/mem.out")
if [ $rc -eq 0 ] && grep -q '^Sampled 21 keys in the keyspace!$' "$WORK/mem.out" &&
    [ -n "$big" ] && [ -n "$total" ] && [ "$total" -ge "$big" ]; then
    ok "--memkeys: biggest $big bytes, all $total bytes"
else
    fail "--memkeys: exit $rc: $(cat "$WORK/mem.out")"
fi

# --latency: with stdout not a TTY, one line after -i seconds.
out=$(timeout 15 redis-cli -p "$SRV_PORT" --latency -i 1 2>&1)
rc=$?
if [ $rc -eq 0 ] && [[ "$out" =~ ^([0-9]+)\ ([0-9]+)\ ([0-9]+\.[0-9]+)\ ([1-9][0-9]*)$ ]]; then
    ok "--latency -i 1: $out"
else
    fail "--latency -i 1: exit $rc, output '$out'"
fi
timeout 2.5 stdbuf -oL redis-cli -p "$SRV_PORT" --latency-history -i 1 >"$WORK/hist.out" 2>&1
rc=$?
ranges=$(grep -c -- '-- [0-9.]* seconds range' "$WORK/hist.out")
if [ $rc -eq 124 ] && [ "$ranges" -ge 1 ]; then
    ok "--latency-history -i 1: $ranges ranges"
else
    fail "--latency-history: exit $rc, $ranges ranges: $(head -c 300 "$WORK/hist.out")"
fi

got=$(cli ping)
[ "$got" = PONG ] || fail "PING at the end: '$got'"
if [ $FAILS -gt 0 ]; then
    echo "redis_cli_ops ($SRV_KIND): $FAILS failures"
    tail -20 "$SRV_LOG" 2>/dev/null
    exit 1
fi
echo "redis_cli_ops ($SRV_KIND): all passed"
