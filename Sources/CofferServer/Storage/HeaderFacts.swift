import CofferFormat
import Foundation
import NIOConcurrencyHelpers

/// What the server uses of a stored container's header (its key, size, format and chunk count),
/// without the header itself: a version 2 header may hold 32 MiB of chunk table.
struct HeaderFacts: Sendable, Equatable {
    let keyID: String?
    let size: Int64
    let version: UInt16
    let chunkCount: UInt64

    init(_ header: ContainerHeader, size: Int64) {
        keyID = header.keyID
        self.size = size
        version = header.version
        chunkCount = header.chunkCount
    }
}

/// The ``HeaderFacts`` of blobs read recently, by address, for one store.
///
/// A blob never changes (its address is its SHA-256), so what one read of its header found holds
/// for every later look: without this, a collection page whose deployments name one blob under
/// many model names read (and parsed) that header once per name and deployment, on every view —
/// an account of any team could make each view cost gigabytes. Only blobs found whole are kept,
/// for ``lifetime`` (a blob that goes missing is noticed that late), at most ``capacity`` of them.
final class HeaderFactsCache: Sendable {
    static let lifetime: TimeInterval = 60
    static let capacity = 10_000
    private let entries = NIOLockedValueBox<[String: (facts: HeaderFacts, until: Date)]>([:])
    private let readCount = NIOLockedValueBox(0)
    /// ``ChunkSharing/shared(_:with:)`` of two blobs, by "newer|older": their bytes never change.
    private let sharings = NIOLockedValueBox<[String: (shared: Int, total: Int)]>([:])

    /// How many headers were read rather than found here.
    var reads: Int { readCount.withLockedValue { $0 } }

    init() {}

    /// The facts of `address` from `read` (a store's header read), or from a read within ``lifetime``.
    func facts(of address: String, now: Date = Date(),
               read: () async throws -> (header: ContainerHeader, size: Int64)?) async throws -> HeaderFacts? {
        if let kept = entries.withLockedValue({ $0[address] }), kept.until > now { return kept.facts }
        readCount.withLockedValue { $0 += 1 }
        guard let found = try await read() else { return nil }
        let facts = HeaderFacts(found.header, size: found.size)
        entries.withLockedValue { entries in
            if entries.count >= Self.capacity { entries.removeAll(keepingCapacity: true) }
            entries[address] = (facts, now.addingTimeInterval(Self.lifetime))
        }
        return facts
    }

    /// How many chunks of blob `newer` blob `older` holds, from `compute` (which reads both
    /// headers whole) the first time it is asked.
    func sharing(of newer: String, with older: String,
                 compute: () async throws -> (shared: Int, total: Int)?) async throws -> (shared: Int, total: Int)? {
        let key = newer + "|" + older
        if let kept = sharings.withLockedValue({ $0[key] }) { return kept }
        guard let found = try await compute() else { return nil }
        sharings.withLockedValue { sharings in
            if sharings.count >= Self.capacity { sharings.removeAll(keepingCapacity: true) }
            sharings[key] = found
        }
        return found
    }
}

extension BlobStore {
    /// The ``HeaderFacts`` of a stored blob (nil when it is not stored), read at most once a
    /// ``HeaderFactsCache/lifetime``; throws ``ContainerError`` when it is not a valid container.
    func facts(of address: String) async throws -> HeaderFacts? {
        try await headerFacts.facts(of: address) { try await header(of: address) }
    }
}
