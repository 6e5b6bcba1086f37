import Fluent
import Vapor

/// A team's storage quota (COFFER_TEAM_QUOTA_BYTES): the bytes of the blobs it uploaded first.
///
/// Checked when an upload starts, before a byte is written: a blob the store already holds costs
/// nothing more. Uploads that run at the same moment are each checked against what was stored
/// before them, so together they can pass the quota by what is in flight.
struct TeamQuota {
    let limit: Int64

    /// Whether an upload of `size` bytes spends quota. A registered blob's bytes are counted
    /// already (for the team that uploaded it first), so re-sending one, or replacing a damaged
    /// copy of one, is free; an unregistered blob the store holds whole costs nothing more.
    static func charges(registered: Bool, stored: Int64?, size: Int64) -> Bool {
        !registered && stored != size
    }

    /// Refuses with 413 `quota_exceeded` an upload of `size` bytes to `address` that spends quota
    /// (``charges(registered:stored:size:)``) and would take `team` past the limit. Call it under
    /// the upload's lease, so blob collection cannot change the record or bytes it decides on.
    func admitUpload(of address: String, size: Int64, for team: @autoclosure () async throws -> TeamRecord,
                     store: any BlobStore, on db: any Database) async throws {
        let registered = try await BlobRecord.find(address, on: db) != nil
        guard try await Self.charges(registered: registered, stored: store.size(of: address), size: size) else { return }
        try await admit(size, for: team(), on: db)
    }

    /// Refuses with 413 `quota_exceeded` when `size` more bytes would take `team` past the limit.
    func admit(_ size: Int64, for team: TeamRecord, on db: any Database) async throws {
        let used = try await Self.used(by: team.requireID(), on: db)
        let (total, overflow) = used.addingReportingOverflow(size)
        guard overflow || total > limit else { return }
        throw APIError(.payloadTooLarge, "quota_exceeded",
                       "team \(team.name) stores \(used) of its \(limit) bytes; this blob needs \(size) more (COFFER_TEAM_QUOTA_BYTES)")
    }

    /// The bytes of the blobs `teamID` uploaded first, added without overflow.
    static func used(by teamID: UUID, on db: any Database) async throws -> Int64 {
        let sizes = try await BlobRecord.query(on: db).filter(\.$team.$id == teamID).all(\.$size)
        return sizes.reduce(Int64(0)) { total, size in
            let (sum, overflow) = total.addingReportingOverflow(max(0, size))
            return overflow ? .max : sum
        }
    }
}
