import CofferFormat
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A key store of files in one folder: the folder 0700, each value a 0600 file written atomically
/// and synced. The platform store on Linux; it protects against other users of the machine, not
/// against the same user or root.
public struct FileKeyStore: KeyStore {
    /// The folder holding the values.
    public let directory: URL

    /// Values are at most this many bytes.
    static let maximumValueSize = 64 << 10

    /// A store in `directory`, created (0700) when the first value is saved.
    public init(directory: URL) {
        self.directory = directory
    }

    public func load(_ name: String) throws -> Data? {
        let path = try self.path(name)
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else {
            if errno == ENOENT { return nil }
            throw IOFailure(operation: .open, path: path, errno: errno)
        }
        let file = PositionalFile(adopting: fd, path: path)
        let size = try file.size()
        guard size <= UInt64(Self.maximumValueSize) else {
            throw CofferError.invalidConfiguration("\(path) is larger than a key store value can be")
        }
        return Data(try file.read(count: Int(size), at: 0))
    }

    public func save(_ name: String, _ value: Data) throws {
        let path = try self.path(name)
        try Self.makePrivateFolder(directory.path)
        try AtomicOutput.write(value, to: path, replacing: true)
    }

    public func remove(_ name: String) throws {
        let path = try self.path(name)
        guard unlink(path) == 0 || errno == ENOENT else { throw IOFailure(operation: .remove, path: path, errno: errno) }
    }

    private func path(_ name: String) throws -> String {
        guard KeyStoreNames.isValid(name) else { throw CofferError.invalidConfiguration("'\(name)' is not a key store name") }
        return directory.appendingPathComponent(name).path
    }

    /// Creates `path` and its parents; the last one 0700. An existing folder must be a folder (not
    /// a symbolic link to one), belong to this user and not be a shared one (sticky, like `/tmp`);
    /// if others can reach it, it is made 0700. A folder someone else made beforehand could have
    /// its files swapped under the key store; a link could make any folder of the user's the
    /// cache (made 0700, and filled).
    public static func makePrivateFolder(_ path: String) throws {
        let path = withoutTrailingSlash(path)
        var info = stat()
        // lstat: the folder itself, never what a symbolic link at `path` points to.
        if lstat(path, &info) != 0 {
            let parent = (path as NSString).deletingLastPathComponent
            if !parent.isEmpty, parent != path, stat(parent, &info) != 0 {
                try FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true)
            }
            if mkdir(path, 0o700) == 0 { return }
            // Made by someone else since the first look: checked as any folder that was there.
            guard errno == EEXIST, lstat(path, &info) == 0 else { throw IOFailure(operation: .create, path: path, errno: errno) }
        }
        try checkOwnFolder(path, info)
        if info.st_mode & 0o077 != 0, chmod(path, 0o700) != 0 {
            throw IOFailure(operation: .create, path: path, errno: errno)
        }
    }

    /// Checks, changing nothing, that the existing folder at `path` is private as
    /// ``makePrivateFolder(_:)`` leaves it: a folder (not a symbolic link), this user's, not a
    /// shared one, and neither its group nor others may write in it. For reading what was saved
    /// in a folder (`coffer open`) before anything in it is trusted.
    ///
    /// - Throws: ``IOFailure`` (`.open`) when there is nothing at `path`; ``CofferError/invalidConfiguration(_:)`` otherwise.
    package static func checkPrivateFolder(_ path: String) throws {
        let path = withoutTrailingSlash(path)
        var info = stat()
        guard lstat(path, &info) == 0 else { throw IOFailure(operation: .open, path: path, errno: errno) }
        try checkOwnFolder(path, info)
        guard info.st_mode & 0o022 == 0 else {
            let mode = String(info.st_mode & 0o777, radix: 8)
            throw CofferError.invalidConfiguration("\(path) may be written by others (mode \(mode)); chmod 700 it")
        }
    }

    /// `path` less any final `/`: `lstat("link/")` would follow the link.
    private static func withoutTrailingSlash(_ path: String) -> String {
        var path = path
        while path.count > 1, path.hasSuffix("/") { path.removeLast() }
        return path
    }

    /// Refuses what `info` (an `lstat` of `path`) shows unless it is a folder of this user's that is not shared.
    private static func checkOwnFolder(_ path: String, _ info: stat) throws {
        guard (info.st_mode & S_IFMT) != S_IFLNK else {
            throw CofferError.invalidConfiguration("\(path) is a symbolic link; give the cache its real folder")
        }
        guard (info.st_mode & S_IFMT) == S_IFDIR else { throw IOFailure(operation: .create, path: path, errno: ENOTDIR) }
        guard info.st_uid == geteuid() else {
            throw CofferError.invalidConfiguration("\(path) belongs to another user; give the cache a folder of its own")
        }
        guard info.st_mode & S_ISVTX == 0 else {
            throw CofferError.invalidConfiguration("\(path) is a shared folder (like /tmp); give the cache a folder of its own inside it")
        }
    }
}
