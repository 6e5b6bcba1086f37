/// One page of ListMultipartUploads.
struct ListMultipartUploadsResult: Equatable {
    /// The unfinished uploads on this page (keys as the store wrote them, prefix included).
    let uploads: [S3MultipartUpload]
    /// The markers of the next page; nil when this is the last page.
    let next: (keyMarker: String, uploadIDMarker: String)?

    /// Equal uploads and equal next markers (tuples are not `Equatable`).
    static func == (a: Self, b: Self) -> Bool {
        a.uploads == b.uploads && a.next?.keyMarker == b.next?.keyMarker && a.next?.uploadIDMarker == b.next?.uploadIDMarker
    }

    /// Reads `<ListMultipartUploadsResult>`; a truncated page must name both next markers.
    init(_ bytes: [UInt8]) throws(XMLReader.Failure) {
        let root = try XMLReader.parse(bytes)
        guard root.name == "ListMultipartUploadsResult" else { throw .init(reason: "the root is <\(root.name)>") }
        var uploads: [S3MultipartUpload] = []
        for upload in root.children("Upload") {
            guard let key = upload.text(of: "Key"), !key.isEmpty, let id = upload.text(of: "UploadId"), !id.isEmpty,
                  let initiated = upload.text(of: "Initiated").flatMap(ISO8601Time.parse)
            else { throw .init(reason: "an Upload without Key, UploadId or a valid Initiated") }
            uploads.append(S3MultipartUpload(key: key, uploadID: id, initiated: initiated))
        }
        self.uploads = uploads
        if try Self.truncated(root) {
            guard let key = root.text(of: "NextKeyMarker"), let id = root.text(of: "NextUploadIdMarker"), !key.isEmpty || !id.isEmpty else {
                throw .init(reason: "a truncated page without NextKeyMarker/NextUploadIdMarker")
            }
            next = (key, id)
        } else {
            next = nil
        }
    }

    /// `<IsTruncated>`: `true` or `false`, false when absent.
    static func truncated(_ root: XMLElement) throws(XMLReader.Failure) -> Bool {
        switch root.text(of: "IsTruncated") {
        case nil, "false": false
        case "true": true
        default: throw .init(reason: "IsTruncated is neither true nor false")
        }
    }
}
