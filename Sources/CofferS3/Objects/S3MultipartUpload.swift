import Foundation

/// An unfinished multipart upload, as ListMultipartUploads shows it.
public struct S3MultipartUpload: Sendable, Equatable {
    /// The key being uploaded, relative to the location's key prefix.
    public let key: String
    /// The upload's ID (for ``S3Client/abortMultipartUpload(key:uploadID:)``).
    public let uploadID: String
    /// When the upload was created.
    public let initiated: Date

    /// An upload entry.
    public init(key: String, uploadID: String, initiated: Date) {
        self.key = key
        self.uploadID = uploadID
        self.initiated = initiated
    }
}
