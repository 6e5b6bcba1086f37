import Foundation
import GRDB
@testable import SealedFields
import Testing

/// `init(row:)` decodes a fetched row without rebuilding it (``OpenedRow`` as its decoder) when the record uses
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

        /// One sealed column and plain columns of every kind the fast path reads itself (UUID, dates
        /// and data under the default strategies, scalars) or hands to GRDB (a strategy, an enum,
        /// optionals).
        struct Mixed: Codable, Equatable, FetchableRecord, PersistableRecord, SealedRecord {
            static let databaseTableName = "mixed"
            var id: UUID
            var secret: String
            var other: UUID
            var when: Date
            var stamped: Date
            var bytes: Data
            var count: Int
            var shade: Shade
            var maybe: Date?
            static let sealedColumns = ["secret"]
            static func databaseDateDecodingStrategy(for column: String) -> DatabaseDateDecodingStrategy {
                column == "stamped" ? .timeIntervalSince1970 : .deferredToDate
            }
            static func databaseDateEncodingStrategy(for column: String) -> DatabaseDateEncodingStrategy {
                column == "stamped" ? .timeIntervalSince1970 : .deferredToDate
            }
        }

        /// ``Mixed`` as GRDB decodes the same rows: the oracle for values and for errors.
        struct PlainMixed: Decodable, Equatable, FetchableRecord {
            static let databaseTableName = "mixed"
            var id: UUID
            var other: UUID
            var when: Date
            var stamped: Date
            var bytes: Data
            var count: Int
            var shade: Shade
            var maybe: Date?
            static func databaseDateDecodingStrategy(for column: String) -> DatabaseDateDecodingStrategy {
                Mixed.databaseDateDecodingStrategy(for: column)
            }
        }

        @Test func plainColumnsReadAsGRDBReadsThemWithTheSameErrors() throws {
            let (dbQueue, dir) = try database()
            _ = dir
            try dbQueue.write { db in
                try db.create(table: "mixed") { t in
                    t.primaryKey("id", .blob)
                    t.column("secret", .blob)
                    for column in ["other", "when", "stamped", "bytes", "count", "shade", "maybe"] { t.column(column) }
                }
            }
            let records = [
                Mixed(id: UUID(), secret: "one", other: UUID(), when: Date(timeIntervalSince1970: 1_700_000_000.25),
                      stamped: Date(timeIntervalSince1970: 1_600_000_000), bytes: Data([1, 2, 3]), count: -4, shade: .light,
                      maybe: nil),
                Mixed(id: UUID(), secret: "two", other: UUID(), when: Date(timeIntervalSince1970: 0),
                      stamped: Date(timeIntervalSince1970: 12.5), bytes: Data(), count: Int.max, shade: .dark,
                      maybe: Date(timeIntervalSince1970: 1_000)),
            ]
            try dbQueue.write { db in for record in records { try record.insert(db) } }
            let sql = "SELECT * FROM mixed ORDER BY count"
            let read = try dbQueue.read { try Mixed.fetchAll($0, sql: sql) }
            #expect(read == records)
            let plain = try dbQueue.read { try PlainMixed.fetchAll($0, sql: sql) }
            #expect(read.map { [$0.other, $0.id] } == plain.map { [$0.other, $0.id] })
            #expect(read.map(\.when) == plain.map(\.when) && read.map(\.stamped) == plain.map(\.stamped))
            #expect(read.map(\.bytes) == plain.map(\.bytes) && read.map(\.maybe) == plain.map(\.maybe))

            // A plain column GRDB refuses fails the same way through SealedFields, with GRDB's error.
            for (column, value) in [("other", "'not a uuid'"), ("when", "'not a date'"), ("other", "NULL"), ("bytes", "NULL"),
                                    ("count", "NULL"), ("shade", "'purple'"), ("stamped", "NULL")] {
                try dbQueue.write { db in
                    try db.execute(sql: "UPDATE mixed SET \"\(column)\" = \(value) WHERE id = ?", arguments: [records[0].id])
                }
                let sealedError = try #require(throws: (any Error).self) { try dbQueue.read { try Mixed.fetchAll($0, sql: sql) } }
                let plainError = try #require(throws: (any Error).self) { try dbQueue.read { try PlainMixed.fetchAll($0, sql: sql) } }
                #expect(String(describing: sealedError) == String(describing: plainError), "\(column) = \(value)")
                #expect(!(sealedError is SealedFieldsError), "\(column) = \(value)")
                try dbQueue.write { db in
                    try db.execute(sql: "DELETE FROM mixed WHERE id = ?", arguments: [records[0].id])
                    try records[0].insert(db)
                }
                #expect(try dbQueue.read { try Mixed.fetchAll($0, sql: sql) } == records)
            }
            // A selection without a plain column: the key is missing for both, with GRDB's error.
            let narrow = "SELECT id, secret, other, stamped, bytes, count, shade FROM mixed"
            let sealedError = try #require(throws: (any Error).self) { try dbQueue.read { try Mixed.fetchAll($0, sql: narrow) } }
            let plainError = try #require(throws: (any Error).self) { try dbQueue.read { try PlainMixed.fetchAll($0, sql: narrow) } }
            #expect(String(describing: sealedError) == String(describing: plainError))
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
