import Fluent
import NIOCore
import NIOHTTP1
import Vapor

/// Answers one connection's requests on the device listener: the manifest route
/// (``ManifestEndpoint``) and the report route (``ReportEndpoint``), from memory on the event loop
/// when the caches are fresh, else after a database check in a task. Errors are the API's
/// `{"error": CODE, "reason": TEXT}` bodies.
///
/// It writes whole responses as bytes (``ResponseBytes``): a fresh manifest is one write of
/// bytes made at signing, a report batch's answer one of bytes made at start (``ReportAnswer``).
/// On a kept-alive connection those answers are flushed once the event loop has handled the I/O
/// of every connection that was ready (``flushSoon(context:)``), not one at a time in between:
/// each flush wakes a client, which then took the core from the loop in mid-round. Every close
/// flushes first (closing fails what is not flushed), and answers that alone reach the high-water
/// mark are flushed at once. A client that closes its side after its requests (a half-close) gets
/// them answered, then the connection closes.
/// A report's body is kept up to ``ReportEndpoint/maximumBody`` bytes: a larger Content-Length is
/// refused before any byte of the body is kept, a body without one when it grows past the limit
/// (413, and the connection closes); room for a body grows as its bytes arrive. Other requests'
/// bodies are dropped as they arrive. While a client does not read its answers (past SwiftNIO's
/// high-water mark of unsent bytes), requests already read wait unanswered, at most
/// ``maximumWaiting`` of them (more closes the connection), and nothing more is read
/// (``ReadWhenWritable``, before this handler).
/// Pipelined requests are answered in order: while one waits for the database, those behind it
/// wait too (at most ``maximumWaiting``; more closes the connection). Only HTTP/1.1 connections
/// are kept alive; anything else is answered with `connection: close`.
///
/// When the listener stops (``DeviceListener/drain(timeout:)``, a `ChannelShouldQuiesceEvent`), an
/// idle connection closes at once and a busy one after its answer, which says `connection: close`.
/// Every answer is timed from the moment its request is taken up (read whole, or when the
/// pipelined requests before it are answered)
/// (``ServerMetrics/deviceRequest(_:status:since:)``).
final class DeviceHTTPHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = ByteBuffer

    /// The most pipelined requests kept while an earlier one waits for the database, or while the
    /// client does not read its answers.
    static let maximumWaiting = 16

    /// A request read whole: its head and, for a report, its body.
    private struct Received {
        let head: HTTPRequestHead
        var body: ByteBuffer?
        /// The body is over ``ReportEndpoint/maximumBody``: the answer is 413.
        var tooLarge = false
        /// The request asks to switch protocols: the answer is 400 `protocol_switch_refused`.
        var switchesProtocol = false
    }

    private let endpoint: ManifestEndpoint
    private let reports: ReportEndpoint
    private let metrics: ServerMetrics
    private let trustedProxies: TrustedProxies
    private let database: any Database
    private let logger: Logger
    /// The request being read.
    private var current: Received?
    private var waiting = CircularBuffer<Received>()
    /// A request is waiting for the database; the ones behind it are kept in `waiting`.
    private var busy = false
    /// The last response said `connection: close`: what follows is ignored.
    private var closing = false
    /// A refused body waits to be answered behind another request: nothing more is read.
    private var stopReading = false
    /// The listener is stopping: the next answer says `connection: close`, and the connection closes.
    private var quiescing = false
    /// The client closed its side of the connection: it closes once the requests read are answered.
    private var inputClosed = false
    /// The request being answered: its route for metrics and when it was taken up.
    private var answering: (route: ServerMetrics.DeviceRoute, since: NIODeadline)?

    init(endpoint: ManifestEndpoint, reports: ReportEndpoint, metrics: ServerMetrics, trustedProxies: TrustedProxies,
         database: any Database, logger: Logger) {
        self.endpoint = endpoint
        self.reports = reports
        self.metrics = metrics
        self.trustedProxies = trustedProxies
        self.database = database
        self.logger = logger
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !closing, !stopReading else { return }
        switch unwrapInboundIn(data) {
        case .head(let head):
            var received = Received(head: head)
            // The parser reads nothing after a request to switch protocols: it is answered, then closed.
            if ProtocolSwitch.isAsked(method: head.method, headers: head.headers) {
                received.switchesProtocol = true
                finish(received, context: context)
                stopReading = true
                return
            }
            if Self.isReport(head) {
                // Refused from its Content-Length before a byte of the body is kept.
                let length = head.headers.first(name: "content-length").flatMap { Int($0) }
                if let length, length > ReportEndpoint.maximumBody {
                    received.tooLarge = true
                    return finish(received, context: context)
                }
                // Room for a usual batch, grown as bytes arrive: a Content-Length alone (a header
                // of 60 bytes, the body never sent) does not hold the limit's 64 KiB.
                received.body = context.channel.allocator.buffer(capacity: min(length ?? 4096, 8192))
            }
            current = received
        case .body(var part):
            // A GET's body, if any is sent, is dropped.
            guard current?.body != nil else { return }
            guard current!.body!.readableBytes + part.readableBytes <= ReportEndpoint.maximumBody else {
                current!.body = nil
                current!.tooLarge = true
                return finish(current.take()!, context: context)
            }
            current!.body!.writeBuffer(&part)
        case .end:
            guard let received = current.take() else { return }
            finish(received, context: context)
        }
    }

    /// Answers a request read whole (or refused as too large), or keeps it behind the one waiting
    /// for the database.
    private func finish(_ received: Received, context: ChannelHandlerContext) {
        // Answered now only when nothing is ahead of it and its answer can be written: a client
        // that does not read its answers gets at most `maximumWaiting` requests kept, then closed.
        if !busy, waiting.isEmpty, canWrite(context) { return handle(received, context: context) }
        guard waiting.count < Self.maximumWaiting else { return flushAndClose(context: context) }
        waiting.append(received)
        // A refused body is not read on: the connection closes once the 413 is written.
        if received.tooLarge { stopReading = true }
    }

    /// The listener stops: an idle connection closes now (after the answers written to it), a
    /// busy one once its answer is written. The client closed its side (a half-close: it sends
    /// nothing more): the requests read are answered, then the connection closes.
    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case ChannelEvent.inputClosed = event {
            inputClosed = true
            current = nil
            return closeIfAnswered(context: context)
        }
        guard event is ChannelShouldQuiesceEvent else { return context.fireUserInboundEventTriggered(event) }
        quiescing = true
        if !busy, waiting.isEmpty, current == nil, !closing { flushAndClose(context: context) }
    }

    /// A request NIO could not parse: 400 and close, as NIO's own server pipeline does.
    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard error is HTTPParserError, !busy, waiting.isEmpty, !closing else { return flushAndClose(context: context) }
        var headers = HTTPHeaders()
        headers.add(name: "content-length", value: "0")
        answering = (.unknown, .now())
        timed(.badRequest)
        write(status: .badRequest, headers: headers, body: nil, keepAlive: false, context: context)
    }

    private func handle(_ received: Received, context: ChannelHandlerContext) {
        let head = received.head
        let keepAlive = head.isKeepAlive && head.version == .http1_1
        if received.switchesProtocol {
            answering = (.unknown, .now())
            return write(error: ProtocolSwitch.refusal, keepAlive: false, context: context)
        }
        if Self.isReport(head) {
            answering = (.reports, .now())
            return handleReport(received, keepAlive: keepAlive, context: context)
        }
        let (path, query) = Self.split(head.uri)
        let identifier = head.method == .GET ? Self.collection(in: path) : nil
        answering = (identifier == nil ? .unknown : .manifest, .now())
        guard let identifier else {
            // An answer to HEAD has no body (RFC 9110 §9.3.2): a body would be read as the next answer.
            return write(error: APIError.notFound("route"), keepAlive: keepAlive, withBody: head.method != .HEAD, context: context)
        }
        let request: ManifestEndpoint.Request
        do {
            request = try ManifestEndpoint.parse(headers: head.headers, query: query, identifier: identifier,
                                                 address: clientAddress(of: head, context: context))
            if let answer = try endpoint.cachedAnswer(request) {
                return write(answer, request, keepAlive: keepAlive, context: context)
            }
        } catch {
            return write(error: error, keepAlive: keepAlive, context: context)
        }
        let endpoint = self.endpoint, database = self.database
        askDatabase(context: context, { try await endpoint.answer(request, on: database) }) { handler, result, context in
            switch result {
            case .success(let answer): handler.write(answer, request, keepAlive: keepAlive, context: context)
            case .failure(let error): handler.write(error: error, keepAlive: keepAlive, context: context)
            }
        }
    }

    /// `POST /v1/device/reports` through ``ReportEndpoint``, as ``ReportController`` does.
    private func handleReport(_ received: Received, keepAlive: Bool, context: ChannelHandlerContext) {
        // The rest of a refused body is not read: the answer says close, and the server stops
        // writing; what the client still sends is dropped until it closes (or ``lingerLimit``
        // passes), so that closing does not reset the connection before the client has read the 413.
        guard !received.tooLarge else {
            return write(error: ReportEndpoint.tooLarge, keepAlive: false, lingering: true, context: context)
        }
        // As the main port's NonJSONBodies: a form or plain-text body is not read as a batch.
        if let refusal = NonJSONBodies.refusal(received.head.headers) {
            return write(error: refusal, keepAlive: keepAlive, context: context)
        }
        let request: ReportEndpoint.Request
        do {
            let address = clientAddress(of: received.head, context: context)
            let body = received.body.map { Array($0.readableBytesView) } ?? []
            request = try reports.parse(address: address, authorization: received.head.headers.first(name: "authorization"), body: body)
            if let answer = try reports.cachedAnswer(request) { return write(answer, keepAlive: keepAlive, context: context) }
        } catch {
            return write(error: error, keepAlive: keepAlive, context: context)
        }
        let reports = self.reports, database = self.database
        askDatabase(context: context, { try await reports.answer(request, on: database) }) { handler, result, context in
            switch result {
            case .success(let answer): handler.write(answer, keepAlive: keepAlive, context: context)
            case .failure(let error): handler.write(error: error, keepAlive: keepAlive, context: context)
            }
        }
    }

    /// The client's address: the peer, or what a trusted proxy says it forwarded for.
    private func clientAddress(of head: HTTPRequestHead, context: ChannelHandlerContext) -> String {
        if peer == nil { peer = .some(context.channel.remoteAddress?.ipAddress) }
        return trustedProxies.client(peer: peer!, forwardedFor: head.headers["x-forwarded-for"]) ?? "unknown"
    }

    /// The connection's peer address as text, made at its first request (a connection's peer does
    /// not change; formatting it was a call into the C library per request).
    private var peer: String??

    /// Runs `work` in a task while the requests behind this one wait, then `then` on the event
    /// loop, then answers the waiting ones.
    private func askDatabase<Answer: Sendable>(
        context: ChannelHandlerContext, _ work: @escaping @Sendable () async throws -> Answer,
        then: @escaping (DeviceHTTPHandler, Result<Answer, any Error>, ChannelHandlerContext) -> Void
    ) {
        busy = true
        let bound = NIOLoopBound((self, context, then), eventLoop: context.eventLoop)
        let eventLoop = context.eventLoop
        Task {
            let result: Result<Answer, any Error>
            do { result = .success(try await work()) } catch { result = .failure(error) }
            eventLoop.execute {
                let (handler, context, then) = bound.value
                then(handler, result, context)
                handler.busy = false
                handler.answerWaiting(context: context)
            }
        }
    }

    /// The client read enough of its answers: those kept meanwhile are answered.
    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable { answerWaiting(context: context) }
        context.fireChannelWritabilityChanged()
    }

    /// Answers the pipelined requests kept while the database was asked (or while the client did
    /// not read its answers), in order, until one needs the database again.
    private func answerWaiting(context: ChannelHandlerContext) {
        while !busy, !closing, canWrite(context), let next = waiting.popFirst() { handle(next, context: context) }
        if closing { waiting.removeAll() }
        closeIfAnswered(context: context)
    }

    /// The client closed its side and every request it sent is answered: the connection closes.
    private func closeIfAnswered(context: ChannelHandlerContext) {
        if inputClosed, !busy, waiting.isEmpty, !closing { flushAndClose(context: context) }
    }

    /// Whether an answer can be written now. Answers written and not yet flushed count against
    /// the channel's high-water mark: when they are what holds it back, they are flushed first
    /// (a client pipelining many requests, reading as it goes, is not taken for one that does not read).
    private func canWrite(_ context: ChannelHandlerContext) -> Bool {
        if !context.channel.isWritable, flushDue { context.flush() }
        return context.channel.isWritable
    }

    /// Closes the connection after flushing what was written to it: closing fails every write
    /// not yet flushed, and answers wait for ``flushSoon(context:)``.
    private func flushAndClose(context: ChannelHandlerContext) {
        closing = true
        context.flush()
        context.close(promise: nil)
    }

    /// A flush of this connection is due once the event loop has handled the I/O it is handling.
    private var flushDue = false

    /// Flushes what was written after the event loop has read and answered every connection that
    /// was ready, instead of one write at a time in between: each write wakes the client.
    private func flushSoon(context: ChannelHandlerContext) {
        guard !flushDue else { return }
        flushDue = true
        context.eventLoop.assumeIsolated().execute {
            self.flushDue = false
            context.flush()
        }
    }

    /// Records the duration of the answer being written, once.
    private func timed(_ status: HTTPResponseStatus) {
        guard let answer = answering.take() else { return }
        metrics.deviceRequest(answer.route, status: status.code, since: answer.since)
    }

    private func write(_ answer: ReportAnswer, keepAlive: Bool, context: ChannelHandlerContext) {
        timed(.ok)
        let keepAlive = keepAlive && !quiescing
        if keepAlive {
            context.write(wrapOutboundOut(answer.response), promise: nil)
            return flushSoon(context: context)
        }
        var headers = ReportAnswer.headers
        let body = answer.body
        headers.add(name: "Content-Length", value: String(body.readableBytes))
        write(status: .ok, headers: headers, body: body, keepAlive: false, context: context)
    }

    private func write(_ answer: ManifestService.Answer, _ request: ManifestEndpoint.Request, keepAlive: Bool, context: ChannelHandlerContext) {
        let notModified = endpoint.isNotModified(answer, request)
        timed(notModified ? .notModified : .ok)
        let keepAlive = keepAlive && !quiescing
        if keepAlive {
            context.write(wrapOutboundOut(notModified ? answer.notModifiedResponse : answer.okResponse), promise: nil)
            flushSoon(context: context)
        } else {
            write(status: notModified ? .notModified : .ok, headers: notModified ? answer.notModifiedHeaders : answer.okHeaders,
                  body: notModified ? nil : answer.body, keepAlive: false, context: context)
        }
    }

    /// The API's error body, mapped as the Vapor side maps it (``APIErrorMiddleware``).
    private func write(error: any Error, keepAlive: Bool, withBody: Bool = true, lingering: Bool = false, context: ChannelHandlerContext) {
        let (status, errorBody, extra) = APIErrorMiddleware.describe(error, logger: logger)
        timed(status)
        var headers = extra
        headers.contentType = .json
        let body = (try? JSONEncoder().encode(errorBody)) ?? Data()
        headers.replaceOrAdd(name: "content-length", value: String(body.count))
        write(status: status, headers: headers, body: withBody ? context.channel.allocator.buffer(bytes: body) : nil,
              keepAlive: keepAlive, lingering: lingering, context: context)
    }

    /// `headers` must carry Content-Length when there is a body (a 304 has neither). Without
    /// keep-alive the connection closes after the write (`lingering`: only its output).
    private func write(status: HTTPResponseStatus, headers: HTTPHeaders, body: ByteBuffer?, keepAlive: Bool, lingering: Bool = false,
                       context: ChannelHandlerContext) {
        var headers = headers
        let keepAlive = keepAlive && !quiescing
        if !keepAlive {
            headers.replaceOrAdd(name: "connection", value: "close")
            closing = true
        }
        let bytes = ResponseBytes.encode(status: status, headers: headers, body: body, allocator: context.channel.allocator)
        let done = context.writeAndFlush(wrapOutboundOut(bytes))
        guard !keepAlive else { return }
        done.whenComplete { [channel = context.channel] _ in
            channel.close(mode: lingering ? .output : .all, promise: nil)
            // A client that keeps sending (each read holds the idle timeout off) is let go soon after.
            if lingering { channel.eventLoop.scheduleTask(in: Self.lingerLimit) { channel.close(promise: nil) } }
        }
    }

    /// How long a connection whose answer said close may keep sending before it is closed.
    static let lingerLimit: TimeAmount = .seconds(5)

    /// `/v1/device/collections/{id}/manifest` → `id` (percent-decoded), else nil.
    static func collection(in path: Substring) -> String? {
        let prefix = "/v1/device/collections/".utf8, suffix = "/manifest".utf8
        let bytes = path.utf8
        guard bytes.count > prefix.count + suffix.count, bytes.starts(with: prefix), bytes.suffix(suffix.count).elementsEqual(suffix) else { return nil }
        let identifier = bytes.dropFirst(prefix.count).dropLast(suffix.count)
        guard !identifier.contains(UInt8(ascii: "/")) else { return nil }
        return DeviceQuery.decode(identifier)
    }

    /// `POST /v1/device/reports` (any query is ignored, as Vapor's router does).
    static func isReport(_ head: HTTPRequestHead) -> Bool {
        head.method == .POST && split(head.uri).path == "/v1/device/reports"
    }

    static func split(_ uri: String) -> (path: Substring, query: String?) {
        guard let mark = uri.utf8.firstIndex(of: UInt8(ascii: "?")) else { return (uri[...], nil) }
        return (uri[..<mark], String(uri[uri.utf8.index(after: mark)...]))
    }
}
