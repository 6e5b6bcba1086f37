#!/usr/bin/env bash
# Blobs through coffer-server on an S3 store (a Ceph RADOS Gateway on loopback) against the store
# itself, in one run.
#
#   bench/blobs-s3.sh            release build, 256 MiB blob, 3 runs each (median), then a 1 GiB upload
#   bench/blobs-s3.sh --runs 7   the same with 7 runs each (median): the machine is noisy
#   bench/blobs-s3.sh --smoke    debug build, 32 MiB blob, 1 run each, a 64 MiB upload: checks the script works
#                                and every download's bytes (CI); the targets are not judged
#
# Peers, measured in the same run on the same gateway:
#   upload:   coffer blob upload (the API's PUT, streamed into a multipart upload by the server)
#             against boto3's upload_file straight to the gateway (multipart, 8 MiB parts, its default
#             10 threads). Target (issue 20): >= 0.7x direct.
#   download: curl of /v1/blobs/SHA streamed through the server, and with COFFER_S3_PRESIGN=1 curl -L
#             following the server's redirect to a presigned URL, against curl of a presigned URL of
#             the same object straight from the gateway. Targets: streamed >= 0.8x direct; presigned
#             = direct within noise.
#   memory:   the server's peak RSS (VmHWM) after the large upload. Target: <= 128 MiB.
# Rates are bytes over wall time; "x direct" is coffer's rate over the peer's (higher is better).
# The gateway is started with .ci/rgw-start.sh unless COFFER_BENCH_S3_ENDPOINT (with
# COFFER_BENCH_S3_ACCESS_KEY / COFFER_BENCH_S3_SECRET_KEY) names one. Set COFFER_BIN and
# COFFER_SERVER_BIN to use already-built binaries. Exits 1 if a target is missed.
set -euo pipefail

smoke=0
runs=3
mib=256
large_mib=1024
while [ $# -gt 0 ]; do
  case "$1" in
    --smoke) smoke=1; runs=1; mib=32; large_mib=64 ;;
    --runs) shift; [[ "${1:-}" =~ ^[1-9][0-9]?$ ]] || { echo "usage: $0 [--smoke] [--runs N]" >&2; exit 64; }; runs=$1 ;;
    *) echo "usage: $0 [--smoke] [--runs N]" >&2; exit 64 ;;
  esac
  shift
done
for tool in curl python3; do
  command -v "$tool" >/dev/null || { echo "bench: $tool is missing" >&2; exit 69; }
done
python3 -c 'import boto3' 2>/dev/null || { echo "bench: boto3 is missing (pip install boto3)" >&2; exit 69; }

here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/bench/common.sh"
config=release; [ "$smoke" = 1 ] && config=debug
bench_binaries "$config"
# The blobs are large: a disk folder, not /dev/shm (the gateway keeps its objects in memory already).
work=$(mktemp -d "${TMPDIR:-/tmp}/coffer-bench-s3.XXXXXX")
rgw_dir=""
bucket=""
cleanup() {
  cd /
  # The gateway keeps objects in memory: a gigabyte and more per run must not stay behind.
  if [ -n "$bucket" ]; then
    python3 - "$bucket" <<'PY' || true
import sys, boto3
from botocore.config import Config
s3 = boto3.client("s3", config=Config(s3={"addressing_style": "path"}))
for upload in s3.list_multipart_uploads(Bucket=sys.argv[1]).get("Uploads", []):
    s3.abort_multipart_upload(Bucket=sys.argv[1], Key=upload["Key"], UploadId=upload["UploadId"])
for page in s3.get_paginator("list_objects_v2").paginate(Bucket=sys.argv[1]):
    for item in page.get("Contents", []):
        s3.delete_object(Bucket=sys.argv[1], Key=item["Key"])
s3.delete_bucket(Bucket=sys.argv[1])
PY
  fi
  # The gateway first: rgw-stop.sh finds its daemons by the PID files in $rgw_dir, inside $work,
  # which bench_cleanup removes (stopped after it, the OSD and the gateway ran on, 2 GiB a run).
  if [ -n "$rgw_dir" ]; then bash "$here/.ci/rgw-stop.sh" "$rgw_dir"; fi
  bench_cleanup
}
trap cleanup EXIT
cd "$work"
median() { python3 -c 'import statistics, sys; print(statistics.median(float(x) for x in sys.argv[1:]))' "$@"; }

