#if canImport(CryptoKit)
@preconcurrency import Crypto // CryptoKit's key types are Sendable only in Xcode 26's SDKs
#else
import Crypto
#endif
import CofferFormat
import Foundation

/// The SHA-256 of a cached model's file, read again after the model failed its checks.
enum FileDigest {
    /// Which file a path named: its device and inode.
    struct Identity: Equatable, Sendable {
        let device: UInt64
        let inode: UInt64

        /// The identity of what `path` names now (a link is not followed); nil when nothing is there.
        init?(path: String) {
            var info = stat()
            guard lstat(path, &info) == 0 else { return nil }
            self.init(info)
        }

        init(_ info: stat) {
            device = UInt64(truncatingIfNeeded: info.st_dev)
            inode = UInt64(truncatingIfNeeded: info.st_ino)
        }
    }

    /// What the file at a path turned out to be.
    enum Verdict: Equatable {
        /// It has the SHA-256.
        case intact
        /// It was read whole and has another SHA-256.
        case damaged
        /// The path now names another file than the one that failed (an update replaced it).
        case replaced
        /// It could not be opened or read (missing, no permission, no descriptor left): its bytes are unknown.
        case unreadable
    }

    /// Reads the regular file at `path` whole and compares its SHA-256 with `sha256` (lowercase
    /// hex) — when it is still the file `identity` names (the one that failed), else ``Verdict/replaced``.
    static func check(path: String, sha256: String, identity: Identity?) -> Verdict {
        guard let file = try? PositionalFile(readingAt: path), let size = try? file.size() else { return .unreadable }
        var info = stat()
        guard fstat(file.descriptor, &info) == 0 else { return .unreadable }
        if let identity, Identity(info) != identity { return .replaced }
        var hasher = SHA256()
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var offset: UInt64 = 0
        while offset < size {
            let count = Int(min(UInt64(buffer.count), size - offset))
            do {
                try buffer.withUnsafeMutableBytes { try file.readExactly(into: UnsafeMutableRawBufferPointer(rebasing: $0[..<count]), at: offset) }
            } catch {
                return .unreadable
            }
            hasher.update(data: buffer[..<count])
            offset += UInt64(count)
        }
        return hasher.finalize().hexString == sha256 ? .intact : .damaged
    }
}
