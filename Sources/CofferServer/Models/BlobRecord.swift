import Fluent
import Foundation

/// A stored sealed model, addressed by the SHA-256 of its bytes (lowercase hex).
final class BlobRecord: Model, @unchecked Sendable {
    static let schema = "blobs"

    @ID(custom: "id", generatedBy: .user) var id: String?
    @Field(key: "size") var size: Int64
    /// The team that first uploaded it.
    @Parent(key: "team_id") var team: TeamRecord
    @Timestamp(key: "created_at", on: .create) var createdAt: Date?
    /// The last time anyone uploaded these bytes (a repeated upload counts): collection's clock.
    @OptionalField(key: "last_uploaded_at") var lastUploadedAt: Date?

    init() {}

    init(sha256: String, size: Int64, teamID: UUID) {
        self.id = sha256
        self.size = size
        self.$team.id = teamID
    }
}
