/// A model's SHA-256 as a report names it and a deployment's model versions have it: 32 bytes
/// held as four words, compared without a String.
struct ModelDigest: Hashable, Sendable {
    private let words: (UInt64, UInt64, UInt64, UInt64)

    /// The digest of 64 lowercase hex digits, or nil.
    init?(hex bytes: UnsafeBufferPointer<UInt8>) {
        guard bytes.count == 64 else { return nil }
        var words: [UInt64] = [0, 0, 0, 0]
        for index in 0..<64 {
            let byte = bytes[index]
            let nibble: UInt8
            switch byte {
            case 0x30...0x39: nibble = byte &- 0x30
            case 0x61...0x66: nibble = byte &- 0x61 &+ 10
            default: return nil
            }
            words[index / 16] = words[index / 16] << 4 | UInt64(nibble)
        }
        self.words = (words[0], words[1], words[2], words[3])
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
