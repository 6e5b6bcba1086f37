import CofferFormat
import Foundation

/// Makes a failure reason fit to leave the device: the error's type and a short description, at
/// most 200 bytes of UTF-8, without control or format characters (the server refuses them, and
/// the dashboard must not be disguised by them), without file paths (they carry user names) and
/// without long opaque strings (they may be tokens or keys).
enum ReportReason {
    /// The most bytes of a reason the server accepts.
    static let maximumBytes = 200

    /// The reason for `error`: `Type: description` for Swift errors, `domain code` for `NSError`s
    /// bridged from Objective-C.
    static func describe(_ error: any Error) -> String {
        let type = String(describing: Swift.type(of: error))
        let ns = error as NSError
        let text: String
        if type == "NSError" || type.hasPrefix("__") {
            text = "\(ns.domain) \(ns.code)"
        } else {
            text = "\(type): \(String(describing: error))"
        }
        return sanitize(text)
    }

    /// `text` made safe: what ``describe(_:)`` promises.
    static func sanitize(_ text: String) -> String {
        let scalars = text.unicodeScalars.map { scalar -> Character in PrintableText.isUnprintable(scalar) ? " " : Character(scalar) }
        let words = String(scalars).split(whereSeparator: { $0 == " " }).map { word -> String in
            if word.contains("/") || word.contains("\\") { return "<path>" }
            if isOpaque(word) { return "<redacted>" }
            return String(word)
        }
        return truncated(words.joined(separator: " "), toUTF8: maximumBytes)
    }

    /// Whether `word` holds a run of 32 or more letters, digits, `+`, `=`, `_` or `-`: a token, a
    /// key or a hash rather than words.
    private static func isOpaque(_ word: Substring) -> Bool {
        var run = 0
        for byte in word.utf8 {
            let opaque = (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                || byte == 0x2B || byte == 0x3D || byte == 0x5F || byte == 0x2D
            run = opaque ? run + 1 : 0
            if run >= 32 { return true }
        }
        return false
    }

    /// The longest prefix of whole characters of `text` within `limit` UTF-8 bytes.
    static func truncated(_ text: String, toUTF8 limit: Int) -> String {
        guard text.utf8.count > limit else { return text }
        var result = ""
        var used = 0
        for character in text {
            let size = character.utf8.count
            guard used + size <= limit else { break }
            result.append(character)
            used += size
        }
        return result
    }
}
