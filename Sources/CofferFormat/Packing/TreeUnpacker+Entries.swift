#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension TreeUnpacker {
    /// Acts on a complete fixed field (`field` holds exactly `fieldSize` bytes).
    func processField() throws {
        switch state {
        case .header:
            try readHeader()
        case .entryHead:
            try readEntryHead()
        case .path(let kind, let mode, _):
            try readPath(kind: kind, mode: mode)
        case .fileSize(let path, let mode):
            let size = PackedTree.bigEndian(field)
            if let expectedLength, size > expectedLength - consumed {
                throw Self.refusal("file \(path.debugDescription) claims \(size) bytes but the stream has only \(expectedLength - consumed) left")
            }
            try openFile(path, mode: mode)
            if size == 0 {
                try closeFile()
                entryDone()
            } else {
                state = .fileBody(remaining: size)
            }
        case .targetLength(let path):
            let length = Int(PackedTree.bigEndian(field))
            guard (1...PackedTree.Format.maxPathLength).contains(length) else {
                throw Self.refusal("symlink \(path.debugDescription) has a target of \(length) bytes (must be 1...\(PackedTree.Format.maxPathLength))")
            }
            state = .target(path: path, length: length)
        case .target(let path, _):
            guard let target = PackedTree.decodeUTF8(field) else {
                throw Self.refusal("symlink \(path.debugDescription) has a target that is not valid UTF-8")
            }
            if let problem = PackedTree.targetProblem(target, linkPath: path) {
                throw Self.refusal("symlink \(path.debugDescription): \(problem)")
            }
            guard symlinkat(target, rootDescriptor, path) == 0 else {
                throw IOFailure(operation: .create, path: fullPath(path), errno: errno)
            }
            entryDone()
        case .fileBody, .done:
            break
        }
    }

    private func readHeader() throws {
        guard field.prefix(8).elementsEqual(PackedTree.Format.magic) else {
            throw Self.refusal("not a packed folder (wrong magic or format version)")
        }
        let count = PackedTree.bigEndian(field[8..<12])
        guard count <= UInt64(PackedTree.Format.maxEntries) else {
            throw Self.refusal("\(count) entries declared, more than the \(PackedTree.Format.maxEntries) allowed")
        }
        if let expectedLength,
           count * PackedTree.Format.smallestEntrySize > expectedLength - UInt64(PackedTree.Format.headerSize) {
            throw Self.refusal("\(count) entries declared cannot fit in a stream of \(expectedLength) bytes")
        }
        let mode = UInt16(PackedTree.bigEndian(field[12..<14]))
        guard mode & ~PackedTree.Format.permissionMask == 0 else {
            throw Self.refusal("the folder's mode \(String(mode, radix: 8)) has bits beyond 0o777")
        }
        entryCount = Int(count)
        rootMode = mode
        state = entryCount == 0 ? .done : .entryHead
    }

    private func readEntryHead() throws {
        let kind = field[0]
        let mode = UInt16(PackedTree.bigEndian(field[1..<3]))
        let length = Int(PackedTree.bigEndian(field[3..<5]))
        let format = PackedTree.Format.self
        guard [format.kindDirectory, format.kindFile, format.kindSymlink].contains(kind) else {
            throw Self.refusal("entry \(entriesDone + 1) has unknown kind \(kind)")
        }
        guard mode & ~format.permissionMask == 0 else {
            throw Self.refusal("entry \(entriesDone + 1) has mode \(String(mode, radix: 8)) with bits beyond 0o777")
        }
        guard kind != format.kindSymlink || mode == format.symlinkMode else {
            throw Self.refusal("symlink entry \(entriesDone + 1) has mode \(String(mode, radix: 8)), not 777")
        }
        guard (1...format.maxPathLength).contains(length) else {
            throw Self.refusal("entry \(entriesDone + 1) has a path of \(length) bytes (must be 1...\(format.maxPathLength))")
        }
        state = .path(kind: kind, mode: mode, length: length)
    }

    private func readPath(kind: UInt8, mode: UInt16) throws {
        guard let path = PackedTree.decodeUTF8(field) else {
            throw Self.refusal("entry \(entriesDone + 1) has a path that is not valid UTF-8")
        }
        if let problem = PackedTree.pathProblem(path) {
            throw Self.refusal("\(problem): \(path.debugDescription)")
        }
        if let previousPath, !PackedTree.compare(previousPath, path) {
            throw Self.refusal("entries out of order or repeated: \(path.debugDescription) after \(previousPath.debugDescription)")
        }
        if let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")) {
            guard directories.contains(Array(path.utf8[..<slash])) else {
                throw Self.refusal("the parent of \(path.debugDescription) is not a folder listed before it")
            }
        }
        previousPath = path
        switch kind {
        case PackedTree.Format.kindDirectory:
            guard mkdirat(rootDescriptor, path, 0o700) == 0 else {
                throw IOFailure(operation: .create, path: fullPath(path), errno: errno)
            }
            directories.insert(Array(path.utf8))
            directoryModes.append((path, mode))
            entryDone()
        case PackedTree.Format.kindFile:
            state = .fileSize(path: path, mode: mode)
        default:
            state = .targetLength(path: path)
        }
    }

    /// The on-disk path of the entry at `path`, for error reports.
    func fullPath(_ path: String) -> String { destination + "/" + path }

    /// Applies a stored folder mode, opening the folder without following a symlink.
    func applyFolderMode(_ mode: UInt16, to path: String) throws {
        let descriptor = openat(rootDescriptor, path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0)
        guard descriptor >= 0 else { throw IOFailure(operation: .open, path: fullPath(path), errno: errno) }
        defer { close(descriptor) }
        guard fchmod(descriptor, mode_t(mode & modeMask)) == 0 else {
            throw IOFailure(operation: .write, path: fullPath(path), errno: errno)
        }
    }
}
