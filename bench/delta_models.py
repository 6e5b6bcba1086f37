#!/usr/bin/env python3
"""Safetensors-shaped models for bench/delta.sh: a base model N and the versions N+1 derived from it.

    delta_models.py base OUT --size-mib M [--seed S]    a base model of about M MiB (102 tensors)
    delta_models.py retrain BASE OUT --percent P        P % of the tensor bytes rewritten, layout unchanged
    delta_models.py header BASE OUT [--shift B]         metadata added to the JSON header: every tensor moves by B bytes
    delta_models.py quantize BASE OUT                   every tensor at half its size in another dtype: nothing shared
    delta_models.py check FILE                          reads FILE back as safetensors and checks its layout

Each command prints one line describing what it wrote (no secrets; the bench prints it).

A safetensors file is an 8-byte little-endian header length, a JSON header naming every tensor's
dtype, shape and data_offsets (relative to the end of the header), then the tensor bytes, packed
without holes. The base model is transformer-shaped: an embedding, 11 layers of two norms (F32),
four attention projections and three MLP projections (BF16), a final norm and an output head (F16),
so tensor sizes range from a few KiB to a tenth of the model.

Tensor bytes are pseudo-random, deterministic for a seed, and "float-like": the byte holding each
element's sign and exponent is drawn from the few values small weights have, the others are
uniform, so the data is as incompressible as real weights and never repeats. They come from
AES-256-CTR keystreams (`openssl enc`, about 1 GiB/s), keyed by SHA-256 of the seed and what the
bytes are for; without openssl, SHAKE-256 gives other (equally deterministic) bytes, more slowly.
"""
import argparse
import hashlib
import json
import math
import os
import random
import shutil
import struct
import subprocess
import sys

BLOCK = 16 << 20
LAYERS = 11
DTYPE_SIZE = {"F32": 4, "F16": 2, "BF16": 2, "F8_E4M3": 1}
# For each dtype, the byte (little-endian) that holds the sign and the exponent's high bits, and a
# table mapping a uniform byte to a value small weights (|x| < 0.5; norms: 0.125 to 2) have there.
HIGH_BYTE = {
    "BF16": (1, bytes((0x3A + (i % 5)) | (i & 0x80) for i in range(256))),
    "F16": (1, bytes((0x14 + (i % 32)) | (i & 0x80) for i in range(256))),
    "F32": (3, bytes(0x3E + (i & 1) for i in range(256))),
}


class Keystream:
    """An endless deterministic byte stream named by `label` (AES-256-CTR of zeros, or SHAKE-256)."""

    def __init__(self, label):
        digest = hashlib.sha256(label.encode()).digest()
        self.proc = None
        self.shake = None
        if shutil.which("openssl"):
            self.proc = subprocess.Popen(
                ["openssl", "enc", "-aes-256-ctr", "-nosalt", "-K", digest.hex(), "-iv", "00" * 16, "-in", "/dev/zero"],
                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, bufsize=0)
        else:
            self.seed = digest
            self.counter = 0

    def read(self, n):
        if self.proc is not None:
            out = bytearray(n)
            view = memoryview(out)
            got = 0
            while got < n:
                k = self.proc.stdout.readinto(view[got:])
                if not k:
                    raise SystemExit("delta_models: openssl stopped writing")
                got += k
            return out
        self.counter += 1
        return bytearray(hashlib.shake_256(self.seed + self.counter.to_bytes(8, "little")).digest(n))

    def close(self):
        if self.proc is not None:
            self.proc.stdout.close()
            self.proc.kill()
            self.proc.wait()


def float_like(buf, dtype):
    if dtype in HIGH_BYTE:
        index, table = HIGH_BYTE[dtype]
        width = DTYPE_SIZE[dtype]
        buf[index::width] = buf[index::width].translate(table)
    return buf


def write_random(out, stream, dtype, length):
    while length:
        n = min(BLOCK, length)  # BLOCK and every tensor length are multiples of the element size
        out.write(float_like(stream.read(n), dtype))
        length -= n


def read_header(path):
    with open(path, "rb") as f:
        (length,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(length))
    tensors = sorted(((name, spec) for name, spec in header.items() if name != "__metadata__"),
                     key=lambda item: item[1]["data_offsets"][0])
    return header, tensors, 8 + length


