/// A `Range: bytes=…` request header resolved against a blob's size (RFC 9110 §14).
///
/// Single ranges only: `a-b`, `a-` and `-n`. A header that is absent, malformed or lists several
/// ranges is ignored (the whole blob is served, as the RFC allows); a range that starts at or past
/// the end is unsatisfiable (416).
enum ByteRangeRequest: Equatable {
    case whole
    case range(Range<Int64>)
    case unsatisfiable

    init(header: String?, size: Int64) {
        guard let header, header.hasPrefix("bytes="), !header.contains(",") else { self = .whole; return }
        let spec = header.dropFirst("bytes=".count).trimmingCharacters(in: .whitespaces)
        let parts = spec.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { self = .whole; return }
        let first = parts[0].isEmpty ? nil : Int64(parts[0])
        let last = parts[1].isEmpty ? nil : Int64(parts[1])
        switch (parts[0].isEmpty, parts[1].isEmpty, first, last) {
        case (false, _, let start?, _) where start >= 0:
            if !parts[1].isEmpty {
                guard let end = last, end >= start else { self = .whole; return }
                guard start < size else { self = .unsatisfiable; return }
                self = .range(start..<min(end + 1, size))
            } else {
                guard start < size else { self = .unsatisfiable; return }
                self = .range(start..<size)
            }
        case (true, false, nil, let suffix?) where suffix >= 0:
            guard suffix > 0, size > 0 else { self = .unsatisfiable; return }
            self = .range(max(0, size - suffix)..<size)
        default:
            self = .whole
        }
    }
}
