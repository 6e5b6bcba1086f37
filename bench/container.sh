#!/usr/bin/env bash
# Container throughput and memory, as ratios against peers measured in the same run.
#
#   bench/container.sh            1 GiB random file in a tmpfs, release build, best of 3 runs each
#   bench/container.sh --smoke    16 MiB, 1 run: checks correctness only (CI)
#
# Peers: cp (the I/O floor), age -r with an X25519 recipient, openssl speed -evp aes-256-gcm
# (the one-core cipher ceiling). Targets (issue 2): encrypt and decrypt >= 1.5x age and >= 0.6x cp;
# peak RSS <= 64 MiB. Set COFFER_BIN to use an already-built binary.
set -euo pipefail

smoke=0
size_mib=1024
runs=3
for arg in "$@"; do
  case "$arg" in
    --smoke) smoke=1; size_mib=16; runs=1 ;;
    [0-9]*) size_mib=$arg ;;
    *) echo "usage: $0 [SIZE_MIB] [--smoke]" >&2; exit 64 ;;
  esac
done

here=$(cd "$(dirname "$0")/.." && pwd)
if [ -z "${COFFER_BIN:-}" ]; then
  config=release; [ "$smoke" = 1 ] && config=debug
  (cd "$here" && swift build -c "$config" --product coffer >/dev/null)
  COFFER_BIN="$here/.build/$config/coffer"
fi
for tool in age age-keygen openssl /usr/bin/time; do
  command -v "$tool" >/dev/null || { echo "bench: $tool is missing (apt-get install age time openssl)" >&2; exit 69; }
done

COFFER_BIN=$(cd "$(dirname "$COFFER_BIN")" && pwd)/$(basename "$COFFER_BIN")
base=/dev/shm; [ -w "$base" ] || base=${TMPDIR:-/tmp}
work=$(mktemp -d "$base/coffer-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"

head -c $((size_mib << 20)) /dev/urandom > in.bin
"$COFFER_BIN" key generate --name bench --output bench.modelkey >/dev/null
age-keygen -o age.key 2>/dev/null
recipient=$(age-keygen -y age.key)

# best_of CMD...: runs CMD $runs times, prints "seconds peak_rss_kib" of the fastest run.
best_of() {
  local best="" rss=""
  for _ in $(seq "$runs"); do
    rm -f out.* back.*
    /usr/bin/time -f "%e %M" -o t.txt "$@" >/dev/null 2>&1 || { echo "bench: failed: $*" >&2; exit 1; }
    read -r secs kib < t.txt
    if [ -z "$best" ] || awk "BEGIN{exit !($secs < $best)}"; then best=$secs; rss=$kib; fi
  done
  # /usr/bin/time has 10 ms resolution; never divide by zero.
  awk -v s="$best" -v r="$rss" 'BEGIN{ if (s < 0.01) s = 0.01; print s, r }'
}

read -r t_cp r_cp < <(best_of cp in.bin out.cp)
read -r t_age_e r_age_e < <(best_of age -r "$recipient" -o out.age in.bin)
age -r "$recipient" -o sealed.age in.bin
read -r t_age_d r_age_d < <(best_of age -d -i age.key -o back.age sealed.age)
read -r t_enc r_enc < <(best_of "$COFFER_BIN" encrypt in.bin --key bench.modelkey -o out.coffer --quiet)
"$COFFER_BIN" encrypt in.bin --key bench.modelkey -o sealed.coffer --quiet >/dev/null
read -r t_dec r_dec < <(best_of "$COFFER_BIN" decrypt sealed.coffer --key bench.modelkey -o back.coffer --quiet)

"$COFFER_BIN" decrypt sealed.coffer --key bench.modelkey -o check.bin --quiet >/dev/null
cmp -s in.bin check.bin || { echo "bench: decrypted output differs from the input" >&2; exit 1; }

ossl=$(openssl speed -evp aes-256-gcm -bytes 1048576 -seconds 2 2>/dev/null | awk '/^AES-256-GCM|^aes-256-gcm/ {v=$NF} END {sub(/k$/, "", v); print v}')

mib() { awk -v s="$1" -v m="$size_mib" 'BEGIN{printf "%.0f", m / s}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.2f", a / b}'; }

echo "container benchmark: ${size_mib} MiB random file in $base, best of $runs, $(nproc) cores, $COFFER_BIN"
[ "$smoke" = 1 ] && echo "(smoke run: checks correctness; a debug build on 16 MiB says nothing about the targets)"
printf '%-28s %8s %10s %10s\n' "" seconds "MiB/s" "peak RSS"
printf '%-28s %8s %10s %9sM\n' "cp" "$t_cp" "$(mib "$t_cp")" $((r_cp / 1024))
printf '%-28s %8s %10s %9sM\n' "age -r (encrypt)" "$t_age_e" "$(mib "$t_age_e")" $((r_age_e / 1024))
printf '%-28s %8s %10s %9sM\n' "age -d (decrypt)" "$t_age_d" "$(mib "$t_age_d")" $((r_age_d / 1024))
printf '%-28s %8s %10s %9sM\n' "coffer encrypt" "$t_enc" "$(mib "$t_enc")" $((r_enc / 1024))
printf '%-28s %8s %10s %9sM\n' "coffer decrypt" "$t_dec" "$(mib "$t_dec")" $((r_dec / 1024))
[ -n "$ossl" ] && printf '%-28s %8s %10s\n' "openssl aes-256-gcm, 1 core" "" "$(awk -v k="$ossl" 'BEGIN{printf "%.0f", k * 1000 / 1048576}')"
echo
echo "encrypt / age: $(ratio "$t_age_e" "$t_enc")x   (target >= 1.5)"
echo "decrypt / age: $(ratio "$t_age_d" "$t_dec")x   (target >= 1.5)"
echo "encrypt / cp:  $(ratio "$t_cp" "$t_enc")x   (target >= 0.6)"
echo "decrypt / cp:  $(ratio "$t_cp" "$t_dec")x   (target >= 0.6)"
[ -n "$ossl" ] && echo "encrypt / openssl one-core ceiling: $(awk -v s="$t_enc" -v m="$size_mib" -v k="$ossl" 'BEGIN{printf "%.2f", (m / s) / (k * 1000 / 1048576)}')x"
echo "peak RSS encrypt / decrypt: $((r_enc / 1024)) / $((r_dec / 1024)) MiB   (target <= 64)"
echo "round trip: identical"
