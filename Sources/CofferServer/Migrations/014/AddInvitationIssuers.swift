import Fluent
import SQLKit

/// 014: who made each invitation, and with which credential (``InvitationIssuer``):
///
/// - `invitations.creator_id`, the account that made it;
/// - `invitations.token_id`, the API token that asked for it, or, for one made on the dashboard
///   (which asks for the password), the token that chose that password (``PasswordToken``);
///   absent when no token chose it.
///
/// An invitation is revoked when its maker stops being an owner of its team or that token is
/// revoked, and refused at redemption while either is so. Invitations from before this migration
/// have neither and keep working as they did. An index on `token_id`, which every token revocation
/// looks up.
///
/// Released migrations are never edited.
struct AddInvitationIssuers: AsyncMigration {
    var name: String { "014_AddInvitationIssuers" }

    func prepare(on database: any Database) async throws {
        // One column a statement: SQLite's ALTER TABLE adds one at a time.
        try await database.schema(InvitationRecord.schema).field("creator_id", .uuid).update()
        try await database.schema(InvitationRecord.schema).field("token_id", .uuid).update()
        if let sql = database as? any SQLDatabase {
            try await sql.create(index: "invitations_token_id").on(InvitationRecord.schema).column("token_id").run()
        }
    }

    func revert(on database: any Database) async throws {
        // SQLite drops no column an index names: the index first.
        if let sql = database as? any SQLDatabase {
            try await sql.drop(index: "invitations_token_id").run()
        }
        try await database.schema(InvitationRecord.schema).deleteField("token_id").update()
        try await database.schema(InvitationRecord.schema).deleteField("creator_id").update()
    }
}
