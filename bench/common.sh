# Shared by the benchmark scripts that run a server: sourced, not run.
#
# bench_binaries CONFIG   sets COFFER_BIN and COFFER_SERVER_BIN (absolute), building CONFIG unless both are set
# bench_workdir NAME      makes $work in a tmpfs (else TMPDIR), cds into it; on exit kills "${pids[@]}" and removes it
# free_port               prints a loopback port nothing listens on, below the kernel's ephemeral range (so no
#                         outgoing connection or bind to port 0 takes it before the server does) and not
#                         printed before in this run (tools/free_port.py)
# bench_server PORT ARGS  starts coffer-server on PORT with a fresh data folder and a bootstrap token, waits
#                         for /healthz (exits with the server's log if it never answers), and logs in the CLI:
#                         sets $server and $token, exports COFFER_SERVER,
#                         COFFER_TOKEN and COFFER_CONFIG_DIR; coffer() runs the CLI.
# bench_nginx TEMP BLOCK  starts nginx (2 workers, no access log, temporary files in TEMP) with BLOCK inside
#                         http {}; adds its pid to pids
# bench_now               prints the time in nanoseconds without starting a program (bash's EPOCHREALTIME):
#                         `python3 -c` took 0.16-0.19 s to start on the CI machine, and a clock read that way
#                         added its start to every interval it ended, the peer's as much as Coffer's

bench_now() {
  local micros=${EPOCHREALTIME/[.,]/}
  echo "${micros}000"
}

bench_nginx() {
  local temp=$1 block=$2
  cat > "$work/nginx.conf" <<CONF
worker_processes 2;
error_log $work/nginx-error.log;
pid $work/nginx.pid;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path $temp; proxy_temp_path $temp; fastcgi_temp_path $temp;
  uwsgi_temp_path $temp; scgi_temp_path $temp;
$block
}
CONF
  nginx -c "$work/nginx.conf" -g 'daemon off;' &
  pids+=($!)
}

bench_binaries() {
  local here config=$1
  here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
  if [ -z "${COFFER_BIN:-}" ] || [ -z "${COFFER_SERVER_BIN:-}" ]; then
    (cd "$here" && swift build -c "$config" --product coffer >/dev/null && swift build -c "$config" --product coffer-server >/dev/null)
    COFFER_BIN="$here/.build/$config/coffer"
    COFFER_SERVER_BIN="$here/.build/$config/coffer-server"
  fi
  COFFER_BIN=$(cd "$(dirname "$COFFER_BIN")" && pwd)/$(basename "$COFFER_BIN")
  COFFER_SERVER_BIN=$(cd "$(dirname "$COFFER_SERVER_BIN")" && pwd)/$(basename "$COFFER_SERVER_BIN")
}

pids=()
bench_cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}

bench_workdir() {
  local base=/dev/shm
  [ -w "$base" ] || base=${TMPDIR:-/tmp}
  work=$(mktemp -d "$base/coffer-bench-$1.XXXXXX")
  trap bench_cleanup EXIT
  cd "$work"
}

# The repository's root, made absolute while sourcing (the scripts cd into $work afterwards).
bench_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
free_port() { python3 "$bench_root/tools/free_port.py" "$work/.ports"; }

coffer() { "$COFFER_BIN" "$@"; }

bench_server() {
  local port=$1
  shift
  token="cft_bench_$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')"
  COFFER_BOOTSTRAP_TOKEN=$token COFFER_DATA_DIR="$work/data" COFFER_BLOB_COLLECT_MINUTES=0 \
    "$COFFER_SERVER_BIN" serve --hostname 127.0.0.1 --port "$port" "$@" > server.log 2>&1 &
  local pid=$!
  pids+=("$pid")
  for _ in $(seq 100); do
    curl -fs "http://127.0.0.1:$port/healthz" >/dev/null && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.2
  done
  if ! curl -fs "http://127.0.0.1:$port/healthz" >/dev/null; then
    echo "bench: the server did not start on port $port:" >&2
    tail -n 20 server.log >&2
    exit 1
  fi
  server="http://127.0.0.1:$port"
  export COFFER_SERVER="$server" COFFER_TOKEN="$token" COFFER_CONFIG_DIR="$work/cli"
}
