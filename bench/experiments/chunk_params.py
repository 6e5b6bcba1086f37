#!/usr/bin/env python3
"""Which content-defined chunk sizes should container format version 2 use? (docs/adr/0003)

Builds a safetensors-shaped model N deterministically, then versions N+1 of it:

  ft-1%, ft-5%, ft-20%  fine-tunes that rewrite 1 %, 5 % and 20 % of the tensors (by count; same
                        dtypes and shapes, so the layout and the JSON header do not change),
                        each averaged over --trials random choices of tensors;
  header+37             37 bytes more metadata in the JSON header (padded to 8 bytes, as
                        safetensors writers do), which moves every tensor;
  quantized             every tensor rewritten at half the width (BF16 -> I8, F32 -> F16).

For every chunk parameter set (AVG = 64 KiB ... 1 MiB, MIN = AVG/4, MAX = 4*AVG, cut as
docs/FORMAT.md "Cutting the plaintext (writers)" with AVG = 2^k: k+2 high bits zero before AVG,
k-2 from AVG on; and, for comparison, fixed-size chunks) and every N+1 it reports what a device
that holds N downloads to get N+1:

  download = sum over the chunks of N+1 whose plaintext is not among N's chunks of (length + 16)
             + the container header (fields ~100 + table 36*n + MAC 32),

as a percentage of N+1's whole sealed container (plaintext + 16*n + header); the number of
download runs (maximal stretches of consecutive missing chunks: one Range request each; the
header is one more, or part of the first run when chunk 0 is missing); the chunk count; and the
table's size as a percentage of the model. "changed" is the share of N+1's bytes that are new
(the rewritten tensors, or the grown JSON header): no scheme downloads less.

A chunk's ID is HMAC-SHA-256 of its plaintext under a fixed key, standing in for the keyed ID:
under one model key equal plaintexts have equal IDs and equal sealed bytes, so the comparison of
plaintexts is exactly the comparison a device makes.

Pure Python 3 (the standard library is enough). The gear loop runs at roughly 10 MB/s in
CPython, so an N+1 is cut incrementally: where a chunk of N starts at the corresponding place
(the same offset, or shifted by the header growth) and N+1 holds the same bytes there, the cut is
provably the same and is copied instead of recomputed. --check compares this against full
recutting and against tools/reference/coffer_ref.py.

    python3 bench/experiments/chunk_params.py                  # 64 MiB model, 10 trials
    python3 bench/experiments/chunk_params.py --size-mib 128
    python3 bench/experiments/chunk_params.py --flat           # normalized vs unnormalized 256 KiB
    python3 bench/experiments/chunk_params.py --check          # self-test on a small model
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import json
import os
import random
import statistics
import struct
import sys
import time

KIB = 1024
MIB = 1024 * 1024
TAG = 16  # AES-GCM tag per chunk
TABLE_ENTRY = 36  # chunk ID (32) + plaintext length (4)
FIELDS_ESTIMATE = 100  # version 2 fields with a 32-character key ID and a short name
HEADER_MAC = 32

# A fixed gear table standing in for the keyed one (docs/FORMAT.md derives the writers' table from
# the key; any table of pseudo-random 64-bit values cuts with the same statistics):
# gear[b] = first 8 bytes, big-endian, of SHA-256("coffer v2 gear" || b).
GEAR = tuple(int.from_bytes(hashlib.sha256(b"coffer v2 gear" + bytes([b])).digest()[:8], "big")
             for b in range(256))
MASK64 = (1 << 64) - 1
ID_KEY = b"chunk_params.py stand-in ID key."


# ---- chunk parameter sets ------------------------------------------------------------------

class Params:
    """MIN/AVG/MAX and the two hash limits of one cut (or a fixed chunk size)."""

    def __init__(self, avg: int, fixed: bool = False, flat: bool = False):
        self.avg, self.fixed, self.flat = avg, fixed, flat
        self.min, self.max = avg // 4, avg * 4
        k = avg.bit_length() - 1
        assert avg == 1 << k
        # "k+2 high bits zero" is h < 2^(64-k-2); "k-2 high bits zero" is h < 2^(64-k+2).
        # flat: no normalization, k high bits zero throughout (for comparison only).
        self.strict_bits, self.loose_bits = (k, k) if flat else (k + 2, k - 2)
        self.strict = 1 << (64 - self.strict_bits)
        self.loose = 1 << (64 - self.loose_bits)

    @property
    def name(self) -> str:
        if self.fixed:
            return f"fixed {size_label(self.avg)}"
        return f"CDC {size_label(self.avg)}" + (" flat" if self.flat else "")

    @property
    def description(self) -> str:
        if self.fixed:
            return f"fixed {size_label(self.avg)} chunks"
        return (f"MIN {size_label(self.min)}, AVG {size_label(self.avg)}, MAX {size_label(self.max)}, "
                f"{self.strict_bits}/{self.loose_bits} bits")


def size_label(n: int) -> str:
    return f"{n // MIB} MiB" if n % MIB == 0 else f"{n // KIB} KiB"


# ---- the cut -------------------------------------------------------------------------------

def cut_end(data: bytes, s: int, e: int, p: Params) -> tuple[int, bool]:
    """The end of the chunk that starts at s in the segment [s, e), and whether the rolling hash
    chose it (False: the segment's end or MAX did). docs/FORMAT.md, with MIN/AVG/MAX and the two
    bit counts taken from p; for p = CDC 256 KiB this is the spec's cut exactly."""
    if p.fixed:
        return min(s + p.avg, e), False
    mn = p.min
    if e - s <= mn:
        return e, False
    end = min(s + p.max, e)
    middle = min(s + p.avg, end)
    gear, mask = GEAR, MASK64
    h = 0
    limit = p.strict
    for i, b in enumerate(data[s + mn:middle], s + mn + 1):  # i is the spec's i + 1
        h = ((h << 1) + gear[b]) & mask
        if h < limit:
            return i, True
    limit = p.loose
    for i, b in enumerate(data[middle:end], middle + 1):
        h = ((h << 1) + gear[b]) & mask
        if h < limit:
            return i, True
    return end, False


class Cut:
    """The chunks of one plaintext under one parameter set."""

    def __init__(self, data: bytes, lengths: list[int], by_hash: list[bool], hashed_bytes: int):
        self.data, self.lengths, self.by_hash, self.hashed_bytes = data, lengths, by_hash, hashed_bytes
        self.starts: dict[int, int] = {}
        pos = 0
        for index, length in enumerate(lengths):
            self.starts[pos] = index
            pos += length
        self._ids: list[bytes] | None = None

    @property
    def ids(self) -> list[bytes]:
        if self._ids is None:
            view, pos, ids = memoryview(self.data), 0, []
            for length in self.lengths:
                ids.append(hmac.digest(ID_KEY, view[pos:pos + length], "sha256"))
                pos += length
            self._ids = ids
        return self._ids


def cut(data: bytes, p: Params, previous: Cut | None = None, shifts: tuple[int, ...] = (0,)) -> Cut:
    """Cuts data (one segment: a single file) into chunks.

    With `previous` (the cut of an earlier version under the same parameters), a chunk of the
    earlier version that starts at s - shift for one of `shifts`, and whose bytes data holds
    unchanged at s, is taken over without hashing: the cut from s depends only on the bytes
    [s, cut) and, when MAX or the end forced it, on how far the segment reaches, which is checked.
    """
    e = len(data)
    lengths: list[int] = []
    by_hash: list[bool] = []
    hashed = 0
    s = 0
    if e == 0:
        return Cut(data, [0], [False], 0)
    while s < e:
        taken = False
        if previous is not None:
            for shift in shifts:
                index = previous.starts.get(s - shift)
                if index is None:
                    continue
                length, was_hashed = previous.lengths[index], previous.by_hash[index]
                old = s - shift
                if s + length > e:
                    continue
                if not was_hashed and min(p.max if not p.fixed else p.avg, e - s) != length:
                    continue
                if data[s:s + length] != previous.data[old:old + length]:
                    continue
                lengths.append(length)
                by_hash.append(was_hashed)
                s += length
                taken = True
                break
        if taken:
            continue
        end, was_hashed = cut_end(data, s, e, p)
        if not p.fixed and end - s > p.min:
            hashed += end - s - p.min
        lengths.append(end - s)
        by_hash.append(was_hashed)
        s = end
    return Cut(data, lengths, by_hash, hashed)


# ---- the model -----------------------------------------------------------------------------

DTYPE_SIZE = {"F32": 4, "F16": 2, "BF16": 2, "I8": 1}
# safetensors lays tensors out by dtype (wider alignment first), then by name.
DTYPE_ORDER = {"F32": 0, "F16": 1, "BF16": 1, "I8": 2}


class Tensor:
    def __init__(self, name: str, dtype: str, shape: tuple[int, ...]):
        self.name, self.dtype, self.shape = name, dtype, shape

    @property
    def nbytes(self) -> int:
        n = DTYPE_SIZE[self.dtype]
        for d in self.shape:
            n *= d
        return n


def architecture(target: int, layers: int = 7, vocab: int = 8192) -> list[Tensor]:
    """A small Llama/Qwen-style decoder whose size is close to `target` bytes: BF16 matrices,
    F32 norms and attention biases, untied embedding and LM head; 12 tensors per layer + 3."""
    def tensors(d: int) -> list[Tensor]:
        ff = max(64, (d * 8 // 3 + 63) // 64 * 64)
        kv = max(64, d // 4)  # grouped-query attention: narrower K and V
        out = [Tensor("model.embed_tokens.weight", "BF16", (vocab, d)),
               Tensor("model.norm.weight", "F32", (d,)),
               Tensor("lm_head.weight", "BF16", (vocab, d))]
        for i in range(layers):
            pre = f"model.layers.{i}."
            out += [Tensor(pre + "self_attn.q_proj.weight", "BF16", (d, d)),
                    Tensor(pre + "self_attn.k_proj.weight", "BF16", (kv, d)),
                    Tensor(pre + "self_attn.v_proj.weight", "BF16", (kv, d)),
                    Tensor(pre + "self_attn.o_proj.weight", "BF16", (d, d)),
                    Tensor(pre + "self_attn.q_proj.bias", "F32", (d,)),
                    Tensor(pre + "self_attn.k_proj.bias", "F32", (kv,)),
                    Tensor(pre + "self_attn.v_proj.bias", "F32", (kv,)),
                    Tensor(pre + "mlp.gate_proj.weight", "BF16", (ff, d)),
                    Tensor(pre + "mlp.up_proj.weight", "BF16", (ff, d)),
                    Tensor(pre + "mlp.down_proj.weight", "BF16", (d, ff)),
                    Tensor(pre + "input_layernorm.weight", "F32", (d,)),
                    Tensor(pre + "post_attention_layernorm.weight", "F32", (d,))]
        return out

    best = min(range(64, 8192, 16), key=lambda d: abs(sum(t.nbytes for t in tensors(d)) - target))
    return tensors(best)


def tensor_bytes(seed: str, tensor: Tensor, version: str) -> bytes:
    return random.Random(f"{seed}/{tensor.name}/{version}").randbytes(tensor.nbytes)


def safetensors(tensors: list[Tensor], contents: dict[str, bytes], metadata: dict[str, str]) -> tuple[bytes, int]:
    """The file, and the length of its 8-byte length + JSON header (where the data starts)."""
    order = sorted(tensors, key=lambda t: (DTYPE_ORDER[t.dtype], t.name))
    header: dict[str, object] = {"__metadata__": metadata}
    pos = 0
    for t in order:
        header[t.name] = {"dtype": t.dtype, "shape": list(t.shape), "data_offsets": [pos, pos + t.nbytes]}
        pos += t.nbytes
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)  # safetensors pads the header to 8 bytes
    prefix = struct.pack("<Q", len(text)) + text
    return prefix + b"".join(contents[t.name] for t in order), len(prefix)


class Version:
    def __init__(self, name: str, data: bytes, changed: int, shift: int = 0):
        self.name, self.data, self.changed, self.shift = name, data, changed, shift


def versions(size: int, seed: str, trials: int) -> tuple[Version, list[Version], dict[str, object]]:
    tensors = architecture(size)
    base_meta = {"format": "pt"}
    contents = {t.name: tensor_bytes(seed, t, "N") for t in tensors}
    data, prefix = safetensors(tensors, contents, base_meta)
    n = Version("N", data, len(data))
    out: list[Version] = []
    names = [t.name for t in tensors]
    by_name = {t.name: t for t in tensors}
    for frac in (0.01, 0.05, 0.20):
        count = max(1, round(frac * len(tensors)))
        for trial in range(trials):
            picked = random.Random(f"{seed}/pick/{frac}/{trial}").sample(names, count)
            new = dict(contents)
            for name in picked:
                new[name] = tensor_bytes(seed, by_name[name], f"ft{trial}")
            d, p = safetensors(tensors, new, base_meta)
            assert p == prefix and len(d) == len(data)
            out.append(Version(f"ft-{round(frac * 100)}%", d, sum(by_name[x].nbytes for x in picked)))
    # 37 more bytes of JSON: '"note":"' + 27 characters + '",' is 37 bytes.
    meta = {"format": "pt", "note": "x" * 27}
    grown = json.dumps(meta, separators=(",", ":")).encode()
    assert len(grown) - len(json.dumps(base_meta, separators=(",", ":")).encode()) == 37
    d, p = safetensors(tensors, contents, meta)
    out.append(Version("header+37", d, p, shift=p - prefix))
    quantized = [Tensor(t.name, {"BF16": "I8", "F32": "F16"}[t.dtype], t.shape) for t in tensors]
    q_contents = {t.name: tensor_bytes(seed, t, "q8") for t in quantized}
    d, _ = safetensors(quantized, q_contents, base_meta)
    out.append(Version("quantized", d, len(d)))
    sizes = sorted(t.nbytes for t in tensors)
    info = {"tensors": len(tensors), "size": len(data), "json_header": prefix,
            "smallest": sizes[0], "median": int(statistics.median(sizes)), "largest": sizes[-1]}
    return n, out, info


# ---- the measurement -----------------------------------------------------------------------

def header_size(n: int) -> int:
    return FIELDS_ESTIMATE + TABLE_ENTRY * n + HEADER_MAC


def delta(old: Cut, new: Cut, changed: int) -> dict[str, float]:
    have = set(old.ids)
    download = header_size(len(new.lengths))
    runs, in_run = 0, False
    for cid, length in zip(new.ids, new.lengths):
        if cid in have:
            in_run = False
            continue
        download += length + TAG
        if not in_run:
            runs += 1
            in_run = True
    full = len(new.data) + TAG * len(new.lengths) + header_size(len(new.lengths))
    return {"download": 100.0 * download / full, "runs": runs, "chunks": len(new.lengths),
            "table": 100.0 * TABLE_ENTRY * len(new.lengths) / len(new.data),
            "download_mib": download / MIB,
            # bytes downloaded beyond the new bytes themselves and the header, per run
            "extra_per_run": (download - header_size(len(new.lengths)) - changed) / runs if runs else 0.0}


PARAMS = [Params(64 * KIB), Params(128 * KIB), Params(256 * KIB), Params(512 * KIB), Params(MIB),
          Params(256 * KIB, fixed=True), Params(MIB, fixed=True)]
VARIANTS = ["ft-1%", "ft-5%", "ft-20%", "header+37", "quantized"]


def run(size_mib: int, trials: int, seed: str, params: list[Params]) -> None:
    t0 = time.perf_counter()
    n, later, info = versions(size_mib * MIB, seed, trials)
    shift = next(v.shift for v in later if v.name == "header+37")
    print(f"model N: {info['size'] / MIB:.1f} MiB safetensors, {info['tensors']} tensors "
          f"(BF16 matrices, F32 norms and biases; {info['smallest'] / KIB:.1f} KiB to "
          f"{info['largest'] / MIB:.2f} MiB, median {info['median'] / KIB:.0f} KiB), "
          f"JSON header {info['json_header']} bytes; seed {seed!r}, {trials} trials per fine-tune; "
          f"header+37 moves every tensor by {shift} bytes")
    changed: dict[str, list[float]] = {}
    for v in later:
        changed.setdefault(v.name, []).append(100.0 * v.changed / len(v.data))
    print("changed (share of N+1's bytes that are new): "
          + ", ".join(f"{k} {statistics.mean(x):.2f} %" for k, x in changed.items()))
    print(f"(models built in {time.perf_counter() - t0:.0f} s)\n", flush=True)

    results: dict[tuple[str, str], list[dict[str, float]]] = {}
    base_info: dict[str, dict[str, float]] = {}
    for p in params:
        t = time.perf_counter()
        base = cut(n.data, p)
        elapsed = time.perf_counter() - t
        lengths = base.lengths
        base_info[p.name] = {"chunks": len(lengths), "mean": statistics.mean(lengths),
                             "p10": sorted(lengths)[len(lengths) // 10],
                             "p90": sorted(lengths)[len(lengths) * 9 // 10],
                             "maxed": sum(1 for x, h in zip(lengths[:-1], base.by_hash) if not h),
                             "table": 100.0 * TABLE_ENTRY * len(lengths) / len(n.data),
                             "mbps": base.hashed_bytes / elapsed / 1e6 if base.hashed_bytes else 0.0}
        for v in later:
            new = cut(v.data, p, previous=base, shifts=(0, v.shift) if v.shift else (0,))
            results.setdefault((p.name, v.name), []).append(delta(base, new, v.changed))
        print(f"  {p.name:<16} done in {time.perf_counter() - t:.0f} s", file=sys.stderr, flush=True)

    print("Chunks of N")
    print(f"| {'chunks':<50} | {'n':>5} | {'mean':>9} | {'p10':>9} | {'p90':>9} | {'cut at MAX':>10} | {'table / model':>13} |")
    print(f"|{'-' * 52}|{'-' * 6}:|{'-' * 10}:|{'-' * 10}:|{'-' * 10}:|{'-' * 11}:|{'-' * 14}:|")
    for p in params:
        b = base_info[p.name]
        maxed = "-" if p.fixed else f"{b['maxed']}"
        print(f"| {p.description:<50} | {b['chunks']:>5} | {b['mean'] / KIB:>5.0f} KiB | {b['p10'] / KIB:>5.0f} KiB | "
              f"{b['p90'] / KIB:>5.0f} KiB | {maxed:>10} | {b['table']:>11.3f} % |")
    print()

    def cell(p: Params, v: str, key: str, fmt: str) -> str:
        return format(statistics.mean(r[key] for r in results[(p.name, v)]), fmt)

    print("Download for N+1 as % of its whole sealed container (download runs = Range requests)")
    print("| chunks           | " + " | ".join(f"{v:>15}" for v in VARIANTS) + " |")
    print("|------------------|" + "|".join("-" * 16 + ":" for _ in VARIANTS) + "|")
    print("| changed bytes    | " + " | ".join(f"{statistics.mean(changed[v]):>13.2f} %" for v in VARIANTS) + " |")
    for p in params:
        cells = []
        for v in VARIANTS:
            cells.append(f"{cell(p, v, 'download', '.2f'):>6} % ({cell(p, v, 'runs', '.1f'):>4})")
        print(f"| {p.name:<16} | " + " | ".join(f"{c:>15}" for c in cells) + " |")
    print()

    print("Fine-tunes trial by trial: download % (min ... max over trials)")
    for p in params:
        parts = []
        for v in VARIANTS[:3]:
            xs = [r["download"] for r in results[(p.name, v)]]
            parts.append(f"{v} {min(xs):.2f} ... {max(xs):.2f}")
        print(f"  {p.name:<16} " + "; ".join(parts))
    print()

    print("Detail (means over trials): chunks of N+1 / table as % of N+1 / MiB downloaded / "
          "KiB downloaded per run beyond the changed bytes and the header")
    for p in params:
        parts = [f"{v} {cell(p, v, 'chunks', '.0f')} / {cell(p, v, 'table', '.3f')} % / "
                 f"{cell(p, v, 'download_mib', '.2f')} / {statistics.mean(r['extra_per_run'] for r in results[(p.name, v)]) / KIB:.0f}"
                 for v in VARIANTS[:4]]
        parts.append(f"quantized {cell(p, 'quantized', 'chunks', '.0f')} / {cell(p, 'quantized', 'table', '.3f')} % / "
                     f"{cell(p, 'quantized', 'download_mib', '.2f')}")
        print(f"  {p.name:<16} " + "; ".join(parts))
    print()
    print("Downloaded beyond the changed bytes and the header, per run, in units of N's mean chunk")
    for p in params:
        mean = base_info[p.name]["mean"]
        parts = [f"{v} {statistics.mean(r['extra_per_run'] for r in results[(p.name, v)]) / mean:.2f}"
                 for v in VARIANTS[:4]]
        print(f"  {p.name:<16} " + "; ".join(parts))
    print()
    mbps = [base_info[p.name]["mbps"] for p in params if not p.fixed]
    print(f"Python gear loop: {min(mbps):.1f} ... {max(mbps):.1f} MB/s of hashed bytes "
          f"(CPython, one core; not representative of the Swift chunker). "
          f"Total {time.perf_counter() - t0:.0f} s.")


def check() -> None:
    """Incremental cuts equal full cuts, and the 256 KiB cut equals the reference's (given the same
    gear table)."""
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, os.path.join(here, "..", "..", "tools", "reference"))
    import coffer_ref  # noqa: E402

    n, later, _ = versions(12 * MIB, "check", 2)
    spec = Params(256 * KIB)
    assert cut(n.data, spec).lengths == coffer_ref.cut_plaintext(n.data, gear=GEAR), "differs from coffer_ref"
    for extra in (b"", bytes(70_000), random.Random(3).randbytes(5 * MIB + 17)):
        data = n.data[:3 * MIB] + extra
        assert cut(data, spec).lengths == coffer_ref.cut_plaintext(data, gear=GEAR), "differs from coffer_ref"
    print("256 KiB cut agrees with tools/reference/coffer_ref.py")
    for p in PARAMS + [Params(256 * KIB, flat=True)]:
        base = cut(n.data, p)
        assert sum(base.lengths) == len(n.data)
        for v in later + [Version("truncated", n.data[:len(n.data) - 300_000], 0),
                          Version("appended", n.data + bytes(range(256)) * 9000, 0)]:
            quick = cut(v.data, p, previous=base, shifts=(0, v.shift) if v.shift else (0,))
            full = cut(v.data, p)
            assert quick.lengths == full.lengths, (p.name, v.name)
        print(f"{p.name}: incremental cuts agree with full cuts")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size-mib", type=int, default=64, help="size of model N (default 64)")
    parser.add_argument("--trials", type=int, default=10, help="random choices of tensors per fine-tune (default 10)")
    parser.add_argument("--seed", default="coffer adr 0003", help="seed of every generated byte")
    parser.add_argument("--flat", action="store_true",
                        help="compare the 256 KiB cut with an unnormalized one (18 bits throughout) instead")
    parser.add_argument("--check", action="store_true", help="self-test instead of measuring")
    args = parser.parse_args()
    if args.check:
        check()
    else:
        params = [Params(256 * KIB), Params(256 * KIB, flat=True)] if args.flat else PARAMS
        run(args.size_mib, args.trials, args.seed, params)


if __name__ == "__main__":
    main()
