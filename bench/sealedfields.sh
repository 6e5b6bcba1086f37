#!/usr/bin/env bash
# SealedFields cost: inserting and reading records with two sealed fields against the same records
# unsealed, both sides in the same run of the same release binary, and the read against its floor (the
# plain read plus two bare AES.GCM.open calls per record, measured in the same run).
# Targets (issue 18): sealed read <= 1.3x the floor; sealed insert <= 2x the plain insert.
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
best_insert="" best_floor="" inserts="" floors=""
for _ in $(seq "$runs"); do
  run=$("$SEALEDFIELDS_BENCH_BIN" "$count" "$base") || { echo "bench: sealedfields-bench failed" >&2; exit 1; }
  insert=$(awk '$1 == "insert" {print $4}' <<<"$run" | tr -d x)
  floor=$(awk '$1 == "floor" {print $4}' <<<"$run" | tr -d x)
  if [ -z "$best_insert" ] || awk "BEGIN{exit !($insert < $best_insert)}"; then best_insert=$insert; fi
  if [ -z "$best_floor" ] || awk "BEGIN{exit !($floor < $best_floor)}"; then best_floor=$floor; fi
  inserts="$inserts $insert" floors="$floors $floor"
  echo "$run" | sed 's/^/  /'
done
median() { tr ' ' '\n' <<<"$1" | sed '/^$/d' | sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)"
echo "best of $runs: read ${best_floor}x the floor (target <= 1.30x), insert ${best_insert}x plain (target <= 2.00x)"
echo "median of $runs: read $(median "$floors")x the floor, insert $(median "$inserts")x plain"
