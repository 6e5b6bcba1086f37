#!/usr/bin/env bash
# Cross-checks the Swift `coffer` CLI against the Python reference implementation.
#
#   tools/reference/crosscheck.sh path/to/coffer
#
# The script seals files and a folder with the Swift CLI and opens them with coffer_ref.py, then
# seals them with coffer_ref.py and opens them with the Swift CLI, comparing bytes, names, modes
# and link targets, once for each container format version (1 and 2, chosen with
# --format-version on both sides). It checks that both write version 2 by default, that both
# refuse tampered containers and wrong keys, and that for version 2 the same input sealed by both
# under the same model key gives the same chunk table (IDs and lengths) and the same chunk bytes:
# the writers' content-defined cut and the deterministic sealing agree. Nothing is skipped: a
# case passes or fails. The last line it prints is "crosscheck: N passed, M failed", and it exits
# non-zero if anything failed. It needs python3 with the `cryptography` package, and GNU find
# and diff.
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
# ref_field FILE FIELD: a header field as the reference parses it (version, chunkCount, ...).
ref_field() {
    "${REF[@]}" inspect "$1" | python3 -c 'import json, sys; print(json.load(sys.stdin)[sys.argv[1]])' "$2"
}
# swift_field FILE FIELD: a header field as `coffer inspect --json` shows it (formatVersion, chunkCount).
swift_field() {
    "$COFFER" inspect "$1" --json | python3 -c 'import json, sys; print(json.load(sys.stdin)[sys.argv[1]])' "$2"
}
# is_version FILE V: the reference parses FILE as a container of format version V.
is_version() { test "$(ref_field "$1" version)" = "$2"; }
# swift_sees_version FILE V: `coffer inspect` reports format version V and the reference's chunk count.
swift_sees_version() {
    test "$(swift_field "$1" formatVersion)" = "$2" && test "$(swift_field "$1" chunkCount)" = "$(ref_field "$1" chunkCount)"
}

# v2tool.py: version 2 comparisons through the reference's parser. Reasons go to v2tool.log.
cat >v2tool.py <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import coffer_ref as ref

def load(path):
    with open(path, "rb") as f:
        data = f.read()
    header = ref.parse_header(data)
    if header["version"] != 2:
        sys.exit(f"{path}: version {header['version']}, not 2")
    return data, header

def chunks(data, header):
    """{ID: sealed bytes} of every chunk, found at offset(i) from the table."""
    out, offset = {}, header["headerLength"]
    for cid, size in header["table"]:
        out[cid] = data[offset:offset + size + ref.TAG_LENGTH]
        offset += size + ref.TAG_LENGTH
    return out

command, a, b = sys.argv[2:5]
(da, ha), (db, hb) = load(a), load(b)
if command == "same-table":
    # Sealed from the same input under the same key: the same IDs and lengths, in order.
    if ha["table"] != hb["table"]:
        ta = [(c.hex()[:16], n) for c, n in ha["table"]]
        tb = [(c.hex()[:16], n) for c, n in hb["table"]]
        sys.exit(f"tables differ:\n  {a}: {ta}\n  {b}: {tb}")
elif command == "same-chunk-bytes":
    # ...and the same bytes after the header (the salt, hence the MAC, differs).
    if da[ha["headerLength"]:] != db[hb["headerLength"]:]:
        sys.exit("the chunk bytes after the headers differ")
elif command == "same-fields-but-salt":
    fa, fb = da[:ha["fieldsLength"]], db[:hb["fieldsLength"]]
    if fa[:24] + fa[56:] != fb[:24] + fb[56:]:
        sys.exit("the header fields differ in more than the salt")
elif command == "shares-chunks":
    # Two inputs sharing a region: some IDs in common, each with the same sealed bytes.
    ca, cb = chunks(da, ha), chunks(db, hb)
    common = set(ca) & set(cb)
    if not common:
        sys.exit("no chunk in common")
    if any(ca[c] != cb[c] for c in common):
        sys.exit("a shared chunk ID with different sealed bytes")
else:
    sys.exit(f"unknown command {command}")
