import Foundation
import GRDB

extension SealedRecord where Self: Encodable {
    /// GRDB's own `Codable` encoding of the record, then ``sealValues(in:)``.
    public func encode(to container: inout PersistenceContainer) throws {
        try PlainEncoding(record: self).encode(to: &container)
        try Self.sealValues(in: &container)
    }
}

extension SealedRecord where Self: Decodable {
    /// Opens the row's sealed columns, then decodes the record with GRDB's own `Codable` decoding: the
    /// same record as ``unsealedRow(_:)`` followed by GRDB's `init(row:)`.
    ///
    /// With GRDB's default keys the fetched row is not copied: the columns that are not sealed are
    /// read straight from the statement as GRDB reads them, and the sealed ones are decoded from their
    /// opened values (the ``OpenedRow`` is the decoder). With another column decoding strategy the row is rebuilt
    /// with its sealed columns opened, then decoded.
    ///
    /// A row whose opened values do not decode (a column's type changed in an app update, a NULL in
    /// a non-optional) throws a `DecodingError` that quotes none of them: the errors GRDB gives
    /// quote the values they read, here opened plaintext, and errors end up in logs and crash reports.
    public init(row: Row) throws {
        let table = SealedTable.of(Self.self)
        let store = try Self.requireStore()
        guard case .useDefaultKeys = Self.databaseColumnDecodingStrategy else {
            let opened = try table.open(row, with: store)
            self = try Self.withoutValues(table) { try DecoderCapture<Self>.record(from: opened) }
            return
        }
        guard let opened = try OpenedRow(row, of: table, with: store, as: Self.self) else {
            self = try DecoderCapture<Self>.record(from: row)
            return
        }
        // Plain columns are read from the fetched row (ciphertext only, so GRDB's errors stand);
        // opened values are decoded without quoting them (``OpenedRow``'s container).
        self = try Self(from: opened)
    }

    /// Runs a decoding of opened values; an error other than ``SealedFieldsError`` becomes one
    /// that quotes no value.
    private static func withoutValues(_ table: SealedTable, _ body: () throws -> Self) throws -> Self {
        do {
            return try body()
        } catch let error as SealedFieldsError {
            throw error
        } catch {
            throw DecodingError.dataCorrupted(.init(
                codingPath: [],
                debugDescription: "a row of \(table.name) with sealed columns cannot be decoded as \(Self.self) (its values are not shown)"))
        }
    }
}

/// The record as GRDB encodes any `Encodable` record, with the record's own encoding strategies.
private struct PlainEncoding<Record: EncodableRecord & Encodable>: Encodable, EncodableRecord {
    let record: Record
    func encode(to encoder: any Encoder) throws { try record.encode(to: encoder) }
    static var databaseEncodingUserInfo: [CodingUserInfoKey: Any] { Record.databaseEncodingUserInfo }
    static func databaseJSONEncoder(for column: String) -> JSONEncoder { Record.databaseJSONEncoder(for: column) }
    static func databaseDataEncodingStrategy(for column: String) -> DatabaseDataEncodingStrategy {
        Record.databaseDataEncodingStrategy(for: column)
    }
    static func databaseDateEncodingStrategy(for column: String) -> DatabaseDateEncodingStrategy {
        Record.databaseDateEncodingStrategy(for: column)
    }
    static func databaseUUIDEncodingStrategy(for column: String) -> DatabaseUUIDEncodingStrategy {
        Record.databaseUUIDEncodingStrategy(for: column)
    }
    static var databaseColumnEncodingStrategy: DatabaseColumnEncodingStrategy { Record.databaseColumnEncodingStrategy }
}
