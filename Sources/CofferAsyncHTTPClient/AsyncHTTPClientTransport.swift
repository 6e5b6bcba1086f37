import AsyncHTTPClient
import Coffer
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A ``Coffer/CofferTransport`` over AsyncHTTPClient (SwiftNIO), for Linux apps and the `coffer`
/// CLI: bodies arrive in the large pieces NIO reads, not FoundationNetworking's 16 KiB callbacks.
///
/// Like the URLSession default it never follows a redirect, keeps no cookies and sends nothing
/// but the request's own headers; network failures are reported as `URLError`. Set it with
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
    public func stream(_ request: URLRequest, consume: @escaping @Sendable (HTTPURLResponse, Data) throws -> Void) async throws -> HTTPURLResponse {
        guard let url = request.url else { throw URLError(.badURL) }
        var outgoing = HTTPClientRequest(url: url.absoluteString)
        outgoing.method = HTTPMethod(rawValue: request.httpMethod ?? "GET")
        for (name, value) in request.allHTTPHeaderFields ?? [:] { outgoing.headers.add(name: name, value: value) }
        if let body = request.httpBody { outgoing.body = .bytes(ByteBuffer(bytes: body)) }
        do {
            // The read timeout bounds each wait; the deadline only stops a request that never ends.
            let answer = try await client.execute(outgoing, deadline: .now() + .hours(24))
            var fields: [String: String] = [:]
            for header in answer.headers { fields[header.name] = fields[header.name].map { $0 + ", " + header.value } ?? header.value }
            guard let response = HTTPURLResponse(url: url, statusCode: Int(answer.status.code), httpVersion: "HTTP/1.1", headerFields: fields) else {
                throw URLError(.badServerResponse)
            }
            for try await piece in answer.body {
                try Task.checkCancellation()
                try consume(response, Data(piece.readableBytesView))
            }
            return response
        } catch let error as HTTPClientError {
            throw Self.urlError(error)
        } catch let error as IOError {
            throw Self.urlError(errno: error.errnoCode)
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
