/// What HEAD says about an object.
public struct S3ObjectInfo: Sendable, Equatable {
    /// The object's length in bytes.
    public let size: Int64
    /// The ETag as the store sent it (quotes included), when it sent one.
    public let etag: String?

    /// Object metadata.
    public init(size: Int64, etag: String?) {
        self.size = size
        self.etag = etag
    }
}
