import CofferFormat
#if canImport(CryptoKit)
@preconcurrency import Crypto // CryptoKit's key types are Sendable only in Xcode 26's SDKs
#else
import Crypto
#endif
import Foundation

/// One update of one collection: ask for the manifest, verify it, download what is missing,
/// switch in one rename, remove what the new state no longer names (docs/SDK.md).
///
/// Runs under the collection's update lock (``CollectionCache/lockUpdates()``) from start to end,
/// so that one update at a time downloads into `staging/`. The collection's own lock, which a
/// fallback and `endAccessing` take, is held only for the steps that read and write the folder —
/// reading what the cache holds, committing each verified model, the switch — never while waiting
/// for the network: a server or CDN that trickles its answers holds up this update, not them.
/// What the cache holds is read again under that lock before the switch, since a fallback may have
/// switched the collection back, or recorded a failed model, while this update downloaded.
///
/// Whatever stops it — an error, a cancellation, the process being killed — the previous state
/// stays as usable as it was; downloads in progress are kept in `staging/` and resumed by the next
/// update.
struct CollectionUpdater: Sendable {
    let configuration: CofferConfiguration
    let api: DeviceAPI
    let cache: CollectionCache
    let deviceID: String
    /// SHA-256s of models of the collection's folder in use by this process, through any client
    /// (accessed and not ended: ``ModelsInUse``); never removed.
    let inUse: @Sendable () -> Set<String>
    /// Where `downloaded` reports go; nil: none.
    var reporter: Reporter? = nil
    /// Hears of a fallback a crash had interrupted and this update finished (the state switched to).
    var finishedFallback: (@Sendable (CacheState) -> Void)? = nil
    /// Decrypts one model while it downloads, if this update downloads it (``ModelFollower``).
    var follower: ModelFollower? = nil

    /// What an update did.
    enum Outcome: Sendable {
        /// The server confirmed the cached manifest (304), or sent the same models again.
        case unchanged(CacheState)
        /// The collection switched to a new manifest.
        case updated(CacheState)

        var state: CacheState {
            switch self {
            case .unchanged(let state), .updated(let state): return state
            }
        }
    }

    /// Runs the update; `progress` hears the bytes to download (once) and the bytes done. It runs
    /// as a background activity (``BackgroundActivity``): if the system's time runs out, it is
    /// cancelled, so no lock is held while the app is suspended.
    func run(progress: DownloadProgress) async throws(SyncFailure) -> Outcome {
        try await configuration.backgroundActivity.run("Coffer model update") { () async throws(SyncFailure) -> Outcome in
            try await updating(progress: progress)
        }
    }

    private func updating(progress: DownloadProgress) async throws(SyncFailure) -> Outcome {
        let updates: FileLock
        do {
            try cache.prepare()
            updates = try await cache.lockUpdates()
        } catch is CancellationError {
            throw .cancelled
        } catch {
            throw .cache("\(error)")
        }
        defer {
            // Not in a folder made anew after this one's was removed (``confirm(_:)``).
            if updates.isStillNamed() { cache.clearUpdateTarget() }
            updates.release()
        }
        let before = try await withCollectionLock(updates) { () throws(SyncFailure) -> View in try view() }
        let answer = try await manifest(etag: before.etag)
        guard case .envelope(let envelope, let newETag) = answer else {
            return try await confirmed(before, updates: updates, progress: progress)
        }
        let manifest: Manifest
        do throws(ManifestError) {
            manifest = try SignedManifest.verify(envelope, using: configuration.publicKey, now: before.time.now)
        } catch {
            throw .manifestRefused(Self.refusal(error, at: before.time))
        }
        // Judged by what the cache holds now: a fallback may have happened while the manifest was
        // on its way (a model recorded as failed, the collection switched back).
        let now = try await withCollectionLock(updates) { () throws(SyncFailure) -> View in try view() }
        if let refusal = ManifestTrust.refusal(of: manifest, collection: cache.identifier,
                                               configuredTeamID: configuration.teamID, trusted: now.floor) {
            try await repair(now.current, updates: updates, progress: progress)
            throw .manifestRefused(refusal)
        }
        if let bad = now.failed?.failedModel(in: manifest) {
            // The last known good stays; whatever an interrupted fallback or update left is not needed.
            try await repair(now.current, updates: updates, progress: progress)
            try await withCollectionLock(updates) { () throws(SyncFailure) -> Void in
                removeUnusedBeside(cache.loadState(publicKey: configuration.publicKey))
            }
            throw .lastKnownGood(name: bad.model, reason: bad.reason)
        }
        CrashPoint.reach("manifest-verified")
        let next = CacheState(envelope: envelope, etag: newETag, manifest: manifest)
        do {
            try await download(next, current: now.current, updates: updates, progress: progress, damaged: cache.damagedModels())
        } catch {
            // The new version cannot be had now (the cache's bound, a model the server lost): the
            // one in force is at least repaired.
            if case .cancelled = error { throw error }
            try await repair(now.current, updates: updates, progress: progress)
            throw error
        }
        return try await withCollectionLock(updates) { () throws(SyncFailure) -> Outcome in try switchTo(next, updates: updates) }
    }

