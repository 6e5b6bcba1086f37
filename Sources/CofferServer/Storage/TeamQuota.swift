import Fluent
import Vapor

/// A team's storage quota (COFFER_TEAM_QUOTA_BYTES): the bytes of the blobs it uploaded first,
/// and what its uploads in flight reserved. The same limit holds for each account across the teams
/// it owns (``admitForOwners(of:named:size:except:on:)``): any signed-in user may create teams, and
/// one account must not store the quota once per team it creates.
///
/// Checked when an upload starts, before a byte is written: a blob the store already holds costs
/// nothing more. An admitted upload reserves its size on its lease until the lease is deleted
/// (the upload ended: its blob, if stored, counts instead) or expires (an hour after it was taken
/// or last renewed: ``LeaseKeeper`` renews it while the body keeps arriving, so an upload kept
/// alive for hours still holds its reservation), and the check runs under the team's lock
/// (``TeamLock``) and its owners' (``AccountLock``), so uploads started at the same moment cannot
/// together pass the quota.
struct TeamQuota {
    let limit: Int64

    /// Refuses with 413 `quota_exceeded` an upload of `size` bytes to a blob the server holds as
    /// `held` when it spends quota (``HeldBlob/charges(_:)``) and would take `team` past the limit;
    /// else reserves `size` on `lease`. Call it under the upload's lease, with `held` read under
    /// it, so blob collection cannot change the record or bytes it decides on.
    func admitUpload(of held: HeldBlob, size: Int64, for team: TeamRecord, on db: any Database,
                     reservingOn lease: UploadLeaseRecord) async throws {
        guard held.charges(size) else { return }
        try await admit(size, for: team, on: db, reservingOn: lease)
    }

    /// Refuses with 413 `quota_exceeded` when `size` more bytes, with what the team's other uploads
    /// in flight reserved, would take `team` past the limit, or any of its owners across the teams
    /// they own; else reserves them on `lease`.
    func admit(_ size: Int64, for team: TeamRecord, on db: any Database, reservingOn lease: UploadLeaseRecord) async throws {
        let teamID = try team.requireID(), leaseID = try lease.requireID(), quota = self, name = team.name
        try await db.writeTransaction { tx in
            try await TeamLock.hold(teamID, on: tx)
            let (used, reserved) = try await Self.held(by: [teamID], except: leaseID, on: tx)
            guard quota.fits(size, used: used, reserved: reserved) else {
                let inFlight = reserved > 0 ? " (\(reserved) more reserved by uploads in progress)" : ""
                throw APIError(.payloadTooLarge, "quota_exceeded",
                               "team \(name) stores \(used) of its \(quota.limit) bytes\(inFlight); this blob needs \(size) more (COFFER_TEAM_QUOTA_BYTES)")
            }
            try await quota.admitForOwners(of: teamID, named: name, size: size, except: leaseID, on: tx)
            try await UploadLeaseRecord.query(on: tx).filter(\.$id == leaseID).set(\.$teamID, to: teamID).set(\.$size, to: size).update()
        }
    }

    /// Whether `size` more bytes fit the limit beside `used` and `reserved` (not when the sum
    /// overflows).
    func fits(_ size: Int64, used: Int64, reserved: Int64) -> Bool {
        let (busy, overflowed) = used.addingReportingOverflow(reserved)
        let (total, overflow) = busy.addingReportingOverflow(size)
        return !overflowed && !overflow && total <= limit
    }

    /// The bytes of the blobs `teamIDs` uploaded first, and what their uploads in flight (unexpired
    /// leases) other than `leaseID` reserved, each added without overflow.
    static func held(by teamIDs: [UUID], except leaseID: UUID, on db: any Database) async throws -> (used: Int64, reserved: Int64) {
        let used = try await BlobRecord.query(on: db).filter(\.$team.$id ~~ teamIDs).all(\.$size)
        let reserved = try await UploadLeaseRecord.query(on: db).filter(\.$teamID ~~ teamIDs).filter(\.$expiresAt > Date())
            .filter(\.$id != leaseID).all(\.$size)
        return (total(used), total(reserved.compactMap { $0 }))
    }

    /// `sizes` added, negatives as 0, `Int64.max` past overflow.
    private static func total(_ sizes: [Int64]) -> Int64 {
        sizes.reduce(Int64(0)) { total, size in
            let (sum, overflow) = total.addingReportingOverflow(max(0, size))
            return overflow ? .max : sum
        }
    }
}
