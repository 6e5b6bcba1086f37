#if canImport(CryptoKit)
@preconcurrency import Crypto // CryptoKit's key types are Sendable only in Xcode 26's SDKs
#else
import Crypto
#endif
import CofferFormat
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension PositionalFile {
    /// The whole file at `path` when it holds at most `limit` bytes; nil when it cannot be read or
    /// is larger (the cache's small JSON files: a state, the failed models, the report queue).
    static func contents(at path: String, atMost limit: Int) -> Data? {
        try? contentsIfPresent(at: path, atMost: limit)
    }

    /// The whole file at `path`; nil when there is none. Throws ``IOFailure`` when it cannot be
    /// read, `EFBIG` when it holds more than `limit` bytes.
    static func contentsIfPresent(at path: String, atMost limit: Int) throws -> Data? {
        let file: PositionalFile
        do {
            file = try PositionalFile(readingAt: path)
        } catch let failure as IOFailure where failure.isMissing {
            return nil
        }
        let size = try file.size()
        guard size <= UInt64(limit) else { throw IOFailure(operation: .read, path: path, errno: EFBIG) }
        return Data(try file.read(count: Int(size), at: 0))
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