    /// The server confirmed the manifest in force (`before`'s, a 304): its models gone or damaged
    /// are downloaded again, and whatever an interrupted update left is removed. When a fallback
    /// switched away from that manifest while the request or the repair ran, the last known good
    /// stays.
    private func confirmed(_ before: View, updates: FileLock, progress: DownloadProgress) async throws(SyncFailure) -> Outcome {
        // A 304 confirms only the ETag that was sent: without one (nothing cached, or a manifest
        // half way to its expiry) it would keep an old manifest alive for ever.
        guard let confirmed = before.current, before.etag != nil else {
            throw .server(.answer(status: 304, code: "not_modified", reason: "304 to a request that named no cached manifest"))
        }
        try await withCollectionLock(updates) { () throws(SyncFailure) -> Void in _ = try stillInForce(confirmed) }
        let failure = try await repair(confirmed, updates: updates, progress: progress)
        return try await withCollectionLock(updates) { () throws(SyncFailure) -> Outcome in
            let current = try stillInForce(confirmed)
            // A model still missing after its repair failed is that failure: the version in force
            // is not whole (the cache serves what it has, saying why).
            if let failure, !cache.absentModels(of: current).isEmpty { throw failure }
            // Still current: whatever an interrupted update left behind is not needed.
            removeUnusedBeside(current)
            return .unchanged(current)
        }
    }

    /// The state in force, read again under the collection's lock, when it is still `confirmed`.
    /// Otherwise a fallback switched away from it meanwhile: the last known good stays (and what
    /// the fallback left unused goes).
    private func stillInForce(_ confirmed: CacheState) throws(SyncFailure) -> CacheState {
        let now = try view()
        if let current = now.current, current.stored.envelope == confirmed.stored.envelope { return current }
        guard let bad = now.failed?.failedModel(in: confirmed.manifest) else { throw .cache(Self.changedMeanwhile) }
        removeUnusedBeside(now.current)
        throw .lastKnownGood(name: bad.model, reason: bad.reason)
    }

    /// Why an update stops when what the cache holds changed under it in a way no fallback explains.
    static let changedMeanwhile = "the cached collection changed while this update ran; the next update starts again from it"

    /// Removes what `state` (the state in force; nil: nothing) and the models in use do not name,
    /// keeping the downloads of `state`'s models in progress. Under both locks.
    func removeUnusedBeside(_ state: CacheState?) {
        guard let state else { return }
        cache.removeUnused(keeping: Set(state.blobs.keys).union(inUse()), resumable: Set(state.blobs.keys))
    }

    /// `body`'s result, run under the collection's lock, taken for this step only, once the update
    /// lock `updates` is still on the folder's file (``confirm(_:)``).
    func withCollectionLock<T>(_ updates: FileLock, _ body: () throws(SyncFailure) -> T) async throws(SyncFailure) -> T {
        try Self.confirm(updates)
        let lock: FileLock
        do {
            lock = try await cache.lock()
        } catch is CancellationError {
            throw .cancelled
        } catch {
            throw .cache("\(error)")
        }
        defer { lock.release() }
        try Self.confirm(updates)
        return try body()
    }

    /// The manifest, retried with backoff when the server answers 5xx or 429 (not when it
    /// cannot be reached: then the cache serves at once).
    private func manifest(etag: String?) async throws(SyncFailure) -> DeviceAPI.ManifestAnswer {
        var attempt = 1
        while true {
            do {
                return try await api.manifest(cache.identifier, deviceID: deviceID, etag: etag)
            } catch {
                guard case .unavailable = error, attempt < configuration.retry.attempts else { throw .server(error) }
                attempt += 1
                do {
                    try await Task.sleep(nanoseconds: UInt64(configuration.retry.delay(before: attempt) * 1e9))
                } catch {
                    throw .cancelled
                }
            }
        }
    }

    /// Why a manifest was refused; for an expired one judged by a verified `issuedAt` later than
    /// the device's clock, says so (the clock may have been set back).
    static func refusal(_ error: ManifestError, at time: ManifestTime) -> String {
        guard error == .expired, let issued = time.newestIssuedAt, issued > time.deviceClock else { return "\(error)" }
        let format = ISO8601DateFormatter()
        return "\(error); judged at \(format.string(from: issued)), when the newest manifest this cache verified was issued, "
            + "since this device's clock says \(format.string(from: time.deviceClock)): has it been set back?"
    }

    /// The sum of the (non-negative) sizes a manifest gives, saturating instead of wrapping.
    static func total(_ sizes: some Sequence<Int64>) -> UInt64 {
        sizes.reduce(UInt64(0)) { $0.addingSaturated(UInt64(max($1, 0))) }
    }

    /// Stops an update whose cache folder was removed while it ran (``FileLock/isStillNamed()``):
    /// another client may have made a new folder of that name and be updating it under a lock of
    /// its own, and this update's part file and renames would land in that client's work.
    static func confirm(_ lock: FileLock) throws(SyncFailure) {
        guard lock.isStillNamed() else {
            throw .cache("the cache folder was removed while this update ran; nothing more was written to it")
        }
    }
}
