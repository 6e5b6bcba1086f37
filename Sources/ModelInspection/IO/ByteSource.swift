import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Random-access bytes: a file read with `pread`-style calls, or bytes already in memory.
///
/// Parsers take a source rather than a `Data` so that a large file is never read whole by accident.
package protocol ByteSource: Sendable {
    /// The number of bytes.
    var count: UInt64 { get }
    /// `length` bytes at `offset`; throws unless all of them exist.
    func read(at offset: UInt64, length: Int) throws -> Data
}

extension ByteSource {
    /// All the bytes, if there are at most `limit`; otherwise ``InspectionError/tooLarge(format:what:size:limit:)``.
    func readAll(format: String, what: String, limit: UInt64) throws -> Data {
        guard count <= limit else { throw InspectionError.tooLarge(format: format, what: what, size: count, limit: limit) }
        return try read(at: 0, length: Int(count))
    }
}

/// Bytes in memory.
package struct DataSource: ByteSource {
    let data: Data

    /// A source over `data`.
    package init(_ data: Data) { self.data = data }

    package var count: UInt64 { UInt64(data.count) }

    package func read(at offset: UInt64, length: Int) throws -> Data {
        guard length >= 0, offset <= count, UInt64(length) <= count - offset else {
            throw InspectionError.malformed(format: "file", reason: "ends before byte \(offset + UInt64(max(length, 0)))")
        }
        let start = data.startIndex + Int(offset)
        return Data(data[start..<start + length])
    }
}

/// A regular file, read at offsets; its size is taken once when opened.
///
/// Unchecked `Sendable`: the handle's seek-then-read is done under ``lock``.
package final class FileSource: ByteSource, @unchecked Sendable {
    private let handle: FileHandle
    private let lock = NSLock()
    package let count: UInt64
    let path: String

    /// Opens the regular file at `path` for reading. A link, pipe, device or folder is refused without
    /// blocking (`O_NOFOLLOW | O_NONBLOCK`, then `fstat`), so a hostile folder cannot point a reader
    /// elsewhere or make it wait forever.
    package init(path: String) throws {
        self.path = path
        let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw InspectionError.unreadable(path: path, reason: errno == ELOOP ? "it is a link" : String(cString: strerror(errno)))
        }
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
            close(descriptor)
            throw InspectionError.unreadable(path: path, reason: "not a regular file")
        }
        handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        count = UInt64(status.st_size)
    }


    package func read(at offset: UInt64, length: Int) throws -> Data {
        guard length >= 0, offset <= count, UInt64(length) <= count - offset else {
            throw InspectionError.malformed(format: "file", reason: "ends before byte \(offset + UInt64(max(length, 0)))")
        }
        if length == 0 { return Data() }
        lock.lock()
        defer { lock.unlock() }
        do {
            try handle.seek(toOffset: offset)
            let data = try handle.read(upToCount: length) ?? Data()
            guard data.count == length else { throw InspectionError.unreadable(path: path, reason: "it shrank while being read") }
            return data
        } catch let error as InspectionError {
            throw error
        } catch {
            throw InspectionError.unreadable(path: path, reason: "\(error.localizedDescription)")
        }
    }
}
