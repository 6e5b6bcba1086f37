#!/usr/bin/env bash
# Delta updates: what `coffer sync` moves, and how long it takes, when a model changes from version N
# to N+1, against a full download of N+1. In one run on loopback.
#
#   bench/delta.sh                  release build, 1 GiB model, 3 runs per variant (medians)
#   bench/delta.sh 256              the same with a 256 MiB model
#   bench/delta.sh --smoke          debug build, 32 MiB model, 1 run: checks the script works (CI)
#   bench/delta.sh --strict         exit 1 when a target is missed (for checking the delta work)
#
# Model N: a safetensors file (8-byte header length, JSON header, tensor data) of 102 tensors from
# a few KiB to a tenth of the model, with pseudo-random float-like bytes (bench/delta_models.py).
# Versions N+1:
#   retrain 1/5/20 %   tensors picked in a seeded random order until they hold 1, 5 or 20 % of the
#                      tensor BYTES (not of the count; the count and the share reached are printed),
#                      rewritten with new bytes, same dtypes and shapes: the file's layout is unchanged
#   header +1237 B     metadata added to the JSON header, 1237 bytes (a prime, not aligned to
#                      anything): every tensor moves, no tensor byte changes
#   quantized          every tensor rewritten in a dtype half as wide: nothing shared
# For each: N and N+1 are sealed with `coffer encrypt` under one model key (`coffer key create`),
# each is a deployment of the collection. Each run activates N and syncs two fresh device caches
# to it (not measured), then activates N+1 and syncs them again (the delta sync): one through a TCP
# proxy that counts every byte both ways (bench/count_proxy.py), for the bytes, the other straight
# from the server, for the time (the proxy's own cost grows with the bytes it carries and would
# flatter the delta); then an empty cache, straight (the full sync; in the first run also once
# through the proxy, for its bytes). Bytes: the delta sync's bytes on the wire against the size of
# the sealed N+1 file. Time: wall time of `coffer sync` (manifest, download, SHA-256, switch),
# delta sync against full sync.
# Targets (delta-update issue): 5 % retrained <= 10 % of the bytes; shifted header <= 2 %; delta
# sync <= 0.3x a full sync (checked for those two variants; the others are shown for reference).
# Every run checks that the cache ends up holding exactly the sealed N+1.
#
# The working folder is in /dev/shm when it is writable (about 12 GiB at 1 GiB: the server keeps
# every version, the device caches hold two); COFFER_BENCH_DIR=/path puts it elsewhere.
# Set COFFER_BIN and COFFER_SERVER_BIN to use already-built binaries; COFFER_ENCRYPT_ARGS adds
# options to every `coffer encrypt` (e.g. "--format-version 1" to measure the old container).
# Needs curl and python3; openssl makes generating the models much faster.
set -euo pipefail

smoke=0
strict=0
runs=3
model_mib=1024
for arg in "$@"; do
  case "$arg" in
    --smoke) smoke=1; runs=1; model_mib=32 ;;
    --strict) strict=1 ;;
    [0-9]*) model_mib=$arg ;;
    *) echo "usage: $0 [SIZE_MIB] [--smoke] [--strict]" >&2; exit 64 ;;
  esac
done
for tool in curl python3; do
  command -v "$tool" >/dev/null || { echo "bench: $tool is missing (apt-get install curl python3)" >&2; exit 69; }
done

bench=$(cd "$(dirname "$0")" && pwd)
. "$bench/common.sh"
config=release; [ "$smoke" = 1 ] && config=debug
bench_binaries "$config"
if [ -n "${COFFER_BENCH_DIR:-}" ]; then
  mkdir -p "$COFFER_BENCH_DIR"
  work=$(mktemp -d "$COFFER_BENCH_DIR/coffer-bench-delta.XXXXXX")
  trap bench_cleanup EXIT
  cd "$work"
else
  bench_workdir delta
fi
read -ra encrypt_args <<< "${COFFER_ENCRYPT_ARGS:-}"
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
median() { python3 -c 'import statistics, sys; print(round(statistics.median(float(x) for x in sys.argv[1:])))' "$@"; }
fail() { echo "bench: $*" >&2; exit 1; }

