@testable import CofferServer
import Foundation
import S3TestSupport
import Testing

/// The blob stores a test server can use: the folder always; a fresh bucket of the test gateway
/// (``S3TestGateway``) when one is named.
enum TestStore: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case folder
    case s3

    /// The stores the "both stores" tests run against here.
    static var available: [TestStore] { S3TestGateway.configured ? [.folder, .s3] : [.folder] }

    var testDescription: String { self == .folder ? "folder" : "S3 (Ceph RGW)" }
}

extension ObjectStoreSettings {
    /// A new bucket of the test gateway, as COFFER_BLOB_STORE=s3://BUCKET/coffer/ and the AWS_*
    /// variables name it (with a key prefix, so the prefix is exercised too).
    static func testBucket(secret: String? = nil) async throws -> ObjectStoreSettings {
        ObjectStoreSettings(
            bucket: try await S3TestGateway.makeBucket(), prefix: "coffer/", region: "us-east-1", endpoint: S3TestGateway.endpoint,
            addressing: .path, accessKeyID: S3TestGateway.accessKey, secretAccessKey: secret ?? S3TestGateway.secretKey,
            sessionToken: nil, presign: false)
    }
}

extension TestServer {
    /// What failed or cut uploads left in the server's store: files under the folder's `incoming/`,
    /// or the bucket's unfinished multipart uploads and `incoming/` objects.
    func leftoverUploads() async throws -> Int {
        if let settings = configuration.objectStore { return try await S3TestGateway.leftovers(bucket: settings.bucket, prefix: settings.prefix) }
        return try FileManager.default.contentsOfDirectory(atPath: configuration.resolvedBlobDirectoryForTests + "/incoming").count
    }
}
