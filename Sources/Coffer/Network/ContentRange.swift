import Foundation

/// A `Content-Range` header of a 206 answer: `bytes START-END/TOTAL`, TOTAL possibly `*`.
public struct ContentRange: Equatable, Sendable {
    /// The first byte's offset.
    public let start: UInt64
    /// The last byte's offset (inclusive).
    public let end: UInt64
    /// The whole resource's length, or nil for `*`.
    public let total: UInt64?

    /// Parses the header; nil for anything that is not exactly that form, or whose end lies
    /// before its start or at or past the total.
    public init?(_ value: String) {
        guard value.hasPrefix("bytes ") else { return nil }
        let parts = value.dropFirst(6).split(separator: "/", maxSplits: 1)
        guard parts.count == 2 else { return nil }
        let bounds = parts[0].split(separator: "-", omittingEmptySubsequences: false)
        guard bounds.count == 2, bounds.allSatisfy({ !$0.isEmpty && $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }), let start = UInt64(bounds[0]), let end = UInt64(bounds[1]), end >= start else { return nil }
        self.start = start
        self.end = end
        if parts[1] == "*" {
            total = nil
        } else {
            guard let total = UInt64(parts[1]), total > end else { return nil }
            self.total = total
        }
    }
}
