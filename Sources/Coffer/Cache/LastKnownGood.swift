import CofferFormat
#if canImport(CryptoKit)
@preconcurrency import Crypto // CryptoKit's key types are Sendable only in Xcode 26's SDKs
#else
import Crypto
#endif
import Foundation

/// Switching a collection back to its previous complete version after one of its models failed on
/// the device (docs/SDK.md, "Last known good"). Runs under the collection's file lock.
///
/// The steps, each a crash point (``CrashPoint``), and what a crash after each leaves:
/// 1. `fallback-recorded`: the failed model is in `failed.json`. The state still names it; the
///    next update of the collection, or the next access without one (``UpdatePolicy/cachedOnly``,
///    ``CofferClient/cachedCollection(identifier:)``), finishes the fallback (``finish(_:failed:inUse:)``).
/// 2. `fallback-linked`: the previous version's models are back in `blobs/` beside the current ones.
/// 3. `fallback-state-written`, `fallback-state-committed`: `state.json` is replaced by the
///    previous state in one rename: the switch.
/// 4. `fallback-previous-removed`: the previous version is forgotten (it is current now), and
///    then the failed version's models are removed unless in use, or needed by an update in
///    flight (``CollectionCache/removeUnusedBesideUpdate(keeping:resumable:)``), which removes
///    them when it switches (an update that fails leaves them to the next update or
///    `endAccessing`): a fallback never waits for an update's downloads.
///
/// Before the rename the collection is the failed version, after it the previous one, never a mix.
struct LastKnownGood: Sendable {
    let cache: CollectionCache
    let publicKey: Curve25519.Signing.PublicKey
    /// Whether the caller is the update, which holds the update lock: it removes unused models
    /// itself. Anyone else spares what an update in flight needs.
    var updating = false

    /// What ``fallBack(from:model:sha256:reason:inUse:)`` did.
    enum Outcome: Sendable {
        /// The collection now serves `state`, the previous version.
        case switched(CacheState, FailedModels.Model)
        /// The failure is recorded, but no previous version that works is kept: the collection
        /// still serves the failed version.
        case noPrevious(FailedModels.Model)
        /// The collection no longer serves that model: nothing to do.
        case notCurrent
    }

    /// Records that `model` (`sha256`) of the current state failed for `reason`, and switches to
    /// the previous version when one is kept.
    func fallBack(model: String, sha256: String, reason: String, inUse: Set<String>) throws -> Outcome {
        guard let current = cache.loadVerifiedState(publicKey: publicKey), let entry = current.manifest.models[model],
              entry.sha256 == sha256
        else { return .notCurrent }
        // A record that cannot be read is not replaced: it may hold other failures and the floor.
        let existing = try cache.loadFailed()
        let record = FailedModels.Model(model: model, sha256: sha256, deploymentID: current.manifest.deploymentID,
                                        sequence: current.manifest.sequence, reason: reason, at: Date())
        var failed = existing ?? FailedModels(models: [], floorEnvelope: current.stored.envelope)
        failed.add(record, from: current, floor: cache.floor(of: existing, publicKey: publicKey))
        try cache.writeFailed(failed)
        CrashPoint.reach("fallback-recorded")
        guard let previous = try finish(current, failed: failed, inUse: inUse) else { return .noPrevious(record) }
        return .switched(previous, record)
    }

    /// Switches from `current` to the previous version when `current` names a failed model and the
    /// previous version is complete and names none; the state switched to, or nil.
    func finish(_ current: CacheState, failed: FailedModels, inUse: Set<String>) throws -> CacheState? {
        // The last known good an interrupted update staged is settled first.
        cache.settleStagedPrevious(publicKey: publicKey)
        guard failed.failedModel(in: current.manifest) != nil, let previous = cache.loadPrevious(publicKey: publicKey),
              failed.failedModel(in: previous.manifest) == nil,
              previous.manifest.models.mapValues(\.sha256) != current.manifest.models.mapValues(\.sha256)
        else { return nil }
        try cache.restorePreviousModels(previous)
        CrashPoint.reach("fallback-linked")
        try cache.writeState(previous, step: "fallback-state")
        cache.removePrevious()
        CrashPoint.reach("fallback-previous-removed")
        if updating {
            cache.removeUnused(keeping: Set(previous.blobs.keys).union(inUse))
        } else {
            cache.removeUnusedBesideUpdate(keeping: Set(previous.blobs.keys).union(inUse))
        }
        return previous
    }
}
