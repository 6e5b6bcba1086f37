import CofferFormat
import Foundation

/// How much of a model version a device that holds the previous version does not download again:
/// the share of its chunks (format version 2) that the previous version, sealed with the same key,
/// also has. Read from the two stored containers' headers; nothing is stored for it.
enum ChunkSharing {
    /// The chunks of `newer` and how many of them `older` has, or nil when a delta is impossible
    /// (either is format 1, or they were sealed with different keys).
    static func shared(_ newer: ContainerHeader, with older: ContainerHeader) -> (shared: Int, total: Int)? {
        guard let newTable = newer.chunkTable, let oldTable = older.chunkTable, newer.keyID == older.keyID else { return nil }
        let held = Set(oldTable.entries.map(\.id))
        return (newTable.entries.filter { held.contains($0.id) }.count, newTable.count)
    }

    /// One line for the dashboard: the format, and for format 2 what the previous version shares
    /// (`sharing`: ``shared(_:with:)`` of the two, nil when a delta is impossible).
    static func describe(_ facts: HeaderFacts?, previous: HeaderFacts?, sharing: (shared: Int, total: Int)?, previousLabel: String) -> String {
        guard let facts else { return "" }
        guard facts.version >= 2 else { return "Format 1: fixed chunks; devices download every version whole." }
        let chunks = "Format 2: \(facts.chunkCount) content-defined chunks"
        guard let previous else { return chunks + "." }
        guard let sharing, sharing.total > 0 else {
            return chunks + "; shares none with \(previousLabel) (" + (previous.version < 2 ? "format 1" : "another key") + ")."
        }
        let percent = sharing.shared * 100 / sharing.total
        return chunks + "; \(percent) % shared with \(previousLabel) (\(sharing.shared) of \(sharing.total)), which devices holding it do not download again."
    }

    /// Whether two blobs can share chunks at all (both format 2, one key), from their facts.
    static func comparable(_ newer: HeaderFacts?, _ older: HeaderFacts?) -> Bool {
        guard let newer, let older else { return false }
        return newer.version >= 2 && older.version >= 2 && newer.keyID == older.keyID
    }
}
