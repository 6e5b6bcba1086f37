import CofferFormat
#if canImport(CryptoKit)
@preconcurrency import Crypto // CryptoKit's key types are Sendable only in Xcode 26's SDKs
#else
import Crypto
#endif
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The last known good version of a collection: the one complete state the cache switched from
/// last, kept so that a model failing on the device can be backed out without the network
/// (docs/SDK.md, "Last known good"):
///
/// ```
/// ROOT/collections/ID/previous/state.json        the state switched from (one rename replaces it)
/// ROOT/collections/ID/previous/state.next.json   the state an update is switching from, staged
/// ROOT/collections/ID/previous/blobs/SHA.coffer  hard links to their models
/// ```
///
/// Hard links keep `blobs/` holding exactly what the current state names while the previous
/// version's models stay on disk (models the two share take no second copy). At most one previous
/// version is kept; keeping it is best effort: a file system without hard links has none.
///
/// An update stages the version it switches from beside the kept one (``stagePrevious(_:)``) and
/// makes it the kept one only once the new `state.json` is committed (``settlePrevious(switched:publicKey:)``):
/// until then the kept one stays whole, so a switch that fails (a full disk, the app ended) leaves
/// the version in force its last known good. A crash between the two is settled by the next
/// update or fallback (``settleStagedPrevious(publicKey:)``).
extension CollectionCache {
    var previousFolder: String { folder + "/previous" }
    var previousBlobsFolder: String { previousFolder + "/blobs" }
    var previousStatePath: String { previousFolder + "/state.json" }
    var stagedPreviousPath: String { previousFolder + "/state.next.json" }

    func previousBlobPath(_ sha256: String) -> String { previousBlobsFolder + "/" + sha256 + ".coffer" }

    /// Stages `state`, whose models are in `blobs/`, as the next previous version: links its
    /// models beside the kept version's and writes `previous/state.next.json` in one rename. The
    /// kept version is not touched.
    func stagePrevious(_ state: CacheState) throws {
        for path in [previousFolder, previousBlobsFolder] { try FileKeyStore.makePrivateFolder(path) }
        for sha in state.blobs.keys {
            guard link(blobPath(sha), previousBlobPath(sha)) == 0 || errno == EEXIST else {
                throw IOFailure(operation: .create, path: previousBlobPath(sha), errno: errno)
            }
        }
        try writeState(state, to: stagedPreviousPath, models: previousBlobsFolder, step: "previous")
    }

    /// Settles the staged previous version once an update tried to switch away from it:
    /// `switched`, it replaces the kept one (`previous/state.next.json` renamed over
    /// `previous/state.json`, then the links only the replaced version had are removed);
    /// otherwise it is dropped and the kept one stays as it was, with its own links only.
    func settlePrevious(switched: Bool, publicKey: Curve25519.Signing.PublicKey) {
        guard switched else {
            unlink(stagedPreviousPath)
            prunePrevious(keeping: loadVerifiedState(at: previousStatePath, publicKey: publicKey).map { Set($0.blobs.keys) } ?? [])
            return
        }
        guard let staged = loadVerifiedState(at: stagedPreviousPath, publicKey: publicKey),
              rename(stagedPreviousPath, previousStatePath) == 0
        else { return }  // settled again by the next update
        CrashPoint.reach("previous-promoted")
        // The rename is durable before the replaced version's links go.
        guard (try? DurableSync.synchronizeFolder(previousFolder)) != nil else { return }
        prunePrevious(keeping: Set(staged.blobs.keys))
    }

    /// Settles a previous version an interrupted update left staged: `state.json` still naming it,
    /// the switch did not happen (dropped); naming another, it did (promoted).
    func settleStagedPrevious(publicKey: Curve25519.Signing.PublicKey) {
        var info = stat()
        guard lstat(stagedPreviousPath, &info) == 0 else { return }
        let staged = loadVerifiedState(at: stagedPreviousPath, publicKey: publicKey)
        let current = loadVerifiedState(publicKey: publicKey)
        settlePrevious(switched: staged != nil && current != nil && staged?.stored.envelope != current?.stored.envelope, publicKey: publicKey)
    }

    /// The previous version, verified like the current one and complete: each of its models is in
    /// `previous/blobs/` with its size.
    func loadPrevious(publicKey: Curve25519.Signing.PublicKey) -> CacheState? {
        guard let state = loadVerifiedState(at: previousStatePath, publicKey: publicKey) else { return nil }
        for (sha, entry) in state.blobs where !Self.isFile(previousBlobPath(sha), size: entry.size) { return nil }
        return state
    }

    /// Links the previous version's models into `blobs/`: those already there with their size
    /// stay; one of another size there (damaged on the disk) is replaced in one rename, before
    /// the previous version's own link goes.
    func restorePreviousModels(_ state: CacheState) throws {
        for (sha, entry) in state.blobs where !hasBlob(sha, size: entry.size) {
            // Named like a model, so the next update's pruning removes one a crash left.
            try Self.hardLink(previousBlobPath(sha), replacing: blobPath(sha), through: blobsFolder + "/.restore-" + sha + ".coffer")
        }
        try DurableSync.synchronizeFolder(blobsFolder)
    }

    /// Makes `destination` a hard link to `source` in one rename, whatever was there: links
    /// `source` at `temporary` (removing one a crash left) and renames that over `destination`.
    static func hardLink(_ source: String, replacing destination: String, through temporary: String) throws(IOFailure) {
        unlink(temporary)
        guard link(source, temporary) == 0 else { throw IOFailure(operation: .create, path: destination, errno: errno) }
        guard rename(temporary, destination) == 0 else {
            let failure = IOFailure(operation: .rename, path: destination, errno: errno)
            unlink(temporary)
            throw failure
        }
    }

    /// Forgets the previous version, and one staged: the states first, then the links.
    func removePrevious() {
        unlink(previousStatePath)
        unlink(stagedPreviousPath)
        prunePrevious(keeping: [])
    }

    /// Removes the links not in `keeping`, and leftovers of interrupted state writes.
    private func prunePrevious(keeping: Set<String>) {
        Self.removeModels(in: previousBlobsFolder, suffix: ".coffer", keeping: keeping)
        for name in Self.names(in: previousFolder) where name.hasPrefix(".state.json.~") || name.hasPrefix(".state.next.json.~") {
            unlink(previousFolder + "/" + name)
        }
    }
}