def encode_header(header, pad=True):
    text = json.dumps(header, separators=(",", ":")).encode()
    if pad:  # as the safetensors library writes it: spaces up to a multiple of 8
        text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text


def copy_range(src, dst, offset, length):
    """Copies length bytes of src from offset to dst's position (copy_file_range where it works)."""
    try:
        position = dst.tell()
        dst.flush()
        while length:
            n = os.copy_file_range(src.fileno(), dst.fileno(), min(length, 1 << 30), offset, position)
            if n == 0:
                raise OSError("short copy")
            offset += n
            position += n
            length -= n
        dst.seek(position)
    except (AttributeError, OSError):
        src.seek(offset)
        while length:
            chunk = src.read(min(BLOCK, length))
            dst.write(chunk)
            length -= len(chunk)


def layout(total_bytes):
    """The base model's tensors, (name, dtype, shape), about total_bytes of data in all."""
    # Per layer: 4 d×d attention + 3 d×4d MLP matrices (BF16) and 2 norms (F32): 32 d² + 8 d bytes;
    # embedding (BF16) and head (F16): 2 · 2 · vocab · d. With vocab ≈ 8 d, about 384 d².
    d = max(64, int(math.sqrt(total_bytes / 384)) // 64 * 64)
    layers = LAYERS * (32 * d * d + 8 * d) + 4 * d
    vocab = max(64, (total_bytes - layers) // (4 * d))
    tensors = [("model.embed_tokens.weight", "BF16", [vocab, d])]
    for i in range(LAYERS):
        p = f"model.layers.{i}."
        tensors.append((p + "input_layernorm.weight", "F32", [d]))
        for proj in "qkvo":
            tensors.append((p + f"self_attn.{proj}_proj.weight", "BF16", [d, d]))
        tensors.append((p + "post_attention_layernorm.weight", "F32", [d]))
        tensors.append((p + "mlp.gate_proj.weight", "BF16", [4 * d, d]))
        tensors.append((p + "mlp.up_proj.weight", "BF16", [4 * d, d]))
        tensors.append((p + "mlp.down_proj.weight", "BF16", [d, 4 * d]))
    tensors.append(("model.norm.weight", "F32", [d]))
    tensors.append(("lm_head.weight", "F16", [vocab, d]))
    return tensors


def nbytes(dtype, shape):
    return DTYPE_SIZE[dtype] * math.prod(shape)


def mib(n):
    return f"{n / 2**20:.1f} MiB"


def write_model(path, tensors, metadata, stream, pad=True):
    """tensors: (name, dtype, shape, source) with source ("random",): the next bytes of stream, or ("copy", file, offset)."""
    header, offset = {"__metadata__": metadata}, 0
    for name, dtype, shape, _ in tensors:
        size = nbytes(dtype, shape)
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + size]}
        offset += size
    with open(path + ".part", "wb") as out:
        out.write(encode_header(header, pad))
        for name, dtype, shape, source in tensors:
            if source[0] == "random":
                write_random(out, stream, dtype, nbytes(dtype, shape))
            else:
                copy_range(source[1], out, source[2], nbytes(dtype, shape))
    os.replace(path + ".part", path)
    return offset


def cmd_base(args):
    stream = Keystream(f"coffer-bench-delta {args.seed} base")
    try:
        tensors = [(name, dtype, shape, ("random",)) for name, dtype, shape in layout(args.size_mib << 20)]
        total = write_model(args.out, tensors, {"format": "pt", "version": "N"}, stream)
    finally:
        stream.close()
    print(f"base: {len(tensors)} tensors, {mib(total)} of tensor data")


