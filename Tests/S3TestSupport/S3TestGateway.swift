import AsyncHTTPClient
import CofferS3
import Foundation

/// The S3 gateway tests run against: COFFER_TEST_S3_ENDPOINT (e.g. `http://127.0.0.1:17480`, a Ceph
/// RADOS Gateway that .ci/rgw-start.sh starts on loopback) with COFFER_TEST_S3_ACCESS_KEY and
/// COFFER_TEST_S3_SECRET_KEY. All three must be set for the S3 tests to run; there are no default keys.
public enum S3TestGateway {
    static let environment = ProcessInfo.processInfo.environment

    /// Whether a gateway is named.
    public static var configured: Bool {
        ["COFFER_TEST_S3_ENDPOINT", "COFFER_TEST_S3_ACCESS_KEY", "COFFER_TEST_S3_SECRET_KEY"].allSatisfy { !(environment[$0] ?? "").isEmpty }
    }

    /// The gateway's address.
    public static var endpoint: String { environment["COFFER_TEST_S3_ENDPOINT"] ?? "" }
    /// The test user's access key.
    public static var accessKey: String { environment["COFFER_TEST_S3_ACCESS_KEY"] ?? "" }
    /// The test user's secret key.
    public static var secretKey: String { environment["COFFER_TEST_S3_SECRET_KEY"] ?? "" }

    /// A bucket name no other test uses.
    public static func bucketName() -> String { "coffer-test-" + String(UInt64.random(in: 0...UInt64.max), radix: 36) }

    /// A client of `bucket` (under `prefix`) over AsyncHTTPClient's shared client.
    public static func client(bucket: String, prefix: String = "") throws -> S3Client {
        S3Client(location: try S3Location(endpoint: endpoint, bucket: bucket, keyPrefix: prefix),
                 credentials: S3Credentials(accessKeyID: accessKey, secretAccessKey: secretKey), httpClient: HTTPClient.shared)
    }

    /// A new, empty bucket; its name.
    public static func makeBucket() async throws -> String {
        let name = bucketName()
        try await client(bucket: name).createBucket()
        return name
    }

    /// Unfinished multipart uploads and objects under `PREFIX/incoming/`: what a failed upload
    /// must not leave behind.
    public static func leftovers(bucket: String, prefix: String = "") async throws -> Int {
        let client = try client(bucket: bucket, prefix: prefix)
        var count = try await client.listMultipartUploads().count
        for try await page in client.listObjects(prefix: "incoming/") { count += page.count }
        return count
    }

    /// Every object key of the bucket (under `prefix`).
    public static func keys(bucket: String, prefix: String = "") async throws -> [String] {
        var keys: [String] = []
        for try await page in try client(bucket: bucket, prefix: prefix).listObjects() { keys += page.map(\.key) }
        return keys
    }

    /// Removes every object and unfinished upload of the bucket, then the bucket (best effort:
    /// a bucket left behind on a throwaway gateway is only clutter).
    public static func removeBucket(_ bucket: String) async {
        guard let client = try? client(bucket: bucket) else { return }
        for upload in (try? await client.listMultipartUploads()) ?? [] {
            try? await client.abortMultipartUpload(key: upload.key, uploadID: upload.uploadID)
        }
        do {
            for try await page in client.listObjects() {
                for object in page { try? await client.deleteObject(key: object.key) }
            }
        } catch {}
        try? await client.deleteBucket()
    }
}
