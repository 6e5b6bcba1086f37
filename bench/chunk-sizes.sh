#!/usr/bin/env bash
# How the chunk size affects sealing and opening speed: 64 KiB, 128 KiB, 256 KiB and 1 MiB chunks
# over the same random file in a tmpfs, with hyperfine (apt-get install hyperfine). Prints
# hyperfine's table; the ratios against the 1 MiB default are in its "Relative" column.
#
#   bench/chunk-sizes.sh [SIZE_MIB]      default 1024; COFFER_BIN to use a built binary
set -euo pipefail
size_mib=${1:-1024}
here=$(cd "$(dirname "$0")/.." && pwd)
if [ -z "${COFFER_BIN:-}" ]; then
  (cd "$here" && swift build -c release --product coffer >/dev/null)
  COFFER_BIN="$here/.build/release/coffer"
fi
command -v hyperfine >/dev/null || { echo "bench: hyperfine is missing (apt-get install hyperfine)" >&2; exit 69; }
COFFER_BIN=$(cd "$(dirname "$COFFER_BIN")" && pwd)/$(basename "$COFFER_BIN")
base=/dev/shm; [ -w "$base" ] || base=${TMPDIR:-/tmp}
work=$(mktemp -d "$base/coffer-chunks.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"
head -c $((size_mib << 20)) /dev/urandom > in.bin
"$COFFER_BIN" key generate --name bench --output k.modelkey >/dev/null
for e in 16 17 18 20; do "$COFFER_BIN" encrypt in.bin --key k.modelkey -o "s$e.coffer" --quiet --chunk-size-exponent "$e" >/dev/null; done
hyperfine -N -w 1 -r 6 --style basic --export-markdown chunks.md -L e 16,17,18,20 \
  "$COFFER_BIN encrypt in.bin --key k.modelkey -o o.coffer --force --quiet --chunk-size-exponent {e}" \
  "$COFFER_BIN decrypt s{e}.coffer --key k.modelkey -o back --force --quiet" >/dev/null
sed "s|$COFFER_BIN|coffer|g" chunks.md
