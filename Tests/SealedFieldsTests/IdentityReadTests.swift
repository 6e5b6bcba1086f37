import Foundation
import GRDB
@testable import SealedFields
import Testing

/// The read path takes a row's identity and ciphertexts in place from SQLite (``BorrowedValue``) for
/// rows read from a statement, and from the row's stored values for other rows (copied ones). Every
/// storage class of identity must give the bytes the write path bound, on both kinds of row, and the
/// refusals must stay what they were.
extension SealedFields {
    @Suite struct IdentityReads {
        struct ByInteger: Codable, Equatable, FetchableRecord, PersistableRecord, SealedRecord {
            static let databaseTableName = "by_integer"
            var id: Int64
            var secret: String
            static let sealedColumns = ["secret"]
        }

        struct ByText: Codable, Equatable, FetchableRecord, PersistableRecord, SealedRecord {
            static let databaseTableName = "by_text"
            var id: String
            var secret: String
            static let sealedColumns = ["secret"]
        }

        struct ByReal: Codable, Equatable, FetchableRecord, PersistableRecord, SealedRecord {
            static let databaseTableName = "by_real"
            var id: Double
            var secret: String
            static let sealedColumns = ["secret"]
        }

        struct ByPair: Codable, Equatable, FetchableRecord, PersistableRecord, SealedRecord {
            static let databaseTableName = "by_pair"
            var region: String?
            var number: Int64
            var secret: String
            static let sealedColumns = ["secret"]
            static let sealedIdentityColumns = ["region", "number"]
        }

        /// Identities around the stack buffer's size: short, multi-byte, just fitting, too long for it.
        static let texts = ["a", "é-ñ-☃", String(repeating: "x", count: SealedTable.identityBufferSize - 5),
                            String(repeating: "y", count: SealedTable.identityBufferSize - 4), String(repeating: "z", count: 1000)]

        func database() throws -> (DatabaseQueue, TemporaryDirectory) {
            let dir = try TemporaryDirectory()
            let dbQueue = try DatabaseQueue(path: dir.path("identity.sqlite"))
            try dbQueue.write { db in
                try db.create(table: "by_integer") { t in t.primaryKey("id", .integer); t.column("secret", .blob) }
                try db.create(table: "by_text") { t in t.primaryKey("id", .text); t.column("secret", .blob) }
                try db.create(table: "by_real") { t in t.primaryKey("id", .double); t.column("secret", .blob) }
                try db.create(table: "by_pair") { t in
                    t.column("region", .text)
                    t.column("number", .integer)
                    t.column("secret", .blob)
                }
            }
            _ = try SealedFieldsStore(dbQueue, key: passphrase("identity"))
            return (dbQueue, dir)
        }

        /// The records read back from statement rows (`fetchAll`) and from copied rows (`Row.fetchAll`).
        func readBothWays<Record: SealedRecord & Decodable>(_ type: Record.Type, _ db: Database) throws -> ([Record], [Record]) {
            let fromStatement = try Record.order(sql: "rowid").fetchAll(db)
            let fromCopies = try Row.fetchAll(db, sql: "SELECT * FROM \(Record.databaseTableName) ORDER BY rowid").map { try Record(row: $0) }
            return (fromStatement, fromCopies)
        }

        @Test func everyKindOfIdentityReadsBackFromStatementAndCopiedRows() throws {
            let (dbQueue, dir) = try database()
            defer { withExtendedLifetime(dir) {} }
            let integers = [Int64.min, -1, 0, 42, Int64.max].map { ByInteger(id: $0, secret: "integer \($0)") }
            let texts = Self.texts.map { ByText(id: $0, secret: "text of \($0.count)") }
            let reals = [-1.5, 0, 3.25, Double.greatestFiniteMagnitude].map { ByReal(id: $0, secret: "real \($0)") }
            let pairs = [ByPair(region: "eu", number: 1, secret: "first"), ByPair(region: Self.texts[4], number: -9, secret: "long")]
            try dbQueue.write { db in
                for record in integers { try record.insert(db) }
                for record in texts { try record.insert(db) }
                for record in reals { try record.insert(db) }
                for record in pairs { try record.insert(db) }
            }
            try dbQueue.read { db in
                let (integerRows, integerCopies) = try readBothWays(ByInteger.self, db)
                #expect(integerRows == integers && integerCopies == integers)
                let (textRows, textCopies) = try readBothWays(ByText.self, db)
                #expect(textRows == texts && textCopies == texts)
                let (realRows, realCopies) = try readBothWays(ByReal.self, db)
                #expect(realRows == reals && realCopies == reals)
                let (pairRows, pairCopies) = try readBothWays(ByPair.self, db)
                #expect(pairRows == pairs && pairCopies == pairs)
            }
        }

