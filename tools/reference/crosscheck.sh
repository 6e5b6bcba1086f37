#!/usr/bin/env bash
# Cross-checks the Swift `coffer` CLI against the Python reference implementation.
#
#   tools/reference/crosscheck.sh path/to/coffer
#
# The script seals files and a folder with the Swift CLI and opens them with coffer_ref.py, then
# seals them with coffer_ref.py and opens them with the Swift CLI, comparing bytes, names, modes
# and link targets. It also checks that both refuse tampered containers and wrong keys. The last
# line it prints is "crosscheck: N passed, M failed", and it exits non-zero if anything failed.
# It needs python3 with the `cryptography` package, and GNU find and diff.
set -u

if [ $# -ne 1 ] || [ ! -x "$1" ]; then
    echo "usage: $0 path/to/coffer" >&2
    exit 64
fi
COFFER=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
HERE=$(cd "$(dirname "$0")" && pwd)
REF=(python3 "$HERE/coffer_ref.py")

WORK=$(mktemp -d "${TMPDIR:-/tmp}/coffer-crosscheck.XXXXXX")
cleanup() { chmod -R u+rwx "$WORK" 2>/dev/null; rm -rf "$WORK"; }
trap cleanup EXIT
cd "$WORK" || exit 1

passed=0
failed=0
pass() { passed=$((passed + 1)); echo "ok    $1"; }
fail() { failed=$((failed + 1)); echo "FAIL  $1"; }
# check NAME COMMAND...: passes when COMMAND succeeds.
check() { local name=$1; shift; if "$@"; then pass "$name"; else fail "$name"; fi; }
# refuses NAME COMMAND...: passes when COMMAND fails (its output is kept in refused.log).
refuses() { local name=$1; shift; if "$@" >refused.log 2>&1; then fail "$name (accepted)"; else pass "$name"; fi; }

# A folder's entries as "path|type|mode|link target", sorted bytewise, plus the root's mode.
listing() {
    (cd "$1" && find . -mindepth 1 -printf '%P|%y|%m|%l\n' | LC_ALL=C sort && stat -c 'root|%a' .)
}
# same_tree A B: identical entries, modes (links excepted by find's %m on Linux), targets and contents.
same_tree() {
    diff <(listing "$1") <(listing "$2") >tree.diff && diff -r --no-dereference "$1" "$2" >>tree.diff
}
# owner_listing DIR: listing DIR with each folder's and file's mode cut to the owner's bits, as
# the Swift unpacker restores a tree (it is plaintext: docs/FORMAT.md).
owner_listing() {
    listing "$1" | python3 -c '
import sys
for line in sys.stdin:
    parts = line.rstrip("\n").split("|")
    if parts[0] == "root":
        parts[1] = format(int(parts[1], 8) & 0o700, "o")
    elif parts[1] in ("d", "f"):
        parts[2] = format(int(parts[2], 8) & 0o700, "o")
    print("|".join(parts))'
}
# same_tree_owner_only A B: B is A restored owner-only: the same entries, targets and contents.
same_tree_owner_only() {
    diff <(owner_listing "$1") <(listing "$2") >tree.diff && diff -r --no-dereference "$1" "$2" >>tree.diff
}
# header_name FILE: the original name recorded in a container's header.
header_name() {
    "${REF[@]}" inspect "$1" | python3 -c 'import json, sys; print(json.load(sys.stdin)["name"])'
}

# ---- inputs -----------------------------------------------------------------------------------

mkdir in
: >in/empty.bin
printf 'x' >in/one.bin
head -c 1048576 /dev/urandom >in/one-chunk.bin       # exactly one 1 MiB chunk
head -c 1048577 /dev/urandom >in/chunk-plus-one.bin  # two chunks, the last 1 byte
head -c 3670016 /dev/urandom >"in/mod$(printf '\xc3\xa8')le $(printf '\xe8\x8a\xb1').bin"  # 3.5 MiB, non-ASCII name
FILES=(empty.bin one.bin one-chunk.bin chunk-plus-one.bin "mod$(printf '\xc3\xa8')le $(printf '\xe8\x8a\xb1').bin")

mkdir -p tree/Model.mlmodelc/weights/deep/er tree/Model.mlmodelc/bin tree/Model.mlmodelc/ro
M=tree/Model.mlmodelc
head -c 1500000 /dev/urandom >$M/weights/big.bin      # crosses a 1 MiB chunk boundary
printf 'deep\n' >$M/weights/deep/er/file.txt
: >$M/empty.txt
printf '#!/bin/sh\necho hi\n' >$M/bin/run.sh && chmod 755 $M/bin/run.sh
printf 'read-only\n' >$M/ro/file.txt && chmod 444 $M/ro/file.txt && chmod 555 $M/ro
printf 'secret-ish\n' >$M/private.txt && chmod 600 $M/private.txt
printf 'after a/...\n' >$M/weights-v2.txt             # sorts after weights/... by components
printf 'accent\n' >"$M/$(printf '\xc3\xa9')t$(printf '\xc3\xa9').txt"
ln -s weights/big.bin $M/link-to-big
ln -s ../../bin/run.sh $M/weights/deep/rel
ln -s ../.. $M/weights/deep/up
ln -s does-not-exist $M/dangling
chmod 750 $M/weights

printf 'p\xc3\xa4ssw\xc3\xb6rd \xe2\x9c\x93\n' >pass.txt   # one final newline, dropped by both
printf 'not the passphrase\n' >wrong-pass.txt

"$COFFER" key generate --name CrossCheck --output K.modelkey >/dev/null || { echo "cannot generate a key"; exit 1; }
"$COFFER" key generate --name Other --output Other.modelkey >/dev/null || { echo "cannot generate a key"; exit 1; }

# ---- Swift seals, Python opens ----------------------------------------------------------------

mkdir s2p
for f in "${FILES[@]}"; do
    if "$COFFER" encrypt "in/$f" --key K.modelkey --output "s2p/$f.coffer" --quiet >/dev/null \
        && "${REF[@]}" open "s2p/$f.coffer" --key-file K.modelkey >"s2p/$f.out" \
        && cmp -s "in/$f" "s2p/$f.out"; then
        pass "swift seal -> ref open: $f"
    else
        fail "swift seal -> ref open: $f"
    fi
    check "swift seal records the name: $f" test "$(header_name "s2p/$f.coffer")" = "$f"
done

if "$COFFER" encrypt in/chunk-plus-one.bin --passphrase-file pass.txt --output s2p/pw.coffer --quiet >/dev/null \
    && "${REF[@]}" open s2p/pw.coffer --passphrase-file pass.txt >s2p/pw.out && cmp -s in/chunk-plus-one.bin s2p/pw.out; then
    pass "swift seal -> ref open: passphrase"
else
    fail "swift seal -> ref open: passphrase"
fi

if "$COFFER" encrypt $M --key K.modelkey --output s2p/tree.coffer --quiet >/dev/null; then
    ref_restores_tree() {
        "${REF[@]}" open s2p/tree.coffer --key-file K.modelkey --output s2p/restored && same_tree $M s2p/restored
    }
    check "swift seal -> ref open: folder restored identically" ref_restores_tree
    # Packing is deterministic and specified to the byte: the Swift stream equals the reference's.
    "${REF[@]}" open s2p/tree.coffer --key-file K.modelkey --raw >s2p/swift.stream
    "${REF[@]}" pack $M >s2p/ref.stream
    check "swift packed stream == reference packed stream" cmp -s s2p/swift.stream s2p/ref.stream
    check "swift seal records the folder name" test "$(header_name s2p/tree.coffer)" = "Model.mlmodelc"
else
    fail "swift seal of a folder"
fi

cp s2p/one-chunk.bin.coffer s2p/tampered.coffer
printf '\x00' | dd of=s2p/tampered.coffer bs=1 seek=500 conv=notrunc status=none
refuses "ref refuses a tampered swift container" "${REF[@]}" open s2p/tampered.coffer --key-file K.modelkey
refuses "ref refuses swift container with the wrong key" "${REF[@]}" open s2p/one.bin.coffer --key-file Other.modelkey
refuses "ref refuses swift container with the wrong passphrase" "${REF[@]}" open s2p/pw.coffer --passphrase-file wrong-pass.txt

# ---- Python seals, Swift opens ----------------------------------------------------------------

mkdir p2s
for f in "${FILES[@]}"; do
    if "${REF[@]}" seal "in/$f" --key-file K.modelkey --output "p2s/$f.coffer" \
        && "$COFFER" decrypt "p2s/$f.coffer" --key K.modelkey --output "p2s/$f.out" --quiet >/dev/null \
        && cmp -s "in/$f" "p2s/$f.out"; then
        pass "ref seal -> swift open: $f"
    else
        fail "ref seal -> swift open: $f"
    fi
done

if "${REF[@]}" seal in/chunk-plus-one.bin --key-file K.modelkey --chunk-exp 16 --output p2s/e16.coffer \
    && "$COFFER" decrypt p2s/e16.coffer --key K.modelkey --output p2s/e16.out --quiet >/dev/null \
    && cmp -s in/chunk-plus-one.bin p2s/e16.out; then
    pass "ref seal (64 KiB chunks) -> swift open"
else
    fail "ref seal (64 KiB chunks) -> swift open"
fi

if "${REF[@]}" seal in/chunk-plus-one.bin --passphrase-file pass.txt --output p2s/pw.coffer \
    && "$COFFER" decrypt p2s/pw.coffer --passphrase-file pass.txt --output p2s/pw.out --quiet >/dev/null \
    && cmp -s in/chunk-plus-one.bin p2s/pw.out; then
    pass "ref seal -> swift open: passphrase"
else
    fail "ref seal -> swift open: passphrase"
fi

if "${REF[@]}" seal $M --key-file K.modelkey --output p2s/tree.coffer \
    && "$COFFER" decrypt p2s/tree.coffer --key K.modelkey --output p2s/restored --quiet >/dev/null \
    && same_tree_owner_only $M p2s/restored; then
    pass "ref seal -> swift open: folder restored identically (owner-only modes)"
else
    fail "ref seal -> swift open: folder restored identically (owner-only modes)"
fi

if "$COFFER" decrypt p2s/one.bin.coffer --key K.modelkey --stdout >p2s/stdout.out 2>/dev/null \
    && cmp -s in/one.bin p2s/stdout.out; then
    pass "ref seal -> swift decrypt --stdout"
else
    fail "ref seal -> swift decrypt --stdout"
fi

cp p2s/chunk-plus-one.bin.coffer p2s/tampered.coffer
size=$(stat -c %s p2s/tampered.coffer)
printf '\xff' | dd of=p2s/tampered.coffer bs=1 seek=$((size - 1)) conv=notrunc status=none
refuses "swift refuses a tampered ref container" "$COFFER" decrypt p2s/tampered.coffer --key K.modelkey --output p2s/tampered.out --quiet
check "swift leaves nothing after refusing" test ! -e p2s/tampered.out
refuses "swift refuses ref container with the wrong key" "$COFFER" decrypt p2s/one.bin.coffer --key Other.modelkey --output p2s/wrong.out --quiet
refuses "swift refuses ref container with the wrong passphrase" "$COFFER" decrypt p2s/pw.coffer --passphrase-file wrong-pass.txt --output p2s/wrongpw.out --quiet

echo "crosscheck: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
