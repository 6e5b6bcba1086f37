#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Restores a folder from a packed tree stream (format v1) fed to it in order, in pieces of any size.
///
/// Every rule of the format is checked as the bytes arrive; the first breach throws
/// `ContainerError.malformedTree` and the unpacker refuses everything after it. Entries are created
/// relative to a descriptor of the destination, never through a symlink: each entry's parent must be
/// a folder this unpacker created earlier. File contents go straight to disk through a bounded
/// buffer, so memory use does not depend on the stream. Folder modes are applied by `finish()`.
///
/// On any error the destination is left partly written; the caller removes it with `removeTree(_:)`.
/// Not thread-safe: feed it from one thread at a time.
public final class TreeUnpacker {
    /// Where the parser is in the stream; each state but `fileBody` and `done` awaits a fixed field.
    enum State {
        case header
        case entryHead
        case path(kind: UInt8, mode: UInt16, length: Int)
        case fileSize(path: String, mode: UInt16)
        case fileBody(remaining: UInt64)
        case targetLength(path: String)
        case target(path: String, length: Int)
        case done
    }

    /// The folder being restored.
    public let destination: String
    /// The stream length the caller announced, if any.
    let expectedLength: UInt64?
    /// An open descriptor of `destination`; every entry is created relative to it.
    let rootDescriptor: Int32

    var state = State.header
    /// The bytes of the field being gathered (at most 4096).
    var field: [UInt8] = []
    /// Stream bytes consumed so far.
    var consumed: UInt64 = 0
    var entryCount = 0
    var entriesDone = 0
    var rootMode: UInt16 = 0o700
    var previousPath: String?
    /// Folders created so far, the only valid parents, by their UTF-8 bytes: Swift's `String` equality is canonical
    /// equivalence ("é" == "e\u{301}"), but the file system compares bytes, so a `Set<String>`
    /// would let an entry reach through a differently normalised link.
    var directories: Set<[UInt8]> = []
    /// Folders and their stored modes, in stream order, for `finish()`.
    var directoryModes: [(path: String, mode: UInt16)] = []
    /// The regular file being written.
    var output: OutputFile?
    /// The owner's permission bits the umask allows; stored modes are ANDed with it.
    let modeMask: UInt16
    var failure: (any Error)?
    var finished = false

    /// Prepares to restore into `destination`, which must not exist yet; creates it with mode 0700.
    ///
    /// - Parameters:
    ///   - destination: the folder to create; its parent must exist.
    ///   - expectedLength: the exact length of the stream, when known; lets the unpacker refuse
    ///     entry counts and file sizes that cannot fit before it writes them.
    /// - Throws: `IOFailure` if the folder exists already (`alreadyExists`) or cannot be created.
    public init(destination: String, expectedLength: UInt64? = nil) throws {
        guard mkdir(destination, 0o700) == 0 else {
            throw IOFailure(operation: .create, path: destination, errno: errno)
        }
        let descriptor = open(destination, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else {
            let code = errno
            rmdir(destination)
            throw IOFailure(operation: .open, path: destination, errno: code)
        }
        self.destination = destination
        self.expectedLength = expectedLength
        // The restored tree is plaintext: owner-only, whatever the stored modes and the umask
        // allow others (a stored 0o755 becomes 0o700, 0o644 becomes 0o600), as a decrypted file
        // is created 0o600. The umask may take away more (read without changing it where the
        // system allows: ``FileCreationMask``).
        self.modeMask = 0o700 & ~UInt16(truncatingIfNeeded: FileCreationMask.current)
        self.rootDescriptor = descriptor
        field.reserveCapacity(PackedTree.Format.maxPathLength)
    }

    deinit {
        output = nil
        close(rootDescriptor)
    }

    /// Parses and restores the next piece of the stream.
    ///
    /// - Throws: `ContainerError.malformedTree` when the stream breaks a rule of the format (also for
    ///   every call after a failure); `IOFailure` when an entry cannot be written.
    public func consume(_ bytes: UnsafeRawBufferPointer) throws {
        try Cancellation.check()
        try guarded {
            if finished { throw Self.refusal("bytes arrived after the stream was finished") }
            if let expectedLength, UInt64(bytes.count) > expectedLength - consumed {
                throw Self.refusal("the stream is longer than the announced \(expectedLength) bytes")
            }
            var position = 0
            while position < bytes.count {
                if case .fileBody(let remaining) = state {
                    let count = Int(min(remaining, UInt64(bytes.count - position)))
                    try writeBody(UnsafeRawBufferPointer(rebasing: bytes[position..<position + count]))
                    position += count
                    consumed += UInt64(count)
                    if remaining == UInt64(count) {
                        try closeFile()
                        entryDone()
                    } else {
                        state = .fileBody(remaining: remaining - UInt64(count))
                    }
                    continue
                }
                guard let size = fieldSize else {
                    throw Self.refusal("unexpected bytes after the last entry (offset \(consumed))")
                }
                let take = min(size - field.count, bytes.count - position)
                field.append(contentsOf: bytes[position..<position + take])
                position += take
                consumed += UInt64(take)
                if field.count == size {
                    try processField()
                    field.removeAll(keepingCapacity: true)
                }
            }
        }
    }

    /// Checks that the stream was complete, then applies the folder modes, deepest first, the
    /// destination's last.
    ///
    /// - Throws: `ContainerError.malformedTree` if the stream ended early; `IOFailure` if a mode
    ///   cannot be applied.
    public func finish() throws {
        try guarded {
            if finished { return }
            guard case .done = state else {
                throw Self.refusal("the stream ends early (\(entriesDone) of \(entryCount) entries complete, \(consumed) bytes read)")
            }
            if let expectedLength, consumed != expectedLength {
                throw Self.refusal("the stream ends after \(consumed) of the announced \(expectedLength) bytes")
            }
            // Reverse stream order puts every folder's contents before the folder itself.
            for (path, mode) in directoryModes.reversed() {
                try applyFolderMode(mode, to: path)
            }
            guard fchmod(rootDescriptor, mode_t(rootMode & modeMask)) == 0 else {
                throw IOFailure(operation: .write, path: destination, errno: errno)
            }
            finished = true
        }
    }

    /// The length of the fixed field the current state awaits; nil when no more bytes are allowed.
    var fieldSize: Int? {
        switch state {
        case .header: return PackedTree.Format.headerSize
        case .entryHead: return PackedTree.Format.entryHeadSize
        case .path(_, _, let length), .target(_, let length): return length
        case .fileSize: return 8
        case .targetLength: return 2
        case .fileBody, .done: return nil
        }
    }

    /// Runs `body`; after the first error, refuses every later call with that same error.
    private func guarded(_ body: () throws -> Void) throws {
        if let failure { throw failure }
        do {
            try body()
        } catch {
            failure = error
            output = nil
            throw error
        }
    }

    /// Records that one more entry is complete.
    func entryDone() {
        entriesDone += 1
        state = entriesDone == entryCount ? .done : .entryHead
    }

    /// A refusal of the stream.
    static func refusal(_ reason: String) -> ContainerError { .malformedTree(reason) }
}
