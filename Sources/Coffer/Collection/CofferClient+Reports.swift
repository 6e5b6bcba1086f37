import Foundation

/// Reports (docs/SDK.md, "Reports") and the fallback to the last known good ("Last known good").
extension CofferClient {
    /// Records `outcome` for `entry` and sends the queued reports now, waiting for the server's
    /// answer to this one — what `coffer report` does. A failure also switches the collection back
    /// to its last known good version first, as ``ModelCollection/Entry/reportFailure(_:)`` does.
    ///
    /// Returns the collection switched back to, if a failure made it switch. Throws
    /// ``ReportError/queued(_:)`` when the server cannot be reached or asks to wait (the report
    /// stays queued and goes with the next send, here or in the background of a later client on
    /// the same cache), ``ReportError/refused(status:code:reason:)`` when the server refused it for
    /// good (it was dropped), ``ReportError/notReportable(_:)`` for a bundled model, or for a
    /// failure of a model whose file is gone or damaged on this device (nothing is queued and
    /// nothing falls back: see ``ModelCollection/Entry/reportFailure(_:)``).
    @discardableResult
    public func report(_ outcome: ModelOutcome, for entry: ModelCollection.Entry) async throws(ReportError) -> ModelCollection? {
        guard let source = entry.source else { throw .notReportable("\(entry.modelName) is not a downloaded model of a deployment") }
        let reason: String?, kind: ReportEvent.Outcome
        switch outcome {
        case .loaded: (kind, reason) = (.loaded, nil)
        case .failed(let text): (kind, reason) = (.failed, ReportReason.sanitize(text))
        }
        if kind == .failed, !fileIsAsDownloaded(entry) {
            throw .notReportable("the file of \(entry.modelName) on this device is gone or damaged (the next update downloads it again); that says nothing about the model")
        }
        guard let event = event(kind, for: entry, source: source, reason: reason) else {
            throw .notReportable("the device ID cannot be read from the key store")
        }
        await reporter.enqueue([event], sendInBackground: false)
        let switched = kind == .failed ? await fallBack(entry, source: source, reason: reason ?? "") : nil
        let result = await reporter.sendNow(until: event.id)
        if let error = result.targetError { throw error }
        if !result.targetAnswered { throw result.stop ?? .queued(.cache(Reporter.queueNotWritten)) }
        return switched
    }

    /// Sends the queued reports now, in batches, and returns how many the server accepted. Throws
    /// ``ReportError/queued(_:)`` when the server cannot be reached or asks to wait (what is left
    /// stays queued). Reports the server refused for good are dropped without an error. The SDK
    /// sends by itself in the background; call this where a process is about to end.
    @discardableResult
    public func sendReports() async throws(ReportError) -> Int {
        let result = await reporter.sendNow(until: nil)
        if let stop = result.stop { throw stop }
        return result.accepted
    }

    // MARK: internals

    /// The event `kind` for `entry`; nil without a SHA-256 (a bundled model) or a device ID.
    func event(_ kind: ReportEvent.Outcome, for entry: ModelCollection.Entry, source: ModelCollection.Entry.Source,
               reason: String? = nil) -> ReportEvent? {
        guard let sha = entry.sha256, let device = try? keys.deviceID() else { return nil }
        return ReportEvent(deviceID: device, collection: source.collection, sequence: source.sequence, deployment: source.deploymentID,
                           model: entry.modelName, sha256: sha, outcome: kind, reason: reason)
    }

    /// Queues `kind` for `entry` and sends in the background.
    func record(_ kind: ReportEvent.Outcome, for entry: ModelCollection.Entry, source: ModelCollection.Entry.Source) async {
        guard let event = event(kind, for: entry, source: source) else { return }
        await reporter.enqueue([event])
    }

    /// Queues `opened` the first time this process opens the model.
    func opened(_ entry: ModelCollection.Entry, source: ModelCollection.Entry.Source) async {
        guard let sha = entry.sha256, await reporter.firstOpening(source.collection, sha) else { return }
        await record(.opened, for: entry, source: source)
    }

    /// Queues `failed` for `entry` and falls back; the collection switched back to, if any.
    /// Neither when its file is gone or damaged on this device (``fileIsAsDownloaded(_:)``).
    func failed(_ entry: ModelCollection.Entry, source: ModelCollection.Entry.Source, reason: String) async -> ModelCollection? {
        guard fileIsAsDownloaded(entry) else { return nil }
        if let event = event(.failed, for: entry, source: source, reason: reason) { await reporter.enqueue([event]) }
        return await fallBack(entry, source: source, reason: reason)
    }

    /// Whether `entry`'s file is on this device as it was downloaded: its last open in this
    /// process did not fail because of the file (``DeviceFailures``: gone, damaged, replaced,
    /// unreadable — even if an update has since put a good copy in place), and it is there, with
    /// its size, not marked damaged (``ModelCollection/Entry/intactOrMarked(_:)``). Such a failure
    /// is this device's disk, not the model, whatever the app caught: reporting it `failed` would
    /// count against a healthy rollout, and falling back would refuse a good model here; the next
    /// update downloads the file again instead. Checked without reading the file.
    func fileIsAsDownloaded(_ entry: ModelCollection.Entry) -> Bool {
        guard let sha256 = entry.sha256 else { return true }
        let path = entry.modelURL.path
        return !deviceFailures.contains(sha256) && CollectionCache.isFile(path, size: Int64(clamping: entry.size))
            && !CollectionCache.isMarkedDamaged(blobPath: path)
    }

    /// Switches `entry`'s collection back to its last known good version, under the collection's
    /// lock, and announces it on ``updates(identifier:)``. An update in flight does not hold that
    /// lock while it waits for the network, so this never waits for a slow server; the update
    /// reads the cache again before it switches and does not adopt the failed model.
    func fallBack(_ entry: ModelCollection.Entry, source: ModelCollection.Entry.Source, reason: String) async -> ModelCollection? {
        guard let sha = entry.sha256,
              let cache = try? CollectionCache(root: configuration.cacheDirectory, identifier: source.collection, teamID: configuration.teamID),
              let lock = try? await cache.lock()
        else { return nil }
        let inUse = ModelsInUse.models(in: cache)
        let outcome = try? LastKnownGood(cache: cache, publicKey: configuration.publicKey)
            .fallBack(model: entry.modelName, sha256: sha, reason: reason, inUse: inUse)
        guard case .switched(let state, let model)? = outcome else {
            lock.release()
            return nil
        }
        let cause = UnavailableCause.lastKnownGood(name: model.model, reason: model.reason)
        let switched = collection(state, cache: cache, origin: .cache(staleBecause: cause))
        // In use before the lock goes: an update in flight switches under it, and must not remove
        // the models this hands to the app (endAccessing releases them, as beginAccessing's).
        modelsInUse.retain(switched, in: cache)
        lock.release()
        listeners.announce(switched, to: source.collection)
        return switched
    }
}
