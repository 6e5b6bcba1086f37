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
    /// ``unsealedRow(_:)``, then GRDB's own `Codable` decoding of the record.
    public init(row: Row) throws {
        self = try PlainDecoding<Self>(row: Self.unsealedRow(row)).record
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

/// The record as GRDB decodes any `Decodable` record, with the record's own decoding strategies.
private struct PlainDecoding<Record: FetchableRecord & Decodable>: Decodable, FetchableRecord {
    let record: Record
    init(from decoder: any Decoder) throws { record = try Record(from: decoder) }
    static var databaseDecodingUserInfo: [CodingUserInfoKey: Any] { Record.databaseDecodingUserInfo }
    static func databaseJSONDecoder(for column: String) -> JSONDecoder { Record.databaseJSONDecoder(for: column) }
    static func databaseDataDecodingStrategy(for column: String) -> DatabaseDataDecodingStrategy {
        Record.databaseDataDecodingStrategy(for: column)
    }
    static func databaseDateDecodingStrategy(for column: String) -> DatabaseDateDecodingStrategy {
        Record.databaseDateDecodingStrategy(for: column)
    }
    static var databaseColumnDecodingStrategy: DatabaseColumnDecodingStrategy { Record.databaseColumnDecodingStrategy }
}
