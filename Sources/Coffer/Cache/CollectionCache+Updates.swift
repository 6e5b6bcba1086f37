import CofferFormat
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The two locks of a collection's folder, and what an update in flight keeps (docs/SDK.md,
/// "The cache", "Locks"):
///
/// ```
/// ROOT/collections/ID/lock         the collection's lock: held for a step that reads and writes the
///                                  folder (an update's start, each model it commits, its switch; a
///                                  fallback; endAccessing), never while waiting for the network
/// ROOT/collections/ID/update.lock  held by an update from start to end, network included
/// ROOT/collections/ID/update.json  the models the update in flight may switch to or copy from
/// ```
///
/// Updates take `update.lock` first, so that one update at a time downloads into `staging/`, in
/// any process; they take the collection's lock only for the steps that touch what others read.
/// A fallback or ``CofferClient/endAccessing(identifier:)`` takes the collection's lock alone, so
/// a server or CDN that trickles its answers holds up the update, never them. What they remove
/// while an update runs spares what that update needs
/// (``removeUnusedBesideUpdate(keeping:resumable:)``).
extension CollectionCache {
    var updateLockPath: String { folder + "/update.lock" }
    var updateTargetPath: String { folder + "/update.json" }

    /// Takes the update lock: waits (polling, cancellably) while another update holds it.
    func lockUpdates() async throws -> FileLock { try await FileLock.acquire(updateLockPath) }

    /// The update lock if no update holds it; nil while one does. Never waits.
    func lockUpdatesIfFree() throws -> FileLock? { try FileLock.acquireIfFree(updateLockPath) }

    /// ``removeUnused(keeping:resumable:)`` for whoever is not the update (a fallback,
    /// `endAccessing`); call under the collection's lock. While an update is in flight, in this
    /// process or another, the models it may switch to or copy chunks from (``markUpdateTarget(_:)``)
    /// stay too, and so does every download in `staging/`; when what it needs cannot be read,
    /// nothing is removed. Otherwise the update lock is held meanwhile, so no update starts
    /// downloading while files go.
    func removeUnusedBesideUpdate(keeping: Set<String>, resumable: Set<String> = []) {
        if let updates = try? lockUpdatesIfFree() {
            defer { updates.release() }
            removeUnused(keeping: keeping, resumable: resumable)
            return
        }
        guard let target = updateTarget() else { return }
        let downloads = Set(Self.names(in: stagingFolder).map { String($0.prefix { $0 != "." }) })
        removeUnused(keeping: keeping.union(target), resumable: downloads)
    }

    /// Records `models` (SHA-256s) as what the update in flight may switch to or copy chunks from:
    /// ``removeUnusedBesideUpdate(keeping:resumable:)`` keeps them while the update lock is held.
    /// Written under the collection's lock before the update looks for the models it lacks, so a
    /// model found in `blobs/` then is still there at the switch. Replaced in one rename.
    func markUpdateTarget(_ models: Set<String>) throws {
        let bytes = try JSONEncoder().encode(UpdateTarget(models: models.sorted()))
        try AtomicOutput.write(bytes, to: updateTargetPath, replacing: true)
    }

    /// Forgets the update's target once it ended (its lock still held).
    func clearUpdateTarget() {
        unlink(updateTargetPath)
    }

    /// The target of the update in flight: empty when none is recorded (it has not yet looked for
    /// models), nil when the record cannot be read.
    func updateTarget() -> Set<String>? {
        let data: Data?
        do {
            data = try PositionalFile.contentsIfPresent(at: updateTargetPath, atMost: Self.maximumRecordSize)
        } catch {
            return nil
        }
        guard let data else { return [] }
        guard let target = try? JSONDecoder().decode(UpdateTarget.self, from: data), target.format == 1 else { return nil }
        return Set(target.models.filter(Hex.isSHA256))
    }
}

/// `update.json`: the SHA-256s of the models an update in flight may switch to or copy from.
private struct UpdateTarget: Codable {
    var format = 1
    var models: [String]
}
