import Foundation

extension SealedModel {
    /// Random access to a container's plaintext: any byte range decrypts by reading only the chunks
    /// that cover it.
    ///
    /// Opening a reader checks, in order: the header's rules, the container's exact length, the key
    /// (the header MAC), and the last chunk — so truncation and extension are refused before any
    /// plaintext is released. Every later read authenticates each chunk it uses.
    public final class Reader: Sendable {
        /// The verified header.
        public let header: ContainerHeader
        private let input: any PlaintextSource
        private let cipher: ChunkCipher
        private let layout: ChunkLayout

        /// Opens the container file at `path`; `maximumHeaderLength` as
        /// ``SealedModel/readHeader(from:maximumHeaderLength:)`` (pass ``SealedModel/maximumHeaderLength``
        /// for a file from elsewhere).
        public convenience init(path: String, using key: KeyMaterial, maximumHeaderLength: Int? = nil) throws {
            try self.init(FileSource(path: path), using: key, checkingLastChunk: true, maximumHeaderLength: maximumHeaderLength)
        }

        /// Opens a container held in memory.
        public convenience init(bytes: [UInt8], using key: KeyMaterial) throws {
            try self.init(BytesSource(bytes), using: key)
        }

        /// Opens a container given as random-access bytes.
        public convenience init(_ input: some PlaintextSource, using key: KeyMaterial) throws {
            try self.init(input, using: key, checkingLastChunk: true)
        }

        /// Opens a container given as random-access bytes; with `checkingLastChunk` false, the last
        /// chunk is not read until it is decrypted, so that a container still arriving (a download
        /// decrypted as it comes, whose reads wait for their bytes) can be opened from its header.
        /// Truncation and extension are then found only by the last chunk's decryption: a caller
        /// that passes false must release no plaintext before every chunk has been decrypted.
        ///
        /// A header longer than `maximumHeaderLength` is refused from its preamble
        /// (``SealedModel/readHeader(from:maximumHeaderLength:)``); nil: no limit.
        public init(_ input: some PlaintextSource, using key: KeyMaterial, checkingLastChunk: Bool,
                    maximumHeaderLength: Int? = nil) throws {
            let header = try SealedModel.readHeader(from: input, maximumHeaderLength: maximumHeaderLength)
            guard input.length == header.sealedLength else {
                throw ContainerError.lengthMismatch(expected: header.sealedLength, actual: input.length)
            }
            let keys = try FileKeys(for: header, using: key)
            guard keys.verify(header) else {
                if case .modelKey(let given) = key, let sealedWith = header.keyID, sealedWith != given.id {
                    throw ContainerError.wrongKey(sealedWith: sealedWith, given: given.id)
                }
                throw ContainerError.authenticationFailure
            }
            self.header = header
            self.input = input
            self.cipher = ChunkCipher(keys: keys, header: header)
            self.layout = header.layout
            guard checkingLastChunk else { return }
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: header.largestChunkLength + ContainerHeader.tagLength, alignment: 64)
            defer { buffer.deallocate() }
            _ = try openChunk(header.chunkCount - 1, using: buffer)
        }

        /// The number of plaintext bytes.
        public var plaintextLength: UInt64 { header.plaintextLength }

