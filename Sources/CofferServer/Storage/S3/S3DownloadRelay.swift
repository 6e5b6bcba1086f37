import NIOCore
import Vapor

/// Passes a blob from the object store to a device on the device connection's event loop, with no
/// Swift task in between (``S3BlobStore/stream(_:range:status:metrics:holding:)``).
///
/// The store's answer arrives in the small reads of its connection; they are gathered into writes of
/// about ``S3BlobStore/coalesced`` bytes (fewer, larger writes are what keeps up with the store,
/// docs/BENCHMARKS.md). At most ``maximumInFlight`` bytes wait to go out to the device; beyond that the
/// store is not read until the device takes them, so memory per download stays a few MiB however slow
/// the device. It holds the download's ``StreamSlot`` until nothing of the download remains (see
/// ``finish(_:)``). Touched on the writer's event loop only.
final class S3DownloadRelay: @unchecked Sendable {
    /// Bytes written to the device and not yet taken by it, beyond which the store is not read.
    static let maximumInFlight = 2 * S3BlobStore.coalesced

    private let writer: any BodyStreamWriter
    private let metrics: ServerMetrics
    /// The download's place among ``StreamSlots``: held by the relay, not by the response, which
    /// Vapor may let go while the store's answer still arrives (the client gone), and given back by
    /// ``finish(_:)``.
    private let slot: StreamSlot
    private var pending = ByteBuffer()
    private var inFlight = 0
    /// The buffers being written, oldest first (writes complete in order).
    private var writing = CircularBuffer<ByteBuffer>()
    /// Buffers whose writes completed, kept for the next pieces: filling a new 1 MiB buffer for
    /// each write faulted in its pages every time (a tenth of the server's time in a profile).
    private var spare: [ByteBuffer] = []
    /// Why the device's side failed (it went away): the store's download stops at its next piece.
    private var failure: (any Error)?
    /// The newest piece's write: once it completes, every piece has been taken by the connection.
    private var lastWrite: EventLoopFuture<Void>?

    /// A relay to `writer` that holds `slot` until the download has ended (``finish(_:)``). One
    /// dropped without finishing leaves `slot` to go with its last reference (``StreamSlot``).
    init(writer: any BodyStreamWriter, metrics: ServerMetrics, holding slot: StreamSlot) {
        self.writer = writer
        self.metrics = metrics
        self.slot = slot
    }

    /// Takes one piece from the store; the future completes when the next may be read.
    func accept(_ piece: ByteBuffer) -> EventLoopFuture<Void> {
        if let failure { return writer.eventLoop.makeFailedFuture(failure) }
        var piece = piece
        if pending.readableBytes == 0, piece.readableBytes >= S3BlobStore.coalesced {
            pending = piece
        } else {
            if pending.capacity < S3BlobStore.coalesced { pending = spare.popLast() ?? ByteBuffer() }
            if pending.capacity < S3BlobStore.coalesced { pending.reserveCapacity(S3BlobStore.coalesced) }
            pending.writeBuffer(&piece)
        }
        guard pending.readableBytes >= S3BlobStore.coalesced else { return writer.eventLoop.makeSucceededVoidFuture() }
        let written = send(pending)
        pending = ByteBuffer()
        return inFlight > Self.maximumInFlight ? written : writer.eventLoop.makeSucceededVoidFuture()
    }

    /// Ends the device's answer: the rest and its end after a complete download, else an error, so
    /// the device sees a cut answer (shorter than its Content-Length) and resumes with Range; then
    /// gives back the download's ``StreamSlot``. Called once, when the store's answer has ended.
    ///
    /// The end is written, and the slot given back, once the connection has taken every piece
    /// (writes complete in order, so once the last one has): until then the pieces are this
    /// download's memory. Given back at once, a client that never reads would leave about
    /// ``maximumInFlight`` bytes queued on its connection with its slot free for another download.
    /// After a failed download too the slot waits for the last piece (the connection takes or drops
    /// it), and never goes earlier however the response fared: when the client had gone before the
    /// answer was written, Vapor let the response go before this download even asked the store.
    func finish(_ result: Result<Void, any Error>) {
        let writer = writer, slot = slot
        switch result {
        case .success:
            if pending.readableBytes > 0 { _ = send(pending) }
            pending = ByteBuffer()
            guard let lastWrite else {
                writer.write(.end, promise: nil)
                slot.release()
                return
            }
            lastWrite.whenComplete { written in
                switch written {
                case .success: writer.write(.end, promise: nil)
                case .failure(let error): writer.write(.error(error), promise: nil)
                }
                slot.release()
            }
        case .failure(let error):
            writer.write(.error(error), promise: nil)
            guard let lastWrite else {
                slot.release()
                return
            }
            lastWrite.whenComplete { _ in slot.release() }
        }
    }

    private func send(_ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        let count = buffer.readableBytes
        inFlight += count
        metrics.bytesServed(count)
        let promise = writer.eventLoop.makePromise(of: Void.self)
        writer.write(.buffer(buffer), promise: promise)
        writing.append(buffer)
        lastWrite = promise.futureResult
        promise.futureResult.whenComplete { result in
            self.inFlight -= count
            // The channel has let go of the bytes: the buffer is this relay's alone again, and
            // `clear()` keeps its memory.
            var done = self.writing.removeFirst()
            if case .failure(let error) = result, self.failure == nil { self.failure = error }
            guard done.capacity >= S3BlobStore.coalesced, self.spare.count < 2, self.failure == nil else { return }
            done.clear()
            self.spare.append(done)
        }
        return promise.futureResult
    }
}
