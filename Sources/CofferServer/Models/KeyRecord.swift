import Fluent
import Foundation

/// A team's model key, its material encrypted under the master key (never stored in the clear).
final class KeyRecord: Model, @unchecked Sendable {
    static let schema = "model_keys"

    /// The key ID, as written into containers.
    @ID(custom: "id", generatedBy: .user) var id: String?
    @Parent(key: "team_id") var team: TeamRecord
    @Field(key: "name") var name: String
    /// nonce | ciphertext | tag of the 32-byte key, AES-256-GCM under the master key, bound to the ID and team.
    @Field(key: "wrapped_key") var wrappedKey: Data
    /// Which master key wrapped it (the first 16 hex digits of its SHA-256), for rotation.
    @Field(key: "master_key_id") var masterKeyID: String
    @Timestamp(key: "created_at", on: .create) var createdAt: Date?
    @OptionalField(key: "revoked_at") var revokedAt: Date?

    init() {}

    init(id: String, teamID: UUID, name: String, wrappedKey: Data, masterKeyID: String) {
        self.id = id
        self.$team.id = teamID
        self.name = name
        self.wrappedKey = wrappedKey
        self.masterKeyID = masterKeyID
    }
}
