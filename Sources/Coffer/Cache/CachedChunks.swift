import CofferFormat
import Foundation

/// The sealed chunks of the models a cache already holds, by ID: where a delta update can copy
/// a chunk from instead of downloading it (docs/SDK.md, "Delta updates").
///
/// Only version 2 containers sealed with the model key of the new container take part: under one
/// key a chunk ID names one sealed byte string, so the bytes are copied as they are, without
/// decrypting. A cached file that cannot be read is skipped; the new container's SHA-256, checked
/// against the signed manifest, is what decides in the end.
struct CachedChunks: Sendable {
    /// Where one sealed chunk lies: a cached container and the chunk's offset in it.
    struct Location: Sendable, Equatable {
        let path: String
        let offset: UInt64
    }

    private let locations: [ChunkID: Location]

    /// Indexes the chunks of `paths` whose containers were sealed with model key `keyID`.
    init(paths: [String], keyID: String) {
        var locations: [ChunkID: Location] = [:]
        for path in paths {
            guard let header = try? SealedModel.readHeader(path: path), header.keyID == keyID,
                  let table = header.chunkTable else { continue }
            for (index, entry) in table.entries.enumerated() where locations[entry.id] == nil {
                locations[entry.id] = Location(path: path, offset: header.sealedOffset(ofChunk: UInt64(index)))
            }
        }
        self.locations = locations
    }

    /// Where chunk `id` can be copied from, if a cached model has it.
    subscript(id: ChunkID) -> Location? { locations[id] }

    /// Whether no cached model shares a key with the new one.
    var isEmpty: Bool { locations.isEmpty }
}
