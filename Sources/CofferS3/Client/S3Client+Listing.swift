import AsyncHTTPClient
import NIOCore

extension S3Client {
    /// The objects whose keys start with `prefix` (under the location's key prefix), a page at a time:
    /// each page is one ListObjectsV2 request, sent when the sequence is asked for it, so a bucket of
    /// millions of objects never has all its keys in memory.
    /// - Parameter pageSize: at most this many keys per page (1…1000; S3's maximum is 1000).
    public func listObjects(prefix: String = "", pageSize: Int = 1000) -> S3ObjectListing {
        S3ObjectListing(client: self, prefix: prefix, pageSize: min(max(pageSize, 1), 1000))
    }

    /// One page of ListObjectsV2 after `token`: the objects (keys relative to the key prefix) and the
    /// next page's token.
    func listObjectsPage(prefix: String, pageSize: Int, token: String?) async throws -> (objects: [S3ObjectSummary], next: String?) {
        var query: [(name: String, value: String)] = [("list-type", "2"), ("prefix", location.keyPrefix + prefix), ("max-keys", String(pageSize))]
        if let token { query.append(("continuation-token", token)) }
        let call = Call(operation: "ListObjectsV2", method: .GET, encodedPath: location.bucketPath, query: query)
        let response = try await send(call)
        guard response.status.code == 200 else { throw try await failure(response, operation: call.operation) }
        let body = try await collect(response, operation: call.operation)
        let page: ListBucketResult
        do {
            page = try ListBucketResult(body)
        } catch {
            throw S3Error.malformedResponse(operation: call.operation, reason: error.reason)
        }
        if let next = page.nextContinuationToken, next == token {
            throw S3Error.malformedResponse(operation: call.operation, reason: "the continuation token did not advance")
        }
        let objects = try page.objects.map { object in
            S3ObjectSummary(key: try relativeKey(object.key, operation: call.operation), size: object.size, lastModified: object.lastModified, etag: object.etag)
        }
        return (objects, page.nextContinuationToken)
    }

    /// Every unfinished multipart upload whose key starts with `prefix` (under the location's key
    /// prefix), following the listing's pages (key and upload-ID markers).
    /// - Parameter pageSize: at most this many uploads per request (1…1000).
    public func listMultipartUploads(prefix: String = "", pageSize: Int = 1000) async throws -> [S3MultipartUpload] {
        var uploads: [S3MultipartUpload] = []
        var marker: (key: String, uploadID: String)?
        repeat {
            var query: [(name: String, value: String)] = [("uploads", ""), ("prefix", location.keyPrefix + prefix), ("max-uploads", String(min(max(pageSize, 1), 1000)))]
            if let marker {
                query.append(("key-marker", marker.key))
                query.append(("upload-id-marker", marker.uploadID))
            }
            let call = Call(operation: "ListMultipartUploads", method: .GET, encodedPath: location.bucketPath, query: query)
            let response = try await send(call)
            guard response.status.code == 200 else { throw try await failure(response, operation: call.operation) }
            let body = try await collect(response, operation: call.operation)
            let page: ListMultipartUploadsResult
            do {
                page = try ListMultipartUploadsResult(body)
            } catch {
                throw S3Error.malformedResponse(operation: call.operation, reason: error.reason)
            }
            for upload in page.uploads {
                uploads.append(S3MultipartUpload(key: try relativeKey(upload.key, operation: call.operation), uploadID: upload.uploadID, initiated: upload.initiated))
            }
            if let next = page.next, let marker, next.keyMarker == marker.key, next.uploadIDMarker == marker.uploadID {
                throw S3Error.malformedResponse(operation: call.operation, reason: "the markers did not advance")
            }
            marker = page.next.map { ($0.keyMarker, $0.uploadIDMarker) }
        } while marker != nil
        return uploads
    }

    /// `key` without the location's key prefix; a key outside the prefix is a malformed answer.
    func relativeKey(_ key: String, operation: String) throws -> String {
        guard key.hasPrefix(location.keyPrefix), key.utf8.count > location.keyPrefix.utf8.count else {
            throw S3Error.malformedResponse(operation: operation, reason: "a key outside the prefix asked for")
        }
        return String(decoding: key.utf8.dropFirst(location.keyPrefix.utf8.count), as: UTF8.self)
    }
}
