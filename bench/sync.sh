#!/usr/bin/env bash
# coffer sync + coffer open against curl, in one run on loopback.
#
#   bench/sync.sh            release build, 256 MiB model, 5 runs each (median)
#   bench/sync.sh --smoke    debug build, 16 MiB model, 1 run each: checks the script works (CI)
#
# Time: from `coffer sync` starting with an empty cache (manifest, download, SHA-256, switch) through
# `coffer open --output` (key fetch, decryption) to the decrypted file, against `curl` downloading
# the same sealed blob from the same server to the same file system. Target (issue 5): <= 1.5x curl.
# Also `coffer sync --open --output` (issue 15): one process that decrypts while it downloads and
# writes the plaintext once the download is verified, against the same curl.
# Bytes: an unchanged check (`coffer sync` with the cache current) through a counting TCP proxy,
# both directions. Target: < 2 KiB, no model bytes.
# Set COFFER_BIN and COFFER_SERVER_BIN to use already-built binaries.
set -euo pipefail

smoke=0
runs=5
model_mib=256
for arg in "$@"; do
  case "$arg" in
    --smoke) smoke=1; runs=1; model_mib=16 ;;
    *) echo "usage: $0 [--smoke]" >&2; exit 64 ;;
  esac
done
for tool in curl python3; do
  command -v "$tool" >/dev/null || { echo "bench: $tool is missing (apt-get install curl python3)" >&2; exit 69; }
done

. "$(dirname "$0")/common.sh"
config=release; [ "$smoke" = 1 ] && config=debug
bench_binaries "$config"
bench_workdir sync
median() { python3 -c 'import statistics, sys; print(statistics.median(float(x) for x in sys.argv[1:]))' "$@"; }

bench_server "$(free_port)"
coffer team create Bench >/dev/null
app_json=$(coffer app create --team Bench --name BenchApp --platform ios --json)
app_id=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])' <<< "$app_json")
python3 -c 'import json,sys; print(json.load(sys.stdin)["credential"])' <<< "$app_json" > app.credential
chmod 600 app.credential
coffer key create --team Bench --name bench --output bench.modelkey >/dev/null
head -c $((model_mib << 20)) /dev/urandom > model.bin
coffer encrypt model.bin --key bench.modelkey --output model.coffer --quiet >/dev/null
coffer collection create Models --team Bench --models Big >/dev/null
coffer app update --team Bench "$app_id" --collections Models >/dev/null
coffer deployment create --collection Models --name bench --model Big=model.coffer --activate >/dev/null
sha=$(sha256sum model.coffer | cut -d' ' -f1)
public_key=$("$COFFER_SERVER_BIN" public-key --data-dir "$work/data")

sync_to() { # $1 server URL, $2 cache
  coffer sync --server "$1" --app "$app_id" --credential-file app.credential --public-key "$public_key" \
    --collection Models --cache "$2" --device-id bench-1 > /dev/null
}

curl_times=()
coffer_times=()
stream_times=()
sync_times=()
for run in $(seq "$runs"); do
  rm -f curl.out
  start=$(bench_now)
  curl -fsS -o curl.out "$server/v1/blobs/$sha"
  end=$(bench_now)
  curl_times+=($(( (end - start) / 1000 )))
  cmp -s curl.out model.coffer || { echo "bench: curl got other bytes" >&2; exit 1; }

  rm -rf cache plain.out
  start=$(bench_now)
  sync_to "$server" cache
  coffer open --cache cache --collection Models Big --output plain.out
  end=$(bench_now)
  coffer_times+=($(( (end - start) / 1000 )))
  cmp -s plain.out model.bin || { echo "bench: coffer open gave other bytes" >&2; exit 1; }

  rm -rf cache plain.out
  start=$(bench_now)
  coffer sync --server "$server" --app "$app_id" --credential-file app.credential --public-key "$public_key" \
    --collection Models --cache cache --device-id bench-1 --open Big --output plain.out > /dev/null
  end=$(bench_now)
  stream_times+=($(( (end - start) / 1000 )))
  cmp -s plain.out model.bin || { echo "bench: coffer sync --open gave other bytes" >&2; exit 1; }

  rm -rf cache
  start=$(bench_now)
  sync_to "$server" cache
  end=$(bench_now)
  sync_times+=($(( (end - start) / 1000 )))
done
curl_us=$(median "${curl_times[@]}")
coffer_us=$(median "${coffer_times[@]}")
stream_us=$(median "${stream_times[@]}")
sync_us=$(median "${sync_times[@]}")

# The unchanged check, through a proxy that counts every byte both ways.
proxy_port=$(free_port)
python3 - "$proxy_port" "${server##*:}" "$work/proxy.bytes" <<'PY' &
import asyncio, sys
listen, upstream, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
total = 0
async def pipe(reader, writer):
    global total
    try:
        while data := await reader.read(65536):
            total += len(data)
            writer.write(data)
            await writer.drain()
    finally:
        writer.close()
        open(out, "w").write(str(total))
async def handle(client_reader, client_writer):
    server_reader, server_writer = await asyncio.open_connection("127.0.0.1", upstream)
    await asyncio.gather(pipe(client_reader, server_writer), pipe(server_reader, client_writer))
async def main():
    server = await asyncio.start_server(handle, "127.0.0.1", listen)
    async with server:
        await server.serve_forever()
asyncio.run(main())
PY
pids+=($!)
for _ in $(seq 50); do curl -fs "http://127.0.0.1:$proxy_port/healthz" >/dev/null && break; sleep 0.1; done
rm -f proxy.bytes
sync_to "http://127.0.0.1:$proxy_port" cache
sleep 0.3
check_bytes=$(cat proxy.bytes)

ratio=$(python3 -c "print(f'{$coffer_us / $curl_us:.2f}')")
stream_ratio=$(python3 -c "print(f'{$stream_us / $curl_us:.2f}')")
printf 'model: %d MiB sealed, %d run(s), medians\n' "$model_mib" "$runs"
printf 'curl download:                 %8.1f ms\n' "$(python3 -c "print($curl_us / 1000)")"
printf 'coffer sync + open (plaintext): %8.1f ms  = %sx curl (target <= 1.5x)\n' "$(python3 -c "print($coffer_us / 1000)")" "$ratio"
printf 'coffer sync --open (one pass):  %8.1f ms  = %sx curl (target <= 1.5x)\n' "$(python3 -c "print($stream_us / 1000)")" "$stream_ratio"
printf 'coffer sync alone (sealed):     %8.1f ms  = %sx curl (for reference)\n' "$(python3 -c "print($sync_us / 1000)")" "$(python3 -c "print(f'{$sync_us / $curl_us:.2f}')")"
printf 'unchanged check:               %8d bytes both ways (target < 2048, no model bytes)\n' "$check_bytes"
[ "$check_bytes" -lt 2048 ] || { echo "bench: the unchanged check moved $check_bytes bytes" >&2; exit 1; }
