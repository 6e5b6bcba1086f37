#!/usr/bin/env bash
# Device reports (POST /v1/device/reports), as ratios against nginx answering a POST of the same
# size with the same bytes, in one run on loopback; over SQLite, then over PostgreSQL when given.
# The server runs with --device-port: each database is measured on the device port (the lean
# SwiftNIO listener devices are pointed at) and on the main port (Vapor's route), one after the other.
#
#   bench/reports.sh                      release build, 10 s per wrk run
#   bench/reports.sh --smoke              debug build, 2 s per run: checks the script works (CI)
#   bench/reports.sh --strict             exit 1 when a target is missed
#   bench/reports.sh --postgres URL       also over PostgreSQL (or set COFFER_BENCH_DATABASE_URL)
#
# Set-up through the CLI, as bench/manifest.sh does: a team, an app bound to a collection, a model
# key, two sealed models, an active deployment. The batch: 20 events of one device (per model
# downloaded, opened, loaded, then opened 7 more times), with the deployment ID, sequence and
# SHA-256s read from the signed manifest. Load: wrk -t2 -c256 on each port, every request with event IDs and a
# device ID of its own (bench/reports_events.lua), so nothing is a duplicate and no device's budget
# is reached; the script fails if fewer than 99 % of the answers are 200 (counted by wrk as answers
# below 400: the server answers a batch with 200 or an error). Peer: nginx from the
# distribution, 2 workers, `return 200 '{"accepted":20,"duplicates":0}'` for the same POSTs (the
# same Lua script; it is kept lean, since whatever it costs per request caps the faster of the two: with
# a response() hook it held nginx at a third of its rate). After each Coffer run the script
# waits until the deployment's status counts every device that got a 200 (the reports are written
# every COFFER_REPORT_FLUSH_SECONDS; a 200 only means they are in memory) and prints how long that
# took; more than 60 s is a failure.
# The server runs with COFFER_DEVICE_REQUESTS_PER_ADDRESS_PER_MINUTE,
# COFFER_REPORTS_PER_APP_PER_MINUTE, COFFER_REPORT_EVENTS_PER_DEVICE_PER_MINUTE and the hourly
# COFFER_REPORT_DEVICES_PER_APP_PER_HOUR and COFFER_REPORT_FAILURES_PER_APP_PER_HOUR raised to 10^9:
# every request comes from one address and one app, and the budgets would otherwise turn the run
# into a measure of 429 answers.
# Targets (issue 16): requests/s >= 0.3x nginx and p99 <= 50 ms on the device port, over SQLite and
# over PostgreSQL (--strict checks those rows; the main port's are printed for comparison).
#
# PostgreSQL: URL names a server and a role that may CREATE DATABASE (.ci/postgres.sh prints one);
# the script makes a database coffer_bench_* there and drops it at the end.
# Set COFFER_BIN and COFFER_SERVER_BIN to use already-built binaries. Set COFFER_BENCH_NIO_FLOOR_BIN
# to the binary of bench/experiments/nio-floor to also load a bare SwiftNIO server with the device
# port's pipeline and none of the route's work (printed for reference, no target).
set -euo pipefail

usage() { echo "usage: $0 [--smoke] [--strict] [--postgres URL]" >&2; exit 64; }
smoke=0
strict=0
seconds=10
connections=256
postgres=${COFFER_BENCH_DATABASE_URL:-}
while [ $# -gt 0 ]; do
  case "$1" in
    --smoke) smoke=1; seconds=2 ;;
    --strict) strict=1 ;;
    --postgres) [ $# -ge 2 ] || usage; postgres=$2; shift ;;
    --postgres=*) postgres=${1#--postgres=} ;;
    *) usage ;;
  esac
  shift
done
tools=(wrk nginx curl python3)
[ -n "$postgres" ] && tools+=(psql)
for tool in "${tools[@]}"; do
  command -v "$tool" >/dev/null || { echo "bench: $tool is missing (apt-get install wrk nginx curl postgresql-client)" >&2; exit 69; }
