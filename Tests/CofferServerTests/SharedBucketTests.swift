import CofferS3
@testable import CofferServer
import Foundation
import S3TestSupport
import Testing

/// A bucket shared with other applications, with no key prefix of Coffer's own: blob collection's
/// sweep of stale uploads aborted every multipart upload in it idle for an hour, another
/// application's too. (Here rather than in CofferS3Tests: the sweep is the server's store's.)
@Suite("A bucket shared with other applications",
       .enabled(if: S3TestGateway.configured, "set COFFER_TEST_S3_ENDPOINT, COFFER_TEST_S3_ACCESS_KEY and COFFER_TEST_S3_SECRET_KEY"))
struct SharedBucketTests {
    @Test("the sweep of stale uploads aborts Coffer's own (at a blob's key, under incoming/) and leaves another application's")
    func staleSweepKeepsOthersUploads() async throws {
        let bucket = try await S3TestGateway.makeBucket()
        do {
            let client = try S3TestGateway.client(bucket: bucket)
            let store = S3BlobStore(client: client, presign: false)
            let address = String(repeating: "ab", count: 32)
            let others = try await client.createMultipartUpload(key: "other/x")
            _ = try await client.createMultipartUpload(key: store.key(of: address))
            _ = try await client.createMultipartUpload(key: "incoming/" + UUID().uuidString)
            // All three begun before the sweep's moment, none with a part: stale at an age of 0.
            try await Task.sleep(for: .milliseconds(1500))

            #expect(try await store.removeStaleUploads(olderThan: 0) == 2)
            let left = try await client.listMultipartUploads()
            #expect(left.map(\.key) == ["other/x"], "\(left.map(\.key))")
            #expect(left.map(\.uploadID) == [others])
        } catch {
            await S3TestGateway.removeBucket(bucket)
            throw error
        }
        await S3TestGateway.removeBucket(bucket)
    }
}
