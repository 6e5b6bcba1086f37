import Foundation

/// Machine-readable output: sorted keys, camelCase names, ISO 8601 times, one document per command.
enum JSONOutput {
    static func render(_ value: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        // Our own value types always encode.
        return String(decoding: try! encoder.encode(value), as: UTF8.self)
    }
}
