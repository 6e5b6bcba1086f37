#if canImport(CryptoKit)
@preconcurrency import Crypto // CryptoKit's key types are Sendable only in Xcode 26's SDKs
#else
import Crypto
#endif
import CofferFormat
import Foundation

/// The SHA-256 of a cached model's file, read again after the model failed its checks.
enum FileDigest {
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
    static func check(path: String, sha256: String, identity: FileIdentity?) -> Verdict {
        guard let file = try? PositionalFile(readingAt: path), let size = try? file.size() else { return .unreadable }
        var info = stat()
        guard fstat(file.descriptor, &info) == 0 else { return .unreadable }
        if let identity, FileIdentity(info) != identity { return .replaced }
        var hasher = SHA256()
        guard (try? file.hash(upTo: size, into: &hasher)) != nil else { return .unreadable }
        return hasher.finalize().hexString == sha256 ? .intact : .damaged
    }
}
