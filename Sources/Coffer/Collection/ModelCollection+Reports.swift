import CofferFormat
import Foundation

extension ModelCollection.Entry {
    /// What an entry of a downloaded collection reports against: its collection, deployment and
    /// manifest sequence, and the client that queues the reports and falls back.
    struct Source: Sendable {
        let collection: String
        let deploymentID: String
        let sequence: UInt64
        let client: CofferClient

        /// The model failed its checks while being opened or decrypted, its file intact: the
        /// model is to blame, whatever an earlier open of this file failed for.
        func failedChecks(_ entry: ModelCollection.Entry, _ error: any Error) {
            let client = self.client
            if let sha256 = entry.sha256 { client.deviceFailures.forget(sha256) }
            Task { _ = await client.failed(entry, source: self, reason: ReportReason.describe(error)) }
        }
    }

    /// Tells the server that the app loaded this model and it works. Fire and forget: returns at
    /// once, never throws and never waits for the network. The report is queued on disk under the
    /// cache folder and sent in the background (retried, with the same event ID, until the server
    /// answers; dropped after 7 days or beyond 1000 queued reports). Does nothing for a bundled
    /// model.
    public func reportLoaded() {
        guard let source else { return }
        let entry = self
        Task { await source.client.record(.loaded, for: entry, source: source) }
    }

    /// Tells the server that this model does not work on this device, and switches the collection
    /// back to its last known good version when the cache keeps one (docs/SDK.md, "Last known
    /// good"): the ``CofferClient/updates(identifier:)`` stream then announces a collection whose
    /// ``ModelCollection/fallback`` names this model, and the cache refuses this model until a
    /// newer deployment names another one for its name. Nothing is reported and nothing falls
    /// back when the model's file is gone or damaged on this device (the error was the device's
    /// disk, not the model): the next update downloads it again.
    ///
    /// Fire and forget, like ``reportLoaded()``. The reason sent is `error`'s type and a short
    /// description, at most 200 bytes, with file paths and long opaque strings (tokens, keys)
    /// removed; still, do not throw errors that carry personal data here.
    public func reportFailure(_ error: any Error) {
        // An I/O error reading the file is this device's, not the model's.
        guard let source, !(error is IOFailure) else { return }
        let entry = self
        let reason = ReportReason.describe(error)
        Task { _ = await source.client.failed(entry, source: source, reason: reason) }
    }

    /// The same as ``reportLoaded()`` or ``reportFailure(_:)``, awaitable: when it returns the
    /// report is queued on disk and a failure's fallback is done. Returns the collection switched
    /// back to, if it did. Never throws; sending happens in the background.
    @discardableResult
    public func report(_ outcome: ModelOutcome) async -> ModelCollection? {
        guard let source else { return nil }
        switch outcome {
        case .loaded:
            await source.client.record(.loaded, for: self, source: source)
            return nil
        case .failed(let reason):
            return await source.client.failed(self, source: source, reason: ReportReason.sanitize(reason))
        }
    }
}
