import Fluent
import Foundation

/// Something that needs a blob to stay (a deployment's model, from issue 4 on): while a reference
/// exists, the blob is never collected.
final class BlobReferenceRecord: Model, @unchecked Sendable {
    static let schema = "blob_references"

    @ID(key: .id) var id: UUID?
    @Field(key: "blob_id") var blobID: String
    /// Who holds it, e.g. `deployment:<id>/<model name>`.
    @Field(key: "holder") var holder: String
    @Timestamp(key: "created_at", on: .create) var createdAt: Date?

    init() {}

    init(blobID: String, holder: String) {
        self.blobID = blobID
        self.holder = holder
    }
}

/// An upload in flight: while an unexpired lease names a blob, collection leaves it alone.
final class UploadLeaseRecord: Model, @unchecked Sendable {
    static let schema = "upload_leases"

    @ID(key: .id) var id: UUID?
    @Field(key: "blob_id") var blobID: String
    @Field(key: "expires_at") var expiresAt: Date
    /// The team whose quota the upload reserved ``size`` of (``TeamQuota``); nil: nothing reserved.
    @OptionalField(key: "team_id") var teamID: UUID?
    @OptionalField(key: "size") var size: Int64?

    init() {}

    init(blobID: String, expiresAt: Date) {
        self.blobID = blobID
        self.expiresAt = expiresAt
    }

    /// How long an upload's lease lasts unless renewed: ``LeaseKeeper`` renews it while the
    /// upload's body keeps arriving, so only an upload that stopped sending loses it.
    static let lifetime: TimeInterval = 3600

    /// The lease an upload takes for its blob, until `lifetime` after `now`.
    static func forUpload(of blobID: String, lifetime: TimeInterval = UploadLeaseRecord.lifetime, now: Date = Date()) -> UploadLeaseRecord {
        UploadLeaseRecord(blobID: blobID, expiresAt: now.addingTimeInterval(lifetime))
    }

    /// The lease of an upload whose blob is known only from its bytes (the dashboard's), taken
    /// before they are read, under `upload:UUID` (never a content address, so collection's checks
    /// for leases on a blob do not see it) until ``LeaseKeeper/name(_:)`` names the blob.
    static func forUnnamedUpload(lifetime: TimeInterval = UploadLeaseRecord.lifetime, now: Date = Date()) -> UploadLeaseRecord {
        forUpload(of: "upload:" + UUID().uuidString, lifetime: lifetime, now: now)
    }
}
