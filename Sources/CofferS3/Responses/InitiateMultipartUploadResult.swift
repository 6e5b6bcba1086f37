/// The answer to CreateMultipartUpload: the new upload's ID.
struct InitiateMultipartUploadResult: Equatable {
    /// The `UploadId` every part and the completion must name.
    let uploadID: String

    /// Reads `<InitiateMultipartUploadResult><UploadId>…`.
    init(_ bytes: [UInt8]) throws(XMLReader.Failure) {
        let root = try XMLReader.parse(bytes)
        guard root.name == "InitiateMultipartUploadResult" else { throw .init(reason: "the root is <\(root.name)>") }
        guard let id = root.text(of: "UploadId"), !id.isEmpty, id.utf8.count <= 1024 else {
            throw .init(reason: "no UploadId")
        }
        uploadID = id
    }
}
