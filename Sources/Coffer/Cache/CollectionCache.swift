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

/// One collection's folder in the cache (docs/SDK.md, "The cache"):
///
/// ```
/// ROOT/collections/ID/state.json        the manifest switched to last (one rename switches)
/// ROOT/collections/ID/blobs/SHA.coffer  verified sealed models, named by their SHA-256
/// ROOT/collections/ID/staging/SHA.part  downloads in progress, resumed by the next update
/// ROOT/collections/ID/lock              held for each step that reads and writes the folder
/// ROOT/collections/ID/update.lock       held by an update from start to end (CollectionCache+Updates.swift)
/// ROOT/collections/ID/update.json       the models the update in flight may switch to or copy from
/// ROOT/collections/ID/previous/         the last known good: the state switched from, with hard
///                                       links to its models (CollectionCache+Previous.swift)
/// ROOT/collections/ID/failed.json       models that failed on this device (FailedModels.swift)
/// ```
///
/// Models stay sealed at rest. A model enters `blobs/` only after its size and SHA-256 were
/// checked and it was synced to disk; `state.json` is switched only to models in `blobs/` (one
/// removed since by something else is downloaded again by the next update); models the
/// state does not name are removed after a switch.
struct CollectionCache: Sendable {
    let identifier: String
    let folder: String
    /// The team the app is configured for (``CofferConfiguration/teamID``): a cached manifest of
    /// another team is not there for this cache (neither served nor the floor for updates).
    let teamID: String?

    /// The folder for `identifier` under `root`; the identifier is checked, since it names a folder.
    init(root: URL, identifier: String, teamID: String? = nil) throws(CofferError) {
        guard Self.isValidIdentifier(identifier) else {
            throw .invalidConfiguration("a collection identifier is 1 to 100 ASCII letters, digits, '.', '_' or '-'")
        }
        self.identifier = identifier
        self.teamID = teamID
        folder = root.appendingPathComponent("collections", isDirectory: true).appendingPathComponent(identifier, isDirectory: true).path
    }

    /// The most bytes a state file or `failed.json` may hold: each carries one signed manifest (at
    /// most ``SignedManifest/maximumEnvelopeSize``) in base64, 4/3 of its size, and room for the
    /// rest (an ETag; up to ``FailedModels/maximumModels`` failed models). A larger file is not
    /// read, and the cache never writes one.
    static let maximumRecordSize = 2 * SignedManifest.maximumEnvelopeSize + (64 << 10)

    var blobsFolder: String { folder + "/blobs" }
    var stagingFolder: String { folder + "/staging" }
    var statePath: String { folder + "/state.json" }

    func blobPath(_ sha256: String) -> String { blobsFolder + "/" + sha256 + ".coffer" }
    func partPath(_ sha256: String) -> String { stagingFolder + "/" + sha256 + ".part" }

    /// Creates the folders (0700); on Apple platforms the cache root is kept out of backups, and
    /// where there are data protection classes the folders stay writable after the first unlock.
    func prepare() throws {
        let collections = (folder as NSString).deletingLastPathComponent
        for path in [collections, folder, blobsFolder, stagingFolder] { try StoragePlacement.makeSealedFolder(path) }
        #if canImport(Darwin)
        let placement = StoragePlacement.current
        let root = (collections as NSString).deletingLastPathComponent
        if placement.excludedFromBackup { StoragePlacement.excludeFromBackup(URL(fileURLWithPath: root, isDirectory: true)) }
        if placement.readableAfterFirstUnlock { StoragePlacement.protectUntilFirstUnlock(root) }
        #endif
    }

    /// Takes the collection's lock, held for a step that reads and writes the folder and never
    /// while waiting for the network (``lockUpdates()`` is the one an update holds throughout).
    func lock() async throws -> FileLock { try await FileLock.acquire(folder + "/lock") }

    /// Takes the collection's lock if no one holds it; nil when another client does. Never waits.
    func lockIfFree() throws -> FileLock? { try FileLock.acquireIfFree(folder + "/lock") }

    /// The cached state, verified with `publicKey` (its expiry is not checked: an expired manifest
    /// still describes models the device may keep using offline), of ``teamID`` when one is set,
    /// with at least one of the models it names in `blobs/` with its size. Nil when there is none,
    /// it cannot be used, or every model it names has gone from `blobs/`.
    ///
    /// A state missing some of its models (``absentModels(of:)``: removed by something else, such as
    /// the system purging a cache folder, or changed in size on the disk) still serves the others;
    /// the next update that reaches the server downloads the missing ones again.
    func loadState(publicKey: Curve25519.Signing.PublicKey) -> CacheState? {
        guard let state = loadVerifiedState(publicKey: publicKey) else { return nil }
        let blobs = state.blobs
        guard blobs.isEmpty || absentModels(of: state).count < blobs.count else { return nil }
        return state
    }

    /// The SHA-256s of the models `state` names that are not in `blobs/` with their size.
    func absentModels(of state: CacheState) -> Set<String> {
        Set(state.blobs.filter { !hasBlob($0.key, size: $0.value.size) }.keys)
    }

