/// The answer to CompleteMultipartUpload. S3 may answer 200 and then, after a long assembly, send an
/// `<Error>` document instead of the result: that is a failure, never a success.
enum CompleteMultipartUploadResult: Equatable {
    /// The object exists; its ETag when the store gave one.
    case completed(etag: String?)
    /// The store reported an error in a 200 answer.
    case failed(code: String)

    /// Reads `<CompleteMultipartUploadResult>` or `<Error>`; anything else is malformed.
    init(_ bytes: [UInt8]) throws(XMLReader.Failure) {
        let root = try XMLReader.parse(bytes)
        switch root.name {
        case "CompleteMultipartUploadResult":
            self = .completed(etag: root.text(of: "ETag"))
        case "Error":
            self = .failed(code: S3ErrorBody(bytes)?.code ?? "unknown")
        default:
            throw .init(reason: "the root is <\(root.name)>")
        }
    }
}
