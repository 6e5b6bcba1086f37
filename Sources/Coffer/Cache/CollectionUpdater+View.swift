import CofferFormat
import Foundation

extension CollectionUpdater {
    /// What the cache holds for the collection, as an update reads it under the collection's lock:
    /// at its start, to know what to ask the server, and again before it switches, since a
    /// fallback (in this process or another) may have changed it while the update waited for the
    /// network.
    struct View: Sendable {
        /// The state in force (a fallback a crash interrupted finished first); nil when none is usable.
        var current: CacheState?
        /// The models that failed on this device.
        var failed: FailedModels?
        /// The newest manifest this cache verified, even when its models have since gone.
        var verified: CacheState?
        /// The manifest `failed.json` keeps as the floor: the newest one a model failed in.
        var failedFloor: Manifest?
        /// The time manifests are judged by (``ManifestTime``).
        var time: ManifestTime

        /// The newest manifest this cache verified, or the newest one a model failed in after the
        /// cache switched back from it: no older manifest, no other team's and no other content
        /// under its sequence is accepted after it (``ManifestTrust``).
        var floor: Manifest? {
            [verified?.manifest, failedFloor].compactMap { $0 }.max { $0.sequence < $1.sequence }
        }

        /// The ETag a conditional request names: the state in force's, while it is fresh.
        var etag: String? {
            current.flatMap { $0.isFresh(at: time) ? $0.stored.etag : nil }
        }
    }

    /// Reads the view; call under the collection's lock. A last known good an interrupted update
    /// staged is promoted or dropped first, and a fallback a crash interrupted is finished
    /// (``LastKnownGood``), removing what it leaves unused except `keeping` (the models this update
    /// committed for the version it is about to switch to).
    func view(keeping: Set<String> = []) throws(SyncFailure) -> View {
        cache.settleStagedPrevious(publicKey: configuration.publicKey)
        var current = cache.loadState(publicKey: configuration.publicKey)
        let failed: FailedModels?
        do {
            failed = try cache.loadFailed()
        } catch {
            // The failures recorded are unknown: any manifest might name one. The cache keeps
            // serving the version in force.
            throw .cache("\(error)")
        }
        if let state = current, let failed {
            let lastKnownGood = LastKnownGood(cache: cache, publicKey: configuration.publicKey, updating: true)
            if let previous = try? lastKnownGood.finish(state, failed: failed, inUse: inUse().union(keeping)) {
                current = previous
                finishedFallback?(previous)
            }
        }
        let verified = current ?? cache.loadVerifiedState(publicKey: configuration.publicKey)
        let failedFloor = cache.floor(of: failed, publicKey: configuration.publicKey)
        // Expiry and freshness are judged by the device's clock, never before the newest issuedAt
        // those manifests carry: a clock set back revives no expired manifest (ManifestTime).
        let time = ManifestTime(deviceClock: configuration.deviceClock(), verified: [verified?.manifest, failedFloor])
        return View(current: current, failed: failed, verified: verified, failedFloor: failedFloor, time: time)
    }
}
