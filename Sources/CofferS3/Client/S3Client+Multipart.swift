import Foundation
import AsyncHTTPClient
import NIOCore

extension S3Client {
    /// The part numbers a multipart upload may use: S3 takes at most 10,000 parts.
    public static let partNumbers = 1...10_000

    /// Starts a multipart upload of `key` and returns its upload ID.
    public func createMultipartUpload(key: String) async throws -> String {
        let path = try location.encodedPath(forKey: key)
        let call = Call(operation: "CreateMultipartUpload", method: .POST, encodedPath: path, query: [("uploads", "")], key: key)
        let response = try await send(call)
        guard response.status.code == 200 else { throw try await failure(response, operation: call.operation) }
        let body = try await collect(response, operation: call.operation)
        do {
            return try InitiateMultipartUploadResult(body).uploadID
        } catch {
            throw S3Error.malformedResponse(operation: call.operation, reason: error.reason)
        }
    }

    /// Uploads part `partNumber` (1…10000) of an upload and returns the part's ETag for
    /// ``completeMultipartUpload(key:uploadID:parts:)``.
    ///
    /// Every part but the last must hold at least 5 MiB (S3 checks that at completion). The part is
    /// sent with its `Content-Length` and its SHA-256 is signed: hashing costs a few milliseconds per
    /// 8 MiB here, against the network's tens, and it lets the store refuse a part damaged between
    /// the server and the store, which matters most on the plain-HTTP endpoints of self-hosted stores.
    public func uploadPart(key: String, uploadID: String, partNumber: Int, body: ByteBuffer) async throws -> String {
        guard Self.partNumbers.contains(partNumber) else {
            throw S3Error.invalidArgument("a part number must be 1…10000, not \(partNumber)")
        }
        let path = try location.encodedPath(forKey: key)
        let call = Call(
            operation: "UploadPart", method: .PUT, encodedPath: path,
            query: [("partNumber", String(partNumber)), ("uploadId", uploadID)], body: body, key: key
        )
        let response = try await send(call)
        guard response.status.code == 200 else { throw try await failure(response, operation: call.operation) }
        _ = try await collect(response, operation: call.operation, limit: 64 * 1024)
        guard let etag = Self.singleHeader("etag", in: response), !etag.isEmpty else {
            throw S3Error.malformedResponse(operation: call.operation, reason: "no ETag")
        }
        return etag
    }

    /// Completes an upload from its parts (numbers strictly increasing, each with the ETag its upload
    /// returned). A 200 answer whose body is an `<Error>` (S3 sends the status before assembling) is
    /// a failure: ``S3Error/unexpectedResponse(operation:status:code:)`` with status 200.
    public func completeMultipartUpload(key: String, uploadID: String, parts: [(number: Int, etag: String)]) async throws {
        guard !parts.isEmpty, parts.allSatisfy({ Self.partNumbers.contains($0.number) }),
              zip(parts, parts.dropFirst()).allSatisfy({ $0.number < $1.number })
        else {
            throw S3Error.invalidArgument("a multipart upload completes with 1…10000 parts in increasing order")
        }
        let path = try location.encodedPath(forKey: key)
        var xml = "<CompleteMultipartUpload xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
        for part in parts {
            xml += "<Part><PartNumber>\(part.number)</PartNumber><ETag>\(Self.escapeXML(part.etag))</ETag></Part>"
        }
        xml += "</CompleteMultipartUpload>"
        let call = Call(
            operation: "CompleteMultipartUpload", method: .POST, encodedPath: path,
            query: [("uploadId", uploadID)], headers: [("content-type", "application/xml")],
            body: ByteBuffer(string: xml), key: key
        )
        let response = try await send(call)
        guard response.status.code == 200 else { throw try await failure(response, operation: call.operation) }
        let body = try await collect(response, operation: call.operation)
        let result: CompleteMultipartUploadResult
        do {
            result = try CompleteMultipartUploadResult(body)
        } catch {
            throw S3Error.malformedResponse(operation: call.operation, reason: error.reason)
        }
        if case .failed(let code) = result {
            throw Self.failure(status: 200, code: code, operation: call.operation, location: location)
        }
    }

    /// Abandons an upload and frees its parts. An upload that is already gone (404 `NoSuchUpload`) is
    /// not an error.
    public func abortMultipartUpload(key: String, uploadID: String) async throws {
        let path = try location.encodedPath(forKey: key)
        let call = Call(operation: "AbortMultipartUpload", method: .DELETE, encodedPath: path, query: [("uploadId", uploadID)], key: key)
        let response = try await send(call)
        switch response.status.code {
        case 200, 204:
            _ = try await collect(response, operation: call.operation, limit: 64 * 1024)
        default:
            let error = try await failure(response, operation: call.operation)
            if case .unexpectedResponse(_, 404, "NoSuchUpload") = error { return }
            throw error
        }
    }

    /// When the newest stored part of the unfinished multipart upload `uploadID` of `key` was
    /// stored: nil when it has none, or when the upload is gone. Pages through ListParts (1000
    /// parts a request, at most ten requests: S3 allows 10 000 parts).
    public func lastPartStored(key: String, uploadID: String) async throws -> Date? {
        let path = try location.encodedPath(forKey: key)
        var newest: Date?
        var marker: Int?
        for _ in 0..<10 {
            var query: [(name: String, value: String)] = [("uploadId", uploadID), ("max-parts", "1000")]
            if let marker { query.append(("part-number-marker", String(marker))) }
            let call = Call(operation: "ListParts", method: .GET, encodedPath: path, query: query, key: key)
            let response = try await send(call)
            guard response.status.code == 200 else {
                let error = try await failure(response, operation: call.operation)
                // Gone (aborted or completed meanwhile): Ceph's gateway says NoSuchKey, S3 NoSuchUpload.
                if case .unexpectedResponse(_, 404, let code) = error, code == "NoSuchUpload" || code == "NoSuchKey" { return nil }
                throw error
            }
            let body = try await collect(response, operation: call.operation)
            let page: ListPartsResult
            do {
                page = try ListPartsResult(body)
            } catch {
                throw S3Error.malformedResponse(operation: call.operation, reason: error.reason)
            }
            if let modified = page.lastModified { newest = max(newest ?? modified, modified) }
            guard let next = page.next else { return newest }
            guard next > (marker ?? 0) else {
                throw S3Error.malformedResponse(operation: call.operation, reason: "a next part marker that does not move forward")
            }
            marker = next
        }
        return newest
    }

    /// `text` with `&`, `<`, `>`, `"` and `'` written as entities.
    static func escapeXML(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            default: out.append(character)
            }
        }
        return out
    }
}
