import Foundation

/// Runs per-chunk work on several threads: chunks are independent, so both cores of a small
/// machine seal or open at once.
///
/// Each worker gets a reusable buffer, so a whole run allocates a bounded amount of memory
/// whatever the input size.
enum ChunkWorkers {
    /// Calls `body(buffer, index)` for every chunk index on `workers` threads, with a buffer of
    /// `bufferSize` bytes private to the calling worker. Stops at the first error and rethrows it.
    static func forEach(
        chunkCount: UInt64,
        workers: Int = SealedModel.defaultWorkerCount,
        bufferSize: Int,
        _ body: @Sendable (UnsafeMutableRawBufferPointer, UInt64) throws -> Void
    ) throws {
        let buffers = WorkerBuffers(count: Int(min(UInt64(max(1, workers)), max(chunkCount, 1))), size: bufferSize)
        try forEach(chunkCount: chunkCount, buffers: buffers, body)
    }

    /// The same with buffers the caller keeps across calls (no allocation per batch, so repeated
    /// batches do not fragment the heap).
    static func forEach(
        chunkCount: UInt64,
        buffers: WorkerBuffers,
        _ body: @Sendable (UnsafeMutableRawBufferPointer, UInt64) throws -> Void
    ) throws {
        let threads = Int(min(UInt64(buffers.count), chunkCount))
        guard threads > 0 else { return }
        if threads == 1 {
            // On the caller's thread, in order: a caller that waits for its chunks to arrive (a
            // download followed as it comes) must not hold a thread of Dispatch's pool.
            for index in 0..<chunkCount {
                try Cancellation.check()
                try body(buffers[0], index)
            }
            return
        }
        let failure = FirstFailure()
        DispatchQueue.concurrentPerform(iterations: threads) { worker in
            let buffer = buffers[worker]
            var index = UInt64(worker)
            while index < chunkCount, !failure.isSet {
                do {
                    try Cancellation.check()
                    try body(buffer, index)
                } catch {
                    failure.record(error)
                }
                index += UInt64(threads)
            }
        }
        if let error = failure.error { throw error }
    }

    /// Produces every chunk's output in parallel, a batch at a time, and hands them to `consume`
    /// in index order on the calling thread (for outputs that must be written in sequence).
    static func inOrder(
        chunkCount: UInt64,
        workers: Int = SealedModel.defaultWorkerCount,
        bufferSize: Int,
        produce: @Sendable (UnsafeMutableRawBufferPointer, UInt64) throws -> Data,
        consume: (Data) throws -> Void
    ) throws {
        let batch = UInt64(max(1, workers) * 2)
        let buffers = WorkerBuffers(count: max(1, workers), size: bufferSize)
        var start: UInt64 = 0
        while start < chunkCount {
            let count = min(batch, chunkCount - start)
            let results = Slots(count: Int(count), initial: Data())
            let first = start
            try forEach(chunkCount: count, buffers: buffers) { buffer, offset in
                results.store(try produce(buffer, first + offset), at: Int(offset))
            }
            for output in results.take() { try consume(output) }
            start += count
        }
    }
}

/// The first error any worker met; later ones are dropped.
final class FirstFailure: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Error?
    var isSet: Bool { lock.withLock { stored != nil } }
    var error: Error? { lock.withLock { stored } }
    func record(_ error: Error) { lock.withLock { if stored == nil { stored = error } } }
}

/// One slot per chunk (of a batch, or of a container), filled by workers.
final class Slots<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var slots: [Value]
    init(count: Int, initial: Value) { slots = Array(repeating: initial, count: count) }
    func store(_ value: Value, at index: Int) { lock.withLock { slots[index] = value } }
    func take() -> [Value] { lock.withLock { slots } }
}

/// One reusable buffer per worker, freed when the last user lets go.
final class WorkerBuffers: @unchecked Sendable {
    private let storage: [UnsafeMutableRawBufferPointer]

    init(count: Int, size: Int) {
        storage = (0..<max(1, count)).map { _ in .allocate(byteCount: size, alignment: 64) }
    }

    deinit { storage.forEach { $0.deallocate() } }

    var count: Int { storage.count }
    subscript(index: Int) -> UnsafeMutableRawBufferPointer { storage[index] }
}
