/// Text from files or headers made safe to print: control characters (which could move the cursor,
/// retitle the terminal or hide output) are shown as `\u{…}` escapes.
enum TerminalText {
    static func escaped(_ text: String) -> String {
        var result = ""
        for scalar in text.unicodeScalars {
            if scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) {
                result += "\\u{" + String(scalar.value, radix: 16) + "}"
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}