# The server, and a team, an app, a model key and a collection, as bench/sync.sh sets them up. A
# delta sync may make many range requests from this one address: lift the per-address limit.
COFFER_DEVICE_REQUESTS_PER_ADDRESS_PER_MINUTE=1000000 bench_server "$(free_port)"
coffer team create Bench >/dev/null
app_json=$(coffer app create --team Bench --name BenchApp --platform ios --json)
app_id=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])' <<< "$app_json")
python3 -c 'import json,sys; print(json.load(sys.stdin)["credential"])' <<< "$app_json" > app.credential
chmod 600 app.credential
unset app_json
coffer key create --team Bench --name bench --output bench.modelkey >/dev/null
coffer collection create Models --team Bench --models Big >/dev/null
coffer app update --team Bench "$app_id" --collections Models >/dev/null
public_key=$("$COFFER_SERVER_BIN" public-key --data-dir "$work/data")

# The counting proxy in front of the server. Its status file reads "accepted closed up down".
proxy_port=$(free_port)
python3 "$bench/count_proxy.py" "$proxy_port" "${server##*:}" "$work/proxy.status" &
pids+=($!)
proxy="http://127.0.0.1:$proxy_port"
for _ in $(seq 50); do curl -fs "$proxy/healthz" >/dev/null && break; sleep 0.1; done
curl -fs "$proxy/healthz" >/dev/null || fail "the counting proxy does not answer"
# proxy_bytes: waits until every connection the proxy accepted has closed, prints the bytes so far.
proxy_bytes() {
  local accepted closed up down
  for _ in $(seq 200); do
    read -r accepted closed up down < proxy.status
    [ "$accepted" = "$closed" ] && { echo $((up + down)); return; }
    sleep 0.05
  done
  fail "connections through the proxy stay open ($accepted accepted, $closed closed)"
}

