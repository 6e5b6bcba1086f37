#!/usr/bin/env bash
# Manifest and blob serving, as ratios against nginx serving the same bytes, in one run on loopback.
#
#   bench/manifest.sh            release build, 10 s per wrk run, 256 MiB blob
#   bench/manifest.sh --smoke    debug build, 2 s per run, 16 MiB blob: checks the script works (CI)
#
# The server runs with --device-port: manifests are measured on that lean listener, and for
# comparison on the main (Vapor) port. Peer: nginx (from the distribution) serving the manifest's
# exact bytes as a static file, with
# sendfile, 2 workers. Load: wrk, 256 connections, 2 threads. Targets (issue 4): manifest requests/s
# >= 0.5x nginx and p99 <= 20 ms; the same for 304 answers; blob download throughput >= 0.7x nginx.
# Issue 16: the manifest targets hold while a staged rollout (50 %) is active.
# Set COFFER_BIN and COFFER_SERVER_BIN to use already-built binaries.
set -euo pipefail

smoke=0
seconds=10
blob_mib=256
for arg in "$@"; do
  case "$arg" in
    --smoke) smoke=1; seconds=2; blob_mib=16 ;;
    *) echo "usage: $0 [--smoke]" >&2; exit 64 ;;
  esac
done
for tool in wrk nginx curl python3; do
  command -v "$tool" >/dev/null || { echo "bench: $tool is missing (apt-get install wrk nginx curl)" >&2; exit 69; }
done

. "$(dirname "$0")/common.sh"
config=release; [ "$smoke" = 1 ] && config=debug
bench_binaries "$config"
bench_workdir manifest

# The Coffer server, with a set-up made through the CLI: team, app, key, two models, a deployment.
port=$(free_port)
device_port=$(free_port)
bench_server "$port" --device-port "$device_port"
coffer team create Bench >/dev/null
app_json=$(coffer app create --team Bench --name BenchApp --platform ios --json)
app_id=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])' <<< "$app_json")
credential=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["credential"])' <<< "$app_json")
coffer key create --team Bench --name bench --output bench.modelkey >/dev/null
head -c 200000 /dev/urandom > classifier.bin
head -c 100000 /dev/urandom > stylizer.bin
head -c $((blob_mib << 20)) /dev/urandom > big.bin
for model in classifier stylizer big; do coffer encrypt "$model.bin" --key bench.modelkey --output "$model.coffer" --quiet >/dev/null; done
coffer collection create FlowerModels --team Bench --models FlowerClassifier,FlowerStylizer >/dev/null
coffer app update --team Bench "$app_id" --collections FlowerModels >/dev/null
coffer deployment create --collection FlowerModels --name bench --model FlowerClassifier=classifier.coffer \
  --model FlowerStylizer=stylizer.coffer --rule 'deviceClass=tablet : FlowerClassifier=big.coffer' --activate >/dev/null
big_sha=$(sha256sum big.coffer | cut -d' ' -f1)

query="deviceID=bench-device&deviceClass=phone&osName=iOS&osVersion=17.4&language=en&region=US"
manifest_url="http://127.0.0.1:$device_port/v1/device/collections/FlowerModels/manifest?$query"
vapor_url="http://127.0.0.1:$port/v1/device/collections/FlowerModels/manifest?$query"
auth="Authorization: Basic $(printf '%s:%s' "$app_id" "$credential" | base64 -w0)"
curl -sS -D headers.txt -H "$auth" "$manifest_url" -o manifest.json
grep -q " 200" headers.txt || { echo "bench: the manifest request failed: $(cat manifest.json)" >&2; exit 1; }
etag=$(awk 'tolower($1) == "etag:" {print $2}' headers.txt | tr -d '\r')
[ "$(curl -s -o /dev/null -w '%{http_code}' -H "$auth" -H "If-None-Match: $etag" "$manifest_url")" = 304 ] \
  || { echo "bench: the server did not answer 304 to its own ETag" >&2; exit 1; }

# nginx serving the same manifest bytes and the same blob.
mkdir -p www/tmp
cp manifest.json www/manifest.json
cp big.coffer www/blob
# nginx's workers run as another user: let them through to www/ (the server's data stays 0700).
chmod 711 "$work"; chmod 755 www; chmod 644 www/manifest.json www/blob
nginx_port=$(free_port)
bench_nginx "$work/www/tmp" "  sendfile on; tcp_nopush on;
  default_type application/json;
  server { listen 127.0.0.1:$nginx_port; root $work/www; }"
for _ in $(seq 50); do curl -fs "http://127.0.0.1:$nginx_port/manifest.json" >/dev/null && break; sleep 0.1; done
nginx_etag=$(curl -fsS -D - -o /dev/null "http://127.0.0.1:$nginx_port/manifest.json" | awk 'tolower($1) == "etag:" {print $2}' | tr -d '\r')

# run_wrk CONNECTIONS URL [HEADER…]: prints "requests_per_second p99_ms transfer_mib_per_second".
run_wrk() {
  local connections=$1 url=$2; shift 2
  local args=()
  for header in "$@"; do args+=(-H "$header"); done
  wrk -t2 -c"$connections" -d"${seconds}s" --timeout 30s --latency "${args[@]}" "$url" > wrk.txt
  if grep -qE 'Non-2xx or 3xx responses|Socket errors' wrk.txt; then
    echo "bench: errors while loading $url:" >&2; cat wrk.txt >&2; exit 1
  fi
  python3 - <<'PY'
import re
text = open("wrk.txt").read()
rps = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
value, unit = re.search(r"\s99%\s+([\d.]+)(us|ms|s)\b", text).groups()
p99 = float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]
tvalue, tunit = re.search(r"Transfer/sec:\s+([\d.]+)(B|KB|MB|GB)", text).groups()
mib = float(tvalue) * {"B": 1 / 2**20, "KB": 1 / 1024, "MB": 1.0, "GB": 1024.0}[tunit]
print(f"{rps:.0f} {p99:.2f} {mib:.1f}")
PY
}

