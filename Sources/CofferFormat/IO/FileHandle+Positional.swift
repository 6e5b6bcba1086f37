#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A file descriptor read and written at explicit offsets, so several threads can share it.
///
/// Every call retries on `EINTR` and on short transfers; a short read means end of file.
public final class PositionalFile: @unchecked Sendable {
    /// The open descriptor.
    public let descriptor: Int32
    /// The path it was opened at (for error messages).
    public let path: String

    /// Opens the regular file at `path` for reading.
    ///
    /// Anything else is refused with an ``IOFailure`` of operation `.open`, and never blocks: a
    /// folder with `EISDIR`, and a FIFO, socket or device with `EINVAL`. The file is opened
    /// non-blocking (so a FIFO without a writer cannot hang the open, and a terminal never becomes
    /// the controlling one), checked with `fstat` on the open descriptor, and only then switched
    /// back to blocking reads.
    public init(readingAt path: String) throws {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
        guard fd >= 0 else { throw IOFailure(operation: .open, path: path, errno: errno) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let code = errno
            close(fd)
            throw IOFailure(operation: .stat, path: path, errno: code)
        }
        let type = info.st_mode & S_IFMT
        guard type == S_IFREG else {
            close(fd)
            throw IOFailure(operation: .open, path: path, errno: type == S_IFDIR ? EISDIR : EINVAL)
        }
        let flags = fcntl(fd, F_GETFL)
        guard flags >= 0, fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) == 0 else {
            let code = errno
            close(fd)
            throw IOFailure(operation: .open, path: path, errno: code)
        }
        self.descriptor = fd
        self.path = path
    }

    /// Wraps an already-open descriptor; the object closes it on deinit.
    public init(adopting descriptor: Int32, path: String) {
        self.descriptor = descriptor
        self.path = path
    }

    deinit { close(descriptor) }

    /// The file's size in bytes.
    public func size() throws -> UInt64 {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw IOFailure(operation: .stat, path: path, errno: errno) }
        return UInt64(info.st_size)
    }

    /// Reads up to `buffer.count` bytes at `offset`; returns how many were read (fewer only at end of file).
    public func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws -> Int {
        var done = 0
        while done < buffer.count {
            let n = pread(descriptor, buffer.baseAddress! + done, buffer.count - done, off_t(offset) + off_t(done))
            if n < 0 {
                if errno == EINTR { continue }
                throw IOFailure(operation: .read, path: path, errno: errno)
            }
            if n == 0 { break }
            done += n
        }
        return done
    }

    /// Reads exactly `buffer.count` bytes at `offset`, or throws `IOFailure` with `.unexpectedEnd`.
    public func readExactly(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws {
        guard try read(into: buffer, at: offset) == buffer.count else {
            throw IOFailure(operation: .unexpectedEnd, path: path, errno: 0)
        }
    }

    /// Reads `count` bytes at `offset` into a new array; fewer at end of file.
    public func read(count: Int, at offset: UInt64) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        let n = try bytes.withUnsafeMutableBytes { try read(into: $0, at: offset) }
        bytes.removeLast(count - n)
        return bytes
    }

    /// Writes all of `bytes` at `offset`.
    public func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws {
        var done = 0
        while done < bytes.count {
            let n = pwrite(descriptor, bytes.baseAddress! + done, bytes.count - done, off_t(offset) + off_t(done))
            if n < 0 {
                if errno == EINTR { continue }
                throw IOFailure(operation: .write, path: path, errno: errno)
            }
            done += n
        }
    }

    /// Sets the file's length (used to pre-size outputs so parallel writers never race on growth).
    public func truncate(to length: UInt64) throws {
        guard ftruncate(descriptor, off_t(length)) == 0 else {
            throw IOFailure(operation: .write, path: path, errno: errno)
        }
    }

    /// Flushes the file's data to stable storage (``DurableSync``: `F_FULLFSYNC` on Darwin).
    public func synchronize() throws {
        guard DurableSync.flush(descriptor) == 0 else { throw IOFailure(operation: .write, path: path, errno: errno) }
    }
}
