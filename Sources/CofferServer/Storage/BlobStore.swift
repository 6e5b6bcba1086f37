import CofferFormat
import Crypto
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Content-addressed, immutable blob files: `ROOT/ab/abcdef…` named by their SHA-256.
///
/// Uploads are written under `ROOT/incoming/` and renamed into place only when their digest,
/// size and container header check out, so a reader never sees a partial blob and several
/// instances can share one folder.
struct BlobStore: Sendable {
    let root: String

    init(root: String) throws {
        self.root = root
        try FileManager.default.createDirectory(atPath: root + "/incoming", withIntermediateDirectories: true)
    }

    /// Whether `text` is a content address: 64 lowercase hex digits.
    static func isAddress(_ text: String) -> Bool {
        text.utf8.count == 64 && text.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }

    func path(of address: String) -> String { root + "/" + address.prefix(2) + "/" + address }

    func exists(_ address: String) -> Bool { FileManager.default.fileExists(atPath: path(of: address)) }

    /// A fresh path to move a blob being collected out of sight.
    func asidePath() -> String { root + "/incoming/collect-" + UUID().uuidString }

    /// A fresh path for an upload in progress.
    func incomingPath() -> String { root + "/incoming/" + UUID().uuidString }

    /// Moves a verified upload into place (a no-op if another upload of the same bytes won).
    func publish(_ incoming: String, as address: String) throws {
        let folder = root + "/" + address.prefix(2)
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        if rename(incoming, path(of: address)) != 0 {
            let code = errno
            unlink(incoming)
            if !exists(address) { throw IOFailure(operation: .rename, path: address, errno: code) }
        }
    }

    /// Removes unfinished uploads older than `age` seconds (left by a crash).
    func removeStaleIncoming(olderThan age: TimeInterval = 3600) {
        let folder = root + "/incoming"
        for name in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] {
            let path = folder + "/" + name
            if let modified = (try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date,
               Date().timeIntervalSince(modified) > age {
                unlink(path)
            }
        }
    }
}

/// Checks an upload's first bytes: they must start a valid Coffer container whose stated total
/// length equals the upload's size (when it is known in advance; ``BlobIntake`` checks it at the
/// end otherwise). Fed incrementally; keeps at most 4 KiB in memory (a version 2 chunk table is
/// checked once the blob is stored, by ``BlobStore/header(of:)``).
struct UploadHeaderCheck {
    private var prefix: [UInt8] = []
    private(set) var header: ContainerHeader.Preamble?
    let declaredSize: Int64?

    init(declaredSize: Int64?) { self.declaredSize = declaredSize }

    /// Feeds the next bytes; throws once the header is known to be invalid.
    mutating func feed(_ bytes: some Collection<UInt8>) throws {
        guard header == nil else { return }
        prefix.append(contentsOf: bytes.prefix(ContainerHeader.maximumLength - prefix.count))
        guard prefix.count >= ContainerHeader.prefixLength else { return }
        guard let parsed = try ContainerHeader.preamble(from: prefix) else { return }
        // `exactly:`: a negative stated size is a mismatch, not a conversion trap.
        if let declaredSize, UInt64(exactly: declaredSize) != parsed.sealedLength {
            throw ContainerError.lengthMismatch(expected: parsed.sealedLength, actual: UInt64(clamping: declaredSize))
        }
        header = parsed
        prefix = []
    }
}
