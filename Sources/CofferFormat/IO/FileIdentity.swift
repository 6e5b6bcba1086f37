#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Which file a path named when it was looked at: its device and inode. A file read or blamed
/// later must still be that one (a packed folder swapped for a link while it is sealed, a cached
/// model an update replaced while it was opened), and a folder is the same folder however its
/// path is spelled (the SDK's models in use, by cache folder).
package struct FileIdentity: Hashable, Sendable {
    package let device: UInt64
    package let inode: UInt64

    /// The identity in a `stat` record.
    package init(_ info: stat) {
        device = UInt64(truncatingIfNeeded: info.st_dev)
        inode = UInt64(truncatingIfNeeded: info.st_ino)
    }

    /// The identity of what `path` names now (a link is not followed); nil when nothing is there.
    package init?(path: String) {
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        self.init(info)
    }
}
