#!/usr/bin/env bash
# redis_cli.sh - the stock redis-cli against the server, in the four ways
# Redis users drive it from scripts:
#   (a) commands on stdin (as `redis-cli < file`), raw and --no-raw output,
#       -n DB, -x, and command-line arguments;
#   (b) --pipe mass insertion of 100,000 SETs (its summary must say
#       "errors: 0, replies: 100000", then DBSIZE and spot reads), and a
#       small --pipe whose errors must be counted;
#   (c) --scan, --scan --pattern, --scan --quoted-pattern and -n DB --scan,
#       each compared with the exact set of keys expected;
#   (d) --latency (non-TTY: one line after -i seconds), --latency --csv and
#       --latency-history, which must print numbers.
#
# Usage: tests/integration/redis_cli.sh
#   starts a fresh atticdb-server (ATTICDB_SERVER, default ./atticdb-server)
#   on a free port with a temporary directory and stops it at exit;
#   ATTIC_TEST_SERVER=redis starts redis-server instead (REDIS_SERVER or
#   PATH), which proves the expectations below are Redis 7's behaviour.
# Exit 0 pass, 1 fail, 77 skipped (no redis-cli). Every redis-cli call runs
# under `timeout`, so the test ends in bounded time whatever the server does.
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

WORK=$(mktemp -d "${TMPDIR:-/tmp}/redis_cli_test.XXXXXX")
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
echo "redis_cli: testing $SRV_KIND on port $SRV_PORT"

cli() { timeout 20 redis-cli -p "$SRV_PORT" "$@"; }

# compare_lines NAME ACTUAL_FILE EXPECTED_FILE: line by line; an expected
# line starting with "~" is an extended regex the actual line must match.
compare_lines() {
    local name=$1 actual=$2 expected=$3 i=0 a e bad=0
    local -a al el
    mapfile -t al <"$actual"
    mapfile -t el <"$expected"
    if [ "${#al[@]}" -ne "${#el[@]}" ]; then
        fail "$name: ${#al[@]} lines of output, want ${#el[@]}"
        bad=1
    fi
    local base=$bad
    for ((i = 0; i < ${#el[@]}; i++)); do
        e=${el[$i]}
        a=${al[$i]-<missing>}
        if [[ "$e" == "~"* ]]; then
            [[ "$a" =~ ${e#\~} ]] && continue
        else
            [ "$a" = "$e" ] && continue
        fi
        bad=$((bad + 1))
        # the first differences only: later lines are usually shifted
        [ $((bad - base)) -le 3 ] && fail "$name: line $((i + 1)): got '$a', want '$e'"
    done
    if [ $bad -ne 0 ]; then
        echo "---- $name: full output"
        cat -A "$actual" | head -80
        echo "----"
    else
        ok "$name (${#el[@]} lines)"
    fi
}

# ---------------------------------------------------------------------------
# (a) commands on stdin

cat >"$WORK/in.txt" <<'EOF'
SET a 1
GET a
INCR a
APPEND a xyz
GET a
INCR a
EXISTS a nope
DEL a
GET a
SET s "hello world"
GETRANGE s 0 4
STRLEN s
MSET m1 x m2 y
MGET m1 m2 nope
EXPIRE m1 100
TTL m1
PERSIST m1
TTL m1
TYPE m1
TYPE nope
RENAME m1 m3
EXISTS m1 m3
KEYS m3
SELECT 3
SET d3 v
DBSIZE
SELECT 0
GET d3
FOO bar
GET
MULTI
INCR c
INCR c
EXEC
SET b "a\x00b"
STRLEN b
GETDEL b
EXISTS b
SET e ""
GET e
STRLEN e
EOF
# Raw output (stdout is not a TTY): values bare, nil as an empty line, an
# error as its text followed by an empty line.
cat >"$WORK/want_raw.txt" <<'EOF'
OK
1
2
4
2xyz
ERR value is not an integer or out of range

1
1

OK
hello
11
OK
x
y

1
~^(99|100)$
1
-1
string
none
OK
1
m3
OK
OK
1
OK

ERR unknown command 'FOO', with args beginning with: 'bar' 

ERR wrong number of arguments for 'get' command

OK
QUEUED
QUEUED
1
2
OK
3
a b
0
OK

0
EOF
# GETDEL b printed "a\0b": compare with the NUL as a space (bash strings
# cannot hold NUL; redis-cli prints the byte as is in raw mode).
cli <"$WORK/in.txt" 2>&1 | tr '\0' ' ' >"$WORK/out_raw.txt"
compare_lines "stdin, raw output" "$WORK/out_raw.txt" "$WORK/want_raw.txt"

cli flushall >/dev/null
cli --no-raw <"$WORK/in.txt" >"$WORK/out_fmt.txt" 2>&1
cat >"$WORK/want_fmt.txt" <<'EOF'
OK
"1"
(integer) 2
(integer) 4
"2xyz"
(error) ERR value is not an integer or out of range
(integer) 1
(integer) 1
(nil)
OK
"hello"
(integer) 11
OK
1) "x"
2) "y"
3) (nil)
(integer) 1
~^\(integer\) (99|100)$
(integer) 1
(integer) -1
string
none
OK
(integer) 1
1) "m3"
OK
OK
(integer) 1
OK
(nil)
(error) ERR unknown command 'FOO', with args beginning with: 'bar' 
(error) ERR wrong number of arguments for 'get' command
OK
QUEUED
QUEUED
1) (integer) 1
2) (integer) 2
OK
(integer) 3
"a\x00b"
(integer) 0
OK
""
(integer) 0
EOF
compare_lines "stdin, --no-raw output" "$WORK/out_fmt.txt" "$WORK/want_fmt.txt"

