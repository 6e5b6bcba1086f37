import Foundation
import GRDB
@testable import SealedFields
import Testing

extension SealedFields {
    @Suite struct Rotation {
        static let rowCount = 23
        static let batchSize = 5  // 5 batches, the last one short

        func versions(_ dbQueue: DatabaseQueue, _ column: String, at offset: Int) throws -> [Int] {
            try dbQueue.read { db in
                try Data.fetchAll(db, sql: "SELECT \(column) FROM item ORDER BY rowid").map { blob in
                    Int(blob[blob.startIndex + offset + 3]) | Int(blob[blob.startIndex + offset + 2]) << 8
                }
            }
        }

        /// Stops the re-encryption after `stopAfter` batches, checks the app still works with both keys,
        /// then resumes and checks everything moved to the new key and the old one can go.
        @Test(arguments: 0...5)
        func rotationInterruptedAtEveryBatchResumes(stopAfter: Int) throws {
            let dir = try TemporaryDirectory()
            let (dbQueue, store) = try makeItemDatabase(dir)
            let items = (0..<Self.rowCount).map { Item(name: "item \($0 % 4)", identifier: "id-\($0)") }
            try dbQueue.write { db in for item in items { try item.insert(db) } }

            #expect(try store.rotate() == 2)
            #expect(store.activeKeyVersion == 2 && store.keyVersions == [1, 2])
            let written = Item(name: "item 1", identifier: "written after rotation")
            try dbQueue.write { try written.insert($0) }  // rowid 24, already on key 2

            var batches = 0
            let stopped = try store.reencrypt(Item.self, batchSize: Self.batchSize) { _ in
                batches += 1
                return batches < stopAfter
            }
            let moved = min(stopAfter == 0 ? 1 : stopAfter, 5) * Self.batchSize
            #expect(stopped.rowsTotal == Self.rowCount)
            #expect(stopped.rowsDone == min(moved, Self.rowCount))
            #expect(try versions(dbQueue, "name", at: 2) == Array(repeating: 2, count: min(moved, Self.rowCount))
                + Array(repeating: 1, count: max(0, Self.rowCount - moved)) + [2])

            // Mid-rotation: every row reads, search finds rows under both keys, and key 1 cannot go.
            #expect(try dbQueue.read { try Item.fetchAll($0) }.count == Self.rowCount + 1)
            #expect(try dbQueue.read { try Item.filter(sealed: "name", equals: "item 1").fetchCount($0) } == 7)
            if moved < Self.rowCount {
                #expect(throws: SealedFieldsError.self) { try store.retire(version: 1) }
            }

            let resumed = try store.reencrypt(Item.self, batchSize: Self.batchSize)
            #expect(resumed.isFinished)
            #expect(resumed.rowsDone == max(0, Self.rowCount - moved))
            #expect(try versions(dbQueue, "name", at: 2) == Array(repeating: 2, count: Self.rowCount + 1))
            #expect(try versions(dbQueue, "nameIndex", at: 1) == Array(repeating: 2, count: Self.rowCount + 1))

            #expect(throws: SealedFieldsError.activeKey(version: 2)) { try store.retire(version: 2) }
            try store.retire(version: 1)
            #expect(store.keyVersions == [2])
            #expect(try dbQueue.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM sealedfields_keys") } == 1)

            _ = try SealedFieldsStore(dbQueue, key: passphrase("correct horse"))
            let back = try dbQueue.read { try Item.fetchAll($0) }
            #expect(Set(back.map(\.identifier)) == Set((items + [written]).map(\.identifier)))
            #expect(try dbQueue.read { try Item.filter(sealed: "name", equals: "item 1").fetchCount($0) } == 7)
        }

        @Test func retireCountsValuesInEveryTable() throws {
            let dir = try TemporaryDirectory()
            let (dbQueue, store) = try makeItemDatabase(dir)
            try dbQueue.write { try Item(name: "x", identifier: "y").insert($0) }
            // A copy of a key-1 value somewhere SealedFields was not told about still blocks retirement.
            try dbQueue.write { try $0.execute(sql: "CREATE TABLE backup AS SELECT name FROM item") }
            try store.rotate()
            try store.reencrypt(Item.self)
            #expect(throws: SealedFieldsError.keyInUse(version: 1, values: 1)) { try store.retire(version: 1) }
            try dbQueue.write { try $0.execute(sql: "DROP TABLE backup") }
            try store.retire(version: 1)
        }

