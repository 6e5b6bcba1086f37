#!/usr/bin/env python3
"""Generates the Coffer container test vectors from the reference implementation.

    python3 tools/reference/make_vectors.py

writes Tests/CofferFormatTests/Vectors/container/NNN-short-name.json, one case per file (see
the README.md in that folder). Every salt, key and plaintext is fixed, so running this twice gives
byte-identical files. Numbering: 0xx valid containers, 1xx-2xx the container "MUST reject" list
of docs/FORMAT.md (1 -> 10x, 2 -> 11x, ..., 9 -> 18x, 10 -> 19x, 11 -> 20x-21x, 12 -> 22x-23x),
3xx the packed-tree "MUST reject" list (rule t -> 3(t-1)x).

Each vector is checked against coffer_ref.open_container before it is written, so the reference
implementation itself must agree with every expectation.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import coffer_ref as ref  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "Tests", "CofferFormatTests", "Vectors", "container")

KEY = hashlib.sha256(b"coffer test vectors: model key").digest()
KEY_ID = "5f0c0d8e2b7a4c1e9d3f6a8b0c2e4f61"
OTHER_KEY = hashlib.sha256(b"coffer test vectors: another model key").digest()
OTHER_KEY_ID = "0a1b2c3d4e5f60718293a4b5c6d7e8f9"
PASSPHRASE = "correct horse battery staple"
TEST_SCRYPT = (10, 8, 1)  # fast; writers use 17, 8, 1
E = 16
C = 1 << E


def salt(tag: str) -> bytes:
    return hashlib.sha256(b"coffer test vectors: salt " + tag.encode()).digest()


def scrypt_salt(tag: str) -> bytes:
    return hashlib.sha256(b"coffer test vectors: scrypt salt " + tag.encode()).digest()[:16]


def data(tag: str, n: int) -> bytes:
    return hashlib.shake_256(b"coffer test vectors: data " + tag.encode()).digest(n) if n else b""


def flip(blob: bytes, offset: int, mask: int = 0x01) -> bytes:
    b = bytearray(blob)
    b[offset] ^= mask
    return bytes(b)


def header_length(container: bytes) -> int:
    return struct.unpack_from(">H", container, 10)[0]


def chunks_of(container: bytes, e: int = E) -> tuple[bytes, list[bytes]]:
    h = header_length(container)
    body = container[h:]
    step = (1 << e) + ref.TAG_LENGTH
    return container[:h], [body[i:i + step] for i in range(0, len(body), step)] or [b""]


def build(
    plaintext: bytes,
    tag: str,
    *,
    key: bytes | None = KEY,
    passphrase: str | bytes | None = None,
    scrypt: tuple[int, int, int] = TEST_SCRYPT,
    derivable: bool = True,
    key_id: bytes | None = None,
    name: bytes = b"model.bin",
    chunk_exp: int = E,
    header_chunk_exp: int | None = None,
    kind: int = ref.KIND_FILE,
    kdf: int | None = None,
    suite: int = ref.SUITE_AES256GCM_HKDF_HMAC,
    version: int = ref.VERSION,
    header_length_override: int | None = None,
    extra: bytes = b"",
    length: int | None = None,
    flag_for=None,
    nonce_for=None,
    aad: bytes | None = None,
) -> bytes:
    """A container whose header fields can be set to anything; the MAC is always computed with
    the real key material (so only the rule under test fails), and the chunks are sealed with
    the matching payload key and MAC. With derivable=False (scrypt parameters too costly or
    undefined) the MAC and chunks use a placeholder key: a reader must refuse before deriving."""
    if isinstance(passphrase, str):
        passphrase = passphrase.encode("utf-8")
    uses_passphrase = passphrase is not None
    if kdf is None:
        kdf = ref.KDF_PASSPHRASE if uses_passphrase else ref.KDF_MODEL_KEY
    if key_id is None:
        key_id = b"" if uses_passphrase else KEY_ID.encode()
    s_salt = scrypt_salt(tag) if uses_passphrase else None
    fields = ref.encode_scrypt_fields(*scrypt, s_salt) if uses_passphrase else None
    body = ref.encode_header_body(
        chunk_exp=chunk_exp if header_chunk_exp is None else header_chunk_exp,
        kind=kind, kdf=kdf, length=len(plaintext) if length is None else length, salt=salt(tag),
        key_id=key_id, name=name, scrypt_fields=fields, version=version, suite=suite,
        header_length=header_length_override, extra=extra)
    if uses_passphrase:
        ikm = ref.scrypt_ikm(passphrase, s_salt, *scrypt) if derivable else hashlib.sha256(b"placeholder").digest()
    else:
        ikm = key
    header_key, payload_key = ref.file_keys(ikm, salt(tag))
    mac = ref.header_mac(header_key, body)
    chunks = ref.seal_chunks(payload_key, mac, plaintext, chunk_exp, flag_for=flag_for, nonce_for=nonce_for, aad=aad)
    return body + mac + b"".join(chunks)


def b_tree(entries: list[bytes], root_mode: int = 0o755, **kw) -> bytes:
    return ref.tree_stream(entries, root_mode, **kw)


def t_dir(path: bytes | str, mode: int = 0o755) -> bytes:
    return ref.encode_tree_entry(ref.TREE_FOLDER, mode, path.encode() if isinstance(path, str) else path, b"")


def t_file(path: bytes | str, content: bytes = b"x", mode: int = 0o644) -> bytes:
    return ref.encode_tree_entry(ref.TREE_FILE, mode, path.encode() if isinstance(path, str) else path,
                                 ref.file_body(content))


def t_link(path: bytes | str, target: bytes | str) -> bytes:
    return ref.encode_tree_entry(ref.TREE_LINK, 0o777, path.encode() if isinstance(path, str) else path,
                                 ref.link_body(target.encode() if isinstance(target, str) else target))


# --------------------------------------------------------------------------------------------

vectors: list[tuple[str, dict]] = []


def add(number: int, short: str, description: str, container: bytes, expect: str, *,
        key: bytes | None = KEY, key_id: str | None = KEY_ID, passphrase: str | None = None,
        payload_kind: int = 1) -> None:
    """Records one vector after checking the reference implementation agrees with it."""
    pw = passphrase.encode("utf-8") if passphrase is not None else None
    if passphrase is not None:
        key, key_id = None, None
    try:
        header, plaintext = ref.open_container(container, key=key, passphrase=pw)
        got = "ok"
    except ref.RejectError as error:
        got = error.code
        header = plaintext = None
    if got != expect:
        raise SystemExit(f"vector {number:03d}-{short}: reference says {got}, vector expects {expect}")
    vector = {
        "description": description,
        "key": key.hex() if key is not None else None,
        "keyID": key_id,
        "passphrase": passphrase,
        "payloadKind": payload_kind,
        "expect": expect,
    }
    if expect == "ok":
        assert header["payloadKind"] == payload_kind
        vector["originalName"] = header["name"]
        vector["plaintextLength"] = len(plaintext)
        # For kind 2 the plaintext is the packed-tree stream: its hash pins the packing bytes.
        vector["plaintextSHA256"] = hashlib.sha256(plaintext).hexdigest()
        if payload_kind == 1:
            if len(plaintext) <= 256:
                vector["plaintextHex"] = plaintext.hex()
        else:
            vector["treeRootMode"] = header["rootMode"]
            entries = []
            for entry in header["entries"]:
                out = {"path": entry["path"], "kind": entry["kind"], "mode": entry["mode"]}
                if entry["kind"] == "file":
                    out["size"] = len(entry["content"])
                    out["sha256"] = hashlib.sha256(entry["content"]).hexdigest()
                elif entry["kind"] == "symlink":
                    out["target"] = entry["target"].decode("utf-8")
                entries.append(out)
            vector["treeEntries"] = entries
    vector["container"] = base64.b64encode(container).decode("ascii")
    vectors.append((f"{number:03d}-{short}", vector))


def ok(number, short, description, plaintext, *, name="model.bin", chunk_exp=E, passphrase=None,
       scrypt=TEST_SCRYPT, key_id=KEY_ID, kind=1):
    container = build(plaintext, short, passphrase=passphrase, scrypt=scrypt, name=name.encode("utf-8"),
                      chunk_exp=chunk_exp, key_id=None if passphrase else key_id.encode(), kind=kind)
    add(number, short, description, container, "ok", key_id=key_id, passphrase=passphrase, payload_kind=kind)


# ---- valid containers -----------------------------------------------------------------------

ok(1, "empty", "Empty plaintext: one empty chunk (16-byte tag only), sealed with flag 1.", b"", name="empty.bin")
ok(2, "one-byte", "A 1-byte plaintext in one chunk.", b"\x42", name="one.bin")
ok(3, "one-full-chunk", "Exactly one chunk (65536 bytes, e = 16): the only chunk is full and carries flag 1.",
   data("003", C))
ok(4, "three-full-chunks", "Exactly 3 chunks of 65536 bytes: the last chunk is full (no empty 4th chunk).",
   data("004", 3 * C))
ok(5, "three-chunks-plus-one", "3 full chunks + 1 byte: 4 chunks, the last holding 1 byte.",
   data("005", 3 * C + 1))
ok(6, "passphrase", "Passphrase container, scrypt logN 10, r 8, p 1 (key ID length 0, 25 bytes of scrypt "
   "parameters in the header).", b"Sealed with a passphrase. " * 4, passphrase=PASSPHRASE, name="notes.txt")
ok(7, "non-ascii-name", "Original name with non-ASCII UTF-8 (precomposed e-grave, CJK, emoji); the name is "
   "recorded byte for byte.", b"non-ascii name\n", name="Mod\u00e8le \u82b1 \U0001F338.mlmodel")


def ok_tree() -> tuple[list[dict], int]:
    entries = [
        {"path": "a", "kind": "directory", "mode": 0o755},
        {"path": "a/b", "kind": "directory", "mode": 0o750},
        {"path": "a/b/c", "kind": "directory", "mode": 0o700},
        {"path": "a/b/c/deep.bin", "kind": "file", "mode": 0o644, "content": data("deep", 100)},
        {"path": "a/b/c/up", "kind": "symlink", "target": "../../.."},
        {"path": "a/b/rel", "kind": "symlink", "target": "../../bin/run.sh"},
        {"path": "a/b/weights.bin", "kind": "file", "mode": 0o644, "content": data("weights", 70_000)},
        {"path": "a-c", "kind": "file", "mode": 0o600, "content": b"sorted after a/..., before b\n"},
        {"path": "bin", "kind": "directory", "mode": 0o755},
        {"path": "bin/run.sh", "kind": "file", "mode": 0o755, "content": b"#!/bin/sh\necho hello\n"},
        {"path": "dangling", "kind": "symlink", "target": "does-not-exist"},
        {"path": "empty.txt", "kind": "file", "mode": 0o644, "content": b""},
        {"path": "link-to-weights", "kind": "symlink", "target": "a/b/weights.bin"},
        {"path": "ro", "kind": "directory", "mode": 0o555},
        {"path": "ro/file.txt", "kind": "file", "mode": 0o444, "content": b"read-only\n"},
        {"path": "\u00e9t\u00e9.txt", "kind": "file", "mode": 0o640, "content": b"non-ASCII path\n"},
    ]
    return entries, 0o750


tree_entries, tree_root_mode = ok_tree()
ok(8, "packed-folder", "Packed folder (kind 2): nested folders with modes 755/750/700/555, an empty file, an "
   "executable (755), a read-only file and folder, symlinks (one dangling, one to the root via ../../.., one "
   "relative across folders), a non-ASCII path, a 70000-byte file crossing a chunk boundary, and 'a-c' "
   "sorted after 'a/...' (component order, not byte order). Root mode 750.",
   ref.pack_tree(tree_entries, tree_root_mode), name="Model.mlmodelc", kind=2)
ok(9, "packed-empty-folder", "Packed folder with no entries (root mode 700).",
   ref.pack_tree([], 0o700), name="Empty.mlpackage", kind=2)
ok(10, "passphrase-non-ascii", "Passphrase with non-ASCII characters (used as its UTF-8 bytes).",
   data("010", 100), passphrase="p\u00e4ssw\u00f6rd \u2713 \U0001F511", name="key.txt")
ok(11, "key-id-64-bytes", "Model key whose ID is 64 bytes (the maximum) using every allowed kind of byte.",
   b"longest key ID\n", key_id="Az09._-" * 9 + "z")
ok(12, "empty-name", "Empty original name (allowed).", b"no name\n", name="")
ok(13, "chunk-exp-20", "Chunk size exponent 20 (1 MiB, the maximum) with a small plaintext.", data("013", 1000),
   chunk_exp=20)
ok(14, "chunk-exp-17-two-chunks", "Chunk size exponent 17 (128 KiB): 131073 bytes make 2 chunks, the last "
   "holding 1 byte.", data("014", 2 * 65536 + 1), chunk_exp=17)
ok(15, "name-1024-bytes", "Original name of exactly 1024 UTF-8 bytes (512 x U+00E9), the maximum.",
   b"longest name\n", name="\u00e9" * 512)
ok(16, "scrypt-r32-p4", "Passphrase with scrypt r = 32 and p = 4 (the maximums), logN 10 (4 MiB).",
   b"scrypt limits\n", passphrase=PASSPHRASE, scrypt=(10, 32, 4))
ok(17, "name-three-dots", "Original name '...' (only '.' and '..' are refused).", b"dots\n", name="...")

# ---- rule 1: magic --------------------------------------------------------------------------

base = build(b"hello, vectors\n", "base")
add(100, "empty-file", "Rule 1: an empty file does not start with the magic.", b"", "notAContainer")
add(101, "bad-magic", "Rule 1: first magic byte 0x89 changed to 0x88 (rest of a valid container).",
    flip(base, 0), "notAContainer")
add(102, "text-file", "Rule 1: a text file.", b"This is not a Coffer container, just some text.\n",
    "notAContainer")
add(103, "magic-prefix-only", "Rule 1: a 5-byte file holding the first 5 magic bytes; it does not start "
    "with the (8-byte) magic.", ref.MAGIC[:5], "notAContainer")
add(104, "magic-last-byte", "Rule 1: magic with its final 0x0A changed to 0x0D (a line-ending conversion).",
    base[:7] + b"\x0d" + base[8:], "notAContainer")

# ---- rule 2: version ------------------------------------------------------------------------

add(110, "version-2", "Rule 2: version 2, otherwise a valid container (MAC recomputed over the edited "
    "header with the right key).", build(b"hello\n", "v2", version=2), "unsupportedVersion")
add(111, "version-0", "Rule 2: version 0 (MAC recomputed with the right key).", build(b"hello\n", "v0", version=0),
    "unsupportedVersion")
add(112, "version-2-other-layout", "Rule 2: version 2 followed by bytes that are not a v1 header (header "
    "length 0xFFFF, garbage): a later version is refused by its version, before anything else is read.",
    ref.MAGIC + b"\x00\x02\xff\xff" + data("112", 200), "unsupportedVersion")

# ---- rule 3: header length ------------------------------------------------------------------

add(120, "header-length-5000", "Rule 3: header length field 5000 (over 4096); MAC recomputed with the right "
    "key.", build(b"hello\n", "h5000", header_length_override=5000), "malformedHeader")
add(121, "header-length-4097", "Rule 3: header length field 4097 (just over 4096), file long enough to hold it.",
    build(b"hello\n", "h4097", header_length_override=4097) + bytes(4200), "malformedHeader")
add(122, "header-length-50", "Rule 3: header length field 50, under the smallest possible header (92: model "
    "key with a 1-byte key ID and an empty name).", build(b"hello\n", "h50", header_length_override=50),
    "malformedHeader")
add(123, "header-length-91", "Rule 3: header length 91, one under the smallest possible header; the header "
    "is a valid 92-byte one (key ID 'a', empty name) with only its length field changed (MAC recomputed).",
    build(b"hello\n", "h91", key_id=b"a", name=b"", header_length_override=91), "malformedHeader")
add(124, "header-length-longer-than-fields", "Rule 3: one extra byte between the last field and the MAC, "
    "header length counting it; MAC recomputed with the right key and chunks sealed under it.",
    build(b"hello\n", "hplus", extra=b"\x00"), "malformedHeader")
add(125, "header-length-shorter-than-fields", "Rule 3: header length field one less than the fields need "
    "(MAC recomputed over the body as written).",
    build(b"hello\n", "hminus", header_length_override=len(ref.encode_header_body(
        chunk_exp=E, kind=1, kdf=1, length=6, salt=bytes(32), key_id=KEY_ID.encode(), name=b"model.bin",
        scrypt_fields=None)) + 32 - 1), "malformedHeader")
add(126, "header-length-disagrees-passphrase", "Rule 3: a passphrase header whose length field omits the "
    "25 bytes of scrypt parameters (as if they were absent); MAC recomputed.",
    build(b"hello\n", "hpw", passphrase=PASSPHRASE, header_length_override=len(ref.encode_header_body(
        chunk_exp=E, kind=1, kdf=2, length=6, salt=bytes(32), key_id=b"", name=b"model.bin",
        scrypt_fields=None)) + 32), "malformedHeader", passphrase=PASSPHRASE)

# ---- rule 4: suite, payload kind, key derivation --------------------------------------------

add(130, "unknown-suite", "Rule 4: suite 2 (unknown); MAC recomputed with the right key, chunks valid.",
    build(b"hello\n", "suite2", suite=2), "malformedHeader")
add(131, "unknown-payload-kind", "Rule 4: payload kind 3 (unknown); MAC recomputed with the right key, "
    "chunks valid.", build(b"hello\n", "kind3", kind=3), "malformedHeader")
add(132, "unknown-key-derivation", "Rule 4: key derivation 3 (unknown), fields otherwise as for a model key; "
    "MAC recomputed with the right key.", build(b"hello\n", "kdf3", kdf=3), "malformedHeader")
add(133, "payload-kind-0", "Rule 4: payload kind 0; MAC recomputed with the right key.",
    build(b"hello\n", "kind0", kind=0), "malformedHeader")
add(134, "key-derivation-0", "Rule 4: key derivation 0; MAC recomputed with the right key.",
    build(b"hello\n", "kdf0", kdf=0), "malformedHeader")
add(135, "suite-0", "Rule 4: suite 0; MAC recomputed with the right key.", build(b"hello\n", "suite0", suite=0),
    "malformedHeader")

# ---- rule 5: chunk size exponent ------------------------------------------------------------

add(140, "chunk-exp-15", "Rule 5: chunk size exponent 15 with a valid MAC (recomputed with the right key); "
    "the 6-byte plaintext is one chunk under either size, so length and tag would verify: only the exponent "
    "rule refuses it.", build(b"hello\n", "e15", header_chunk_exp=15), "malformedHeader")
add(141, "chunk-exp-21", "Rule 5: chunk size exponent 21 with a valid MAC and valid single chunk; only the "
    "exponent rule refuses it.", build(b"hello\n", "e21", header_chunk_exp=21), "malformedHeader")
add(142, "chunk-exp-0", "Rule 5: chunk size exponent 0 with a valid MAC.", build(b"hello\n", "e0",
    header_chunk_exp=0), "malformedHeader")

# ---- rule 6: plaintext length ---------------------------------------------------------------

add(150, "plaintext-length-2p48-plus-1", "Rule 6: plaintext length 2^48 + 1 with a valid MAC (recomputed "
    "with the right key); refused as a header rule, before the length check.",
    build(b"hello\n", "l48", length=(1 << 48) + 1), "malformedHeader")
add(151, "plaintext-length-max-u64", "Rule 6: plaintext length 2^64 - 1 with a valid MAC (a reader must not "
    "overflow computing H + L + 16n).", build(b"hello\n", "l64", length=(1 << 64) - 1), "malformedHeader")

add(152, "plaintext-length-2p48-short-file", "Rule 6 boundary: plaintext length exactly 2^48 is allowed by the "
    "header rules (valid MAC), so the reader gets to the length check, which fails: the file holds one small "
    "chunk (rule 10).", build(b"hello\n", "l48exact", length=1 << 48), "lengthMismatch")

# ---- rule 7: key ID -------------------------------------------------------------------------

add(160, "key-id-empty-model-key", "Rule 7: model key container with an empty key ID; MAC recomputed with the "
    "right key.", build(b"hello\n", "kidempty", key_id=b""), "malformedHeader")
add(161, "key-id-with-passphrase", "Rule 7: passphrase container carrying a key ID; MAC recomputed with the "
    "right passphrase.", build(b"hello\n", "kidpw", passphrase=PASSPHRASE, key_id=KEY_ID.encode()),
    "malformedHeader", passphrase=PASSPHRASE)
add(162, "key-id-65-bytes", "Rule 7: key ID of 65 bytes; MAC recomputed with the right key.",
    build(b"hello\n", "kid65", key_id=b"a" * 65), "malformedHeader")
add(163, "key-id-slash", "Rule 7: key ID containing '/'; MAC recomputed with the right key.",
    build(b"hello\n", "kidslash", key_id=b"abc/def"), "malformedHeader")
add(164, "key-id-non-ascii", "Rule 7: key ID containing UTF-8 'e-acute' (0xC3 0xA9); MAC recomputed.",
    build(b"hello\n", "kidutf8", key_id="cl\u00e9".encode()), "malformedHeader")
add(165, "key-id-plus", "Rule 7: key ID containing '+'; MAC recomputed with the right key.",
    build(b"hello\n", "kidplus", key_id=b"a+b"), "malformedHeader")
add(166, "key-id-nul", "Rule 7: key ID containing NUL; MAC recomputed with the right key.",
    build(b"hello\n", "kidnul", key_id=b"ab\x00cd"), "malformedHeader")

# ---- rule 8: original name ------------------------------------------------------------------

for number, short, name, why in [
    (170, "name-1025-bytes", b"n" * 1025, "name of 1025 bytes (over 1024)"),
    (171, "name-invalid-utf8", b"model\xff.bin", "name with byte 0xFF (not UTF-8)"),
    (172, "name-overlong-utf8", b"\xc0\xae\xc0\xae", "name '..' written as overlong UTF-8 (C0 AE C0 AE), "
     "not valid UTF-8"),
    (173, "name-dot", b".", "name '.'"),
    (174, "name-dot-dot", b"..", "name '..'"),
    (175, "name-slash", b"models/evil.bin", "name containing '/'"),
    (176, "name-nul", b"model\x00.bin", "name containing NUL"),
    (177, "name-surrogate", b"a\xed\xa0\x80b", "name containing an encoded UTF-16 surrogate (ED A0 80), not "
     "valid UTF-8"),
    (178, "name-truncated-utf8", b"caf\xc3", "name ending in the middle of a UTF-8 sequence"),
]:
    add(number, short, f"Rule 8: {why}; MAC recomputed with the right key and chunks valid.",
        build(b"hello\n", short, name=name), "malformedHeader")

# ---- rule 9: scrypt limits ------------------------------------------------------------------

PLACEHOLDER = ("the MAC and chunks use a placeholder key (deriving is impossible or too costly): a reader "
               "must refuse from the parameters alone, before deriving anything")
VALID_MAC = "the MAC is valid for the passphrase (recomputed with these parameters), so only the limit fails"
for number, short, params, derivable, why in [
    (180, "scrypt-logn-21", (21, 8, 1), False, "logN 21 (2 GiB of scrypt memory)"),
    (181, "scrypt-logn-9", (9, 8, 1), True, "logN 9 (under 10)"),
    (182, "scrypt-r-0", (10, 0, 1), False, "r 0"),
    (183, "scrypt-r-33", (10, 33, 1), True, "r 33"),
    (184, "scrypt-p-0", (10, 8, 0), False, "p 0"),
    (185, "scrypt-p-5", (10, 8, 5), True, "p 5"),
    (186, "scrypt-memory-288mib", (18, 9, 1), False, "logN 18, r 9: each within its range, but 128*r*2^logN "
     "= 288 MiB, over 256 MiB"),
    (187, "scrypt-logn-255", (255, 8, 1), False, "logN 255"),
    (188, "scrypt-r-max", (10, 0xFFFFFFFF, 1), False, "r 2^32 - 1 (the memory product must not overflow)"),
    (189, "scrypt-p-max", (10, 8, 0xFFFFFFFF), False, "p 2^32 - 1"),
]:
    add(number, short, f"Rule 9: scrypt {why}; must be costLimitExceeded without deriving; "
        f"{VALID_MAC if derivable else PLACEHOLDER}.",
        build(b"hello\n", short, passphrase=PASSPHRASE, scrypt=params, derivable=derivable),
        "costLimitExceeded", passphrase=PASSPHRASE)

# ---- rule 10: exact length ------------------------------------------------------------------

# Small containers keep the vector folder small: `small` is one 64-byte chunk; `two` is two
# chunks (65536 + 1 bytes), used only where several chunks matter.
small = build(data("small", 64), "small", name=b"small.bin")
hs = header_length(small)
two = build(data("two", C + 1), "two", name=b"two.bin")
head2, chunks2 = chunks_of(two)
h2 = len(head2)
add(190, "truncated-at-chunk-boundary", "Rule 10: a 2-chunk container with its last chunk removed (cut at a "
    "chunk boundary).", head2 + chunks2[0], "lengthMismatch")
add(191, "truncated-inside-chunk", "Rule 10: a 1-chunk container (64 bytes) cut 10 bytes into its chunk.",
    small[:hs + 10], "lengthMismatch")
add(192, "truncated-one-byte", "Rule 10: a container missing the last byte of its last tag.",
    small[:-1], "lengthMismatch")
add(193, "one-byte-appended", "Rule 10: a valid container with one byte appended.", small + b"\x00",
    "lengthMismatch")
add(194, "length-claims-5gib", "Rule 10: header claims 5 GiB of plaintext (valid MAC, recomputed with the "
    "right key) but the file holds one small chunk.", build(b"hello\n", "5gib", length=5 << 30),
    "lengthMismatch")
empty = build(b"", "emptyc", name=b"empty.bin")
add(195, "empty-missing-chunk", "Rule 10: an empty-plaintext container without its one (empty) chunk: the "
    "header alone is 16 bytes short, since n = max(1, ceil(0 / C)) = 1.", empty[:header_length(empty)],
    "lengthMismatch")
extra_chunk = ref.seal_chunks(ref.file_keys(KEY, salt("small"))[1], small[hs - 32:hs], b"more!", E,
                              nonce_for=lambda i, n: ref.nonce(1, True))[0]
add(196, "extended-by-a-chunk", "Rule 10: a valid 1-chunk container followed by a 2nd chunk sealed under the "
    "same header and key (index 1, flag 1): extension at a chunk boundary.", small + extra_chunk,
    "lengthMismatch")
add(197, "header-only", "Rule 10: only the header of a 2-chunk container.", head2, "lengthMismatch")

# ---- rule 11: header MAC --------------------------------------------------------------------

add(200, "flipped-bit-header-salt", "Rule 11: one bit flipped in the header salt (offset 30).", flip(small, 30),
    "authenticationFailure")
name_offset = 57 + len(KEY_ID) + 2
add(201, "flipped-bit-header-name", "Rule 11: one bit flipped in the original name ('s' -> 'r'), still a "
    "valid name.", flip(small, name_offset, 0x01), "authenticationFailure")
add(202, "flipped-bit-header-key-id", "Rule 11: key ID's first byte '5' changed to '4' (still a valid key "
    "ID): the key ID is under the MAC. (A reader may say 'wrong key': the vector code is "
    "authenticationFailure.)", flip(small, 57, 0x01), "authenticationFailure")
add(203, "flipped-bit-mac", "Rule 11: one bit flipped in the last byte of the MAC.",
    flip(small, hs - 1, 0x80), "authenticationFailure")
add(204, "flipped-chunk-exp", "Rule 11: chunk size exponent 16 changed to 17 without recomputing the MAC; "
    "the 15-byte plaintext is one chunk either way, so every structural check passes and only the MAC fails.",
    flip(base, 13, 0x01), "authenticationFailure")
add(205, "wrong-key", "Rule 11: opened with another model key (different key and key ID). A reader may report "
    "'wrong key'; the vector code is authenticationFailure.", small, "authenticationFailure",
    key=OTHER_KEY, key_id=OTHER_KEY_ID)
add(206, "wrong-key-same-id", "Rule 11: opened with another key that carries the container's key ID: a "
    "matching key ID must never be accepted, only the MAC decides.", small, "authenticationFailure",
    key=OTHER_KEY, key_id=KEY_ID)
pw_container = build(b"hello, passphrase\n", "pw", passphrase=PASSPHRASE)
add(207, "wrong-passphrase", "Rule 11: opened with the wrong passphrase.", pw_container, "authenticationFailure",
    passphrase="correct horse battery stapler")
pw_scrypt_salt_offset = header_length(pw_container) - 32 - 16
add(208, "flipped-bit-scrypt-salt", "Rule 11: one bit flipped in the scrypt salt.",
    flip(pw_container, pw_scrypt_salt_offset), "authenticationFailure", passphrase=PASSPHRASE)
add(209, "passphrase-for-model-key", "Rule 11: a model key container opened with a passphrase. A reader may "
    "report the wrong kind of key; the vector code is authenticationFailure.", base, "authenticationFailure",
    passphrase=PASSPHRASE)
add(210, "model-key-for-passphrase", "Rule 11: a passphrase container opened with a model key. A reader may "
    "report the wrong kind of key; the vector code is authenticationFailure.", pw_container,
    "authenticationFailure")
add(211, "passphrase-trailing-newline", "Rule 11: the right passphrase plus a final newline: passphrases are "
    "used as their bytes (only the CLI drops a file's final newline).", pw_container, "authenticationFailure",
    passphrase=PASSPHRASE + "\n")
add(212, "flipped-bit-scrypt-r", "Rule 11: scrypt r changed from 8 to 9 (still within limits): the MAC fails.",
    flip(pw_container, header_length(pw_container) - 32 - 16 - 4 - 1, 0x01), "authenticationFailure",
    passphrase=PASSPHRASE)

# ---- rule 12: chunk tags --------------------------------------------------------------------

add(220, "flipped-bit-first-chunk", "Rule 12: one bit flipped in the first chunk's ciphertext of a 2-chunk "
    "container (the last chunk is intact, so only reading chunk 0 fails).", flip(two, h2 + 5),
    "authenticationFailure")
add(221, "flipped-bit-last-chunk", "Rule 12: one bit flipped in the (only) chunk's ciphertext.",
    flip(small, hs + 7), "authenticationFailure")
add(222, "flipped-bit-tag", "Rule 12: one bit flipped in the chunk's tag.", flip(small, len(small) - 3),
    "authenticationFailure")
full2 = build(data("full2", 2 * C), "full2", name=b"full2.bin")
headf, chunksf = chunks_of(full2)
add(223, "chunks-swapped", "Rule 12: the two full chunks of a 2 x 65536-byte container swapped (each chunk "
    "authenticates only at its own index with its own flag).", headf + chunksf[1] + chunksf[0],
    "authenticationFailure")
small_b = build(data("small", 64), "small-b", name=b"small.bin")
add(224, "header-from-other-container", "Rule 12: the header of another container sealed with the same key "
    "and the same plaintext (its MAC verifies) followed by this container's chunk: the other header's salt "
    "and MAC make the tag fail.", small_b[:hs] + small[hs:], "authenticationFailure")
two_b = build(data("two", C + 1), "two-b", name=b"two.bin")
head2b, chunks2b = chunks_of(two_b)
add(225, "chunk-from-other-container", "Rule 12: chunk 0 replaced by chunk 0 of another container sealed with "
    "the same key and plaintext (the last chunk is intact).", head2 + chunks2b[0] + chunks2[1],
    "authenticationFailure")
add(226, "final-chunk-flag-0", "Rule 12: both chunks of a 2-chunk container sealed with last-chunk flag 0, "
    "including the final one (what a truncation at a chunk boundary with a rewritten length would look "
    "like).", build(data("two", C + 1), "flag0", flag_for=lambda i, n: False), "authenticationFailure")
add(227, "non-final-chunk-flag-1", "Rule 12: chunk 0 of 2 sealed with last-chunk flag 1 (the final chunk is "
    "correct).", build(data("two", C + 1), "flag1", flag_for=lambda i, n: True), "authenticationFailure")
add(228, "empty-chunk-flag-0", "Rule 12: empty plaintext whose single empty chunk was sealed with flag 0.",
    build(b"", "emptyflag0", flag_for=lambda i, n: False), "authenticationFailure")
add(229, "chunk-aad-empty", "Rule 12: chunks sealed with empty associated data instead of the header MAC.",
    build(b"hello\n", "noaad", aad=b""), "authenticationFailure")
add(230, "nonce-little-endian", "Rule 12: chunk counters written little-endian in the nonce (the final chunk, "
    "index 1, no longer matches).", build(data("two", C + 1), "le",
    nonce_for=lambda i, n: i.to_bytes(11, "little") + (b"\x01" if i == n - 1 else b"\x00")),
    "authenticationFailure")
add(231, "flipped-bit-empty-chunk-tag", "Rule 12: empty plaintext with one bit flipped in its only (tag-only) "
    "chunk.", flip(empty, len(empty) - 1), "authenticationFailure")
add(232, "chunk-counter-from-1", "Rule 12: chunks sealed with counters 1 and 2 instead of 0 and 1 (flags "
    "correct).", build(data("two", C + 1), "from1", nonce_for=lambda i, n: ref.nonce(i + 1, i == n - 1)),
    "authenticationFailure")
add(233, "nonce-flag-in-first-byte", "Rule 12: the last-chunk flag put in the first nonce byte instead of the "
    "last.", build(b"hello\n", "flagfirst", nonce_for=lambda i, n: (b"\x01" if i == n - 1 else b"\x00")
    + i.to_bytes(11, "big")), "authenticationFailure")


# ---- rule 13: packed trees ------------------------------------------------------------------

def bad_tree(number: int, short: str, rule: int, why: str, stream: bytes) -> None:
    try:
        ref.unpack_check(stream)
    except ref.RejectError:
        pass
    else:
        raise SystemExit(f"{short}: tree unexpectedly valid")
    container = build(stream, short, kind=ref.KIND_FOLDER, name=b"Bad.mlmodelc")
    add(number, short, f"Rule 13, packed tree rule {rule}: {why}. Sealed properly (valid MAC and tags), so "
        "only the tree rule fails.", container, "malformedTree", payload_kind=2)


bad_tree(300, "tree-wrong-magic", 1, "magic 'COFTREX' 0x01", b_tree([t_file("a")], magic=b"COFTREX\x01"))
bad_tree(301, "tree-magic-version-2", 1, "magic 'COFTREE' 0x02", b_tree([t_file("a")], magic=b"COFTREE\x02"))
bad_tree(302, "tree-too-many-entries", 1, "1 000 001 entries declared (followed by one entry)",
         b_tree([t_file("a")], count=1_000_001))
bad_tree(310, "path-empty", 2, "an entry with an empty path", b_tree([t_file(b"")]))
bad_tree(311, "path-4097-bytes", 2, "a path of 4097 bytes", b_tree([t_file(b"p" * 4097)]))
bad_tree(312, "path-absolute", 2, "an absolute path '/etc/x'", b_tree([t_file("/etc/x")]))
bad_tree(313, "path-invalid-utf8", 2, "a path with byte 0xFF", b_tree([t_file(b"bad\xff")]))
bad_tree(314, "path-empty-component", 2, "path 'a//b' (empty component) after folder 'a'",
         b_tree([t_dir("a"), t_file("a//b")]))
bad_tree(315, "path-trailing-slash", 2, "folder path 'd/' (empty last component)", b_tree([t_dir("d/")]))
bad_tree(316, "path-dot-component", 2, "path 'a/./b' after folder 'a'", b_tree([t_dir("a"), t_file("a/./b")]))
bad_tree(317, "path-dotdot-component", 2, "path 'a/../b' after folder 'a'",
         b_tree([t_dir("a"), t_file("a/../b")]))
bad_tree(318, "path-dotdot", 2, "path '..'", b_tree([t_file("..")]))
bad_tree(319, "path-nul", 2, "path with NUL 'a<NUL>b'", b_tree([t_file(b"a\x00b")]))
bad_tree(320, "order-reversed", 3, "'b' before 'a'", b_tree([t_file("b"), t_file("a")]))
bad_tree(321, "order-repeated", 3, "file 'a' twice", b_tree([t_file("a"), t_file("a")]))
bad_tree(322, "order-bytewise", 3, "folder 'a', file 'a-c', file 'a/b': byte order, but component order puts "
         "'a/b' before 'a-c'", b_tree([t_dir("a"), t_file("a-c"), t_file("a/b")]))
bad_tree(323, "order-repeated-folder-as-file", 3, "folder 'a' then file 'a'", b_tree([t_dir("a"), t_file("a")]))
bad_tree(324, "order-folder-after-contents", 3, "'a/b' before folder 'a'", b_tree([t_file("a/b"), t_dir("a")]))
bad_tree(330, "parent-missing", 4, "'x/y' with no folder 'x'", b_tree([t_file("x/y")]))
bad_tree(331, "parent-is-file", 4, "file 'f' then 'f/g' (would write through a file)",
         b_tree([t_file("f"), t_file("f/g")]))
bad_tree(332, "parent-is-symlink", 4, "folder 'd', link 'l' -> 'd', then file 'l/g' (would write through a "
         "link)", b_tree([t_dir("d"), t_link("l", "d"), t_file("l/g")]))
bad_tree(333, "parent-missing-nested", 4, "folder 'a', then 'a/b/c' with no folder 'a/b'",
         b_tree([t_dir("a"), t_file("a/b/c")]))
NFD_E = "e\u0301"  # 'e' + combining acute: 65 CC 81
NFC_E = "\u00e9"  # precomposed e-acute: C3 A9, canonically equivalent to NFD_E but other bytes
bad_tree(334, "parent-canonically-equivalent", 4, "folder 'e'+U+0301 (NFD, bytes 65 CC 81), then file "
         "U+00E9 '/x' (NFC, C3 A9): the parent's bytes name no folder entry, although the two names are "
         "canonically equivalent Unicode; paths are bytes, never normalized",
         b_tree([t_dir(NFD_E), t_file(NFC_E + "/x")]))
bad_tree(335, "parent-link-canonically-equivalent", 4, "folders NFD 'e'+U+0301 and 'e'+U+0301/l, then link "
         "NFC U+00E9 -> '.', link U+00E9/l -> '..', file U+00E9/l/escaped: the parents of the last two are a "
         "link (U+00E9) and a link (U+00E9/l), not folders. An unpacker that matched parents as Unicode "
         "strings (canonical equivalence) rather than bytes would accept them and, on a filesystem that keeps "
         "both names apart, write 'escaped' into the folder above the root",
         b_tree([t_dir(NFD_E), t_dir(NFD_E + "/l"), t_link(NFC_E, "."), t_link(NFC_E + "/l", ".."),
                 t_file(NFC_E + "/l/escaped", b"written outside the root\n")]))
bad_tree(340, "link-target-empty", 5, "link with an empty target", b_tree([t_link("l", b"")]))
bad_tree(341, "link-target-4097-bytes", 5, "link target of 4097 bytes", b_tree([t_link("l", b"t" * 4097)]))
bad_tree(342, "link-target-absolute", 5, "link target '/etc/passwd'", b_tree([t_link("l", "/etc/passwd")]))
bad_tree(343, "link-target-nul", 5, "link target 'a<NUL>b'", b_tree([t_link("l", b"a\x00b")]))
bad_tree(344, "link-target-dotdot-after-component", 5, "link 'd/l' -> 'x/../y' ('..' after another "
         "component)", b_tree([t_dir("d"), t_dir("d/x"), t_link("d/l", "x/../y")]))
bad_tree(345, "link-escapes-root", 5, "top-level link 'l' -> '../outside'", b_tree([t_link("l", "../outside")]))
bad_tree(346, "link-escapes-root-nested", 5, "link 'd/l' -> '../../x' (leaves the root by one level)",
         b_tree([t_dir("d"), t_link("d/l", "../../x")]))
bad_tree(347, "link-dotdot-at-root", 5, "top-level link 'l' -> '..' (the root's parent)",
         b_tree([t_link("l", "..")]))
bad_tree(348, "link-dotdot-after-dotdot-component", 5, "link 'a/l' -> '../b/..' ('..' after 'b')",
         b_tree([t_dir("a"), t_dir("b"), t_link("a/l", "../b/..")]))
bad_tree(350, "stream-missing-entry", 6, "3 entries declared, 2 present", b_tree([t_file("a"), t_file("b")],
         count=3))
bad_tree(351, "stream-file-short", 6, "file declares 100 bytes, the stream ends after 10",
         ref.TREE_MAGIC + struct.pack(">IH", 1, 0o755) + struct.pack(">BHH", 2, 0o644, 1) + b"a"
         + struct.pack(">Q", 100) + b"0123456789")
bad_tree(352, "stream-trailing-byte", 6, "one byte after the last entry", b_tree([t_file("a")]) + b"\x00")
bad_tree(353, "stream-ends-in-header", 6, "the stream ends inside the entry count", b"COFTREE\x01\x00\x00")
bad_tree(354, "stream-ends-in-link-target", 6, "link target length 10, 3 bytes present",
         ref.TREE_MAGIC + struct.pack(">IH", 1, 0o755) + struct.pack(">BHH", 3, 0o777, 1) + b"l"
         + struct.pack(">H", 10) + b"abc")
bad_tree(355, "stream-fewer-entries-declared", 6, "1 entry declared, 2 present (the second is trailing bytes)",
         b_tree([t_file("a"), t_file("b")], count=1))
bad_tree(356, "stream-file-size-huge", 6, "a file declaring 2^64 - 1 bytes (a reader must not overflow)",
         ref.TREE_MAGIC + struct.pack(">IH", 1, 0o755) + struct.pack(">BHH", 2, 0o644, 1) + b"a"
         + struct.pack(">Q", (1 << 64) - 1) + b"0123456789")
bad_tree(360, "unknown-kind-0", 7, "entry kind 0", b_tree([ref.encode_tree_entry(0, 0o644, b"a", b"")]))
bad_tree(361, "unknown-kind-4", 7, "entry kind 4", b_tree([ref.encode_tree_entry(4, 0o644, b"a", b"")]))


# ---- write ----------------------------------------------------------------------------------

def main() -> None:
    os.makedirs(OUT, exist_ok=True)
    names = [name for name, _ in vectors]
    assert len(set(names)) == len(names), "duplicate vector names"
    assert len({n[:3] for n in names}) == len(names), "duplicate vector numbers"
    for stale in os.listdir(OUT):
        if stale.endswith(".json") and stale[:-5] not in names:
            os.remove(os.path.join(OUT, stale))
    total = 0
    for name, vector in vectors:
        text = json.dumps(vector, indent=2, ensure_ascii=False) + "\n"
        path = os.path.join(OUT, name + ".json")
        with open(path, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
        total += len(text.encode("utf-8"))
    valid = sum(1 for _, v in vectors if v["expect"] == "ok")
    print(f"wrote {len(vectors)} vectors ({valid} valid, {len(vectors) - valid} reject), "
          f"{total / 1024:.0f} KiB, to {os.path.relpath(OUT, ROOT)}")


if __name__ == "__main__":
    main()
