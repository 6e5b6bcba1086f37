#!/usr/bin/env python3
"""An independent reader of docs/SEALEDFIELDS.md, written from the spec alone.

usage: open_sealed.py DATABASE RAW_KEY_HEX TABLE ID_HEX COLUMN...
Opens a database whose key-encryption key is a raw key, checks the verifier, unwraps every data
key, and prints each named column of the row whose (blob) id is ID_HEX as `column=value`, after
checking the derived nonce and, when a column `<column>Index` exists, its blind index.
"""
import hashlib
import hmac
import sqlite3
import struct
import sys

from cryptography.hazmat.primitives.ciphers.aead import AESGCM


def hkdf(ikm, salt, info, length=32):
    prk = hmac.new(salt, ikm, hashlib.sha256).digest()
    out, block, counter = b"", b"", 1
    while len(out) < length:
        block = hmac.new(prk, block + info + bytes([counter]), hashlib.sha256).digest()
        out += block
        counter += 1
    return out[:length]


def field(data):
    return struct.pack(">I", len(data)) + data


def plain(value):
    if value is None:
        return b"\x00"
    if isinstance(value, int):
        return b"\x01" + struct.pack(">q", value)
    if isinstance(value, float):
        return b"\x02" + struct.pack(">d", value)
    if isinstance(value, str):
        return b"\x03" + value.encode()
    return b"\x04" + bytes(value)


def decode_plain(data):
    tag, body = data[0], data[1:]
    return {0: lambda: None, 1: lambda: struct.unpack(">q", body)[0], 2: lambda: struct.unpack(">d", body)[0],
            3: lambda: body.decode(), 4: lambda: body.hex()}[tag]()


def main():
    path, raw_hex, table, id_hex, *columns = sys.argv[1:]
    db = sqlite3.connect(path)
    kdf, salt, verifier = db.execute("SELECT kdf, salt, verifier FROM sealedfields_meta WHERE id = 1").fetchone()
    assert kdf == "raw"
    kek = bytes.fromhex(raw_hex)
    wrap_key = hkdf(kek, salt, b"sealedfields.wrap.v1")
    verifier_key = hkdf(kek, salt, b"sealedfields.verifier.v1")
    if not hmac.compare_digest(hmac.new(verifier_key, b"sealedfields.verifier.v1", hashlib.sha256).digest(), verifier):
        sys.exit("wrong key")
    keys = {}
    for version, wrapped in db.execute("SELECT version, wrapped FROM sealedfields_keys"):
        material = AESGCM(wrap_key).decrypt(wrapped[:12], wrapped[12:], b"sealedfields.key.v1" + struct.pack(">I", version))
        keys[version] = {name: hkdf(material, b"", b"sealedfields.%s.v1" % name.encode()) for name in ("value", "nonce", "index")}
    identity = bytes.fromhex(id_hex)
    names = [row[1] for row in db.execute(f'PRAGMA table_info("{table}")')]
    row = dict(zip(names, db.execute(f'SELECT * FROM "{table}" WHERE id = ?', (identity,)).fetchone()))
    for column in columns:
        blob = row[column]
        header, nonce, body = blob[:6], blob[6:18], blob[18:]
        assert header[:2] == b"\x01\x01"
        key = keys[struct.unpack(">I", header[2:6])[0]]
        prefix = b"sealedfields.value.v1" + field(table.lower().encode()) + field(column.lower().encode())
        aad = prefix + field(plain(identity)) + header
        value = AESGCM(key["value"]).decrypt(nonce, body, aad)
        assert hmac.new(key["nonce"], aad + value, hashlib.sha256).digest()[:12] == nonce, "nonce"
        index = row.get(column + "Index")
        if index is not None:
            assert index[0] == 2 and index[1:5] == header[2:6], "index header"
            assert hmac.new(key["index"], prefix + value, hashlib.sha256).digest()[:16] == index[5:], "index"
        print(f"{column}={decode_plain(value)}")


main()