# sync_to URL CACHE: coffer sync as bench/sync.sh runs it; the report goes to sync.json.
sync_to() {
  coffer sync --server "$1" --app "$app_id" --credential-file app.credential --public-key "$public_key" \
    --collection Models --cache "$2" --device-id bench-1 --json > sync.json
}
# check_cache SEALED: the sync came from the server and left exactly SEALED in the cache.
check_cache() {
  local path
  path=$(python3 -c 'import json,sys; r = json.load(open("sync.json")); assert r["source"] == "server", r["source"]
print(next(m["path"] for m in r["models"] if m["name"] == "Big"))') || fail "coffer sync did not report a model from the server"
  cmp -s "$path" "$1" || fail "the cache does not hold the sealed N+1 after the sync"
}
# counted_sync CACHE: syncs CACHE through the proxy; sets sync_bytes.
counted_sync() {
  local before after
  before=$(proxy_bytes)
  sync_to "$proxy" "$1"
  after=$(proxy_bytes)
  sync_bytes=$((after - before))
}
# timed_sync CACHE: syncs CACHE straight from the server (the proxy's own cost grows with the bytes
# it carries, which would flatter the delta sync); sets sync_ms.
timed_sync() {
  local start end
  start=$(now_ms)
  sync_to "$server" "$1"
  end=$(now_ms)
  sync_ms=$((end - start))
}

# Model N, sealed and deployed (as a draft: each run activates it).
start=$(now_ms)
base_note=$(python3 "$bench/delta_models.py" base base.safetensors --size-mib "$model_mib")
if [ "$smoke" = 1 ]; then python3 "$bench/delta_models.py" check base.safetensors >/dev/null; fi
coffer encrypt base.safetensors --key bench.modelkey --output base.coffer --quiet "${encrypt_args[@]}" >/dev/null
coffer deployment create --collection Models --name base --model Big=base.coffer >/dev/null
base_sealed=$(stat -c %s base.coffer)
rm base.coffer
echo "delta updates: ${base_note#base: }, $(stat -c %s base.safetensors) bytes; N sealed: $base_sealed bytes" \
  "(made in $(( ($(now_ms) - start) / 1000 )) s)"
echo "$runs run(s) per variant, medians; $(nproc) cores; $COFFER_BIN"

# name | label | delta_models.py arguments | byte target (% of N+1, or -) | time target (x full, or -)
variants=(
  "retrain-1|1 % retrained|retrain --percent 1|-|-"
  "retrain-5|5 % retrained|retrain --percent 5|10|0.3"
  "retrain-20|20 % retrained|retrain --percent 20|-|-"
  "header|header +1237 B|header --shift 1237|2|0.3"
  "quantized|quantized|quantize|-|-"
)
rows=()
notes=()
missed=0
declare -A share_of ratio_of
for variant in "${variants[@]}"; do
  IFS='|' read -r name label how byte_target time_target <<< "$variant"
  read -ra how_args <<< "$how"
  note=$(python3 "$bench/delta_models.py" "${how_args[0]}" base.safetensors next.safetensors "${how_args[@]:1}")
  notes+=("$(printf '  %-16s %s' "$label" "$note")")
  if [ "$smoke" = 1 ]; then python3 "$bench/delta_models.py" check next.safetensors >/dev/null; fi
  coffer encrypt next.safetensors --key bench.modelkey --output next.coffer --quiet "${encrypt_args[@]}" >/dev/null
  rm next.safetensors
  coffer deployment create --collection Models --name "$name" --model Big=next.coffer >/dev/null
  size=$(stat -c %s next.coffer)

  delta_ms=() delta_bytes=() full_ms=()
  for run in $(seq "$runs"); do
    rm -rf counted timed full
    coffer deployment activate base --collection Models >/dev/null
    sync_to "$server" counted                       # version N on two devices: not measured
    sync_to "$server" timed
    coffer deployment activate "$name" --collection Models >/dev/null
    counted_sync counted                            # N -> N+1, bytes
    check_cache next.coffer
    delta_bytes+=("$sync_bytes")
    rm -rf counted
    timed_sync timed                                # N -> N+1, time
    check_cache next.coffer
    delta_ms+=("$sync_ms")
    timed_sync full                                 # N+1 into an empty cache, time
    check_cache next.coffer
    full_ms+=("$sync_ms")
    if [ "$run" = 1 ]; then                         # and its bytes, once
      rm -rf full
      counted_sync full
      check_cache next.coffer
      f_bytes=$sync_bytes
      [ "$f_bytes" -ge "$size" ] || fail "a full sync moved $f_bytes bytes for a $size-byte model: the proxy missed the download"
    fi
  done
  rm -rf timed full next.coffer

  d_ms=$(median "${delta_ms[@]}"); d_bytes=$(median "${delta_bytes[@]}")
  f_ms=$(median "${full_ms[@]}")
  read -r share full_share ratio < <(python3 -c "print(f'{100 * $d_bytes / $size:.1f} {100 * $f_bytes / $size:.1f} {$d_ms / max($f_ms, 1):.2f}')")
  share_of[$name]=$share ratio_of[$name]=$ratio
  byte_verdict="" time_verdict=""
  if [ "$byte_target" != - ]; then
    if python3 -c "import sys; sys.exit(not $share <= $byte_target)"; then byte_verdict="<= $byte_target %: meets"
    else byte_verdict="<= $byte_target %: MISSES"; missed=1; fi
  fi
  if [ "$time_target" != - ]; then
    if python3 -c "import sys; sys.exit(not $ratio <= $time_target)"; then time_verdict="<= ${time_target}x: meets"
    else time_verdict="<= ${time_target}x: MISSES"; missed=1; fi
  fi
  rows+=("$(printf '%-16s %10.1f %10.1f %6s %%  %-18s %6s %% | %8s %8s %6sx  %s' "$label" \
    "$(python3 -c "print($size / 2**20)")" "$(python3 -c "print($d_bytes / 2**20)")" "$share" "$byte_verdict" \
    "$full_share" "$f_ms" "$d_ms" "$ratio" "$time_verdict")")
done

echo "versions N+1:"
printf '%s\n' "${notes[@]}"
echo
printf '%-16s %10s %10s %8s  %-18s %8s | %8s %8s %7s  %s\n' "N -> N+1" "N+1 MiB" "delta MiB" "delta" "bytes target" "full" \
  "full ms" "delta ms" "ratio" "time target"
printf '%s\n' "${rows[@]}"
echo "(MiB: the sealed N+1, and the delta sync's bytes on the wire, both ways; delta and full: bytes on the wire as a"
echo " share of the sealed N+1; ms: wall time of coffer sync, without the proxy; ratio: delta ms / full ms)"
[ "$smoke" = 1 ] && echo "(smoke run: debug build, small model, one run: checks the script works; the figures say nothing about the targets)"
echo "summary: 5 % retrained moved ${share_of[retrain-5]} % of N+1 (target <= 10 %), shifted header ${share_of[header]} %" \
  "(target <= 2 %); delta sync ${ratio_of[retrain-5]}x and ${ratio_of[header]}x a full sync (target <= 0.3x):" \
  "$([ "$missed" = 0 ] && echo "all targets met" || echo "targets MISSED")"
[ "$strict" = 1 ] && [ "$missed" = 1 ] && exit 1
exit 0
