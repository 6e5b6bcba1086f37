#!/usr/bin/env bash
# Stops the store .ci/rgw-start.sh started in DIR (default /tmp/coffer-rgw): each daemon by the PID
# in its own PID file, gateway first, never by name, then removes DIR.
set -uo pipefail
dir=${1:-/tmp/coffer-rgw}
for name in client.rgw osd.0 mon.a; do
  file=$dir/run/$name.pid
  [ -f "$file" ] || continue
  pid=$(cat "$file")
  kill "$pid" 2>/dev/null || continue
  for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
  if kill -0 "$pid" 2>/dev/null; then kill -9 "$pid"; fi
done
rm -rf "$dir"
