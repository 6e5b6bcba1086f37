/// The chunk table of a version 2 container: every chunk's ID and plaintext length, in order
/// (docs/FORMAT.md, "Version 2"). The header MAC covers it, so it fixes each chunk's place.
public struct ChunkTable: Sendable, Equatable {
    /// Bytes of one encoded entry: a 32-byte ID and a 4-byte length.
    public static let entryLength = ChunkID.length + 4
    /// No chunk's plaintext is longer (4 MiB); readers refuse more before allocating.
    public static let maximumChunkLength: UInt32 = 1 << 22

    /// One chunk.
    public struct Entry: Sendable, Equatable {
        /// The keyed MAC of the chunk's plaintext.
        public let id: ChunkID
        /// The chunk's plaintext length; its sealed length is 16 bytes more.
        public let length: UInt32

        /// Creates an entry.
        public init(id: ChunkID, length: UInt32) {
            self.id = id
            self.length = length
        }
    }

    /// The chunks, in plaintext order.
    public let entries: [Entry]
    /// `starts[i]` is where chunk `i` begins in the plaintext; `starts[n]` is the plaintext length.
    let starts: [UInt64]

    /// Creates a table from its entries (their lengths must already be checked, as parsing does).
    public init(entries: [Entry]) {
        self.entries = entries
        var starts: [UInt64] = [0]
        starts.reserveCapacity(entries.count + 1)
        for entry in entries { starts.append(starts[starts.count - 1] + UInt64(entry.length)) }
        self.starts = starts
    }

    /// The number of chunks.
    public var count: Int { entries.count }

    /// The number of plaintext bytes all chunks hold.
    public var plaintextLength: UInt64 { starts[starts.count - 1] }

    /// The longest chunk's plaintext length.
    public var longestChunk: Int { Int(entries.map(\.length).max() ?? 0) }

    /// The plaintext bytes chunk `index` holds.
    public func plaintextRange(ofChunk index: Int) -> Range<UInt64> { starts[index]..<starts[index + 1] }

    /// The chunk holding plaintext offset `offset` (below ``plaintextLength``): a binary search.
    public func chunk(containing offset: UInt64) -> Int {
        var low = 0
        var high = entries.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if starts[middle] <= offset { low = middle } else { high = middle - 1 }
        }
        return low
    }

    /// The encoded table: each entry's ID then its length, big-endian.
    public func encoded() -> [UInt8] {
        var writer = ByteWriter()
        for entry in entries {
            writer.append(contentsOf: entry.id.bytes)
            writer.append(entry.length)
        }
        return writer.bytes
    }

    /// The rule every entry's length follows, for a table of `count` entries over `plaintextLength`
    /// bytes: not over 4 MiB, and not 0 unless the table is the one empty chunk of an empty plaintext.
    static func checkEntryLength(_ length: UInt32, count: Int, plaintextLength: UInt64) throws {
        guard length <= maximumChunkLength else {
            throw ContainerError.malformedHeader("a chunk of \(length) bytes is over the 4 MiB limit")
        }
        guard length > 0 || (count == 1 && plaintextLength == 0) else {
            throw ContainerError.malformedHeader("an empty chunk in a non-empty plaintext")
        }
    }

    /// Parses `count` entries from `bytes` (exactly `count × 36` of them), refusing a length of 0
    /// (unless the table is the one empty chunk of an empty plaintext), over 4 MiB, or lengths
    /// that do not add up to `plaintextLength`.
    public init(parsing bytes: [UInt8], count: Int, plaintextLength: UInt64) throws {
        guard bytes.count == count * Self.entryLength else {
            throw ContainerError.malformedHeader("chunk table is \(bytes.count) bytes, not \(count) entries")
        }
        var cursor = ByteCursor(bytes)
        var entries: [Entry] = []
        entries.reserveCapacity(count)
        var sum: UInt64 = 0
        for _ in 0..<count {
            let id = ChunkID(try cursor.take(ChunkID.length, or: ContainerError.malformedHeader("chunk table ends early")))
            let length = try cursor.integer(UInt32.self, or: ContainerError.malformedHeader("chunk table ends early"))
            try Self.checkEntryLength(length, count: count, plaintextLength: plaintextLength)
            sum += UInt64(length)  // count ≤ 2^32 and length ≤ 2^22: no overflow
            entries.append(Entry(id: id, length: length))
        }
        guard sum == plaintextLength else {
            throw ContainerError.malformedHeader("chunk lengths add up to \(sum), not the plaintext length \(plaintextLength)")
        }
        self.init(entries: entries)
    }
}
