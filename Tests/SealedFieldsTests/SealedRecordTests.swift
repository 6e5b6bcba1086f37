import Foundation
import GRDB
@testable import SealedFields
import Testing

extension SealedFields {
    @Suite struct Records {
        @Test func columnsHoldCiphertextAndRecordsReadBack() throws {
            let dir = try TemporaryDirectory()
            let (dbQueue, _) = try makeItemDatabase(dir)
            let item = Item(name: "Aspirin 500mg", identifier: "PATIENT-4711", note: "visible")
            try dbQueue.write { try item.insert($0) }

            #expect(try dbQueue.read { try Item.fetchOne($0, id: item.id) } == item)

            let raw = try #require(try dbQueue.read { try Row.fetchOne($0, sql: "SELECT * FROM item") })
            for column in ["name", "identifier", "creationDate"] {
                let blob = try #require(raw[column] as Data?, "\(column) is not a blob")
                #expect(blob.prefix(2) == Data([1, 1]))
                #expect(!blob.contains("Aspirin") && !blob.contains("PATIENT") && !blob.contains("2023"))
            }
            #expect(raw["note"] as String? == "visible")
            try dbQueue.close()
            let file = try Data(contentsOf: URL(fileURLWithPath: dir.path("items.sqlite")))
            #expect(file.contains("visible"))
            #expect(!file.contains("Aspirin") && !file.contains("PATIENT-4711"))
        }

        @Test func unchangedSealedValuesAreNotRewritten() throws {
            let dir = try TemporaryDirectory()
            let (dbQueue, _) = try makeItemDatabase(dir)
            let item = Item(name: "Milk", identifier: "A-1")
            try dbQueue.write { try item.insert($0) }
            let before = try dbQueue.read { try Row.fetchOne($0, sql: "SELECT * FROM item") }

            try dbQueue.write { db in
                var fetched = try #require(try Item.fetchOne(db, id: item.id))
                #expect(try fetched.databaseChanges(from: item).isEmpty)
                let changed = try fetched.updateChanges(db) { $0.note = "new note" }
                #expect(changed)
                #expect(try fetched.updateChanges(db) { $0.name = "Milk" } == false)
                try fetched.save(db)
            }
            let after = try dbQueue.read { try Row.fetchOne($0, sql: "SELECT * FROM item") }
            for column in ["name", "nameIndex", "identifier", "creationDate"] {
                #expect(before?[column] as Data? == after?[column] as Data?, "\(column) was rewritten")
            }

            var renamed = item
            renamed.name = "Oat milk"
            #expect(try Set(renamed.databaseChanges(from: item).keys) == ["name", "nameIndex"])
        }

        /// Observes both the opened names and the raw ciphertexts: saving an unchanged record must not
        /// produce a new value (it would, if its ciphertexts changed).
        @Test func valueObservationSeesRealChangesOnly() async throws {
            struct Snapshot: Equatable { var names: [String]; var raw: [Data] }
            let dir = try TemporaryDirectory()
            let (dbQueue, _) = try makeItemDatabase(dir)
            let item = Item(name: "Bread", identifier: "B-1")
            try await dbQueue.write { try item.insert($0) }
            let observation = ValueObservation.tracking { db in
                Snapshot(names: try Item.fetchAll(db).map(\.name), raw: try Data.fetchAll(db, sql: "SELECT name FROM item"))
            }.removeDuplicates()
            var snapshots = observation.values(in: dbQueue).makeAsyncIterator()
            #expect(try await snapshots.next()?.names == ["Bread"])
            try await dbQueue.write { db in try Item.fetchOne(db, id: item.id)!.save(db) }
            try await dbQueue.write { db in
                var fetched = try Item.fetchOne(db, id: item.id)!
                fetched.name = "Rye bread"
                try fetched.save(db)
            }
            #expect(try await snapshots.next()?.names == ["Rye bread"])
        }

