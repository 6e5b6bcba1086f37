/// The URI encoding of AWS Signature Version 4 (and of S3 object keys in request paths): every byte of
/// the UTF-8 form is written as `%XX` with uppercase hex, except the RFC 3986 unreserved characters
/// `A–Z a–z 0–9 - . _ ~`, and `/` where it separates path segments. Space is `%20`, never `+`.
enum SigV4Encoding {
    private static let upperHex: [UInt8] = Array("0123456789ABCDEF".utf8)

    /// Whether `byte` is an RFC 3986 unreserved character.
    static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
            true
        default:
            false
        }
    }

    /// `text` encoded; `/` is kept when `keepSlash` (paths), encoded as `%2F` otherwise (query names and values).
    static func encode(_ text: String, keepSlash: Bool) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            if isUnreserved(byte) || (keepSlash && byte == UInt8(ascii: "/")) {
                out.append(byte)
            } else {
                out.append(UInt8(ascii: "%"))
                out.append(upperHex[Int(byte >> 4)])
                out.append(upperHex[Int(byte & 0x0F)])
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The canonical query string: each name and value encoded, pairs sorted by encoded name and then
    /// encoded value (byte order), joined with `&`; a parameter without a value is written `name=`.
    /// Also the query the client sends, so that what is signed is what the store receives.
    static func canonicalQuery(_ items: [(name: String, value: String)]) -> String {
        items
            .map { (encode($0.name, keepSlash: false), encode($0.value, keepSlash: false)) }
            .sorted { $0.0 != $1.0 ? Array($0.0.utf8).lexicographicallyPrecedes(Array($1.0.utf8)) : Array($0.1.utf8).lexicographicallyPrecedes(Array($1.1.utf8)) }
            .map { $0.0 + "=" + $0.1 }
            .joined(separator: "&")
    }
}
