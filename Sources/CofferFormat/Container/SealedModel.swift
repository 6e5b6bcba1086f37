#if canImport(CryptoKit)
@preconcurrency import Crypto // CryptoKit's key types are Sendable only in Xcode 26's SDKs
#else
import Crypto
#endif
import Foundation

/// Seals models into Coffer containers and opens them again (docs/FORMAT.md).
///
/// A container is an authenticated header followed by fixed-size AES-256-GCM chunks. Sealing and
/// opening stream through bounded per-thread buffers and use every core; opening releases
/// plaintext only from chunks that authenticated.
public enum SealedModel {
    /// Choices a writer makes; readers learn them from the header.
    public struct Options: Sendable {
        /// The format version to write: 2 (content-defined chunks, sealed deterministically so
        /// that versions of a model share chunks) or 1 (fixed-size chunks under a per-file key).
        public var formatVersion: UInt16 = ContainerHeader.currentVersion
        /// log2 of the chunk size for version 1; 20 (1 MiB) measured fastest here (docs/BENCHMARKS.md).
        public var chunkSizeExponent: UInt8 = 20
        /// scrypt cost for passphrase containers: log2 N (r = 8, p = 1).
        public var passphraseLogN: UInt8 = 17
        /// Threads to use; defaults to the active processor count (at most 8).
        public var workers: Int = SealedModel.defaultWorkerCount

        /// The defaults.
        public init() {}
    }

    /// Threads used by default: the active processor count, at most 8.
    public static var defaultWorkerCount: Int { max(1, min(8, ProcessInfo.processInfo.activeProcessorCount)) }

    /// Called from worker threads with the number of plaintext bytes just processed.
    public typealias Progress = @Sendable (UInt64) -> Void

    /// Drafts the header for sealing `source` as `kind` named `name` with `key`: complete for
    /// version 1. For version 2 the plaintext is cut first (on up to `options.workers` threads), so
    /// the draft has every length, offset and the header's own length, but its chunk table holds a
    /// zero ID for every chunk and its MAC is zero: sealing computes each ID as it seals the chunk,
    /// then completes the header (``completed(_:ids:keys:)``) and writes it last.
    static func draftHeader(
        kind: ContainerHeader.PayloadKind, name: String, source: some PlaintextSource, key: KeyMaterial, options: Options
    ) throws -> (ContainerHeader, FileKeys) {
        let length = source.length
        guard ContainerHeader.supportedVersions.contains(options.formatVersion) else {
            throw ContainerError.unsupportedVersion(options.formatVersion)
        }
        guard options.formatVersion == 2 || ContainerHeader.chunkSizeExponents.contains(options.chunkSizeExponent) else {
            throw ContainerError.malformedHeader("chunk size 2^\(options.chunkSizeExponent) not in 2^16...2^20")
        }
        guard length <= ContainerHeader.maximumPlaintextLength else {
            throw ContainerError.malformedHeader("plaintext length over 2^48 bytes")
        }
        let derivation: ContainerHeader.KeyDerivation
        switch key {
        case .modelKey(let modelKey):
            derivation = .modelKey(id: modelKey.id)
        case .passphrase:
            derivation = .passphrase(ScryptParameters(
                logN: options.passphraseLogN, r: 8, p: 1, salt: randomBytes(ScryptParameters.saltLength)))
        }
        let safeName = ContainerHeader.isValidName(name) ? name : ""
        let v2 = options.formatVersion == 2
        var header = ContainerHeader(
            suite: v2 ? .deterministicAES256GCM : .aes256GCMWithHKDFSHA256,
            chunkSizeExponent: v2 ? 0 : options.chunkSizeExponent, payloadKind: kind, keyDerivation: derivation,
            plaintextLength: length, salt: randomBytes(ContainerHeader.saltLength), originalName: safeName)
        let keys = try FileKeys(for: header, using: key)
        if v2 {
            let lengths = try ContentChunker.lengths(
                of: source, segmentStarts: source.segmentStarts, gear: keys.chunkGear, threads: options.workers)
            header.chunkTable = ChunkTable(entries: lengths.map { ChunkTable.Entry(id: ChunkID.zero, length: $0) })
        } else {
            header.mac = keys.mac(of: header)
        }
        return (header, keys)
    }

    /// A version 2 draft with the chunk IDs found while sealing, and its MAC.
    static func completed(_ draft: ContainerHeader, ids: [ChunkID], keys: FileKeys) -> ContainerHeader {
        var header = draft
        let lengths = draft.chunkTable?.entries.map(\.length) ?? []
        precondition(ids.count == lengths.count, "a chunk ID for every chunk of the draft")
        header.chunkTable = ChunkTable(entries: zip(ids, lengths).map { ChunkTable.Entry(id: $0, length: $1) })
        header.mac = keys.mac(of: header)
        return header
    }

    /// `count` bytes from the system's secure random number generator (salts, IVs).
    static func randomBytes(_ count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }
}

extension SealedModel {
    /// Whether `key` opens containers with this header: it fits the header's key derivation and
    /// the header's MAC verifies (in constant time). A cheap check of a key before it is kept.
    public static func keyOpens(_ header: ContainerHeader, with key: KeyMaterial) -> Bool {
        (try? FileKeys(for: header, using: key))?.verify(header) ?? false
    }

    /// The MAC `header` would carry when sealed with `key`, or nil if the key does not fit the
    /// header's key derivation. For tools that build test inputs (fuzzing, vectors); sealing sets it itself.
    public static func headerMAC(for header: ContainerHeader, using key: KeyMaterial) -> [UInt8]? {
        (try? FileKeys(for: header, using: key)).map { $0.mac(of: header) }
    }
}
