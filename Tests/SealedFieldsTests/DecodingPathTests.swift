import Foundation
import GRDB
@testable import SealedFields
import Testing

/// `init(row:)` decodes a fetched row without rebuilding it (``OpenedRowDecoder``) when the record uses
/// GRDB's default keys, and rebuilds it otherwise. Both must give what GRDB gives for the plain row:
/// the same values for every kind of column, the same refusals, whatever the query's spelling.
extension SealedFields {
    @Suite struct DecodingPaths {
        enum Shade: String, Codable, DatabaseValueConvertible { case light, dark }

        struct Sample: Codable, Equatable, FetchableRecord, PersistableRecord, SealedRecord {
            var id: UUID
            var flag: Bool
            var small: Int8
            var large: UInt64
            var ratio: Float
            var shade: Shade
            var seen: Date
            var stamp: Date
            var blob: Data
            var missing: String?
            var note: String
            static let sealedColumns = ["flag", "small", "large", "ratio", "shade", "seen", "stamp", "blob", "missing"]
            // A strategy on one sealed date: GRDB, not the fast path, decodes that column.
            static func databaseDateDecodingStrategy(for column: String) -> DatabaseDateDecodingStrategy {
                column == "stamp" ? .millisecondsSince1970 : .deferredToDate
            }
            static func databaseDateEncodingStrategy(for column: String) -> DatabaseDateEncodingStrategy {
                column == "stamp" ? .millisecondsSince1970 : .deferredToDate
            }
        }

        /// The same table read with snake-case keys: the rebuilt-row path.
        struct SnakeSample: Codable, Equatable, FetchableRecord, PersistableRecord, SealedRecord {
            static let databaseTableName = "snake"
            var id: UUID
            var secretWord: String
            var plainWord: String
            static let sealedColumns = ["secret_word"]
            static let databaseColumnDecodingStrategy = DatabaseColumnDecodingStrategy.convertFromSnakeCase
            static let databaseColumnEncodingStrategy = DatabaseColumnEncodingStrategy.convertToSnakeCase
        }

        static let sample = Sample(
            id: UUID(), flag: true, small: -7, large: UInt64(Int64.max), ratio: 0.25, shade: .dark,
            seen: Date(timeIntervalSince1970: 1_700_000_000.5), stamp: Date(timeIntervalSince1970: 1_600_000_000),
            blob: Data([0, 255, 1]), missing: nil, note: "plain")

        func database() throws -> (DatabaseQueue, TemporaryDirectory) {
            let dir = try TemporaryDirectory()
            let dbQueue = try DatabaseQueue(path: dir.path("paths.sqlite"))
            try dbQueue.write { db in
                try db.create(table: "sample") { t in
                    t.primaryKey("id", .blob)
                    for column in Sample.sealedColumns { t.column(column, .blob) }
                    t.column("note", .text)
                }
                try db.create(table: "snake") { t in
                    t.primaryKey("id", .blob)
                    t.column("secret_word", .blob)
                    t.column("plain_word", .text)
                }
            }
            _ = try SealedFieldsStore(dbQueue, key: passphrase("paths"))
            return (dbQueue, dir)
        }

        @Test func everyKindOfColumnReadsBackThroughBothPaths() throws {
            let (dbQueue, dir) = try database()
            _ = dir
            try dbQueue.write { try Self.sample.insert($0) }
            #expect(try dbQueue.read { try Sample.fetchOne($0, key: Self.sample.id) } == Self.sample)
            // The query spells the columns in another case and order: GRDB matches them anyway, so must we.
            let shouted = try dbQueue.read { db in
                try Sample.fetchOne(db, sql: "SELECT NOTE, STAMP, Seen, BLOB, Missing, SHADE, RATIO, LARGE, SMALL, FLAG, ID FROM sample")
            }
            #expect(shouted == Self.sample)
            // GRDB's own decoding of the row rebuilt with its sealed columns opened gives the same record.
            let rebuilt = try dbQueue.read { db in
                try PlainSample(row: Sample.unsealedRow(#require(try Row.fetchOne(db, sql: "SELECT * FROM sample"))))
            }
            #expect(rebuilt.sample == Self.sample)

            let snake = SnakeSample(id: UUID(), secretWord: "hidden", plainWord: "shown")
            try dbQueue.write { try snake.insert($0) }
            #expect(try dbQueue.read { try SnakeSample.fetchOne($0, key: snake.id) } == snake)
            let raw = try dbQueue.read { try Data.fetchOne($0, sql: "SELECT secret_word FROM snake") }
            #expect(raw.map { !$0.contains(Data("hidden".utf8)) } == true)
        }

        struct Loose: Codable, FetchableRecord, PersistableRecord, SealedRecord {
            static let databaseTableName = "loose"
            var id: UUID
            var flag: String
            var shade: String
            static let sealedColumns = ["flag", "shade"]
        }

        struct StrictFlag: Codable, FetchableRecord, SealedRecord {
            static let databaseTableName = "loose"
            var id: UUID
            var flag: Bool
            var shade: String
            static let sealedColumns = ["flag", "shade"]
        }

        struct StrictShade: Codable, FetchableRecord, SealedRecord {
            static let databaseTableName = "loose"
            var id: UUID
            var flag: String
            var shade: Shade
            static let sealedColumns = ["flag", "shade"]
        }

        @Test func aSealedValueOfTheWrongTypeIsGRDBsErrorNotACrash() throws {
            let (dbQueue, dir) = try database()
            _ = dir
            try dbQueue.write { db in
                try db.create(table: "loose") { t in
                    t.primaryKey("id", .blob)
                    t.column("flag", .blob)
                    t.column("shade", .blob)
                }
                // A sealed text where a Bool is wanted, and a text no case of Shade has.
                try Loose(id: UUID(), flag: "not a bool", shade: "purple").insert(db)
            }
            #expect(throws: (any Error).self) { try dbQueue.read { try StrictFlag.fetchAll($0) } }
            #expect(throws: (any Error).self) { try dbQueue.read { try StrictShade.fetchAll($0) } }
            // The same columns read as what they hold are fine.
            #expect(try dbQueue.read { try Loose.fetchAll($0) }.map(\.shade) == ["purple"])
        }
    }
}

/// ``SealedFields/DecodingPaths/Sample`` as GRDB decodes a plain row: the oracle for both paths.
private struct PlainSample: Decodable, FetchableRecord {
    var id: UUID
    var flag: Bool
    var small: Int8
    var large: UInt64
    var ratio: Float
    var shade: SealedFields.DecodingPaths.Shade
    var seen: Date
    var stamp: Date
    var blob: Data
    var missing: String?
    var note: String
    static func databaseDateDecodingStrategy(for column: String) -> DatabaseDateDecodingStrategy {
        SealedFields.DecodingPaths.Sample.databaseDateDecodingStrategy(for: column)
    }
    var sample: SealedFields.DecodingPaths.Sample {
        .init(
            id: id, flag: flag, small: small, large: large, ratio: ratio, shade: shade, seen: seen, stamp: stamp,
            blob: blob, missing: missing, note: note)
    }
}