# Arguments on the command line, -n DB, -x (last argument from stdin).
cli flushall >/dev/null
{
    cli set greeting "hello world"
    cli get greeting
    cli --no-raw incr greeting
    cli -n 5 set only5 yes
    cli -n 5 dbsize
    cli dbsize
    cli -n 5 --no-raw get only5
    echo value-from-stdin | cli -x set fromstdin
    cli --no-raw get fromstdin
    cli --no-raw -n 16 ping
} >"$WORK/out_args.txt" 2>&1
cat >"$WORK/want_args.txt" <<'EOF'
OK
hello world
(error) ERR value is not an integer or out of range
OK
1
1
"yes"
OK
"value-from-stdin\n"
SELECT 16 failed: ERR DB index is out of range
PONG
EOF
compare_lines "arguments, -n, -x" "$WORK/out_args.txt" "$WORK/want_args.txt"

# ---------------------------------------------------------------------------
# (b) --pipe: 100,000 SETs as raw RESP; every tenth value 100 bytes long
# (a value AtticDB keeps in the log, not in RAM), the others short.

N=100000
cli flushall >/dev/null
awk -v n=$N 'BEGIN {
    for (i = 0; i < n; i++) {
        k = "k:" i
        v = (i % 10 == 0) ? sprintf("%0100d", i) : "v" i
        printf "*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n", length(k), k, length(v), v
    }
}' >"$WORK/mass.resp"
timeout 120 redis-cli -p "$SRV_PORT" --pipe --pipe-timeout 60 <"$WORK/mass.resp" >"$WORK/pipe.out" 2>&1
rc=$?
[ $rc -eq 0 ] || fail "--pipe: exit status $rc: $(tr '\n' ' ' <"$WORK/pipe.out")"
if grep -q "^errors: 0, replies: $N\$" "$WORK/pipe.out"; then
    ok "--pipe: errors: 0, replies: $N"
else
    fail "--pipe: no 'errors: 0, replies: $N' in: $(tr '\n' ' ' <"$WORK/pipe.out")"
fi
got=$(cli dbsize)
[ "$got" = "$N" ] && ok "--pipe: DBSIZE $got" || fail "--pipe: DBSIZE '$got', want $N"
got=$(cli get k:99999)
[ "$got" = v99999 ] || fail "--pipe: GET k:99999 '$got'"
got=$(cli get k:12340)
[ "$got" = "$(printf '%0100d' 12340)" ] || fail "--pipe: GET k:12340 '$got'"
got=$(cli strlen k:0)
[ "$got" = 100 ] || fail "--pipe: STRLEN k:0 '$got'"

# A small --pipe with three commands that fail: redis-cli counts them.
{
    printf '*3\r\n$3\r\nSET\r\n$2\r\npe\r\n$1\r\nx\r\n'
    printf '*2\r\n$4\r\nINCR\r\n$2\r\npe\r\n'                  # not an integer
    printf '*2\r\n$7\r\nNOSUCHC\r\n$2\r\npe\r\n'               # unknown command
    printf '*1\r\n$3\r\nGET\r\n'                               # wrong arity
    for i in 1 2 3 4 5 6; do printf '*2\r\n$4\r\nINCR\r\n$2\r\npc\r\n'; done
} >"$WORK/errs.resp"
timeout 30 redis-cli -p "$SRV_PORT" --pipe --pipe-timeout 10 <"$WORK/errs.resp" >"$WORK/pipe2.out" 2>&1
if grep -q "^errors: 3, replies: 10\$" "$WORK/pipe2.out"; then
    ok "--pipe with errors: errors: 3, replies: 10"
else
    fail "--pipe with errors: no 'errors: 3, replies: 10' in: $(tr '\n' ' ' <"$WORK/pipe2.out")"
fi
got=$(cli get pc)
[ "$got" = 6 ] || fail "--pipe with errors: GET pc '$got', want 6"
cli del pe pc >/dev/null

# ---------------------------------------------------------------------------
# (c) --scan: the exact key sets

