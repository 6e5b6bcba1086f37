/// One page of ListObjectsV2.
struct ListBucketResult: Equatable {
    /// The objects on this page (keys as the store wrote them, prefix included).
    let objects: [S3ObjectSummary]
    /// The continuation token of the next page; nil when this is the last page.
    let nextContinuationToken: String?

    /// Reads `<ListBucketResult>`; a truncated page must carry a `NextContinuationToken`.
    init(_ bytes: [UInt8]) throws(XMLReader.Failure) {
        let root = try XMLReader.parse(bytes)
        guard root.name == "ListBucketResult" else { throw .init(reason: "the root is <\(root.name)>") }
        var objects: [S3ObjectSummary] = []
        for entry in root.children("Contents") {
            guard let key = entry.text(of: "Key"), !key.isEmpty,
                  let size = entry.text(of: "Size").flatMap(DecimalText.int64),
                  let modified = entry.text(of: "LastModified").flatMap(ISO8601Time.parse)
            else { throw .init(reason: "a Contents entry without Key, a valid Size or a valid LastModified") }
            objects.append(S3ObjectSummary(key: key, size: size, lastModified: modified, etag: entry.text(of: "ETag")))
        }
        self.objects = objects
        if try ListMultipartUploadsResult.truncated(root) {
            guard let token = root.text(of: "NextContinuationToken"), !token.isEmpty else {
                throw .init(reason: "a truncated page without NextContinuationToken")
            }
            nextContinuationToken = token
        } else {
            nextContinuationToken = nil
        }
    }
}
