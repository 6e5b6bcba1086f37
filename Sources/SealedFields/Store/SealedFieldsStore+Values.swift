#if canImport(CryptoKit)
@preconcurrency import Crypto // CryptoKit's key types are Sendable only in Xcode 26's SDKs
#else
import Crypto
#endif
import Foundation
import GRDB

extension SealedFieldsStore {
    /// Seals one database value, bound to `associatedData`, with the active key.
    func seal(_ value: DatabaseValue, _ associatedData: AssociatedData) throws -> Data {
        try SealedValue.seal(PlainValue.encode(value), with: keyring.active, associatedData: associatedData)
    }

    /// Seals one database value for `table.column` of the record with `identity`, with the active key.
    func seal(_ value: DatabaseValue, table: String, column: String, identity: [DatabaseValue]) throws -> Data {
        try seal(value, AssociatedData(table: table, column: column, identity: identity))
    }

    /// Opens a stored ciphertext bound to `associatedData`.
    ///
    /// Anything that is not an authentic SealedFields ciphertext for exactly this place is an error.
    func open(_ stored: DatabaseValue, _ associatedData: AssociatedData, table: String, column: String) throws -> DatabaseValue {
        try open(stored, prefix: associatedData.bytes, identityFields: [], table: table, column: column)
    }

    /// Opens a stored ciphertext bound to `prefix ‖ identityFields` (see ``AssociatedData``): the read
    /// path's form, where a row's identity is encoded once for all its values.
    func open(
        _ stored: DatabaseValue, prefix: [UInt8], identityFields: [UInt8], table: String, column: String
    ) throws -> DatabaseValue {
        guard case .blob(let blob) = stored.storage else { throw SealedFieldsError.notSealed(table: table, column: column) }
        return try blob.withUnsafeBytes { sealed in
            var kept: DataKey?
            let key = try key(forSealed: sealed, kept: &kept, table: table, column: column)
            return try identityFields.withUnsafeBytes { identity in
                try open(sealed: sealed, with: key, prefix: prefix, identityFields: identity, table: table, column: column)
            }
        }
    }

    /// The data key that sealed a stored ciphertext, by the key version the ciphertext names.
    ///
    /// `kept` keeps the data key of the row's previous value: a row's values usually share one.
    func key(forSealed blob: UnsafeRawBufferPointer, kept: inout DataKey?, table: String, column: String) throws -> DataKey {
        guard let version = SealedValue.keyVersion(of: blob) else { throw SealedFieldsError.notSealed(table: table, column: column) }
        if let key = kept, key.version == version { return key }
        let key = try keyring.key(version: version)
        kept = key
        return key
    }

    /// Opens the bytes of a stored ciphertext with the data key ``key(forSealed:kept:table:column:)``
    /// found for them (see ``open(_:prefix:identityFields:table:column:)``).
    func open(
        sealed blob: UnsafeRawBufferPointer, with key: DataKey, prefix: [UInt8], identityFields: UnsafeRawBufferPointer,
        table: String, column: String
    ) throws -> DatabaseValue {
        let plaintext: Data
        do {
            plaintext = try SealedValue.open(blob, with: key, prefix: prefix, identityFields: identityFields)
        } catch {
            throw SealedFieldsError.authenticationFailure(table: table, column: column)
        }
        guard let value = PlainValue.decode(plaintext) else { throw SealedFieldsError.unsupportedFormat }
        return value
    }

    /// Opens the ciphertext stored in `table.column` of the record with `identity`.
    func open(_ stored: DatabaseValue, table: String, column: String, identity: [DatabaseValue]) throws -> DatabaseValue {
        try open(stored, AssociatedData(table: table, column: column, identity: identity), table: table, column: column)
    }

    /// The blind index of `value` in `table.column`, with the active key.
    func blindIndex(_ value: DatabaseValue, table: String, column: String) -> Data {
        BlindIndex.compute(PlainValue.encode(value), with: keyring.active, table: table, column: column)
    }

    /// The blind indexes of `value` under every readable key, for search while a rotation is under way.
    func blindIndexes(_ value: DatabaseValue, table: String, column: String) -> [Data] {
        let plaintext = PlainValue.encode(value)
        return keyring.all.map { BlindIndex.compute(plaintext, with: $0, table: table, column: column) }
    }
}
