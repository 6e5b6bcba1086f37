import CofferFormat
import Foundation

extension CollectionUpdater {
    /// Switches the collection to `next`, whose models this update downloaded and committed; call
    /// under the collection's lock, as the last step of an update (`updates`: its update lock).
    ///
    /// What the cache holds is read again first: while the update waited for the network, a
    /// fallback may have switched the collection back to its last known good, or recorded a model
    /// as failed. A manifest that names a failed model is not adopted (the last known good stays),
    /// and one that is no longer newer than the floor of rollback protection is refused, as they
    /// would have been had the failure come first. The version switched from is the one in force
    /// now, and it becomes the last known good as ``LastKnownGood`` describes.
    func switchTo(_ next: CacheState, updates: FileLock) throws(SyncFailure) -> Outcome {
        let manifest = next.manifest
        let now = try view(keeping: Set(next.blobs.keys))
        let (current, verified, failed) = (now.current, now.verified, now.failed)
        if let refusal = ManifestTrust.refusal(of: manifest, collection: cache.identifier,
                                               configuredTeamID: configuration.teamID, trusted: now.floor) {
            throw .manifestRefused(refusal)
        }
        if let bad = failed?.failedModel(in: manifest) {
            removeUnusedBeside(current)
            throw .lastKnownGood(name: bad.model, reason: bad.reason)
        }
        // `state.json` names only models in `blobs/`: one that went meanwhile (removed by
        // something else) is downloaded again by the next update.
        guard cache.absentModels(of: next).isEmpty else {
            throw .cache("a model this update downloaded went from the cache before the switch; the next update downloads it again")
        }
        // The version switched from: the one in force, or the verified one whose models have all
        // gone. It becomes the last known good once the switch is committed; until then the one kept
        // stays whole, so a switch that fails leaves the version in force its last known good.
        var staged = false, keepsNone = false
        if let switchedFrom = current ?? verified,
           switchedFrom.manifest.models.mapValues(\.sha256) != manifest.models.mapValues(\.sha256),
           failed?.failedModel(in: switchedFrom.manifest) == nil {
            // Whole: none of its models gone or marked damaged (a mark left here is of a model
            // the new version does not name, and goes with the switch).
            if cache.absentModels(of: switchedFrom).isEmpty, cache.damagedModels().isDisjoint(with: switchedFrom.blobs.keys) {
                // The last known good: best effort, a cache without it only cannot fall back. Not
                // staged (a link or the state's write failed: a full disk): after the switch none
                // is kept, rather than the older one still recorded there.
                do {
                    try cache.stagePrevious(switchedFrom)
                    staged = true
                } catch {
                    cache.settlePrevious(switched: false, publicKey: configuration.publicKey)
                    keepsNone = true
                }
            } else {
                // The version switched from is incomplete or damaged: after the switch none is
                // kept, rather than one older than it (which the team had replaced).
                keepsNone = true
            }
        }
        try Self.confirm(updates)
        var failure: (any Error)?
        do {
            try cache.writeState(next)
        } catch {
            failure = error
        }
        // Whether the collection switched is what state.json holds: the rename may have come
        // before the error (a folder sync that failed after it).
        let switched = failure == nil
            || cache.loadVerifiedState(publicKey: configuration.publicKey)?.stored.envelope == next.stored.envelope
        if staged {
            cache.settlePrevious(switched: switched, publicKey: configuration.publicKey)
        } else if keepsNone, switched {
            cache.removePrevious()
        }
        if let failure { throw .cache("\(failure)") }
        if var failed {
            // A model this deployment replaces may be adopted again later.
            failed.forget(replacedIn: manifest)
            do {
                if try failed != cache.loadFailed() { try cache.writeFailed(failed) }
            } catch {
                throw .cache("\(error)")
            }
        }
        cache.removeUnused(keeping: Set(next.blobs.keys).union(inUse()))
        for sha in cache.damagedModels() where next.blobs[sha] == nil { cache.clearDamaged(sha) }
        if let current, current.manifest.models == manifest.models, current.manifest.deploymentID == manifest.deploymentID {
            return .unchanged(next)
        }
        return .updated(next)
    }
}
