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

extension DeltaAssembly {
    /// The two threads of an assembly: one copies the cached runs, one hashes every run in order.
    /// Both are threads of their own, not the Swift task pool's: the caller downloads meanwhile.
    final class Work: @unchecked Sendable {
        private let runs: [DeltaPlan.Run]
        /// The cached containers the runs copy from, each opened once; both threads read them.
        private let cached: [String: PositionalFile]
        private let destination: PositionalFile
        private let frontier: Frontier
        /// Touched by the hashing thread only, and read once both threads are done.
        private(set) var hash: SHA256

        /// Work on `runs`, or nil if a cached container they copy from cannot be opened.
        init?(runs: [DeltaPlan.Run], destination: PositionalFile, frontier: Frontier, hash: SHA256) {
            var cached: [String: PositionalFile] = [:]
            for case .local(let path, _) in runs.map(\.source) where cached[path] == nil {
                guard let file = try? PositionalFile(readingAt: path) else { return nil }
                cached[path] = file
            }
            self.runs = runs
            self.cached = cached
            self.destination = destination
            self.frontier = frontier
            self.hash = hash
        }

        /// Copies every cached run in order, block by block, reporting each block to the frontier.
        func copyCachedRuns() {
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: bufferSize, alignment: 16)
            defer { buffer.deallocate() }
            let end = runs.last?.range.upperBound ?? 0
            for (index, run) in runs.enumerated() {
                guard case .local(let path, let sourceStart) = run.source else { continue }
                guard let source = cached[path] else { return frontier.stop(.fallBack) }
                var offset = run.range.lowerBound
                while offset < run.range.upperBound {
                    guard !frontier.stopped else { return }
                    let blockEnd = min(offset + blockSize, run.range.upperBound)
                    do {
                        try copy(offset..<blockEnd, from: source, at: sourceStart + (offset - run.range.lowerBound), through: buffer)
                    } catch {
                        // A damaged cached file (EIO) or a failed write alike: the whole download
                        // that follows reads nothing cached, and meets a real write failure itself.
                        return frontier.stop(.fallBack)
                    }
                    offset = blockEnd
                    frontier.copied(to: offset < run.range.upperBound ? offset : Frontier.after(index, in: runs, remote: false, end: end))
                }
                CrashPoint.reach("chunks-copied")
            }
        }

        /// Hashes every run in byte order: cached runs from their cached file, downloaded runs
        /// from the part file as their bytes arrive.
        func hashInOrder() {
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: bufferSize, alignment: 16)
            defer { buffer.deallocate() }
            var digest = hash
            for run in runs {
                let file: PositionalFile
                let fileStart: UInt64
                switch run.source {
                case .local(let path, let offset):
                    guard let source = cached[path] else { return frontier.stop(.fallBack) }
                    (file, fileStart) = (source, offset)
                case .remote:
                    (file, fileStart) = (destination, run.range.lowerBound)
                }
                var offset = run.range.lowerBound
                while offset < run.range.upperBound {
                    let pieceEnd = min(offset + UInt64(bufferSize), run.range.upperBound)
                    if run.source == .remote {
                        guard frontier.waitDownloaded(until: pieceEnd) else { return }
                    } else if frontier.stopped {
                        return
                    }
                    let piece = UnsafeMutableRawBufferPointer(rebasing: buffer[..<Int(pieceEnd - offset)])
                    do {
                        try file.readExactly(into: piece, at: fileStart + (offset - run.range.lowerBound))
                    } catch {
                        return frontier.stop(.fallBack)
                    }
                    digest.update(bufferPointer: UnsafeRawBufferPointer(piece))
                    offset = pieceEnd
                }
            }
            hash = digest
        }

        /// Copies `block` of the part file from `source` at `sourceOffset`: in the kernel where it
        /// can (`copy_file_range` on Linux: no copy through a buffer, extents shared where the
        /// file system can), the rest through `buffer`.
        private func copy(_ block: Range<UInt64>, from source: PositionalFile, at sourceOffset: UInt64,
                          through buffer: UnsafeMutableRawBufferPointer) throws {
            var offset = block.lowerBound
            #if os(Linux) || os(Android)
            offset = try copyInKernel(block, from: source, at: sourceOffset)
            #endif
            while offset < block.upperBound {
                let piece = UnsafeMutableRawBufferPointer(rebasing: buffer[..<Int(min(UInt64(bufferSize), block.upperBound - offset))])
                try source.readExactly(into: piece, at: sourceOffset + (offset - block.lowerBound))
                try destination.write(UnsafeRawBufferPointer(piece), at: offset)
                offset += UInt64(piece.count)
            }
        }

        #if os(Linux) || os(Android)
        private typealias CopyFileRange = @convention(c) (Int32, UnsafeMutablePointer<Int64>?, Int32, UnsafeMutablePointer<Int64>?, Int, UInt32) -> Int
        /// `copy_file_range(2)`, looked up at run time (the C module does not declare it).
        private static let copyFileRange: CopyFileRange? = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "copy_file_range")
            .map { unsafeBitCast($0, to: CopyFileRange.self) }

        /// Copies what it can of `block` with `copy_file_range`; returns where it stopped: the
        /// block's end, or earlier when the kernel cannot copy between these files.
        private func copyInKernel(_ block: Range<UInt64>, from source: PositionalFile, at sourceOffset: UInt64) throws -> UInt64 {
            guard let copyFileRange = Self.copyFileRange else { return block.lowerBound }
            var input = Int64(sourceOffset)
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
