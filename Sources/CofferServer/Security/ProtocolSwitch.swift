import NIOHTTP1
import Vapor

/// A request that asks to switch protocols: `CONNECT`, or an `Upgrade` header with `upgrade` among
/// the `Connection` options — what NIO's HTTP parser takes for a switch.
///
/// Once it has read such a request the parser stops for good: every byte the client sends after
/// it is kept, unparsed, in a buffer nothing bounds, and each read keeps the idle timeout away. No
/// route of Coffer switches protocols, so both ports refuse such a request with 400
/// `protocol_switch_refused` and close its connection, whatever it asked for.
enum ProtocolSwitch {
    /// The refusal both ports answer.
    static let refusal = APIError(.badRequest, "protocol_switch_refused",
                                  "this server does not switch protocols; send the request without Upgrade (CONNECT is not served)")

    static func isAsked(method: HTTPMethod, headers: HTTPHeaders) -> Bool {
        if method == .CONNECT { return true }
        guard headers.contains(name: "upgrade") else { return false }
        return headers[canonicalForm: "connection"].contains { $0.lowercased() == "upgrade" }
    }

    /// The main port's refusal: Vapor keeps a connection after its answer and offers no way to
    /// close one, so the answer's body is a stream that ends in an error once its bytes are written
    /// — Vapor closes a connection whose answer failed. The client receives the whole answer
    /// (its Content-Length), then the close.
    struct Middleware: Vapor.Middleware {
        func respond(to request: Request, chainingTo next: any Responder) -> EventLoopFuture<Response> {
            guard ProtocolSwitch.isAsked(method: request.method, headers: request.headers) else { return next.respond(to: request) }
            let (status, body, extra) = APIErrorMiddleware.describe(ProtocolSwitch.refusal, logger: request.logger)
            let bytes = ByteBuffer(data: (try? JSONEncoder().encode(body)) ?? Data())
            var headers = extra
            headers.contentType = .json
            headers.replaceOrAdd(name: .connection, value: "close")
            let response = Response(status: status, headers: headers, body: .init(stream: { writer in
                writer.write(.buffer(bytes)).whenComplete { _ in writer.write(.error(Closed()), promise: nil) }
            }, count: bytes.readableBytes))
            return request.eventLoop.makeSucceededFuture(response)
        }
    }

    /// Ends the refusal's stream, so that Vapor closes the connection.
    struct Closed: Error {}
}
