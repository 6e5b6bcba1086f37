#!/usr/bin/env python3
"""Coffer container format, versions 1 and 2: an independent reference implementation in Python.

Written from docs/FORMAT.md alone, to show that the specification is enough to build a
compatible reader and writer, and to generate the language-neutral test vectors in
Tests/CofferFormatTests/Vectors/ (see make_vectors.py).

Only the `cryptography` package is used. This is a reference, not a tool for large models: it
holds whole containers in memory, and its content-defined chunker is pure Python (about
0.2 s per MiB).

Library use:
    seal(plaintext, key=..., key_id=..., name=..., salt=..., format_version=2, ...) -> bytes
        (format_version=1 takes chunk_exp=16...20)
    open_container(data, key=... | passphrase=...) -> (header_dict, plaintext)
    parse_header(data) -> header_dict   (every rule that needs no key; for version 2 `data` must
                                         be the whole container: its length is checked first)
    gear_table(ikm) -> the keyed gear table of the version 2 writers' cut
    cut_plaintext(plaintext, kind, gear=gear_table(ikm)) -> list of chunk lengths (the writers' cut)
    pack_tree(entries, root_mode=0o755) -> bytes
    unpack_check(stream) -> list of entries (raises RejectError("malformedTree"))

Command line:
    coffer_ref.py open FILE (--key-file K.modelkey | --passphrase-file F) [--output PATH] [--raw]
    coffer_ref.py seal PATH (--key-file K.modelkey | --passphrase-file F) --output OUT
                       [--format-version 1|2 (default 2)] [--chunk-exp 16...20 (version 1 only)]
    coffer_ref.py pack FOLDER            (the packed-tree stream of FOLDER, to stdout)
    coffer_ref.py inspect FILE [--table] (the header fields as JSON, with the version and chunk
                                          count; --table adds a version 2 chunk table; nothing
                                          verified but the rules that need no key)
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import hmac
import json
import os
import stat
import struct
import sys

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from cryptography.hazmat.primitives.kdf.scrypt import Scrypt

# --------------------------------------------------------------------------------------------
# Constants (docs/FORMAT.md, "Header", "Keys", "Chunks")
# --------------------------------------------------------------------------------------------

MAGIC = bytes([0x89, 0x43, 0x4F, 0x46, 0x46, 0x45, 0x52, 0x0A])  # "\x89COFFER\n"
VERSION = 1  # version 1 (kept under this name for the version 1 helpers and vectors)
VERSION_1 = 1
VERSION_2 = 2
SUPPORTED_VERSIONS = (VERSION_1, VERSION_2)
DEFAULT_FORMAT_VERSION = VERSION_2  # "Writers write version 2 by default"
PREFIX_LENGTH = 12  # magic, version, header length (v1) or fields length (v2)
MAX_HEADER_LENGTH = 4096
SUITE_AES256GCM_HKDF_HMAC = 1
KIND_FILE = 1
KIND_FOLDER = 2
KDF_MODEL_KEY = 1
KDF_PASSPHRASE = 2
MIN_CHUNK_EXP = 16
MAX_CHUNK_EXP = 20
MAX_PLAINTEXT_LENGTH = 1 << 48
SALT_LENGTH = 32
MAX_KEY_ID_LENGTH = 64
MAX_NAME_LENGTH = 1024
SCRYPT_SALT_LENGTH = 16
SCRYPT_FIELDS_LENGTH = 1 + 4 + 4 + SCRYPT_SALT_LENGTH  # 25
MAC_LENGTH = 32
TAG_LENGTH = 16
NONCE_LENGTH = 12
KEY_ID_BYTES = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-")
HEADER_INFO = b"coffer v1 header"
PAYLOAD_INFO = b"coffer v1 payload"

# Smallest header any valid container can have: a model key with a 1-byte key ID and an empty
# name (a passphrase header is larger: no key ID but 25 bytes of scrypt parameters).
MIN_HEADER_LENGTH = min(
    57 + 1 + 2 + 0 + MAC_LENGTH,  # model key
    57 + 0 + 2 + 0 + SCRYPT_FIELDS_LENGTH + MAC_LENGTH,  # passphrase
)

# Version 2 (docs/FORMAT.md, "Version 2: content-defined chunks").
SUITE_V2 = 2  # deterministic AES-256-GCM chunks, HMAC-SHA-256 chunk IDs, HKDF-SHA-256
MIN_FIELDS_LENGTH = 64  # 61 + a 1-byte key ID + 2 (an empty name)
MAX_FIELDS_LENGTH = 4096
CHUNK_COUNT_OFFSET = 56
TABLE_ENTRY_LENGTH = 36  # chunk ID (32) || plaintext length (4)
CHUNK_ID_LENGTH = 32
MAX_CHUNK_LENGTH = 4 * 1024 * 1024  # 4 194 304: what a reader accepts
V2_HEADER_INFO = b"coffer v2 header"
V2_CHUNK_ID_INFO = b"coffer v2 chunk id"
V2_CHUNK_SEAL_INFO = b"coffer v2 chunk seal"
# The writers' cut ("Cutting the plaintext (writers)"): readers accept any cut within the rules.
CDC_MIN = 65_536
CDC_AVG = 262_144
CDC_MAX = 1_048_576
V2_GEAR_INFO = b"coffer v2 chunk gear"
TREE_PREFIX_LENGTH = 14  # packed tree: magic (8) || entry-count (4) || root-mode (2)

# scrypt limits a reader enforces before deriving (docs/FORMAT.md, "Keys").
SCRYPT_LOGN_RANGE = range(10, 21)
SCRYPT_R_RANGE = range(1, 33)
SCRYPT_P_RANGE = range(1, 5)
SCRYPT_MAX_MEMORY = 256 * 1024 * 1024
DEFAULT_SCRYPT = (17, 8, 1)

# Packed tree (docs/FORMAT.md, "Packed tree").
TREE_MAGIC = bytes([0x43, 0x4F, 0x46, 0x54, 0x52, 0x45, 0x45, 0x01])  # "COFTREE" 0x01
TREE_MAX_ENTRIES = 1_000_000
TREE_MAX_PATH = 4096
TREE_FOLDER = 1
TREE_FILE = 2
TREE_LINK = 3
TREE_KIND_NAMES = {TREE_FOLDER: "directory", TREE_FILE: "file", TREE_LINK: "symlink"}
TREE_KIND_CODES = {name: code for code, name in TREE_KIND_NAMES.items()}
TREE_PERMISSION_BITS = 0o777  # the only mode bits stored: never setuid, setgid, sticky or type bits
TREE_LINK_MODE = 0o777  # the mode every link stores

ERROR_CODES = (
    "notAContainer",
    "unsupportedVersion",
    "malformedHeader",
    "lengthMismatch",
    "authenticationFailure",
    "costLimitExceeded",
    "malformedTree",
)


class RejectError(Exception):
    """A container or packed tree was refused. `code` is one of ERROR_CODES."""

    def __init__(self, code: str, detail: str = ""):
        assert code in ERROR_CODES, code
        super().__init__(f"{code}: {detail}" if detail else code)
        self.code = code
        self.detail = detail


# --------------------------------------------------------------------------------------------
# Keys
# --------------------------------------------------------------------------------------------


def check_scrypt_limits(log_n: int, r: int, p: int) -> None:
    """Refuses scrypt parameters outside the reader limits. Must run before any derivation."""
    if log_n not in SCRYPT_LOGN_RANGE:
        raise RejectError("costLimitExceeded", f"logN {log_n} not in 10...20")
    if r not in SCRYPT_R_RANGE:
        raise RejectError("costLimitExceeded", f"r {r} not in 1...32")
    if p not in SCRYPT_P_RANGE:
        raise RejectError("costLimitExceeded", f"p {p} not in 1...4")
    if 128 * r * (1 << log_n) > SCRYPT_MAX_MEMORY:
        raise RejectError("costLimitExceeded", "memory need over 256 MiB")


def scrypt_ikm(passphrase: bytes, scrypt_salt: bytes, log_n: int, r: int, p: int) -> bytes:
    """IKM for a passphrase: scrypt(passphrase, scrypt salt, N = 2^logN, r, p, dkLen = 32)."""
    return Scrypt(salt=scrypt_salt, length=32, n=1 << log_n, r=r, p=p).derive(passphrase)


def hkdf(ikm: bytes, salt: bytes, info: bytes) -> bytes:
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=salt, info=info).derive(ikm)


def file_keys(ikm: bytes, salt: bytes) -> tuple[bytes, bytes]:
    """(header key, payload key) for a container with this 32-byte salt."""
    return hkdf(ikm, salt, HEADER_INFO), hkdf(ikm, salt, PAYLOAD_INFO)


def header_mac(header_key: bytes, body: bytes) -> bytes:
    return hmac.new(header_key, body, hashlib.sha256).digest()


# --------------------------------------------------------------------------------------------
# Header encoding
# --------------------------------------------------------------------------------------------


def encode_header_body(
    *,
    chunk_exp: int,
    kind: int,
    kdf: int,
    length: int,
    salt: bytes,
    key_id: bytes,
    name: bytes,
    scrypt_fields: bytes | None,
    version: int = VERSION,
    suite: int = SUITE_AES256GCM_HKDF_HMAC,
    header_length: int | None = None,
    extra: bytes = b"",
) -> bytes:
    """The header bytes the MAC covers (everything but the MAC).

    Field values are written as given, without validation, so that test vectors can build
    headers that break one rule. `header_length` overrides the computed H; `extra` is appended
    after the last field (before the MAC), to make H disagree with the fields.
    """
    fields = (
        struct.pack(">BBBBQ", suite, chunk_exp, kind, kdf, length)
        + salt
        + bytes([len(key_id)])
        + key_id
        + struct.pack(">H", len(name))
        + name
        + (scrypt_fields or b"")
        + extra
    )
    h = PREFIX_LENGTH + len(fields) + MAC_LENGTH if header_length is None else header_length
    return MAGIC + struct.pack(">HH", version, h) + fields


def encode_scrypt_fields(log_n: int, r: int, p: int, scrypt_salt: bytes) -> bytes:
    return struct.pack(">BII", log_n, r, p) + scrypt_salt


def chunk_count(length: int, chunk_exp: int) -> int:
    c = 1 << chunk_exp
    return max(1, -(-length // c))


def nonce(index: int, is_last: bool) -> bytes:
    """nonce(i) = i as an 11-byte big-endian integer || last-chunk flag."""
    return index.to_bytes(11, "big") + (b"\x01" if is_last else b"\x00")


def seal_chunks(payload_key: bytes, mac: bytes, plaintext: bytes, chunk_exp: int, *, flag_for=None,
                nonce_for=None, aad: bytes | None = None) -> list[bytes]:
    """Seals every chunk; returns the list of sealed chunks (ciphertext || tag).

    `flag_for(i, n) -> bool`, `nonce_for(i, n) -> bytes` and `aad` replace the correct last-chunk
    flag, nonce and associated data; they exist only to build invalid test vectors.
    """
    c = 1 << chunk_exp
    n = chunk_count(len(plaintext), chunk_exp)
    gcm = AESGCM(payload_key)
    out = []
    for i in range(n):
        piece = plaintext[i * c:(i + 1) * c]
        if nonce_for is not None:
            iv = nonce_for(i, n)
        else:
            last = (i == n - 1) if flag_for is None else flag_for(i, n)
            iv = nonce(i, last)
        out.append(gcm.encrypt(iv, piece, mac if aad is None else aad))
    return out


def input_key_material(kdf: int, *, key: bytes | None, passphrase: bytes | None,
                       scrypt: tuple[int, int, int] | None, scrypt_salt: bytes | None) -> bytes:
    if kdf == KDF_MODEL_KEY:
        if key is None or len(key) != 32:
            raise ValueError("a model key container needs a 32-byte key")
        return key
    if passphrase is None:
        raise ValueError("a passphrase container needs a passphrase")
    log_n, r, p = scrypt
    return scrypt_ikm(passphrase, scrypt_salt, log_n, r, p)


def seal(
    plaintext: bytes,
    *,
    key: bytes | None = None,
    key_id: str | None = None,
    passphrase: bytes | None = None,
    scrypt: tuple[int, int, int] = DEFAULT_SCRYPT,
    kind: int = KIND_FILE,
    name: str = "",
    format_version: int = DEFAULT_FORMAT_VERSION,
    chunk_exp: int | None = None,
    salt: bytes,
    scrypt_salt: bytes | None = None,
) -> bytes:
    """Seals `plaintext` (a file's bytes, or a packed-tree stream when kind is 2).

    Exactly one of `key` (with `key_id`) or `passphrase` (with `scrypt_salt`). Deterministic:
    the salts are inputs. `format_version` 2 (the default) cuts content-defined chunks
    (cut_plaintext, with the gear table of this container's IKM); version 1 cuts chunks of
    2^chunk_exp bytes (default 20).
    """
    if format_version not in SUPPORTED_VERSIONS:
        raise ValueError("format version must be 1 or 2")
    if format_version == VERSION_2 and chunk_exp is not None:
        raise ValueError("a chunk size exponent is for version 1 only (version 2 cuts by content)")
    if chunk_exp is None:
        chunk_exp = 20
    if (key is None) == (passphrase is None):
        raise ValueError("give exactly one of key or passphrase")
    if len(salt) != SALT_LENGTH:
        raise ValueError("salt must be 32 bytes")
    if not MIN_CHUNK_EXP <= chunk_exp <= MAX_CHUNK_EXP:
        raise ValueError("chunk exponent must be 16...20")
    if kind not in (KIND_FILE, KIND_FOLDER):
        raise ValueError("kind must be 1 or 2")
    if len(plaintext) > MAX_PLAINTEXT_LENGTH:
        raise ValueError("plaintext over 2^48 bytes")
    name_bytes = name.encode("utf-8")
    if not valid_name(name_bytes):
        raise ValueError("invalid original name")
    if key is not None:
        kid = (key_id or "").encode("ascii")
        if not 1 <= len(kid) <= MAX_KEY_ID_LENGTH or not set(kid) <= KEY_ID_BYTES:
            raise ValueError("invalid key ID")
        kdf, scrypt_fields = KDF_MODEL_KEY, None
    else:
        if scrypt_salt is None or len(scrypt_salt) != SCRYPT_SALT_LENGTH:
            raise ValueError("scrypt salt must be 16 bytes")
        check_scrypt_limits(*scrypt)
        kid = b""
        kdf, scrypt_fields = KDF_PASSPHRASE, encode_scrypt_fields(*scrypt, scrypt_salt)
    ikm = input_key_material(kdf, key=key, passphrase=passphrase, scrypt=scrypt, scrypt_salt=scrypt_salt)
    if format_version == VERSION_2:
        lengths = cut_plaintext(plaintext, kind, gear=gear_table(ikm))
        return seal_v2(ikm, plaintext, lengths, kind=kind, kdf=kdf, salt=salt, key_id=kid, name=name_bytes,
                       scrypt_fields=scrypt_fields)
    header_key, payload_key = file_keys(ikm, salt)
    body = encode_header_body(chunk_exp=chunk_exp, kind=kind, kdf=kdf, length=len(plaintext), salt=salt,
                              key_id=kid, name=name_bytes, scrypt_fields=scrypt_fields)
    mac = header_mac(header_key, body)
    return body + mac + b"".join(seal_chunks(payload_key, mac, plaintext, chunk_exp))


# --------------------------------------------------------------------------------------------
# Version 2: keys, fields, table, chunks (docs/FORMAT.md, "Version 2: content-defined chunks")
# --------------------------------------------------------------------------------------------


def v2_header_key(ikm: bytes, salt: bytes) -> bytes:
    """HKDF-SHA-256(IKM, salt = the header's salt, info = "coffer v2 header")."""
    return hkdf(ikm, salt, V2_HEADER_INFO)


def v2_chunk_keys(ikm: bytes) -> tuple[bytes, bytes]:
    """(ID key, seal key): HKDF-SHA-256 with an empty salt, so they do not depend on the header.

    (RFC 5869: an empty salt and the default of HashLen zero bytes give the same HMAC key.)
    """
    return hkdf(ikm, b"", V2_CHUNK_ID_INFO), hkdf(ikm, b"", V2_CHUNK_SEAL_INFO)


def chunk_id(id_key: bytes, piece: bytes) -> bytes:
    """ID = HMAC-SHA-256(ID key, the chunk's plaintext)."""
    return hmac.new(id_key, piece, hashlib.sha256).digest()


def seal_chunk_v2(gcm: AESGCM, cid: bytes, piece: bytes, *, nonce_bytes: bytes | None = None,
                  aad: bytes | None = None) -> bytes:
    """AES-256-GCM(seal key, nonce = ID[0..11], piece, aad = ID) = ciphertext || tag.

    `nonce_bytes` and `aad` replace the correct ones; they exist only to build invalid vectors.
    """
    return gcm.encrypt(cid[:NONCE_LENGTH] if nonce_bytes is None else nonce_bytes, piece,
                       cid if aad is None else aad)


def encode_fields_v2(
    *,
    kind: int,
    kdf: int,
    length: int,
    salt: bytes,
    count: int,
    key_id: bytes,
    name: bytes,
    scrypt_fields: bytes | None,
    version: int = VERSION_2,
    suite: int = SUITE_V2,
    reserved: int = 0,
    fields_length: int | None = None,
    extra: bytes = b"",
) -> bytes:
    """The version 2 `fields` (magic through the scrypt parameters).

    Values are written as given, without validation, so that test vectors can break one rule.
    `fields_length` overrides the computed F; `extra` is appended after the last field.
    """
    rest = (
        struct.pack(">BBBBQ", suite, reserved, kind, kdf, length)
        + salt
        + struct.pack(">I", count)
        + bytes([len(key_id)])
        + key_id
        + struct.pack(">H", len(name))
        + name
        + (scrypt_fields or b"")
        + extra
    )
    f = PREFIX_LENGTH + len(rest) if fields_length is None else fields_length
    return MAGIC + struct.pack(">HH", version, f) + rest


def encode_table(entries: list[tuple[bytes, int]]) -> bytes:
    """table = entry[0] || ... (entry = chunk ID (32) || plaintext length (4, big-endian))."""
    return b"".join(cid + struct.pack(">I", size) for cid, size in entries)


def seal_v2(ikm: bytes, plaintext: bytes, lengths: list[int], *, kind: int, kdf: int, salt: bytes,
            key_id: bytes, name: bytes, scrypt_fields: bytes | None) -> bytes:
    """A version 2 container of `plaintext` cut into chunks of `lengths` (which must add up)."""
    assert sum(lengths) == len(plaintext) and lengths, "lengths must cover the plaintext"
    id_key, seal_key = v2_chunk_keys(ikm)
    gcm = AESGCM(seal_key)
    entries, sealed, pos = [], [], 0
    for size in lengths:
        piece = plaintext[pos:pos + size]
        pos += size
        cid = chunk_id(id_key, piece)
        entries.append((cid, size))
        sealed.append(seal_chunk_v2(gcm, cid, piece))
    fields = encode_fields_v2(kind=kind, kdf=kdf, length=len(plaintext), salt=salt, count=len(lengths),
                              key_id=key_id, name=name, scrypt_fields=scrypt_fields)
    signed = fields + encode_table(entries)
    return signed + header_mac(v2_header_key(ikm, salt), signed) + b"".join(sealed)


# ---- the writers' cut ("Cutting the plaintext (writers)") ------------------------------------


def gear_table(ikm: bytes) -> tuple[int, ...]:
    """The writers' gear table, keyed so that nobody without the key can cut a guessed plaintext
    and compare its chunk lengths with a container's:

        gear key = HKDF-SHA-256(IKM, salt = empty, info = "coffer v2 chunk gear", L = 32)
        gear[b]  = first 8 bytes, big-endian, of HMAC-SHA-256(gear key, the single byte b)

    Like the ID and seal keys it does not depend on the header's salt, so under one key the cut of
    a plaintext is the same in every container (delta updates need that).
    """
    gear_key = hkdf(ikm, b"", V2_GEAR_INFO)
    return tuple(int.from_bytes(hmac.new(gear_key, bytes([b]), hashlib.sha256).digest()[:8], "big")
                 for b in range(256))


_MASK64 = (1 << 64) - 1
# "h >> 44 = 0" is h < 2^44 (20 high bits zero); "h >> 48 = 0" is h < 2^48 (16 high bits zero).
_BEFORE_AVG_LIMIT = 1 << 44
_FROM_AVG_LIMIT = 1 << 48


def _cut_end(data: bytes, s: int, e: int, gear: tuple[int, ...]) -> int:
    """The end of the chunk that starts at `s` in the segment [s, e)."""
    if e - s <= CDC_MIN:
        return e
    end = min(s + CDC_MAX, e)
    mask = _MASK64
    h = 0
    # i from s + MIN while i < s + AVG: 20 high bits zero cuts at i + 1.
    middle = min(s + CDC_AVG, end)
    limit = _BEFORE_AVG_LIMIT
    for i, b in enumerate(data[s + CDC_MIN:middle], s + CDC_MIN + 1):  # i here is the spec's i + 1
        h = ((h << 1) + gear[b]) & mask
        if h < limit:
            return i
    # i from s + AVG (if the segment reaches it) to end - 1: 16 high bits zero cuts at i + 1.
    limit = _FROM_AVG_LIMIT
    for i, b in enumerate(data[middle:end], middle + 1):
        h = ((h << 1) + gear[b]) & mask
        if h < limit:
            return i
    return end


def cut_segment(data: bytes, s: int, e: int, gear: tuple[int, ...]) -> list[int]:
    """Chunk lengths of the segment [s, e) of `data`, cut with `gear` (gear_table(ikm))."""
    assert len(gear) == 256
    lengths = []
    while s < e:
        cut = _cut_end(data, s, e, gear)
        lengths.append(cut - s)
        s = cut
    return lengths


def tree_entry_starts(stream: bytes) -> list[int]:
    """Offsets of every entry's kind byte in a packed-tree stream (walked, not validated: a
    stream this cannot walk raises ValueError; a writer packs with pack_tree, which checks)."""
    if len(stream) < TREE_PREFIX_LENGTH or stream[:len(TREE_MAGIC)] != TREE_MAGIC:
        raise ValueError("not a packed-tree stream")
    (count,) = struct.unpack_from(">I", stream, len(TREE_MAGIC))
    starts, pos = [], TREE_PREFIX_LENGTH
    for _ in range(count):
        if pos + 5 > len(stream):
            raise ValueError("packed-tree stream ends inside an entry")
        starts.append(pos)
        kind, _, path_length = struct.unpack_from(">BHH", stream, pos)
        pos += 5 + path_length
        if kind == TREE_FILE:
            if pos + 8 > len(stream):
                raise ValueError("packed-tree stream ends inside an entry")
            pos += 8 + struct.unpack_from(">Q", stream, pos)[0]
        elif kind == TREE_LINK:
            if pos + 2 > len(stream):
                raise ValueError("packed-tree stream ends inside an entry")
            pos += 2 + struct.unpack_from(">H", stream, pos)[0]
        elif kind != TREE_FOLDER:
            raise ValueError(f"packed-tree entry of unknown kind {kind}")
    if pos != len(stream):
        raise ValueError("packed-tree stream does not end after its last entry")
    return starts


def segments(plaintext: bytes, kind: int) -> list[tuple[int, int]]:
    """The segments a writer cuts separately: the whole plaintext for a file; for a packed
    folder the 14-byte stream prefix, then each entry from its kind byte to the next entry."""
    if kind != KIND_FOLDER:
        return [(0, len(plaintext))]
    bounds = [0, TREE_PREFIX_LENGTH] + tree_entry_starts(plaintext)[1:] + [len(plaintext)]
    # With no entries the stream is the prefix alone (bounds 0, 14, 14): one segment.
    return [(a, b) for a, b in zip(bounds, bounds[1:]) if a < b]


def cut_plaintext(plaintext: bytes, kind: int = KIND_FILE, *, gear: tuple[int, ...]) -> list[int]:
    """The chunk lengths Coffer's writers use (an empty plaintext is one empty chunk). `gear` is
    gear_table(IKM) of the container being written: the cut depends on the key."""
    if not plaintext:
        return [0]
    lengths = []
    for s, e in segments(plaintext, kind):
        lengths.extend(cut_segment(plaintext, s, e, gear))
    return lengths


# --------------------------------------------------------------------------------------------
# Reading (docs/FORMAT.md, "Reading", "MUST reject" and their version 2 sections)
# --------------------------------------------------------------------------------------------


def valid_name(name: bytes) -> bool:
    if len(name) > MAX_NAME_LENGTH or name in (b".", b"..") or b"/" in name or b"\x00" in name:
        return False
    try:
        name.decode("utf-8", errors="strict")
    except UnicodeDecodeError:
        return False
    return True


def _read_prefix(data: bytes) -> tuple[int, int]:
    """Step 1's common part: the magic and the version. Returns (version, length field)."""
    if len(data) < len(MAGIC) or data[:len(MAGIC)] != MAGIC:
        raise RejectError("notAContainer")
    if len(data) < PREFIX_LENGTH:
        raise RejectError("malformedHeader", "file ends inside the header prefix")
    version, length_field = struct.unpack_from(">HH", data, 8)
    if version not in SUPPORTED_VERSIONS:
        raise RejectError("unsupportedVersion", f"version {version}")
    return version, length_field


class _FieldReader:
    """Reads fields from data[PREFIX_LENGTH:end]; reading past `end` means the length field
    (H or F) disagrees with the fields."""

    def __init__(self, data: bytes, end: int):
        self.data, self.end, self.pos = data, end, PREFIX_LENGTH

    def take(self, count: int) -> bytes:
        if self.pos + count > self.end:
            raise RejectError("malformedHeader", "header length disagrees with its fields")
        piece = self.data[self.pos:self.pos + count]
        self.pos += count
        return piece


def _kind_and_kdf(kind: int, kdf: int) -> None:
    if kind not in (KIND_FILE, KIND_FOLDER):
        raise RejectError("malformedHeader", f"unknown payload kind {kind}")
    if kdf not in (KDF_MODEL_KEY, KDF_PASSPHRASE):
        raise RejectError("malformedHeader", f"unknown key derivation {kdf}")


def _plaintext_length(fields: _FieldReader) -> int:
    (length,) = struct.unpack(">Q", fields.take(8))
    if length > MAX_PLAINTEXT_LENGTH:
        raise RejectError("malformedHeader", "plaintext length over 2^48")
    return length


def _key_id_name_scrypt(fields: _FieldReader, kdf: int) -> tuple[bytes, bytes, dict | None]:
    """Key ID, original name and scrypt parameters: the same rules in versions 1 and 2."""
    k = fields.take(1)[0]
    key_id = fields.take(k)
    if kdf == KDF_MODEL_KEY and not 1 <= k <= MAX_KEY_ID_LENGTH:
        raise RejectError("malformedHeader", "model key container needs a 1...64 byte key ID")
    if kdf == KDF_PASSPHRASE and k != 0:
        raise RejectError("malformedHeader", "passphrase container with a key ID")
    if not set(key_id) <= KEY_ID_BYTES:
        raise RejectError("malformedHeader", "key ID byte outside A-Z a-z 0-9 . _ -")
    (n,) = struct.unpack(">H", fields.take(2))
    if n > MAX_NAME_LENGTH:
        raise RejectError("malformedHeader", "original name over 1024 bytes")
    name = fields.take(n)
    if not valid_name(name):
        raise RejectError("malformedHeader", "original name invalid")
    scrypt = None
    if kdf == KDF_PASSPHRASE:
        log_n, r, p = struct.unpack(">BII", fields.take(9))
        scrypt = {"logN": log_n, "r": r, "p": p, "salt": fields.take(SCRYPT_SALT_LENGTH)}
    if fields.pos != fields.end:
        raise RejectError("malformedHeader", "header length disagrees with its fields")
    return key_id, name, scrypt


def parse_header(data: bytes) -> dict:
    """Every rule that needs no key, in the order of "Reading" (version 1: steps 1-2; version 2:
    steps 1-3, so `data` must then be the whole container). Returns the fields; "body" is what
    the MAC covers (version 2: fields || table) and "chunkCount" is n."""
    version, _ = _read_prefix(data)
    return _parse_header_v1(data) if version == VERSION_1 else _parse_v2(data)


def _parse_header_v1(data: bytes) -> dict:
    """Version 1, steps 1 and 2 of "Reading". `data` may be a prefix of the container."""
    # Step 1: magic, version (checked by _read_prefix), header length (bounds first).
    h = struct.unpack_from(">H", data, 10)[0]
    if h > MAX_HEADER_LENGTH or h < MIN_HEADER_LENGTH:
        raise RejectError("malformedHeader", f"header length {h} out of range")
    # Step 2: read H bytes and check every header rule.
    if len(data) < h:
        raise RejectError("malformedHeader", "file ends inside the header")
    header = data[:h]
    fields_end = h - MAC_LENGTH
    fields = _FieldReader(header, fields_end)
    suite, chunk_exp, kind, kdf = fields.take(4)
    if suite != SUITE_AES256GCM_HKDF_HMAC:
        raise RejectError("malformedHeader", f"unknown suite {suite}")
    if not MIN_CHUNK_EXP <= chunk_exp <= MAX_CHUNK_EXP:
        raise RejectError("malformedHeader", f"chunk size exponent {chunk_exp}")
    _kind_and_kdf(kind, kdf)
    length = _plaintext_length(fields)
    salt = fields.take(SALT_LENGTH)
    key_id, name, scrypt = _key_id_name_scrypt(fields, kdf)
    return {
        "version": VERSION_1,
        "headerLength": h,
        "suite": suite,
        "chunkExp": chunk_exp,
        "payloadKind": kind,
        "keyDerivation": kdf,
        "plaintextLength": length,
        "chunkCount": chunk_count(length, chunk_exp),
        "salt": salt,
        "keyID": key_id.decode("ascii") if kdf == KDF_MODEL_KEY else None,
        "name": name.decode("utf-8"),
        "scrypt": scrypt,
        "body": header[:fields_end],
        "mac": header[fields_end:],
    }


def _parse_v2(data: bytes) -> dict:
    """Version 2, steps 1-3 of "Reading version 2". `data` is the whole container."""
    # Step 1: magic and version (checked by _read_prefix), 64 <= F <= 4096.
    f = struct.unpack_from(">H", data, 10)[0]
    if not MIN_FIELDS_LENGTH <= f <= MAX_FIELDS_LENGTH:
        raise RejectError("malformedHeader", f"fields length {f} out of range")
    # Step 2: read F bytes and check every field rule.
    if len(data) < f:
        raise RejectError("malformedHeader", "file ends inside the header fields")
    fields = _FieldReader(data, f)
    suite, reserved, kind, kdf = fields.take(4)
    if suite != SUITE_V2:
        raise RejectError("malformedHeader", f"unknown suite {suite} for version 2")
    if reserved != 0:
        raise RejectError("malformedHeader", f"reserved byte {reserved}, not 0")
    _kind_and_kdf(kind, kdf)
    length = _plaintext_length(fields)
    salt = fields.take(SALT_LENGTH)
    (n,) = struct.unpack(">I", fields.take(4))
    if n == 0:
        raise RejectError("malformedHeader", "chunk count 0")
    if length == 0 and n != 1:
        raise RejectError("malformedHeader", f"chunk count {n} for an empty plaintext (must be 1)")
    if n > length > 0:
        raise RejectError("malformedHeader", f"chunk count {n} over the plaintext length {length}")
    key_id, name, scrypt = _key_id_name_scrypt(fields, kdf)
    # The exact length, before the table is read or allocated. Python integers do not overflow;
    # a reader in a language with fixed-width integers must compute this without overflow
    # (F <= 4096, n < 2^32 and L <= 2^48 keep every term well inside 64 bits).
    h = f + TABLE_ENTRY_LENGTH * n + MAC_LENGTH
    expected = h + length + TAG_LENGTH * n
    if len(data) != expected:
        raise RejectError("lengthMismatch", f"expected {expected} bytes, found {len(data)}")
    # Step 3: the table; every length rule, and the lengths add up to L.
    table, total = [], 0
    for i in range(n):
        at = f + TABLE_ENTRY_LENGTH * i
        cid = data[at:at + CHUNK_ID_LENGTH]
        (size,) = struct.unpack_from(">I", data, at + CHUNK_ID_LENGTH)
        if size == 0 and length > 0:
            raise RejectError("malformedHeader", f"chunk {i} has length 0")
        if size > MAX_CHUNK_LENGTH:
            raise RejectError("malformedHeader", f"chunk {i} has length {size}, over 4 MiB")
        table.append((cid, size))
        total += size
    if total != length:
        raise RejectError("malformedHeader", f"chunk lengths add up to {total}, not {length}")
    return {
        "version": VERSION_2,
        "fieldsLength": f,
        "headerLength": h,
        "suite": suite,
        "reserved": reserved,
        "payloadKind": kind,
        "keyDerivation": kdf,
        "plaintextLength": length,
        "chunkCount": n,
        "salt": salt,
        "keyID": key_id.decode("ascii") if kdf == KDF_MODEL_KEY else None,
        "name": name.decode("utf-8"),
        "scrypt": scrypt,
        "table": table,
        "body": data[:h - MAC_LENGTH],
        "mac": data[h - MAC_LENGTH:h],
    }


def _input_key_material(header: dict, key: bytes | None, passphrase: bytes | None) -> bytes:
    """Step 4's first half (both versions): a key of the wrong kind and out-of-limit scrypt
    parameters are refused before anything is derived."""
    if header["keyDerivation"] == KDF_PASSPHRASE:
        s = header["scrypt"]
        check_scrypt_limits(s["logN"], s["r"], s["p"])
        if passphrase is None:
            raise RejectError("authenticationFailure", "this container needs a passphrase")
        return scrypt_ikm(passphrase, s["salt"], s["logN"], s["r"], s["p"])
    if key is None:
        raise RejectError("authenticationFailure", "this container needs a model key")
    return key


def open_container(data: bytes, *, key: bytes | None = None, passphrase: bytes | None = None):
    """Opens a whole container held in memory; returns (header fields, plaintext).

    For payload kind 2 the plaintext is the packed-tree stream, already checked with
    unpack_check. Raises RejectError with the code of the first rule broken, in the order of
    "Reading" (version 1) or "Reading version 2".
    """
    header = parse_header(data)  # v1: steps 1-2; v2: steps 1-3
    if header["version"] == VERSION_1:
        plaintext = _open_v1(data, header, key, passphrase)
    else:
        plaintext = _open_v2(data, header, key, passphrase)
    result = {k: v for k, v in header.items() if k not in ("body",)}
    if header["payloadKind"] == KIND_FOLDER:
        result["rootMode"], result["entries"] = unpack_check_full(plaintext)
    return result, plaintext


def _open_v1(data: bytes, header: dict, key: bytes | None, passphrase: bytes | None) -> bytes:
    h, length, e = header["headerLength"], header["plaintextLength"], header["chunkExp"]
    c = 1 << e
    n = header["chunkCount"]
    expected = h + length + TAG_LENGTH * n  # step 3
    if len(data) != expected:
        raise RejectError("lengthMismatch", f"expected {expected} bytes, found {len(data)}")
    # Step 4: keys (scrypt limits first), then the MAC in constant time.
    ikm = _input_key_material(header, key, passphrase)
    header_key, payload_key = file_keys(ikm, header["salt"])
    if not hmac.compare_digest(header_mac(header_key, header["body"]), header["mac"]):
        raise RejectError("authenticationFailure", "header MAC does not verify")
    gcm = AESGCM(payload_key)

    def open_chunk(i: int) -> bytes:
        start = h + i * (c + TAG_LENGTH)
        size = min(c, length - i * c) + TAG_LENGTH
        try:
            return gcm.decrypt(nonce(i, i == n - 1), data[start:start + size], header["mac"])
        except InvalidTag:
            raise RejectError("authenticationFailure", f"chunk {i} does not verify") from None

    last = open_chunk(n - 1)  # step 5
    pieces = [open_chunk(i) for i in range(n - 1)]  # step 6
    return b"".join(pieces) + last


def _open_v2(data: bytes, header: dict, key: bytes | None, passphrase: bytes | None) -> bytes:
    # Step 4: keys (wrong kind and scrypt limits first), then the MAC over fields || table.
    ikm = _input_key_material(header, key, passphrase)
    if not hmac.compare_digest(header_mac(v2_header_key(ikm, header["salt"]), header["body"]), header["mac"]):
        raise RejectError("authenticationFailure", "header MAC does not verify")
    # Step 5: each chunk with its ID from the table (nonce = ID[0..11], aad = ID). The ID is
    # not recomputed from the plaintext: the spec does not require it, so neither does this.
    _, seal_key = v2_chunk_keys(ikm)
    gcm = AESGCM(seal_key)
    pieces, offset = [], header["headerLength"]
    for i, (cid, size) in enumerate(header["table"]):
        sealed = data[offset:offset + size + TAG_LENGTH]
        offset += size + TAG_LENGTH
        try:
            pieces.append(gcm.decrypt(cid[:NONCE_LENGTH], sealed, cid))
        except InvalidTag:
            raise RejectError("authenticationFailure", f"chunk {i} does not verify") from None
    return b"".join(pieces)


# --------------------------------------------------------------------------------------------
# Packed tree
# --------------------------------------------------------------------------------------------


def path_components(path: bytes) -> list[bytes]:
    return path.split(b"/")


def tree_sort_key(path: bytes | str) -> list[bytes]:
    """Component-by-component order: Python compares lists of bytes exactly as the spec says."""
    if isinstance(path, str):
        path = path.encode("utf-8")
    return path_components(path)


def encode_tree_entry(kind: int, mode: int, path: bytes, body: bytes) -> bytes:
    return struct.pack(">BHH", kind, mode, len(path)) + path + body


def file_body(content: bytes) -> bytes:
    return struct.pack(">Q", len(content)) + content


def link_body(target: bytes) -> bytes:
    return struct.pack(">H", len(target)) + target


def tree_stream(encoded_entries: list[bytes], root_mode: int, *, count: int | None = None,
                magic: bytes = TREE_MAGIC) -> bytes:
    """magic || entry-count || root-mode || entries, with overridable count and magic."""
    n = len(encoded_entries) if count is None else count
    return magic + struct.pack(">IH", n, root_mode & 0xFFFF) + b"".join(encoded_entries)


def pack_tree(entries: list[dict], root_mode: int = 0o755) -> bytes:
    """Packs a tree given as entries {"path", "kind", "mode", "content" | "target"}.

    Entries are sorted in component order and modes reduced to permission bits (links 0o777),
    as a packer must. The result is checked with unpack_check.
    """
    encoded = []
    for entry in sorted(entries, key=lambda e: tree_sort_key(e["path"])):
        kind = TREE_KIND_CODES[entry["kind"]]
        path = entry["path"].encode("utf-8")
        if kind == TREE_FOLDER:
            encoded.append(encode_tree_entry(kind, entry["mode"] & 0o777, path, b""))
        elif kind == TREE_FILE:
            encoded.append(encode_tree_entry(kind, entry["mode"] & 0o777, path, file_body(entry["content"])))
        else:
            target = entry["target"]
            target = target.encode("utf-8") if isinstance(target, str) else target
            encoded.append(encode_tree_entry(kind, 0o777, path, link_body(target)))
    stream = tree_stream(encoded, root_mode & 0o777)
    unpack_check(stream)
    return stream


def _utf8_or_none(raw: bytes) -> str | None:
    try:
        return raw.decode("utf-8", errors="strict")
    except UnicodeDecodeError:
        return None


def pack_folder(root: str) -> bytes:
    """Packs the folder at `root` from disk (regular files, folders and symbolic links only).

    Refuses (ValueError) what the format cannot carry, as a packer must: another type of file, a
    name or a link target that is not valid UTF-8.
    """
    entries = []
    for folder, dirs, files in os.walk(root, followlinks=False):
        for name in dirs + files:
            full = os.path.join(folder, name)
            if _utf8_or_none(os.fsencode(name)) is None:
                raise ValueError(f"cannot pack {full!r}: the name is not valid UTF-8")
            rel = os.path.relpath(full, root).replace(os.sep, "/")
            st = os.lstat(full)
            if stat.S_ISLNK(st.st_mode):
                target = os.readlink(os.fsencode(full))
                if _utf8_or_none(target) is None:
                    raise ValueError(f"cannot pack {full!r}: symlink target {target!r} is not valid UTF-8")
                entries.append({"path": rel, "kind": "symlink", "mode": TREE_LINK_MODE, "target": target})
            elif stat.S_ISDIR(st.st_mode):
                entries.append({"path": rel, "kind": "directory", "mode": st.st_mode & 0o777})
            elif stat.S_ISREG(st.st_mode):
                with open(full, "rb") as f:
                    entries.append({"path": rel, "kind": "file", "mode": st.st_mode & 0o777, "content": f.read()})
            else:
                raise ValueError(f"cannot pack {full}: not a file, folder or link")
    return pack_tree(entries, os.stat(root).st_mode & 0o777)


def _tree_reject(detail: str):
    raise RejectError("malformedTree", detail)


def _check_path(path: bytes) -> list[bytes]:
    if not 1 <= len(path) <= TREE_MAX_PATH:
        _tree_reject("path empty or over 4096 bytes")
    if path.startswith(b"/"):
        _tree_reject("absolute path")
    if _utf8_or_none(path) is None:
        _tree_reject("path not valid UTF-8")
    parts = path_components(path)
    for part in parts:
        if part in (b"", b".", b"..") or b"\x00" in part:
            _tree_reject("path component empty, '.', '..' or with NUL")
    return parts


def _check_mode(what: str, mode: int) -> None:
    """Packed tree rule 8: a mode holds permission bits only (a link's exact 0o777 is checked apart)."""
    if mode & ~TREE_PERMISSION_BITS:
        _tree_reject(f"{what} has mode {mode:o}, with bits beyond 0o777")


def _check_link(link_parts: list[bytes], target: bytes) -> None:
    if not 1 <= len(target) <= TREE_MAX_PATH:
        _tree_reject("link target empty or over 4096 bytes")
    if _utf8_or_none(target) is None:
        _tree_reject("link target not valid UTF-8")
    if target.startswith(b"/"):
        _tree_reject("absolute link target")
    if b"\x00" in target:
        _tree_reject("link target with NUL")
    depth = len(link_parts) - 1  # the link's folder, counted from the root
    seen_other = False
    for part in target.split(b"/"):
        if part == b"..":
            if seen_other:
                _tree_reject("link target has '..' after another component")
            depth -= 1
            if depth < 0:
                _tree_reject("link target leaves the root")
        else:
            seen_other = True


def unpack_check_full(stream: bytes) -> tuple[int, list[dict]]:
    """Parses and validates a packed-tree stream; returns (root mode, entries).

    Entries are {"path", "kind", "mode", and "content" (file) or "target" (link)}. Raises
    RejectError("malformedTree") for every "MUST reject" rule of the packed tree section.
    """
    pos = 0

    def take(count: int) -> bytes:
        nonlocal pos
        if pos + count > len(stream):
            _tree_reject("stream ends before the declared entries and sizes")
        piece = stream[pos:pos + count]
        pos += count
        return piece

    if take(len(TREE_MAGIC)) != TREE_MAGIC:
        _tree_reject("wrong magic")
    count, root_mode = struct.unpack(">IH", take(6))
    if count > TREE_MAX_ENTRIES:
        _tree_reject("more than 1 000 000 entries")
    _check_mode("root folder", root_mode)
    entries = []
    folders: set[bytes] = set()
    previous: list[bytes] | None = None
    for _ in range(count):
        kind, mode, path_length = struct.unpack(">BHH", take(5))
        if kind not in TREE_KIND_NAMES:
            _tree_reject(f"unknown kind {kind}")
        _check_mode(f"entry {len(entries) + 1}", mode)
        if kind == TREE_LINK and mode != TREE_LINK_MODE:
            _tree_reject(f"link entry {len(entries) + 1} has mode {mode:o}, not 777")
        path = take(path_length)
        parts = _check_path(path)
        if previous is not None and not previous < parts:
            _tree_reject("entries out of order or repeated")
        previous = parts
        if len(parts) > 1 and b"/".join(parts[:-1]) not in folders:
            _tree_reject("parent is neither the root nor an earlier folder entry")
        entry = {"path": path.decode("utf-8"), "kind": TREE_KIND_NAMES[kind], "mode": mode}
        if kind == TREE_FOLDER:
            folders.add(path)
        elif kind == TREE_FILE:
            (size,) = struct.unpack(">Q", take(8))
            entry["content"] = take(size)
        else:
            (target_length,) = struct.unpack(">H", take(2))
            target = take(target_length)
            _check_link(parts, target)
            entry["target"] = target
        entries.append(entry)
    if pos != len(stream):
        _tree_reject("bytes after the last entry")
    return root_mode, entries


def unpack_check(stream: bytes) -> list[dict]:
    """Validates a packed-tree stream; returns its entries (see unpack_check_full)."""
    return unpack_check_full(stream)[1]


def restore_tree(stream: bytes, destination: str) -> None:
    """Writes a checked tree into a fresh folder `destination` (which must not exist)."""
    root_mode, entries = unpack_check_full(stream)
    os.mkdir(destination, 0o700)
    folder_modes = []
    for entry in entries:
        full = os.path.join(destination, *entry["path"].split("/"))
        if entry["kind"] == "directory":
            os.mkdir(full, 0o700)
            folder_modes.append((entry["path"].count("/"), full, entry["mode"] & 0o777))
        elif entry["kind"] == "file":
            fd = os.open(full, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
            with os.fdopen(fd, "wb") as out:
                out.write(entry["content"])
                out.flush()
                os.fchmod(out.fileno(), entry["mode"] & 0o777)
        else:
            os.symlink(os.fsdecode(entry["target"]), full)
    for _, full, mode in sorted(folder_modes, key=lambda item: -item[0]):
        os.chmod(full, mode, follow_symlinks=False)
    os.chmod(destination, root_mode & 0o777)


# --------------------------------------------------------------------------------------------
# Model key files and passphrase files
# --------------------------------------------------------------------------------------------


def read_model_key(path: str) -> tuple[str, bytes]:
    """(key ID, 32-byte key) from a .modelkey file."""
    if os.path.getsize(path) > 64 * 1024:
        raise ValueError(f"{path}: larger than 64 KiB")
    with open(path, "rb") as f:
        contents = json.loads(f.read())
    if contents.get("format") != "coffer-modelkey-v1":
        raise ValueError(f"{path}: unknown format")
    key = base64.b64decode(contents["key"], validate=True)
    if len(key) != 32:
        raise ValueError(f"{path}: key is not 32 bytes")
    return contents["id"], key


def read_passphrase_file(path: str) -> bytes:
    """The file's bytes, with one final line ending (\\n or \\r\\n) dropped."""
    with open(path, "rb") as f:
        data = f.read()
    if data.endswith(b"\r\n"):
        return data[:-2]
    return data[:-1] if data.endswith(b"\n") else data


# --------------------------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------------------------


def _key_args(parser: argparse.ArgumentParser) -> None:
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--key-file", help="a .modelkey file")
    group.add_argument("--passphrase-file", help="a file holding the passphrase (one final newline dropped)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)

    p_open = sub.add_parser("open", help="open a container: a file's plaintext to stdout, a folder to --output")
    p_open.add_argument("file")
    _key_args(p_open)
    p_open.add_argument("--output", help="write here instead of stdout (required for a folder unless --raw)")
    p_open.add_argument("--raw", action="store_true", help="write the payload as is (a folder's packed stream)")

    p_seal = sub.add_parser("seal", help="seal a file or folder")
    p_seal.add_argument("path")
    _key_args(p_seal)
    p_seal.add_argument("--output", required=True)
    p_seal.add_argument("--format-version", type=int, choices=SUPPORTED_VERSIONS, default=DEFAULT_FORMAT_VERSION,
                        help="container format version to write (default 2: content-defined chunks)")
    p_seal.add_argument("--chunk-exp", type=int, default=None,
                        help="version 1 only: chunk size 2^N, 16...20 (default 20)")
    p_seal.add_argument("--logn", type=int, default=DEFAULT_SCRYPT[0], help="scrypt log2 N for passphrases")
    p_seal.add_argument("--name", help="original name to record (default: the path's last component)")

    p_pack = sub.add_parser("pack", help="write the packed-tree stream of a folder to stdout")
    p_pack.add_argument("folder")

    p_inspect = sub.add_parser("inspect", help="print a container's header as JSON (no key needed, MAC unchecked)")
    p_inspect.add_argument("file")
    p_inspect.add_argument("--table", action="store_true",
                           help="version 2: add the chunk table (each chunk's ID in hex and plaintext length)")

    args = parser.parse_args(argv)
    try:
        if args.command == "pack":
            sys.stdout.buffer.write(pack_folder(args.folder))
            return 0
        if args.command == "inspect":
            with open(args.file, "rb") as f:
                header = parse_header(f.read())  # version 2 checks the whole length first
            shown = {k: v for k, v in header.items() if k not in ("body", "mac", "salt", "table")}
            if args.table and "table" in header:
                shown["table"] = [{"id": cid.hex(), "length": size} for cid, size in header["table"]]
            if shown["scrypt"]:
                shown["scrypt"] = {k: v for k, v in shown["scrypt"].items() if k != "salt"}
            print(json.dumps(shown, ensure_ascii=False, sort_keys=True))
            return 0
        key_id = key = passphrase = None
        if args.key_file:
            key_id, key = read_model_key(args.key_file)
        else:
            passphrase = read_passphrase_file(args.passphrase_file)
        if args.command == "open":
            with open(args.file, "rb") as f:
                data = f.read()
            header, plaintext = open_container(data, key=key, passphrase=passphrase)
            if header["payloadKind"] == KIND_FOLDER and not args.raw:
                if not args.output:
                    parser.error("a folder needs --output (or --raw)")
                restore_tree(plaintext, args.output)
            elif args.output:
                fd = os.open(args.output, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                with os.fdopen(fd, "wb") as out:
                    out.write(plaintext)
            else:
                sys.stdout.buffer.write(plaintext)
            return 0
        # seal
        if args.format_version == VERSION_2 and args.chunk_exp is not None:
            p_seal.error("--chunk-exp is for --format-version 1 (version 2 cuts chunks by content)")
        path = args.path.rstrip("/") or args.path
        if os.path.isdir(path):
            plaintext, kind = pack_folder(path), KIND_FOLDER
        else:
            with open(path, "rb") as f:
                plaintext, kind = f.read(), KIND_FILE
        name = args.name if args.name is not None else os.path.basename(os.path.abspath(path))
        sealed = seal(plaintext, key=key, key_id=key_id, passphrase=passphrase, scrypt=(args.logn, 8, 1),
                      kind=kind, name=name, format_version=args.format_version, chunk_exp=args.chunk_exp,
                      salt=os.urandom(SALT_LENGTH),
                      scrypt_salt=os.urandom(SCRYPT_SALT_LENGTH) if passphrase is not None else None)
        fd = os.open(args.output, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        with os.fdopen(fd, "wb") as out:
            out.write(sealed)
        return 0
    except RejectError as error:
        print(f"coffer_ref: refused: {error}", file=sys.stderr)
        return 1
    except (OSError, ValueError) as error:
        print(f"coffer_ref: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
