/// The plaintext of one regular file, read with `pread`.
public struct FileSource: PlaintextSource {
    private let file: PositionalFile
    /// The size of the file when it was opened.
    public let length: UInt64

    /// Opens the file at `path` for reading.
    public init(path: String) throws {
        file = try PositionalFile(readingAt: path)
        length = try file.size()
    }

    /// Reads the bytes at `offset`; throws if the file has shrunk since it was opened.
    public func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws {
        try file.readExactly(into: buffer, at: offset)
    }
}

/// Plaintext held in memory.
public struct BytesSource: PlaintextSource {
    private let bytes: [UInt8]
    /// The number of bytes.
    public var length: UInt64 { UInt64(bytes.count) }

    /// Wraps `bytes`.
    public init<Bytes: Sequence>(_ bytes: Bytes) where Bytes.Element == UInt8 {
        self.bytes = Array(bytes)
    }

    /// Copies the bytes at `offset` into `buffer`.
    public func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws {
        let start = Int(offset)
        bytes.withUnsafeBytes { all in
            buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: all[start..<start + buffer.count]))
        }
    }
}
