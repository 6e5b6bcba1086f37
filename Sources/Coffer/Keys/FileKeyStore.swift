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

    /// Creates `path` and its parents; the last one 0700. An existing folder must belong to this
    /// user and not be a shared one (sticky, like `/tmp`); if others can reach it, it is made 0700.
    /// A folder someone else made beforehand could have its files swapped under the key store.
    public static func makePrivateFolder(_ path: String) throws {
        var info = stat()
        if stat(path, &info) != 0 {
            let parent = (path as NSString).deletingLastPathComponent
            if !parent.isEmpty, parent != path, stat(parent, &info) != 0 {
                try FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true)
            }
            if mkdir(path, 0o700) == 0 { return }
            // Made by someone else since the first look: checked as any folder that was there.
            guard errno == EEXIST, stat(path, &info) == 0 else { throw IOFailure(operation: .create, path: path, errno: errno) }
        }
        guard (info.st_mode & S_IFMT) == S_IFDIR else { throw IOFailure(operation: .create, path: path, errno: ENOTDIR) }
        guard info.st_uid == geteuid() else {
            throw CofferError.invalidConfiguration("\(path) belongs to another user; give the cache a folder of its own")
        }
        guard info.st_mode & S_ISVTX == 0 else {
            throw CofferError.invalidConfiguration("\(path) is a shared folder (like /tmp); give the cache a folder of its own inside it")
        }
        if info.st_mode & 0o077 != 0, chmod(path, 0o700) != 0 {
            throw IOFailure(operation: .create, path: path, errno: errno)
        }
    }
}
