import CofferFormat
import Foundation

extension PositionalFile {
    /// The whole file at `path` when it holds at most `limit` bytes; nil when it cannot be read or
    /// is larger (the cache's small JSON files: a state, the failed models, the report queue).
    static func contents(at path: String, atMost limit: Int) -> Data? {
        guard let file = try? PositionalFile(readingAt: path), let size = try? file.size(), size <= UInt64(limit),
              let bytes = try? file.read(count: Int(size), at: 0)
        else { return nil }
        return Data(bytes)
    }
}
