import Vapor

extension Response {
    private struct StreamSlotKey: StorageKey { typealias Value = StreamSlot }

    /// Keeps `slot` for as long as Vapor keeps this response, which is as long as its body streams.
    ///
    /// Vapor's HTTP/1 handler holds a response until the write of the whole of it has completed:
    /// that is when its body stream wrote its end (after its last piece was taken by the
    /// connection, see ``S3DownloadRelay/finish(_:)``) or its error (a failed read, or a write
    /// that failed because the client went away or the idle timeout closed the connection). The
    /// slot goes with the response then; a response never written (its request gone) gives it
    /// back when it is dropped. The server speaks HTTP/1 only (no TLS, no HTTP/2, whose handler
    /// would let the response go while its body still streams).
    func keep(_ slot: StreamSlot) {
        storage[StreamSlotKey.self] = slot
    }
}