def cmd_retrain(args):
    header, tensors, start = read_header(args.base)
    sizes = {name: spec["data_offsets"][1] - spec["data_offsets"][0] for name, spec in tensors}
    total = sum(sizes.values())
    target = total * args.percent / 100
    # By bytes: tensors in a seeded random order, each taken while it keeps the sum within 10 % over
    # the target, until the sum is within 10 % under it (the share reached is printed).
    order = [name for name, _ in tensors]
    random.Random(f"{args.seed} retrain {args.percent}").shuffle(order)
    chosen, chosen_bytes = set(), 0
    for name in order:
        if chosen_bytes >= target * 0.9:
            break
        if chosen_bytes + sizes[name] <= target * 1.1:
            chosen.add(name)
            chosen_bytes += sizes[name]
    if not chosen:  # every tensor is larger than the target: the smallest one
        name = min(order, key=lambda n: sizes[n])
        chosen, chosen_bytes = {name}, sizes[name]
    stream = Keystream(f"coffer-bench-delta {args.seed} retrain {args.percent}")
    try:
        with open(args.base, "rb") as src:
            plan = [(name, spec["dtype"], spec["shape"],
                     ("random",) if name in chosen else ("copy", src, start + spec["data_offsets"][0]))
                    for name, spec in tensors]
            # Same names, dtypes and shapes: the same header, byte for byte, and every tensor where it was.
            write_model(args.out, plan, header.get("__metadata__", {}), stream)
    finally:
        stream.close()
    print(f"retrained {len(chosen)} of {len(tensors)} tensors, {mib(chosen_bytes)} = "
          f"{100 * chosen_bytes / total:.1f} % of the tensor bytes; layout unchanged")


def cmd_header(args):
    header, tensors, start = read_header(args.base)
    metadata = dict(header.get("__metadata__", {}), version="N+1", notes="")
    bare = len(encode_header(dict(header, __metadata__=metadata), pad=False))
    # The notes make the new header exactly `shift` bytes longer than the old one (no padding).
    need = start + args.shift - bare
    if need < 0:
        raise SystemExit("delta_models: --shift too small for the metadata added")
    metadata["notes"] = ("fine-tuned on the spring catalogue; " * (need // 36 + 1))[:need]
    with open(args.base, "rb") as src:
        plan = [(name, spec["dtype"], spec["shape"], ("copy", src, start + spec["data_offsets"][0])) for name, spec in tensors]
        write_model(args.out, plan, metadata, None, pad=False)
    _, _, new_start = read_header(args.out)
    print(f"header {new_start - start:+d} bytes: every tensor moved, tensor bytes unchanged")


def cmd_quantize(args):
    header, tensors, _ = read_header(args.base)
    smaller = {"F32": "F16", "F16": "F8_E4M3", "BF16": "F8_E4M3"}
    stream = Keystream(f"coffer-bench-delta {args.seed} quantize")
    try:
        plan = [(name, smaller[spec["dtype"]], spec["shape"], ("random",)) for name, spec in tensors]
        total = write_model(args.out, plan, dict(header.get("__metadata__", {}), version="N+1", quantized="fp8"),
                            stream)
    finally:
        stream.close()
    print(f"quantized: {len(plan)} tensors at half size (BF16/F16 -> F8_E4M3, F32 -> F16), {mib(total)}, nothing shared")


def cmd_check(args):
    size = os.path.getsize(args.file)
    header, tensors, start = read_header(args.file)
    offset = 0
    for name, spec in tensors:
        begin, end = spec["data_offsets"]
        if begin != offset or end - begin != nbytes(spec["dtype"], spec["shape"]):
            raise SystemExit(f"delta_models: {args.file}: {name} is not where its dtype and shape put it")
        offset = end
    if start + offset != size:
        raise SystemExit(f"delta_models: {args.file}: {size} bytes, the header describes {start + offset}")
    print(f"{os.path.basename(args.file)}: {len(tensors)} tensors, header {start} bytes, {size} bytes, layout consistent")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("base")
    p.add_argument("out")
    p.add_argument("--size-mib", type=int, required=True)
    p.add_argument("--seed", default="1")
    p.set_defaults(run=cmd_base)
    p = sub.add_parser("retrain")
    p.add_argument("base")
    p.add_argument("out")
    p.add_argument("--percent", type=float, required=True)
    p.add_argument("--seed", default="1")
    p.set_defaults(run=cmd_retrain)
    p = sub.add_parser("header")
    p.add_argument("base")
    p.add_argument("out")
    p.add_argument("--shift", type=int, default=1237)
    p.set_defaults(run=cmd_header)
    p = sub.add_parser("quantize")
    p.add_argument("base")
    p.add_argument("out")
    p.add_argument("--seed", default="1")
    p.set_defaults(run=cmd_quantize)
    p = sub.add_parser("check")
    p.add_argument("file")
    p.set_defaults(run=cmd_check)
    args = parser.parse_args()
    args.run(args)


if __name__ == "__main__":
    sys.exit(main())
