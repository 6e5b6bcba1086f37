#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A folder packed deterministically into one plaintext stream (the packed tree format v1).
///
/// The folder is walked once, up front, without following symlinks; the layout of the whole stream
/// is fixed then. Reads by offset re-open the regular files and copy their bytes, so any range can be
/// served from any thread. The same tree always gives the same bytes: no timestamps, owners or other
/// metadata are stored, only each entry's kind, path, permission bits and contents.
public struct PackedTree: PlaintextSource {
    /// One file, folder or symlink of a packed tree.
    public struct Entry: Sendable, Equatable {
        /// What the entry is, with its size or target.
        public enum Kind: Sendable, Equatable {
            /// A folder; its contents are the entries whose path starts with its path and "/".
            case directory
            /// A regular file of `size` bytes.
            case file(size: UInt64)
            /// A symbolic link to `target`, a path relative to the link's folder.
            case symlink(target: String)
        }

        /// What the entry is.
        public let kind: Kind
        /// The path relative to the packed folder, components joined by "/".
        public let path: String
        /// The permission bits (`mode & 0o777`); always 0o777 for symlinks.
        public let mode: UInt16

        /// Creates an entry.
        public init(kind: Kind, path: String, mode: UInt16) {
            self.kind = kind
            self.path = path
            self.mode = mode
        }
    }

    /// A run of the stream: pre-encoded header bytes, or the contents of one regular file.
    enum Segment: Sendable {
        case bytes([UInt8])
        case file(path: String, size: UInt64, identity: FileIdentity)

        var length: UInt64 {
            switch self {
            case .bytes(let bytes): return UInt64(bytes.count)
            case .file(_, let size, _): return size
            }
        }
    }

    /// The folder that was packed, as given.
    public let root: String
    /// The permission bits of the packed folder itself.
    public let rootMode: UInt16
    /// Every entry, in stream order (a folder before its contents).
    public let entries: [Entry]
    /// The exact length of the packed stream in bytes.
    public let length: UInt64

    /// Where each entry starts in the stream (its kind byte): version 2 starts a chunk at each.
    public let segmentStarts: [UInt64]

    /// The runs of the stream in order, none empty, and the stream offset where each starts.
    let segments: [Segment]
    let offsets: [UInt64]

    /// Walks the folder at `root` and lays out its packed stream.
    ///
    /// A symlink given as `root` is followed; nothing inside the folder is.
    /// - Throws: `PackingError` for what the format cannot carry (sockets, FIFOs, devices, symlinks
    ///   leading outside the folder, paths over 4096 bytes, names that are not UTF-8, more than
    ///   1,000,000 entries); `IOFailure` when the folder cannot be read.
    public init(root: String) throws {
        try self.init(root: root, afterListing: nil)
    }

    /// ``init(root:)``, calling `afterListing` with each folder's path once its names are read
    /// (tests use it to change the tree in the middle of a walk).
    init(root: String, afterListing: ((String) -> Void)?) throws {
        var info = stat()
        guard stat(root, &info) == 0 else { throw IOFailure(operation: .stat, path: root, errno: errno) }
        guard FileType(info) == .directory else {
            throw PackingError(path: root, reason: "not a folder")
        }
        var walker = Walker(root: root, afterListing: afterListing)
        try walker.walk()
        self.root = root
        self.rootMode = UInt16(truncatingIfNeeded: info.st_mode) & Format.permissionMask
        self.entries = walker.entries

        var layout = Layout()
        var writer = ByteWriter()
        writer.append(contentsOf: Format.magic)
        writer.append(UInt32(entries.count))
        writer.append(rootMode)
        var entryStarts: [UInt64] = []
        entryStarts.reserveCapacity(entries.count)
        for ((entry, fullPath), identity) in zip(zip(entries, walker.fullPaths), walker.identities) {
            entryStarts.append(layout.length + UInt64(writer.bytes.count))
            writer.append(entry.kindCode)
            writer.append(entry.mode)
            writer.append(UInt16(entry.path.utf8.count))
            writer.append(contentsOf: entry.path.utf8)
            switch entry.kind {
            case .directory:
                break
            case .file(let size):
                writer.append(size)
                layout.add(.bytes(writer.take()))
                layout.add(.file(path: fullPath, size: size, identity: identity))
            case .symlink(let target):
                writer.append(UInt16(target.utf8.count))
                writer.append(contentsOf: target.utf8)
            }
        }
        layout.add(.bytes(writer.bytes))
        self.segmentStarts = entryStarts
        self.segments = layout.segments
        self.offsets = layout.offsets
        self.length = layout.length
    }

