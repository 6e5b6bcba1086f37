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
/// Runs under the collection's file lock. Whatever stops it — an error, a cancellation, the
/// process being killed — the previous state stays as usable as it was; downloads in progress are
/// kept in `staging/` and resumed by the next update.
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
    /// cancelled, so the lock is not held while the app is suspended.
    func run(progress: DownloadProgress) async throws(SyncFailure) -> Outcome {
        try await configuration.backgroundActivity.run("Coffer model update") { () async throws(SyncFailure) -> Outcome in
            try await locked(progress: progress)
        }
    }

    private func locked(progress: DownloadProgress) async throws(SyncFailure) -> Outcome {
        let lock: FileLock
        do {
            try cache.prepare()
            lock = try await cache.lock()
        } catch is CancellationError {
            throw .cancelled
        } catch {
            throw .cache("\(error)")
        }
        defer { lock.release() }
        // A last known good an interrupted update staged is promoted or dropped first.
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
            // A fallback a crash interrupted is finished first (LastKnownGood).
            let lastKnownGood = LastKnownGood(cache: cache, publicKey: configuration.publicKey)
            if let previous = try? lastKnownGood.finish(state, failed: failed, inUse: inUse()) {
                current = previous
                finishedFallback?(previous)
            }
        }
        // The newest manifest this cache verified, even when one of its models has since gone, or
        // the newest one a model failed in after the cache switched back from it: no older
        // manifest, no other team's and no other content under its sequence is accepted after it
        // (ManifestTrust).
        let verified = current ?? cache.loadVerifiedState(publicKey: configuration.publicKey)
        let failedFloor = cache.floor(of: failed, publicKey: configuration.publicKey)
        let floor = [verified?.manifest, failedFloor].compactMap { $0 }.max { $0.sequence < $1.sequence }
        // Expiry and freshness are judged by the device's clock, never before the newest issuedAt
        // those manifests carry: a clock set back revives no expired manifest (ManifestTime).
        let time = ManifestTime(deviceClock: configuration.deviceClock(), verified: [verified?.manifest, failedFloor])
        let etag = current.flatMap { $0.isFresh(at: time) ? $0.stored.etag : nil }
        let answer = try await manifest(etag: etag)
        guard case .envelope(let envelope, let newETag) = answer else {
            // A 304 confirms only the ETag that was sent: without one (nothing cached, or a
            // manifest half way to its expiry) it would keep an old manifest alive for ever.
            guard let current, etag != nil else {
                throw .server(.answer(status: 304, code: "not_modified", reason: "304 to a request that named no cached manifest"))
            }
            // A model still missing after its repair failed is that failure: the version in force
            // is not whole (the cache serves what it has, saying why).
            if let failure = try await repair(current, lock: lock, progress: progress), !cache.absentModels(of: current).isEmpty {
                throw failure
            }
            // Still current: whatever an interrupted update left behind is not needed.
            cache.removeUnused(keeping: Set(current.blobs.keys).union(inUse()), resumable: Set(current.blobs.keys))
            return .unchanged(current)
        }
        let manifest: Manifest
        do throws(ManifestError) {
            manifest = try SignedManifest.verify(envelope, using: configuration.publicKey, now: time.now)
        } catch {
            throw .manifestRefused(Self.refusal(error, at: time))
        }
        if let refusal = ManifestTrust.refusal(of: manifest, collection: cache.identifier,
                                               configuredTeamID: configuration.teamID, trusted: floor) {
            try await repair(current, lock: lock, progress: progress)
            throw .manifestRefused(refusal)
        }
        if let bad = failed?.failedModel(in: manifest) {
            // The last known good stays; whatever an interrupted fallback or update left is not needed.
            try await repair(current, lock: lock, progress: progress)
            if let current { cache.removeUnused(keeping: Set(current.blobs.keys).union(inUse()), resumable: Set(current.blobs.keys)) }
            throw .lastKnownGood(name: bad.model, reason: bad.reason)
        }
        CrashPoint.reach("manifest-verified")
        let next = CacheState(envelope: envelope, etag: newETag, manifest: manifest)
        do {
            try await download(next, current: current, lock: lock, progress: progress, damaged: cache.damagedModels())
        } catch {
            // The new version cannot be had now (the cache's bound, a model the server lost): the
            // one in force is at least repaired.
            if case .cancelled = error { throw error }
            try await repair(current, lock: lock, progress: progress)
            throw error
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
        try Self.confirm(lock)
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

    /// Downloads again the models of `state` marked damaged on this device (``CollectionCache/markDamaged(blobPath:)``)
    /// or gone from `blobs/` (``CollectionCache/absentModels(of:)``), from the manifest that named
    /// them, once the server answered and the cache keeps that version (a 304, a manifest refused
    /// or naming a model that failed here, a new version whose download failed); a new manifest's
    /// download takes them with its own. Best effort: a blob the server no longer has must not
    /// stop the update.
    /// Returns why the repair failed, if it did (a cancellation is thrown).
    @discardableResult
    private func repair(_ state: CacheState?, lock: FileLock, progress: DownloadProgress) async throws(SyncFailure) -> SyncFailure? {
        let damaged = cache.damagedModels()
        guard let state, !damaged.isDisjoint(with: state.blobs.keys) || !cache.absentModels(of: state).isEmpty else { return nil }
        do {
            try await download(state, current: state, lock: lock, progress: progress, damaged: damaged)
            return nil
        } catch {
            if case .cancelled = error { throw error }
            if Task.isCancelled { throw .cancelled }
            return error
        }
    }

    /// Downloads every model of `next` not yet in `blobs/`, or in it but `damaged`, checks the bound first.
    private func download(_ next: CacheState, current: CacheState?, lock: FileLock, progress: DownloadProgress,
                          damaged: Set<String>) async throws(SyncFailure) {
        let absent = next.blobs.filter { !cache.hasBlob($0.key, size: $0.value.size) }
        let missing = next.blobs.filter { absent[$0.key] != nil || damaged.contains($0.key) }.sorted { $0.key < $1.key }
        let needed = Self.total(missing.map(\.value.size))
        if let bound = configuration.maximumCacheBytes {
            // What is still cached of the version in force (a model gone from `blobs/` is in `absent`).
            let kept = Self.total(current.map { $0.blobs.filter { cache.hasBlob($0.key, size: $0.value.size) }.values.map(\.size) } ?? [])
            // A damaged model downloaded again replaces its file: no more bytes.
            let more = Self.total(absent.values.map(\.size))
            guard kept.addingSaturated(more) <= bound else {
                throw .cache("the update needs \(more) more bytes; with the \(kept) cached that exceeds the bound of \(bound)")
            }
        }
        progress.begin(total: needed)
        let fetcher = BlobFetcher(api: api, retry: configuration.retry)
        for (sha, entry) in missing {
            let name = next.manifest.models.first { $0.value.sha256 == sha }?.key ?? sha
            guard let url = URL(string: entry.url, relativeTo: configuration.serverURL)?.absoluteURL,
                  let scheme = url.scheme?.lowercased(), scheme == "https" || scheme == "http"
            else { throw .manifestRefused("model \(name) has no usable URL") }
            // The models this cache holds may share chunks with the new one (a delta update).
            let cachedModels = (current?.blobs.keys.sorted() ?? [])
                .filter { !damaged.contains($0) && cache.hasBlob($0, size: current?.blobs[$0]?.size ?? -1) }
                .map(cache.blobPath)
            // The follower reads the part file as it grows; whatever happens, it hears the end.
            let follower = self.follower.flatMap { next.manifest.models[$0.modelName]?.sha256 == sha ? $0 : nil }
            follower?.start(entry, partPath: cache.partPath(sha))
            defer { follower?.progress.close() }
            try await fetcher.fetch(name, entry, from: url, into: cache.partPath(sha), cachedModels: cachedModels,
                                    following: follower?.progress,
                                    skipped: { progress.lessToDownload($0) }, moreToTravel: { progress.moreToDownload($0) }) { progress.add($0) }
            CrashPoint.reach("blob-verified")
            try Self.confirm(lock)
            // The last known good no longer links a damaged or resized file this one replaces.
            cache.relinkPrevious(sha, to: cache.partPath(sha))
            do {
                try cache.commitBlob(sha)
            } catch {
                throw .cache("\(error)")
            }
            CrashPoint.reach("blob-committed")
            if damaged.contains(sha) {
                // The new copy is durable before the mark goes.
                try? DurableSync.synchronizeFolder(cache.blobsFolder)
                cache.clearDamaged(sha)
            }
            follower?.markVerified()
            await reportDownloaded(sha, of: next.manifest)
        }
    }

    /// Stops an update whose cache folder was removed while it ran (``FileLock/isStillNamed()``):
    /// another client may have made a new folder of that name and be updating it under a lock of
    /// its own, and this update's part file and renames would land in that client's work.
    private static func confirm(_ lock: FileLock) throws(SyncFailure) {
        guard lock.isStillNamed() else {
            throw .cache("the cache folder was removed while this update ran; nothing more was written to it")
        }
    }

    /// Queues a `downloaded` report for each model name of `manifest` that is `sha256`.
    private func reportDownloaded(_ sha256: String, of manifest: Manifest) async {
        guard let reporter else { return }
        let events = manifest.models.filter { $0.value.sha256 == sha256 }.keys.sorted().map {
            ReportEvent(deviceID: deviceID, collection: manifest.collection, sequence: manifest.sequence,
                        deployment: manifest.deploymentID, model: $0, sha256: sha256, outcome: .downloaded)
        }
        await reporter.enqueue(events)
    }
}
