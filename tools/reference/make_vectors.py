#!/usr/bin/env python3
"""Generates the Coffer container test vectors from the reference implementation.

    python3 tools/reference/make_vectors.py

writes Tests/CofferFormatTests/Vectors/container/NNN-short-name.json, one case per file (see
the README.md in that folder), and the version 2 writer vectors in
Tests/CofferFormatTests/Vectors/chunker/ (see the README.md there). Every salt, key and plaintext
is fixed, so running this twice gives byte-identical files.

Numbering of the container vectors: 00x-01x valid version 1 containers, 02x-03x valid version 2
containers; 1xx-2xx the container "MUST reject" list of docs/FORMAT.md (1 -> 10x, 2 -> 11x, ...,
9 -> 18x, 10 -> 19x, 11 -> 20x-21x, 12 -> 22x-23x), 3xx the packed-tree "MUST reject" list (rule
t -> 3(t-1)x); 4xx the "MUST reject (version 2)" list (rule r -> 4(r-1)x, rule 6 -> 45x-46x);
5xx-6xx the version 1 rules that version 2 keeps, applied to version 2 containers (version 1
number + 400: 50x, 53x, 55x-58x, 60x-61x) and 62x packed trees in version 2 containers.

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
CHUNKER_OUT = os.path.join(ROOT, "Tests", "CofferFormatTests", "Vectors", "chunker")
MAX_VECTOR_FILE = 1 << 20  # keep every vector file under 1 MiB

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
        payload_kind: int = 1, format_version: int | None = None, extra_fields: dict | None = None) -> None:
    """Records one vector after checking the reference implementation agrees with it.

    `format_version` 2 marks a container built as version 2 (valid ones are detected); valid
    version 2 vectors also list their chunk table and say whether the cut is the writers' cut.
    """
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
    if expect == "ok" and header["version"] == ref.VERSION_2:
        format_version = ref.VERSION_2
    if format_version == ref.VERSION_2:
        vector["formatVersion"] = ref.VERSION_2
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
        if header["version"] == ref.VERSION_2:
            lengths = [size for _, size in header["table"]]
            vector["chunks"] = [{"id": cid.hex(), "length": size} for cid, size in header["table"]]
            gear = ref.gear_table(ref._input_key_material(header, key, pw))  # the container's IKM
            vector["writersCut"] = lengths == ref.cut_plaintext(plaintext, payload_kind, gear=gear)
    vector.update(extra_fields or {})
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

# Version 2 is valid since docs/FORMAT.md gained "Version 2: content-defined chunks" (its vectors
# are 02x-03x and 4xx-6xx); 110 and 112 used to be version 2 and now test version 3.
add(110, "version-3", "Rule 2: version 3, otherwise a valid version 1 container (MAC recomputed over the "
    "edited header with the right key).", build(b"hello\n", "v3", version=3), "unsupportedVersion")
add(111, "version-0", "Rule 2: version 0 (MAC recomputed with the right key).", build(b"hello\n", "v0", version=0),
    "unsupportedVersion")
add(112, "version-3-other-layout", "Rule 2: version 3 followed by bytes that are neither a version 1 nor a "
    "version 2 header (length field 0xFFFF, garbage): a later version is refused by its version, before "
    "anything else is read.", ref.MAGIC + b"\x00\x03\xff\xff" + data("112", 200), "unsupportedVersion")
add(113, "version-65535", "Rule 2: version 0xFFFF, otherwise a valid version 1 container (MAC recomputed).",
    build(b"hello\n", "vffff", version=0xFFFF), "unsupportedVersion")

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

add(130, "unknown-suite", "Rule 4: suite 2 in a version 1 header (suite 2 belongs to version 2; a version 1 "
    "header must have suite 1); MAC recomputed with the right key, chunks valid.",
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
bad_tree(349, "link-target-invalid-utf8", 5, "link 'l' -> 'a' C0 AF 'b' (C0 AF, an overlong encoding of '/', "
         "is not valid UTF-8; every other rule holds)", b_tree([t_link("l", b"a\xc0\xafb")]))
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
bad_tree(370, "mode-root-type-bits", 8, "root mode 0o40755 (a directory's whole st_mode, type bits included, "
         "not masked to 0o777)", b_tree([t_file("a")], root_mode=0o40755))
bad_tree(371, "mode-file-setuid", 8, "file 'a' with mode 0o4755 (setuid)", b_tree([t_file("a", mode=0o4755)]))
bad_tree(372, "mode-folder-sticky", 8, "folder 'd' with mode 0o1777 (sticky)", b_tree([t_dir("d", mode=0o1777)]))
bad_tree(373, "mode-link-755", 8, "link 'l' -> 'a' with mode 0o755 (a link stores exactly 0o777)",
         b_tree([t_file("a"), ref.encode_tree_entry(ref.TREE_LINK, 0o755, b"l", ref.link_body(b"a"))]))


# =============================================================================================
# Version 2 (docs/FORMAT.md, "Version 2: content-defined chunks")
#
# Numbering: 02x-03x valid version 2 containers; 4xx the "MUST reject (version 2)" list (rule r
# -> 4(r-1)x, rule 6 -> 45x-46x); 5xx-6xx the version 1 rules that version 2 keeps, numbered as
# in version 1 plus 400 (rule 1 -> 50x, 4 -> 53x, 6 -> 55x, 7 -> 56x, 8 -> 57x, 9 -> 58x,
# 11 -> 60x-61x); 62x rule 13 (packed trees) in version 2 containers.
# =============================================================================================

V2_ID_KEY, V2_SEAL_KEY = ref.v2_chunk_keys(KEY)
KEY_GEAR = ref.gear_table(KEY)  # the writers' cut of every model key vector depends on KEY


class V2:
    """A version 2 container in parts, so vectors can splice them."""

    def __init__(self, fields: bytes, table: bytes, mac: bytes, chunks: list[bytes], entries: list, gear: tuple):
        self.fields, self.table, self.mac, self.chunks, self.entries = fields, table, mac, chunks, entries
        self.gear = gear  # the gear table of the key material (the writers' cut depends on it)

    @property
    def header(self) -> bytes:
        return self.fields + self.table + self.mac

    @property
    def bytes(self) -> bytes:
        return self.header + b"".join(self.chunks)


def build2(
    plaintext: bytes,
    tag: str,
    *,
    key: bytes | None = KEY,
    passphrase: str | bytes | None = None,
    scrypt: tuple[int, int, int] = TEST_SCRYPT,
    derivable: bool = True,
    key_id: bytes | None = None,
    name: bytes = b"model.bin",
    kind: int = ref.KIND_FILE,
    kdf: int | None = None,
    lengths: list[int] | None = None,
    version: int = ref.VERSION_2,
    suite: int = ref.SUITE_V2,
    reserved: int = 0,
    fields_length: int | None = None,
    extra: bytes = b"",
    length: int | None = None,
    count: int | None = None,
    table_edit=None,
    seal_key: bytes | None = None,
    nonce_for=None,
    aad_for=None,
    header_key_for=None,
    mac_covers_table: bool = True,
) -> V2:
    """A version 2 container whose fields, table and sealing can be set to anything.

    By default the writers' cut (ref.cut_plaintext with the key material's gear table), IDs under
    the ID key, chunks under the seal key, and a MAC over fields || table under the header key, all
    from the real key material, so that only the rule under test fails. `table_edit(entries) ->
    entries` rewrites the table (after sealing, before the MAC); `count` and `length` override n
    and L in the fields; `nonce_for(id, i)`, `aad_for(id, i, mac)`, `seal_key` and
    `header_key_for(ikm, salt)` replace parts of the construction, and mac_covers_table=False MACs
    the fields alone. With derivable=False the key material is a placeholder (a reader must refuse
    before deriving).
    """
    if isinstance(passphrase, str):
        passphrase = passphrase.encode("utf-8")
    uses_passphrase = passphrase is not None
    if kdf is None:
        kdf = ref.KDF_PASSPHRASE if uses_passphrase else ref.KDF_MODEL_KEY
    if key_id is None:
        key_id = b"" if uses_passphrase else KEY_ID.encode()
    s_salt = scrypt_salt(tag) if uses_passphrase else None
    scrypt_fields = ref.encode_scrypt_fields(*scrypt, s_salt) if uses_passphrase else None
    if uses_passphrase:
        ikm = ref.scrypt_ikm(passphrase, s_salt, *scrypt) if derivable else hashlib.sha256(b"placeholder").digest()
    else:
        ikm = key
    id_key, real_seal_key = ref.v2_chunk_keys(ikm)
    gear = ref.gear_table(ikm)
    if lengths is None:
        lengths = ref.cut_plaintext(plaintext, kind, gear=gear)
    pieces, pos = [], 0
    for size in lengths:
        pieces.append(plaintext[pos:pos + size])
        pos += size
    entries = [(ref.chunk_id(id_key, piece), len(piece)) for piece in pieces]
    table_entries = table_edit(list(entries)) if table_edit else entries
    fields = ref.encode_fields_v2(
        kind=kind, kdf=kdf, length=len(plaintext) if length is None else length, salt=salt(tag),
        count=len(table_entries) if count is None else count, key_id=key_id, name=name,
        scrypt_fields=scrypt_fields, version=version, suite=suite, reserved=reserved,
        fields_length=fields_length, extra=extra)
    table = ref.encode_table(table_entries)
    header_key = header_key_for(ikm, salt(tag)) if header_key_for else ref.v2_header_key(ikm, salt(tag))
    mac = ref.header_mac(header_key, fields + table if mac_covers_table else fields)
    gcm = ref.AESGCM(real_seal_key if seal_key is None else seal_key)
    chunks = [ref.seal_chunk_v2(gcm, cid, piece,
                                nonce_bytes=nonce_for(cid, i) if nonce_for else None,
                                aad=aad_for(cid, i, mac) if aad_for else None)
              for i, ((cid, _), piece) in enumerate(zip(entries, pieces))]
    return V2(fields, table, mac, chunks, entries, gear)


def add2(number: int, short: str, description: str, container: bytes, expect: str, **kw) -> None:
    add(number, short, description, container, expect, format_version=ref.VERSION_2, **kw)


def ok2(number, short, description, plaintext, *, name="model.bin", passphrase=None, key_id=KEY_ID, kind=1,
        lengths=None, writers_cut=True, extra_fields=None) -> V2:
    v = build2(plaintext, short, passphrase=passphrase, name=name.encode("utf-8"),
               key_id=None if passphrase else key_id.encode(), kind=kind, lengths=lengths)
    assert (lengths is None or lengths == ref.cut_plaintext(plaintext, kind, gear=v.gear)) == writers_cut, short
    add2(number, short, description, v.bytes, "ok", key_id=key_id, passphrase=passphrase, payload_kind=kind,
         extra_fields=extra_fields)
    return v


# ---- content-defined boundaries on demand -----------------------------------------------------
#
# After 64 bytes the gear hash depends only on the last 64 bytes (older bytes are shifted out of
# the 64 bits), so a 64-byte window whose hash has its 20 (or 16) high bits zero cuts a chunk
# wherever the chunker has hashed all of it. Vectors use such windows to put content-defined
# boundaries where they want them with little data. The gear table is keyed, so the windows are
# found under KEY's table: they cut where they are meant to only in containers sealed under KEY
# (every model key vector; passphrase vectors are too small to be cut).

def sha256_stream(seed: str, n: int) -> bytes:
    """SHA-256(seed || 0 as 8 bytes big-endian) || SHA-256(seed || 1) || ..., cut to n bytes."""
    out, counter = bytearray(), 0
    while len(out) < n:
        out += hashlib.sha256(seed.encode("utf-8") + counter.to_bytes(8, "big")).digest()
        counter += 1
    return bytes(out[:n])


def gear_hashes(raw: bytes) -> list[int]:
    """The gear hash under KEY_GEAR after each byte of `raw`, starting from h = 0."""
    out, h = [], 0
    for b in raw:
        h = ((h << 1) + KEY_GEAR[b]) & ((1 << 64) - 1)
        out.append(h)
    return out


def window_hash(window: bytes) -> int:
    return gear_hashes(window)[-1]


def find_window(seed: str, low: int, high: int, accept=lambda window: True) -> bytes:
    """The first 64-byte window of sha256_stream(seed) whose gear hash h (under KEY_GEAR) has
    low <= h < high, and that `accept` takes."""
    stream = sha256_stream(seed, 8 << 20)
    gear, mask, h = KEY_GEAR, (1 << 64) - 1, 0
    for i, b in enumerate(stream):
        h = ((h << 1) + gear[b]) & mask
        if i >= 63 and low <= h < high and accept(stream[i - 63:i + 1]):
            return stream[i - 63:i + 1]
    raise SystemExit(f"no window for {seed}")


def w20_shape(window: bytes) -> bool:
    """Hashed from h = 0 the window meets the 20-bit rule at its last byte only, and gear[its first
    byte] is odd. Then its last 63 bytes hashed from h = 0 give window_hash + 2^63 (mod 2^64): the
    first byte's gear value, shifted left 63 times, keeps only its low bit, at the top. So a chunker
    that starts hashing one byte off, early or late, sees the top bit set where the window ends (or
    the whole window where it should see 63 bytes) and cuts elsewhere (chunker vectors 005, 006)."""
    return KEY_GEAR[window[0]] & 1 == 1 and all(h >= 1 << 44 for h in gear_hashes(window)[:-1])


W20 = find_window("coffer test vectors: 20-bit window", 0, 1 << 44, w20_shape)  # cuts anywhere in [MIN, MAX)
W16 = find_window("coffer test vectors: 16-bit window", 1 << 44, 1 << 48)  # cuts only from AVG on
assert window_hash(W20) >> 44 == 0 and window_hash(W16) >> 48 == 0 and window_hash(W16) >> 44 != 0
assert gear_hashes(W20[1:])[-1] == (window_hash(W20) + (1 << 63)) % (1 << 64)


def block(tag: str, size: int = ref.CDC_MIN) -> bytes:
    """`size` pseudo-random bytes then W20: one chunk of size + 64 bytes when a chunk starts at
    its first byte and size is MIN (the chunker hashes from MIN on and meets W20 exactly)."""
    return data(tag, size) + W20


# ---- valid version 2 containers (02x-03x) -----------------------------------------------------

ok2(20, "v2-empty", "Version 2, empty plaintext: n = 1, one table entry of length 0 whose ID is "
    "HMAC-SHA-256(ID key, empty), and one tag-only chunk.", b"", name="empty.bin")
ok2(21, "v2-one-byte", "Version 2, a 1-byte plaintext: one chunk.", b"\x42", name="one.bin")
ok2(22, "v2-min-plus-one", "Version 2, 65537 bytes (MIN + 1): the writers' chunker hashes one byte, and the "
    "segment ends there, so one chunk of 65537 bytes.", data("022", ref.CDC_MIN + 1))
V2_CDC_LENGTH = 640_000
# The tag is the first of '023', '023-1', '023-2', ... whose cut under KEY's gear table has boundaries
# both before AVG (20-bit rule) and after it (16-bit rule) (asserted).
V2_CDC_TAG = "023-7"
v2_cdc = ok2(23, "v2-content-defined", f"Version 2, {V2_CDC_LENGTH} pseudo-random bytes (SHAKE-256, tag "
             f"'{V2_CDC_TAG}') cut by the writers' gear chunker (the key's gear table) into several "
             "content-defined chunks, with boundaries both before AVG and after it; 'chunks' lists them. (The "
             "3 MiB and other writer cases whose containers would be too large for this folder are in "
             "../chunker/.)", data(V2_CDC_TAG, V2_CDC_LENGTH))
v2_cdc_hashed = [size for _, size in v2_cdc.entries[:-1]]  # every chunk but the last ends at a boundary
assert len(v2_cdc.entries) >= 3 and all(ref.CDC_MIN < size < ref.CDC_MAX for size in v2_cdc_hashed) and \
    min(v2_cdc_hashed) < ref.CDC_AVG < max(v2_cdc_hashed), [size for _, size in v2_cdc.entries]
ok2(24, "v2-passphrase", "Version 2 passphrase container, scrypt logN 10, r 8, p 1 (key ID length 0, 25 bytes "
    "of scrypt parameters in the fields). The ID and seal keys derive from the scrypt output with an empty "
    "salt.", b"Sealed with a passphrase, version 2. " * 4, passphrase=PASSPHRASE, name="notes.txt")
v2_tree = ok2(25, "v2-packed-folder", "Version 2 packed folder: the tree of 008 (root mode 750). The writers' "
              "cut puts a boundary before each entry and makes the 14-byte stream prefix a chunk of its own. "
              "Every entry here is one chunk: the 70000-byte file's segment (70028 bytes with its entry header) "
              "is over MIN, but the gear hash finds no boundary in its last 4492 bytes.",
              ref.pack_tree(tree_entries, tree_root_mode), name="Model.mlmodelc", kind=2)
assert len(v2_tree.entries) == 1 + len(tree_entries) and v2_tree.entries[0][1] == 14
ok2(26, "v2-packed-empty-folder", "Version 2 packed folder with no entries (root mode 700): the 14-byte stream "
    "is one chunk.", ref.pack_tree([], 0o700), name="Empty.mlpackage", kind=2)

# 027/028: two containers under one key whose plaintexts share a region. 028 is 027 with 500 bytes
# inserted at offset 30000: its first chunk changes length and content, and the next chunks are found
# again at the same content (W20 ends them), so both containers hold them with the same IDs and the
# same sealed bytes, at other offsets.
shared_p1 = block("shared-p1")
shared_rest = block("shared-s") + data("shared-t", 1000)
shared_a = shared_p1 + shared_rest
shared_b = shared_p1[:30000] + data("shared-insert", 500) + shared_p1[30000:] + shared_rest
cut_a, cut_b = ref.cut_plaintext(shared_a, gear=KEY_GEAR), ref.cut_plaintext(shared_b, gear=KEY_GEAR)
assert cut_a == [ref.CDC_MIN + 64, ref.CDC_MIN + 64, 1000] and cut_b == [ref.CDC_MIN + 564, ref.CDC_MIN + 64, 1000], \
    (cut_a, cut_b)
va = build2(shared_a, "027-v2-shared-a", name=b"shared.bin")
vb = build2(shared_b, "028-v2-shared-b", name=b"shared.bin")
assert va.entries[1:] == vb.entries[1:] and va.chunks[1:] == vb.chunks[1:] and va.entries[0] != vb.entries[0]
shared_ids = [cid.hex() for cid, _ in va.entries[1:]]
SHARED_WHY = ("sealed under the same model key (different salts) from plaintexts that share a region: chunks with "
              "equal IDs have equal sealed bytes (ciphertext and tag) in both containers, at different offsets "
              "(docs/FORMAT.md, 'Keys' of version 2: the ID and seal keys do not depend on the salt)")
ok2(27, "v2-shared-a", "Version 2, one of a pair with 028: " + SHARED_WHY + ". Plaintext: 65536 pseudo-random "
    "bytes, a 64-byte window whose gear hash (under the key's gear table) has 20 high bits zero (so the writers' "
    "chunker cuts right after it), 65536 more bytes and the window again, then 1000 bytes: chunks of 65600, 65600 "
    "and 1000 bytes.",
    shared_a, name="shared.bin",
    extra_fields={"sharesChunksWith": {"vector": "028-v2-shared-b", "chunkIDs": shared_ids}})
ok2(28, "v2-shared-b", "Version 2, one of a pair with 027: " + SHARED_WHY + ". Plaintext: 027's with 500 bytes "
    "inserted at offset 30000; the first chunk grows to 66100 bytes, the next two (the last 66600 bytes) are "
    "027's chunks 1 and 2, found again by content.", shared_b, name="shared.bin",
    extra_fields={"sharesChunksWith": {"vector": "027-v2-shared-a", "chunkIDs": shared_ids}})

ok2(29, "v2-one-byte-chunks", "Version 2, 'hello\\n' cut into six 1-byte chunks: n = L (the largest count "
    "allowed). Not the writers' cut: readers accept any cut that keeps the length rules.", b"hello\n",
    lengths=[1] * 6, writers_cut=False)
ok2(30, "v2-repeated-chunks", "Version 2, three equal 16-byte pieces cut as three chunks: the table holds the "
    "same ID three times and the three sealed chunks are identical (same key, nonce and plaintext). Not the "
    "writers' cut.", data("030", 16) * 3, lengths=[16, 16, 16], writers_cut=False)
v_small_fields = build2(b"hello\n", "031-v2-smallest-fields", key_id=b"a", name=b"")
assert len(v_small_fields.fields) == ref.MIN_FIELDS_LENGTH
add2(31, "v2-smallest-fields", "Version 2 with the smallest fields: a 1-byte key ID 'a' and an empty name give "
     "F = 64, the minimum.", v_small_fields.bytes, "ok", key_id="a")
ok2(32, "v2-largest-fields", "Version 2 with a 64-byte key ID and a 1024-byte name (F = 1151, the largest a "
    "model key container can have).", b"largest fields\n", name="\u00e9" * 512, key_id="Az09._-" * 9 + "z")
folder_w = ref.pack_tree([
    {"path": "big.bin", "kind": "file", "mode": 0o644,
     "content": data("033-big", ref.CDC_MIN - (5 + 7 + 8)) + W20 + data("033-big-tail", 5000)},
    {"path": "small.txt", "kind": "file", "mode": 0o644, "content": b"small\n"},
], 0o755)
cut_w = ref.cut_plaintext(folder_w, 2, gear=KEY_GEAR)
assert cut_w == [14, ref.CDC_MIN + 64, 5000, 5 + 9 + 8 + 6], cut_w
ok2(33, "v2-packed-folder-cut-in-file", "Version 2 packed folder with a file 'big.bin' whose entry (kind, mode, "
    "path length, path, size: 20 bytes) plus the first 65516 content bytes make exactly MIN bytes, followed by a "
    "64-byte window with 20 high gear-hash bits zero (under the key's gear table): the writers' cut counts from "
    "the entry's kind byte, so the file's segment is cut after 65600 bytes, then its last 5000 bytes; 'small.txt' "
    "is a chunk of its own. Chunks: 14, 65600, 5000, 28.", folder_w, name="Cut.mlmodelc", kind=2)

# ---- v2 rule 1: F (40x) -----------------------------------------------------------------------

hello = b"hello\n"
add2(400, "v2-fields-length-63", "Version 2 rule 1: F = 63, under 64; the fields are a valid 64-byte set (key ID "
     "'a', empty name) with only F changed (MAC recomputed, chunks valid).",
     build2(hello, "f63", key_id=b"a", name=b"", fields_length=63).bytes, "malformedHeader")
add2(401, "v2-fields-length-4097", "Version 2 rule 1: F = 4097 (over 4096), file long enough to hold it.",
     build2(hello, "f4097", fields_length=4097).bytes + bytes(4200), "malformedHeader")
add2(402, "v2-fields-length-0", "Version 2 rule 1: F = 0 (MAC recomputed).",
     build2(hello, "f0", fields_length=0).bytes, "malformedHeader")
add2(403, "v2-fields-length-65535", "Version 2 rule 1: F = 65535 (MAC recomputed).",
     build2(hello, "fffff", fields_length=0xFFFF).bytes, "malformedHeader")
add2(404, "v2-fields-longer-than-fields", "Version 2 rule 1: one extra byte after the last field, F counting it; "
     "MAC recomputed over fields || table and the container length matches.",
     build2(hello, "fplus", extra=b"\x00").bytes, "malformedHeader")
v_f = build2(hello, "fminus")
add2(405, "v2-fields-shorter-than-fields", "Version 2 rule 1: F one less than the fields need (MAC recomputed).",
     build2(hello, "fminus", fields_length=len(v_f.fields) - 1).bytes, "malformedHeader")
v_fpw = build2(hello, "fpw", passphrase=PASSPHRASE)
add2(406, "v2-fields-length-omits-scrypt", "Version 2 rule 1: a passphrase container whose F omits the 25 bytes "
     "of scrypt parameters; MAC recomputed.",
     build2(hello, "fpw", passphrase=PASSPHRASE, fields_length=len(v_fpw.fields) - 25).bytes, "malformedHeader",
     passphrase=PASSPHRASE)
v_trunc = build2(data("trunc", 40), "trunc", lengths=[20, 20])
add2(407, "v2-file-ends-inside-fields", "Version 2 rule 1: the first 40 bytes of a valid container (the file "
     "ends before F bytes): malformed, as a version 1 file that ends inside its header.", v_trunc.bytes[:40],
     "malformedHeader")
add2(408, "v2-file-ends-inside-prefix", "Version 2: magic, version 2 and one byte of F (11 bytes).",
     v_trunc.bytes[:11], "malformedHeader")

# ---- v2 rule 2: suite and reserved byte (41x) ------------------------------------------------

for number, short, kw, why in [
    (410, "v2-suite-1", {"suite": 1}, "suite 1 (version 1's suite)"),
    (411, "v2-suite-3", {"suite": 3}, "suite 3"),
    (412, "v2-suite-0", {"suite": 0}, "suite 0"),
    (413, "v2-reserved-1", {"reserved": 1}, "reserved byte 1"),
    (414, "v2-reserved-128", {"reserved": 0x80}, "reserved byte 0x80"),
    (415, "v2-reserved-16", {"reserved": 16}, "reserved byte 16 (a version 1 chunk size exponent in its place)"),
]:
    add2(number, short, f"Version 2 rule 2: {why}; MAC recomputed with the right key, chunks valid.",
         build2(hello, short, **kw).bytes, "malformedHeader")
v1_as_v2 = bytearray(build(hello, "v1as2"))
v1_as_v2[9] = 2
add2(416, "v1-relabelled-v2", "Version 2 rule 2: a valid version 1 container with its version changed to 2: read "
     "with the version 2 layout its suite byte is 1 (and its salt, count and key ID are misplaced).",
     bytes(v1_as_v2), "malformedHeader")
v2_as_v1 = bytearray(build2(hello, "v2as1").bytes)
v2_as_v1[9] = 1
add(417, "v2-relabelled-v1", "A valid version 2 container with its version changed to 1: read with the version 1 "
    "layout, its 'header length' is F (too short for H) and its suite byte is 2.", bytes(v2_as_v1),
    "malformedHeader")

# ---- v2 rule 3: chunk count (42x) ------------------------------------------------------------

add2(420, "v2-count-0-empty", "Version 2 rule 3: L = 0 and n = 0: no table and no chunk; the file is exactly "
     "H + L + 16n = F + 32 bytes and the MAC is valid.", build2(b"", "n0e", lengths=[]).bytes, "malformedHeader")
add2(421, "v2-count-0", "Version 2 rule 3: L = 6 and n = 0, followed by 6 bytes so that the file is exactly "
     "H + L + 16n long; MAC valid.", build2(hello, "n0", lengths=[], length=6).bytes + hello, "malformedHeader")
add2(422, "v2-count-2-empty", "Version 2 rule 3: L = 0 and n = 2, two empty chunks (lengths 0, 0) each sealed "
     "properly; MAC valid, length exact.", build2(b"", "n2e", lengths=[0, 0]).bytes, "malformedHeader")
add2(423, "v2-count-over-length", "Version 2 rule 3: L = 2 and n = 3 (lengths 1, 1, 0), sealed properly; MAC "
     "valid, length exact.", build2(b"hi", "n3l2", lengths=[1, 1, 0]).bytes, "malformedHeader")
add2(424, "v2-count-max", "Version 2 rule 3: L = 6 and n = 2^32 - 1 (a reader must refuse it from the fields, "
     "before computing or allocating a table).", build2(hello, "nmax", count=0xFFFFFFFF).bytes, "malformedHeader")

# ---- v2 rule 4: exact length (43x) -----------------------------------------------------------

v_three = build2(data("three", 48), "three", lengths=[16, 16, 16], name=b"three.bin")
A, B, Cc = v_three.chunks
add2(430, "v2-truncated-at-chunk-boundary", "Version 2 rule 4: a 3-chunk container with its last chunk removed.",
     v_three.header + A + B, "lengthMismatch")
add2(431, "v2-truncated-inside-chunk", "Version 2 rule 4: a 3-chunk container cut 10 bytes into its last chunk.",
     v_three.header + A + B + Cc[:10], "lengthMismatch")
add2(432, "v2-truncated-one-byte", "Version 2 rule 4: a container missing the last byte of its last tag.",
     v_three.bytes[:-1], "lengthMismatch")
add2(433, "v2-one-byte-appended", "Version 2 rule 4: a valid container with one byte appended.",
     v_three.bytes + b"\x00", "lengthMismatch")
extra_piece = b"more!"
extra_id = ref.chunk_id(V2_ID_KEY, extra_piece)
add2(434, "v2-extended-by-a-chunk", "Version 2 rule 4: a valid container followed by one more chunk sealed "
     "correctly under the same key (its own ID as nonce and aad); the table does not list it.",
     v_three.bytes + ref.seal_chunk_v2(ref.AESGCM(V2_SEAL_KEY), extra_id, extra_piece), "lengthMismatch")
add2(435, "v2-header-only", "Version 2 rule 4: fields, table and MAC of a 3-chunk container, no chunks.",
     v_three.header, "lengthMismatch")
add2(436, "v2-file-ends-inside-table", "Version 2 rule 4: a 3-chunk container cut 10 bytes into its second "
     "table entry: the table claims more than the file holds.", v_three.bytes[:len(v_three.fields) + 46],
     "lengthMismatch")
add2(437, "v2-table-claims-1000-chunks", "Version 2 rule 4: n = 1000 and L = 1000 (valid fields, MAC recomputed) "
     "but the file holds a 1-entry table and one 6-byte chunk: refused by the exact length before the table "
     "is read.", build2(hello, "n1000", count=1000, length=1000).bytes, "lengthMismatch")
add2(438, "v2-table-claims-4g-chunks", "Version 2 rule 4: n = 2^32 - 1 and L = 2^48 (valid fields, MAC "
     "recomputed): H + L + 16n is about 2^48 + 2^37.6 bytes; the file is small. A reader must not overflow or "
     "allocate a 150 GB table.", build2(hello, "n4g", count=0xFFFFFFFF, length=1 << 48).bytes, "lengthMismatch")
v_empty2 = build2(b"", "emptyc2", name=b"empty.bin")
add2(439, "v2-empty-missing-chunk", "Version 2 rule 4: an empty-plaintext container without its tag-only chunk.",
     v_empty2.header, "lengthMismatch")

# ---- v2 rule 5: chunk lengths (44x) ----------------------------------------------------------


def set_lengths(*sizes):
    return lambda entries: [(cid, size) for (cid, _), size in zip(entries, sizes)]


add2(440, "v2-chunk-length-0", "Version 2 rule 5: L = 6, lengths 6 and 0 (the empty chunk sealed properly, "
     "n = 2 <= L, sum right, MAC valid): only the non-empty plaintext's empty chunk is wrong.",
     build2(hello, "len0", lengths=[6, 0]).bytes, "malformedHeader")
add2(441, "v2-chunk-length-0-first", "Version 2 rule 5: L = 6, lengths 0 and 6 (sealed properly, MAC valid).",
     build2(hello, "len0first", lengths=[0, 6]).bytes, "malformedHeader")
over = ref.MAX_CHUNK_LENGTH + 1
add2(442, "v2-chunk-lengths-over-4mib-wrap", "Version 2 rule 5: L = 6, n = 2, lengths 4194305 and "
     f"{(1 << 32) - over + 6}: both over 4 MiB, and their sum is 2^32 + 6, which is L in 32-bit arithmetic. The "
     "file is exactly H + 6 + 32 bytes (two 3-byte chunks) and the MAC is valid.",
     build2(hello, "lenwrap", lengths=[3, 3], table_edit=set_lengths(over, (1 << 32) - over + 6)).bytes,
     "malformedHeader")
add2(443, "v2-chunk-length-4mib-plus-1", "Version 2 rule 5: one chunk whose table length is 4194305 (over 4 MiB, "
     "and not L = 6); MAC valid, file length exact.",
     build2(hello, "len4m1", table_edit=set_lengths(over)).bytes, "malformedHeader")
add2(444, "v2-chunk-length-max-u32", "Version 2 rule 5: one chunk whose table length is 2^32 - 1; MAC valid.",
     build2(hello, "lenmax", table_edit=set_lengths(0xFFFFFFFF)).bytes, "malformedHeader")
add2(445, "v2-lengths-sum-under", "Version 2 rule 5: L = 6, lengths 3 and 2 (sum 5); MAC valid, file length "
     "exact (H + L + 16n).", build2(hello, "sumless", lengths=[3, 3], table_edit=set_lengths(3, 2)).bytes,
     "malformedHeader")
add2(446, "v2-lengths-sum-over", "Version 2 rule 5: L = 6, lengths 3 and 4 (sum 7); MAC valid, file length "
     "exact.", build2(hello, "summore", lengths=[3, 3], table_edit=set_lengths(3, 4)).bytes, "malformedHeader")
add2(447, "v2-empty-chunk-length-1", "Version 2 rule 5: L = 0, n = 1, the chunk's length 1 (sum 1, not 0); MAC "
     "valid, file length exact.", build2(b"", "emptylen1", table_edit=set_lengths(1)).bytes, "malformedHeader")
wrap_plain = data("448", 1025)
add2(448, "v2-lengths-sum-wraps-32-bits", "Version 2 rule 5: L = 1025, n = 1025 (= L): 1024 lengths of 4194304 "
     "(4 MiB, each allowed) and one of 1025. The sum is 2^32 + 1025, which is L in 32-bit arithmetic; the file "
     "is exactly H + L + 16n bytes (1025 one-byte chunks) and the MAC is valid.",
     build2(wrap_plain, "sumwrap", lengths=[1] * 1025,
            table_edit=set_lengths(*([ref.MAX_CHUNK_LENGTH] * 1024 + [1025]))).bytes, "malformedHeader")
add2(449, "v2-lengths-sum-under-wrong-key", "Version 2 order: 445's table rule is broken and the key is wrong; "
     "the table is checked (step 3) before the MAC (step 4).",
     build2(hello, "sumless", lengths=[3, 3], table_edit=set_lengths(3, 2)).bytes, "malformedHeader",
     key=OTHER_KEY, key_id=OTHER_KEY_ID)

# ---- v2 rule 6: chunk tags (45x-46x) ---------------------------------------------------------
# v_three: 48 pseudo-random bytes cut as three 16-byte chunks A, B, C (32 sealed bytes each).

h3 = len(v_three.header)
add2(450, "v2-flipped-bit-first-chunk", "Version 2 rule 6: one bit flipped in chunk 0's ciphertext.",
     flip(v_three.bytes, h3 + 5), "authenticationFailure")
add2(451, "v2-flipped-bit-last-chunk", "Version 2 rule 6: one bit flipped in the last chunk's ciphertext (the "
     "other chunks are intact: only reading chunk 2 fails).", flip(v_three.bytes, h3 + 64 + 3),
     "authenticationFailure")
add2(452, "v2-flipped-bit-tag", "Version 2 rule 6: one bit flipped in chunk 1's tag.",
     flip(v_three.bytes, h3 + 32 + 20), "authenticationFailure")
add2(453, "v2-chunks-swapped", "Version 2 rule 6: chunks 0 and 1 (same length) swapped, table unchanged: each "
     "meets another chunk's ID as nonce and aad.", v_three.header + B + A + Cc, "authenticationFailure")
add2(454, "v2-table-rows-swapped", "Version 2 rule 6: table rows 0 and 1 swapped and the MAC recomputed over the "
     "new table; the chunks stay in their places, so chunk 0 is opened with chunk 1's ID.",
     build2(data("three", 48), "three", lengths=[16, 16, 16], name=b"three.bin",
            table_edit=lambda e: [e[1], e[0], e[2]]).header + A + B + Cc, "authenticationFailure")
add2(455, "v2-chunk-moved", "Version 2 rule 6: chunk 0 moved to the end (B, C, A), table unchanged.",
     v_three.header + B + Cc + A, "authenticationFailure")
add2(456, "v2-chunk-dropped", "Version 2 rule 6: chunk 1 dropped, chunk 2 moved up into its place and 32 zero "
     "bytes appended (so the length is exact), table unchanged.", v_three.header + A + Cc + bytes(32),
     "authenticationFailure")
add2(457, "v2-chunk-repeated", "Version 2 rule 6: chunk 0 repeated in place of chunk 1 (A, A, C).",
     v_three.header + A + A + Cc, "authenticationFailure")
v_three_other = build2(data("three", 48), "three-other", key=OTHER_KEY, key_id=OTHER_KEY_ID.encode(),
                       lengths=[16, 16, 16], name=b"three.bin")
add2(458, "v2-chunk-from-other-key", "Version 2 rule 6: chunk 1 replaced by chunk 1 of a container sealed from "
     "the same plaintext with the same cut under another model key (other ID, other seal key).",
     v_three.header + A + v_three_other.chunks[1] + Cc, "authenticationFailure")
add2(459, "v2-chunks-from-other-key", "Version 2 rule 6: this container's header followed by all the chunks of "
     "the same plaintext sealed under another model key.",
     v_three.header + b"".join(v_three_other.chunks), "authenticationFailure")
for number, short, kw, why in [
    (460, "v2-nonce-last-12-bytes", {"nonce_for": lambda cid, i: cid[20:]}, "nonce = ID[20..31] instead of "
     "ID[0..11]"),
    (461, "v2-aad-empty", {"aad_for": lambda cid, i, mac: b""}, "empty associated data instead of the ID"),
    (462, "v2-aad-header-mac", {"aad_for": lambda cid, i, mac: mac}, "the header MAC as associated data (as in "
     "version 1) instead of the ID"),
    (463, "v2-nonce-v1-counter", {"nonce_for": lambda cid, i: ref.nonce(i, i == 2)}, "version 1's counter "
     "nonces (index, last-chunk flag) instead of ID[0..11]"),
    (464, "v2-seal-key-header-salt", {"seal_key": ref.hkdf(KEY, salt("v2-seal-key-header-salt"),
                                                           ref.V2_CHUNK_SEAL_INFO)},
     "a seal key derived with the header's salt instead of an empty salt"),
    (465, "v2-seal-key-v1-payload", {"seal_key": ref.file_keys(KEY, salt("v2-seal-key-v1-payload"))[1]},
     "version 1's payload key (info 'coffer v1 payload', header salt) instead of the seal key"),
    (466, "v2-seal-key-is-id-key", {"seal_key": V2_ID_KEY}, "the ID key instead of the seal key"),
    (467, "v2-nonce-id-12-to-23", {"nonce_for": lambda cid, i: cid[12:24]}, "nonce = ID[12..23] (one off by a "
     "whole nonce)"),
]:
    add2(number, short, f"Version 2 rule 6: every chunk sealed with {why}; IDs, table and MAC correct.",
         build2(data("three", 48), short, lengths=[16, 16, 16], **kw).bytes, "authenticationFailure")
v_other_plain = build2(data("other-three", 48), "other-three", lengths=[16, 16, 16], name=b"three.bin")
add2(468, "v2-chunk-from-same-key-other-plaintext", "Version 2 rule 6: chunk 1 replaced by a chunk of the same "
     "length from another container under the same key, with other plaintext: its ID is not the one in the "
     "table.", v_three.header + A + v_other_plain.chunks[1] + Cc, "authenticationFailure")
add2(469, "v2-flipped-bit-empty-chunk-tag", "Version 2 rule 6: empty plaintext with one bit flipped in its only "
     "(tag-only) chunk.", flip(v_empty2.bytes, len(v_empty2.bytes) - 1), "authenticationFailure")

# ---- v1 rule 1 in version 2 (50x) --------------------------------------------------------------

add(500, "v2-bad-magic", "Rule 1 in a version 2 container: first magic byte 0x89 changed to 0x88.",
    flip(v_three.bytes, 0), "notAContainer", format_version=2)

# ---- v1 rule 4 in version 2 (53x) --------------------------------------------------------------

for number, short, kw, why in [
    (530, "v2-unknown-payload-kind", {"kind": 3}, "payload kind 3"),
    (531, "v2-unknown-key-derivation", {"kdf": 3}, "key derivation 3 (fields otherwise as for a model key)"),
    (532, "v2-payload-kind-0", {"kind": 0}, "payload kind 0"),
    (533, "v2-key-derivation-0", {"kdf": 0}, "key derivation 0"),
]:
    add2(number, short, f"Rule 4 in version 2: {why}; MAC recomputed with the right key, chunks valid.",
         build2(hello, short, **kw).bytes, "malformedHeader")

# ---- v1 rule 6 in version 2 (55x) --------------------------------------------------------------

add2(550, "v2-plaintext-length-2p48-plus-1", "Rule 6 in version 2: L = 2^48 + 1 (n = 1, MAC recomputed).",
     build2(hello, "v2l48", length=(1 << 48) + 1).bytes, "malformedHeader")
add2(551, "v2-plaintext-length-max-u64", "Rule 6 in version 2: L = 2^64 - 1 (MAC recomputed; a reader must not "
     "overflow computing H + L + 16n).", build2(hello, "v2l64", length=(1 << 64) - 1).bytes, "malformedHeader")
add2(552, "v2-plaintext-length-2p48-short-file", "Rule 6 boundary in version 2: L = 2^48 exactly is allowed by "
     "the field rules (n = 1, MAC valid), so the reader reaches the exact length check, which fails.",
     build2(hello, "v2l48exact", length=1 << 48).bytes, "lengthMismatch")

# ---- v1 rule 7 in version 2 (56x) --------------------------------------------------------------

add2(560, "v2-key-id-empty-model-key", "Rule 7 in version 2: model key container with an empty key ID; MAC "
     "recomputed.", build2(hello, "v2kidempty", key_id=b"").bytes, "malformedHeader")
add2(561, "v2-key-id-with-passphrase", "Rule 7 in version 2: passphrase container carrying a key ID; MAC "
     "recomputed with the right passphrase.",
     build2(hello, "v2kidpw", passphrase=PASSPHRASE, key_id=KEY_ID.encode()).bytes, "malformedHeader",
     passphrase=PASSPHRASE)
add2(562, "v2-key-id-65-bytes", "Rule 7 in version 2: key ID of 65 bytes; MAC recomputed.",
     build2(hello, "v2kid65", key_id=b"a" * 65).bytes, "malformedHeader")
add2(563, "v2-key-id-slash", "Rule 7 in version 2: key ID containing '/'; MAC recomputed.",
     build2(hello, "v2kidslash", key_id=b"abc/def").bytes, "malformedHeader")

# ---- v1 rule 8 in version 2 (57x) --------------------------------------------------------------

for number, short, name, why in [
    (570, "v2-name-1025-bytes", b"n" * 1025, "name of 1025 bytes"),
    (571, "v2-name-invalid-utf8", b"model\xff.bin", "name with byte 0xFF"),
    (572, "v2-name-dot-dot", b"..", "name '..'"),
    (573, "v2-name-slash", b"models/evil.bin", "name containing '/'"),
    (574, "v2-name-nul", b"model\x00.bin", "name containing NUL"),
]:
    add2(number, short, f"Rule 8 in version 2: {why}; MAC recomputed, chunks valid.",
         build2(hello, short, name=name).bytes, "malformedHeader")

# ---- v1 rule 9 in version 2 (58x) --------------------------------------------------------------

for number, short, params, derivable, why in [
    (580, "v2-scrypt-logn-21", (21, 8, 1), False, "logN 21"),
    (581, "v2-scrypt-r-33", (10, 33, 1), True, "r 33"),
    (582, "v2-scrypt-memory-288mib", (18, 9, 1), False, "logN 18, r 9 (288 MiB)"),
]:
    add2(number, short, f"Rule 9 in version 2: scrypt {why}; costLimitExceeded without deriving; "
         f"{VALID_MAC if derivable else PLACEHOLDER}.",
         build2(hello, short, passphrase=PASSPHRASE, scrypt=params, derivable=derivable).bytes,
         "costLimitExceeded", passphrase=PASSPHRASE)
add2(583, "v2-scrypt-logn-21-truncated", "Version 2 order: scrypt logN 21 (placeholder MAC) and the file one byte "
     "short: the exact length (step 2) is checked before the scrypt limits (step 4).",
     build2(hello, "v2-scrypt-logn-21", passphrase=PASSPHRASE, scrypt=(21, 8, 1), derivable=False).bytes[:-1],
     "lengthMismatch", passphrase=PASSPHRASE)

# ---- v1 rule 11 in version 2: the header MAC (60x-61x) -----------------------------------------

v_two = build2(hello, "mac2", lengths=[3, 3], name=b"two.bin")
f2 = len(v_two.fields)
add2(600, "v2-flipped-bit-table-id", "Rule 11 in version 2: one bit flipped in chunk 0's ID in the table (the MAC "
     "covers the table).", flip(v_two.bytes, f2 + 3), "authenticationFailure")
v_shifted = build2(hello, "mac2", lengths=[3, 3], name=b"two.bin", table_edit=set_lengths(2, 4))
add2(601, "v2-table-lengths-shifted", "Rule 11 in version 2: lengths 3, 3 rewritten as 2, 4 (still adding up to "
     "L, every rule kept) without recomputing the MAC.",
     v_shifted.fields + v_shifted.table + v_two.mac + b"".join(v_two.chunks), "authenticationFailure")
add2(602, "v2-flipped-bit-salt", "Rule 11 in version 2: one bit flipped in the header salt (offset 30).",
     flip(v_two.bytes, 30), "authenticationFailure")
add2(603, "v2-flipped-bit-mac", "Rule 11 in version 2: one bit flipped in the MAC's last byte.",
     flip(v_two.bytes, len(v_two.header) - 1, 0x80), "authenticationFailure")
add2(604, "v2-flipped-bit-name", "Rule 11 in version 2: original name 'two.bin' changed to 'uwo.bin'.",
     flip(v_two.bytes, 61 + len(KEY_ID) + 2, 0x01), "authenticationFailure")
add2(605, "v2-flipped-bit-key-id", "Rule 11 in version 2: key ID's first byte '5' changed to '4'.",
     flip(v_two.bytes, 61, 0x01), "authenticationFailure")
add2(606, "v2-wrong-key", "Rule 11 in version 2: opened with another model key.", v_two.bytes,
     "authenticationFailure", key=OTHER_KEY, key_id=OTHER_KEY_ID)
add2(607, "v2-wrong-key-same-id", "Rule 11 in version 2: opened with another key carrying the container's key ID.",
     v_two.bytes, "authenticationFailure", key=OTHER_KEY, key_id=KEY_ID)
v_pw2 = build2(b"hello, passphrase, version 2\n", "pw2", passphrase=PASSPHRASE)
add2(608, "v2-wrong-passphrase", "Rule 11 in version 2: opened with the wrong passphrase.", v_pw2.bytes,
     "authenticationFailure", passphrase="correct horse battery stapler")
add2(609, "v2-passphrase-for-model-key", "Rule 11 in version 2: a model key container opened with a passphrase.",
     v_two.bytes, "authenticationFailure", passphrase=PASSPHRASE)
add2(610, "v2-model-key-for-passphrase", "Rule 11 in version 2: a passphrase container opened with a model key.",
     v_pw2.bytes, "authenticationFailure")
add2(611, "v2-flipped-bit-scrypt-salt", "Rule 11 in version 2: one bit flipped in the scrypt salt.",
     flip(v_pw2.bytes, len(v_pw2.fields) - 1), "authenticationFailure", passphrase=PASSPHRASE)
for number, short, kw, why in [
    (612, "v2-mac-v1-header-info", {"header_key_for": lambda ikm, s: ref.hkdf(ikm, s, ref.HEADER_INFO)},
     "a header key derived with version 1's info 'coffer v1 header'"),
    (613, "v2-mac-header-key-empty-salt", {"header_key_for": lambda ikm, s: ref.hkdf(ikm, b"", ref.V2_HEADER_INFO)},
     "a header key derived with an empty salt instead of the header's salt"),
    (614, "v2-mac-over-fields-only", {"mac_covers_table": False}, "a MAC over the fields alone, not the table"),
]:
    add2(number, short, f"Rule 11 in version 2: {why}; chunks valid.",
         build2(hello, short, lengths=[3, 3], **kw).bytes, "authenticationFailure")
v_drop = build2(data("three", 48)[:16] + data("three", 48)[32:], "three", lengths=[16, 16], name=b"three.bin")
add2(615, "v2-chunk-dropped-table-rewritten", "Rule 11 in version 2: chunk 1 of a 3-chunk container dropped, with "
     "its table row removed and n and L rewritten to match (every structural rule kept) but the original MAC: "
     "a dropped chunk is refused by the MAC over the table.",
     v_drop.fields + v_drop.table + v_three.mac + A + Cc, "authenticationFailure")
v_reordered = build2(data("three", 48)[16:32] + data("three", 48)[:16] + data("three", 48)[32:], "three",
                     lengths=[16, 16, 16], name=b"three.bin")
assert v_reordered.chunks == [B, A, Cc]
add2(616, "v2-chunks-reordered-table-rewritten", "Rule 11 in version 2: chunks 0 and 1 swapped together with their "
     "table rows (each chunk would open with its row's ID), original MAC: reordering is refused by the MAC.",
     v_reordered.fields + v_reordered.table + v_three.mac + B + A + Cc, "authenticationFailure")
v_cut = build2(data("three", 48)[:32], "three", lengths=[16, 16], name=b"three.bin")
add2(617, "v2-truncated-table-rewritten", "Rule 11 in version 2: the last chunk removed with its table row, n and "
     "L rewritten to match, original MAC: truncation at a chunk boundary is refused by the MAC.",
     v_cut.fields + v_cut.table + v_three.mac + A + B, "authenticationFailure")

# ---- v1 rule 13 in version 2: packed trees (62x) -----------------------------------------------


def bad_tree2(number: int, short: str, rule: int, why: str, stream: bytes) -> None:
    try:
        ref.unpack_check(stream)
    except ref.RejectError:
        pass
    else:
        raise SystemExit(f"{short}: tree unexpectedly valid")
    try:
        lengths = ref.cut_plaintext(stream, ref.KIND_FOLDER, gear=KEY_GEAR)
    except ValueError:
        lengths = [len(stream)]  # not walkable: one chunk (any cut is valid for a reader)
    container = build2(stream, short, kind=ref.KIND_FOLDER, name=b"Bad.mlmodelc", lengths=lengths).bytes
    add2(number, short, f"Rule 13 in version 2, packed tree rule {rule}: {why}. Sealed properly (valid MAC and "
         "tags), so only the tree rule fails.", container, "malformedTree", payload_kind=2)


bad_tree2(620, "v2-tree-link-escapes-root", 5, "link 'd/l' -> '../../x'", b_tree([t_dir("d"), t_link("d/l", "../../x")]))
bad_tree2(621, "v2-tree-trailing-byte", 6, "one byte after the last entry (cut as one chunk)",
          b_tree([t_file("a")]) + b"\x00")
bad_tree2(622, "v2-tree-order-reversed", 3, "'b' before 'a' (each entry its own chunk)",
          b_tree([t_file("b"), t_file("a")]))
bad_tree2(623, "v2-tree-parent-is-file", 4, "file 'f' then 'f/g'", b_tree([t_file("f"), t_file("f/g")]))


# =============================================================================================
# Writer vectors (../chunker/): the writers' cut of plaintexts too large to store as containers
# =============================================================================================

chunker_vectors: list[tuple[str, dict]] = []


def off_by_one_cut(plaintext: bytes, *, start: int = 0, switch: int = 0, cut: int = 0) -> list[int]:
    """The writers' cut of a file (one segment, KEY_GEAR) with the mistakes the window vectors
    are built to catch: the loop over i runs from s + MIN + start (hashing and testing from
    there), the 16-bit rule applies from i = s + AVG + switch, and a boundary found at i is put at
    i + 1 + cut. With all three 0 it is ref.cut_plaintext (checked on every vector that uses it)."""
    gear, mask, lengths, s, e = KEY_GEAR, (1 << 64) - 1, [], 0, len(plaintext)
    while s < e:
        if e - s <= ref.CDC_MIN:
            lengths.append(e - s)
            break
        end = boundary = min(s + ref.CDC_MAX, e)
        h = 0
        for i in range(s + ref.CDC_MIN + start, end):
            h = ((h << 1) + gear[plaintext[i]]) & mask
            if h < (1 << 48 if i >= s + ref.CDC_AVG + switch else 1 << 44):
                boundary = min(max(i + 1 + cut, s + 1), end)
                break
        lengths.append(boundary - s)
        s = boundary
    return lengths


def chunker(number: int, short: str, description: str, parts: list[dict], *, kind: int = 1,
            expect_lengths: list[int] | None = None, traps: list[dict] = ()) -> None:
    """Records a writer vector: a plaintext described by `parts`, its cut, IDs and sealed bytes.
    `traps` lists off_by_one_cut mistakes that must give another cut of this plaintext."""
    plaintext = b"".join(expand_part(part) for part in parts)
    lengths = ref.cut_plaintext(plaintext, kind, gear=KEY_GEAR)
    if expect_lengths is not None and lengths != expect_lengths:
        raise SystemExit(f"chunker {number:03d}-{short}: cut {lengths}, expected {expect_lengths}")
    if traps:
        assert kind == ref.KIND_FILE and off_by_one_cut(plaintext) == lengths, short
        for mistake in traps:
            if off_by_one_cut(plaintext, **mistake) == lengths:
                raise SystemExit(f"chunker {number:03d}-{short}: the mistake {mistake} gives the same cut")
    assert sum(lengths) == len(plaintext)
    gcm = ref.AESGCM(V2_SEAL_KEY)
    ids, sealed, pos = [], hashlib.sha256(), 0
    for size in lengths:
        piece = plaintext[pos:pos + size]
        pos += size
        cid = ref.chunk_id(V2_ID_KEY, piece)
        ids.append(cid.hex())
        sealed.update(ref.seal_chunk_v2(gcm, cid, piece))
    # The reference reader agrees: seal with these lengths and open again.
    container = ref.seal_v2(KEY, plaintext, lengths, kind=kind, kdf=ref.KDF_MODEL_KEY, salt=salt(short),
                            key_id=KEY_ID.encode(), name=b"chunker.bin", scrypt_fields=None)
    header, opened = ref.open_container(container, key=KEY)
    assert opened == plaintext and [cid.hex() for cid, _ in header["table"]] == ids
    vector = {
        "description": description,
        "key": KEY.hex(),
        "payloadKind": kind,
        "plaintext": parts,
        "plaintextLength": len(plaintext),
        "plaintextSHA256": hashlib.sha256(plaintext).hexdigest(),
    }
    if kind == ref.KIND_FOLDER:
        vector["segments"] = [[a, b] for a, b in ref.segments(plaintext, kind)]
    vector["chunkLengths"] = lengths
    vector["chunkIDs"] = ids
    vector["sealedChunksSHA256"] = sealed.hexdigest()
    chunker_vectors.append((f"{number:03d}-{short}", vector))


def expand_part(part: dict) -> bytes:
    if "sha256Stream" in part:
        return sha256_stream(part["sha256Stream"], part["length"])
    if "zeros" in part:
        return bytes(part["zeros"])
    return bytes.fromhex(part["hex"])


def rand(seed: str, n: int) -> dict:
    return {"sha256Stream": "coffer chunker vectors: " + seed, "length": n}


def hexpart(raw: bytes) -> dict:
    return {"hex": raw.hex()}


MIN, AVG, MAX = ref.CDC_MIN, ref.CDC_AVG, ref.CDC_MAX
chunker(1, "random-3mib", "3 MiB of pseudo-random bytes: the writers' cut finds content-defined boundaries "
        "(some before AVG with 20 high bits zero, most after it with 16).", [rand("random 3 MiB", 3 << 20)])
chunker(2, "zeros-2.5mib", "2.5 MiB of zero bytes: under this key's gear table the hash of a run of zeros "
        "(gear[0] * (2^k - 1) mod 2^64 after k bytes, 2^64 - gear[0] from k = 64 on) never has 16 high bits zero, "
        "so chunks end at MAX: 1048576, 1048576, then the 524288-byte rest.", [{"zeros": (5 << 20) // 2}],
        expect_lengths=[MAX, MAX, MAX // 2])
chunker(3, "zeros-max-plus-1", "MAX + 1 zero bytes: one chunk of exactly MAX (the search stops at s + MAX) and "
        "one of 1 byte.", [{"zeros": MAX + 1}], expect_lengths=[MAX, 1])
chunker(4, "exactly-min", "Exactly MIN pseudo-random bytes: e - s <= MIN, one chunk, no hashing.",
        [rand("exactly min", MIN)], expect_lengths=[MIN])
# 005-008 put the windows where an off-by-one at MIN or AVG changes the cut; off_by_one_cut checks
# that each listed mistake does. W20 is hashed from h = 0 at s + MIN (005) or one byte before
# (006); see w20_shape.
chunker(5, "window-after-min", "MIN pseudo-random bytes, a 64-byte window whose gear hash (under the key's gear "
        "table) has 20 high bits zero, then 10000 bytes: hashing starts at s + MIN (h = 0), the window's last byte "
        "is i = s + MIN + 63, so the cut is at s + MIN + 64 (not 63 or 65). gear[the window's first byte] is odd, "
        "so a chunker that starts hashing one byte late (at s + MIN + 1) has a hash with its top bit set there and "
        "does not cut.", [rand("window after min", MIN), hexpart(W20), rand("window after min tail", 10000)],
        expect_lengths=[MIN + 64, 10000], traps=[{"cut": -1}, {"cut": 1}, {"start": 1}])
chunker(6, "window-straddles-min", "MIN - 1 pseudo-random bytes, then the window of 005 at [MIN - 1, MIN + 63), "
        "then 200000 bytes: the chunker starts with h = 0 at s + MIN, so at i = s + MIN + 62 it has hashed only "
        "the window's last 63 bytes, whose hash is the window's plus 2^63 (gear[its first byte] is odd), and must "
        "not cut at MIN + 63. A chunker that starts hashing at s + MIN - 1, or earlier (from s, say), has hashed "
        "the whole window there and would.",
        [rand("straddle", MIN - 1), hexpart(W20), rand("straddle tail", 200_000)],
        traps=[{"start": -1}, {"start": -2}, {"start": -MIN}])
# W16 ending at s + AVG - 1: i < s + AVG needs 20 zero bits, so no cut there. The rest (up to MAX) is
# zeros, which do not cut under this key (asserted; for another key a run of zeros may); any cut
# before is from the pseudo-random bytes, and the seed is picked so there is none (asserted).
chunker(7, "16-bit-window-before-avg", "A 64-byte window whose gear hash (under the key's gear table) has 16 (not "
        "20) high bits zero, ending at i = s + AVG - 1, then zeros: before AVG the rule needs 20 zero bits, so no "
        "cut there (a chunker that applies the 16-bit rule from s + AVG - 1 would cut at AVG); the chunk runs to "
        "MAX.", [rand("w16 before avg", AVG - 64), hexpart(W16), {"zeros": MAX}],
        expect_lengths=[MAX, AVG], traps=[{"switch": -1}])
chunker(8, "16-bit-window-at-avg", "The same 16-bit window ending at i = s + AVG: from AVG on 16 zero bits cut, so "
        "the first chunk is AVG + 1 bytes (a chunker that applies the 16-bit rule only from s + AVG + 1, or puts "
        "the cut at i or i + 2, gives another cut).",
        [rand("w16 before avg", AVG - 63), hexpart(W16), {"zeros": 1000}],
        expect_lengths=[AVG + 1, 1000], traps=[{"switch": 1}, {"cut": -1}, {"cut": 1}])
big = 1_500_000
tree_parts = [
    hexpart(ref.TREE_MAGIC + struct.pack(">IH", 4, 0o755)),
    hexpart(struct.pack(">BHH", 1, 0o755, 1) + b"a"),
    hexpart(struct.pack(">BHH", 2, 0o644, 9) + b"a/big.bin" + struct.pack(">Q", big)),
    rand("folder big", big),
    hexpart(struct.pack(">BHH", 2, 0o644, 11) + b"a/small.txt" + struct.pack(">Q", 6) + b"small\n"),
    hexpart(struct.pack(">BHH", 3, 0o777, 4) + b"link" + struct.pack(">H", 9) + b"a/big.bin"),
]
assert ref.unpack_check(b"".join(map(expand_part, tree_parts)))
chunker(9, "packed-folder", "A packed folder (kind 2): folder 'a', 'a/big.bin' of 1500000 pseudo-random bytes, "
        "'a/small.txt', link 'link': the 14-byte prefix and each entry are segments ('segments' lists them), "
        "cut separately; the big file's segment is cut by content (and at most MAX per chunk).", tree_parts,
        kind=2)


# ---- write ----------------------------------------------------------------------------------

def write_folder(folder: str, entries: list[tuple[str, dict]]) -> tuple[int, int]:
    """Writes one JSON file per vector into `folder`, removing *.json files no longer made.
    Returns (count, total bytes)."""
    os.makedirs(folder, exist_ok=True)
    names = [name for name, _ in entries]
    assert len(set(names)) == len(names), "duplicate vector names"
    assert len({n[:3] for n in names}) == len(names), "duplicate vector numbers"
    for stale in os.listdir(folder):
        if stale.endswith(".json") and stale[:-5] not in names:
            os.remove(os.path.join(folder, stale))
    total = 0
    for name, vector in entries:
        text = json.dumps(vector, indent=2, ensure_ascii=False) + "\n"
        path = os.path.join(folder, name + ".json")
        with open(path, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
        total += len(text.encode("utf-8"))
        assert len(text) <= MAX_VECTOR_FILE, f"{name}: {len(text)} bytes, over {MAX_VECTOR_FILE}"
    return len(entries), total


def main() -> None:
    count, total = write_folder(OUT, vectors)
    valid = sum(1 for _, v in vectors if v["expect"] == "ok")
    v2 = sum(1 for _, v in vectors if v.get("formatVersion") == 2)
    print(f"wrote {count} vectors ({valid} valid, {count - valid} reject; {v2} of version 2), "
          f"{total / 1024:.0f} KiB, to {os.path.relpath(OUT, ROOT)}")
    count, total = write_folder(CHUNKER_OUT, chunker_vectors)
    print(f"wrote {count} writer vectors, {total / 1024:.0f} KiB, to {os.path.relpath(CHUNKER_OUT, ROOT)}")


if __name__ == "__main__":
    main()
