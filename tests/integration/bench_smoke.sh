#!/usr/bin/env bash
# bench_smoke.sh - atticdb-bench end to end against a real Redis-protocol
# server: starts redis-server (appendonly, appendfsync always) on a free
# loopback port with a temporary directory, runs every atticdb-bench mode
# briefly, and checks the counts it reports: every request acked, no errors,
# latencies positive and ordered (p50 <= p99 <= p99.9 <= max). No timing
# thresholds: this must pass on the slowest CI disk.
# Exit 77 (automake's "skipped") when redis-server is not installed.
set -u

BENCH=${ATTICDB_BENCH:-./atticdb-bench}
REDIS=${REDIS_SERVER:-$(command -v redis-server || true)}
if [ -z "$REDIS" ]; then
    echo "bench_smoke: redis-server not installed: skipped"
    exit 77
fi
if [ ! -x "$BENCH" ]; then
    echo "bench_smoke: $BENCH not built"
    exit 1
fi

TMP=$(mktemp -d "${TMPDIR:-/tmp}/bench_smoke.XXXXXX")
PID=""
cleanup() {
    if [ -n "$PID" ]; then
        kill -TERM "$PID" 2>/dev/null
        for _ in $(seq 1 100); do kill -0 "$PID" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$PID" 2>/dev/null
        wait "$PID" 2>/dev/null
    fi
    rm -rf "$TMP"
}
trap cleanup EXIT

FAILS=0
fail() {
    echo "FAIL: $*"
    FAILS=$((FAILS + 1))
}

