#if canImport(CryptoKit)
@preconcurrency import Crypto // CryptoKit's key types are Sendable only in Xcode 26's SDKs
#else
import Crypto
#endif
import CofferFormat
import Foundation

/// The SHA-256 of a file on disk, read in 1 MiB pieces.
enum FileDigest {
    /// Whether the regular file at `path` has SHA-256 `sha256` (lowercase hex): true or false once
    /// it was read whole; nil when it could not be opened or read (missing, no permission, no
    /// descriptor left), which says nothing about its bytes.
    static func matches(path: String, sha256: String) -> Bool? {
        guard let file = try? PositionalFile(readingAt: path), let size = try? file.size() else { return nil }
        var hasher = SHA256()
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var offset: UInt64 = 0
        while offset < size {
            let count = Int(min(UInt64(buffer.count), size - offset))
            do {
                try buffer.withUnsafeMutableBytes { try file.readExactly(into: UnsafeMutableRawBufferPointer(rebasing: $0[..<count]), at: offset) }
            } catch {
                return nil
            }
            hasher.update(data: buffer[..<count])
            offset += UInt64(count)
        }
        return hasher.finalize().hexString == sha256
    }
}
