import Foundation
import S3TestSupport
import Testing

/// The built `coffer-server` with a bucket it cannot use (COFFER_BLOB_STORE): `serve` stops with one
/// line naming the setting and exit 1, `check` with one line and exit 78; no data folder is made and
/// the secret is never printed.
@Suite("coffer-server with an object store it cannot use",
       .enabled(if: S3TestGateway.configured, "set COFFER_TEST_S3_ENDPOINT, COFFER_TEST_S3_ACCESS_KEY and COFFER_TEST_S3_SECRET_KEY"))
struct ServerObjectStoreStartTests {
    @Test("a wrong secret, a missing bucket and a closed port each stop serve and check with one line naming the setting",
          arguments: ["secret", "bucket", "endpoint"])
    func refused(_ wrong: String) async throws {
        let bucket = try await S3TestGateway.makeBucket()
        defer { Task { await S3TestGateway.removeBucket(bucket) } }
        let secret = wrong == "secret" ? "wrong-" + UUID().uuidString : S3TestGateway.secretKey
        let environment = [
            "COFFER_BLOB_STORE": "s3://" + (wrong == "bucket" ? S3TestGateway.bucketName() : bucket),
            "AWS_ENDPOINT_URL_S3": wrong == "endpoint" ? "http://127.0.0.1:1" : S3TestGateway.endpoint,
            "AWS_ACCESS_KEY_ID": S3TestGateway.accessKey, "AWS_SECRET_ACCESS_KEY": secret,
        ]
        let says = ["secret": "AWS_SECRET_ACCESS_KEY", "bucket": "does not exist", "endpoint": "cannot be reached (AWS_ENDPOINT_URL_S3)"][wrong]!
        for (arguments, status) in [(["serve", "--port", "0"], Int32(1)), (["check"], Int32(78))] {
            let (result, exists) = try await ServerSettingsTests.run(arguments, environment: environment)
            #expect(result.status == status, "\(arguments): \(result.stderr)")
            let lines = result.stderr.split(separator: "\n")
            #expect(lines.count == 1 && lines.first?.contains(says) == true && lines.first?.contains("COFFER_BLOB_STORE") == true,
                    "\(arguments): \(result.stderr)")
            #expect(!result.stderr.contains(secret) && !result.stdout.contains(secret), "\(arguments): the secret is printed")
            #expect(!exists, "\(arguments): the data folder was made before the refusal")
        }
    }
}
