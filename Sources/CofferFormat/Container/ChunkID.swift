/// The ID of a version 2 chunk: HMAC-SHA-256 of its plaintext under the container's ID key.
///
/// Under one model key, equal plaintext chunks have equal IDs (and equal sealed bytes), which is
/// how a device finds the chunks of a new version it already holds. Not a secret, but keyed: it
/// says nothing about the plaintext to anyone without the key.
public struct ChunkID: Hashable, Sendable, CustomStringConvertible {
    /// The number of bytes of an ID.
    public static let length = 32

    private let words: (UInt64, UInt64, UInt64, UInt64)

    /// Thirty-two zero bytes: a placeholder in a header still being sealed, never written.
    static let zero = ChunkID([UInt8](repeating: 0, count: length))

    /// Reads an ID from exactly ``length`` bytes.
    public init<Bytes: Collection<UInt8>>(_ bytes: Bytes) {
        precondition(bytes.count == Self.length, "a chunk ID is 32 bytes")
        var words: [UInt64] = [0, 0, 0, 0]
        for (index, byte) in bytes.enumerated() { words[index / 8] = words[index / 8] << 8 | UInt64(byte) }
        self.words = (words[0], words[1], words[2], words[3])
    }

    /// The 32 bytes.
    public var bytes: [UInt8] {
        let big = (words.0.bigEndian, words.1.bigEndian, words.2.bigEndian, words.3.bigEndian)
        return withUnsafeBytes(of: big) { Array($0) }
    }

    /// Lowercase hex of the first 8 bytes: enough to tell IDs apart in a listing.
    public var description: String {
        bytes.prefix(8).hexString
    }

    public static func == (lhs: ChunkID, rhs: ChunkID) -> Bool {
        lhs.words.0 == rhs.words.0 && lhs.words.1 == rhs.words.1 && lhs.words.2 == rhs.words.2 && lhs.words.3 == rhs.words.3
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(words.0)
        hasher.combine(words.1)
        hasher.combine(words.2)
        hasher.combine(words.3)
    }
}
