@testable import CofferServer
import Foundation
import S3TestSupport
import Testing

/// COFFER_BLOB_STORE and the AWS_* variables: read strictly, never shown, and checked against the
/// store at start.
@Suite("Object store settings")
struct ObjectStoreSettingsTests {
    static let credentials = ["AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI-K7MDENG-bPxRfiCYEXAMPLEKEY"]

    @Test("a bucket, prefix, endpoint, region and addressing are read; the secret never shows in a description or dump")
    func read() throws {
        let configuration = try ServerConfiguration.fromEnvironment(Self.credentials.merging([
            "COFFER_BLOB_STORE": "s3://models-1/prod/coffer", "AWS_ENDPOINT_URL_S3": "http://127.0.0.1:7480/",
            "AWS_REGION": "eu-west-3", "AWS_SESSION_TOKEN": "FQoGZXIvYXdzEXAMPLETOKEN", "COFFER_S3_PRESIGN": "1",
            "COFFER_S3_UPLOAD_MEMORY": "104857600",
        ]) { $1 })
        let store = try #require(configuration.objectStore)
        #expect(store.uploadMemory == 100 << 20)
        #expect(store.bucket == "models-1" && store.prefix == "prod/coffer/" && store.region == "eu-west-3")
        #expect(store.endpoint == "http://127.0.0.1:7480" && store.addressing == .path && store.presign)
        #expect(store.sessionToken == "FQoGZXIvYXdzEXAMPLETOKEN")
        var dumped = ""
        dump(configuration, to: &dumped)
        for shown in [store.description, String(describing: configuration), String(reflecting: store), dumped] {
            #expect(!shown.contains("wJalrXUtnFEMI") && !shown.contains("EXAMPLETOKEN"), "\(shown)")
        }
        // AWS itself: virtual-host addressing, the regional endpoint.
        let aws = try #require(try ServerConfiguration.fromEnvironment(Self.credentials.merging(["COFFER_BLOB_STORE": "s3://models-1"]) { $1 }).objectStore)
        #expect(aws.addressing == .virtual && aws.resolvedEndpoint == "https://s3.us-east-1.amazonaws.com" && aws.prefix.isEmpty && !aws.presign)
        #expect(aws.uploadMemory == 1 << 30)
        // A bucket's streams each hold a store connection: as many by default as the pool keeps.
        #expect(try ServerConfiguration.fromEnvironment(Self.credentials.merging(["COFFER_BLOB_STORE": "s3://models-1"]) { $1 }).resolvedBlobStreams == 256)
        let generic = try ServerConfiguration.fromEnvironment(Self.credentials.merging([
            "COFFER_BLOB_STORE": "s3://models-1", "AWS_ENDPOINT_URL": "https://r2.example.com", "COFFER_S3_ADDRESSING": "virtual"]) { $1 })
        #expect(generic.objectStore?.endpoint == "https://r2.example.com" && generic.objectStore?.addressing == .virtual)
    }

