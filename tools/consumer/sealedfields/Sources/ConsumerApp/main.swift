// Uses the SDK and SealedFields the way an app does: one sealed column written and read back through GRDB,
// in memory. Building this package proves the products link with only the SealedFields trait.
import Coffer
import Foundation
import GRDB
import SealedFields

struct Note: Codable, FetchableRecord, PersistableRecord, SealedRecord {
    var id: Int64
    var text: String
    static let sealedColumns = ["text"]
}

let dbQueue = try DatabaseQueue()
let store = try SealedFieldsStore(dbQueue, key: .passphrase("consumer example", parameters: ScryptParameters(logN: 10)))
try dbQueue.write { db in
    try db.create(table: "note") { table in
        table.column("id", .integer).primaryKey()
        table.column("text", .blob)
    }
    try Note(id: 1, text: "kept sealed").insert(db)
}
let read = try dbQueue.read { db in try Note.fetchOne(db, key: 1) }
guard read?.text == "kept sealed" else { fatalError("the sealed field did not read back") }
_ = store
print("SealedFields round trip through GRDB: ok; Coffer SDK linked (\(String(describing: CofferError.self)))")
