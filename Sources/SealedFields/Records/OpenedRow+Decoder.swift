import Foundation
import GRDB

/// An ``OpenedRow`` decodes its record without copying the row. Keys of opened sealed columns are
/// answered from their opened values as GRDB would answer them (anything GRDB would decode
/// specially, a one-column row of the opened value decoded by GRDB itself). Other keys are answered
/// from the fetched row with the very calls GRDB's own keyed container makes for them
/// (`Row.decode(_:forColumn:)` for scalars, `UUID`, and dates and data with the default strategies);
/// anything else (other types, other strategies, scopes, missing columns, a value GRDB refuses) goes
/// to GRDB's decoder of the fetched row, made the first time a record needs it. Used with GRDB's
/// default keys only (see ``SealedRecord/init(row:)``), where a key names its column.
///
/// Anything but keyed decoding (unkeyed, single value, nested containers, super decoders) goes to
/// GRDB's decoder of the whole row with its sealed columns opened (``OpenedRow/fullDecoder()``): the
/// same answers as the row rebuilt by ``SealedRecord/unsealedRow(_:)``, more slowly.
///
/// Nothing here is generic over the record: a generic type's metadata is looked up at run time each
/// time it is used from another module, which cost more than the rest of the decoding. The opened row
/// is its own decoder: one object per row, where a separate decoder class was another allocation.
extension OpenedRow: Decoder {
    /// GRDB's decoder of the fetched row with the record's strategies, made once, when first needed.
    func grdbDecoder() throws -> any Decoder {
        if let grdb = fetchedRowDecoder { return grdb }
        let decoder = try decoder(of: row)
        fetchedRowDecoder = decoder
        return decoder
    }

    /// A record is decoded from the row's root, as GRDB's decoder does.
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { recordType?.databaseDecodingUserInfo ?? [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(OpenedRowContainer<Key>(decoder: self))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer { try fullDecoder().unkeyedContainer() }
    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        try fullDecoder().singleValueContainer()
    }
}

/// The keyed container of an ``OpenedRow``: each key goes to the opened value of its sealed
/// column, or else to the fetched row as GRDB's container would read it. A class: `KeyedDecodingContainer`
/// calls a struct through copies of it, and code generic over `Key` finds a struct's fields through
/// its metadata, looked up at run time; a class reference carries both.
final class OpenedRowContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let decoder: OpenedRow
    /// GRDB's `KeyedDecodingContainer<Key>`, once made. Kept as `Any`: a stored property of a type
    /// generic over `Key` costs a metadata lookup each time a container is released.
    private var grdb: Any?

    init(decoder: OpenedRow) {
        self.decoder = decoder
    }

    private var opened: OpenedRow { decoder }
    private var row: Row { decoder.row }

    /// GRDB's container of the fetched row, for what is not answered here.
    private var base: KeyedDecodingContainer<Key> {
        get throws {
            if let grdb { return grdb as! KeyedDecodingContainer<Key> }
            let container = try decoder.grdbDecoder().container(keyedBy: Key.self)
            grdb = container
            return container
        }
    }

    var codingPath: [any CodingKey] { [] }
    var allKeys: [Key] { (try? base.allKeys) ?? [] }
    func contains(_ key: Key) -> Bool { (try? base.contains(key)) ?? false }

    func decodeNil(forKey key: Key) throws -> Bool {
        guard let index = opened.columnIndex(forKey: key.stringValue) else { return try base.decodeNil(forKey: key) }
        return opened.columns[index].value.isNull
    }

