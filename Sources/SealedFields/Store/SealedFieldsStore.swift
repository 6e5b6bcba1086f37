#if canImport(CryptoKit)
@preconcurrency import Crypto // CryptoKit's key types are Sendable only in Xcode 26's SDKs
#else
import Crypto
#endif
import Foundation
import GRDB

/// The keys of one sealed database, opened and verified.
///
/// Open it once, when the app has the passphrase or its raw key, on the same `DatabaseQueue` or
/// `DatabasePool` the app uses:
///
/// ```swift
/// let dbPool = try DatabasePool(path: path)
/// let store = try SealedFieldsStore(dbPool, key: .passphrase(passphrase))
/// ```
///
/// A wrong passphrase or key throws ``SealedFieldsError/wrongKey`` after reading the key tables only:
/// nothing is written and no sealed row is read. A database without SealedFields tables gets them, with
/// a first random data key, wrapped by a key-encryption key derived from `key`.
///
/// Record types conforming to ``SealedRecord`` use ``shared`` unless they name another store.
public final class SealedFieldsStore: Sendable {
    /// The database this store's keys belong to.
    public let writer: any DatabaseWriter
    let keyring: Keyring
    let kek: LockedValue<KeyEncryptionKey>

    /// Opens (or, in a database without SealedFields tables, creates) the store.
    ///
    /// - Parameters:
    ///   - writer: the app's database.
    ///   - key: a passphrase (scrypt) or a raw 32-byte key.
    ///   - makeShared: make this the ``shared`` store that ``SealedRecord`` types use by default.
    public init(_ writer: some DatabaseWriter, key: KeySource, makeShared: Bool = true) throws {
        self.writer = writer
        if case let (meta, wrapped)? = try writer.read({ try KeyTables.load($0) }) {
            (kek, keyring) = try Self.unlock(meta: meta, wrapped: wrapped, key: key)
        } else {
            (kek, keyring) = try writer.write { db in
                // Another process may have created the tables since the read above.
                if case let (meta, wrapped)? = try KeyTables.load(db) {
                    return try Self.unlock(meta: meta, wrapped: wrapped, key: key)
                }
                return try Self.create(db, key: key)
            }
        }
        if makeShared { Self.sharedStore.set(self) }
    }

    private static func unlock(meta: KeyTables.Meta, wrapped: [KeyTables.WrappedKey], key: KeySource)
        throws -> (LockedValue<KeyEncryptionKey>, Keyring)
    {
        switch (key, meta.kdf) {
        case (.passphrase, "scrypt"), (.rawKey, "raw"): break
        default: throw SealedFieldsError.wrongKey
        }
        let kek = try KeyEncryptionKey(source: key, salt: meta.salt, scrypt: meta.scrypt)
        guard kek.matches(verifier: meta.verifier) else { throw SealedFieldsError.wrongKey }
        let (keys, active) = try KeyTables.unwrap(wrapped, with: kek)
        return (LockedValue(kek), Keyring(keys: keys, active: active))
    }

    private static func create(_ db: Database, key: KeySource) throws -> (LockedValue<KeyEncryptionKey>, Keyring) {
        let (meta, kek) = try newMeta(for: key)
        let first = DataKey.random(version: 1)
        try KeyTables.create(db)
        try KeyTables.saveMeta(db, meta)
        try KeyTables.saveKey(db, version: 1, wrapped: kek.wrap(first), active: true)
        return (LockedValue(kek), Keyring(keys: [1: first], active: 1))
    }

    /// A fresh salt and the KEK and verifier for `key`.
    static func newMeta(for key: KeySource) throws -> (KeyTables.Meta, KeyEncryptionKey) {
        let salt = (0..<16).map { _ in UInt8.random(in: .min ... .max) }
        let scrypt: ScryptParameters?
        switch key {
        case .passphrase(_, let parameters): scrypt = parameters
        case .rawKey: scrypt = nil
        }
        let kek = try KeyEncryptionKey(source: key, salt: salt, scrypt: scrypt)
        let meta = KeyTables.Meta(kdf: scrypt == nil ? "raw" : "scrypt", scrypt: scrypt, salt: salt, verifier: kek.verifier)
        return (meta, kek)
    }

    // MARK: - The shared store

    private static let sharedStore = LockedValue<SealedFieldsStore?>(nil)

    /// The store that ``SealedRecord`` types use unless they override ``SealedRecord/sealedStore``:
    /// the last one opened with `makeShared: true`, or set here (set nil when the app locks its data).
    public static var shared: SealedFieldsStore? {
        get { sharedStore.get() }
        set { sharedStore.set(newValue) }
    }

    /// The version of the data key that seals new values.
    public var activeKeyVersion: UInt32 { keyring.active.version }

    /// The versions of the data keys this store can read.
    public var keyVersions: [UInt32] { keyring.all.map(\.version) }
}

/// A value behind a lock, for the few mutable parts of a `Sendable` store.
final class LockedValue<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func get() -> Value { lock.locked { value } }
    /// What `body` reads of the value, without copying the value out (a dictionary's lookup, say).
    func read<Result>(_ body: (Value) -> Result) -> Result { lock.locked { body(value) } }
    func set(_ newValue: Value) { lock.locked { value = newValue } }
    func update(_ body: (inout Value) -> Void) { lock.locked { body(&value) } }
}
