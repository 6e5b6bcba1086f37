import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

extension S3Client {
    /// One request before signing.
    struct Call {
        /// The name of the S3 operation, for errors (`HeadBucket`, `GetObject`, …).
        var operation: String
        /// The HTTP method.
        var method: HTTPMethod
        /// The path as sent and signed (``S3Location/encodedPath(forKey:)`` or ``S3Location/bucketPath``).
        var encodedPath: String
        /// Query parameters, not encoded.
        var query: [(name: String, value: String)] = []
        /// Headers to send and sign besides `host` and the signer's own.
        var headers: [(name: String, value: String)] = []
        /// The body, hashed into `x-amz-content-sha256`; nil for none.
        var body: ByteBuffer? = nil
        /// The key for messages (nil for bucket operations).
        var key: String? = nil
    }

    /// Signs and sends `call`, returning the answer once its head has arrived.
    /// - Throws: ``S3Error/unreachable(endpoint:reason:)`` for every failure before an answer, or
    ///   `CancellationError` when the task was cancelled.
    func send(_ call: Call) async throws -> HTTPClientResponse {
        let (url, headers) = signed(call)
        var request = HTTPClientRequest(url: url)
        request.method = call.method
        request.headers = headers
        if let body = call.body {
            request.body = .bytes(body)
        }
        do {
            return try await httpClient.execute(request, timeout: requestTimeout)
        } catch {
            throw networkFailure(error)
        }
    }

    /// The URL and the headers of `call`, signed at the client's clock.
    func signed(_ call: Call) -> (url: String, headers: HTTPHeaders) {
        let payload: SigV4Payload = call.body.map { buffer in
            buffer.withUnsafeReadableBytes { SigV4Payload.hashing($0) }
        } ?? .empty
        let query = SigV4Signer.canonicalQuery(call.query)
        let headers = [("host", location.hostHeader)] + call.headers
        var fields = HTTPHeaders(headers)
        let signed = signer.headers(
            method: call.method.rawValue, encodedPath: call.encodedPath, query: call.query,
            headers: headers, payload: payload, date: clock()
        )
        for (name, value) in signed { fields.add(name: name, value: value) }
        return (location.url(encodedPath: call.encodedPath, query: query), fields)
    }

    /// The whole body of `response`, at most `limit` bytes, read within the client's request
    /// timeout: an answer of a few kilobytes (an error, a listing page) that trickles in a byte at
    /// a time within the HTTP client's read timeout would otherwise hold its request for days.
    /// - Throws: ``S3Error/malformedResponse(operation:reason:)`` for a longer body,
    ///   ``S3Error/interrupted(operation:reason:)`` when it ends early or takes too long.
    func collect(_ response: HTTPClientResponse, operation: String, limit: Int = S3Client.maximumResponseBytes) async throws -> [UInt8] {
        let body = response.body
        do {
            let buffer = try await Self.within(requestTimeout) { try await body.collect(upTo: limit) }
            guard let buffer else {
                throw S3Error.interrupted(operation: operation, reason: "the answer's body took longer than the request timeout")
            }
            return Array(buffer.readableBytesView)
        } catch let error as S3Error {
            throw error
        } catch is NIOTooManyBytesError {
            throw S3Error.malformedResponse(operation: operation, reason: "the body is longer than \(limit) bytes")
        } catch {
            if Task.isCancelled { throw CancellationError() }
            throw S3Error.interrupted(operation: operation, reason: Self.reason(error))
        }
    }

    /// `work`'s result, or nil once `limit` has passed (`work` is then cancelled).
    static func within<T: Sendable>(_ limit: TimeAmount, _ work: @escaping @Sendable () async throws -> T) async throws -> T? {
        try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await work() }
            group.addTask {
                try await Task.sleep(nanoseconds: UInt64(max(0, limit.nanoseconds)))
                return nil
            }
            defer { group.cancelAll() }
            return try await group.next() ?? nil
        }
    }

    /// The error for an answer that is not the operation's success: its body's S3 code is read
    /// (at most 64 KiB of it) and mapped to who must act.
    func failure(_ response: HTTPClientResponse, operation: String, key: String? = nil) async throws -> S3Error {
        let body = (try? await collect(response, operation: operation, limit: 64 * 1024)) ?? []
        return Self.failure(status: Int(response.status.code), code: S3ErrorBody(body)?.code, operation: operation, location: location)
    }

    /// The error for `status` and S3 error `code` (nil when the answer had no `<Error>` body, as every
    /// answer to HEAD).
    static func failure(status: Int, code: String?, operation: String, location: S3Location) -> S3Error {
        switch (status, code) {
        case (403, nil), (403, "InvalidAccessKeyId"), (403, "SignatureDoesNotMatch"):
            .credentialsRejected(code: code)
        case (403, "AccessDenied"):
            .accessDenied(operation: operation, bucket: location.bucket)
        case (403, "RequestTimeTooSkewed"):
            .clockSkewed
        case (404, "NoSuchBucket"):
            .bucketMissing(bucket: location.bucket, endpoint: location.endpoint)
        default:
            .unexpectedResponse(operation: operation, status: status, code: code)
        }
    }

    /// The value of the only `name` header, nil when absent or repeated.
    static func singleHeader(_ name: String, in response: HTTPClientResponse) -> String? {
        let values = response.headers[name]
        return values.count == 1 ? values[0] : nil
    }
}
