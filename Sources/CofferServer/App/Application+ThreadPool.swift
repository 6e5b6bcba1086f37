import NIOPosix
import Vapor

extension Application {
    /// Gives the application a blocking-work thread pool of its own, with more threads than the
    /// database has SQLite connections.
    ///
    /// SQLite runs every statement on this pool, and a connection that meets another's write lock
    /// waits on its thread (SQLiteNIO's busy handler retries without end). Vapor's default is the
    /// process-wide pool, one thread per core: on a 2-core machine two waiters occupy every
    /// thread, the connection holding the lock never gets one to commit, and every database of
    /// the process stops (seen in CI as every request timing out at once, "Connection request
    /// timed out"). With one connection per event loop and two threads more than that, the
    /// holder always finds a thread, and file reads of blobs (also on this pool) are never
    /// queued behind waiters of another server in the same process.
    ///
    /// Must run before anything touches `databases` (Fluent captures the pool when first used).
    func useOwnThreadPool() {
        let connections = Array(eventLoopGroup.makeIterator()).count  // Fluent's SQLite: one per event loop
        threadPool = NIOThreadPool(numberOfThreads: connections + 2)
    }
}
