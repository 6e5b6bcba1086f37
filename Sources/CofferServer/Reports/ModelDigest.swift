/// A model's SHA-256 as a report names it and a deployment's model versions have it: 32 bytes
/// held as four words, compared without a String.
struct ModelDigest: Hashable, Sendable {
    private let words: (UInt64, UInt64, UInt64, UInt64)

    /// The digest of 64 lowercase hex digits, or nil. No allocation: it runs for every event.
    init?(hex bytes: UnsafeBufferPointer<UInt8>) {
        guard bytes.count == 64, let a = Self.word(bytes, 0), let b = Self.word(bytes, 16), let c = Self.word(bytes, 32),
              let d = Self.word(bytes, 48) else { return nil }
        words = (a, b, c, d)
    }

    /// The 16 hex digits at `start` as a word, or nil.
    private static func word(_ bytes: UnsafeBufferPointer<UInt8>, _ start: Int) -> UInt64? {
        var word: UInt64 = 0
        for index in start..<(start + 16) {
            let byte = bytes[index]
            let nibble: UInt8
            switch byte {
            case 0x30...0x39: nibble = byte &- 0x30
            case 0x61...0x66: nibble = byte &- 0x61 &+ 10
            default: return nil
            }
            word = word << 4 | UInt64(nibble)
        }
        return word
    }

    /// The digest of `text`, 64 lowercase hex digits, or nil.
    init?(hex text: String) {
        var text = text
        guard let digest = text.withUTF8({ ModelDigest(hex: $0) }) else { return nil }
        self = digest
    }

    static func == (left: ModelDigest, right: ModelDigest) -> Bool {
        left.words == right.words
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(words.0)
        hasher.combine(words.1)
        hasher.combine(words.2)
        hasher.combine(words.3)
    }
}
