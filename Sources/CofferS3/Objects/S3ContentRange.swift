/// The `Content-Range` of a 206 or 416 answer: `bytes first-last/size` or `bytes */size`.
///
/// Parsed strictly with ``DecimalText`` (no overflow, no sign): `last` must not be before `first`, and
/// `size`, when given, must be past `last`.
public struct S3ContentRange: Sendable, Equatable {
    /// The offsets of the bytes sent, `first..<last+1`; nil for `bytes */size`.
    public let range: Range<Int64>?
    /// The whole object's size; nil for `/*`.
    public let size: Int64?

    /// A content range.
    public init(range: Range<Int64>?, size: Int64?) {
        self.range = range
        self.size = size
    }

    /// Parses the header value; nil for anything else.
    init?(header: String) {
        guard header.hasPrefix("bytes ") else { return nil }
        let parts = header.dropFirst(6).split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { return nil }
        if parts[1] == "*" {
            size = nil
        } else {
            guard let total = DecimalText.int64(parts[1]) else { return nil }
            size = total
        }
        if parts[0] == "*" {
            guard size != nil else { return nil }
            range = nil
            return
        }
        let bounds = parts[0].split(separator: "-", omittingEmptySubsequences: false)
        guard bounds.count == 2, let first = DecimalText.int64(bounds[0]), let last = DecimalText.int64(bounds[1]),
              last >= first, last < Int64.max, size.map({ last < $0 }) ?? true
        else { return nil }
        range = first..<(last + 1)
    }
}
