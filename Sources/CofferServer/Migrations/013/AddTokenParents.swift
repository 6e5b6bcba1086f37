import Fluent

/// 013: `api_tokens.parent_token_id`, the API token that made a token through `POST /v1/tokens`
/// (absent for tokens made otherwise: on the dashboard with the password, at set-up, on joining, and
/// every token from before this migration). Revoking a token revokes those it made, and theirs.
///
/// Released migrations are never edited.
struct AddTokenParents: AsyncMigration {
    var name: String { "013_AddTokenParents" }

    func prepare(on database: any Database) async throws {
        try await database.schema(TokenRecord.schema).field("parent_token_id", .uuid).update()
    }

    func revert(on database: any Database) async throws {
        try await database.schema(TokenRecord.schema).deleteField("parent_token_id").update()
    }
}
