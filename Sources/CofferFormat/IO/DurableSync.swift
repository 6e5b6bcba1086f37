#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Flushing a file's or folder's writes to stable storage, as the crash-safety claims need.
///
/// On Darwin `fsync` only hands the data to the drive, which may keep it in its volatile cache
/// across a power cut; `fcntl(F_FULLFSYNC)` asks the drive to flush that cache too. Some file
/// systems (network and FUSE volumes, some external drives) refuse `F_FULLFSYNC`; then `fsync` is
/// what there is. Elsewhere `fsync` already reaches the medium.
public enum DurableSync {
    /// Flushes `descriptor`; 0, or -1 with `errno` set (as `fsync`).
    public static func flush(_ descriptor: Int32) -> Int32 {
        #if canImport(Darwin)
        return flush(descriptor, full: { fcntl($0, F_FULLFSYNC) }, plain: { fsync($0) })
        #else
        return flush(descriptor, full: nil, plain: { fsync($0) })
        #endif
    }

    /// Flushes the folder at `path` (``flush(_:)``), so that the renames in it survive a power cut.
    /// A file system that cannot flush a folder (`EINVAL`) is not an error.
    public static func synchronizeFolder(_ path: String) throws {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_DIRECTORY)
        guard descriptor >= 0 else { throw IOFailure(operation: .open, path: path, errno: errno) }
        defer { close(descriptor) }
        guard flush(descriptor) == 0 || errno == EINVAL else { throw IOFailure(operation: .write, path: path, errno: errno) }
    }

    /// The rule, with the system calls passed in (so it is tested on every platform): the full
    /// flush when there is one and it succeeds, else the plain one, whose result is the answer.
    static func flush(_ descriptor: Int32, full: ((Int32) -> Int32)?, plain: (Int32) -> Int32) -> Int32 {
        if let full, full(descriptor) == 0 { return 0 }
        return plain(descriptor)
    }
}