        /// The identity assembled on the stack (or in an array when too long) is byte for byte what the
        /// write path binds, for statement rows and for copied rows.
        @Test func identityBytesAreTheWritePathsOnBothKindsOfRow() throws {
            let (dbQueue, dir) = try database()
            defer { withExtendedLifetime(dir) {} }
            let pairs = Self.texts.enumerated().map { ByPair(region: $1, number: Int64($0) - 2, secret: "s") }
            try dbQueue.write { db in for record in pairs { try record.insert(db) } }
            let table = SealedTable.of(ByPair.self)
            try dbQueue.read { db in
                var expected = pairs.map { AssociatedData.identityFields([$0.region.databaseValue, $0.number.databaseValue]) }
                let cursor = try Row.fetchCursor(db, sql: "SELECT * FROM by_pair ORDER BY rowid")
                while let row = try cursor.next() {
                    let onStack = try table.withIdentityFields(of: row) { Array($0) }
                    #expect(onStack == expected.first)
                    #expect(try table.identityFields(of: row) == expected.removeFirst())
                }
                #expect(expected.isEmpty)
                for (row, pair) in zip(try Row.fetchAll(db, sql: "SELECT * FROM by_pair ORDER BY rowid"), pairs) {
                    let bound = AssociatedData.identityFields([pair.region.databaseValue, pair.number.databaseValue])
                    #expect(try table.withIdentityFields(of: row) { Array($0) } == bound)
                }
            }
        }

        @Test func aNullOrMissingIdentityIsRefusedOnBothKindsOfRow() throws {
            let (dbQueue, dir) = try database()
            defer { withExtendedLifetime(dir) {} }
            try dbQueue.write { db in
                try ByPair(region: "eu", number: 1, secret: "first").insert(db)
                try ByPair(region: "us", number: 2, secret: "second").insert(db)
                try db.execute(sql: "UPDATE by_pair SET region = NULL WHERE number = 1")
            }
            let refusal = SealedFieldsError.missingIdentity(table: "by_pair", column: "region")
            #expect(throws: refusal) { try dbQueue.read { try ByPair.fetchAll($0) } }
            #expect(throws: refusal) { try dbQueue.read { try Row.fetchAll($0, sql: "SELECT * FROM by_pair").map { try ByPair(row: $0) } } }
            // The intact row, selected without one identity column, on both kinds of row.
            let missing = SealedFieldsError.missingIdentity(table: "by_pair", column: "number")
            #expect(throws: missing) { try dbQueue.read { try ByPair.select(Column("region"), Column("secret")).filter(sql: "number = 2").fetchAll($0) } }
            #expect(throws: missing) {
                try dbQueue.read { try Row.fetchAll($0, sql: "SELECT region, secret FROM by_pair WHERE number = 2").map { try ByPair(row: $0) } }
            }
            // Both read once the identity is whole again.
            try dbQueue.write { try $0.execute(sql: "UPDATE by_pair SET region = 'eu' WHERE number = 1") }
            #expect(try dbQueue.read { try ByPair.order(Column("number")).fetchAll($0) }.map(\.secret) == ["first", "second"])
        }

        @Test func aPlainValueInASealedColumnIsRefusedOnBothKindsOfRow() throws {
            let (dbQueue, dir) = try database()
            defer { withExtendedLifetime(dir) {} }
            try dbQueue.write { db in
                try ByText(id: "a", secret: "sealed").insert(db)
                try ByText(id: "b", secret: "sealed").insert(db)
                try db.execute(sql: "UPDATE by_text SET secret = 'plain' WHERE id = 'a'")
                try db.execute(sql: "UPDATE by_text SET secret = 42 WHERE id = 'b'")
            }
            let refusal = SealedFieldsError.notSealed(table: "by_text", column: "secret")
            for id in ["a", "b"] {
                #expect(throws: refusal) { try dbQueue.read { try ByText.fetchOne($0, key: id) } }
                #expect(throws: refusal) {
                    try dbQueue.read { try Row.fetchAll($0, sql: "SELECT * FROM by_text WHERE id = ?", arguments: [id]).map { try ByText(row: $0) } }
                }
            }
        }
    }
}
