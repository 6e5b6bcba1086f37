import Foundation
import GRDB
import SealedFields

/// The article's entity. Only the conformance to `SealedRecord` and the two static lists are SealedFields';
/// the rest is a plain GRDB record.
struct Item: Codable, Identifiable, FetchableRecord, PersistableRecord, SealedRecord {
    var id: UUID
    var name: String
    var identifier: String
    var creationDate: Date

    static let sealedColumns = ["name", "identifier", "creationDate"]
    static let blindIndexColumns = ["name": "nameIndex"]
}

extension Item {
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1: items") { db in
            try db.create(table: "item") { t in
                t.primaryKey("id", .blob)
                t.column("name", .blob).notNull()
                t.column("nameIndex", .blob).notNull().indexed()
                t.column("identifier", .blob).notNull()
                t.column("creationDate", .blob).notNull()
            }
        }
        return migrator
    }
}