        /// Decrypts the plaintext bytes in `range`, which must lie within ``plaintextLength``.
        public func read(range: Range<UInt64>) throws -> [UInt8] {
            guard range.upperBound <= plaintextLength else {
                throw ContainerError.malformedHeader("range \(range) outside plaintext of \(plaintextLength) bytes")
            }
            guard !range.isEmpty else { return [] }
            // Range<UInt64>.count is an Int: it traps past 2 GiB where Int has 32 bits (watchOS).
            guard let count = Int(exactly: range.upperBound - range.lowerBound) else {
                throw ContainerError.malformedHeader("range \(range) is larger than one array can hold here")
            }
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: bufferSize, alignment: 64)
            defer { buffer.deallocate() }
            var result: [UInt8] = []
            result.reserveCapacity(count)
            for index in layout.chunk(containing: range.lowerBound)...layout.chunk(containing: range.upperBound - 1) {
                let plaintext = try openChunk(index, using: buffer)
                let chunkStart = layout.plaintextRange(ofChunk: index).lowerBound
                let from = Int(max(range.lowerBound, chunkStart) - chunkStart)
                let to = Int(min(range.upperBound, chunkStart + UInt64(plaintext.count)) - chunkStart)
                result.append(contentsOf: plaintext[from..<to])
            }
            return result
        }

        /// Reads and authenticates chunk `index` using `buffer` (at least chunk size + tag bytes).
        func openChunk(_ index: UInt64, using buffer: UnsafeMutableRawBufferPointer) throws -> Data {
            let length = Int(layout.plaintextRange(ofChunk: index).count) + ContainerHeader.tagLength
            let sealed = UnsafeMutableRawBufferPointer(rebasing: buffer[..<length])
            try input.read(into: sealed, at: layout.sealedOffset(ofChunk: index))
            return try cipher.open(UnsafeRawBufferPointer(sealed), index: index, isLast: index == layout.chunkCount - 1)
        }

        /// Decrypts every chunk in parallel, writing plaintext at its offset in `sink`.
        public func decrypt(to sink: some RandomAccessSink, workers: Int = SealedModel.defaultWorkerCount, progress: Progress? = nil) throws {
            try ChunkWorkers.forEach(chunkCount: header.chunkCount, workers: workers, bufferSize: bufferSize) { buffer, index in
                let plaintext = try self.openChunk(index, using: buffer)
                try plaintext.withUnsafeBytes { try sink.write($0, at: self.layout.plaintextRange(ofChunk: index).lowerBound) }
                progress?(UInt64(plaintext.count))
            }
        }

        /// Decrypts every chunk, several at a time, and hands the plaintext to `consume` in order.
        public func decryptInOrder(workers: Int = SealedModel.defaultWorkerCount, progress: Progress? = nil, _ consume: (Data) throws -> Void) throws {
            try ChunkWorkers.inOrder(
                chunkCount: header.chunkCount, workers: workers, bufferSize: bufferSize,
                produce: { buffer, index in try self.openChunk(index, using: buffer) },
                consume: { plaintext in
                    try consume(plaintext)
                    progress?(UInt64(plaintext.count))
                })
        }

        /// Authenticates every chunk without releasing any plaintext.
        public func verifyAll(workers: Int = SealedModel.defaultWorkerCount) throws {
            try ChunkWorkers.forEach(chunkCount: header.chunkCount, workers: workers, bufferSize: bufferSize) { buffer, index in
                _ = try self.openChunk(index, using: buffer)
            }
        }

        private var bufferSize: Int { header.largestChunkLength + ContainerHeader.tagLength }
    }

    /// Reads and parses the header at the start of `input`, without a key.
    ///
    /// The preamble (at most 4 KiB) is checked first, the input's exact length next, and only then
    /// is a version 2 chunk table read, 1 MiB at a time, each entry's length checked as it
    /// arrives: a hostile file cannot make this allocate more than it holds. (Its length alone is
    /// not enough: a sparse file of any length costs nothing, and reads as zeros — empty chunks.)
    ///
    /// - Parameter maximumHeaderLength: a header (version 2: fields, chunk table and MAC) longer
    ///   than this is refused from its preamble, before the table is read; nil: no limit but the
    ///   input's own length. Readers of containers from elsewhere (the server's blobs, `coffer
    ///   inspect`) pass ``maximumHeaderLength``, so that a file of tiny chunks cannot make every
    ///   read of its header cost gigabytes.
    public static func readHeader(from input: some PlaintextSource, maximumHeaderLength: Int? = nil) throws -> ContainerHeader {
        var prefix = [UInt8](repeating: 0, count: Int(min(UInt64(ContainerHeader.maximumLength), input.length)))
        try prefix.withUnsafeMutableBytes { try input.read(into: $0, at: 0) }
        guard prefix.starts(with: ContainerHeader.magic) else { throw ContainerError.notAContainer }
        guard let preamble = try ContainerHeader.preamble(from: prefix) else {
            throw ContainerError.malformedHeader("header ends early")
        }
        if preamble.version >= 2, input.length != preamble.sealedLength {
            throw ContainerError.lengthMismatch(expected: preamble.sealedLength, actual: input.length)
        }
        if let maximumHeaderLength { try preamble.checkHeaderLength(atMost: maximumHeaderLength) }
        guard input.length >= UInt64(preamble.headerLength) else { throw ContainerError.malformedHeader("header ends early") }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(min(preamble.headerLength, tablePiece))
        var checked = preamble.chunkTableOffset
        while bytes.count < preamble.headerLength {
            let start = bytes.count
            bytes.append(contentsOf: repeatElement(0, count: min(tablePiece, preamble.headerLength - start)))
            try bytes[start...].withUnsafeMutableBytes { try input.read(into: $0, at: UInt64(start)) }
            try checkChunkLengths(bytes, from: &checked, preamble: preamble)
        }
        return try ContainerHeader(parsing: bytes)
    }

    /// How much of a header is read at a time.
    static let tablePiece = 1 << 20

    /// The longest header (version 2: fields, chunk table and MAC) Coffer reads from a container
    /// it did not just write: 32 MiB, a chunk table of about 930,000 chunks (a model of 57 GiB or
    /// more at the writer's smallest chunk, 64 KiB).
    ///
    /// A version 2 header is mostly its chunk table, read whole and held several times over while
    /// it is parsed, and its length is only the file's word: a valid container of one-byte chunks
    /// would make every read of its header cost gigabytes (on the server, whenever a deployment
    /// names the blob; over 4 GiB it trapped in NIO's buffer, ending the server for every team).
    /// The server refuses an upload with a longer header from its first bytes and a stored blob
    /// with one when its header is read; `coffer inspect` refuses a local file with one. Pass it
    /// as `maximumHeaderLength`. (A delta in the SDK reads at most 16 MiB of a header, before the
    /// container can be verified.)
    public static let maximumHeaderLength = 32 << 20

    /// Checks the length of every chunk table entry that `bytes` now holds whole from `offset` on,
    /// and moves `offset` past them: an entry breaking ``ChunkTable``'s length rule (0 bytes in a
    /// non-empty plaintext, or over 4 MiB) is refused before the rest of the table is read.
    static func checkChunkLengths(_ bytes: [UInt8], from offset: inout Int, preamble: ContainerHeader.Preamble) throws {
        guard preamble.version >= 2 else { return }
        let end = min(bytes.count, preamble.chunkTableOffset + preamble.chunkCount * ChunkTable.entryLength)
        while offset + ChunkTable.entryLength <= end {
            let lengthAt = offset + ChunkID.length
            let length = bytes[lengthAt..<lengthAt + 4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            try ChunkTable.checkEntryLength(length, count: preamble.chunkCount, plaintextLength: preamble.plaintextLength)
            offset += ChunkTable.entryLength
        }
    }

    /// Reads the header of the container file at `path`, without a key (for `coffer inspect`);
    /// `maximumHeaderLength` as ``readHeader(from:maximumHeaderLength:)``.
    public static func readHeader(path: String, maximumHeaderLength: Int? = nil) throws -> ContainerHeader {
        try readHeader(from: FileSource(path: path), maximumHeaderLength: maximumHeaderLength)
    }
}
