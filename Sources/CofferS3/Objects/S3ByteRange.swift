/// The bytes of an object to read (an HTTP `Range: bytes=…` of one range).
public enum S3ByteRange: Sendable, Equatable {
    /// The bytes at offsets `lower..<upper` (`bytes=lower-(upper-1)`); must not be empty.
    case bytes(Range<Int64>)
    /// From `offset` to the end (`bytes=offset-`).
    case from(Int64)
    /// The last `count` bytes (`bytes=-count`), all of them when the object is shorter.
    case suffix(Int64)

    /// The `Range` header value.
    /// - Throws: ``S3Error/invalidArgument(_:)`` for an empty range, a negative offset or a zero suffix.
    func headerValue() throws(S3Error) -> String {
        switch self {
        case .bytes(let range):
            guard range.lowerBound >= 0, !range.isEmpty else { throw .invalidArgument("a byte range must be non-empty and start at 0 or later") }
            return "bytes=\(range.lowerBound)-\(range.upperBound - 1)" // upper > lower >= 0: no overflow
        case .from(let offset):
            guard offset >= 0 else { throw .invalidArgument("a byte range must start at 0 or later") }
            return "bytes=\(offset)-"
        case .suffix(let count):
            guard count > 0 else { throw .invalidArgument("a suffix range must hold at least one byte") }
            return "bytes=-\(count)"
        }
    }
}
