import ArgumentParser

/// `--range START-END` (bytes START to END inclusive, as in HTTP) or `START-` (to the end).
struct ByteRange: ExpressibleByArgument, Equatable {
    let start: UInt64
    let end: UInt64?

    init?(argument: String) {
        let parts = argument.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, let start = UInt64(parts[0]) else { return nil }
        if parts[1].isEmpty {
            self.start = start
            self.end = nil
        } else {
            guard let end = UInt64(parts[1]), end >= start else { return nil }
            self.start = start
            self.end = end
        }
    }

    /// The `Range` header's value.
    var header: String { "bytes=\(start)-" + (end.map(String.init) ?? "") }

    var text: String { "\(start)-" + (end.map(String.init) ?? "") }
}
