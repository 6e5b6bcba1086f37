import Foundation

/// One uploaded model version of a collection, as a choice in the deployment form's lists:
/// its SHA-256 (the value posted) and a label a person can tell apart from the others.
struct ModelChoice: Encodable, Sendable {
    let sha256: String
    let label: String
    var selected: Bool

    init(_ version: ModelVersionRecord, selected: Bool = false) {
        sha256 = version.blobID
        label = "\(version.blobID.prefix(12))… · \(CollectionPage.size(version.size)) · key \(version.keyID.prefix(12)) · \(CollectionPage.date(version.createdAt))"
        self.selected = selected
    }
}
