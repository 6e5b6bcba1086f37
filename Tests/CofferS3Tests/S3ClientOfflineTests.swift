import AsyncHTTPClient
import Foundation
import NIOCore
import NIOPosix
import Testing
@testable import CofferS3

/// What the client says when there is no store to talk to: these need no store and always run.
@Suite struct S3ClientOfflineTests {
    /// AsyncHTTPClient retries a refused connection until its connect timeout, then reports the refusal.
    @Test func aClosedPortIsUnreachableAndSaysSo() async throws {
        try await S3TestStore.withHTTPClient(connectTimeout: .milliseconds(500)) { http in
            let location = try S3Location(endpoint: "http://127.0.0.1:1", bucket: "abc")
            let client = S3Client(location: location, credentials: S3Credentials(accessKeyID: "AKID", secretAccessKey: "SECRET-VALUE"), httpClient: http)
            let error = await #expect(throws: S3Error.self) { try await client.headBucket() }
            #expect(error == .unreachable(endpoint: "http://127.0.0.1:1", reason: "connection refused"))
            #expect(error?.description == "the store at http://127.0.0.1:1 cannot be reached (AWS_ENDPOINT_URL_S3): connection refused")
            #expect(error?.description.contains("SECRET-VALUE") == false)
        }
    }

    /// A server that accepts connections and never answers: the request timeout ends the wait. The
    /// reason is the request deadline's own (a read timeout or a refusal says something else), so it
    /// shows which mechanism ended the wait; no wall-clock bound (a shared machine stalls tests for
    /// tens of seconds), only a limit that turns a wait that never ends into a failure.
    @Test(.timeLimit(.minutes(1))) func aSilentStoreTimesOut() async throws {
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { _ in MultiThreadedEventLoopGroup.singleton.any().makeSucceededVoidFuture() }
            .bind(host: "127.0.0.1", port: 0).get()
        let port = try #require(server.localAddress?.port)
        try await S3TestStore.withHTTPClient { http in
            let location = try S3Location(endpoint: "http://127.0.0.1:\(port)", bucket: "abc")
            let client = S3Client(location: location, credentials: S3Credentials(accessKeyID: "AKID", secretAccessKey: "SK"), httpClient: http, requestTimeout: .milliseconds(300))
            let error = await #expect(throws: S3Error.self) { try await client.headObject(key: "k") }
            #expect(error == .unreachable(endpoint: "http://127.0.0.1:\(port)", reason: "no answer within the request timeout"))
        }
        try await server.close()
    }

    @Test func callerMistakesAreRefusedBeforeAnythingIsSent() async throws {
        try await S3TestStore.withHTTPClient { http in
            // Port 1 is closed: a request that were sent would fail as unreachable, not as invalidArgument.
            let client = S3Client(location: try S3Location(endpoint: "http://127.0.0.1:1", bucket: "abc"), credentials: S3Credentials(accessKeyID: "A", secretAccessKey: "S"), httpClient: http)
            for partNumber in [0, 10_001, -1] {
                await #expect(throws: S3Error.invalidArgument("a part number must be 1…10000, not \(partNumber)")) {
                    try await client.uploadPart(key: "k", uploadID: "u", partNumber: partNumber, body: ByteBuffer())
                }
            }
            await #expect(throws: S3Error.self) { try await client.completeMultipartUpload(key: "k", uploadID: "u", parts: [(2, "a"), (1, "b")]) }
            await #expect(throws: S3Error.self) { try await client.completeMultipartUpload(key: "k", uploadID: "u", parts: []) }
            await #expect(throws: S3Error.self) { try await client.getObject(key: "k", range: .bytes(5..<5)) }
            await #expect(throws: S3Error.self) { try await client.putObject(key: "a/../b", body: ByteBuffer()) }
            #expect(throws: S3Error.self) { try client.presignedGET(key: "k", expires: 604_801, now: Date()) }
        }
    }
}