    /// Fills `buffer` with the packed stream starting at `offset`; safe to call from several threads.
    ///
    /// - Throws: `IOFailure` if a file is missing or shorter than when the folder was walked (it
    ///   changed while being sealed), or if the range lies beyond `length`; `PackingError` if a
    ///   file is not the one walked (another file, or one reached through a folder swapped for a
    ///   symlink).
    public func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws {
        guard buffer.count > 0 else { return }
        guard offset <= length, UInt64(buffer.count) <= length - offset else {
            throw IOFailure(operation: .unexpectedEnd, path: root, errno: 0)
        }
        var index = segmentIndex(containing: offset)
        var position = offset
        var filled = 0
        while filled < buffer.count {
            let segment = segments[index]
            let within = position - offsets[index]
            let count = Int(min(UInt64(buffer.count - filled), segment.length - within))
            let target = UnsafeMutableRawBufferPointer(rebasing: buffer[filled..<filled + count])
            switch segment {
            case .bytes(let bytes):
                bytes.withUnsafeBytes { all in
                    target.copyMemory(from: UnsafeRawBufferPointer(rebasing: all[Int(within)..<Int(within) + count]))
                }
            case .file(let path, _, let identity):
                try Self.openForReading(path, being: identity).readExactly(into: target, at: within)
            }
            filled += count
            position += UInt64(count)
            index += 1
        }
    }

    /// The index of the segment holding stream offset `offset` (which is below `length`).
    func segmentIndex(containing offset: UInt64) -> Int {
        var low = 0
        var high = offsets.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if offsets[middle] <= offset { low = middle } else { high = middle - 1 }
        }
        return low
    }

    /// Opens a packed regular file without following a symlink or blocking on a FIFO put in its
    /// place; it must be the file the walk found (`identity`), not one reached through a folder
    /// swapped for a symlink since.
    static func openForReading(_ path: String, being identity: FileIdentity) throws -> PositionalFile {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard descriptor >= 0 else { throw IOFailure(operation: .open, path: path, errno: errno) }
        let file = PositionalFile(adopting: descriptor, path: path)
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw IOFailure(operation: .stat, path: path, errno: errno) }
        guard FileType(info) == .regular else {
            throw IOFailure(operation: .unexpectedEnd, path: path, errno: 0)
        }
        guard FileIdentity(info) == identity else { throw changed(path) }
        return file
    }

    /// The error for a file or folder that is no longer the one the walk found.
    static func changed(_ path: String) -> PackingError {
        PackingError(path: path, reason: "changed while being sealed (it is not the file it was when the folder was walked)")
    }
}

extension PackedTree {
    /// The segments of a stream being laid out, with their offsets.
    struct Layout {
        var segments: [Segment] = []
        var offsets: [UInt64] = []
        var length: UInt64 = 0

        /// Appends `segment` unless it is empty.
        mutating func add(_ segment: Segment) {
            guard segment.length > 0 else { return }
            segments.append(segment)
            offsets.append(length)
            length += segment.length
        }
    }
}

extension PackedTree.Entry {
    /// The kind byte written in the stream.
    var kindCode: UInt8 {
        switch kind {
        case .directory: return PackedTree.Format.kindDirectory
        case .file: return PackedTree.Format.kindFile
        case .symlink: return PackedTree.Format.kindSymlink
        }
    }
}
