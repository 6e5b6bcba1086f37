#!/usr/bin/env bash
# SealedFields cost: inserting and reading records with two sealed fields against the same records
# unsealed, both sides in the same run of the same release binary. Target (issue 7): sealed <= 2x plain.
#
#   bench/sealedfields.sh            100 000 records, release build, best of 3 runs
#   bench/sealedfields.sh --smoke    2 000 records, debug build, 1 run: checks correctness only (CI)
#
# Set SEALEDFIELDS_BENCH_BIN to use an already-built binary. Runs in /dev/shm when it can, so the disk
# does not decide the ratio.
set -euo pipefail

smoke=0
count=100000
runs=3
for arg in "$@"; do
  case "$arg" in
    --smoke) smoke=1; count=2000; runs=1 ;;
    [0-9]*) count=$arg ;;
    *) echo "usage: $0 [RECORDS] [--smoke]" >&2; exit 64 ;;
  esac
done

here=$(cd "$(dirname "$0")/.." && pwd)
if [ -z "${SEALEDFIELDS_BENCH_BIN:-}" ]; then
  config=release; [ "$smoke" = 1 ] && config=debug
  (cd "$here" && swift build -c "$config" --product sealedfields-bench >/dev/null)
  SEALEDFIELDS_BENCH_BIN="$here/.build/$config/sealedfields-bench"
fi
base=/dev/shm; [ -w "$base" ] || base=${TMPDIR:-/tmp}

[ "$smoke" = 1 ] && echo "(smoke run: checks correctness; a debug build says nothing about the target)"
best_insert="" best_read=""
for _ in $(seq "$runs"); do
  run=$("$SEALEDFIELDS_BENCH_BIN" "$count" "$base") || { echo "bench: sealedfields-bench failed" >&2; exit 1; }
  insert=$(awk '$1 == "insert" {print $4}' <<<"$run" | tr -d x)
  read=$(awk '$1 == "read" {print $4}' <<<"$run" | tr -d x)
  if [ -z "$best_insert" ] || awk "BEGIN{exit !($insert < $best_insert)}"; then best_insert=$insert; fi
  if [ -z "$best_read" ] || awk "BEGIN{exit !($read < $best_read)}"; then best_read=$read; fi
  echo "$run" | sed 's/^/  /'
done
echo "best of $runs: insert ${best_insert}x, read ${best_read}x plain (target <= 2.00x)"
