import AsyncHTTPClient
import NIOCore

extension S3Client {
    /// The largest object one CopyObject may copy (S3's limit); larger ones are copied in parts.
    public static let largestSingleCopy: Int64 = 5 << 30
    /// The size of each part when a large object is copied in parts (UploadPartCopy).
    public static let copyPartSize: Int64 = 1 << 30

    /// Copies object `source` to `destination` inside the bucket, without the bytes passing through
    /// this host: CopyObject up to `singleCopyLimit` bytes (``largestSingleCopy``), a multipart upload
    /// of UploadPartCopy parts of `partSize` beyond (aborted if any part fails). `size` is the
    /// source's size when the caller knows it.
    public func copyObject(from source: String, to destination: String, size: Int64? = nil,
                           singleCopyLimit: Int64 = S3Client.largestSingleCopy, partSize: Int64 = S3Client.copyPartSize) async throws {
        guard partSize >= 5 << 20 else { throw S3Error.invalidArgument("a copied part must hold at least 5 MiB") }
        var known = size
        if known == nil { known = try await headObject(key: source)?.size }
        guard let size = known else { throw S3Error.unexpectedResponse(operation: "CopyObject", status: 404, code: "NoSuchKey") }
        guard size > singleCopyLimit else { return try await copyWhole(from: source, to: destination) }
        let uploadID = try await createMultipartUpload(key: destination)
        do {
            var parts: [(number: Int, etag: String)] = []
            var offset: Int64 = 0
            while offset < size {
                let end = min(size, offset + partSize)
                parts.append((parts.count + 1, try await copyPart(from: source, range: offset..<end, to: destination,
                                                                   uploadID: uploadID, partNumber: parts.count + 1)))
                offset = end
            }
            try await completeMultipartUpload(key: destination, uploadID: uploadID, parts: parts)
        } catch {
            try? await abortMultipartUpload(key: destination, uploadID: uploadID)
            throw error
        }
    }

    /// The `x-amz-copy-source` of `key`: `/bucket/key`, the key encoded as in a path.
    private func copySource(_ key: String) throws -> String {
        let path = try location.encodedPath(forKey: key)
        return location.addressing == .path ? path : "/" + location.bucket + path
    }

    private func copyWhole(from source: String, to destination: String) async throws {
        let call = Call(operation: "CopyObject", method: .PUT, encodedPath: try location.encodedPath(forKey: destination),
                        headers: [("x-amz-copy-source", try copySource(source))], key: destination)
        let response = try await send(call)
        guard response.status.code == 200 else { throw try await failure(response, operation: call.operation) }
        // Like CompleteMultipartUpload, a copy may answer 200 and then report an error in the body.
        try Self.copyResult(try await collect(response, operation: call.operation), operation: call.operation, location: location)
    }

    private func copyPart(from source: String, range: Range<Int64>, to destination: String, uploadID: String, partNumber: Int) async throws -> String {
        let call = Call(operation: "UploadPartCopy", method: .PUT, encodedPath: try location.encodedPath(forKey: destination),
                        query: [("partNumber", String(partNumber)), ("uploadId", uploadID)],
                        headers: [("x-amz-copy-source", try copySource(source)),
                                  ("x-amz-copy-source-range", "bytes=\(range.lowerBound)-\(range.upperBound - 1)")], key: destination)
        let response = try await send(call)
        guard response.status.code == 200 else { throw try await failure(response, operation: call.operation) }
        let etag = try Self.copyResult(try await collect(response, operation: call.operation), operation: call.operation, location: location)
        guard let etag, !etag.isEmpty else { throw S3Error.malformedResponse(operation: call.operation, reason: "no ETag") }
        return etag
    }

    /// The ETag of a `<CopyObjectResult>` or `<CopyPartResult>`; throws for an `<Error>` or anything else.
    @discardableResult
    static func copyResult(_ bytes: [UInt8], operation: String, location: S3Location) throws -> String? {
        let root: XMLElement
        do {
            root = try XMLReader.parse(bytes)
        } catch {
            throw S3Error.malformedResponse(operation: operation, reason: error.reason)
        }
        switch root.name {
        case "CopyObjectResult", "CopyPartResult": return root.text(of: "ETag")
        case "Error": throw failure(status: 200, code: S3ErrorBody(bytes)?.code ?? "unknown", operation: operation, location: location)
        default: throw S3Error.malformedResponse(operation: operation, reason: "the root is <\(root.name)>")
        }
    }
}