if [ -n "${COFFER_BENCH_S3_ENDPOINT:-}" ]; then
  endpoint=$COFFER_BENCH_S3_ENDPOINT access=$COFFER_BENCH_S3_ACCESS_KEY secret=$COFFER_BENCH_S3_SECRET_KEY
else
  rgw_dir=$work/rgw
  rgw_port=$(free_port)
  access=COFFERBENCH secret=coffer-bench-secret
  RGW_PORT=$rgw_port MON_PORT=$(free_port) RGW_ACCESS_KEY=$access RGW_SECRET_KEY=$secret bash "$here/.ci/rgw-start.sh" "$rgw_dir"
  endpoint=http://127.0.0.1:$rgw_port
fi
export AWS_ACCESS_KEY_ID=$access AWS_SECRET_ACCESS_KEY=$secret AWS_REGION=us-east-1 AWS_ENDPOINT_URL_S3=$endpoint
s3() { # python3 boto3 helper: s3 ACTION ARGS
  python3 - "$@" <<'PY'
import sys, boto3
from boto3.s3.transfer import TransferConfig
from botocore.config import Config
s3 = boto3.client("s3", config=Config(s3={"addressing_style": "path"}))
action, bucket, *rest = sys.argv[1:]
if action == "mb":
    s3.create_bucket(Bucket=bucket)
elif action == "put":
    s3.upload_file(rest[0], bucket, rest[1], Config=TransferConfig(multipart_threshold=8 << 20, multipart_chunksize=8 << 20))
elif action == "presign":
    print(s3.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": rest[0]}, ExpiresIn=3600))
PY
}
bucket=coffer-bench-$(head -c 6 /dev/urandom | od -An -tx1 | tr -d ' \n')
s3 mb "$bucket"

# One data folder and bootstrap token for every instance: they share the database and the bucket.
token="cft_bench_$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')"
start_server() { # $1 port, then extra environment
  local port=$1
  shift
  env "$@" COFFER_BLOB_STORE="s3://$bucket/coffer" COFFER_BOOTSTRAP_TOKEN=$token COFFER_DATA_DIR="$work/data" \
    COFFER_BLOB_COLLECT_MINUTES=0 "$COFFER_SERVER_BIN" serve --hostname 127.0.0.1 --port "$port" > "server-$port.log" 2>&1 &
  server_pid=$!
  pids+=($server_pid)
  for _ in $(seq 100); do curl -fs "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.2; done
  curl -fs "http://127.0.0.1:$port/healthz" >/dev/null || { echo "bench: coffer-server did not start:"; cat "server-$port.log"; exit 70; } >&2
  server="http://127.0.0.1:$port"
  export COFFER_SERVER="$server" COFFER_TOKEN="$token" COFFER_CONFIG_DIR="$work/cli"
}

streamed_port=$(free_port)
start_server "$streamed_port"
streamed=$server
coffer team create Bench >/dev/null
coffer key create --team Bench --name bench --output bench.modelkey >/dev/null
seal() { # $1 MiB, $2 output
  head -c $(($1 << 20)) /dev/urandom > plain.bin
  coffer encrypt plain.bin --key bench.modelkey --output "$2" --quiet >/dev/null
  rm -f plain.bin
}
seal "$mib" blob.coffer
size=$(stat -c %s blob.coffer)
sha=$(sha256sum blob.coffer | cut -d' ' -f1)

rate() { python3 -c "import sys; print($size / (float(sys.argv[1]) / 1e9) / (1 << 20))" "$1"; }
up_direct=() up_coffer=() down_direct=() down_streamed=() down_presigned=()
presigned_port=$(free_port)
for run in $(seq "$runs"); do
  # Upload: boto3 writes a new key each run; the server's object is deleted first, so the server
  # receives and stores all the bytes again (it skips only blobs its store still holds).
  start=$(bench_now); s3 put "$bucket" blob.coffer "direct/run-$run"; up_direct+=($(( $(bench_now) - start )))
  python3 - "$bucket" "coffer/blobs/$sha" <<'PY'
import sys, boto3
from botocore.config import Config
boto3.client("s3", config=Config(s3={"addressing_style": "path"})).delete_object(Bucket=sys.argv[1], Key=sys.argv[2])
PY
  start=$(bench_now); coffer blob upload blob.coffer --team Bench >/dev/null; up_coffer+=($(( $(bench_now) - start )))

  url=$(s3 presign "$bucket" "direct/run-$run")
  rm -f out; start=$(bench_now); curl -fsS -o out "$url"; down_direct+=($(( $(bench_now) - start )))
  [ "$(sha256sum out | cut -d' ' -f1)" = "$sha" ] || { echo "bench: the direct download differs" >&2; exit 70; }
  rm -f out; start=$(bench_now); curl -fsS -o out "$streamed/v1/blobs/$sha"; down_streamed+=($(( $(bench_now) - start )))
  [ "$(sha256sum out | cut -d' ' -f1)" = "$sha" ] || { echo "bench: the streamed download differs" >&2; exit 70; }
done
# The same bucket and database through a second instance that redirects to presigned URLs.
kill "$server_pid"; wait "$server_pid" 2>/dev/null || true
start_server "$presigned_port" COFFER_S3_PRESIGN=1
for run in $(seq "$runs"); do
  rm -f out; start=$(bench_now); curl -fsSL -o out "$server/v1/blobs/$sha"; down_presigned+=($(( $(bench_now) - start )))
  [ "$(sha256sum out | cut -d' ' -f1)" = "$sha" ] || { echo "bench: the presigned download differs" >&2; exit 70; }
done
redirect=$(curl -s -o /dev/null -w '%{http_code}' "$server/v1/blobs/$sha")
[ "$redirect" = 307 ] || { echo "bench: the presigning server answered $redirect, not 307" >&2; exit 70; }

# Memory: a fresh server (its peak is its own), one large upload.
kill "$server_pid"; wait "$server_pid" 2>/dev/null || true
start_server "$(free_port)"
seal "$large_mib" large.coffer
large_start=$(bench_now)
coffer blob upload large.coffer --team Bench >/dev/null
large_ns=$(( $(bench_now) - large_start ))
peak_kib=$(awk '/^VmHWM:/ {print $2}' "/proc/$server_pid/status")

python3 - "$smoke" "$size" "$large_mib" "$peak_kib" "$large_ns" \
  "${up_direct[*]}" "${up_coffer[*]}" "${down_direct[*]}" "${down_streamed[*]}" "${down_presigned[*]}" <<'PY'
import statistics, sys
smoke, size, large_mib, peak_kib, large_ns = (int(x) for x in sys.argv[1:6])
runs = [[int(x) for x in arg.split()] for arg in sys.argv[6:]]
up_direct, up_coffer, down_direct, down_streamed, down_presigned = (statistics.median(r) for r in runs)
rate = lambda ns: size / (ns / 1e9) / (1 << 20)
missed = False
def line(name, coffer, direct, target, check):
    global missed
    ratio = direct / coffer
    ok = check(ratio)
    missed |= not ok
    print(f"  {name}: coffer {rate(coffer):7.1f} MiB/s, direct {rate(direct):7.1f} MiB/s -> {ratio:.2f}x direct (target {target}: {'met' if ok else 'MISSED'})")
print(f"{size / (1 << 20):.0f} MiB blob, median of {len(runs[0])} runs, on the gateway:")
line("upload through the server      ", up_coffer, up_direct, ">= 0.7x", lambda r: r >= 0.7)
line("download streamed by the server", down_streamed, down_direct, ">= 0.8x", lambda r: r >= 0.8)
print("    each run's streamed/direct: " + " ".join(f"{d / s:.2f}" for d, s in zip(runs[2], runs[3])))
line("download, presigned redirect   ", down_presigned, down_direct, "= direct, >= 0.9x", lambda r: r >= 0.9)
ok = peak_kib <= 128 * 1024
missed |= not ok
print(f"  server peak RSS after a {large_mib} MiB upload ({large_mib / (large_ns / 1e9):.1f} MiB/s): {peak_kib} KiB = {peak_kib / 1024:.1f} MiB (target <= 128 MiB: {'met' if ok else 'MISSED'})")
if smoke:
    print("  (smoke run: a debug build and a small blob; the targets are judged on release builds only)")
sys.exit(1 if missed and not smoke else 0)
PY
