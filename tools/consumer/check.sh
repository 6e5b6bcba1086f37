#!/usr/bin/env bash
# Resolves and builds the two app packages of this folder against the repository: `sdk` adds the Coffer SDK
# with `traits: []`, `sealedfields` adds SealedFields with its trait. Prints what each resolved and fails when
# anything beyond swift-crypto and what it needs (and GRDB, for SealedFields) entered an app's graph: no
# Vapor, Fluent, Leaf, PostgresNIO, SQLiteNIO, SwiftNIO, AsyncHTTPClient, argument parser or protobuf.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# Coffer itself is listed under its folder's name.
coffer="$(basename "$(cd "$here/../.." && pwd)" | tr '[:upper:]' '[:lower:]')"
status=0
# One scratch folder for both apps: the second builds only what its graph adds (GRDB, the trait), not
# swift-crypto again. Each app still resolves on its own, from nothing.
scratch="$here/.build"
rm -rf "$scratch"

check() {
    local name="$1"; shift
    local allowed=" $* "
    local dir="$here/$name"
    rm -rf "$dir/.build" "$dir/Package.resolved"
    mkdir -p "$scratch"
    (cd "$dir" && swift package --scratch-path "$scratch" resolve >"$scratch/resolve-$name.log" 2>&1) \
        || { cat "$scratch/resolve-$name.log" >&2; return 1; }
    local resolved
    resolved="$(cd "$dir" && swift package --scratch-path "$scratch" show-dependencies --format flatlist 2>/dev/null \
        | grep -vx "$coffer" | sort -u)"
    echo "consumer '$name' resolved: $(echo "$resolved" | tr '\n' ' ')"
    for package in $resolved; do
        if [[ "$allowed" != *" $package "* ]]; then
            echo "FAIL: consumer '$name' resolved $package (allowed: $*)" >&2
            status=1
        fi
    done
    (cd "$dir" && swift build --scratch-path "$scratch" 2>&1 | tail -1 \
        && "$(swift build --scratch-path "$scratch" --show-bin-path)/ConsumerApp")
}

check sdk swift-crypto swift-asn1
check sealedfields swift-crypto swift-asn1 grdb.swift
exit $status
