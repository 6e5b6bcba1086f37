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
#endif

/// Copies a run of sealed bytes from a cached container into a part file on two threads, hashing
/// them in order on one of them (docs/SDK.md, "Delta updates").
///
/// A delta update copies most of a model from the cache. On one thread the copy (reads from the
/// page cache, writes into new pages) and the SHA-256 of the same bytes take turns, and the copy
/// is the larger part. Here one thread reads and hashes the run in order while the other copies it
/// block by block; once the hash is done, the first thread takes blocks too, so both cores copy.
/// The blocks are written out of order: they end on multiples of ``blockSize`` in the part file,
/// so a process killed mid-run leaves the bytes it had not written as whole holes, which a resumed
/// download finds and fetches again (``PartWriter``). Both threads are Dispatch's, not the Swift
/// task pool's: the caller suspends while they run.
enum RunCopy {
    /// The part file's bytes are copied in blocks that end on multiples of this (4 MiB).
    static let blockSize: UInt64 = 4 << 20
    /// Each thread reads and writes through one buffer of this size (1 MiB).
    static let bufferSize = 1 << 20

    /// Copies `count` bytes of `source` from `sourceOffset` to `destination` at
    /// `destinationOffset`, and returns `hasher` updated with them in order.
    static func copy(_ count: UInt64, from source: PositionalFile, at sourceOffset: UInt64,
                     to destination: PositionalFile, at destinationOffset: UInt64, hashing hasher: SHA256) async throws -> SHA256 {
        guard count > 0 else { return hasher }
        let run = Run(source: source, sourceOffset: sourceOffset, destination: destination,
                      start: destinationOffset, end: destinationOffset + count, hasher: hasher)
        let group = DispatchGroup()
        let queue = DispatchQueue.global(qos: .userInitiated)
        queue.async(group: group) { run.hashThenCopy() }
        queue.async(group: group) { run.copyBlocks() }
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            group.notify(queue: queue) { done.resume() }
        }
        return try run.result()
    }

    #if os(Linux) || os(Android)
    private typealias CopyFileRange = @convention(c) (Int32, UnsafeMutablePointer<Int64>?, Int32, UnsafeMutablePointer<Int64>?, Int, UInt32) -> Int
    /// `copy_file_range(2)`, looked up at run time (the C module does not declare it).
    private static let copyFileRange: CopyFileRange? = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "copy_file_range")
        .map { unsafeBitCast($0, to: CopyFileRange.self) }
    #endif

    /// One run's shared state: the next block to copy, the hash, the first failure.
    private final class Run: @unchecked Sendable {
        let source: PositionalFile
        let sourceOffset: UInt64
        let destination: PositionalFile
        let start: UInt64
        let end: UInt64
        private let lock = NSLock()
        private var next: UInt64
        private var hasher: SHA256
        private var failure: (any Error)?

        init(source: PositionalFile, sourceOffset: UInt64, destination: PositionalFile, start: UInt64, end: UInt64, hasher: SHA256) {
            self.source = source
            self.sourceOffset = sourceOffset
            self.destination = destination
            self.start = start
            self.end = end
            self.hasher = hasher
            next = start
        }

        /// The updated hash, or the first failure of either thread.
        func result() throws -> SHA256 {
            try lock.withLock {
                if let failure { throw failure }
                return hasher
            }
        }

        private var failed: Bool { lock.withLock { failure != nil } }

        private func fail(_ error: any Error) { lock.withLock { if failure == nil { failure = error } } }

        /// The next block to copy (up to the next multiple of ``blockSize``), or nil when none is
        /// left or a thread failed.
        private func take() -> Range<UInt64>? {
            lock.withLock {
                guard failure == nil, next < end else { return nil }
                let boundary = (next / blockSize + 1).multipliedReportingOverflow(by: blockSize)
                let blockEnd = boundary.overflow ? end : min(boundary.partialValue, end)
                defer { next = blockEnd }
                return next..<blockEnd
            }
        }

        /// Reads the whole run in order into the hash, then copies blocks.
        func hashThenCopy() {
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: bufferSize, alignment: 16)
            defer { buffer.deallocate() }
            var digest = lock.withLock { hasher }
            var offset = start
            do {
                while offset < end, !failed {
                    let piece = UnsafeMutableRawBufferPointer(rebasing: buffer[..<Int(min(UInt64(bufferSize), end - offset))])
                    try source.readExactly(into: piece, at: sourceOffset + (offset - start))
                    digest.update(bufferPointer: UnsafeRawBufferPointer(piece))
                    offset += UInt64(piece.count)
                }
                lock.withLock { hasher = digest }
                try copyBlocks(through: buffer)
            } catch {
                fail(error)
            }
        }

        /// Copies blocks until none is left.
        func copyBlocks() {
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: bufferSize, alignment: 16)
            defer { buffer.deallocate() }
            do {
                try copyBlocks(through: buffer)
            } catch {
                fail(error)
            }
        }

        private func copyBlocks(through buffer: UnsafeMutableRawBufferPointer) throws {
            while let block = take() {
                var offset = block.lowerBound
                #if os(Linux) || os(Android)
                offset = try copyInKernel(block)
                #endif
                while offset < block.upperBound {
                    let piece = UnsafeMutableRawBufferPointer(rebasing: buffer[..<Int(min(UInt64(bufferSize), block.upperBound - offset))])
                    try source.readExactly(into: piece, at: sourceOffset + (offset - start))
                    try destination.write(UnsafeRawBufferPointer(piece), at: offset)
                    offset += UInt64(piece.count)
                }
            }
        }

        #if os(Linux) || os(Android)
        /// Copies `block` with `copy_file_range`, which spares the copy through a buffer (and
        /// shares extents where the file system can); returns where it stopped: the block's end,
        /// or earlier when the kernel cannot copy between these files (the rest goes through a buffer).
        private func copyInKernel(_ block: Range<UInt64>) throws -> UInt64 {
            guard let copyFileRange = RunCopy.copyFileRange else { return block.lowerBound }
            var input = Int64(sourceOffset + (block.lowerBound - start))
            var output = Int64(block.lowerBound)
            while UInt64(output) < block.upperBound {
                let copied = copyFileRange(source.descriptor, &input, destination.descriptor, &output,
                                           Int(block.upperBound - UInt64(output)), 0)
                if copied > 0 { continue }
                if copied == 0 { throw IOFailure(operation: .unexpectedEnd, path: source.path, errno: 0) }
                let error = errno
                if error == EINTR { continue }
                if [EXDEV, EINVAL, ENOSYS, EOPNOTSUPP, EBADF].contains(error) { break }
                throw IOFailure(operation: .write, path: destination.path, errno: error)
            }
            return UInt64(output)
        }
        #endif
    }
}
