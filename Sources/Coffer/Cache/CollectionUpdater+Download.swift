import CofferFormat
import Foundation

/// An update's downloads (``CollectionUpdater``): the models a new version needs, and the repair of
/// the version in force. They run under the update lock alone — however slowly the bytes come,
/// a fallback or `endAccessing` is not held up — and each verified model enters `blobs/` under the
/// collection's lock.
extension CollectionUpdater {
    /// Downloads again the models of `state` marked damaged on this device (``CollectionCache/markDamaged(blobPath:)``)
    /// or gone from `blobs/` (``CollectionCache/absentModels(of:)``), from the manifest that named
    /// them, once the server answered and the cache keeps that version (a 304, a manifest refused
    /// or naming a model that failed here, a new version whose download failed); a new manifest's
    /// download takes them with its own. Best effort: a blob the server no longer has must not
    /// stop the update.
    /// Returns why the repair failed, if it did (a cancellation is thrown).
    @discardableResult
    func repair(_ state: CacheState?, updates: FileLock, progress: DownloadProgress) async throws(SyncFailure) -> SyncFailure? {
        let damaged = cache.damagedModels()
        guard let state, !damaged.isDisjoint(with: state.blobs.keys) || !cache.absentModels(of: state).isEmpty else { return nil }
        do {
            try await download(state, current: state, updates: updates, progress: progress, damaged: damaged)
            return nil
        } catch {
            if case .cancelled = error { throw error }
            if Task.isCancelled { throw .cancelled }
            return error
        }
    }

    /// Downloads every model of `next` not yet in `blobs/`, or in it but `damaged`, checks the bound
    /// first. The downloads hold the update lock `updates` only; each verified model is committed
    /// to `blobs/` under the collection's lock.
    func download(_ next: CacheState, current: CacheState?, updates: FileLock, progress: DownloadProgress,
                  damaged: Set<String>) async throws(SyncFailure) {
        // What a fallback or endAccessing meanwhile must leave in `blobs/`: recorded before the
        // models found there are counted as had. Best effort: without it, a model removed
        // meanwhile stops the switch, and the next update downloads it.
        try await withCollectionLock(updates) { () throws(SyncFailure) -> Void in
            _ = try? cache.markUpdateTarget(Set(next.blobs.keys).union(current.map { Set($0.blobs.keys) } ?? []))
        }
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
            // No part file is opened in a folder this update no longer holds.
            try Self.confirm(updates)
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
            try await withCollectionLock(updates) { () throws(SyncFailure) -> Void in
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
            }
            follower?.markVerified()
            await reportDownloaded(sha, of: next.manifest)
        }
    }

    /// Queues a `downloaded` report for each model name of `manifest` that is `sha256`.
    func reportDownloaded(_ sha256: String, of manifest: Manifest) async {
        guard let reporter else { return }
        let events = manifest.models.filter { $0.value.sha256 == sha256 }.keys.sorted().map {
            ReportEvent(deviceID: deviceID, collection: manifest.collection, sequence: manifest.sequence,
                        deployment: manifest.deploymentID, model: $0, sha256: sha256, outcome: .downloaded)
        }
        await reporter.enqueue(events)
    }
}
