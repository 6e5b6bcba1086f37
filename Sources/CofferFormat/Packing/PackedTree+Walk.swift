#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension PackedTree {
    /// The type of a file system object, from its `stat` record.
    enum FileType: Equatable {
        case directory, regular, symlink, fifo, socket, characterDevice, blockDevice, unknown

        init(_ info: stat) {
            switch UInt32(info.st_mode) & UInt32(S_IFMT) {
            case UInt32(S_IFDIR): self = .directory
            case UInt32(S_IFREG): self = .regular
            case UInt32(S_IFLNK): self = .symlink
            case UInt32(S_IFIFO): self = .fifo
            case UInt32(S_IFSOCK): self = .socket
            case UInt32(S_IFCHR): self = .characterDevice
            case UInt32(S_IFBLK): self = .blockDevice
            default: self = .unknown
            }
        }

        /// How a refusal names this type.
        var name: String {
            switch self {
            case .directory: return "folder"
            case .regular: return "file"
            case .symlink: return "symlink"
            case .fifo: return "FIFO (named pipe)"
            case .socket: return "socket"
            case .characterDevice: return "character device"
            case .blockDevice: return "block device"
            case .unknown: return "file of unknown type"
            }
        }
    }

    /// Walks a folder depth-first, siblings in byte order of their names, without following symlinks.
    ///
    /// Visiting a folder's entries right after the folder itself, siblings sorted, yields exactly the
    /// component-wise order of the packed format.
    struct Walker {
        let root: String
        /// The entries found, in stream order.
        private(set) var entries: [PackedTree.Entry] = []
        /// The on-disk path of each entry, parallel to `entries`.
        private(set) var fullPaths: [String] = []
        /// Which file each entry was when walked, parallel to `entries`.
        private(set) var identities: [FileIdentity] = []

        init(root: String) { self.root = root }

        /// A folder being listed: its paths, its sorted names and the next name to visit.
        private struct Level {
            let folder: String
            let relative: String
            let names: [[UInt8]]
            var next = 0
        }

        /// Adds everything below the root, depth first without recursion (so a deep tree cannot
        /// exhaust a thread's stack).
        mutating func walk() throws {
            var info = stat()
            guard stat(root, &info) == 0 else { throw IOFailure(operation: .stat, path: root, errno: errno) }
            var stack = [Level(folder: root, relative: "", names: try Self.listNames(root, being: FileIdentity(info)))]
            while let level = stack.last {
                guard level.next < level.names.count else {
                    stack.removeLast()
                    continue
                }
                stack[stack.count - 1].next += 1
                if let folder = try visit(level.names[level.next], in: level) {
                    stack.append(folder)
                }
            }
        }

        /// Adds the entry `name` of `level`; returns the level to descend into when it is a folder.
        private mutating func visit(_ name: [UInt8], in level: Level) throws -> Level? {
            guard let text = PackedTree.decodeUTF8(name) else {
                throw PackingError(path: level.folder, reason: "holds a name that is not valid UTF-8")
            }
            let path = level.relative.isEmpty ? text : level.relative + "/" + text
            let fullPath = level.folder + "/" + text
            if let problem = PackedTree.pathProblem(path) {
                throw PackingError(path: fullPath, reason: problem)
            }
            guard entries.count < PackedTree.Format.maxEntries else {
                throw PackingError(path: root, reason: "more than \(PackedTree.Format.maxEntries) entries")
            }
            var info = stat()
            guard lstat(fullPath, &info) == 0 else {
                throw IOFailure(operation: .stat, path: fullPath, errno: errno)
            }
            let mode = UInt16(truncatingIfNeeded: info.st_mode) & PackedTree.Format.permissionMask
            switch FileType(info) {
            case .directory:
                append(.init(kind: .directory, path: path, mode: mode), at: fullPath, info)
                return Level(folder: fullPath, relative: path, names: try Self.listNames(fullPath, being: FileIdentity(info)))
            case .regular:
                append(.init(kind: .file(size: UInt64(info.st_size)), path: path, mode: mode), at: fullPath, info)
            case .symlink:
                let target = try Self.readLink(fullPath)
                if let problem = PackedTree.targetProblem(target, linkPath: path) {
                    throw PackingError(path: fullPath, reason: problem)
                }
                append(.init(kind: .symlink(target: target), path: path, mode: PackedTree.Format.symlinkMode), at: fullPath, info)
            case let other:
                throw PackingError(path: fullPath, reason: "a \(other.name) cannot be packed")
            }
            return nil
        }

        private mutating func append(_ entry: PackedTree.Entry, at fullPath: String, _ info: stat) {
            entries.append(entry)
            fullPaths.append(fullPath)
            identities.append(FileIdentity(info))
        }

        /// The names in the folder at `path` other than "." and "..", sorted by their bytes; the
        /// folder opened must be `identity`, the one just looked at (not a symlink put in its place).
        static func listNames(_ path: String, being identity: FileIdentity) throws -> [[UInt8]] {
            guard let stream = opendir(path) else { throw IOFailure(operation: .list, path: path, errno: errno) }
            defer { closedir(stream) }
            var opened = stat()
            guard fstat(dirfd(stream), &opened) == 0 else { throw IOFailure(operation: .stat, path: path, errno: errno) }
            guard FileIdentity(opened) == identity else { throw PackedTree.changed(path) }
            var names: [[UInt8]] = []
            while true {
                errno = 0
                guard let record = readdir(stream) else {
                    if errno != 0 { throw IOFailure(operation: .list, path: path, errno: errno) }
                    break
                }
                let name = withUnsafeBytes(of: record.pointee.d_name) { raw in
                    Array(raw.prefix { $0 != 0 })
                }
                if name == [0x2E] || name == [0x2E, 0x2E] { continue }
                names.append(name)
            }
            return names.sorted { $0.lexicographicallyPrecedes($1) }
        }

        /// The target of the symlink at `path`, which must be UTF-8 and at most 4096 bytes.
        static func readLink(_ path: String) throws -> String {
            let capacity = PackedTree.Format.maxPathLength + 1
            var buffer = [UInt8](repeating: 0, count: capacity)
            let count = buffer.withUnsafeMutableBytes { raw in
                readlink(path, raw.baseAddress!.assumingMemoryBound(to: CChar.self), capacity)
            }
            guard count >= 0 else { throw IOFailure(operation: .read, path: path, errno: errno) }
            guard count < capacity else {
                throw PackingError(path: path, reason: "symlink target longer than \(PackedTree.Format.maxPathLength) bytes")
            }
            guard let target = PackedTree.decodeUTF8(buffer[..<count]) else {
                throw PackingError(path: path, reason: "symlink target is not valid UTF-8")
            }
            return target
        }
    }
}
