import Fluent
import NIOCore
import NIOHTTP1
import Vapor

/// Answers one connection's requests on the device listener: the manifest route, from memory on
/// the event loop when the caches are fresh, else after a database check in a task. Errors are the
/// API's `{"error": CODE, "reason": TEXT}` bodies.
final class DeviceHTTPHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let endpoint: ManifestEndpoint
    private let database: any Database
    private let logger: Logger
    private var head: HTTPRequestHead?

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
            guard let head else { return }
            self.head = nil
            handle(head, context: context)
        }
    }

    private func handle(_ head: HTTPRequestHead, context: ChannelHandlerContext) {
        let (path, query) = Self.split(head.uri)
        guard head.method == .GET, let identifier = Self.collection(in: path) else {
            return write(error: APIError.notFound("route"), keepAlive: head.isKeepAlive, context: context)
        }
        let request: ManifestEndpoint.Request
        do {
            request = try ManifestEndpoint.parse(headers: head.headers, query: query, identifier: identifier)
            if let answer = try endpoint.cachedAnswer(request) {
                return write(answer, request, keepAlive: head.isKeepAlive, context: context)
            }
        } catch {
            return write(error: error, keepAlive: head.isKeepAlive, context: context)
        }
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        let endpoint = self.endpoint, database = self.database, keepAlive = head.isKeepAlive
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
            }
        }
    }

    private func write(_ answer: ManifestService.Answer, _ request: ManifestEndpoint.Request, keepAlive: Bool, context: ChannelHandlerContext) {
        let (status, headers) = endpoint.head(for: answer, request)
        write(status: status, headers: headers, body: status == .ok ? answer.body : nil, keepAlive: keepAlive, context: context)
    }

    /// The API's error body, mapped as the Vapor side maps it (``APIErrorMiddleware``).
    private func write(error: any Error, keepAlive: Bool, context: ChannelHandlerContext) {
        let (status, errorBody, extra) = APIErrorMiddleware.describe(error, logger: logger)
        var headers = extra
        headers.contentType = .json
        let body = (try? JSONEncoder().encode(errorBody)) ?? Data()
        headers.replaceOrAdd(name: "content-length", value: String(body.count))
        write(status: status, headers: headers, body: context.channel.allocator.buffer(bytes: body), keepAlive: keepAlive, context: context)
    }

    /// `headers` must carry Content-Length when there is a body (a 304 has neither).
    private func write(status: HTTPResponseStatus, headers: HTTPHeaders, body: ByteBuffer?, keepAlive: Bool, context: ChannelHandlerContext) {
        var headers = headers
        if !keepAlive { headers.replaceOrAdd(name: "connection", value: "close") }
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))), promise: nil)
        if let body { context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil) }
        let done = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        if !keepAlive { done.whenComplete { [channel = context.channel] _ in channel.close(promise: nil) } }
    }

    /// `/v1/device/collections/{id}/manifest` → `id` (percent-decoded), else nil.
    static func collection(in path: Substring) -> String? {
        let prefix = "/v1/device/collections/", suffix = "/manifest"
        guard path.utf8.count > prefix.utf8.count + suffix.utf8.count, path.hasPrefix(prefix), path.hasSuffix(suffix) else { return nil }
        let identifier = path.utf8.dropFirst(prefix.utf8.count).dropLast(suffix.utf8.count)
        guard !identifier.contains(UInt8(ascii: "/")) else { return nil }
        return DeviceQuery.decode(identifier)
    }

    static func split(_ uri: String) -> (path: Substring, query: String?) {
        guard let mark = uri.firstIndex(of: "?") else { return (uri[...], nil) }
        return (uri[..<mark], String(uri[uri.index(after: mark)...]))
    }
}