    @Test("a store setting it cannot use, or missing credentials, is refused naming the variable and never its value",
          arguments: [
            ["COFFER_BLOB_STORE": "models"], ["COFFER_BLOB_STORE": "s3://"], ["COFFER_BLOB_STORE": "s3://ab"],
            ["COFFER_BLOB_STORE": "s3://Models"], ["COFFER_BLOB_STORE": "s3://-models"], ["COFFER_BLOB_STORE": "s3://models/../x"],
            ["COFFER_BLOB_STORE": "s3://models/a b"], ["COFFER_BLOB_STORE": "gs://models"],
            ["AWS_ACCESS_KEY_ID": ""], ["AWS_SECRET_ACCESS_KEY": ""], ["AWS_SECRET_ACCESS_KEY": "has space"],
            ["AWS_REGION": "EU West"], ["AWS_ENDPOINT_URL_S3": "127.0.0.1:7480"], ["AWS_ENDPOINT_URL": "ftp://store"],
            ["COFFER_S3_ADDRESSING": "host"], ["COFFER_S3_PRESIGN": "sometimes"], ["COFFER_BLOB_DIR": "/srv/blobs"],
            ["COFFER_S3_UPLOAD_MEMORY": "41943039"], ["COFFER_S3_UPLOAD_MEMORY": "1GiB"], ["COFFER_S3_UPLOAD_MEMORY": "99999999999999999999"],
            ["COFFER_MAX_BLOB_SIZE": "83886080001"],
          ])
    func refused(_ change: [String: String]) {
        let environment = Self.credentials.merging(["COFFER_BLOB_STORE": "s3://models"]) { $1 }.merging(change) { $1 }
        #expect {
            try ServerConfiguration.fromEnvironment(environment)
        } throws: { error in
            guard let error = error as? SettingError else { return false }
            let line = error.description
            return change.keys.contains(error.setting) && !line.contains("\n") && !line.contains("wJalrXUtnFEMI")
                && change.values.allSatisfy { $0.isEmpty || !line.contains($0) || error.accepts.contains($0) }
        }
    }

    @Test("a bucket takes blobs up to 10,000 parts: COFFER_MAX_BLOB_SIZE up to that is accepted, one byte more refused at the start")
    func largestBlob() throws {
        #expect(S3Upload.largestBlob == 83_886_080_000)
        let environment = Self.credentials.merging(["COFFER_BLOB_STORE": "s3://models", "COFFER_MAX_BLOB_SIZE": "83886080000"]) { $1 }
        #expect(try ServerConfiguration.fromEnvironment(environment).maximumBlobSize == S3Upload.largestBlob)
        // Without a bucket the folder store has no part limit.
        #expect(try ServerConfiguration.fromEnvironment(["COFFER_MAX_BLOB_SIZE": "83886080001"]).maximumBlobSize == 83_886_080_001)
    }

    @Test("presigning, addressing or an upload budget without a bucket is refused, not ignored",
          arguments: ["COFFER_S3_PRESIGN", "COFFER_S3_ADDRESSING", "COFFER_S3_UPLOAD_MEMORY"])
    func withoutBucket(_ variable: String) {
        #expect(throws: SettingError(setting: variable, accepts: "unset without COFFER_BLOB_STORE (it applies to a bucket)")) {
            try ServerConfiguration.fromEnvironment([variable: "1"])
        }
    }

    @Test("a wrong secret, a missing bucket or an unreachable endpoint stops the start with one line naming the setting, no secret",
          .enabled(if: S3TestGateway.configured, "set COFFER_TEST_S3_ENDPOINT, COFFER_TEST_S3_ACCESS_KEY and COFFER_TEST_S3_SECRET_KEY"))
    func refusedAtStart() async throws {
        let good = try await ObjectStoreSettings.testBucket()
        defer { Task { await S3TestGateway.removeBucket(good.bucket) } }
        var wrongSecret = good
        wrongSecret.secretAccessKey = "not-the-secret-" + UUID().uuidString
        var missing = good
        missing.bucket = S3TestGateway.bucketName()
        var unreachable = good
        unreachable.endpoint = "http://127.0.0.1:1"
        for (settings, says) in [(wrongSecret, "AWS_SECRET_ACCESS_KEY"), (missing, "does not exist"), (unreachable, "cannot be reached")] {
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-s3-start-" + UUID().uuidString).path
            defer { try? FileManager.default.removeItem(atPath: folder) }
            var configuration = ServerConfiguration(dataDirectory: folder, hostname: "127.0.0.1", port: 0)
            configuration.objectStore = settings
            do {
                let server = try await TestServer.start(configuration)
                try await server.stop()
                Issue.record("started with \(says)")
            } catch {
                let line = String(describing: error)
                #expect(line.contains(says) && line.contains("COFFER_BLOB_STORE") && !line.contains("\n"), "\(line)")
                #expect(!line.contains(settings.secretAccessKey), "the secret is in: \(line)")
            }
        }
    }
}
