import Fluent

/// 015: `current_master_key`, one row naming the master key that wraps the stored model keys and
/// the manifest-signing key (``CurrentMasterKeyRecord``). A rotation changes it with the keys it
/// re-wraps; a key is stored only in a transaction that finds it naming the master key the key was
/// wrapped with, so an instance still running with a master key a rotation replaced stores nothing
/// the new key cannot open.
///
/// No row is written here (a migration does not know the master key): the first start after it
/// records the master key that every start checks against the stored keys already.
///
/// Released migrations are never edited.
struct AddCurrentMasterKey: AsyncMigration {
    var name: String { "015_AddCurrentMasterKey" }

    func prepare(on database: any Database) async throws {
        try await database.schema(CurrentMasterKeyRecord.schema)
            .field("id", .string, .identifier(auto: false))
            .field("master_key_id", .string, .required)
            .field("recorded_at", .datetime, .required)
            .create()
    }

    func revert(on database: any Database) async throws {
        try await database.schema(CurrentMasterKeyRecord.schema).delete()
    }
}