read -r c_rps c_p99 _ < <(run_wrk 256 "$manifest_url" "$auth")
read -r v_rps v_p99 _ < <(run_wrk 256 "$vapor_url" "$auth")
read -r n_rps n_p99 _ < <(run_wrk 256 "http://127.0.0.1:$nginx_port/manifest.json")
read -r c304_rps c304_p99 _ < <(run_wrk 256 "$manifest_url" "$auth" "If-None-Match: $etag")
read -r v304_rps v304_p99 _ < <(run_wrk 256 "$vapor_url" "$auth" "If-None-Match: $etag")
read -r n304_rps n304_p99 _ < <(run_wrk 256 "http://127.0.0.1:$nginx_port/manifest.json" "If-None-Match: $nginx_etag")
read -r _ _ c_blob < <(run_wrk 4 "http://127.0.0.1:$port/v1/blobs/$big_sha")
read -r _ _ n_blob < <(run_wrk 4 "http://127.0.0.1:$nginx_port/blob")

# The same while a staged rollout is active (issue 16): the device's side of the stage is worked out
# per request from memory (its rollout bucket), never from the database.
coffer deployment clone bench --collection FlowerModels --name bench-next --model FlowerStylizer=classifier.coffer >/dev/null
coffer deployment activate bench-next --collection FlowerModels --stages 50,100 --stage-hours 1000 >/dev/null
curl -sS -D staged-headers.txt -H "$auth" "$manifest_url" -o staged.json
grep -q " 200" staged-headers.txt || { echo "bench: the staged manifest request failed: $(cat staged.json)" >&2; exit 1; }
staged_sequence=$(python3 -c 'import base64,json,sys; print(json.loads(base64.b64decode(json.load(sys.stdin)["payload"]))["sequence"])' < staged.json)
[ "$staged_sequence" = 2 ] || { echo "bench: the staged manifest is sequence $staged_sequence, not 2" >&2; exit 1; }
staged_etag=$(awk 'tolower($1) == "etag:" {print $2}' staged-headers.txt | tr -d '\r')
read -r s_rps s_p99 _ < <(run_wrk 256 "$manifest_url" "$auth")
read -r s304_rps s304_p99 _ < <(run_wrk 256 "$manifest_url" "$auth" "If-None-Match: $staged_etag")

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }
verdict() { awk -v v="$1" -v t="$2" -v dir="$3" 'BEGIN { ok = (dir == "min" ? v >= t : v <= t); print (ok ? "meets" : "MISSES") }'; }
r_manifest=$(ratio "$c_rps" "$n_rps"); r_304=$(ratio "$c304_rps" "$n304_rps"); r_blob=$(ratio "$c_blob" "$n_blob")
echo "manifest ($(wc -c < manifest.json) bytes), wrk -t2 -c256 -d${seconds}s, $(nproc) cores:"
printf '  200: coffer %8s req/s p99 %6s ms | nginx %8s req/s p99 %6s ms | ratio %s (target >= 0.5: %s), p99 target <= 20 ms: %s\n' \
  "$c_rps" "$c_p99" "$n_rps" "$n_p99" "$r_manifest" "$(verdict "$r_manifest" 0.5 min)" "$(verdict "$c_p99" 20 max)"
printf '  304: coffer %8s req/s p99 %6s ms | nginx %8s req/s p99 %6s ms | ratio %s (target >= 0.5: %s), p99 target <= 20 ms: %s\n' \
  "$c304_rps" "$c304_p99" "$n304_rps" "$n304_p99" "$r_304" "$(verdict "$r_304" 0.5 min)" "$(verdict "$c304_p99" 20 max)"
printf '  the same through the main (Vapor) port: 200 %s req/s p99 %s ms (%s x nginx); 304 %s req/s p99 %s ms (%s x nginx)\n' \
  "$v_rps" "$v_p99" "$(ratio "$v_rps" "$n_rps")" "$v304_rps" "$v304_p99" "$(ratio "$v304_rps" "$n304_rps")"
r_staged=$(ratio "$s_rps" "$n_rps"); r_staged304=$(ratio "$s304_rps" "$n304_rps")
printf '  staged rollout active (50 %%): 200 %s req/s p99 %s ms (%s x nginx: %s; p99: %s); 304 %s req/s p99 %s ms (%s x nginx: %s; p99: %s)\n' \
  "$s_rps" "$s_p99" "$r_staged" "$(verdict "$r_staged" 0.5 min)" "$(verdict "$s_p99" 20 max)" \
  "$s304_rps" "$s304_p99" "$r_staged304" "$(verdict "$r_staged304" 0.5 min)" "$(verdict "$s304_p99" 20 max)"
echo "blob download (${blob_mib} MiB), wrk -t2 -c4 -d${seconds}s:"
printf '  coffer %s MiB/s | nginx %s MiB/s | ratio %s (target >= 0.7: %s)\n' "$c_blob" "$n_blob" "$r_blob" "$(verdict "$r_blob" 0.7 min)"
[ "$smoke" = 1 ] && echo "(smoke run: debug build, figures are not meaningful)"
exit 0
