import Foundation
import S3TestSupport
import Testing

/// Where the `coffer-server` of a CLI or SDK test keeps its blobs: its folder, or a new bucket of
/// the test gateway (``S3TestGateway``), the bytes streamed by the server or, with presigning, sent
/// by the gateway after a redirect.
enum ServerBlobStore: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case folder
    case s3
    case s3Presigned

    /// The stores the "every store" tests run against here.
    static var available: [ServerBlobStore] { S3TestGateway.configured ? allCases : [.folder] }

    var testDescription: String {
        switch self {
        case .folder: "folder"
        case .s3: "S3 (Ceph RGW), streamed by the server"
        case .s3Presigned: "S3 (Ceph RGW), presigned redirects"
        }
    }

    /// The server's environment for this store and the bucket it made (nil for the folder);
    /// ``S3TestGateway/removeBucket(_:)`` removes it afterwards.
    func serverEnvironment() async throws -> (environment: [String: String], bucket: String?) {
        guard self != .folder else { return ([:], nil) }
        let bucket = try await S3TestGateway.makeBucket()
        var environment = [
            "COFFER_BLOB_STORE": "s3://\(bucket)/coffer", "AWS_ENDPOINT_URL_S3": S3TestGateway.endpoint,
            "AWS_ACCESS_KEY_ID": S3TestGateway.accessKey, "AWS_SECRET_ACCESS_KEY": S3TestGateway.secretKey,
        ]
        if self == .s3Presigned { environment["COFFER_S3_PRESIGN"] = "1" }
        return (environment, bucket)
    }
}
