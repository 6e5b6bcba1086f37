/// Text from a server, a file name or a header made safe for a terminal: control characters are shown as
/// `\u{…}` escapes, so a name or reason can neither move the cursor nor hide other output.
enum Printable {
    static func text(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var result = ""
        for scalar in text.unicodeScalars {
            if isControl(scalar) {
                result += "\\u{" + String(scalar.value, radix: 16) + "}"
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// Several lines, each made safe; the line breaks are kept.
    static func lines(_ text: String) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false).map { Self.text(String($0)) }.joined(separator: "\n")
    }

    /// Prints human output; whatever a server sent inside it cannot control the terminal.
    static func say(_ text: String) { print(lines(text)) }

    /// A note for the person at the terminal, as one line on stderr (`coffer: note: …`), apart from the output.
    static func note(_ text: String) {
        let line = Array(("coffer: note: " + Self.text(text) + "\n").utf8)
        line.withUnsafeBytes { try? Descriptors.writeAll(2, $0, name: "standard error") }
    }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }
}
