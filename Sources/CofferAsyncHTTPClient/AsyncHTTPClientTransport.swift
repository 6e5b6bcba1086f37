import AsyncHTTPClient
import Coffer
import Foundation
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import NIOPosix
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A ``Coffer/CofferTransport`` over AsyncHTTPClient (SwiftNIO), for Linux apps and the `coffer`
/// CLI: bodies arrive in the large pieces NIO reads, not FoundationNetworking's 16 KiB callbacks.
///
/// Like the URLSession default it never follows a redirect (the SDK does, for model downloads
/// only, above the transport), keeps no cookies and sends nothing but the request's own headers;
/// network failures are reported as `URLError`. Set it with
/// `configuration.transport = AsyncHTTPClientTransport(timeout: configuration.requestTimeout)`.
public final class AsyncHTTPClientTransport: CofferTransport {
    private let client: HTTPClient

    /// A transport whose connections wait at most `timeout` seconds to connect or for the next
    /// bytes of an answer.
    public init(timeout: TimeInterval) {
        let wait = TimeAmount.milliseconds(Int64(max(1, timeout) * 1000))
        var configuration = HTTPClient.Configuration(
            redirectConfiguration: .disallow, timeout: .init(connect: wait, read: wait), decompression: .disabled)
        configuration.httpVersion = .http1Only
        client = HTTPClient(eventLoopGroupProvider: .shared(MultiThreadedEventLoopGroup.singleton), configuration: configuration)
    }

    deinit {
        // Connections close in the background; nothing waits on them.
        client.shutdown { _ in }
    }

    /// Sends `request` and hands each piece of the body to `consume` as it arrives.
    ///
    /// Pieces are handed over by a response delegate on the connection's event loop, and the next
    /// read waits until `consume` returned (back-pressure without an async hand-off per piece,
    /// which measured 2–3 times slower with AsyncHTTPClient's `AsyncSequence` body).
    public func stream(_ request: URLRequest, consume: @escaping @Sendable (HTTPURLResponse, Data) throws -> Void) async throws -> HTTPURLResponse {
        try await execute(request, body: request.httpBody.map { .bytes($0) }, consume: consume)
    }

    /// Sends `request` with `body` (the request's own `httpBody` is not used) and hands each piece
    /// of the answer to `consume` as it arrives.
    func execute(_ request: URLRequest, body: HTTPClient.Body?,
                 consume: @escaping @Sendable (HTTPURLResponse, Data) throws -> Void) async throws -> HTTPURLResponse {
        guard let url = request.url else { throw URLError(.badURL) }
        var headers = HTTPHeaders()
        for (name, value) in request.allHTTPHeaderFields ?? [:] { headers.add(name: name, value: value) }
        do {
            let outgoing = try HTTPClient.Request(
                url: url.absoluteString, method: HTTPMethod(rawValue: request.httpMethod ?? "GET"), headers: headers,
                body: body)
            let delegate = StreamingDelegate(url: url, consume: consume)
            // The read timeout bounds each wait; the deadline only stops a request that never ends.
            // The SDK's small requests end sooner: it cancels them at `requestDeadline` (task.cancel below).
            let task = client.execute(request: outgoing, delegate: delegate, deadline: .now() + .hours(24))
            return try await withTaskCancellationHandler {
                try await task.futureResult.get()
            } onCancel: {
                task.cancel()
            }
        } catch let error as HTTPClientError where error == .cancelled && Task.isCancelled {
            throw CancellationError()
        } catch let error as HTTPClientError {
            throw Self.urlError(error)
        } catch let error as IOError {
            throw Self.urlError(errno: error.errnoCode)
        } catch let error as HTTPParserError {
            // A connection closed inside a body whose length was announced ends the parse early;
            // anything else the parser refuses is not HTTP.
            throw URLError(error == .invalidEOFState ? .networkConnectionLost : .badServerResponse)
        } catch let error as NIOConnectionError {
            throw Self.urlError(errno: (error.connectionErrors.first?.error as? IOError)?.errnoCode ?? 0, fallback: .cannotConnectToHost)
        }
    }

    /// The `URLError` the SDK's error messages are made from.
    static func urlError(_ error: HTTPClientError) -> URLError {
        switch error {
        case .connectTimeout, .readTimeout, .deadlineExceeded, .writeTimeout: return URLError(.timedOut)
        case .remoteConnectionClosed: return URLError(.networkConnectionLost)
        case .cancelled: return URLError(.cancelled)
        case .invalidURL, .emptyHost, .emptyScheme: return URLError(.badURL)
        default: return URLError(.badServerResponse)
        }
    }

    static func urlError(errno code: Int32, fallback: URLError.Code = .networkConnectionLost) -> URLError {
        switch code {
        case ECONNREFUSED: return URLError(.cannotConnectToHost)
        case ETIMEDOUT: return URLError(.timedOut)
        case ENETUNREACH, EHOSTUNREACH: return URLError(.notConnectedToInternet)
        default: return URLError(fallback)
        }
    }
}

/// Receives one answer: its head becomes an `HTTPURLResponse`, each body part goes to `consume`
/// before the next is read; a part `consume` refuses fails the request with its error.
private final class StreamingDelegate: HTTPClientResponseDelegate, @unchecked Sendable {
    typealias Response = HTTPURLResponse

    private let url: URL
    private let consume: @Sendable (HTTPURLResponse, Data) throws -> Void
    // Touched only on the request's event loop, one callback at a time.
    private var response: HTTPURLResponse?

    init(url: URL, consume: @escaping @Sendable (HTTPURLResponse, Data) throws -> Void) {
        self.url = url
        self.consume = consume
    }

    func didReceiveHead(task: HTTPClient.Task<Response>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
        var fields: [String: String] = [:]
        for header in head.headers { fields[header.name] = fields[header.name].map { $0 + ", " + header.value } ?? header.value }
        guard let made = HTTPURLResponse(url: url, statusCode: Int(head.status.code), httpVersion: "HTTP/1.1", headerFields: fields) else {
            return task.eventLoop.makeFailedFuture(URLError(.badServerResponse))
        }
        response = made
        return task.eventLoop.makeSucceededVoidFuture()
    }

    func didReceiveBodyPart(task: HTTPClient.Task<Response>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        guard let response else { return task.eventLoop.makeFailedFuture(URLError(.badServerResponse)) }
        do {
            // The piece is lent to `consume` as the buffer NIO read it into, not copied (a
            // transport's consumer copies what it keeps: the SDK gathers it into its own writes).
            let piece = buffer.getData(at: buffer.readerIndex, length: buffer.readableBytes, byteTransferStrategy: .noCopy) ?? Data()
            try consume(response, piece)
            return task.eventLoop.makeSucceededVoidFuture()
        } catch {
            return task.eventLoop.makeFailedFuture(error)
        }
    }

    func didFinishRequest(task: HTTPClient.Task<Response>) throws -> HTTPURLResponse {
        guard let response else { throw URLError(.badServerResponse) }
        return response
    }
}