# Start redis-server on a port outside the ephemeral range that nobody answers
# on; retry a few ports if another process wins the race.
for attempt in 1 2 3 4 5; do
    PORT=$((20000 + RANDOM % 10000))
    (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && continue
    "$REDIS" --port "$PORT" --bind 127.0.0.1 --dir "$TMP" --appendonly yes --appendfsync always \
        --save '' --daemonize no --logfile "$TMP/redis.log" &
    PID=$!
    if "$BENCH" -p "$PORT" --wait-ready 10; then break; fi
    kill -KILL "$PID" 2>/dev/null
    wait "$PID" 2>/dev/null
    PID=""
done
if [ -z "$PID" ]; then
    echo "bench_smoke: redis-server did not start"
    cat "$TMP/redis.log" 2>/dev/null
    exit 1
fi

kv() { sed -n "s/.* $2=\([^ ]*\).*/\1/p" <<<" $1"; }

# check NAME EXPECTED_SENT LINE: the invariants every run must satisfy.
check() {
    local name=$1 want=$2 line=$3
    if [ -z "$line" ]; then
        fail "$name: no result line"
        return
    fi
    local sent acked errors p50 p99 p999 max min
    sent=$(kv "$line" sent) acked=$(kv "$line" acked) errors=$(kv "$line" errors)
    p50=$(kv "$line" p50_us) p99=$(kv "$line" p99_us) p999=$(kv "$line" p999_us)
    max=$(kv "$line" max_us) min=$(kv "$line" min_us)
    [ "$want" = any ] || [ "$sent" = "$want" ] || fail "$name: sent $sent, want $want"
    [ "$acked" = "$sent" ] || fail "$name: acked $acked of $sent"
    [ "$errors" = 0 ] || fail "$name: errors $errors"
    awk -v a="$min" -v b="$p50" -v c="$p99" -v d="$p999" -v e="$max" \
        'BEGIN { exit !(a > 0 && a <= b && b <= c && c <= d && d <= e) }' ||
        fail "$name: latencies not positive and ordered: min $min p50 $p50 p99 $p99 p99.9 $p999 max $max"
    echo "ok: $name ($line)"
}

run() {
    local name=$1 want=$2
    shift 2
    local line rc
    line=$("$BENCH" -q --label "$name" "$@" >"$TMP/out" 2>"$TMP/err")
    rc=$?
    line=$(grep '^result ' "$TMP/out")
    [ "$rc" = 0 ] || cat "$TMP/err"
    [ "$rc" = 0 ] || fail "$name: exit status $rc"
    check "$name" "$want" "$line"
}

run closed-1 200 -p "$PORT" -c 1 -n 200
run closed-16 1600 -p "$PORT" -c 16 -n 100
run closed-16-threads 1600 -p "$PORT" -c 16 -n 100 --threads 2
run append 200 -p "$PORT" -c 4 -n 50 --command append
run rpush 200 -p "$PORT" -c 4 -n 50 --command rpush
run xadd 200 -p "$PORT" -c 4 -n 50 --command xadd -d 64
run agent 160 -p "$PORT" -c 32 -n 5 --think 1
run agent-duration any -p "$PORT" -c 8 --think 1 --duration 0.3
run get 1000 -p "$PORT" --get --keys 500 --load -c 10 -n 100
run get-zipf 1000 -p "$PORT" --get --keys 500 -c 10 -n 100 --zipf

# A GET over the loaded key space finds every key: no misses.
line=$("$BENCH" -q -p "$PORT" --get --keys 500 -c 2 -n 50 | grep '^result ')
[ "$(kv "$line" misses)" = 0 ] || fail "get: misses after --load: $line"

# The keys written are distinct per writer and one per append: 16 x 100 SETs
# made exactly 1,600 keys under their prefix.
line=$("$BENCH" -q -p "$PORT" -c 16 -n 100 --key-prefix distinct | grep '^result ')
check distinct-keys 1600 "$line"
if command -v redis-cli >/dev/null 2>&1; then
    n=$(redis-cli -p "$PORT" --scan --pattern 'distinct:*' | wc -l)
    [ "$n" = 1600 ] || fail "distinct keys: $n, want 1600"
fi

# --wake: every push wakes the reader blocked on its key, once per round;
# BLPOP leaves each list empty, XREAD leaves every entry in its stream.
for mode in blpop xread; do
    line=$("$BENCH" -q -p "$PORT" --wake "$mode" -c 3 -n 20 --key-prefix "w$mode" | grep '^result ')
    [ "$(kv "$line" sent)" = 60 ] && [ "$(kv "$line" acked)" = 60 ] && [ "$(kv "$line" errors)" = 0 ] &&
        [ "$(kv "$line" wake)" = "$mode" ] || fail "wake $mode: $line"
    if command -v redis-cli >/dev/null 2>&1; then
        if [ "$mode" = blpop ]; then want="0 0 0"; len=LLEN; else want="20 20 20"; len=XLEN; fi
        got=$(for r in 0 1 2; do redis-cli -p "$PORT" "$len" "w$mode:wake:r$r"; done | xargs)
        [ "$got" = "$want" ] || fail "wake $mode: $len per reader '$got', want '$want'"
    fi
    echo "ok: wake $mode ($line)"
done

# An error reply is counted and makes the exit status non-zero: put a string
# where writer 0's list will go, so every RPUSH gets WRONGTYPE.
exec 3<>"/dev/tcp/127.0.0.1/$PORT"
printf '*3\r\n$3\r\nSET\r\n$14\r\nclash:rpush:w0\r\n$1\r\nx\r\n' >&3
read -r -t 5 reply <&3
exec 3<&-
[ "${reply%$'\r'}" = "+OK" ] || fail "error run: SET reply '$reply'"
"$BENCH" -q -p "$PORT" -c 1 -n 3 --command rpush --key-prefix clash >"$TMP/err.out" 2>/dev/null
rc=$?
line=$(grep '^result ' "$TMP/err.out")
[ "$rc" = 1 ] || fail "error run: exit $rc, want 1"
[ "$(kv "$line" errors)" = 3 ] || fail "error run: errors $(kv "$line" errors), want 3 ($line)"
[ "$(kv "$line" acked)" = 3 ] || fail "error run: acked $(kv "$line" acked), want 3 ($line)"

# No server at all: cannot start, exit 2.
"$BENCH" -q -p 1 -c 1 -n 1 >/dev/null 2>&1
rc=$?
[ "$rc" = 2 ] || fail "no server: exit $rc, want 2"

# SQLite in process, when built in.
if "$BENCH" --version | grep -qv 'sqlite none'; then
    run sqlite-closed 400 --sqlite "$TMP/bench.db" -c 4 -n 100
    run sqlite-agent 80 --sqlite "$TMP/bench2.db" -c 8 -n 10 --think 1 --command append
fi

# The floor: three methods (O_DIRECT may be skipped by the filesystem).
out=$("$BENCH" -q --floor "$TMP/floor.bin" --floor-count 20)
rc=$?
[ "$rc" = 0 ] || fail "floor: exit $rc"
for m in fdatasync odsync; do
    l=$(grep "^floor method=$m " <<<"$out")
    [ "$(kv "$l" count)" = 20 ] || fail "floor $m: $l"
done
[ ! -e "$TMP/floor.bin" ] || fail "floor: file left behind"

if [ "$FAILS" -gt 0 ]; then
    echo "bench_smoke: $FAILS failures"
    exit 1
fi
echo "bench_smoke: all checks passed"
exit 0
