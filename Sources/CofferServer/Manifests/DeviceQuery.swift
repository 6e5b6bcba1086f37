import CofferFormat
import Foundation

/// The query string of a manifest request as name → value, bounded before anything is decoded.
enum DeviceQuery {
    static func parse(_ query: String?) throws(TargetingError) -> [String: String] {
        guard let query, !query.isEmpty else { return [:] }
        guard query.utf8.count <= 8192 else { throw TargetingError(reason: "the query is longer than 8192 bytes") }
        var values: [String: String] = [:]
        values.reserveCapacity(12)
        // Split on bytes, not Characters: '&' and '=' are ASCII, and byte splitting is far cheaper.
        for pair in query.utf8.split(separator: UInt8(ascii: "&")) {
            guard values.count < 64 else { throw TargetingError(reason: "more than 64 query parameters") }
            let equals = pair.firstIndex(of: UInt8(ascii: "="))
            let rawName = equals.map { pair[..<$0] } ?? pair[...]
            let rawValue = equals.map { pair[pair.index(after: $0)...] } ?? pair[pair.endIndex...]
            guard let name = decode(rawName), let value = decode(rawValue) else {
                throw TargetingError(reason: "the query is not valid percent-encoding")
            }
            guard values.updateValue(value, forKey: name) == nil else { throw TargetingError(reason: "\(name.prefix(64)) is given twice") }
        }
        return values
    }

    /// Form decoding (`+` is a space, `%XX` a byte) over UTF-8 bytes; nil for a bad escape or
    /// bytes that are not UTF-8. Written out rather than through Foundation's bridged NSString
    /// calls, which were a fifth of the manifest endpoint's time (docs/BENCHMARKS.md).
    static func decode(_ text: Substring) -> String? { decode(text.utf8) }

    /// ``decode(_:)-(Substring)`` over the UTF-8 bytes of a part of the query.
    static func decode(_ text: Substring.UTF8View) -> String? {
        // The common case, nothing escaped: the bytes are the string.
        if !text.contains(where: { $0 == UInt8(ascii: "%") || $0 == UInt8(ascii: "+") }) { return String(Substring(text)) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.count)
        var iterator = text.makeIterator()
        while let byte = iterator.next() {
            switch byte {
            case UInt8(ascii: "+"): bytes.append(UInt8(ascii: " "))
            case UInt8(ascii: "%"):
                guard let high = iterator.next().flatMap(Hex.value(of:)), let low = iterator.next().flatMap(Hex.value(of:)) else { return nil }
                bytes.append(high << 4 | low)
            default: bytes.append(byte)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }
}
