import Fluent
import Vapor

extension TeamQuota {
    /// Refuses with 413 `quota_exceeded` when `size` more bytes for team `teamID` (named `team`)
    /// would take the teams one of its owners owns, together, past the limit, with what their
    /// uploads in flight other than `leaseID` reserved.
    ///
    /// The quota was only per team, and any signed-in user may create teams: one account stored
    /// the quota once per team it made. Counting each owner's teams together bounds what one
    /// account makes the server store, with no setting and no record beyond the memberships (a
    /// team keeps at least one owner, and an account alone cannot hand a team to anyone). The
    /// refusal names the owner but not what their other teams store: the uploader may not be a
    /// member of those. Call it in the admission's write transaction, after the team's lock: it
    /// takes the owners' (``AccountLock``), so that uploads to two teams of one owner are decided
    /// one after the other.
    func admitForOwners(of teamID: UUID, named team: String, size: Int64, except leaseID: UUID, on tx: any Database) async throws {
        let owners = try await MembershipRecord.query(on: tx).filter(\.$team.$id == teamID).filter(\.$role == .owner).all(\.$user.$id)
        try await AccountLock.hold(owners, on: tx)
        for owner in owners {
            let teams = try await MembershipRecord.query(on: tx).filter(\.$user.$id == owner).filter(\.$role == .owner).all(\.$team.$id)
            // An owner of this team alone: the team's own check was theirs.
            guard teams.count > 1 else { continue }
            let (used, reserved) = try await Self.held(by: teams, except: leaseID, on: tx)
            if fits(size, used: used, reserved: reserved) { continue }
            let name = try await UserRecord.find(owner, on: tx)?.name ?? "an owner"
            throw APIError(.payloadTooLarge, "quota_exceeded",
                           "team \(team)'s owner \(name) owns other teams too, and one account's teams may store \(limit) bytes together: "
                           + "with what they store and reserve, this blob's \(size) more do not fit (COFFER_TEAM_QUOTA_BYTES)")
        }
    }
}