        /// Two stores on one file (an app and its extension): whichever order a rotation and a
        /// passphrase change come in, every key stays readable under the new passphrase.
        @Test func rotationAndPassphraseChangeFromTwoStores() throws {
            let dir = try TemporaryDirectory()
            let (dbQueue, first) = try makeItemDatabase(dir, phrase: "old phrase")
            let second = try SealedFieldsStore(dbQueue, key: passphrase("old phrase"), makeShared: false)
            let early = Item(name: "sealed under key 1", identifier: "early")
            try dbQueue.write { try early.insert($0) }

            // The second rotates; the first, which never saw key 2, changes the passphrase.
            #expect(try second.rotate() == 2)
            try first.changeKey(from: passphrase("old phrase"), to: passphrase("new phrase"))
            let reopened = try SealedFieldsStore(dbQueue, key: passphrase("new phrase"), makeShared: false)
            #expect(reopened.keyVersions == [1, 2] && reopened.activeKeyVersion == 2)
            #expect(first.keyVersions == [1, 2] && first.activeKeyVersion == 2)

            // The other way round: the second, still on the old passphrase, may not add a key the
            // database could never unwrap; nothing is written.
            #expect(throws: SealedFieldsError.keyChanged) { try second.rotate() }
            #expect(try SealedFieldsStore(dbQueue, key: passphrase("new phrase"), makeShared: false).keyVersions == [1, 2])
            #expect(try first.rotate() == 3)
            let late = Item(name: "sealed under key 3", identifier: "late")
            try dbQueue.write { try late.insert($0) }
            let last = try SealedFieldsStore(dbQueue, key: passphrase("new phrase"))
            #expect(last.keyVersions == [1, 2, 3])
            #expect(try dbQueue.read { try Item.fetchAll($0) }.map(\.name).sorted() == ["sealed under key 1", "sealed under key 3"])
        }

        @Test("an older key marked active again (the state column is not authenticated) is refused as damaged: new values never go under it")
        func olderKeyMadeActiveAgain() throws {
            let dir = try TemporaryDirectory()
            let (dbQueue, store) = try makeItemDatabase(dir)
            #expect(try store.rotate() == 2)
            try dbQueue.write { try $0.execute(sql: "UPDATE sealedfields_keys SET state = CASE version WHEN 1 THEN 'active' ELSE 'readable' END") }
            #expect(throws: SealedFieldsError.corruptKeyTables) { try SealedFieldsStore(dbQueue, key: passphrase("correct horse"), makeShared: false) }
        }

        @Test("a key row without a version, or at the last version, is refused as damaged, not a crash")
        func damagedKeyRows() throws {
            let dir = try TemporaryDirectory()
            let (dbQueue, store) = try makeItemDatabase(dir)
            try dbQueue.write { try $0.execute(sql: "UPDATE sealedfields_keys SET version = 4294967295") }
            #expect(throws: SealedFieldsError.corruptKeyTables) { try store.rotate() }
            try dbQueue.write { db in
                try db.execute(sql: "CREATE TABLE k2 AS SELECT * FROM sealedfields_keys")
                try db.execute(sql: "DROP TABLE sealedfields_keys")
                try db.execute(sql: "CREATE TABLE sealedfields_keys (version INTEGER, wrapped BLOB NOT NULL, state TEXT NOT NULL)")
                try db.execute(sql: "INSERT INTO sealedfields_keys SELECT NULL, wrapped, state FROM k2")
            }
            #expect(throws: SealedFieldsError.corruptKeyTables) { try SealedFieldsStore(dbQueue, key: passphrase("correct horse"), makeShared: false) }
        }
    }
}

/// The same `item` table read with another type for a sealed column (an app update that changed it).
private struct RetypedItem: Codable, FetchableRecord, PersistableRecord, SealedRecord {
    static let databaseTableName = "item"
    var id: UUID
    var name: Int
    var identifier: String
    var creationDate: Date
    var note: String?
    static let sealedColumns = ["name", "identifier", "creationDate"]
    static let blindIndexColumns = ["name": "nameIndex"]
}

/// The same, read with a column decoding strategy (GRDB decodes the whole opened row).
private struct SnakeItem: Codable, FetchableRecord, PersistableRecord, SealedRecord {
    static let databaseTableName = "item"
    static let databaseColumnDecodingStrategy = DatabaseColumnDecodingStrategy.convertFromSnakeCase
    var id: UUID
    var name: String
    var identifier: String
    var creationDate: Date
    var note: Int?
    static let sealedColumns = ["name", "identifier", "creationDate"]
    static let blindIndexColumns = ["name": "nameIndex"]
}

extension SealedFields {
    @Suite("Sealed values in errors")
    struct SealedValueErrorTests {
        @Test("a row whose opened values do not decode throws an error that quotes none of them")
        func decodingErrorsQuoteNoValue() throws {
            let dir = try TemporaryDirectory()
            let (dbQueue, _) = try makeItemDatabase(dir)
            try dbQueue.write { try Item(name: "hunter2-secret", identifier: "id-4711-secret", note: "not a number").insert($0) }
            for fetch in [{ _ = try dbQueue.read { try RetypedItem.fetchAll($0) } }, { _ = try dbQueue.read { try SnakeItem.fetchAll($0) } }] {
                do {
                    try fetch()
                    Issue.record("decoding was expected to fail")
                } catch {
                    let text = "\(error) \(String(reflecting: error))"
                    #expect(!text.contains("hunter2-secret") && !text.contains("id-4711-secret"), "\(text)")
                    #expect(text.contains("item"), "\(text)")
                }
            }
        }
    }
}
