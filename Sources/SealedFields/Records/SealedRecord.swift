import Foundation
import GRDB

/// A GRDB record whose chosen columns are stored sealed.
///
/// Mark the sealed properties and keep using the record as before:
///
/// ```swift
/// struct Item: Codable, FetchableRecord, PersistableRecord, SealedRecord {
///     var id: UUID
///     var name: String
///     var identifier: String
///     var creationDate: Date
///     static let sealedColumns = ["name", "identifier", "creationDate"]
/// }
/// ```
///
/// For `Codable` records, SealedFields provides `encode(to:)` and `init(row:)`: GRDB encodes the record
/// as usual, then the sealed columns are sealed; fetched rows are opened, then GRDB decodes them. Records
/// with hand-written `encode(to:)` / `init(row:)` call ``sealValues(in:)`` and ``unsealedRow(_:)``.
///
/// Every ciphertext is bound to the table, the column and the record's identity
/// (``sealedIdentityColumns``, `id` by default), which must be known before the record is first saved:
/// use app-assigned identifiers such as UUIDs rather than auto-incremented ids.
///
/// Writes that bypass records (`updateAll`, raw SQL) bypass sealing, and rows with sealed columns are
/// decoded by column name, without association scopes.
public protocol SealedRecord: FetchableRecord, EncodableRecord, TableRecord {
    /// The columns stored sealed.
    static var sealedColumns: [String] { get }
    /// The columns whose values identify a row and are bound into each ciphertext. Default: `["id"]`.
    static var sealedIdentityColumns: [String] { get }
    /// Blind-index columns, by sealed column, for equality search (see ``filter(sealed:equals:)``).
    /// Default: none.
    static var blindIndexColumns: [String: String] { get }
    /// The store whose keys seal and open this record. Default: ``SealedFieldsStore/shared``.
    static var sealedStore: SealedFieldsStore? { get }
}

extension SealedRecord {
    /// `["id"]`.
    public static var sealedIdentityColumns: [String] { ["id"] }
    /// No blind indexes.
    public static var blindIndexColumns: [String: String] { [:] }
    /// ``SealedFieldsStore/shared``.
    public static var sealedStore: SealedFieldsStore? { SealedFieldsStore.shared }

    static func requireStore() throws -> SealedFieldsStore {
        guard let store = sealedStore else { throw SealedFieldsError.noStore(table: databaseTableName) }
        return store
    }

    /// Seals the values of ``sealedColumns`` in a container filled by a hand-written `encode(to:)`, and
    /// fills their blind indexes. Call it last.
    public static func sealValues(in container: inout PersistenceContainer) throws {
        try SealedTable.of(Self.self).seal(&container, with: requireStore())
    }

    /// The row with its sealed columns opened, for a hand-written `init(row:)`. Read it by column name.
    public static func unsealedRow(_ row: Row) throws -> Row {
        try SealedTable.of(Self.self).open(row, with: requireStore())
    }
}
