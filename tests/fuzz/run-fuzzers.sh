#!/usr/bin/env bash
# tests/fuzz/run-fuzzers.sh - build the libFuzzer harnesses with clang (ASan +
# UBSan) and run each for a bounded time from its seed corpus. Part of `make
# check` when clang with libFuzzer is installed (skipped otherwise).
#
#   FUZZ_SECONDS=20 tests/fuzz/run-fuzzers.sh      # per harness (default 15)
#   FUZZ_SECONDS=3600 FUZZ_ONLY=resp tests/fuzz/run-fuzzers.sh   # a long run
#   FUZZ_SECONDS=0 ...                             # skipped (exit 77)
set -euo pipefail
srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
builddir=${top_builddir:-$srcdir}
CC=${FUZZ_CC:-clang}
seconds=${FUZZ_SECONDS:-15}
if [ "$seconds" = 0 ]; then echo "fuzz: FUZZ_SECONDS=0, skipping"; exit 77; fi
if ! command -v "$CC" >/dev/null 2>&1; then echo "fuzz: $CC not found, skipping"; exit 77; fi
if ! echo 'int LLVMFuzzerTestOneInput(const char *d, long n){return 0;}' |
    "$CC" -x c -fsanitize=fuzzer - -o /dev/null 2>/dev/null; then
    echo "fuzz: $CC has no libFuzzer, skipping"; exit 77
fi
out=$(mktemp -d /tmp/atticdb-fuzz.XXXXXX)
trap 'rm -rf "$out"' EXIT
export ATTIC_FUZZ_DIR="$out"
cflags=(-g -O1 -std=gnu11 -D_GNU_SOURCE -include "$builddir/autoconfig.h"
        -I"$srcdir/common" -I"$srcdir" -fsanitize=fuzzer,address,undefined
        -fno-sanitize-recover=undefined -Wno-unused-command-line-argument)
common=("$srcdir"/common/*.c)
libs=(-llzf -lpthread -lm)
# common/uring.c calls liburing when the build found it.
grep -q '^#define HAVE_LIBURING 1' "$builddir/autoconfig.h" && libs+=(-luring)
# The store's state machine: every store file (core/, types/ included) but
# the process's own (its loop, store.c; its reads in flight, reads.c).
state=$(ls "$srcdir"/store/*.c "$srcdir"/store/*/*.c | grep -v '/store/\(store\|reads\)\.c$' | tr '\n' ' ')
declare -A sources=(
    [resp]="$srcdir/tests/fuzz/fuzz_resp.c"
    [record]="$srcdir/tests/fuzz/fuzz_record.c"
    [recovery]="$srcdir/tests/fuzz/fuzz_recovery.c $srcdir/logger/recover.c $srcdir/logger/segfile.c $state"
)
status=0
for name in resp record recovery; do
    [ -n "${FUZZ_ONLY:-}" ] && [ "$FUZZ_ONLY" != "$name" ] && continue
    # shellcheck disable=SC2086
    "$CC" "${cflags[@]}" ${sources[$name]} "${common[@]}" "${libs[@]}" -o "$out/fuzz_$name"
    mkdir -p "$out/corpus_$name"
    echo "fuzz: $name for ${seconds}s"
    if ! ASAN_OPTIONS=detect_leaks=0 "$out/fuzz_$name" -max_total_time="$seconds" -rss_limit_mb=2048 \
        -print_final_stats=1 -artifact_prefix="$out/" "$out/corpus_$name" "$srcdir/tests/fuzz/corpus/$name" > "$out/$name.log" 2>&1; then
        echo "fuzz: $name FAILED"; tail -40 "$out/$name.log"; status=1
        # Keep the input that failed (also printed above, in base64).
        cp "$out"/crash-* "$out"/leak-* "$out"/timeout-* . 2>/dev/null || true
    else
        grep -E "stat::number_of_executed_units|cov:" "$out/$name.log" | tail -2
    fi
done
exit $status
