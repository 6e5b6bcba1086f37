#!/usr/bin/env bash
# Peak RSS of `coffer blob download` from a host that ignores Range, against the blob's size.
#
#   bench/cli-download-rss.sh            release build, a 1024 MiB blob
#   bench/cli-download-rss.sh 256        a 256 MiB blob
#   bench/cli-download-rss.sh --smoke    debug build, 64 MiB: checks the script works (CI)
#
# The host is Python's http.server, which ignores Range and answers every GET with 200 and the
# whole file (a misconfigured CDN does the same): the CLI asks for 8 MiB pieces and gets the whole
# blob in the first answer. The peak is GNU time's %M (maximum resident set, KiB) of the CLI
# process alone. Target (issue 18): under 64 MiB whatever the blob's size; the CLI must also write
# the blob bit for bit and verify its SHA-256. Exits 1 when either is missed.
# Set COFFER_BIN to use an already-built CLI. The blob and its copy go to TMPDIR (not /dev/shm:
# two copies of a large blob in memory would crowd the machine, and page cache is not RSS anyway).
set -euo pipefail

smoke=0
mib=1024
for arg in "$@"; do
  case "$arg" in
    --smoke) smoke=1; mib=64 ;;
    ''|*[!0-9]*) echo "usage: $0 [--smoke | MIB]" >&2; exit 64 ;;
    *) mib=$arg ;;
  esac
done
for tool in python3 sha256sum; do
  command -v "$tool" >/dev/null || { echo "bench: $tool is missing" >&2; exit 69; }
done
[ -x /usr/bin/time ] || { echo "bench: GNU time is missing (apt-get install time)" >&2; exit 69; }

here=$(cd "$(dirname "$0")/.." && pwd)
config=release; [ "$smoke" = 1 ] && config=debug
if [ -z "${COFFER_BIN:-}" ]; then
  (cd "$here" && swift build -c "$config" --product coffer >/dev/null)
  COFFER_BIN="$here/.build/$config/coffer"
fi
COFFER_BIN=$(cd "$(dirname "$COFFER_BIN")" && pwd)/$(basename "$COFFER_BIN")

work=$(mktemp -d "${TMPDIR:-/tmp}/coffer-bench-download-rss.XXXXXX")
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
cd "$work"

# One random mebibyte repeated: the content does not matter to the CLI, only its size.
head -c $((1 << 20)) /dev/urandom > one
mkdir -p site/v1/blobs
for ((i = 0; i < mib; i++)); do cat one; done > blob
address=$(sha256sum blob | cut -d' ' -f1)
mv blob "site/v1/blobs/$address"

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 -m http.server --bind 127.0.0.1 --directory site "$port" >/dev/null 2>&1 &
pids+=($!)
for _ in $(seq 100); do
  python3 -c "import socket; socket.create_connection(('127.0.0.1', $port), 1)" 2>/dev/null && break
  sleep 0.1
done
ranges=$(python3 -c "
import urllib.request
r = urllib.request.urlopen(urllib.request.Request('http://127.0.0.1:$port/v1/blobs/$address', method='HEAD', headers={'Range': 'bytes=0-0'}))
print(r.status)")
[ "$ranges" = 200 ] || { echo "bench: the host honours Range (HTTP $ranges), which this benchmark must not have" >&2; exit 70; }

/usr/bin/time -f '%M %e' -o peak "$COFFER_BIN" blob download "$address" -o copy --server "http://127.0.0.1:$port" \
  > download.out
read -r peak_kib seconds < <(tail -n 1 peak)
copied=$(sha256sum copy | cut -d' ' -f1)

echo "$COFFER_BIN blob download, ${mib} MiB blob from a host that ignores Range:"
python3 - "$peak_kib" "$mib" "$seconds" <<'PY'
import sys
peak_kib, mib, seconds = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
print(f"  peak RSS {peak_kib} KiB = {peak_kib / 1024:.1f} MiB; {peak_kib / 1024 / mib:.3f} x the blob's size; {seconds:.2f} s")
print(f"  target: under 64 MiB: {'met' if peak_kib < 64 * 1024 else 'MISSED'}")
PY
cat download.out | sed 's/^/  /'
status=0
[ "$copied" = "$address" ] || { echo "  the copy's SHA-256 is $copied, not $address" >&2; status=1; }
[ "$peak_kib" -lt $((64 * 1024)) ] || status=1
exit $status