    // The concrete overloads read a column that is not sealed with the call GRDB's container makes
    // (`Row.decode(_:forColumn:)`, same values, same errors), and are written out: a helper generic
    // over the type would look up `Optional<T>`'s metadata at every call. What needs GRDB's own
    // container (`KeyedDecodingContainer<Key>`) is in functions of its own that are never inlined:
    // a function that names that type looks its metadata up on entry, whichever path it takes.
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
        let name = key.stringValue
        guard let index = opened.columnIndex(forKey: name) else { return try row.decode(type, forColumn: name) }
        if let value = Bool.fromDatabaseValue(opened.columns[index].value) { return value }
        return try decodeSingle(type, forKey: key, at: index)
    }
    func decode(_ type: String.Type, forKey key: Key) throws -> String {
        let name = key.stringValue
        guard let index = opened.columnIndex(forKey: name) else { return try row.decode(type, forColumn: name) }
        if let value = String.fromDatabaseValue(opened.columns[index].value) { return value }
        return try decodeSingle(type, forKey: key, at: index)
    }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double {
        let name = key.stringValue
        guard let index = opened.columnIndex(forKey: name) else { return try row.decode(type, forColumn: name) }
        if let value = Double.fromDatabaseValue(opened.columns[index].value) { return value }
        return try decodeSingle(type, forKey: key, at: index)
    }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float {
        let name = key.stringValue
        guard let index = opened.columnIndex(forKey: name) else { return try row.decode(type, forColumn: name) }
        if let value = Float.fromDatabaseValue(opened.columns[index].value) { return value }
        return try decodeSingle(type, forKey: key, at: index)
    }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int {
        let name = key.stringValue
        guard let index = opened.columnIndex(forKey: name) else { return try row.decode(type, forColumn: name) }
        if let value = Int.fromDatabaseValue(opened.columns[index].value) { return value }
        return try decodeSingle(type, forKey: key, at: index)
    }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 {
        let name = key.stringValue
        guard let index = opened.columnIndex(forKey: name) else { return try row.decode(type, forColumn: name) }
        if let value = Int8.fromDatabaseValue(opened.columns[index].value) { return value }
        return try decodeSingle(type, forKey: key, at: index)
    }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 {
        let name = key.stringValue
        guard let index = opened.columnIndex(forKey: name) else { return try row.decode(type, forColumn: name) }
        if let value = Int16.fromDatabaseValue(opened.columns[index].value) { return value }
        return try decodeSingle(type, forKey: key, at: index)
    }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 {
        let name = key.stringValue
        guard let index = opened.columnIndex(forKey: name) else { return try row.decode(type, forColumn: name) }
        if let value = Int32.fromDatabaseValue(opened.columns[index].value) { return value }
        return try decodeSingle(type, forKey: key, at: index)
    }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 {
        let name = key.stringValue
        guard let index = opened.columnIndex(forKey: name) else { return try row.decode(type, forColumn: name) }
        if let value = Int64.fromDatabaseValue(opened.columns[index].value) { return value }
        return try decodeSingle(type, forKey: key, at: index)
    }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt {
        let name = key.stringValue
        guard let index = opened.columnIndex(forKey: name) else { return try row.decode(type, forColumn: name) }
        if let value = UInt.fromDatabaseValue(opened.columns[index].value) { return value }
        return try decodeSingle(type, forKey: key, at: index)
    }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 {
        let name = key.stringValue
        guard let index = opened.columnIndex(forKey: name) else { return try row.decode(type, forColumn: name) }
        if let value = UInt8.fromDatabaseValue(opened.columns[index].value) { return value }
        return try decodeSingle(type, forKey: key, at: index)
    }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 {
        let name = key.stringValue
        guard let index = opened.columnIndex(forKey: name) else { return try row.decode(type, forColumn: name) }
        if let value = UInt16.fromDatabaseValue(opened.columns[index].value) { return value }
        return try decodeSingle(type, forKey: key, at: index)
    }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 {
        let name = key.stringValue
        guard let index = opened.columnIndex(forKey: name) else { return try row.decode(type, forColumn: name) }
        if let value = UInt32.fromDatabaseValue(opened.columns[index].value) { return value }
        return try decodeSingle(type, forKey: key, at: index)
    }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 {
        let name = key.stringValue
        guard let index = opened.columnIndex(forKey: name) else { return try row.decode(type, forColumn: name) }
        if let value = UInt64.fromDatabaseValue(opened.columns[index].value) { return value }
        return try decodeSingle(type, forKey: key, at: index)
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        let name = key.stringValue
        guard let index = opened.columnIndex(forKey: name) else {
            // A column that is not sealed, read as GRDB's container reads a `UUID`, and a `Date` or
            // `Data` under the default strategy. Other types and strategies, a missing column (a
            // scope?) and a value GRDB refuses go to GRDB's container, which gives its own error.
            if T.self == UUID.self, let value = try? row.decode(UUID.self, forColumn: name) { return sameType(value) }
            if T.self == Date.self, case .deferredToDate = opened.recordType?.databaseDateDecodingStrategy(for: name) ?? .deferredToDate,
               let value = try? row.decode(Date.self, forColumn: name) {
                return sameType(value)
            }
            if T.self == Data.self, case .deferredToData = opened.recordType?.databaseDataDecodingStrategy(for: name) ?? .deferredToData,
               let value = try? row.decode(Data.self, forColumn: name) {
                return sameType(value)
            }
            return try decodeFetched(type, forKey: key)
        }
        return try decodeOpened(type, forKey: key, at: index)
    }

    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        guard let index = opened.columnIndex(forKey: key.stringValue) else { return try decodeFetchedIfPresent(type, forKey: key) }
        if opened.columns[index].value.isNull { return nil }
        return try decodeOpened(type, forKey: key, at: index)
    }

    /// A key GRDB's container of the fetched row answers.
    @inline(never)
    private func decodeFetched<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try base.decode(type, forKey: key)
    }

    @inline(never)
    private func decodeFetchedIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        try base.decodeIfPresent(type, forKey: key)
    }

    /// The opened value at `index` as `T`: directly when GRDB would convert the database value, else
    /// through GRDB's container of a one-column row.
    @inline(never)
    private func decodeOpened<T: Decodable>(_ type: T.Type, forKey key: Key, at index: Int) throws -> T {
        if let decoded: T = direct(opened.columns[index]) { return decoded }
        return try decodeSingle(type, forKey: key, at: index)
    }

    /// The opened value at `index` decoded by GRDB's container of a one-column row (GRDB's value or error).
    @inline(never)
    private func decodeSingle<T: Decodable>(_ type: T.Type, forKey key: Key, at index: Int) throws -> T {
        try withoutValues(key, T.self) { try single(opened.columns[index]).decode(type, forKey: key) }
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        try withoutValues(key, NestedKey.self) { try full().nestedContainer(keyedBy: type, forKey: key) }
    }
    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try withoutValues(key, (any UnkeyedDecodingContainer).self) { try full().nestedUnkeyedContainer(forKey: key) }
    }
    func superDecoder() throws -> any Decoder { try withoutValues(nil, (any Decoder).self) { try full().superDecoder() } }
    func superDecoder(forKey key: Key) throws -> any Decoder {
        try withoutValues(key, (any Decoder).self) { try full().superDecoder(forKey: key) }
    }

    /// Runs a decoding that reads opened values. GRDB words its errors with the values it read (a
    /// `row: [...]` of the whole opened row, or the value it could not convert): such an error
    /// becomes one that names the column and the type only, since errors end up in logs.
    private func withoutValues<T>(_ key: Key?, _ wanted: Any.Type, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as SealedFieldsError {
            throw error
        } catch {
            let column = key.map { "\($0.stringValue) of " } ?? ""
            throw DecodingError.dataCorrupted(.init(
                codingPath: codingPath + (key.map { [$0] } ?? []),
                debugDescription: "\(column)a row of \(opened.table.name) with sealed columns cannot be decoded as \(wanted) (its values are not shown)"))
        }
    }

    /// The value as GRDB decodes a plain database value into `T`; nil for what GRDB decodes another
    /// way (dates and data with a strategy, JSON, records) and for a value `T` cannot take, whose error
    /// GRDB itself gives (``single(_:)``).
    private func direct<T>(_ column: OpenedColumn) -> T? {
        if T.self == Date.self {
            let strategy = opened.recordType?.databaseDateDecodingStrategy(for: opened.name(of: column)) ?? .deferredToDate
            guard case .deferredToDate = strategy else { return nil }
        } else if T.self == Data.self {
            let strategy = opened.recordType?.databaseDataDecodingStrategy(for: opened.name(of: column)) ?? .deferredToData
            guard case .deferredToData = strategy else { return nil }
        }
        guard let type = T.self as? any DatabaseValueConvertible.Type else { return nil }
        return type.fromDatabaseValue(column.value) as? T
    }

    /// GRDB's container of a one-column row holding an opened value, with the record's strategies.
    private func single(_ column: OpenedColumn) throws -> KeyedDecodingContainer<Key> {
        try opened.decoder(of: Row([opened.name(of: column): column.value])).container(keyedBy: Key.self)
    }

    private func full() throws -> KeyedDecodingContainer<Key> { try opened.fullDecoder().container(keyedBy: Key.self) }
}

