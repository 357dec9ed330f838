#!/usr/bin/env bash
# diff_small.sh - test_diff again, with encoding thresholds so small that
# nearly every hash, set, sorted set and list changes encoding within a few
# commands (both servers get them), and with AtticDB keeping its hashes and
# sets in pages of the log from their second member (D60). The default run
# of test_diff seldom leaves the small encodings; these runs found
# differences it never met.
#
# Two runs of 10,000 commands, then short runs whose seed and length take
# them through one of the differences found this way, each of which failed
# before its fix (the command where it did in brackets):
#   seed 145 small       SORT ... GET k* STORE of an APPENDed value crashed
#                        the store, on every replay too [8081]
#   seed 120 paged       RESTORE of a listpack hash with a value longer than
#                        hash-max-listpack-value made a hashtable [2164]
#   seed 72  paged       LPOS ... RANK -9223372036854775808 [3280]
#   seed 191 paged       a numeric SORT after redis-server's errno was left
#                        at ERANGE (test_diff now clears it first) [2760]
#   seed 110 paged       OBJECT ENCODING of a sorted zset inside EXEC [3862]
#   seed 132 paged       SPOP key count mutated into SPOP key [5416]
#   seed 62  small       WATCH, then FLUSHALL, of a zset its last ZPOPMAX
#                        emptied aborted EXEC [31850]
# About 68,000 commands in all: 10-15 s on an idle 2-core machine.
#
# Usage: tests/integration/diff_small.sh (ATTICDB_SERVER, REDIS_SERVER as
# test_diff takes them; ATTIC_DIFF_BIN: another test_diff). Exit 0 pass,
# 1 fail, 77 skipped (no redis-server, or test_diff not built).
set -u
builddir=${top_builddir:-$(cd "$(dirname "$0")/../.." && pwd)}
DIFF=${ATTIC_DIFF_BIN:-$builddir/tests/integration/test_diff}
if [ ! -x "$DIFF" ]; then
    echo "SKIP: $DIFF is not built (it needs hiredis)"
    exit 77
fi
# The sequences are fixed: nothing from the caller's environment chooses them.
unset ATTIC_DIFF_SKIP ATTIC_DIFF_ONLY ATTIC_DIFF_BOTH_REDIS ATTIC_DIFF_RECORD ATTIC_DIFF_VERBOSE

SMALL="--hash-max-listpack-entries 2 --set-max-intset-entries 2 --zset-max-listpack-entries 2"
SMALL="$SMALL --list-max-listpack-size 2"
PAGED="--collection-paging-entries 2 --collection-page-size 512"

FAILS=0
run() { # seed commands atticdb-only-args
    echo "== ATTIC_SEED=$1 ATTIC_DIFF_N=$2 ATTIC_DIFF_ARGS=\"$SMALL\" ATTIC_DIFF_ATTIC_ARGS=\"$3\""
    ATTIC_SEED=$1 ATTIC_DIFF_N=$2 ATTIC_DIFF_ARGS="$SMALL" ATTIC_DIFF_ATTIC_ARGS="$3" \
        ATTIC_DIFF_MAX_MISMATCHES=3 ATTIC_DIFF_TIMEOUT=120 "$DIFF"
    local rc=$?
    [ "$rc" -eq 77 ] && exit 77
    [ "$rc" -ne 0 ] && FAILS=$((FAILS + 1))
}

run 145 10000 ""
run 120 10000 "$PAGED"
run 72 3500 "$PAGED"
run 191 3000 "$PAGED"
run 110 4000 "$PAGED"
run 132 5500 "$PAGED"
run 62 32000 ""

if [ "$FAILS" -ne 0 ]; then
    echo "diff_small: $FAILS run(s) differed"
    exit 1
fi
echo "diff_small: all runs identical"
