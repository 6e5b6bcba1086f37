import AsyncHTTPClient
import NIOCore

extension S3Client {
    /// Checks that the bucket exists and the credentials are accepted: the start-up check of a server
    /// that stores blobs in it.
    /// - Throws: ``S3Error/credentialsRejected(code:)`` (403), ``S3Error/bucketMissing(bucket:endpoint:)``
    ///   (404), ``S3Error/unreachable(endpoint:reason:)``, ``S3Error/unexpectedResponse(operation:status:code:)``.
    public func headBucket() async throws {
        let response = try await send(Call(operation: "HeadBucket", method: .HEAD, encodedPath: location.bucketPath))
        switch response.status.code {
        case 200:
            return
        case 404:
            // A HEAD answer has no body: a 404 to HEAD bucket can only mean the bucket.
            throw S3Error.bucketMissing(bucket: location.bucket, endpoint: location.endpoint)
        default:
            throw try await failure(response, operation: "HeadBucket")
        }
    }

    /// Creates the bucket (an S3 CreateBucket; for tests and first-time setup). Outside `us-east-1`
    /// the region is sent as the location constraint.
    /// - Throws: ``S3Error``; `BucketAlreadyOwnedByYou` is not an error.
    public func createBucket() async throws {
        var call = Call(operation: "CreateBucket", method: .PUT, encodedPath: location.bucketPath)
        if location.region != "us-east-1" {
            call.body = ByteBuffer(string: "<CreateBucketConfiguration xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><LocationConstraint>\(location.region)</LocationConstraint></CreateBucketConfiguration>")
        }
        let response = try await send(call)
        if response.status.code == 200 {
            _ = try await collect(response, operation: call.operation)
            return
        }
        let error = try await failure(response, operation: call.operation)
        if case .unexpectedResponse(_, 409, "BucketAlreadyOwnedByYou") = error { return }
        throw error
    }

    /// Deletes the bucket, which must be empty (for tests). A missing bucket is not an error.
    public func deleteBucket() async throws {
        let response = try await send(Call(operation: "DeleteBucket", method: .DELETE, encodedPath: location.bucketPath))
        switch response.status.code {
        case 200, 204:
            _ = try await collect(response, operation: "DeleteBucket")
        default:
            let error = try await failure(response, operation: "DeleteBucket")
            if case .bucketMissing = error { return }
            throw error
        }
    }
}
