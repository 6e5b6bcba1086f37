import CofferFormat

/// What a manifest whose signature checked out must still agree with before the cache switches to
/// it: the collection asked for, the team the app trusts, and the newest manifest the cache
/// verified (after The Update Framework's rollback and mix-and-match checks). docs/SDK.md.
///
/// The team is the one configured (``CofferConfiguration/teamID``) or, when none is, the team of
/// the manifest the cache holds (trust on first use): one server signs the manifests of every
/// team, so without this a validly signed manifest of another tenant's collection of the same
/// name could be replayed to this app's devices.
enum ManifestTrust {
    /// Why `manifest` must be refused, or nil when it may replace `trusted` (the newest manifest
    /// this cache verified, if any).
    static func refusal(of manifest: Manifest, collection: String, configuredTeamID: String?, trusted: Manifest?) -> String? {
        guard manifest.collection == collection else {
            return "it is for collection \(PrintableText.sanitized(manifest.collection, limit: 100)), not \(collection)"
        }
        if let team = configuredTeamID ?? trusted?.teamID, team.lowercased() != manifest.teamID.lowercased() {
            let how = configuredTeamID != nil ? "the team this app is configured for" : "the team this cache first trusted"
            return "it is signed for team \(PrintableText.sanitized(manifest.teamID, limit: 100)), not \(team), \(how)"
        }
        guard let trusted else { return nil }
        if manifest.sequence < trusted.sequence {
            return "its sequence \(manifest.sequence) is older than the cached \(trusted.sequence)"
        }
        if manifest.sequence == trusted.sequence, let difference = difference(manifest, trusted) {
            return "it has the cached sequence \(manifest.sequence) but \(difference): a changed manifest must have a new sequence"
        }
        return nil
    }

    /// What differs between two manifests of the same sequence that must not: the deployment (a
    /// sequence is one activation), and, for the same target, the models. Re-signing (new
    /// `issuedAt`/`expiresAt`), a changed blob URL, and another target of the same deployment (the
    /// device's attributes now match another rule) are not differences.
    static func difference(_ manifest: Manifest, _ trusted: Manifest) -> String? {
        guard manifest.deploymentID.lowercased() == trusted.deploymentID.lowercased() else { return "another deployment" }
        guard manifest.target == trusted.target else { return nil }
        func content(_ entry: Manifest.Entry) -> [String] { [entry.versionID, entry.sha256, String(entry.size), entry.keyID] }
        guard manifest.models.mapValues(content) == trusted.models.mapValues(content) else { return "other models" }
        return nil
    }
}
