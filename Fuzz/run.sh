#!/usr/bin/env bash
# Builds the libFuzzer harness (Fuzz/CofferFuzz: container, packed tree, signed manifest, model inspection, attestation evidence) with -sanitize=fuzzer,address in its own build
# folder and fuzzes for SECONDS (default 90). Seeds: valid containers and packed trees made by the
# coffer CLI. Exit non-zero on any crash, sanitizer report, leak or timeout.
set -euo pipefail
seconds=${1:-90}
cd "$(dirname "$0")/.."
scratch=.build-fuzz
swift build --scratch-path "$scratch" --product CofferFuzz \
  -Xswiftc -sanitize=fuzzer,address -Xswiftc -DCOFFER_FUZZING 2>&1 | grep -E 'error|warning: unre|Compiling CofferFuzz|Build complete' || true
fuzzer="$scratch/debug/CofferFuzz"
[ -x "$fuzzer" ] || { echo "fuzz: build failed" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/corpus" "$work/seeds"
coffer=.build/debug/coffer
if [ -x "$coffer" ]; then
  # Seeds: a small container (mode bytes 1 and 2 open it with the harness's fixed key) and a header.
  printf '\x42%.0s' $(seq 32) > "$work/raw.key"
  python3 - "$work" <<'PY'
import base64, json, sys
work = sys.argv[1]
key = base64.b64encode(b"\x42" * 32).decode()
json.dump({"format": "coffer-modelkey-v1", "id": "fuzzkey", "name": "fuzz", "created": "1970-01-01T00:00:00Z", "key": key},
          open(f"{work}/fuzz.modelkey", "w"))
PY
  chmod 600 "$work/fuzz.modelkey"   # coffer refuses a key file others may read
  head -c 3000 /dev/urandom > "$work/plain.bin"
  mkdir -p "$work/tree/sub" && echo hi > "$work/tree/sub/a" && ln -s sub/a "$work/tree/link"
  "$coffer" encrypt "$work/plain.bin" --key "$work/fuzz.modelkey" -o "$work/plain.coffer" --quiet >/dev/null
  "$coffer" encrypt "$work/tree" --key "$work/fuzz.modelkey" -o "$work/tree.coffer" --quiet >/dev/null
  # Format 2 (the default; a 140 KB file makes several content-defined chunks) and format 1.
  head -c 140000 /dev/urandom > "$work/two-chunks.bin"
  "$coffer" encrypt "$work/two-chunks.bin" --key "$work/fuzz.modelkey" -o "$work/two-chunks.coffer" --quiet >/dev/null
  "$coffer" encrypt "$work/plain.bin" --key "$work/fuzz.modelkey" -o "$work/plain-v1.coffer" --quiet --format-version 1 >/dev/null
  for mode in 0 1 2; do
    { printf "\\x0$mode"; cat "$work/plain.coffer"; } > "$work/seeds/container-$mode"
    { printf "\\x0$mode"; cat "$work/plain-v1.coffer"; } > "$work/seeds/container-v1-$mode"
    { printf "\\x0$mode"; cat "$work/two-chunks.coffer"; } > "$work/seeds/container-chunks-$mode"
  done
  { printf '\x01'; cat "$work/tree.coffer"; } > "$work/seeds/tree-container"
  # The packed tree itself, in mode 3, via the CLI's plaintext of a folder container.
  python3 tools/reference/coffer_ref.py open "$work/tree.coffer" --key-file "$work/fuzz.modelkey" --raw > "$work/tree.stream" 2>/dev/null \
    && { printf '\x03'; cat "$work/tree.stream"; } > "$work/seeds/tree-stream" || true
fi

# Manifest seeds: a payload (mode 5) and an envelope signed with the harness's key (mode 4).
python3 - "$work/seeds" <<'PY'
import base64, json, sys
seeds = sys.argv[1]
payload = json.dumps({"collection": "FlowerModels", "teamID": "t", "deploymentID": "d", "format": 1, "sequence": 3,
                      "target": "default", "issuedAt": "2026-01-01T00:00:00Z", "expiresAt": "2026-01-08T00:00:00Z",
                      "models": {"A": {"versionID": "v", "sha256": "ab" * 32, "size": 10, "url": "/v1/blobs/" + "ab" * 32, "keyID": "k"}}},
                     sort_keys=True, separators=(",", ":")).encode()
open(f"{seeds}/manifest-payload", "wb").write(b"\x05" + payload)
envelope = json.dumps({"payloadType": "application/vnd.coffer.manifest+json", "payload": base64.b64encode(payload).decode(),
                       "signatures": [{"keyid": "k", "sig": base64.b64encode(b"\0" * 64).decode()}]}).encode()
open(f"{seeds}/manifest-envelope", "wb").write(b"\x04" + envelope)
PY

# ModelInspection seeds (modes 6–11): the committed fixtures made by the real tools.
fixtures=Tests/ModelInspectionTests/Fixtures
for pair in "06:Classifier.mlmodel" "06:Pipeline.mlmodel" "06:Program.mlpackage/Data/com.apple.CoreML/model.mlmodel" \
            "07:tiny.onnx" "08:tiny.safetensors" "09:tiny.gguf" "0a:Classifier.mlmodel" "0b:tiny.onnx"; do
  mode=${pair%%:*} file=${pair#*:}
  { printf "\x$mode"; cat "$fixtures/$file"; } > "$work/seeds/inspect-$mode-$(basename "$file")"
done

# Attestation seeds (modes 12–16): the genuine App Attest objects and assertions and the Android
# chains of the attestation tests' fixtures, and a revocation list.
python3 - "$work/seeds" Tests/CofferAttestationTests/Fixtures <<'PY'
import base64, glob, json, os, re, sys
seeds, fixtures = sys.argv[1], sys.argv[2]
for index, path in enumerate(sorted(glob.glob(f"{fixtures}/Apple/*.json"))):
    record = json.load(open(path))
    fields = list(record.items()) + [(f"assertion{n}", entry.get("assertionBase64", "")) for n, entry in enumerate(record.get("assertions", []))]
    for field, value in fields:
        if not isinstance(value, str) or len(value) < 40:
            continue
        try:
            raw = base64.b64decode(value, validate=True)
        except Exception:
            continue
        if "attestation" in field.lower():
            open(f"{seeds}/apple-{index}-{field}-cbor", "wb").write(b"\x0c" + raw)
            open(f"{seeds}/apple-{index}-{field}-object", "wb").write(b"\x0d" + raw)
        elif "assertion" in field.lower():
            open(f"{seeds}/apple-{index}-{field}-assertion", "wb").write(b"\x0e" + raw)
for index, path in enumerate(sorted(glob.glob(f"{fixtures}/Android/*.pem"))):
    blocks = re.findall(r"-----BEGIN CERTIFICATE-----(.*?)-----END CERTIFICATE-----", open(path).read(), re.S)
    for number, block in enumerate(blocks[:2]):
        open(f"{seeds}/android-{index}-{number}", "wb").write(b"\x0f" + base64.b64decode("".join(block.split())))
open(f"{seeds}/revocations", "wb").write(b"\x10" + json.dumps(
    {"entries": {"2c8cdddfd5e03bfc": {"status": "REVOKED", "reason": "KEY_COMPROMISE"}, "c8966fcb2fbb0d7a": {"status": "SUSPENDED"}}}).encode())
PY

echo "fuzzing for ${seconds}s"
status=0
"$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=200000 \
  -print_final_stats=1 "$work/corpus" "$work/seeds" > "$work/fuzz.log" 2>&1 || status=$?
grep -E 'stat::number_of_executed_units|stat::peak_rss|Done|ERROR|SUMMARY|crash|deadly' "$work/fuzz.log" || true
if [ "$status" != 0 ]; then
  tail -n 60 "$work/fuzz.log" >&2
  mkdir -p fuzz-findings && cp crash-* leak-* timeout-* oom-* fuzz-findings/ 2>/dev/null || true
  echo "fuzz: the fuzzer found a problem (exit $status); reproducers in fuzz-findings/" >&2
  exit 1
fi
echo "fuzz: no crash in ${seconds}s"
