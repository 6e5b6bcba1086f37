import Fluent
import Foundation
import SQLKit
import Vapor

/// Keeps an upload's lease (``UploadLeaseRecord``) from expiring while the upload's body keeps
/// arriving (``BlobIntake/receive(_:into:keeping:pieces:)`` calls ``bodyArrived()`` for each chunk),
/// and names its blob once the body is in when the address was not known before (``name(_:)``).
///
/// A lease reserves the upload's size against its team's quota (``TeamQuota``) and keeps blob
/// collection away from its bytes, both only until it expires. Before, it expired an hour after it
/// was taken whatever the upload was doing: a large model sent over a slow link lost it half-way,
/// and a developer who kept a PUT near the quota alive by trickling a byte under the idle timeout
/// had a second one admitted an hour later, then a third, and so stored the quota many times over
/// on the disk every team shares. Now, each time a twelfth of ``lifetime`` (five minutes by
/// default) has passed since the lease was last set, the next chunk sets it to expire a whole
/// ``lifetime`` later: one UPDATE then, none for the chunks in between.
///
/// Only an unexpired lease is extended. One that lapsed (the body stalled for most of its
/// lifetime, which the idle timeout otherwise prevents) reserved nothing meanwhile, so other uploads
/// may have been admitted on its bytes: the upload fails rather than go on unleased, as it does when
/// the database does not answer the renewal. Either is 503 `upload_lease_lapsed`; the client sends
/// the upload again.
struct LeaseKeeper {
    let leaseID: UUID
    /// How long the lease lasts after each renewal.
    let lifetime: TimeInterval
    /// When the lease was last set to expire ``lifetime`` later (taken or renewed).
    private(set) var renewedAt: Date
    private let database: any Database
    private let logger: Logger
    private let clock: @Sendable () -> Date

    /// Keeps `lease`, taken (``UploadLeaseRecord/forUpload(of:lifetime:now:)``) to expire `lifetime`
    /// after it was made. `clock` tells the time (tests move it).
    init(_ lease: UploadLeaseRecord, lifetime: TimeInterval, on database: any Database, logger: Logger,
         clock: @escaping @Sendable () -> Date = { Date() }) throws {
        leaseID = try lease.requireID()
        self.lifetime = lifetime
        renewedAt = lease.expiresAt.addingTimeInterval(-lifetime)
        self.database = database
        self.logger = logger
        self.clock = clock
    }

    /// How long after the last renewal the next one is due.
    var interval: TimeInterval { lifetime / 12 }

    /// More of the body arrived: renews the lease if a renewal is due. Throws 503
    /// `upload_lease_lapsed` when the lease expired already or could not be renewed.
    mutating func bodyArrived() async throws {
        let now = clock()
        guard now.timeIntervalSince(renewedAt) >= interval else { return }
        try await renew(at: now)
    }

    /// The body is in and its SHA-256 is `address`: the lease, taken before the address was known
    /// (``UploadLeaseRecord/forUnnamedUpload(lifetime:now:)``), names that blob from now on, so blob
    /// collection leaves it alone, and keeps what it reserved; renewed in the same statement.
    /// Throws as ``bodyArrived()`` does: a lease that lapsed reserved nothing meanwhile.
    mutating func name(_ address: String) async throws {
        try await renew(at: clock(), naming: address)
    }

    /// Sets the lease to expire ``lifetime`` after `now` (naming `blobID`, if given), unless it
    /// expired already; 503 `upload_lease_lapsed` otherwise.
    private mutating func renew(at now: Date, naming blobID: String? = nil) async throws {
        let renewed: Bool
        do {
            renewed = try await Self.extend(leaseID, to: now.addingTimeInterval(lifetime), naming: blobID, ifUnexpiredAt: now, on: database)
        } catch {
            logger.warning("an upload's lease could not be renewed; the upload is refused", metadata: ["type": "\(type(of: error))"])
            throw APIError(.serviceUnavailable, "upload_lease_lapsed",
                           "the server could not renew this upload's reservation (its database did not answer); send it again")
        }
        guard renewed else {
            throw APIError(.serviceUnavailable, "upload_lease_lapsed",
                           "this upload's reservation lapsed: no bytes came for most of its \(Int(lifetime)) seconds' lease; send it again")
        }
        renewedAt = now
    }

    /// Sets lease `leaseID` to expire at `expiry` (and to name `blobID`, if given) if it has not
    /// expired at `now`, in one statement; false when it had (or is gone: blob collection deletes
    /// expired leases).
    static func extend(_ leaseID: UUID, to expiry: Date, naming blobID: String? = nil, ifUnexpiredAt now: Date,
                       on database: any Database) async throws -> Bool {
        var naming: SQLQueryString = ""
        if let blobID { naming = ", blob_id = \(bind: blobID)" }
        return try await database.sql().raw("""
            UPDATE upload_leases SET expires_at = \(bind: expiry)\(naming) WHERE id = \(bind: leaseID) AND expires_at > \(bind: now) RETURNING id
            """).first() != nil
    }
}
