import AsyncHTTPClient
@testable import CofferS3
import Foundation
import NIOCore

/// The S3 store the integration tests use: `COFFER_TEST_S3_ENDPOINT` (e.g. `http://127.0.0.1:27480`,
/// from `.ci/rgw-start.sh`) with `COFFER_TEST_S3_ACCESS_KEY` and `COFFER_TEST_S3_SECRET_KEY`. All three
/// must be set; there are no default keys. Path-style addressing (the gateway's).
enum S3TestStore {
    static let environment = ProcessInfo.processInfo.environment
    static let endpoint = environment["COFFER_TEST_S3_ENDPOINT"] ?? ""
    static let credentials = S3Credentials(
        accessKeyID: environment["COFFER_TEST_S3_ACCESS_KEY"] ?? "",
        secretAccessKey: environment["COFFER_TEST_S3_SECRET_KEY"] ?? ""
    )

    /// Whether the store is configured; the integration suite runs only then.
    static var configured: Bool {
        ["COFFER_TEST_S3_ENDPOINT", "COFFER_TEST_S3_ACCESS_KEY", "COFFER_TEST_S3_SECRET_KEY"].allSatisfy { !(environment[$0] ?? "").isEmpty }
    }

    /// A bucket name no other test uses.
    static func bucketName() -> String {
        "coffer-test-" + String(UInt64.random(in: 0...UInt64.max), radix: 36)
    }

    /// Runs `body` with an HTTP client of a short connect timeout, shut down afterwards whatever happens.
    /// The read timeout is a hang guard only: it runs while the test's task cannot take the next
    /// piece (AsyncHTTPClient stops reading then), and under CI's full parallel load the test
    /// process's two cooperative threads were held by other tests for over 30 seconds.
    static func withHTTPClient<T>(connectTimeout: TimeAmount = .seconds(5), _ body: (HTTPClient) async throws -> T) async throws -> T {
        let configuration = S3Client.httpClientConfiguration(connectTimeout: connectTimeout, readTimeout: .seconds(300))
        let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        do {
            let result = try await body(http)
            try await http.shutdown()
            return result
        } catch {
            try? await http.shutdown()
            throw error
        }
    }

    /// Runs `body` with a client of a new bucket, then empties and deletes the bucket.
    static func withBucket<T>(keyPrefix: String = "", _ body: (S3Client, HTTPClient) async throws -> T) async throws -> T {
        try await withHTTPClient { http in
            let location = try S3Location(endpoint: endpoint, bucket: bucketName(), keyPrefix: keyPrefix)
            let client = S3Client(location: location, credentials: credentials, httpClient: http)
            try await client.createBucket()
            do {
                let result = try await body(client, http)
                try await empty(client)
                return result
            } catch {
                try? await empty(client)
                throw error
            }
        }
    }

    /// Deletes every object and unfinished upload of the client's bucket, and the bucket.
    static func empty(_ client: S3Client) async throws {
        let root = S3Client(
            location: try S3Location(endpoint: endpoint, bucket: client.location.bucket), credentials: credentials,
            httpClient: client.httpClient
        )
        for upload in try await root.listMultipartUploads() {
            try await root.abortMultipartUpload(key: upload.key, uploadID: upload.uploadID)
        }
        for try await page in root.listObjects() {
            for object in page { try await root.deleteObject(key: object.key) }
        }
        try await root.deleteBucket()
    }
}
