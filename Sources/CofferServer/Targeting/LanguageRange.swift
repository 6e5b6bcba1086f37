/// A BCP 47 language tag as a rule names it: a bare language such as `en` matches every tag of
/// that language (`en`, `en-GB`, `en-US`); a tag with subtags such as `en-GB` matches only itself.
/// Both sides are compared ignoring case.
struct LanguageRange: Sendable, Equatable, CustomStringConvertible {
    /// The subtags, lowercased: a language of 2 or 3 letters, then subtags of 1 to 8 letters or digits.
    let subtags: [String]

    /// The range written in `text`, or nil if it is not a language tag of that shape (`en_GB` and
    /// `english` are not).
    init?(_ text: Substring) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard let language = parts.first, (2...3).contains(language.utf8.count),
              language.utf8.allSatisfy(Self.isLetter),
              parts.dropFirst().allSatisfy({ (1...8).contains($0.utf8.count) && $0.utf8.allSatisfy(Self.isLetterOrDigit) })
        else { return nil }
        subtags = parts.map { $0.lowercased() }
    }

    /// Whether `byte` is an ASCII letter.
    private static func isLetter(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20)
    }

    /// Whether `byte` is an ASCII letter or digit.
    private static func isLetterOrDigit(_ byte: UInt8) -> Bool {
        isLetter(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }

    /// Whether the device's language `tag` falls in this range. The device's tag may use `_` for
    /// `-` (`en_GB`), as Java and Android locales do.
    func matches(_ tag: String) -> Bool {
        let device = String(tag.lowercased().map { $0 == "_" ? "-" : $0 })
        if subtags.count == 1 {
            return device.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)[0] == subtags[0]
        }
        return device == subtags.joined(separator: "-")
    }

    /// The tag in its usual case: `en`, `en-GB`, `zh-Hant-TW`, `es-419`.
    var description: String {
        subtags.enumerated().map { index, subtag in
            guard index > 0 else { return subtag }
            switch subtag.count {
            case 2 where subtag.utf8.allSatisfy(Self.isLetter): return subtag.uppercased()
            case 4 where subtag.utf8.allSatisfy(Self.isLetter): return subtag.prefix(1).uppercased() + subtag.dropFirst()
            default: return subtag
            }
        }.joined(separator: "-")
    }
}
