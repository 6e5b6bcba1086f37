import Fluent
import Foundation

/// Which master key wraps the stored model keys and the manifest-signing key: one row,
/// `id = "current"`, naming it as ``MasterKey/id`` does (never the key itself). A rotation changes
/// it in the transaction that re-wraps the keys; every write of a wrapped key checks it in its own
/// transaction (``CurrentMasterKey``), and a start after a rotation stopped by a crash reads it to
/// tell which of two key files the stored keys need (``PendingMasterKey``).
final class CurrentMasterKeyRecord: Model, @unchecked Sendable {
    static let schema = "current_master_key"
    /// The ID of the one row.
    static let only = "current"

    @ID(custom: "id", generatedBy: .user) var id: String?
    @Field(key: "master_key_id") var masterKeyID: String
    /// When it was recorded: by the first start that found no row, or by the rotation that changed it.
    @Field(key: "recorded_at") var recordedAt: Date

    init() {}

    init(masterKeyID: String, recordedAt: Date = Date()) {
        self.id = Self.only
        self.masterKeyID = masterKeyID
        self.recordedAt = recordedAt
    }
}
