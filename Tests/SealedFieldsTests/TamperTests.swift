import Foundation
import GRDB
@testable import SealedFields
import Testing

extension SealedFields {
    @Suite struct Tampering {
        /// Runs `sql` on a database with two items and expects reading them to fail with `expected`.
        func expectRefused(_ sql: String, _ expected: SealedFieldsError) throws {
            let dir = try TemporaryDirectory()
            let (dbQueue, _) = try makeItemDatabase(dir)
            let a = Item(name: "Alice's record", identifier: "A")
            let b = Item(name: "Bob's record", identifier: "B")
            try dbQueue.write { db in try a.insert(db); try b.insert(db) }
            #expect(try dbQueue.read { try Item.fetchCount($0) } == 2)
            try dbQueue.write { try $0.execute(sql: sql, arguments: [a.id, b.id]) }
            #expect(throws: expected) { try dbQueue.read { try Item.fetchOne($0, id: a.id) } }
        }

        @Test func ciphertextSwappedBetweenRowsIsRefused() throws {
            try expectRefused(
                "UPDATE item SET name = (SELECT name FROM item WHERE id = ?2) WHERE id = ?1",
                .authenticationFailure(table: "item", column: "name"))
        }

        @Test func ciphertextSwappedBetweenColumnsIsRefused() throws {
            try expectRefused(
                "UPDATE item SET identifier = name, name = identifier WHERE id = ?1 AND ?2 IS NOT NULL",
                .authenticationFailure(table: "item", column: "name"))
        }

        @Test func changedIdentityIsRefused() throws {
            let dir = try TemporaryDirectory()
            let (dbQueue, _) = try makeItemDatabase(dir)
            let item = Item(name: "Dave", identifier: "D")
            let otherID = UUID()
            try dbQueue.write { db in
                try item.insert(db)
                try db.execute(sql: "UPDATE item SET id = ? WHERE id = ?", arguments: [otherID, item.id])
            }
            #expect(throws: SealedFieldsError.authenticationFailure(table: "item", column: "name")) {
                try dbQueue.read { try Item.fetchOne($0, id: otherID) }
            }
        }

        @Test(arguments: [0, 1, 5, 10, 20, 40])
        func flippedByteIsRefused(offset: Int) throws {
            try expectRefused(
                """
                UPDATE item SET name = CAST(substr(name, 1, \(offset))
                  || CASE WHEN substr(name, \(offset + 1), 1) = X'FF' THEN X'FE' ELSE X'FF' END
                  || substr(name, \(offset + 2)) AS BLOB) WHERE id = ?1 AND ?2 IS NOT NULL
                """,
                offset < 2 ? .notSealed(table: "item", column: "name")
                    : offset == 5 ? .unknownKeyVersion(0xFF) : .authenticationFailure(table: "item", column: "name"))
        }

        @Test func plaintextOrNullWrittenAroundSealedFieldsIsRefused() throws {
            try expectRefused("UPDATE item SET name = 'plain' WHERE id = ?1 AND ?2 IS NOT NULL", .notSealed(table: "item", column: "name"))
            try expectRefused("UPDATE item SET name = NULL WHERE id = ?1 AND ?2 IS NOT NULL", .notSealed(table: "item", column: "name"))
        }

        @Test func ciphertextFromAnotherDatabaseIsRefused() throws {
            let dir = try TemporaryDirectory()
            let (first, _) = try makeItemDatabase(dir, name: "one.sqlite")
            let item = Item(name: "Carol", identifier: "C")
            try first.write { try item.insert($0) }
            let stolen = try first.read { try Row.fetchOne($0, sql: "SELECT * FROM item") }!
            let (second, _) = try makeItemDatabase(dir, name: "two.sqlite", phrase: "correct horse")
            try second.write { db in
                try db.execute(
                    sql: "INSERT INTO item (id, name, identifier, creationDate) VALUES (?, ?, ?, ?)",
                    arguments: [stolen["id"], stolen["name"], stolen["identifier"], stolen["creationDate"]])
            }
            #expect(throws: SealedFieldsError.authenticationFailure(table: "item", column: "name")) {
                try second.read { try Item.fetchAll($0) }
            }
        }
    }
}
