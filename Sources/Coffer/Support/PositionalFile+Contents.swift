#if canImport(CryptoKit)
@preconcurrency import Crypto // CryptoKit's key types are Sendable only in Xcode 26's SDKs
#else
import Crypto
#endif
import CofferFormat
import Foundation

extension PositionalFile {
    /// The whole file at `path` when it holds at most `limit` bytes; nil when it cannot be read or
    /// is larger (the cache's small JSON files: a state, the failed models, the report queue).
    static func contents(at path: String, atMost limit: Int) -> Data? {
        guard let file = try? PositionalFile(readingAt: path), let size = try? file.size(), size <= UInt64(limit),
              let bytes = try? file.read(count: Int(size), at: 0)
        else { return nil }
        return Data(bytes)
    }

    /// Adds the file's first `count` bytes to `hasher`, read 1 MiB at a time; with `stoppingWhenCancelled`
    /// a cancelled task stops between reads (`CancellationError`): an update cancelled as the
    /// app's background time runs out must let go of its lock soon.
    func hash(upTo count: UInt64, into hasher: inout SHA256, stoppingWhenCancelled: Bool = false) throws {
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var offset: UInt64 = 0
        while offset < count {
            if stoppingWhenCancelled, Task.isCancelled { throw CancellationError() }
            let piece = Int(min(UInt64(buffer.count), count - offset))
            try buffer.withUnsafeMutableBytes { try readExactly(into: UnsafeMutableRawBufferPointer(rebasing: $0[..<piece]), at: offset) }
            hasher.update(data: buffer[..<piece])
            offset += UInt64(piece)
        }
    }
}
