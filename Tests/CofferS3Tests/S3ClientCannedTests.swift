import AsyncHTTPClient
import Crypto
import Foundation
import NIOCore
import NIOHTTP1
import Testing
@testable import CofferS3

/// The client's own paths against scripted answers (``CannedStore``): what it sends, and how it
/// treats answers a real store gives rarely.
@Suite struct S3ClientCannedTests {
    static func withStore(_ answer: @escaping @Sendable (HTTPRequestHead) -> CannedStore.Answer, _ body: (S3Client, CannedStore) async throws -> Void) async throws {
        let store = CannedStore(answer: answer)
        try await store.start()
        do {
            try await S3TestStore.withHTTPClient { http in
                let location = try S3Location(endpoint: store.endpoint, bucket: "canned", keyPrefix: "p/")
                let client = S3Client(location: location, credentials: S3Credentials(accessKeyID: "AKID", secretAccessKey: "SECRET-VALUE", sessionToken: "TOKEN-VALUE"), httpClient: http)
                try await body(client, store)
            }
        } catch {
            try? await store.stop()
            throw error
        }
        try await store.stop()
    }

    @Test func sendsTheSignedPathHashAndHost() async throws {
        try await Self.withStore({ _ in .init(headers: [("ETag", "\"e\"")]) }) { client, store in
            let body = ByteBuffer(string: "part body")
            #expect(try await client.uploadPart(key: "a b/ü", uploadID: "id/+=", partNumber: 3, body: body) == "\"e\"")
            let request = try #require(store.requests.first)
            #expect(request.head.method == .PUT)
            #expect(request.head.uri == "/canned/p/a%20b/%C3%BC?partNumber=3&uploadId=id%2F%2B%3D")
            #expect(request.head.headers["host"] == [client.location.hostHeader])
            #expect(request.head.headers["x-amz-content-sha256"] == [SHA256.hash(data: Array("part body".utf8)).map { String(format: "%02x", $0) }.joined()])
            #expect(request.head.headers["x-amz-security-token"] == ["TOKEN-VALUE"])
            #expect(request.head.headers["content-length"] == ["9"])
            #expect(request.body == body)
            let authorization = try #require(request.head.headers["authorization"].first)
            #expect(authorization.hasPrefix("AWS4-HMAC-SHA256 Credential=AKID/"))
            #expect(authorization.contains("SignedHeaders=host;x-amz-content-sha256;x-amz-date;x-amz-security-token,"))
            #expect(!authorization.contains("SECRET-VALUE"))
        }
    }

    @Test func aCompletionThatAnswers200WithAnErrorFails() async throws {
        try await Self.withStore({ _ in .init(body: ByteBuffer(string: ResponseSamples.completedWithError)) }) { client, _ in
            let error = await #expect(throws: S3Error.self) { try await client.completeMultipartUpload(key: "k", uploadID: "u", parts: [(1, "\"a\""), (2, "\"b&\"")]) }
            #expect(error == .unexpectedResponse(operation: "CompleteMultipartUpload", status: 200, code: "InternalError"))
        }
        try await Self.withStore({ _ in .init(body: ByteBuffer(string: ResponseSamples.completed)) }) { client, store in
            try await client.completeMultipartUpload(key: "k", uploadID: "u", parts: [(1, "\"a\""), (2, "\"b&\"")])
            let sent = String(buffer: try #require(store.requests.first).body)
            #expect(sent.contains("<Part><PartNumber>2</PartNumber><ETag>&quot;b&amp;&quot;</ETag></Part>"))
        }
    }

    @Test func anErrorOrListingThatTricklesEndsWithinTheRequestTimeout() async throws {
        // 400 bytes a byte every 25 ms (10 s in all), each well within the read timeout; the
        // client's request timeout is 1 s.
        let slow = String(repeating: "<Error><Code>AccessDenied</Code></Error>", count: 10)
        try await Self.withStore({ head in
            .init(status: head.method == .DELETE ? .forbidden : .ok, body: ByteBuffer(string: slow), trickle: .milliseconds(25))
        }) { client, store in
            let short = S3Client(location: client.location, credentials: S3Credentials(accessKeyID: "AKID", secretAccessKey: "SECRET-VALUE"),
                                 httpClient: client.httpClient, requestTimeout: .seconds(1))
            // An error's body: given up, the status still decides.
            let error = await #expect(throws: S3Error.self) { try await short.deleteObject(key: "k") }
            #expect(error == .credentialsRejected(code: nil))
            // A listing page: refused, saying why.
            let listing = await #expect(throws: S3Error.self) { try await short.listMultipartUploads() }
            #expect(listing == .interrupted(operation: "ListMultipartUploads", reason: "the answer's body took longer than the request timeout"))
            // Both gave up long before the store had sent either body.
            #expect(store.trickledBytes < 2 * slow.utf8.count)
        }
    }

    @Test func aBodyShorterThanItsLengthIsAnError() async throws {
        try await Self.withStore({ _ in .init(body: ByteBuffer(repeating: 7, count: 1000), announcedLength: 5000) }) { client, _ in
            let stream = try #require(try await client.getObject(key: "k"))
            #expect(stream.contentLength == 5000)
            let error = await #expect(throws: S3Error.self) {
                for try await _ in stream.body {}
            }
            #expect(error == .interrupted(operation: "GetObject", reason: "stream ended at an unexpected time with 4000 bytes of the body still due"))
        }
    }