PY
v2tool() { python3 v2tool.py "$HERE" "$@" >>v2tool.log 2>&1; }
# flip_byte FILE OFFSET: flips the low bit of one byte in place (always a change, unlike writing a
# fixed byte that may already be there).
flip_byte() {
    python3 -c '
import sys
path, at = sys.argv[1], int(sys.argv[2])
with open(path, "r+b") as f:
    f.seek(at); b = f.read(1); f.seek(at); f.write(bytes([b[0] ^ 1]))' "$1" "$2"
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

# Two versions of a 2 MB model: the second has 100 bytes inserted at 100000. Deterministic (not
# /dev/urandom), so the chunks they share are the same on every run.
python3 - <<'PY'
import hashlib
def stream(seed, n):
    out, i = bytearray(), 0
    while len(out) < n:
        out += hashlib.sha256(seed + i.to_bytes(8, "big")).digest()
        i += 1
    return bytes(out[:n])
a = stream(b"crosscheck shared", 2_000_000)
open("in/shared-a.bin", "wb").write(a)
open("in/shared-b.bin", "wb").write(a[:100_000] + stream(b"crosscheck insert", 100) + a[100_000:])
PY

printf 'p\xc3\xa4ssw\xc3\xb6rd \xe2\x9c\x93\n' >pass.txt   # one final newline, dropped by both
printf 'not the passphrase\n' >wrong-pass.txt
chmod 600 pass.txt wrong-pass.txt   # coffer refuses secret files others may read

"$COFFER" key generate --name CrossCheck --output K.modelkey >/dev/null || { echo "cannot generate a key"; exit 1; }
"$COFFER" key generate --name Other --output Other.modelkey >/dev/null || { echo "cannot generate a key"; exit 1; }

# ---- both versions: Swift seals, Python opens; Python seals, Swift opens -------------------------

for V in 1 2; do
    S2P=s2p$V P2S=p2s$V
    mkdir $S2P $P2S

    # -- Swift seals, Python opens --
    for f in "${FILES[@]}"; do
        if "$COFFER" encrypt "in/$f" --key K.modelkey --format-version $V --output "$S2P/$f.coffer" --quiet >/dev/null \
            && "${REF[@]}" open "$S2P/$f.coffer" --key-file K.modelkey >"$S2P/$f.out" \
            && cmp -s "in/$f" "$S2P/$f.out"; then
            pass "v$V swift seal -> ref open: $f"
        else
            fail "v$V swift seal -> ref open: $f"
        fi
        check "v$V swift seal records the name: $f" test "$(header_name "$S2P/$f.coffer")" = "$f"
        check "v$V swift seal writes version $V: $f" is_version "$S2P/$f.coffer" $V
    done

    if "$COFFER" encrypt in/chunk-plus-one.bin --passphrase-file pass.txt --format-version $V --output $S2P/pw.coffer --quiet >/dev/null \
        && "${REF[@]}" open $S2P/pw.coffer --passphrase-file pass.txt >$S2P/pw.out && cmp -s in/chunk-plus-one.bin $S2P/pw.out; then
        pass "v$V swift seal -> ref open: passphrase"
    else
        fail "v$V swift seal -> ref open: passphrase"
    fi
    check "v$V swift seal writes version $V: passphrase" is_version $S2P/pw.coffer $V

    if "$COFFER" encrypt $M --key K.modelkey --format-version $V --output $S2P/tree.coffer --quiet >/dev/null; then
        ref_restores_tree() {
            "${REF[@]}" open $S2P/tree.coffer --key-file K.modelkey --output $S2P/restored && same_tree $M $S2P/restored
        }
        check "v$V swift seal -> ref open: folder restored identically" ref_restores_tree
        # Packing is deterministic and specified to the byte: the Swift stream equals the reference's.
        "${REF[@]}" open $S2P/tree.coffer --key-file K.modelkey --raw >$S2P/swift.stream
        "${REF[@]}" pack $M >$S2P/ref.stream
        check "v$V swift packed stream == reference packed stream" cmp -s $S2P/swift.stream $S2P/ref.stream
        check "v$V swift seal records the folder name" test "$(header_name $S2P/tree.coffer)" = "Model.mlmodelc"
        check "v$V swift seal writes version $V: folder" is_version $S2P/tree.coffer $V
    else
        fail "v$V swift seal of a folder"
    fi

    cp $S2P/one-chunk.bin.coffer $S2P/tampered.coffer
    flip_byte $S2P/tampered.coffer $(( $(stat -c %s $S2P/tampered.coffer) - 500 ))
    refuses "v$V ref refuses a tampered swift container (chunk byte)" "${REF[@]}" open $S2P/tampered.coffer --key-file K.modelkey
    cp $S2P/chunk-plus-one.bin.coffer $S2P/tampered-header.coffer
    # Version 1: a byte of the salt. Version 2: a byte of the first chunk ID in the table (after
    # F bytes of fields), which only the MAC protects.
    if [ $V = 1 ]; then at=40; else at=$(( $(ref_field $S2P/chunk-plus-one.bin.coffer fieldsLength) + 5 )); fi
    flip_byte $S2P/tampered-header.coffer $at
    refuses "v$V ref refuses a tampered swift container (header byte)" "${REF[@]}" open $S2P/tampered-header.coffer --key-file K.modelkey
    refuses "v$V ref refuses swift container with the wrong key" "${REF[@]}" open $S2P/one.bin.coffer --key-file Other.modelkey
    refuses "v$V ref refuses swift container with the wrong passphrase" "${REF[@]}" open $S2P/pw.coffer --passphrase-file wrong-pass.txt

    # -- Python seals, Swift opens --
    for f in "${FILES[@]}"; do
        if "${REF[@]}" seal "in/$f" --key-file K.modelkey --format-version $V --output "$P2S/$f.coffer" \
            && "$COFFER" decrypt "$P2S/$f.coffer" --key K.modelkey --output "$P2S/$f.out" --quiet >/dev/null \
            && cmp -s "in/$f" "$P2S/$f.out"; then
            pass "v$V ref seal -> swift open: $f"
        else
            fail "v$V ref seal -> swift open: $f"
        fi
        check "v$V swift inspect shows version $V and the chunk count: $f" swift_sees_version "$P2S/$f.coffer" $V
    done

    if "${REF[@]}" seal in/chunk-plus-one.bin --passphrase-file pass.txt --format-version $V --output $P2S/pw.coffer \
        && "$COFFER" decrypt $P2S/pw.coffer --passphrase-file pass.txt --output $P2S/pw.out --quiet >/dev/null \
        && cmp -s in/chunk-plus-one.bin $P2S/pw.out; then
        pass "v$V ref seal -> swift open: passphrase"
    else
        fail "v$V ref seal -> swift open: passphrase"
    fi

    if "${REF[@]}" seal $M --key-file K.modelkey --format-version $V --output $P2S/tree.coffer \
        && "$COFFER" decrypt $P2S/tree.coffer --key K.modelkey --output $P2S/restored --quiet >/dev/null \
        && same_tree_owner_only $M $P2S/restored; then
        pass "v$V ref seal -> swift open: folder restored identically (owner-only modes)"
    else
        fail "v$V ref seal -> swift open: folder restored identically (owner-only modes)"
    fi
    check "v$V swift inspect shows version $V and the chunk count: folder" swift_sees_version $P2S/tree.coffer $V

    if "$COFFER" decrypt $P2S/one.bin.coffer --key K.modelkey --stdout >$P2S/stdout.out 2>/dev/null \
        && cmp -s in/one.bin $P2S/stdout.out; then
        pass "v$V ref seal -> swift decrypt --stdout"
    else
        fail "v$V ref seal -> swift decrypt --stdout"
    fi

    cp $P2S/chunk-plus-one.bin.coffer $P2S/tampered.coffer
    flip_byte $P2S/tampered.coffer $(( $(stat -c %s $P2S/tampered.coffer) - 1 ))
    refuses "v$V swift refuses a tampered ref container" "$COFFER" decrypt $P2S/tampered.coffer --key K.modelkey --output $P2S/tampered.out --quiet
    check "v$V swift leaves nothing after refusing" test ! -e $P2S/tampered.out
    refuses "v$V swift refuses ref container with the wrong key" "$COFFER" decrypt $P2S/one.bin.coffer --key Other.modelkey --output $P2S/wrong.out --quiet
    refuses "v$V swift refuses ref container with the wrong passphrase" "$COFFER" decrypt $P2S/pw.coffer --passphrase-file wrong-pass.txt --output $P2S/wrongpw.out --quiet
done

# ---- version 1 only: another chunk size ----------------------------------------------------------

if "${REF[@]}" seal in/chunk-plus-one.bin --key-file K.modelkey --format-version 1 --chunk-exp 16 --output p2s1/e16.coffer \
    && "$COFFER" decrypt p2s1/e16.coffer --key K.modelkey --output p2s1/e16.out --quiet >/dev/null \
    && cmp -s in/chunk-plus-one.bin p2s1/e16.out; then
    pass "v1 ref seal (64 KiB chunks) -> swift open"
else
    fail "v1 ref seal (64 KiB chunks) -> swift open"
fi

# ---- defaults: both write version 2 ------------------------------------------------------------

mkdir default
if "$COFFER" encrypt in/one.bin --key K.modelkey --output default/swift.coffer --quiet >/dev/null; then
    check "swift encrypt writes version 2 by default" is_version default/swift.coffer 2
else
    fail "swift encrypt writes version 2 by default (encrypt failed)"
fi
if "${REF[@]}" seal in/one.bin --key-file K.modelkey --output default/ref.coffer; then
    check "ref seal writes version 2 by default" is_version default/ref.coffer 2
else
    fail "ref seal writes version 2 by default (seal failed)"
fi

# ---- version 2: Swift and the reference cut and seal alike ---------------------------------------
# The same input under the same model key: the same chunk table and the same chunk bytes (only
# the salt, hence the MAC, differs). s2p2 and p2s2 hold each input sealed by both, same name.

for f in "${FILES[@]}" tree pw; do
    a="s2p2/$f.coffer" b="p2s2/$f.coffer"
    if [ "$f" = pw ]; then
        # Passphrase containers share nothing: the key material depends on the random scrypt salt,
        # and so do the IDs and (the gear table being keyed) the cut. Both hold the same input: their
        # lengths add up alike, and no ID is shared.
        check "v2 passphrase: swift and ref tables share no ID" python3 -c '
import sys; sys.path.insert(0, sys.argv[1]); import coffer_ref as ref
ta, tb = (ref.parse_header(open(p, "rb").read())["table"] for p in sys.argv[2:4])
sys.exit(not (sum(n for _, n in ta) == sum(n for _, n in tb) and not {i for i, _ in ta} & {i for i, _ in tb}))' "$HERE" "$a" "$b"
        continue
    fi
    check "v2 swift and ref: same chunk table (IDs, lengths): $f" v2tool same-table "$a" "$b"
    check "v2 swift and ref: same chunk bytes: $f" v2tool same-chunk-bytes "$a" "$b"
    check "v2 swift and ref: same fields but the salt: $f" v2tool same-fields-but-salt "$a" "$b"
done

# Two versions of a model sealed under one key share the chunks they have in common (delta updates):
# Swift's containers share chunks, with the same bytes, and they are the reference's chunks.
mkdir shared
if "$COFFER" encrypt in/shared-a.bin --key K.modelkey --format-version 2 --output shared/swift-a.coffer --quiet >/dev/null \
    && "$COFFER" encrypt in/shared-b.bin --key K.modelkey --format-version 2 --output shared/swift-b.coffer --quiet >/dev/null \
    && "${REF[@]}" seal in/shared-a.bin --key-file K.modelkey --output shared/ref-a.coffer \
    && "${REF[@]}" seal in/shared-b.bin --key-file K.modelkey --output shared/ref-b.coffer; then
    check "v2 ref: two versions under one key share chunks" v2tool shares-chunks shared/ref-a.coffer shared/ref-b.coffer
    check "v2 swift: two versions under one key share chunks" v2tool shares-chunks shared/swift-a.coffer shared/swift-b.coffer
    check "v2 swift and ref: same chunk table: shared-a" v2tool same-table shared/swift-a.coffer shared/ref-a.coffer
    check "v2 swift and ref: same chunk table: shared-b" v2tool same-table shared/swift-b.coffer shared/ref-b.coffer
    check "v2 swift opens the reference's shared-b" sh -c '"$1" decrypt shared/ref-b.coffer --key K.modelkey --output shared/b.out --quiet >/dev/null && cmp -s in/shared-b.bin shared/b.out' sh "$COFFER"
else
    fail "v2 sealing the shared-region pair"
fi
if [ -s v2tool.log ]; then echo "-- v2tool.log --"; cat v2tool.log; fi

echo "crosscheck: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