done
[[ -z "$postgres" || "$postgres" =~ ^postgres(ql)?://[^[:space:]]+$ ]] \
  || { echo "bench: the PostgreSQL URL is not one postgres:// URL" >&2; exit 64; }

bench=$(cd "$(dirname "$0")" && pwd)
lua="$bench/reports_events.lua"
. "$bench/common.sh"
config=release; [ "$smoke" = 1 ] && config=debug
bench_binaries "$config"
bench_workdir reports
nonce=$(head -c 2 /dev/urandom | od -An -tx1 | tr -d ' \n')

# A database of its own on the PostgreSQL server, dropped on exit (after the server is stopped).
database_name="" database_url=""
# shellcheck disable=SC2317  # run by the EXIT trap
drop_database() {
  # From /: bench_cleanup has removed the working folder, and psql refuses to start in a folder that is gone.
  [ -z "$database_name" ] || (cd / && psql "$postgres" -qc "DROP DATABASE IF EXISTS $database_name WITH (FORCE)" >/dev/null 2>&1) || true
}
trap 'bench_cleanup; drop_database' EXIT
if [ -n "$postgres" ]; then
  database_name="coffer_bench_$(head -c 8 /dev/urandom | od -An -tx1 | tr -d ' \n')"
  psql "$postgres" -v ON_ERROR_STOP=1 -qc "CREATE DATABASE $database_name" >/dev/null \
    || { echo "bench: could not create database $database_name with the PostgreSQL URL given" >&2; exit 1; }
  database_url=$(python3 -c 'import sys, urllib.parse as u; p = u.urlsplit(sys.argv[1]); print(u.urlunsplit(p._replace(path="/" + sys.argv[2])))' \
    "$postgres" "$database_name")
fi

export COFFER_DEVICE_REQUESTS_PER_ADDRESS_PER_MINUTE=1000000000 COFFER_REPORTS_PER_APP_PER_MINUTE=1000000000 \
  COFFER_REPORT_EVENTS_PER_DEVICE_PER_MINUTE=1000000000 COFFER_REPORT_DEVICES_PER_APP_PER_HOUR=1000000000 \
  COFFER_REPORT_FAILURES_PER_APP_PER_HOUR=1000000000

# start_coffer DATABASE_URL: a fresh server (SQLite when the URL is empty) and data folder, set up
# through the CLI; writes manifest.json, batch.template (the wrk batch) and check.json (one batch,
# sent twice here, to each port: 20 accepted, then 20 duplicates). Sets server_pid, app_id, auth,
# deployment_id, device_server.
start_coffer() {
  rm -rf "$work/data" "$work/cli"
  local port device_port
  port=$(free_port)
  device_port=$(free_port)
  COFFER_DATABASE_URL=$1 bench_server "$port" --device-port "$device_port"
  device_server="http://127.0.0.1:$device_port"
  metrics_url="http://127.0.0.1:$port/metrics"
  server_pid=${pids[-1]}
  coffer team create Bench >/dev/null
  local app_json credential
  app_json=$(coffer app create --team Bench --name BenchApp --platform ios --json)
  app_id=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])' <<< "$app_json")
  credential=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["credential"])' <<< "$app_json")
  rm -f bench.modelkey classifier.coffer stylizer.coffer
  coffer key create --team Bench --name bench --output bench.modelkey >/dev/null
  for model in classifier stylizer; do coffer encrypt "$model.bin" --key bench.modelkey --output "$model.coffer" --quiet >/dev/null; done
  coffer collection create FlowerModels --team Bench --models FlowerClassifier,FlowerStylizer >/dev/null
  coffer app update --team Bench "$app_id" --collections FlowerModels >/dev/null
  coffer deployment create --collection FlowerModels --name bench --model FlowerClassifier=classifier.coffer \
    --model FlowerStylizer=stylizer.coffer --activate >/dev/null

  auth="Authorization: Basic $(printf '%s:%s' "$app_id" "$credential" | base64 -w0)"
  curl -sS -H "$auth" -o manifest.json -w '%{http_code}' \
    "$server/v1/device/collections/FlowerModels/manifest?deviceID=bench-device&deviceClass=phone&osName=iOS&osVersion=17.4" > status.txt
  [ "$(cat status.txt)" = 200 ] || { echo "bench: the manifest request failed: $(cat manifest.json)" >&2; exit 1; }
  deployment_id=$(python3 - "$nonce" <<'PY'
import base64, datetime, json, sys
manifest = json.loads(base64.b64decode(json.load(open("manifest.json"))["payload"]))
at = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
events = []
for model in sorted(manifest["models"]):
    for outcome in ["downloaded", "opened", "loaded"] + ["opened"] * 7:
        events.append({"id": f"@R-{len(events):02d}", "deviceID": "bench-@R", "collection": manifest["collection"],
                       "sequence": manifest["sequence"], "deployment": manifest["deploymentID"], "model": model,
                       "sha256": manifest["models"][model]["sha256"], "outcome": outcome, "at": at})
assert len(events) == 20, f"the deployment has {len(manifest['models'])} models, not 2"
template = json.dumps({"events": events}, separators=(",", ":"))
open("batch.template", "w").write(template)
# The prefix the Lua script puts in place of @R is always 22 characters: the same size here.
open("check.json", "w").write(template.replace("@R", f"chk{sys.argv[1]}-t00-{0:010d}"))
open("check-device.json", "w").write(template.replace("@R", f"chk{sys.argv[1]}-t00-{1:010d}"))
print(manifest["deploymentID"])
PY
)
  local first second base check
  for base in "$server" "$device_server"; do
    check=check.json
    if [ "$base" = "$device_server" ]; then check="check-device.json"; fi
    first=$(curl -sS -H "$auth" -H 'Content-Type: application/json' --data-binary @"$check" "$base/v1/device/reports")
    second=$(curl -sS -H "$auth" -H 'Content-Type: application/json' --data-binary @"$check" "$base/v1/device/reports")
    python3 - "$first" "$second" <<'PY' || { echo "bench: $base did not take the batch as expected: $first / $second" >&2; exit 1; }
