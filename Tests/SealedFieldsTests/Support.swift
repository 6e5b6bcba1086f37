import Foundation
import GRDB
import SealedFields
import Testing

/// Every SealedFields suite lives under this one, run one test at a time: records find their keys
/// through the process-wide `SealedFieldsStore.shared`, which each test sets.
@Suite(.serialized) enum SealedFields {}

/// The article's entity: an item whose name, identifier and creation date are sealed.
struct Item: Codable, Equatable, Identifiable, FetchableRecord, PersistableRecord, SealedRecord {
    var id: UUID
    var name: String
    var identifier: String
    var creationDate: Date
    var note: String?

    static let sealedColumns = ["name", "identifier", "creationDate"]
    static let blindIndexColumns = ["name": "nameIndex"]

    init(name: String, identifier: String, creationDate: Date = Date(timeIntervalSince1970: 1_700_000_000), note: String? = nil) {
        self.id = UUID()
        self.name = name
        self.identifier = identifier
        self.creationDate = creationDate
        self.note = note
    }

    static func createTable(_ db: Database) throws {
        try db.create(table: "item") { t in
            t.primaryKey("id", .blob)
            t.column("name", .blob)
            t.column("nameIndex", .blob).indexed()
            t.column("identifier", .blob)
            t.column("creationDate", .blob)
            t.column("note", .text)
        }
    }
}

/// A temporary folder, removed when the value is released.
final class TemporaryDirectory {
    let url: URL
    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("sealedfields-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    func path(_ name: String) -> String { url.appendingPathComponent(name).path }
    deinit { try? FileManager.default.removeItem(at: url) }
}

/// Cheap scrypt for tests: the parameters are stored in the database, so this is honest, just fast.
let testScrypt = ScryptParameters(logN: 10, r: 8, p: 1)

func passphrase(_ text: String) -> KeySource { .passphrase(text, parameters: testScrypt) }

/// A database file with the item table and a store opened with `phrase`.
func makeItemDatabase(_ dir: TemporaryDirectory, name: String = "items.sqlite", phrase: String = "correct horse")
    throws -> (DatabaseQueue, SealedFieldsStore)
{
    let dbQueue = try DatabaseQueue(path: dir.path(name))
    try dbQueue.write { try Item.createTable($0) }
    let store = try SealedFieldsStore(dbQueue, key: passphrase(phrase))
    return (dbQueue, store)
}

extension Data {
    func contains(_ text: String) -> Bool { range(of: Data(text.utf8)) != nil }
}
