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
        /// The regular files' sizes so far (at most ``ContainerHeader/maximumPlaintextLength``).
        private(set) var fileBytes: UInt64 = 0

        /// Called with each folder's path once its names are read (tests change the tree there).
        let afterListing: ((String) -> Void)?

        init(root: String, afterListing: ((String) -> Void)? = nil) {
            self.root = root
            self.afterListing = afterListing
        }

        /// A folder being listed: its paths, an open descriptor of it, its sorted names and the
        /// next name to visit.
        private struct Level {
            let folder: String
            let relative: String
            /// The folder itself, opened without following a symlink: its entries are looked at
            /// through it, never through `folder`'s path, so a folder above swapped for a symlink
            /// cannot lead the walk outside the tree.
            let descriptor: Int32
            let names: [[UInt8]]
            var next = 0
        }

        /// Adds everything below the root, depth first without recursion (so a deep tree cannot
        /// exhaust a thread's stack). Each folder is opened relative to its parent's descriptor
        /// (`O_NOFOLLOW`) and each entry looked at with `fstatat` relative to its folder's, so what
        /// is recorded is what is inside the tree, whatever is renamed or swapped while it is walked;
        /// files are opened later by path and must still be those (``PackedTree/openForReading(_:being:)``).
        mutating func walk() throws {
            let rootDescriptor = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            guard rootDescriptor >= 0 else { throw IOFailure(operation: .open, path: root, errno: errno) }
            var stack: [Level] = []
            defer { for level in stack { close(level.descriptor) } }
            do {
                stack.append(Level(folder: root, relative: "", descriptor: rootDescriptor, names: try Self.listNames(rootDescriptor, path: root)))
            } catch {
                close(rootDescriptor)
                throw error
            }
            while let level = stack.last {
                guard level.next < level.names.count else {
                    close(level.descriptor)
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
            guard fstatat(level.descriptor, text, &info, AT_SYMLINK_NOFOLLOW) == 0 else {
                throw IOFailure(operation: .stat, path: fullPath, errno: errno)
            }
            let mode = UInt16(truncatingIfNeeded: info.st_mode) & PackedTree.Format.permissionMask
            switch FileType(info) {
            case .directory:
                let descriptor = openat(level.descriptor, text, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                guard descriptor >= 0 else { throw IOFailure(operation: .open, path: fullPath, errno: errno) }
                do {
                    var opened = stat()
                    guard fstat(descriptor, &opened) == 0 else { throw IOFailure(operation: .stat, path: fullPath, errno: errno) }
                    // The folder opened must be the one just looked at, not one renamed into its place.
                    guard FileIdentity(opened) == FileIdentity(info) else { throw PackedTree.changed(fullPath) }
                    let names = try Self.listNames(descriptor, path: fullPath)
                    afterListing?(fullPath)
                    append(.init(kind: .directory, path: path, mode: mode), at: fullPath, info)
                    return Level(folder: fullPath, relative: path, descriptor: descriptor, names: names)
                } catch {
                    close(descriptor)
                    throw error
                }
            case .regular:
                // The files' bytes together at most what a container holds (2^48), so no sum of sizes
                // taken from the file system (a sparse file can claim 2^63 bytes) can overflow.
                let limit = ContainerHeader.maximumPlaintextLength
                guard info.st_size >= 0, UInt64(info.st_size) <= limit - fileBytes else {
                    throw PackingError(path: fullPath, reason: "brings the folder's files past 2^48 bytes, more than a sealed model holds")
                }
                fileBytes += UInt64(info.st_size)
                append(.init(kind: .file(size: UInt64(info.st_size)), path: path, mode: mode), at: fullPath, info)
            case .symlink:
                let target = try Self.readLink(text, in: level.descriptor, path: fullPath)
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

        /// The names in the open folder `descriptor` (at `path`, for errors) other than "." and
        /// "..", sorted by their bytes.
        static func listNames(_ descriptor: Int32, path: String) throws -> [[UInt8]] {
            let copy = dup(descriptor)
            guard copy >= 0 else { throw IOFailure(operation: .list, path: path, errno: errno) }
            guard let stream = fdopendir(copy) else {
                let code = errno
                close(copy)
                throw IOFailure(operation: .list, path: path, errno: code)
            }
            defer { closedir(stream) }
            rewinddir(stream)
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

        /// The target of the symlink `name` in the open folder `descriptor` (at `path`, for errors),
        /// which must be UTF-8 and at most 4096 bytes.
        static func readLink(_ name: String, in descriptor: Int32, path: String) throws -> String {
            let capacity = PackedTree.Format.maxPathLength + 1
            var buffer = [UInt8](repeating: 0, count: capacity)
            let count = buffer.withUnsafeMutableBytes { raw in
                readlinkat(descriptor, name, raw.baseAddress!.assumingMemoryBound(to: CChar.self), capacity)
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
