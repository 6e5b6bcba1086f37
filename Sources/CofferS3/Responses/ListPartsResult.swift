import Foundation

/// One page of ListParts, as far as the collection of stale uploads needs it: when the newest of
/// its parts was stored, and where the next page starts.
struct ListPartsResult: Equatable {
    /// The latest `LastModified` of the page's parts; nil when the page lists none.
    let lastModified: Date?
    /// The part-number marker of the next page; nil when this is the last page.
    let next: Int?

    /// Reads `<ListPartsResult>`; a truncated page must name its next marker (1…10 000, S3's part numbers).
    init(_ bytes: [UInt8]) throws(XMLReader.Failure) {
        let root = try XMLReader.parse(bytes)
        guard root.name == "ListPartsResult" else { throw .init(reason: "the root is <\(root.name)>") }
        var newest: Date?
        for part in root.children("Part") {
            guard let modified = part.text(of: "LastModified").flatMap(ISO8601Time.parse) else {
                throw .init(reason: "a Part without a valid LastModified")
            }
            newest = max(newest ?? modified, modified)
        }
        lastModified = newest
        if try ListMultipartUploadsResult.truncated(root) {
            guard let marker = root.text(of: "NextPartNumberMarker").flatMap({ Int($0) }), S3Client.partNumbers.contains(marker) else {
                throw .init(reason: "a truncated page without a NextPartNumberMarker of 1 to 10000")
            }
            next = marker
        } else {
            next = nil
        }
    }
}