import json, sys
first, second = (json.loads(text) for text in sys.argv[1:])
sys.exit(not (first == {"accepted": 20, "duplicates": 0} and second == {"accepted": 0, "duplicates": 20}))
PY
  done
}

stop_coffer() {
  kill "$server_pid" 2>/dev/null || true
  wait "$server_pid" 2>/dev/null || true
}

# run_wrk LABEL URL [HEADER…]: prints "requests_per_second p99_ms answers_200 answers" (LABEL: 3
# letters, made unique to this run with the nonce, in every event ID).
run_wrk() {
  local label=$1 url=$2; shift 2
  local args=()
  for header in "$@"; do args+=(-H "$header"); done
  wrk -t2 -c"$connections" -d"${seconds}s" --timeout 30s --latency -s "$lua" "${args[@]}" \
    -H 'Content-Type: application/json' "$url" "$work/batch.template" "$label$nonce" > "wrk-$label.txt"
  if grep -q 'Socket errors' "wrk-$label.txt"; then
    echo "bench: errors while loading $url:" >&2; cat "wrk-$label.txt" >&2; exit 1
  fi
  local ok total
  read -r ok total < <(grep -o 'answers: [0-9]* below 400 of [0-9]*' "wrk-$label.txt" | awk '{print $2, $6}')
  if [ -z "$total" ] || [ "$total" = 0 ] || [ $((ok * 100)) -lt $((total * 99)) ]; then
    echo "bench: $label: only ${ok:-0} of ${total:-0} answers from $url were 200 (at least 99 % must be):" >&2; cat "wrk-$label.txt" >&2
    [ -z "${metrics_url:-}" ] || curl -fs "$metrics_url" | grep "^coffer_http_requests_total" >&2 || true
    exit 1
  fi
  local result
  result=$(python3 - "wrk-$label.txt" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
rps = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
value, unit = re.search(r"\s99%\s+([\d.]+)(us|ms|s)\b", text).groups()
p99 = float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]
ok, total = re.search(r"answers: (\d+) below 400 of (\d+)", text).groups()
print(f"{rps:.0f} {p99:.2f} {ok} {total}")
PY
)
  # Each run's figures as it ends, on stderr: a later run that fails stops the script before the
  # summary, and what was measured before it is not lost.
  echo "bench: $label: $result (req/s, p99 ms, answers 200, answers)" >&2
  echo "$result"
}

# written EXPECTED: prints the seconds until the deployment's status counts EXPECTED devices, after
# the load stopped; fails after 60 s.
written() {
  local expected=$1 start devices
  start=$(date +%s.%N)
  for _ in $(seq 600); do
    devices=$(curl -fsS -H "Authorization: Bearer $token" \
      "$server/v1/teams/Bench/collections/FlowerModels/deployments/$deployment_id/status" \
      | python3 -c 'import json,sys; print(json.load(sys.stdin)["devices"])')
    if [ "$devices" -ge "$expected" ]; then
      awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'
      return
    fi
    sleep 0.1
  done
  echo "bench: after 60 s the status counts $devices devices of the $expected that got a 200" >&2
  exit 1
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }
verdict() { awk -v v="$1" -v t="$2" -v dir="$3" 'BEGIN { ok = (dir == "min" ? v >= t : v <= t); print (ok ? "meets" : "MISSES") }'; }
percent() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", (b > 0 ? 100 * a / b : 0) }'; }

head -c 200000 /dev/urandom > classifier.bin
head -c 100000 /dev/urandom > stylizer.bin

# Coffer over SQLite (its batch is also the one nginx gets).
start_coffer ""
batch_bytes=$(wc -c < check.json)

