import Foundation

/// One object of a listing.
public struct S3ObjectSummary: Sendable, Equatable {
    /// The key, relative to the location's key prefix.
    public let key: String
    /// The object's length in bytes.
    public let size: Int64
    /// When the object was last written.
    public let lastModified: Date
    /// The ETag as listed, when listed.
    public let etag: String?

    /// A listing entry.
    public init(key: String, size: Int64, lastModified: Date, etag: String?) {
        self.key = key
        self.size = size
        self.lastModified = lastModified
        self.etag = etag
    }
}
