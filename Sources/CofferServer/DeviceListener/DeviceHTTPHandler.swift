import Fluent
import NIOCore
import NIOHTTP1
import Vapor

/// Answers one connection's requests on the device listener: the manifest route, from memory on
/// the event loop when the caches are fresh, else after a database check in a task. Errors are the
/// API's `{"error": CODE, "reason": TEXT}` bodies.
///
/// It writes whole responses as bytes (``ResponseBytes``): a fresh manifest is one write of
/// bytes made at signing. Pipelined requests are answered in order: while one waits for the
/// database, those behind it wait too (at most ``maximumWaiting``; more closes the connection).
/// Only HTTP/1.1 connections are kept alive; anything else is answered with `connection: close`.
final class DeviceHTTPHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = ByteBuffer

    /// The most pipelined requests kept while an earlier one waits for the database.
    static let maximumWaiting = 16

    private let endpoint: ManifestEndpoint
    private let database: any Database
    private let logger: Logger
    private var head: HTTPRequestHead?
    private var waiting = CircularBuffer<HTTPRequestHead>()
    /// A request is waiting for the database; the ones behind it are kept in `waiting`.
    private var busy = false
    /// The last response said `connection: close`: what follows is ignored.
    private var closing = false

    init(endpoint: ManifestEndpoint, database: any Database, logger: Logger) {
        self.endpoint = endpoint
        self.database = database
        self.logger = logger
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head): self.head = head
        case .body: break  // a GET has none; anything sent is ignored
        case .end:
            guard let head, !closing else { return }
            self.head = nil
            if !busy { return handle(head, context: context) }
            guard waiting.count < Self.maximumWaiting else {
                closing = true
                return context.close(promise: nil)
            }
            waiting.append(head)
        }
    }

    /// A request NIO could not parse: 400 and close, as NIO's own server pipeline does.
    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard error is HTTPParserError, !busy, !closing else { return context.close(promise: nil) }
        var headers = HTTPHeaders()
        headers.add(name: "content-length", value: "0")
        write(status: .badRequest, headers: headers, body: nil, keepAlive: false, context: context)
    }

    private func handle(_ head: HTTPRequestHead, context: ChannelHandlerContext) {
        let keepAlive = head.isKeepAlive && head.version == .http1_1
        let (path, query) = Self.split(head.uri)
        guard head.method == .GET, let identifier = Self.collection(in: path) else {
            // An answer to HEAD has no body (RFC 9110 §9.3.2): a body would be read as the next answer.
            return write(error: APIError.notFound("route"), keepAlive: keepAlive, withBody: head.method != .HEAD, context: context)
        }
        let request: ManifestEndpoint.Request
        do {
            request = try ManifestEndpoint.parse(headers: head.headers, query: query, identifier: identifier)
            if let answer = try endpoint.cachedAnswer(request) {
                return write(answer, request, keepAlive: keepAlive, context: context)
            }
        } catch {
            return write(error: error, keepAlive: keepAlive, context: context)
        }
        busy = true
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        let endpoint = self.endpoint, database = self.database
        let eventLoop = context.eventLoop
        Task {
            let result: Result<ManifestService.Answer, any Error>
            do { result = .success(try await endpoint.answer(request, on: database)) } catch { result = .failure(error) }
            eventLoop.execute {
                let (handler, context) = bound.value
                switch result {
                case .success(let answer): handler.write(answer, request, keepAlive: keepAlive, context: context)
                case .failure(let error): handler.write(error: error, keepAlive: keepAlive, context: context)
                }
                handler.busy = false
                handler.answerWaiting(context: context)
            }
        }
    }

    /// Answers the pipelined requests kept while the database was asked, in order, until one
    /// needs the database again.
    private func answerWaiting(context: ChannelHandlerContext) {
        while !busy, !closing, let next = waiting.popFirst() { handle(next, context: context) }
        if closing { waiting.removeAll() }
    }

    private func write(_ answer: ManifestService.Answer, _ request: ManifestEndpoint.Request, keepAlive: Bool, context: ChannelHandlerContext) {
        let notModified = endpoint.isNotModified(answer, request)
        if keepAlive {
            context.writeAndFlush(wrapOutboundOut(notModified ? answer.notModifiedResponse : answer.okResponse), promise: nil)
        } else {
            write(status: notModified ? .notModified : .ok, headers: notModified ? answer.notModifiedHeaders : answer.okHeaders,
                  body: notModified ? nil : answer.body, keepAlive: false, context: context)
        }
    }

    /// The API's error body, mapped as the Vapor side maps it (``APIErrorMiddleware``).
    private func write(error: any Error, keepAlive: Bool, withBody: Bool = true, context: ChannelHandlerContext) {
        let (status, errorBody, extra) = APIErrorMiddleware.describe(error, logger: logger)
        var headers = extra
        headers.contentType = .json
        let body = (try? JSONEncoder().encode(errorBody)) ?? Data()
        headers.replaceOrAdd(name: "content-length", value: String(body.count))
        write(status: status, headers: headers, body: withBody ? context.channel.allocator.buffer(bytes: body) : nil,
              keepAlive: keepAlive, context: context)
    }

    /// `headers` must carry Content-Length when there is a body (a 304 has neither).
    private func write(status: HTTPResponseStatus, headers: HTTPHeaders, body: ByteBuffer?, keepAlive: Bool, context: ChannelHandlerContext) {
        var headers = headers
        if !keepAlive {
            headers.replaceOrAdd(name: "connection", value: "close")
            closing = true
        }
        let bytes = ResponseBytes.encode(status: status, headers: headers, body: body, allocator: context.channel.allocator)
        let done = context.writeAndFlush(wrapOutboundOut(bytes))
        if !keepAlive { done.whenComplete { [channel = context.channel] _ in channel.close(promise: nil) } }
    }

    /// `/v1/device/collections/{id}/manifest` → `id` (percent-decoded), else nil.
    static func collection(in path: Substring) -> String? {
        let prefix = "/v1/device/collections/".utf8, suffix = "/manifest".utf8
        let bytes = path.utf8
        guard bytes.count > prefix.count + suffix.count, bytes.starts(with: prefix), bytes.suffix(suffix.count).elementsEqual(suffix) else { return nil }
        let identifier = bytes.dropFirst(prefix.count).dropLast(suffix.count)
        guard !identifier.contains(UInt8(ascii: "/")) else { return nil }
        return DeviceQuery.decode(identifier)
    }

    static func split(_ uri: String) -> (path: Substring, query: String?) {
        guard let mark = uri.utf8.firstIndex(of: UInt8(ascii: "?")) else { return (uri[...], nil) }
        return (uri[..<mark], String(uri[uri.utf8.index(after: mark)...]))
    }
}
