import AsyncHTTPClient
import NIOCore

extension S3Client {
    /// The objects whose keys start with `prefix` (under the location's key prefix), a page at a time:
    /// each page is one ListObjectsV2 request, sent when the sequence is asked for it, so a bucket of
    /// millions of objects never has all its keys in memory.
    /// - Parameter pageSize: at most this many keys per page (1…1000; S3's maximum is 1000).
    public func listObjects(prefix: String = "", pageSize: Int = 1000) -> S3ObjectListing {
        let size = min(max(pageSize, 1), 1000)
        return S3Pages(operation: "ListObjectsV2") { try await self.listObjectsPage(prefix: prefix, pageSize: size, at: $0) }
    }

    /// One page of ListObjectsV2 at `position` (its continuation token; nil for the first): the
    /// objects (keys relative to the key prefix) and the next page's token.
    func listObjectsPage(prefix: String, pageSize: Int, at position: S3ObjectListing.Position?) async throws
        -> (page: [S3ObjectSummary], next: S3ObjectListing.Position?)
    {
        var query: [(name: String, value: String)] = [("list-type", "2"), ("prefix", location.keyPrefix + prefix), ("max-keys", String(pageSize))]
        if case .token(let token)? = position { query.append(("continuation-token", token)) }
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
        let objects = try page.objects.map { object in
            S3ObjectSummary(key: try relativeKey(object.key, operation: call.operation), size: object.size, lastModified: object.lastModified, etag: object.etag)
        }
        return (objects, page.nextContinuationToken.map { .token($0) })
    }

    /// The unfinished multipart uploads whose keys start with `prefix` (under the location's key
    /// prefix), a page at a time (key and upload-ID markers): a store left with millions of them
    /// never has them all in memory.
    /// - Parameter pageSize: at most this many uploads per request (1…1000).
    public func multipartUploads(prefix: String = "", pageSize: Int = 1000) -> S3MultipartUploadListing {
        let size = min(max(pageSize, 1), 1000)
        return S3Pages(operation: "ListMultipartUploads") { try await self.multipartUploadsPage(prefix: prefix, pageSize: size, at: $0) }
    }

    /// Every unfinished multipart upload whose key starts with `prefix`, all pages of
    /// ``multipartUploads(prefix:pageSize:)`` collected: for stores with few of them (tools, tests).
    public func listMultipartUploads(prefix: String = "", pageSize: Int = 1000) async throws -> [S3MultipartUpload] {
        var uploads: [S3MultipartUpload] = []
        for try await page in multipartUploads(prefix: prefix, pageSize: pageSize) { uploads += page }
        return uploads
    }

    /// Aborts the unfinished multipart uploads under `prefix` that `shouldAbort` picks, a page at
    /// a time, and returns how many. Each next page is asked for before the current page's uploads
    /// are aborted: its markers name the current page's last upload, and some stores look that
    /// upload up among the live ones (and skip the rest of its key once it is gone).
    /// - Parameter pageSize: at most this many uploads per request (1…1000).
    public func abortMultipartUploads(prefix: String = "", pageSize: Int = 1000,
                                      where shouldAbort: (S3MultipartUpload) async throws -> Bool) async throws -> Int {
        var pages = multipartUploads(prefix: prefix, pageSize: pageSize).makeAsyncIterator()
        var page = try await pages.next()
        var aborted = 0
        while let uploads = page {
            page = try await pages.next()
            for upload in uploads where try await shouldAbort(upload) {
                try await abortMultipartUpload(key: upload.key, uploadID: upload.uploadID)
                aborted += 1
            }
        }
        return aborted
    }

    /// One page of ListMultipartUploads at `position` (its markers; nil for the first): the
    /// uploads (keys relative to the key prefix) and the next page's markers.
    func multipartUploadsPage(prefix: String, pageSize: Int, at position: S3MultipartUploadListing.Position?) async throws
        -> (page: [S3MultipartUpload], next: S3MultipartUploadListing.Position?)
    {
        var query: [(name: String, value: String)] = [("uploads", ""), ("prefix", location.keyPrefix + prefix), ("max-uploads", String(pageSize))]
        if case .upload(let key, let uploadID)? = position {
            query.append(("key-marker", key))
            query.append(("upload-id-marker", uploadID))
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
        let uploads = try page.uploads.map { upload in
            S3MultipartUpload(key: try relativeKey(upload.key, operation: call.operation), uploadID: upload.uploadID, initiated: upload.initiated)
        }
        return (uploads, page.next.map { .upload(key: $0.keyMarker, uploadID: $0.uploadIDMarker) })
    }

    /// `key` without the location's key prefix; a key outside the prefix is a malformed answer.
    func relativeKey(_ key: String, operation: String) throws -> String {
        guard key.hasPrefix(location.keyPrefix), key.utf8.count > location.keyPrefix.utf8.count else {
            throw S3Error.malformedResponse(operation: operation, reason: "a key outside the prefix asked for")
        }
        return String(decoding: key.utf8.dropFirst(location.keyPrefix.utf8.count), as: UTF8.self)
    }
}
