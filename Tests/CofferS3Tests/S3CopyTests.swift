import BlockingTestSupport
@testable import CofferS3
import Crypto
import Foundation
import NIOCore
import Testing

/// Copies inside the bucket, against the real gateway: one CopyObject, and the multipart
/// UploadPartCopy path that objects beyond 5 GiB take (exercised here with a small limit).
@Suite(.enabled(if: S3TestStore.configured, "set COFFER_TEST_S3_ENDPOINT, COFFER_TEST_S3_ACCESS_KEY and COFFER_TEST_S3_SECRET_KEY"))
struct S3CopyTests {
    @Test("an object is copied whole, and in 5 MiB parts past the single-copy limit, byte for byte; a missing source is an error",
          arguments: [S3Client.largestSingleCopy, 1 << 20])
    func copy(singleCopyLimit: Int64) async throws {
        try await S3TestStore.withBucket(keyPrefix: "p/") { client, _ in
            // 12 MiB + 5 bytes: three parts at 5 MiB, the last short.
            let bytes = testBytes((12 << 20) + 5) { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 13) }
            _ = try await client.putObject(key: "incoming/a b+c", body: ByteBuffer(bytes: bytes))
            try await client.copyObject(from: "incoming/a b+c", to: "blobs/copied", singleCopyLimit: singleCopyLimit, partSize: 5 << 20)
            let copied = try #require(try await client.getBytes(key: "blobs/copied", limit: 16 << 20))
            #expect(SHA256.hash(data: Array(copied.readableBytesView)) == SHA256.hash(data: bytes))
            #expect(try await client.headObject(key: "blobs/copied")?.size == Int64(bytes.count))
            // No multipart upload is left behind by the copy in parts.
            #expect(try await client.listMultipartUploads().isEmpty)
            await #expect(throws: S3Error.self) {
                try await client.copyObject(from: "incoming/missing", to: "blobs/other", singleCopyLimit: singleCopyLimit, partSize: 5 << 20)
            }
            #expect(try await client.headObject(key: "blobs/other") == nil)
        }
    }
}