    /// The cached state, verified with `publicKey` like ``loadState(publicKey:)``, whether or not
    /// its models are all still in `blobs/`: what an update needs to refuse an older manifest even
    /// after a model was removed from the cache by something else.
    func loadVerifiedState(publicKey: Curve25519.Signing.PublicKey) -> CacheState? {
        loadVerifiedState(at: statePath, publicKey: publicKey)
    }

    /// The state file at `path`, verified as ``loadVerifiedState(publicKey:)`` says.
    func loadVerifiedState(at path: String, publicKey: Curve25519.Signing.PublicKey) -> CacheState? {
        guard let data = PositionalFile.contents(at: path, atMost: Self.maximumRecordSize),
              let stored = try? Self.decoder.decode(CacheState.Stored.self, from: data), stored.format == 1,
              let manifest = try? SignedManifest.verify(stored.envelope, using: publicKey, now: nil),
              manifest.collection == identifier, teamID.map({ $0.lowercased() == manifest.teamID.lowercased() }) ?? true
        else { return nil }
        return CacheState(stored: stored, manifest: manifest)
    }

    /// Whether `blobs/` has the model `sha256` with `size` bytes.
    func hasBlob(_ sha256: String, size: Int64) -> Bool {
        Self.isFile(blobPath(sha256), size: size)
    }

    /// Whether `path` is a regular file of `size` bytes.
    static func isFile(_ path: String, size: Int64) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG && Int64(info.st_size) == size
    }

    /// Moves a verified, synced download into `blobs/`.
    func commitBlob(_ sha256: String) throws {
        guard rename(partPath(sha256), blobPath(sha256)) == 0 else {
            throw IOFailure(operation: .rename, path: blobPath(sha256), errno: errno)
        }
    }

    /// Writes `state` beside `state.json`, syncs it and the folders, and renames it into place:
    /// the one step that switches the collection. `step` names its crash points
    /// (`STEP-written`, `STEP-committed`).
    func writeState(_ state: CacheState, step: String = "state") throws {
        try writeState(state, to: statePath, models: blobsFolder, step: step)
    }

    /// Writes `state` to `path` in one rename, after syncing the folder of its models.
    func writeState(_ state: CacheState, to path: String, models: String, step: String) throws {
        try DurableSync.synchronizeFolder(models)
        let bytes = try Self.encoder.encode(state.stored)
        let output = try AtomicOutput(finalPath: path, replacing: true)
        do {
            let file = try output.createFile(mode: 0o600)
            try bytes.withUnsafeBytes { try file.write($0, at: 0) }
            try file.synchronize()
            try CrashPoint.reach(step + "-written", writing: path)
            try output.commit()
        } catch {
            output.discard()
            throw error
        }
        CrashPoint.reach(step + "-committed")
        try DurableSync.synchronizeFolder((path as NSString).deletingLastPathComponent)
    }

    /// Removes models not in `keeping`, every download in progress except those in `resumable`,
    /// and leftovers of interrupted state writes.
    func removeUnused(keeping: Set<String>, resumable: Set<String> = []) {
        Self.removeModels(in: blobsFolder, suffix: ".coffer", keeping: keeping)
        Self.removeModels(in: stagingFolder, suffix: ".part", keeping: resumable)
        for name in Self.names(in: folder)
        where name.hasPrefix(".state.json.~") || name.hasPrefix(".failed.json.~") || name.hasPrefix(".update.json.~") {
            unlink(folder + "/" + name)
        }
        CrashPoint.reach("old-removed")
    }

    /// Removes the files of `folder` (named SHA + `suffix`) whose SHA-256 is not in `keeping`.
    static func removeModels(in folder: String, suffix: String, keeping: Set<String>) {
        for name in names(in: folder) {
            let sha = name.hasSuffix(suffix) ? String(name.dropLast(suffix.count)) : name
            if !keeping.contains(sha) { unlink(folder + "/" + name) }
        }
    }

    /// Bytes in `blobs/` and `staging/`.
    func usedBytes() -> UInt64 {
        var total: UInt64 = 0
        for folder in [blobsFolder, stagingFolder] {
            for name in Self.names(in: folder) {
                var info = stat()
                if lstat(folder + "/" + name, &info) == 0 { total += UInt64(max(0, info.st_size)) }
            }
        }
        return total
    }

    static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        // Unescaped, a base64 envelope takes 4/3 of its size whatever its bytes (``maximumRecordSize``).
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }

    static var decoder: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }

    static func names(in folder: String) -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
    }

    /// The server's rule: letters, digits, `.`, `_`, `-`, 1 to 100, not `.` or `..`.
    static func isValidIdentifier(_ identifier: String) -> Bool {
        (1...100).contains(identifier.utf8.count) && identifier != "." && identifier != ".."
            && identifier.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) || $0 == 0x2E || $0 == 0x5F || $0 == 0x2D }
    }
}
