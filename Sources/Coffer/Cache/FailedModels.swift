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

/// The models that failed on this device, per collection (`ROOT/collections/ID/failed.json`,
/// 0600, replaced in one rename): an update refuses a manifest that names one of them for the same
/// model name, until a deployment naming another model for that name is adopted
/// (docs/SDK.md, "Last known good").
///
/// It also keeps the envelope of the newest manifest a failed model came from: after switching
/// back to an older state, that manifest stays the floor of rollback protection
/// (``ManifestTrust``), so the sequence a device accepts never goes down.
struct FailedModels: Codable, Sendable, Equatable {
    /// One model that failed.
    struct Model: Codable, Sendable, Equatable {
        let model: String
        let sha256: String
        let deploymentID: String
        let sequence: UInt64
        /// The bounded reason (``ReportReason``).
        let reason: String
        let at: Date
    }

    /// At most this many are kept, the newest.
    static let maximumModels = 32

    var format = 1
    var models: [Model]
    /// The signed manifest, as received, of the newest state a failed model came from.
    var floorEnvelope: Data

    /// The first failed model that `state` names (same name, same SHA-256).
    func failedModel(in manifest: Manifest) -> Model? {
        models.last { manifest.models[$0.model]?.sha256 == $0.sha256 }
    }

    /// Adds `model` (once), and makes `state` the floor when it is newer.
    mutating func add(_ model: Model, from state: CacheState, floor: Manifest?) {
        models.removeAll { $0.model == model.model && $0.sha256 == model.sha256 }
        models.append(model)
        models = Array(models.suffix(Self.maximumModels))
        if state.manifest.sequence >= floor?.sequence ?? 0 { floorEnvelope = state.stored.envelope }
    }

    /// Forgets the models `manifest` names another model for.
    mutating func forget(replacedIn manifest: Manifest) {
        models.removeAll { failed in manifest.models[failed.model].map { $0.sha256 != failed.sha256 } ?? false }
    }
}

/// `failed.json` is there but cannot be taken for a record (an I/O error, larger than a record the
/// cache writes, not JSON of this format): the failures and the floor it holds are unknown.
struct UnreadableFailedModels: Error, Sendable, CustomStringConvertible {
    let path: String
    let reason: String

    var description: String { "the failed models recorded in \(path) cannot be read (\(reason))" }
}

extension CollectionCache {
    var failedPath: String { folder + "/failed.json" }

    /// The failed models of this collection; nil when none are recorded (there is no file). A file
    /// that cannot be read throws: taken for "no failures", it would let an update adopt a failed
    /// model again and lower the floor of rollback protection.
    func loadFailed() throws(UnreadableFailedModels) -> FailedModels? {
        let data: Data?
        do {
            data = try PositionalFile.contentsIfPresent(at: failedPath, atMost: Self.maximumRecordSize)
        } catch {
            throw UnreadableFailedModels(path: failedPath, reason: (error as? IOFailure)?.reason ?? "\(error)")
        }
        guard let data else { return nil }
        guard let failed = try? Self.decoder.decode(FailedModels.self, from: data), failed.format == 1 else {
            throw UnreadableFailedModels(path: failedPath, reason: "not a record of failed models this SDK reads")
        }
        return failed
    }

    /// The floor manifest `failed` keeps, verified like a cached state.
    func floor(of failed: FailedModels?, publicKey: Curve25519.Signing.PublicKey) -> Manifest? {
        guard let failed, let manifest = try? SignedManifest.verify(failed.floorEnvelope, using: publicKey, now: nil),
              manifest.collection == identifier, teamID.map({ $0.lowercased() == manifest.teamID.lowercased() }) ?? true
        else { return nil }
        return manifest
    }

    /// Replaces `failed.json` in one rename (removes it when no model is left).
    func writeFailed(_ failed: FailedModels) throws {
        guard !failed.models.isEmpty else {
            guard unlink(failedPath) == 0 || errno == ENOENT else { throw IOFailure(operation: .remove, path: failedPath, errno: errno) }
            return
        }
        let bytes = try Self.encoder.encode(failed)
        // Never one that ``loadFailed()`` would not read back.
        guard bytes.count <= Self.maximumRecordSize else { throw IOFailure(operation: .write, path: failedPath, errno: EFBIG) }
        try AtomicOutput.write(bytes, to: failedPath, replacing: true)
        try DurableSync.synchronizeFolder(folder)
    }
}
