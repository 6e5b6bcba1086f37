#!/usr/bin/env bash
# Regenerates Sources/ModelInspection/Generated from the protobuf definitions kept beside this script:
#   coreml-9.0.protoset  Core ML's model specification (coremltools 9.0 sdist; see coreml_descriptors.py)
#   onnx.proto           onnx/onnx.proto from the onnx 1.23.2 wheel on PyPI, unchanged
# Needs protoc (Debian: protobuf-compiler, 3.21 here) and protoc-gen-swift from apple/swift-protobuf at the
# version Package.swift resolves (1.39.0), e.g.:
#   git clone <swift-protobuf> /tmp/spb && cd /tmp/spb && git checkout 1.39.0 && swift build -c release --product protoc-gen-swift
#   PROTOC_GEN_SWIFT=/tmp/spb/.build/release/protoc-gen-swift tools/protos/generate.sh
# Builds never run this: the output is committed, so no build needs protoc or a build plugin.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="$here/../../Sources/ModelInspection/Generated"
plugin="${PROTOC_GEN_SWIFT:-$(command -v protoc-gen-swift)}"
rm -f "$out"/*.pb.swift
# Internal visibility: the generated types are the parser's business, never public API.
options="--swift_opt=Visibility=Internal --swift_opt=FileNaming=DropPath"
# Only Model.proto and what it imports are needed; protoc follows the imports in the set.
coreml_files=$(python3 - "$here/coreml-9.0.protoset" <<'PY'
import sys
from google.protobuf import descriptor_pb2
s = descriptor_pb2.FileDescriptorSet.FromString(open(sys.argv[1], "rb").read())
print(" ".join(f.name for f in s.file))
PY
)
protoc --plugin=protoc-gen-swift="$plugin" --descriptor_set_in="$here/coreml-9.0.protoset" \
    $options --swift_out="$out" $coreml_files
protoc --plugin=protoc-gen-swift="$plugin" -I "$here" $options --swift_out="$out" onnx.proto
ls -l "$out"
