import Foundation
import GRDB
@testable import SealedFields
import Testing

extension SealedFields {
    @Suite struct SearchAndMigration {
        @Test func blindIndexFindsEqualValuesOnly() throws {
            let dir = try TemporaryDirectory()
            let (dbQueue, _) = try makeItemDatabase(dir)
            try dbQueue.write { db in
                for name in ["Milk", "Bread", "Milk", "milk", "Milk "] { try Item(name: name, identifier: UUID().uuidString).insert(db) }
            }
            let found = try dbQueue.read { try Item.filter(sealed: "name", equals: "Milk").fetchAll($0) }
            #expect(found.map(\.name) == ["Milk", "Milk"])
            #expect(try dbQueue.read { try Item.filter(sealed: "name", equals: "Cheese").fetchCount($0) } == 0)
            #expect(try dbQueue.read { try Item.all().filter(sealed: "name", equals: "Bread").fetchCount($0) } == 1)
            #expect(throws: SealedFieldsError.noBlindIndex(table: "item", column: "identifier")) {
                try Item.filter(sealed: "identifier", equals: "x")
            }
            let indexes = try dbQueue.read { try Data.fetchAll($0, sql: "SELECT nameIndex FROM item") }
            #expect(indexes.allSatisfy { $0.count == 21 && !$0.contains("Milk") })
            #expect(Set(indexes).count == 4)  // equal values, equal indexes: the documented leak
        }

        @Test("an index copied into another row finds that row through filter, and fetchAll(sealed:equals:) leaves it out")
        func copiedIndexIsCaughtByTheCheckedSearch() throws {
            let dir = try TemporaryDirectory()
            let (dbQueue, _) = try makeItemDatabase(dir)
            let alice = Item(name: "alice@example.com", identifier: "alice"), mallory = Item(name: "mallory@example.com", identifier: "mallory")
            try dbQueue.write { db in
                try alice.insert(db)
                try mallory.insert(db)
                // Someone who can write the file gives Mallory's row Alice's index.
                try db.execute(sql: "UPDATE item SET nameIndex = (SELECT nameIndex FROM item WHERE id = ?) WHERE id = ?",
                               arguments: [alice.id, mallory.id])
            }
            let unchecked = try dbQueue.read { try Item.filter(sealed: "name", equals: "alice@example.com").fetchAll($0) }
            #expect(Set(unchecked.map(\.identifier)) == ["alice", "mallory"], "the documented limit of the bare index")
            let checked = try dbQueue.read { try Item.fetchAll($0, sealed: "name", equals: "alice@example.com") }
            #expect(checked.map(\.identifier) == ["alice"])
            #expect(try dbQueue.read { try Item.fetchAll($0, sealed: "name", equals: "mallory@example.com") }.isEmpty)
        }

        @Test func plaintextColumnsAreSealedInPlaceResumably() throws {
            let dir = try TemporaryDirectory()
            let dbQueue = try DatabaseQueue(path: dir.path("legacy.sqlite"))
            try dbQueue.write { db in
                try Item.createTable(db)
                for i in 0..<11 {
                    try db.execute(
                        sql: "INSERT INTO item (id, name, identifier, creationDate) VALUES (?, ?, ?, ?)",
                        arguments: [UUID(), "legacy \(i % 3)", "L-\(i)", "2023-11-14 22:13:20.000"])
                }
            }
            let store = try SealedFieldsStore(dbQueue, key: passphrase("p"))
            #expect(throws: SealedFieldsError.notSealed(table: "item", column: "name")) { try dbQueue.read { try Item.fetchAll($0) } }

            let first = try store.sealPlaintext(Item.self, batchSize: 4) { _ in false }
            #expect(first.rowsDone == 4 && first.rowsTotal == 11 && !first.isFinished)
            #expect(try dbQueue.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM item WHERE typeof(name) = 'blob'") } == 4)

            var reports: [SealedFieldsProgress] = []
            let rest = try store.sealPlaintext(Item.self, batchSize: 4) { reports.append($0); return true }
            #expect(rest.isFinished && rest.rowsDone == 7 && reports.map(\.rowsDone) == [4, 7])
            #expect(try store.sealPlaintext(Item.self).rowsTotal == 0)

            let items = try dbQueue.read { try Item.fetchAll($0) }
            #expect(Set(items.map(\.identifier)) == Set((0..<11).map { "L-\($0)" }))
            #expect(items.allSatisfy { $0.creationDate == Date(timeIntervalSince1970: 1_700_000_000) })
            #expect(try dbQueue.read { try Item.filter(sealed: "name", equals: "legacy 1").fetchCount($0) } == 4)
            try dbQueue.close()
            let file = try Data(contentsOf: URL(fileURLWithPath: dir.path("legacy.sqlite")))
            #expect(!file.contains("legacy 1") && !file.contains("L-10"))
        }

        @Test func migrationRefusesTamperedCiphertext() throws {
            let dir = try TemporaryDirectory()
            let (dbQueue, store) = try makeItemDatabase(dir)
            try dbQueue.write { db in
                try Item(name: "a", identifier: "1").insert(db)
                try Item(name: "b", identifier: "2").insert(db)
                try db.execute(sql: "UPDATE item SET nameIndex = NULL, name = (SELECT name FROM item ORDER BY rowid LIMIT 1)")
            }
            #expect(throws: SealedFieldsError.authenticationFailure(table: "item", column: "name")) {
                try store.sealPlaintext(Item.self)
            }
        }
    }
}
