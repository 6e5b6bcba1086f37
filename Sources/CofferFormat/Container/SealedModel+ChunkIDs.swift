#if canImport(CryptoKit)
@preconcurrency import Crypto // CryptoKit's key types are Sendable only in Xcode 26's SDKs
#else
import Crypto
#endif
import Foundation

extension SealedModel {
    /// Cuts `source` into content-defined chunks and computes each chunk's ID, in one pass: the
    /// cut runs on the calling thread while up to `workers` other threads hash the chunks found so
    /// far (version 2 sealing then only encrypts). Returns the finished chunk table.
    static func identifyChunks(of source: some PlaintextSource, keys: FileKeys, workers: Int) throws -> ChunkTable {
        let found = FoundChunks()
        let failure = FirstFailure()
        let pool = BufferPool(count: max(1, workers), size: Int(ChunkTable.maximumChunkLength))
        let group = DispatchGroup()
        let queue = DispatchQueue(label: "coffer.chunk-ids", attributes: .concurrent)
        let lengths = try ContentChunker.lengths(of: source, segmentStarts: source.segmentStarts, gear: keys.chunkGear) { index, offset, length in
            if failure.isSet { return }
            let buffer = pool.take()
            group.enter()
            queue.async {
                defer { pool.give(buffer); group.leave() }
                let plaintext = UnsafeMutableRawBufferPointer(rebasing: buffer.pointer[..<Int(length)])
                do {
                    try Cancellation.check()
                    try source.read(into: plaintext, at: offset)
                    found.store(keys.chunkID(of: UnsafeRawBufferPointer(plaintext)), at: index)
                } catch {
                    failure.record(error)
                }
            }
        }
        group.wait()
        if let error = failure.error { throw error }
        let ids = found.ids(count: lengths.count)
        return ChunkTable(entries: zip(ids, lengths).map { ChunkTable.Entry(id: $0, length: $1) })
    }
}

/// Chunk IDs as workers find them, by chunk index.
private final class FoundChunks: @unchecked Sendable {
    private let lock = NSLock()
    private var ids: [Int: ChunkID] = [:]
    func store(_ id: ChunkID, at index: Int) { lock.withLock { ids[index] = id } }
    /// All `count` IDs in order (every index was stored once the workers finished).
    func ids(count: Int) -> [ChunkID] { lock.withLock { (0..<count).map { ids[$0]! } } }
}

/// A buffer that one worker at a time owns (the pool hands it out and takes it back).
private struct OwnedBuffer: @unchecked Sendable {
    let pointer: UnsafeMutableRawBufferPointer
}

/// A fixed set of buffers handed out one at a time; `take` waits while all are out, which also
/// bounds how far the cut runs ahead of the hashing.
private final class BufferPool: @unchecked Sendable {
    private let condition = NSCondition()
    private var free: [OwnedBuffer]
    private let all: [OwnedBuffer]

    init(count: Int, size: Int) {
        all = (0..<count).map { _ in OwnedBuffer(pointer: .allocate(byteCount: size, alignment: 64)) }
        free = all
    }

    deinit { all.forEach { $0.pointer.deallocate() } }

    func take() -> OwnedBuffer {
        condition.lock()
        defer { condition.unlock() }
        while free.isEmpty { condition.wait() }
        return free.removeLast()
    }

    func give(_ buffer: OwnedBuffer) {
        condition.lock()
        free.append(buffer)
        condition.signal()
        condition.unlock()
    }
}
