import AsyncHTTPClient
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1

/// Receives the bytes of ``S3Client/pipeObject(key:bytes:on:into:)`` on the event loop it was given,
/// in order. The next piece is read from the store only after the returned future completes; a failed
/// future stops the download.
public typealias S3ObjectSink = @Sendable (ByteBuffer) -> EventLoopFuture<Void>

extension S3Client {
    /// Reads the bytes `bytes` of `key` and hands them to `sink` on `eventLoop` as the store's
    /// connection delivers them, without a Swift task in between: for a server that passes an object on
    /// to its own client on that client's event loop. When `eventLoop` belongs to the HTTP client's
    /// group, the connection to the store is read on it too, so no byte changes threads.
    ///
    /// The answer is checked before a byte reaches `sink`: a 206 whose `Content-Range` is exactly
    /// `bytes`, or a 200 when `bytes` is the whole object; and it must hold exactly as many bytes as it
    /// announced. The head must arrive within ``requestTimeout``; the body is bounded by the HTTP
    /// client's read timeout.
    ///
    /// - Returns: a future on `eventLoop` that succeeds after `sink` accepted the last byte, or fails with
    ///   ``S3Error/unexpectedResponse(operation:status:code:)`` (404 `NoSuchKey` for a missing object),
    ///   ``S3Error/malformedResponse(operation:reason:)``, ``S3Error/interrupted(operation:reason:)``,
    ///   ``S3Error/unreachable(endpoint:reason:)``, or the error of `sink`'s future.
    public func pipeObject(key: String, bytes: Range<Int64>, on eventLoop: any EventLoop, into sink: @escaping S3ObjectSink) -> EventLoopFuture<Void> {
        let request: HTTPClient.Request
        do {
            var call = Call(operation: "GetObject", method: .GET, encodedPath: try location.encodedPath(forKey: key), key: key)
            call.headers.append(("range", try S3ByteRange.bytes(bytes).headerValue()))
            let (url, headers) = signed(call)
            request = try HTTPClient.Request(url: url, method: .GET, headers: headers)
        } catch {
            return eventLoop.makeFailedFuture(error is S3Error ? error : networkFailure(error))
        }
        let sameGroup = httpClient.eventLoopGroup.makeIterator().contains { $0 === eventLoop }
        let pipe = ObjectPipe(bytes: bytes, sink: sink, sinkLoop: sameGroup ? nil : eventLoop, location: location)
        let task = httpClient.execute(request: request, delegate: pipe, eventLoop: sameGroup ? .delegateAndChannel(on: eventLoop) : .indifferent)
        let deadline = task.eventLoop.scheduleTask(in: requestTimeout) {
            if !pipe.headArrived { task.fail(reason: HTTPClientError.deadlineExceeded) }
        }
        let location = location
        return task.futureResult
            .flatMapErrorThrowing { error in
                if let failure = error as? PipeSinkFailure { throw failure.underlying }
                if error is S3Error { throw error }
                if pipe.headArrived {
                    throw S3Error.interrupted(operation: "GetObject", reason: S3Client.reason(error))
                }
                throw S3Error.unreachable(endpoint: location.endpoint, reason: S3Client.reason(error))
            }
            .always { _ in deadline.cancel() }
            .hop(to: eventLoop)
    }
}

/// A sink's own error, kept apart from the store's while it travels through AsyncHTTPClient.
struct PipeSinkFailure: Error {
    let underlying: any Error
}

/// The delegate of ``S3Client/pipeObject(key:bytes:on:into:)``: checks the answer's head, counts its
/// bytes and passes them on. Its state is touched on the task's event loop only, except
/// ``headArrived``.
final class ObjectPipe: HTTPClientResponseDelegate, @unchecked Sendable {
    typealias Response = Void

    private let bytes: Range<Int64>
    private let sink: S3ObjectSink
    /// The sink's event loop when the task runs on another one.
    private let sinkLoop: (any EventLoop)?
    private let location: S3Location
    private let head = NIOLockedValueBox(false)
    /// Bytes of the body still due; nil until a successful head arrived.
    private var remaining: Int64?
    /// The status of an answer that is not the object, and the start of its body (its S3 error code).
    private var refusal: (status: Int, body: ByteBuffer)?

    init(bytes: Range<Int64>, sink: @escaping S3ObjectSink, sinkLoop: (any EventLoop)?, location: S3Location) {
        self.bytes = bytes
        self.sink = sink
        self.sinkLoop = sinkLoop
        self.location = location
    }

    /// Whether the answer's head arrived (the request deadline no longer applies).
    var headArrived: Bool { head.withLockedValue { $0 } }

    func didReceiveHead(task: HTTPClient.Task<Void>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
        self.head.withLockedValue { $0 = true }
        let status = Int(head.status.code)
        guard status == 200 || status == 206 else {
            refusal = (status, ByteBuffer())
            return task.eventLoop.makeSucceededVoidFuture()
        }
        let lengths = head.headers["content-length"]
        guard lengths.count == 1, let length = DecimalText.int64(lengths[0]), length == Int64(bytes.count) else {
            return task.eventLoop.makeFailedFuture(malformed("a Content-Length other than the \(bytes.count) bytes asked for"))
        }
        if status == 206 {
            let ranges = head.headers["content-range"]
            guard ranges.count == 1, S3ContentRange(header: ranges[0])?.range == bytes else {
                return task.eventLoop.makeFailedFuture(malformed("a 206 without the Content-Range asked for"))
            }
        } else if bytes.lowerBound != 0 {
            // A 200 is the whole object: only right when the range asked for starts at 0 and, as the
            // length shows, ends at the object's end.
            return task.eventLoop.makeFailedFuture(malformed("the whole object instead of the range asked for"))
        }
        remaining = length
        return task.eventLoop.makeSucceededVoidFuture()
    }

    func didReceiveBodyPart(task: HTTPClient.Task<Void>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        if refusal != nil {
            var buffer = buffer
            if refusal!.body.readableBytes < 64 * 1024 { refusal!.body.writeBuffer(&buffer) }
            return task.eventLoop.makeSucceededVoidFuture()
        }
        guard let due = remaining, Int64(buffer.readableBytes) <= due else {
            return task.eventLoop.makeFailedFuture(malformed("the body is longer than its Content-Length"))
        }
        remaining = due - Int64(buffer.readableBytes)
        let accepted = sinkLoop.map { loop in loop.flatSubmit { self.sink(buffer) } } ?? sink(buffer)
        return accepted.flatMapErrorThrowing { throw PipeSinkFailure(underlying: $0) }
    }

    func didFinishRequest(task: HTTPClient.Task<Void>) throws {
        if let refusal {
            let code = S3ErrorBody(Array(refusal.body.readableBytesView))?.code
            throw S3Client.failure(status: refusal.status, code: code, operation: "GetObject", location: location)
        }
        guard remaining == 0 else { throw malformed("the body is shorter than its Content-Length") }
    }

    private func malformed(_ reason: String) -> S3Error {
        .malformedResponse(operation: "GetObject", reason: reason)
    }
}
