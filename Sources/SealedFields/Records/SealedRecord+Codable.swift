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
    public init(row: Row) throws {
        let table = SealedTable.of(Self.self)
        let store = try Self.requireStore()
        guard case .useDefaultKeys = Self.databaseColumnDecodingStrategy else {
            self = try DecoderCapture<Self>.record(from: table.open(row, with: store))
            return
        }
        guard let opened = try OpenedRow(row, of: table, with: store, as: Self.self) else {
            self = try DecoderCapture<Self>.record(from: row)
            return
        }
        self = try Self(from: opened)
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
