#!/usr/bin/env bash
# Runs schemathesis against a real coffer-server: generated requests (examples, coverage, fuzzing
# and the stateful phase, which follows the document's links) with an owner's token, judged by
#   not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance.
# Exits non-zero on any failure and prints a short summary.
#
#   bash tools/schemathesis/run.sh                     # uses .build/debug/coffer-server
#   COFFER_SERVER_BIN=path SCHEMATHESIS_MAX_EXAMPLES=N SCHEMATHESIS_SEED=S bash tools/schemathesis/run.sh
#   SCHEMATHESIS_SCHEMA=file.json bash tools/schemathesis/run.sh   # another document against this server
#
# The server runs on a free loopback port with a temporary data folder and a fresh random bootstrap
# token (256 bits) that is never printed. The report (JUnit) and the server's log are left in
# .build/schemathesis.
set -euo pipefail
cd "$(dirname "$0")/../.."
here=tools/schemathesis
server_bin=${COFFER_SERVER_BIN:-.build/debug/coffer-server}
venv=${SCHEMATHESIS_VENV:-.build/venv-schemathesis}
max_examples=${SCHEMATHESIS_MAX_EXAMPLES:-50}
seed=${SCHEMATHESIS_SEED:-14}
report_dir=.build/schemathesis
checks=not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance

[ -x "$server_bin" ] || { echo "schemathesis: no server binary at $server_bin (swift build first)" >&2; exit 1; }
# schemathesis and its dependencies as pinned in requirements.txt, reinstalled when that changes.
if ! cmp -s "$here/requirements.txt" "$venv/coffer-requirements.txt"; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q -r "$here/requirements.txt"
  cp "$here/requirements.txt" "$venv/coffer-requirements.txt"
fi
version=$("$venv/bin/schemathesis" --version | awk '{print $NF}')

data=$(mktemp -d)
port=$(python3 tools/free_port.py)
COFFER_SCHEMATHESIS_TOKEN=$(python3 -c 'import secrets; print("cft_" + secrets.token_urlsafe(32))')
export COFFER_SCHEMATHESIS_TOKEN
server_pid=
stop() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  rm -rf "$data"
}
trap stop EXIT

# The token reaches the server through its environment only (never argv), and only that process.
# Every generated request comes from 127.0.0.1: the per-address budgets (tested on their own in
# TrustBoundaryTests) are raised so that the run tests each route rather than the budget's 429.
COFFER_BOOTSTRAP_TOKEN=$COFFER_SCHEMATHESIS_TOKEN COFFER_DATA_DIR=$data COFFER_HOSTNAME=127.0.0.1 COFFER_PORT=$port \
  COFFER_BLOB_COLLECT_MINUTES=0 COFFER_AUTH_FAILURES_PER_ADDRESS_PER_MINUTE=1000000 COFFER_DEVICE_REQUESTS_PER_ADDRESS_PER_MINUTE=1000000 "$server_bin" serve >"$data/server.log" 2>&1 &
server_pid=$!
for _ in $(seq 1 100); do
  curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break
  kill -0 "$server_pid" 2>/dev/null || { echo "schemathesis: the server did not start:" >&2; tail -n 20 "$data/server.log" >&2; exit 1; }
  sleep 0.2
done
curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null || { echo "schemathesis: the server is not healthy" >&2; exit 1; }

# What the document's examples name; and the ID of the token itself, which hooks.py keeps.
COFFER_SCHEMATHESIS_TOKEN_ID=$(python3 "$here/seed.py" "http://127.0.0.1:$port")
export COFFER_SCHEMATHESIS_TOKEN_ID SCHEMATHESIS_HOOKS=$here/hooks.py

rm -rf "$report_dir"
started=$(date +%s)
status=0
schema=${SCHEMATHESIS_SCHEMA:-http://127.0.0.1:$port/openapi.json}
"$venv/bin/schemathesis" --config-file "$here/schemathesis.toml" run "$schema" --url "http://127.0.0.1:$port" \
  --checks "$checks" \
  --phases examples,coverage,fuzzing,stateful \
  --max-examples "$max_examples" --seed "$seed" \
  --workers 2 --request-timeout 30 --no-color \
  --suppress-health-check too_slow,filter_too_much \
  --report junit --report-dir "$report_dir" \
  2>&1 | python3 "$here/redact.py" >"$report_dir.log" || status=$?
seconds=$(( $(date +%s) - started ))

# The server must have survived the whole run (a trap is not a 5xx: it closes the connection).
alive=yes; kill -0 "$server_pid" 2>/dev/null || alive=no
mkdir -p "$report_dir" && cp "$data/server.log" "$report_dir/server.log"
# The token must appear nowhere: not in the server's log, schemathesis' log or its report.
if ! python3 - "$report_dir.log" "$report_dir" <<'PY'
import os, pathlib, sys
token = os.environ["COFFER_SCHEMATHESIS_TOKEN"]
files = [path for arg in sys.argv[1:] for path in ([pathlib.Path(arg)] if pathlib.Path(arg).is_file() else pathlib.Path(arg).rglob("*"))]
leaks = [str(path) for path in files if path.is_file() and token in path.read_text(errors="replace")]
if leaks:
    print("schemathesis: the token appears in " + ", ".join(leaks), file=sys.stderr)
sys.exit(1 if leaks else 0)
PY
then status=1; fi
if [ "$status" -ne 0 ] || [ "$alive" = no ]; then
  # Failures with their reproductions (tokens masked), without the progress lines.
  sed -n '/^=* \(FAILURES\|ERRORS\) =*$/,/^=* \(WARNINGS\|SUMMARY\) =*$/p' "$report_dir.log" | head -n 150
fi
sed -n '/ SUMMARY /,$p' "$report_dir.log" | grep -vE '^[[:space:]]*$|Reports:|JUnit:|^=+ .* in [0-9.]+s =+$'
echo "schemathesis $version: exit $status, server alive: $alive, ${seconds}s, max examples $max_examples, seed $seed (full log $report_dir.log)"
[ "$alive" = yes ] && [ "$status" -eq 0 ]
