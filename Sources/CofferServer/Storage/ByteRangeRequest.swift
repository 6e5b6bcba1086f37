/// A `Range: bytes=…` request header resolved against a blob's size (RFC 9110 §14).
///
/// Single ranges only: `a-b`, `a-` and `-n`. A header that is absent, malformed or lists several
/// ranges is ignored (the whole blob is served, as the RFC allows); a range that starts at or past
/// the end is unsatisfiable (416).
///
/// The numbers come from anyone on the network, so no arithmetic on them can trap. Positions are
/// ASCII digits only (no sign, no spaces inside) and saturate at `Int64.max` instead of failing, as
/// the RFC lets a position be any size; a last position is clamped to `size - 1` before one is
/// added, so `bytes=0-9223372036854775807` is the whole blob as a 206, not an overflow.
enum ByteRangeRequest: Equatable {
    case whole
    case range(Range<Int64>)
    case unsatisfiable

    init(header: String?, size: Int64) {
        guard let header, header.hasPrefix("bytes="), !header.contains(","), size >= 0 else { self = .whole; return }
        let spec = header.dropFirst("bytes=".count).trimmingCharacters(in: .whitespaces)
        let parts = spec.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { self = .whole; return }
        switch (Self.position(parts[0]), Self.position(parts[1])) {
        case (let start?, nil) where parts[1].isEmpty:
            // `a-`: from a to the end.
            self = start < size ? .range(start..<size) : .unsatisfiable
        case (let start?, let end?):
            // `a-b`: b may be past the end; clamp before adding one (end + 1 overflows at Int64.max).
            // Saturated positions are equal without being so: compare those as written.
            guard end > start || (end == start && !Self.isLess(parts[1], than: parts[0])) else { self = .whole; return }
            guard start < size else { self = .unsatisfiable; return }
            self = .range(start..<(min(end, size - 1) + 1))
        case (nil, let suffix?) where parts[0].isEmpty:
            // `-n`: the last n bytes (all of them when n is larger than the blob).
            guard suffix > 0, size > 0 else { self = .unsatisfiable; return }
            self = .range((suffix >= size ? 0 : size - suffix)..<size)
        default:
            self = .whole
        }
    }

    /// Whether the digits `a` are a smaller number than the digits `b`, however many there are.
    static func isLess(_ a: Substring, than b: Substring) -> Bool {
        let a = a.drop { $0 == "0" }, b = b.drop { $0 == "0" }
        return a.count != b.count ? a.count < b.count : a < b
    }

    /// A byte position: one or more ASCII digits, saturating at `Int64.max`; nil for anything else.
    static func position(_ text: Substring) -> Int64? {
        guard !text.isEmpty else { return nil }
        var value: Int64 = 0
        for byte in text.utf8 {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
            let (times10, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(Int64(byte - UInt8(ascii: "0")))
            value = overflow1 || overflow2 ? Int64.max : sum
        }
        return value
    }
}