    @Test func answersThatContradictThemselvesAreMalformed() async throws {
        // A 206 whose Content-Range does not match its length.
        try await Self.withStore({ _ in .init(status: .partialContent, headers: [("Content-Range", "bytes 0-99/1000")], body: ByteBuffer(repeating: 1, count: 10)) }) { client, _ in
            await #expect(throws: S3Error.malformedResponse(operation: "GetObject", reason: "a 206 without a Content-Range that matches its length")) {
                try await client.getObject(key: "k", range: .bytes(0..<100))
            }
        }
        // A listing page that says there is more but never advances.
        let page = #"<ListBucketResult><IsTruncated>true</IsTruncated><NextContinuationToken>same</NextContinuationToken></ListBucketResult>"#
        try await Self.withStore({ _ in .init(body: ByteBuffer(string: page)) }) { client, _ in
            await #expect(throws: S3Error.malformedResponse(operation: "ListObjectsV2", reason: "the continuation token did not advance")) {
                for try await _ in client.listObjects() {}
            }
        }
        // A listing whose tokens go round (A → B → A …): refused at the first one named again,
        // not listed without end.
        try await Self.withStore({ head in
            let next = head.uri.contains("continuation-token=a") ? "b" : "a"
            return .init(body: ByteBuffer(string: "<ListBucketResult><IsTruncated>true</IsTruncated><NextContinuationToken>\(next)</NextContinuationToken></ListBucketResult>"))
        }) { client, store in
            await #expect(throws: S3Error.malformedResponse(operation: "ListObjectsV2", reason: "the continuation token did not advance")) {
                for try await _ in client.listObjects() {}
            }
        }
        // A key outside the prefix asked for.
        let stranger = #"<ListBucketResult><Contents><Key>q/x</Key><Size>1</Size><LastModified>2013-05-24T00:00:00Z</LastModified></Contents></ListBucketResult>"#
        try await Self.withStore({ _ in .init(body: ByteBuffer(string: stranger)) }) { client, _ in
            await #expect(throws: S3Error.malformedResponse(operation: "ListObjectsV2", reason: "a key outside the prefix asked for")) {
                for try await _ in client.listObjects() {}
            }
        }
    }

    @Test func anOversizedAnswerIsRefusedUnread() async throws {
        let huge = ByteBuffer(repeating: UInt8(ascii: " "), count: S3Client.maximumResponseBytes + 1)
        try await Self.withStore({ _ in .init(body: huge) }) { client, _ in
            await #expect(throws: S3Error.malformedResponse(operation: "ListMultipartUploads", reason: "the body is longer than \(S3Client.maximumResponseBytes) bytes")) {
                try await client.listMultipartUploads()
            }
        }
    }

    @Test func aRedirectIsNotFollowed() async throws {
        try await Self.withStore({ _ in .init(status: .movedPermanently, headers: [("Location", "http://127.0.0.1:1/elsewhere")]) }) { client, store in
            await #expect(throws: S3Error.unexpectedResponse(operation: "PutObject", status: 301, code: nil)) {
                try await client.putObject(key: "k", body: ByteBuffer(string: "x"))
            }
            #expect(store.requests.count == 1)
        }
    }
}
