#!/usr/bin/env python3
"""Writes coreml-9.0.protoset: Core ML's model specification as a protobuf FileDescriptorSet.

The coremltools sdist on PyPI ships the specification only as generated Python (coremltools/proto/*_pb2.py),
each module carrying its .proto file's serialized FileDescriptorProto. This script takes those descriptors
as published (nothing is written by hand) and saves them together so that protoc can generate Swift from
them with --descriptor_set_in.

    pip download coremltools==9.0 --no-deps --no-binary :all: -d /tmp/ct && tar xzf /tmp/ct/coremltools-9.0.tar.gz -C /tmp/ct
    python3 tools/protos/coreml_descriptors.py /tmp/ct/coremltools-9.0 tools/protos/coreml-9.0.protoset

Needs the `protobuf` Python package (coremltools depends on it).
"""
import ast
import pathlib
import sys

from google.protobuf import descriptor_pb2


def serialized_descriptor(module_path: pathlib.Path) -> bytes:
    """The serialized FileDescriptorProto in a generated _pb2.py module (read, not run).

    Newer modules pass it as AddSerializedFile(b'...'); older ones as FileDescriptor(serialized_pb=_b('...'))
    where _b encodes the str literal as latin-1.
    """
    tree = ast.parse(module_path.read_text())
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        if (isinstance(node.func, ast.Attribute) and node.func.attr == "AddSerializedFile" and node.args
                and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, bytes)):
            return node.args[0].value
        for keyword in node.keywords:
            value = keyword.value
            if (keyword.arg == "serialized_pb" and isinstance(value, ast.Call) and value.args
                    and isinstance(value.args[0], ast.Constant) and isinstance(value.args[0].value, str)):
                return value.args[0].value.encode("latin1")
    raise SystemExit(f"{module_path}: no serialized descriptor found")


def main(sdist: str, output: str) -> None:
    proto_folder = pathlib.Path(sdist) / "coremltools" / "proto"
    files = {}
    for module_path in sorted(proto_folder.glob("*_pb2.py")):
        proto = descriptor_pb2.FileDescriptorProto.FromString(serialized_descriptor(module_path))
        files[proto.name] = proto
    descriptor_set = descriptor_pb2.FileDescriptorSet()
    # Dependencies before dependants, as protoc expects.
    done = set()

    def add(name):
        if name in done:
            return
        for dependency in files[name].dependency:
            add(dependency)
        done.add(name)
        descriptor_set.file.append(files[name])

    for name in sorted(files):
        add(name)
    pathlib.Path(output).write_bytes(descriptor_set.SerializeToString(deterministic=True))
    print(f"{output}: {len(descriptor_set.file)} files: {', '.join(sorted(files))}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
