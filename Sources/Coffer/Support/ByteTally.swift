import Foundation

/// A count of bytes that any thread may add to (what a delta update's downloads brought, which
/// travels again if the update falls back to the whole download).
final class ByteTally: @unchecked Sendable {
    private let lock = NSLock()
    private var count: UInt64 = 0

    /// Adds `bytes`.
    func add(_ bytes: UInt64) { lock.withLock { count = count.addingSaturated(bytes) } }

    /// The bytes added so far.
    var total: UInt64 { lock.withLock { count } }
}
