#!/usr/bin/env bash
# diff_small.sh - test_diff again, with encoding thresholds so small that
# nearly every hash, set, sorted set and list changes encoding within a few
# commands (both servers get them), and once with AtticDB keeping its hashes
# and sets in pages of the log from their second member (D60). The default
# run of test_diff rarely leaves the small encodings; these runs found
# differences the default one never met.
#
# Each run's seed and length are fixed so that it passes through one of the
# differences found this way (each failed before its fix):
#   seed 11  LPOS ... RANK -9223372036854775808 (command 17656)
#   seed 5   RESTORE of a listpack hash whose value is longer than
#            hash-max-listpack-value (15035; here with paging on too)
#   seed 4   a numeric SORT after a SCAN left redis-server's errno at ERANGE
#            (15429: test_diff now clears it first)
#   seed 6   SPOP key count mutated into SPOP key, a random pop (3869)
# About 55,000 commands in all: 10-15 s on an idle 2-core machine.
#
# Usage: tests/integration/diff_small.sh (ATTICDB_SERVER, REDIS_SERVER as
# test_diff takes them). Exit 0 pass, 1 fail, 77 skipped (no redis-server).
set -u
builddir=${top_builddir:-$(cd "$(dirname "$0")/../.." && pwd)}
DIFF="$builddir/tests/integration/test_diff"
if [ ! -x "$DIFF" ]; then
    echo "SKIP: $DIFF is not built (it needs hiredis)"
    exit 77
fi
# The sequences are fixed: nothing from the caller's environment chooses them.
unset ATTIC_DIFF_SKIP ATTIC_DIFF_ONLY ATTIC_DIFF_BOTH_REDIS ATTIC_DIFF_RECORD

SMALL="--hash-max-listpack-entries 2 --set-max-intset-entries 2"
SMALLER="$SMALL --zset-max-listpack-entries 2 --list-max-listpack-size 2"
PAGED="--collection-paging-entries 2 --collection-page-size 512"

FAILS=0
run() { # seed commands both-servers-args atticdb-only-args
    echo "== ATTIC_SEED=$1 ATTIC_DIFF_N=$2 ATTIC_DIFF_ARGS=\"$3\" ATTIC_DIFF_ATTIC_ARGS=\"$4\""
    ATTIC_SEED=$1 ATTIC_DIFF_N=$2 ATTIC_DIFF_ARGS="$3" ATTIC_DIFF_ATTIC_ARGS="$4" \
        ATTIC_DIFF_TIMEOUT=120 "$DIFF"
    local rc=$?
    [ "$rc" -eq 77 ] && exit 77
    [ "$rc" -ne 0 ] && FAILS=$((FAILS + 1))
}

run 11 18000 "$SMALLER" ""
run 5 16000 "$SMALLER" "$PAGED"
run 4 16000 "$SMALL" ""
run 6 5000 "$SMALL" ""

if [ "$FAILS" -ne 0 ]; then
    echo "diff_small: $FAILS run(s) differed"
    exit 1
fi
echo "diff_small: all runs identical"
