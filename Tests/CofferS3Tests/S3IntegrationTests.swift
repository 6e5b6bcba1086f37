import AsyncHTTPClient
import Crypto
import Foundation
import NIOCore
import Testing
@testable import CofferS3

/// The client against a real S3 store (a Ceph RADOS Gateway in CI: .ci/rgw-start.sh), each test in a
/// bucket of its own. Runs only when ``S3TestStore`` is configured.
@Suite(.enabled(if: S3TestStore.configured, "set COFFER_TEST_S3_ENDPOINT, COFFER_TEST_S3_ACCESS_KEY and COFFER_TEST_S3_SECRET_KEY"))
struct S3IntegrationTests {
    /// `count` bytes that differ with `seed` and along the buffer (a pattern, so that a part moved or
    /// repeated changes the digest).
    static func bytes(_ count: Int, seed: UInt8) -> ByteBuffer {
        let pattern = (0..<65_521).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed) &+ $0 >> 8) } // a prime length
        var buffer = ByteBuffer()
        buffer.reserveCapacity(count)
        while buffer.readableBytes < count {
            buffer.writeBytes(pattern.prefix(count - buffer.readableBytes))
        }
        return buffer
    }

    static func sha256(_ buffer: ByteBuffer) -> SHA256.Digest {
        buffer.withUnsafeReadableBytes { SHA256.hash(data: $0) }
    }

    @Test func headBucketAcceptsTheCredentialsAndTheBucket() async throws {
        try await S3TestStore.withBucket { client, _ in
            try await client.headBucket()
        }
    }

    @Test func aWrongSecretIsACredentialsError() async throws {
        try await S3TestStore.withBucket { client, http in
            let wrong = S3Credentials(accessKeyID: S3TestStore.credentials.accessKeyID, secretAccessKey: "not-the-secret-XYZ")
            let impostor = S3Client(location: client.location, credentials: wrong, httpClient: http)
            let head = await #expect(throws: S3Error.self) { try await impostor.headBucket() }
            #expect(head == .credentialsRejected(code: nil))
            // With a body, the store says which: the secret (SignatureDoesNotMatch).
            let get = await #expect(throws: S3Error.self) { try await impostor.getObject(key: "k") }
            #expect(get == .credentialsRejected(code: "SignatureDoesNotMatch"))
            #expect(get?.description.contains("not-the-secret-XYZ") == false)
            let unknown = S3Client(location: client.location, credentials: S3Credentials(accessKeyID: "NOSUCHKEYID", secretAccessKey: "x"), httpClient: http)
            let unknownError = await #expect(throws: S3Error.self) { var pages = unknown.listObjects().makeAsyncIterator(); _ = try await pages.next() }
            #expect(unknownError == .credentialsRejected(code: "InvalidAccessKeyId"))
        }
    }

    @Test func aMissingBucketIsSaidSo() async throws {
        try await S3TestStore.withHTTPClient { http in
            let location = try S3Location(endpoint: S3TestStore.endpoint, bucket: S3TestStore.bucketName())
            let client = S3Client(location: location, credentials: S3TestStore.credentials, httpClient: http)
            let error = await #expect(throws: S3Error.self) { try await client.headBucket() }
            #expect(error == .bucketMissing(bucket: location.bucket, endpoint: S3TestStore.endpoint))
            #expect(error?.description == "bucket '\(location.bucket)' does not exist at \(S3TestStore.endpoint) (404 NoSuchBucket)")
            let listError = await #expect(throws: S3Error.self) { try await client.listMultipartUploads() }
            #expect(listError == .bucketMissing(bucket: location.bucket, endpoint: S3TestStore.endpoint))
        }
    }

    @Test func putHeadGetWholeAndRanges() async throws {
        try await S3TestStore.withBucket { client, _ in
            let body = Self.bytes(100_000, seed: 7)
            let etag = try await client.putObject(key: "blobs/ab/c d+é$&.bin", body: body)
            #expect(etag != nil)

            let info = try #require(try await client.headObject(key: "blobs/ab/c d+é$&.bin"))
            #expect(info == S3ObjectInfo(size: 100_000, etag: etag))

            #expect(try await client.getBytes(key: "blobs/ab/c d+é$&.bin", limit: 100_000) == body)

            let stream = try #require(try await client.getObject(key: "blobs/ab/c d+é$&.bin", range: .bytes(10..<1010)))
            #expect(stream.status == 206)
            #expect(stream.contentLength == 1000)
            #expect(stream.contentRange == S3ContentRange(range: 10..<1010, size: 100_000))
            #expect(stream.objectSize == 100_000)
            var received = ByteBuffer()
            for try await var piece in stream.body { received.writeBuffer(&piece) }
            #expect(received == body.getSlice(at: 10, length: 1000))

            #expect(try await client.getBytes(key: "blobs/ab/c d+é$&.bin", range: .suffix(10), limit: 10) == body.getSlice(at: 99_990, length: 10))
            #expect(try await client.getBytes(key: "blobs/ab/c d+é$&.bin", range: .suffix(500_000), limit: 100_000) == body)
            #expect(try await client.getBytes(key: "blobs/ab/c d+é$&.bin", range: .from(99_999), limit: 1) == body.getSlice(at: 99_999, length: 1))
            #expect(try await client.getBytes(key: "blobs/ab/c d+é$&.bin", range: .bytes(99_000..<Int64.max), limit: 1000) == body.getSlice(at: 99_000, length: 1000))

            let pastTheEnd = await #expect(throws: S3Error.self) { try await client.getObject(key: "blobs/ab/c d+é$&.bin", range: .from(100_000)) }
            // The size is reported when the store sends `Content-Range: bytes */size` (S3 does; RGW 16.2 does not).
            #expect(pastTheEnd == .rangeNotSatisfiable(key: "blobs/ab/c d+é$&.bin", size: 100_000) || pastTheEnd == .rangeNotSatisfiable(key: "blobs/ab/c d+é$&.bin", size: nil))
            await #expect(throws: S3Error.invalidArgument("'blobs/ab/c d+é$&.bin' answers 100000 bytes, more than the 99999 asked for")) {
                try await client.getBytes(key: "blobs/ab/c d+é$&.bin", limit: 99_999)
            }

            #expect(try await client.headObject(key: "blobs/none") == nil)
            #expect(try await client.getObject(key: "blobs/none") == nil)
            #expect(try await client.getBytes(key: "blobs/none", range: .suffix(1), limit: 1) == nil)

            // An empty object.
            try await client.putObject(key: "empty", body: ByteBuffer())
            #expect(try await client.headObject(key: "empty")?.size == 0)
            #expect(try await client.getBytes(key: "empty", limit: 0) == ByteBuffer())
        }
    }

    @Test func multipartUploadReadsBackTheSameBytes() async throws {
        try await S3TestStore.withBucket { client, _ in
            let parts = [Self.bytes(5 * 1024 * 1024, seed: 1), Self.bytes(5 * 1024 * 1024 + 17, seed: 2), Self.bytes(300_001, seed: 3)]
            var whole = SHA256()
            for part in parts { part.withUnsafeReadableBytes { whole.update(bufferPointer: $0) } }
            let expected = whole.finalize()

            let id = try await client.createMultipartUpload(key: "big/model.bin")
            var etags: [(number: Int, etag: String)] = []
            for (index, part) in parts.enumerated() {
                etags.append((index + 1, try await client.uploadPart(key: "big/model.bin", uploadID: id, partNumber: index + 1, body: part)))
            }
            #expect(try await client.listMultipartUploads(prefix: "big/").map(\.uploadID) == [id])
            try await client.completeMultipartUpload(key: "big/model.bin", uploadID: id, parts: etags)
            #expect(try await client.listMultipartUploads().isEmpty)

            let total = Int64(parts.map(\.readableBytes).reduce(0, +))
            #expect(try await client.headObject(key: "big/model.bin")?.size == total)
            let stream = try #require(try await client.getObject(key: "big/model.bin"))
            #expect(stream.status == 200)
            #expect(stream.objectSize == total)
            var hash = SHA256()
            var pieces = 0
            for try await piece in stream.body {
                pieces += 1
                piece.withUnsafeReadableBytes { hash.update(bufferPointer: $0) }
            }
            #expect(hash.finalize() == expected)
            #expect(pieces > 1) // streamed, not handed over in one piece
        }
    }

    @Test func completingWithAWrongETagFails() async throws {
        try await S3TestStore.withBucket { client, _ in
            let id = try await client.createMultipartUpload(key: "k")
            _ = try await client.uploadPart(key: "k", uploadID: id, partNumber: 1, body: Self.bytes(100, seed: 0))
            let error = await #expect(throws: S3Error.self) {
                try await client.completeMultipartUpload(key: "k", uploadID: id, parts: [(1, "\"00000000000000000000000000000000\"")])
            }
            #expect(error == .unexpectedResponse(operation: "CompleteMultipartUpload", status: 400, code: "InvalidPart"))
            #expect(try await client.headObject(key: "k") == nil)
        }
    }

    @Test func abortLeavesNoUploadAndListingFollowsPages() async throws {
        try await S3TestStore.withBucket { client, _ in
            var ids: [String] = []
            for key in ["u/a", "u/b", "u/b", "u/c", "other"] { ids.append(try await client.createMultipartUpload(key: key)) }
            let listed = try await client.listMultipartUploads(prefix: "u/", pageSize: 1)
            #expect(listed.count == 4)
            #expect(Set(listed.map(\.uploadID)) == Set(ids.prefix(4)))
            #expect(listed.allSatisfy { abs($0.initiated.timeIntervalSinceNow) < 600 })
            // A page at a time: one upload per page, the four in order of the markers, then the end.
            var pages: [[S3MultipartUpload]] = []
            for try await page in client.multipartUploads(prefix: "u/", pageSize: 1) { pages.append(page) }
            #expect(pages.allSatisfy { $0.count <= 1 } && pages.count >= 4)
            #expect(pages.flatMap { $0 } == listed)

            try await client.abortMultipartUpload(key: "u/b", uploadID: ids[1])
            try await client.abortMultipartUpload(key: "u/b", uploadID: ids[1]) // already gone: not an error
            let after = try await client.listMultipartUploads(pageSize: 2)
            #expect(Set(after.map(\.uploadID)) == Set([ids[0], ids[2], ids[3], ids[4]]))

            // Aborting page by page, one upload a page: every one picked goes, whatever the store
            // makes of a marker whose upload is gone; the others stay.
            #expect(try await client.abortMultipartUploads(prefix: "u/", pageSize: 1) { $0.uploadID != ids[2] } == 2)
            #expect(Set(try await client.listMultipartUploads().map(\.uploadID)) == [ids[2], ids[4]])

            // When an upload's newest part was stored: none yet, then about now; gone once aborted.
            #expect(try await client.lastPartStored(key: "u/b", uploadID: ids[2]) == nil)
            _ = try await client.uploadPart(key: "u/b", uploadID: ids[2], partNumber: 1, body: ByteBuffer(repeating: 7, count: 5 << 20))
            let stored = try #require(try await client.lastPartStored(key: "u/b", uploadID: ids[2]))
            #expect(abs(stored.timeIntervalSinceNow) < 600)
            try await client.abortMultipartUpload(key: "u/b", uploadID: ids[2])
            #expect(try await client.lastPartStored(key: "u/b", uploadID: ids[2]) == nil)
        }
    }

    @Test func listObjectsPaginatesUnderTheKeyPrefix() async throws {
        try await S3TestStore.withBucket(keyPrefix: "tenant/") { client, _ in
            let keys = (0..<7).map { "blobs/\($0)-x y" } + ["other/z"]
            for key in keys { try await client.putObject(key: key, body: ByteBuffer(string: key)) }
            var pages: [[S3ObjectSummary]] = []
            for try await page in client.listObjects(prefix: "blobs/", pageSize: 2) { pages.append(page) }
            #expect(pages.count >= 4)
            #expect(pages.allSatisfy { $0.count <= 2 })
            let listed = pages.flatMap { $0 }
            #expect(listed.map(\.key) == keys.prefix(7).sorted())
            #expect(listed.allSatisfy { $0.size == Int64($0.key.utf8.count) && abs($0.lastModified.timeIntervalSinceNow) < 600 })
            var all: [String] = []
            for try await page in client.listObjects() { all += page.map(\.key) }
            #expect(all == keys.sorted())
        }
    }

    @Test func presignedGETWorksUntamperedAndUnexpiredOnly() async throws {
        try await S3TestStore.withBucket { client, http in
            let body = Self.bytes(4096, seed: 9)
            try await client.putObject(key: "shared/model file.bin", body: body)
            func fetch(_ url: String) async throws -> (Int, ByteBuffer) {
                let response = try await http.execute(HTTPClientRequest(url: url), timeout: .seconds(10))
                return (Int(response.status.code), try await response.body.collect(upTo: 1 << 20))
            }
            let url = try client.presignedGET(key: "shared/model file.bin", expires: 60, now: Date())
            let carriesTheSecret = url.contains(S3TestStore.credentials.secretAccessKey) // a Bool, so a failure cannot print the secret
            #expect(!carriesTheSecret)
            let (status, received) = try await fetch(url)
            #expect(status == 200)
            #expect(received == body)

            var tampered = Array(url.utf8)
            tampered[tampered.count - 1] = tampered.last == UInt8(ascii: "0") ? UInt8(ascii: "1") : UInt8(ascii: "0")
            #expect(try await fetch(String(decoding: tampered, as: UTF8.self)).0 == 403)
            let otherKey = url.replacingOccurrences(of: "model%20file.bin", with: "model%20file.bim")
            #expect(otherKey != url)
            #expect(try await fetch(otherKey).0 == 403)
            let expired = try client.presignedGET(key: "shared/model file.bin", expires: 1, now: Date(timeIntervalSinceNow: -120))
            #expect(try await fetch(expired).0 == 403)
        }
    }

    @Test func deleteRemovesAndIsIdempotent() async throws {
        try await S3TestStore.withBucket { client, _ in
            try await client.putObject(key: "gone", body: ByteBuffer(string: "x"))
            #expect(try await client.headObject(key: "gone") != nil)
            try await client.deleteObject(key: "gone")
            #expect(try await client.headObject(key: "gone") == nil)
            try await client.deleteObject(key: "gone")
        }
    }

    @Test func aSkewedClockIsSaidSo() async throws {
        try await S3TestStore.withBucket { client, http in
            let skewed = S3Client(location: client.location, credentials: S3TestStore.credentials, httpClient: http, clock: { Date(timeIntervalSinceNow: -3600) })
            let error = await #expect(throws: S3Error.self) { var pages = skewed.listObjects().makeAsyncIterator(); _ = try await pages.next() }
            #expect(error == .clockSkewed)
        }
    }
}
