import AsyncHTTPClient
import NIOCore

extension S3Client {
    /// The size and ETag of `key`, or nil when there is no such object (404).
    public func headObject(key: String) async throws -> S3ObjectInfo? {
        let path = try location.encodedPath(forKey: key)
        let response = try await send(Call(operation: "HeadObject", method: .HEAD, encodedPath: path, key: key))
        switch response.status.code {
        case 200:
            guard let size = Self.singleHeader("content-length", in: response).flatMap(DecimalText.int64) else {
                throw S3Error.malformedResponse(operation: "HeadObject", reason: "no valid Content-Length")
            }
            return S3ObjectInfo(size: size, etag: Self.singleHeader("etag", in: response))
        case 404:
            return nil
        default:
            throw try await failure(response, operation: "HeadObject")
        }
    }

    /// The object `key`, or the bytes `range` of it, with its body still to be read; nil when there is
    /// no such object (404 `NoSuchKey`).
    /// - Throws: ``S3Error/rangeNotSatisfiable(key:size:)`` for a range that starts past the end (416),
    ///   ``S3Error/bucketMissing(bucket:endpoint:)``, and the other ``S3Error``s.
    public func getObject(key: String, range: S3ByteRange? = nil) async throws -> S3ObjectStream? {
        let path = try location.encodedPath(forKey: key)
        var call = Call(operation: "GetObject", method: .GET, encodedPath: path, key: key)
        if let range { call.headers.append(("range", try range.headerValue())) }
        let response = try await send(call)
        let status = Int(response.status.code)
        switch status {
        case 200, 206:
            guard let length = Self.singleHeader("content-length", in: response).flatMap(DecimalText.int64) else {
                throw S3Error.malformedResponse(operation: "GetObject", reason: "no valid Content-Length")
            }
            var contentRange: S3ContentRange?
            if status == 206 {
                guard let parsed = Self.singleHeader("content-range", in: response).flatMap(S3ContentRange.init(header:)),
                      let sent = parsed.range, Int64(sent.count) == length
                else {
                    throw S3Error.malformedResponse(operation: "GetObject", reason: "a 206 without a Content-Range that matches its length")
                }
                contentRange = parsed
            }
            return S3ObjectStream(
                status: status, contentLength: length, contentRange: contentRange,
                etag: Self.singleHeader("etag", in: response),
                body: S3ObjectBody(source: response.body, expectedLength: length, operation: "GetObject")
            )
        case 416:
            let size = Self.singleHeader("content-range", in: response).flatMap(S3ContentRange.init(header:))?.size
            _ = try? await collect(response, operation: "GetObject", limit: 64 * 1024)
            throw S3Error.rangeNotSatisfiable(key: key, size: size)
        default:
            let error = try await failure(response, operation: "GetObject")
            if case .unexpectedResponse(_, 404, "NoSuchKey") = error { return nil }
            throw error
        }
    }

    /// The object `key` (or `range` of it) collected into one buffer of at most `limit` bytes; nil
    /// when there is no such object.
    /// - Throws: ``S3Error/invalidArgument(_:)`` when the answer would hold more than `limit` bytes
    ///   (checked against `Content-Length` before any byte is read), and the errors of ``getObject(key:range:)``.
    public func getBytes(key: String, range: S3ByteRange? = nil, limit: Int) async throws -> ByteBuffer? {
        guard let stream = try await getObject(key: key, range: range) else { return nil }
        guard stream.contentLength <= Int64(max(0, limit)) else {
            throw S3Error.invalidArgument("'\(key)' answers \(stream.contentLength) bytes, more than the \(limit) asked for")
        }
        var collected = ByteBuffer()
        collected.reserveCapacity(Int(stream.contentLength))
        for try await var piece in stream.body {
            collected.writeBuffer(&piece)
        }
        return collected
    }

    /// Stores `body` as `key` in one request (small objects: markers, tests); larger objects go
    /// through a multipart upload. The body's SHA-256 is signed, so the store refuses a body changed
    /// on the way. Returns the ETag when the store sent one.
    @discardableResult
    public func putObject(key: String, body: ByteBuffer) async throws -> String? {
        let path = try location.encodedPath(forKey: key)
        let response = try await send(Call(operation: "PutObject", method: .PUT, encodedPath: path, body: body, key: key))
        guard response.status.code == 200 else { throw try await failure(response, operation: "PutObject") }
        _ = try await collect(response, operation: "PutObject", limit: 64 * 1024)
        return Self.singleHeader("etag", in: response)
    }

    /// Deletes `key`; an object that is already gone is not an error (S3 answers 204 either way, other
    /// stores 404).
    public func deleteObject(key: String) async throws {
        let path = try location.encodedPath(forKey: key)
        let response = try await send(Call(operation: "DeleteObject", method: .DELETE, encodedPath: path, key: key))
        switch response.status.code {
        case 200, 204:
            _ = try await collect(response, operation: "DeleteObject", limit: 64 * 1024)
        default:
            let error = try await failure(response, operation: "DeleteObject")
            if case .unexpectedResponse(_, 404, _) = error { return }
            throw error
        }
    }
}
