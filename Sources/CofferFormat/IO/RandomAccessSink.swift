/// A destination written by offset from several threads at once (each thread its own range).
public protocol RandomAccessSink: Sendable {
    /// Writes all of `bytes` at `offset`.
    func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws
}

extension PositionalFile: RandomAccessSink {}

/// A fixed-size buffer in memory that workers fill by offset.
final class MemorySink: RandomAccessSink, @unchecked Sendable {
    private let storage: UnsafeMutableRawBufferPointer

    init(length: Int) {
        storage = .allocate(byteCount: length, alignment: 16)
        storage.initializeMemory(as: UInt8.self, repeating: 0)
    }

    deinit { storage.deallocate() }

    func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws {
        // Callers write only inside the length they asked for; workers never overlap.
        precondition(Int(offset) + bytes.count <= storage.count)
        UnsafeMutableRawBufferPointer(rebasing: storage[Int(offset)...]).copyMemory(from: bytes)
    }

    var bytes: [UInt8] { Array(storage) }
}