# check_scan NAME EXPECTED_FILE redis-cli-args...: sorted output == expected
check_scan() {
    local name=$1 want=$2
    shift 2
    cli "$@" >"$WORK/scan.raw" 2>&1
    local rc=$?
    [ $rc -eq 0 ] || fail "$name: exit status $rc"
    LC_ALL=C sort "$WORK/scan.raw" >"$WORK/scan.sorted"
    local dups
    dups=$(LC_ALL=C uniq -d "$WORK/scan.sorted" | wc -l)
    # SCAN may return a key twice (Redis says so); the set must be exact.
    LC_ALL=C sort -u "$WORK/scan.raw" >"$WORK/scan.set"
    if cmp -s "$WORK/scan.set" "$want"; then
        ok "$name: $(wc -l <"$want") keys ($dups duplicates)"
    else
        fail "$name: $(wc -l <"$WORK/scan.set") distinct keys, want $(wc -l <"$want"); first differences:"
        diff "$want" "$WORK/scan.set" | head -10
    fi
}
awk -v n=$N 'BEGIN { for (i = 0; i < n; i++) print "k:" i }' | LC_ALL=C sort >"$WORK/want_all"
grep '^k:1' "$WORK/want_all" >"$WORK/want_k1"
grep '^k:99' "$WORK/want_all" >"$WORK/want_k99"
check_scan "--scan" "$WORK/want_all" --scan
check_scan "--scan --pattern 'k:1*'" "$WORK/want_k1" --scan --pattern 'k:1*'
check_scan "--scan --quoted-pattern 'k:99*'" "$WORK/want_k99" --scan --quoted-pattern '"k:99*"'
# another database: only its keys, glob classes and ?
cli -n 7 mset 'x:a' 1 'x:b' 2 'x:c' 3 'y:a' 4 'x:ab' 5 >/dev/null
printf 'x:a\nx:b\n' >"$WORK/want_db7"
check_scan "-n 7 --scan --pattern 'x:[ab]'" "$WORK/want_db7" -n 7 --scan --pattern 'x:[ab]'
printf 'x:a\nx:b\nx:c\ny:a\n' >"$WORK/want_db7q"
check_scan "-n 7 --scan --pattern '?:?'" "$WORK/want_db7q" -n 7 --scan --pattern '?:?'
: >"$WORK/want_none"
check_scan "--scan --pattern 'nomatch*'" "$WORK/want_none" --scan --pattern 'nomatch*'
got=$(cli dbsize)
[ "$got" = "$N" ] || fail "after --scan: DBSIZE '$got', want $N"

# ---------------------------------------------------------------------------
# (d) --latency: with stdout not a TTY redis-cli samples for -i seconds,
# prints "min max avg samples" once and exits.

out=$(timeout 15 redis-cli -p "$SRV_PORT" --latency -i 2 2>&1)
rc=$?
if [ $rc -eq 0 ] && [[ "$out" =~ ^([0-9]+)\ ([0-9]+)\ ([0-9]+\.[0-9]+)\ ([0-9]+)$ ]] &&
    [ "${BASH_REMATCH[4]}" -gt 0 ] && [ "${BASH_REMATCH[1]}" -le "${BASH_REMATCH[2]}" ]; then
    ok "--latency -i 2: min ${BASH_REMATCH[1]} max ${BASH_REMATCH[2]} avg ${BASH_REMATCH[3]} ms over ${BASH_REMATCH[4]} samples"
else
    fail "--latency -i 2: exit $rc, output '$out'"
fi
out=$(timeout 15 redis-cli -p "$SRV_PORT" --latency --csv 2>&1)
rc=$?
if [ $rc -eq 0 ] && [[ "$out" =~ ^[0-9]+,[0-9]+,[0-9]+\.[0-9]+,[1-9][0-9]*$ ]]; then
    ok "--latency --csv: $out"
else
    fail "--latency --csv: exit $rc, output '$out'"
fi
# --latency-history runs until stopped: stop it after 2.5 s (exit 124),
# by then it has closed at least one 1 s range.
timeout 2.5 stdbuf -oL redis-cli -p "$SRV_PORT" --latency-history -i 1 >"$WORK/hist.out" 2>&1
rc=$?
ranges=$(grep -c -- '-- [0-9.]* seconds range' "$WORK/hist.out")
samples=$(grep -cE '^[0-9]+ [0-9]+ [0-9]+\.[0-9]+ [0-9]+' "$WORK/hist.out")
if [ $rc -eq 124 ] && [ "$ranges" -ge 1 ] && [ "$samples" -ge 1 ]; then
    ok "--latency-history -i 1: $ranges ranges, $samples sample lines"
else
    fail "--latency-history: exit $rc, $ranges ranges, $samples sample lines: $(head -c 300 "$WORK/hist.out")"
fi

# The server is still well.
got=$(cli ping)
[ "$got" = PONG ] || fail "PING at the end: '$got'"

if [ $FAILS -gt 0 ]; then
    echo "redis_cli ($SRV_KIND): $FAILS failures"
    echo "---- server log (last lines)"
    tail -20 "$SRV_LOG" 2>/dev/null
    exit 1
fi
echo "redis_cli ($SRV_KIND): all checks passed"
exit 0