# nginx answering the same POSTs with the same bytes.
mkdir -p tmp
nginx_port=$(free_port)
bench_nginx "$work/tmp" "  server {
    listen 127.0.0.1:$nginx_port;
    location = /v1/device/reports {
      default_type application/json;
      return 200 '{\"accepted\":20,\"duplicates\":0}';
    }
  }"
for _ in $(seq 50); do curl -fs -o /dev/null --data-binary @check.json "http://127.0.0.1:$nginx_port/v1/device/reports" && break; sleep 0.1; done

read -r n_rps n_p99 n_ok n_total < <(run_wrk ngx "http://127.0.0.1:$nginx_port/v1/device/reports")
# The bare SwiftNIO floor (bench/experiments/nio-floor), when asked for: the same pipeline as the
# device port, none of the route's work.
if [ -n "${COFFER_BENCH_NIO_FLOOR_BIN:-}" ]; then
  floor_port=$(free_port)
  "$COFFER_BENCH_NIO_FLOOR_BIN" "$floor_port" & floor_pid=$!
  for _ in $(seq 50); do curl -fs -o /dev/null --data-binary @check.json "http://127.0.0.1:$floor_port/v1/device/reports" && break; sleep 0.1; done
  read -r f_rps f_p99 _ _ < <(run_wrk flr "http://127.0.0.1:$floor_port/v1/device/reports")
  kill "$floor_pid"; wait "$floor_pid" 2>/dev/null || true
fi
read -r sd_rps sd_p99 sd_ok sd_total < <(run_wrk sqd "$device_server/v1/device/reports" "$auth")
sd_written=$(written $((sd_ok + 2)))
read -r s_rps s_p99 s_ok s_total < <(run_wrk sql "$server/v1/device/reports" "$auth")
s_written=$(written $((sd_ok + s_ok + 2)))
stop_coffer

if [ -n "$database_url" ]; then
  start_coffer "$database_url"
  read -r pd_rps pd_p99 pd_ok pd_total < <(run_wrk pgd "$device_server/v1/device/reports" "$auth")
  pd_written=$(written $((pd_ok + 2)))
  read -r p_rps p_p99 p_ok p_total < <(run_wrk pgs "$server/v1/device/reports" "$auth")
  p_written=$(written $((pd_ok + p_ok + 2)))
  stop_coffer
fi

missed=0
# line NAME RPS P99 OK TOTAL WRITTEN [info]: one result line against nginx; sets missed unless
# marked info (the main port's rows: devices are pointed at the device port).
line() {
  local r v_rps v_p99
  r=$(ratio "$2" "$n_rps"); v_rps=$(verdict "$r" 0.3 min); v_p99=$(verdict "$3" 50 max)
  if [ "${7:-}" != info ] && { [ "$v_rps" != meets ] || [ "$v_p99" != meets ]; }; then missed=1; fi
  printf '  %-11s coffer %7s req/s p99 %7s ms | nginx %7s req/s p99 %6s ms | ratio %s (target >= 0.3: %s), p99 target <= 50 ms: %s\n' \
    "$1" "$2" "$3" "$n_rps" "$n_p99" "$r" "$v_rps" "$v_p99"
  printf '  %-11s %s events/s; %s %% of %s answers 200; all written %s s after the load stopped\n' \
    "" "$(awk -v r="$2" 'BEGIN { printf "%.0f", r * 20 }')" "$(percent "$4" "$5")" "$5" "$6"
}
echo "device reports (batches of 20 events, $batch_bytes bytes), wrk -t2 -c$connections -d${seconds}s, $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg):"
line sqlite-dev "$sd_rps" "$sd_p99" "$sd_ok" "$sd_total" "$sd_written"
line sqlite-main "$s_rps" "$s_p99" "$s_ok" "$s_total" "$s_written" info
if [ -n "$database_url" ]; then
  line pg-dev "$pd_rps" "$pd_p99" "$pd_ok" "$pd_total" "$pd_written"
  line pg-main "$p_rps" "$p_p99" "$p_ok" "$p_total" "$p_written" info
else
  echo "  postgresql not measured (give --postgres URL or set COFFER_BENCH_DATABASE_URL)"
fi
echo "  (nginx: $(percent "$n_ok" "$n_total") % of $n_total answers 200)"
[ -n "${f_rps:-}" ] && echo "  bare SwiftNIO floor (same pipeline, no route work): $f_rps req/s, p99 $f_p99 ms, $(ratio "$f_rps" "$n_rps")x nginx"
[ "$smoke" = 1 ] && echo "(smoke run: debug build, figures are not meaningful)"
[ "$strict" = 1 ] && [ "$missed" = 1 ] && exit 1
exit 0
