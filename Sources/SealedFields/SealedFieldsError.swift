/// Why SealedFields refused to go on.
///
/// Messages name tables, columns and key versions only: never a value, a passphrase or a key.
public enum SealedFieldsError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The passphrase or raw key does not match the database's verifier. Nothing was read or written.
    case wrongKey
    /// A sealed value failed authentication: it was altered, moved to another row or column, or is not
    /// a SealedFields ciphertext. One error, whatever the cause.
    case authenticationFailure(table: String, column: String)
    /// A sealed column holds something that is not a SealedFields ciphertext (plaintext or NULL written
    /// around SealedFields). ``SealedFieldsStore/sealPlaintext(_:batchSize:progress:)`` seals such values.
    case notSealed(table: String, column: String)
    /// A ciphertext names a key version this database does not have (or no longer has).
    case unknownKeyVersion(UInt32)
    /// A ciphertext or key record uses a format or algorithm this version of SealedFields does not know.
    case unsupportedFormat
    /// A record has no value for an identity column, so its sealed values cannot be bound to it.
    /// Give sealed records an identity (for example a UUID) before they are first saved.
    case missingIdentity(table: String, column: String)
    /// A key version is still used by sealed values or blind indexes and cannot be retired.
    case keyInUse(version: UInt32, values: Int)
    /// The active key cannot be retired: rotate first.
    case activeKey(version: UInt32)
    /// No store is open for a sealed record type (see ``SealedRecord/sealedStore``).
    case noStore(table: String)
    /// The column has no blind index (see ``SealedRecord/blindIndexColumns``).
    case noBlindIndex(table: String, column: String)
    /// A record names `column` among its sealed columns but does not encode a value for it: the name
    /// is misspelt, or differs from the column the record writes (e.g. `secretWord` for
    /// `secret_word`). Refused before anything is written: the value would be stored in the clear.
    case unknownColumn(table: String, column: String)
    /// The database's SealedFields tables are missing parts or hold values that cannot be right.
    case corruptKeyTables
    /// The scrypt parameters (stored in the database, or given for a new store) need more than
    /// 256 MiB of memory (128 · r · N bytes), the limit CofferFormat also enforces. Refused before
    /// anything is derived or allocated.
    case scryptCostTooHigh
    /// Another store on the same database changed its passphrase or key since this store opened;
    /// nothing was written. Open the store again with the new passphrase or key.
    case keyChanged
    /// A passphrase must not be empty.
    case emptyPassphrase
    /// A raw key must be 32 bytes.
    case invalidRawKey

    /// One line, without secrets or plaintext.
    public var description: String {
        switch self {
        case .wrongKey:
            return "wrong passphrase or key for this database (nothing was read or written)"
        case .authenticationFailure(let table, let column):
            return "sealed value in \(table).\(column) failed authentication"
        case .notSealed(let table, let column):
            return "\(table).\(column) holds a value that is not sealed; run sealPlaintext to seal it"
        case .unknownKeyVersion(let version):
            return "no data key with version \(version) in this database"
        case .unsupportedFormat:
            return "sealed value or key record in an unsupported format"
        case .missingIdentity(let table, let column):
            return "\(table).\(column) is empty: a sealed record needs its identity before it is saved"
        case .keyInUse(let version, let values):
            return "data key \(version) is still used by \(values) value(s); re-encrypt before retiring it"
        case .activeKey(let version):
            return "data key \(version) is the one that writes; rotate before retiring it"
        case .noStore(let table):
            return "no SealedFields store is open for \(table)"
        case .noBlindIndex(let table, let column):
            return "\(table).\(column) has no blind index"
        case .unknownColumn(let table, let column):
            return "\(table) names \(column) as a sealed column, but the record encodes no such column; check the name (nothing was written)"
        case .corruptKeyTables:
            return "the SealedFields key tables are damaged"
        case .scryptCostTooHigh:
            return "the scrypt parameters need more than 256 MiB of memory (128 · r · N); refused before deriving"
        case .keyChanged:
            return "the database's passphrase or key was changed by another store since this one opened; open it again (nothing was written)"
        case .emptyPassphrase:
            return "the passphrase is empty"
        case .invalidRawKey:
            return "a raw key must be 32 bytes"
        }
    }
}
