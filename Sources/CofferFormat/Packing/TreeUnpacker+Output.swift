#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension TreeUnpacker {
    /// A regular file being restored: its descriptor, stored mode and a bounded write buffer.
    final class OutputFile {
        /// The most bytes held before they are written out.
        static let bufferCapacity = 64 * 1024

        let file: PositionalFile
        let mode: UInt16
        var offset: UInt64 = 0
        var buffer: [UInt8] = []

        init(file: PositionalFile, mode: UInt16) {
            self.file = file
            self.mode = mode
        }

        /// Writes the buffered bytes at the current offset.
        func flush() throws {
            guard !buffer.isEmpty else { return }
            try buffer.withUnsafeBytes { try file.write($0, at: offset) }
            offset += UInt64(buffer.count)
            buffer.removeAll(keepingCapacity: true)
        }
    }
}

extension TreeUnpacker {
    /// Creates the regular file at `path` (it must not exist; a symlink there is not followed).
    func openFile(_ path: String, mode: UInt16) throws {
        let descriptor = openat(rootDescriptor, path, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw IOFailure(operation: .create, path: fullPath(path), errno: errno) }
        output = OutputFile(file: PositionalFile(adopting: descriptor, path: fullPath(path)), mode: mode)
    }

    /// Appends body bytes to the open file, through the bounded buffer.
    func writeBody(_ bytes: UnsafeRawBufferPointer) throws {
        guard let output else { return }
        var position = 0
        while position < bytes.count {
            let rest = UnsafeRawBufferPointer(rebasing: bytes[position...])
            if output.buffer.isEmpty && rest.count >= OutputFile.bufferCapacity {
                try output.file.write(rest, at: output.offset)
                output.offset += UInt64(rest.count)
                return
            }
            if output.buffer.capacity < OutputFile.bufferCapacity {
                output.buffer.reserveCapacity(OutputFile.bufferCapacity)
            }
            let take = min(OutputFile.bufferCapacity - output.buffer.count, rest.count)
            output.buffer.append(contentsOf: rest[0..<take])
            position += take
            if output.buffer.count == OutputFile.bufferCapacity { try output.flush() }
        }
    }

    /// Writes out the rest of the open file, applies its stored mode and closes it.
    func closeFile() throws {
        guard let output else { return }
        try output.flush()
        guard fchmod(output.file.descriptor, mode_t(output.mode & modeMask)) == 0 else {
            throw IOFailure(operation: .write, path: output.file.path, errno: errno)
        }
        self.output = nil
    }
}
