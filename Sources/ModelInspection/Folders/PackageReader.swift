import Foundation

/// Reads an `.mlpackage`: `Manifest.json` names the root model's specification (`Data/<path>`), and the
/// package's other items (weights) are counted by size.
enum PackageReader {
    static let format = "Core ML package"

    static func read(_ root: URL, listing: FolderListing, limits: InspectionLimits, notes: inout [String]) throws -> CoreMLFacts {
        let manifest = try SideFile.json(at: root.appendingPathComponent("Manifest.json"), format: format, limits: limits)
        guard let object = manifest as? [String: Any], let items = object["itemInfoEntries"] as? [String: Any],
              let rootID = object["rootModelIdentifier"] as? String,
              let rootItem = items[rootID] as? [String: Any], let path = rootItem["path"] as? String
        else {
            throw InspectionError.malformed(format: format, reason: "Manifest.json does not name the root model")
        }
        let relative = "Data/" + path
        guard !relative.split(separator: "/").contains(".."), listing.entries.contains(where: { $0.path == relative }) else {
            throw InspectionError.malformed(format: format, reason: "the root model \(relative) named in Manifest.json is missing")
        }
        let source = try FileSource(path: root.appendingPathComponent(relative).path)
        var facts = try SpecificationReader.facts(source, limits: limits, notes: &notes)
        // The other items (weights folders and files) hold the external weights.
        for case let item as [String: Any] in items.values {
            guard let itemPath = item["path"] as? String, itemPath != path, !itemPath.split(separator: "/").contains("..") else { continue }
            let full = "Data/" + itemPath
            let bytes = listing.entries.first { $0.path == full }?.size ?? listing.size(under: full + "/")
            facts.weightBytes = facts.weightBytes.addingSaturated(bytes)
        }
        return facts
    }
}