        @Test func anyCodableValueCanBeSealed() throws {
            struct Dosage: Codable, Equatable { var milligrams: Int; var times: [String] }
            struct Prescription: Codable, Equatable, FetchableRecord, PersistableRecord, SealedRecord {
                var id: String
                var dosage: Dosage
                var weight: Double
                var count: Int
                var photo: Data
                var expires: Date?
                var comment: String?
                static let sealedColumns = ["dosage", "weight", "count", "photo", "expires", "comment"]
            }
            let dir = try TemporaryDirectory()
            let dbQueue = try DatabaseQueue(path: dir.path("rx.sqlite"))
            try dbQueue.write { db in
                try db.create(table: "prescription") { t in
                    t.primaryKey("id", .text)
                    for c in Prescription.sealedColumns { t.column(c, .blob) }
                }
            }
            _ = try SealedFieldsStore(dbQueue, key: passphrase("p"))
            let rx = Prescription(
                id: "rx-1", dosage: Dosage(milligrams: 500, times: ["08:00", "20:00"]), weight: 72.5, count: -3,
                photo: Data([0, 1, 2, 255]), expires: nil, comment: "ünïcode ✓")
            try dbQueue.write { try rx.insert($0) }
            #expect(try dbQueue.read { try Prescription.fetchOne($0, key: "rx-1") } == rx)
            let types = try dbQueue.read { db in
                try Row.fetchOne(db, sql: "SELECT typeof(dosage), typeof(weight), typeof(count), typeof(expires) FROM prescription")
            }
            #expect(types.map { Array($0.databaseValues) } == Array(repeating: "blob".databaseValue, count: 4))
        }

        @Test("a sealed column the record does not encode (misspelt, or named otherwise in the database) is refused, not stored in the clear")
        func misnamedSealedColumn() throws {
            struct Secret: Codable, FetchableRecord, PersistableRecord, SealedRecord {
                var id: String
                var secretWord: String
                enum CodingKeys: String, CodingKey { case id, secretWord = "secret_word" }
                static let sealedColumns = ["secretWord"]
            }
            let dir = try TemporaryDirectory()
            let dbQueue = try DatabaseQueue(path: dir.path("secret.sqlite"))
            try dbQueue.write { db in
                try db.create(table: "secret") { t in
                    t.primaryKey("id", .text)
                    t.column("secret_word", .blob)
                }
            }
            _ = try SealedFieldsStore(dbQueue, key: passphrase("p"))
            #expect(throws: SealedFieldsError.unknownColumn(table: "secret", column: "secretWord")) {
                try dbQueue.write { try Secret(id: "s-1", secretWord: "swordfish").insert($0) }
            }
            #expect(try dbQueue.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM secret") } == 0)
        }

        @Test func handWrittenRecordsUseTheSameHelpers() throws {
            struct Account: FetchableRecord, PersistableRecord, SealedRecord {
                var id: Int64
                var iban: String
                static let sealedColumns = ["iban"]
                init(id: Int64, iban: String) { self.id = id; self.iban = iban }
                init(row: Row) throws {
                    let row = try Self.unsealedRow(row)
                    id = row["id"]
                    iban = row["iban"]
                }
                func encode(to container: inout PersistenceContainer) throws {
                    container["id"] = id
                    container["iban"] = iban
                    try Self.sealValues(in: &container)
                }
            }
            let dir = try TemporaryDirectory()
            let dbQueue = try DatabaseQueue(path: dir.path("accounts.sqlite"))
            try dbQueue.write { try $0.execute(sql: "CREATE TABLE account (id INTEGER PRIMARY KEY, iban BLOB)") }
            _ = try SealedFieldsStore(dbQueue, key: passphrase("p"))
            try dbQueue.write { try Account(id: 7, iban: "DE89370400440532013000").insert($0) }
            #expect(try dbQueue.read { try Account.fetchOne($0, key: 7)?.iban } == "DE89370400440532013000")
            let raw = try dbQueue.read { try Data.fetchOne($0, sql: "SELECT iban FROM account") }
            #expect(raw.map { !$0.contains("DE89") } == true)
        }

        @Test func aRecordWithoutIdentityIsRefusedBeforeWriting() throws {
            struct Note: Codable, FetchableRecord, PersistableRecord, SealedRecord {
                var id: Int64?
                var text: String
                static let sealedColumns = ["text"]
            }
            let dir = try TemporaryDirectory()
            let dbQueue = try DatabaseQueue(path: dir.path("notes.sqlite"))
            try dbQueue.write { try $0.execute(sql: "CREATE TABLE note (id INTEGER PRIMARY KEY, text BLOB)") }
            _ = try SealedFieldsStore(dbQueue, key: passphrase("p"))
            #expect(throws: SealedFieldsError.missingIdentity(table: "note", column: "id")) {
                try dbQueue.write { try Note(id: nil, text: "secret").insert($0) }
            }
            #expect(try dbQueue.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM note") } == 0)
        }
    }
}