extension OpenedRow {
    /// GRDB's decoder of `row` with the record's decoding strategies.
    func decoder(of row: Row) throws -> any Decoder {
        let type: any (FetchableRecord & Decodable).Type = recordType ?? DefaultStrategies.self
        return try Self.decoder(of: row, as: type)
    }

    /// GRDB's decoder of the whole row with its sealed columns opened.
    func fullDecoder() throws -> any Decoder { try decoder(of: table.open(row, with: store)) }

    private static func decoder<Record: FetchableRecord & Decodable>(of row: Row, as type: Record.Type) throws -> any Decoder {
        try DecoderCapture<Record>(row: row).decoder
    }
}

/// GRDB's decoder for a row, with the record's own decoding strategies, kept to decode the record with.
struct DecoderCapture<Record: FetchableRecord & Decodable>: Decodable, FetchableRecord {
    let decoder: any Decoder
    init(from decoder: any Decoder) throws { self.decoder = decoder }
    /// The record as GRDB decodes any `Decodable` record from `row`, with the record's own strategies.
    static func record(from row: Row) throws -> Record { try Record(from: Self(row: row).decoder) }
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

/// GRDB's default decoding strategies, for rows decoded without a record type.
private struct DefaultStrategies: FetchableRecord, Decodable {}

/// `value` as `T`, which the caller checked is its type: a copy, without the dynamic cast (and the
/// `Optional<T>` metadata) that `as? T` costs, or the generic closure that reading it through a
/// pointer costs. A free function: a static one of a type generic over `Key` would look that type's
/// metadata up at each call.
private func sameType<Value, T>(_ value: Value) -> T {
    precondition(Value.self == T.self)
    return unsafeBitCast(value, to: T.self)
}
