/// Checks on text shared by conditions and device attributes: bounded lengths, characters that may
/// not appear, and quoting for error messages.
///
/// Lengths are counted in Unicode scalars, never further than one past the limit, so a huge input
/// costs no more to refuse than a short one.
enum TargetingText {
    /// How many characters of a quoted text an error message shows before cutting it with "…".
    static let quotedLength = 60

    /// The number of Unicode scalars in `text`, counting no further than `limit + 1`.
    static func length(of text: some StringProtocol, upTo limit: Int) -> Int {
        text.unicodeScalars.prefix(limit + 1).count
    }

    /// The first character that may not appear, with its offset in Unicode scalars: control characters
    /// (including tab and newline), format characters such as bidirectional overrides, and line or
    /// paragraph separators.
    static func firstForbidden(in text: some StringProtocol) -> (offset: Int, scalar: Unicode.Scalar)? {
        // Printable ASCII, the usual case, has none: skip the Unicode property look-ups.
        if text.utf8.allSatisfy({ (0x20...0x7E).contains($0) }) { return nil }
        for (offset, scalar) in text.unicodeScalars.enumerated() {
            switch scalar.properties.generalCategory {
            case .control, .format, .lineSeparator, .paragraphSeparator: return (offset, scalar)
            default: continue
            }
        }
        return nil
    }

    /// A character's code point written as `U+000A`.
    static func codePoint(_ scalar: Unicode.Scalar) -> String {
        let hex = String(scalar.value, radix: 16, uppercase: true)
        return "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }

    /// `text` in single quotes for an error message, cut to `quotedLength` characters.
    static func quoted(_ text: some StringProtocol) -> String {
        let shown = text.unicodeScalars.prefix(quotedLength + 1)
        if shown.count <= quotedLength { return "'\(text)'" }
        var cut = String.UnicodeScalarView()
        cut.append(contentsOf: shown.prefix(quotedLength))
        return "'\(String(cut))…'"
    }

    /// `text` without the ASCII spaces at either end (the only white space a condition may contain).
    static func trimmed(_ text: Substring) -> Substring {
        let scalars = text.unicodeScalars
        guard let first = scalars.firstIndex(where: { $0 != " " }),
              let last = scalars.lastIndex(where: { $0 != " " })
        else { return text[text.endIndex...] }
        return text[first..<scalars.index(after: last)]
    }

    /// The pieces of `text` between occurrences of `separator`, empty pieces included, looking at
    /// Unicode scalars so that a separator followed by a combining mark still separates.
    static func split(_ text: Substring, on separator: Unicode.Scalar) -> [Substring] {
        let scalars = text.unicodeScalars
        var pieces: [Substring] = []
        var start = scalars.startIndex
        var index = scalars.startIndex
        while index < scalars.endIndex {
            if scalars[index] == separator {
                pieces.append(text[start..<index])
                start = scalars.index(after: index)
            }
            index = scalars.index(after: index)
        }
        pieces.append(text[start..<scalars.endIndex])
        return pieces
    }

    /// Whether `name` is a valid custom attribute name: 1 to 64 of `A-Z a-z 0-9 _ . -`.
    static func isCustomName(_ name: some StringProtocol) -> Bool {
        (1...64).contains(name.utf8.count) && name.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "-"):
                true
            default:
                false
            }
        }
    }
}
