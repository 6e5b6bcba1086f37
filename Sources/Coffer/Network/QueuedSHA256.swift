#if canImport(CryptoKit)
@preconcurrency import Crypto // CryptoKit's key types are Sendable only in Xcode 26's SDKs
#else
import Crypto
#endif
import Foundation

/// A SHA-256 fed on a serial queue of its own, in the order its pieces are given: the thread
/// that receives a download hands each gathered MiB over and goes on receiving while it is hashed
/// (on two cores, hashing on the receiving thread made it the slowest stage of a download).
///
/// The caller owns the bytes it hands over with ``update(later:)`` and must not change or free
/// them before the returned work finished (`wait()`); every other call waits for the pieces
/// given before it, so the state it sees or sets follows them.
final class QueuedSHA256: @unchecked Sendable {
    private let queue = DispatchQueue(label: "coffer.part-hash")
    /// Touched only on `queue`.
    private var hasher = SHA256()

    /// Hashes `bytes` on the queue after everything given before; returns that work.
    func update(later bytes: UnsafeRawBufferPointer) -> DispatchWorkItem {
        let lent = Lent(bytes: bytes)
        let work = DispatchWorkItem { self.hasher.update(bufferPointer: lent.bytes) }
        queue.async(execute: work)
        return work
    }

    /// Hashes `bytes` after everything given before, and returns once they are hashed.
    func update(_ bytes: UnsafeRawBufferPointer) {
        queue.sync { hasher.update(bufferPointer: bytes) }
    }

    /// The state after every piece given so far (waits for them); setting it drops whatever was
    /// hashed before.
    var state: SHA256 {
        get { queue.sync { hasher } }
        set { queue.sync { hasher = newValue } }
    }
}

/// Bytes lent to the queue; their owner keeps them unchanged until the work that hashes them finished.
private struct Lent: @unchecked Sendable {
    let bytes: UnsafeRawBufferPointer
}
