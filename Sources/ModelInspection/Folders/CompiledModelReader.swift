import Foundation

/// Reads what a compiled `.mlmodelc` folder reveals without running it: `metadata.json` (which Xcode's
/// compiler writes with the description, schema, availability and layer or operation histograms) and the
/// sizes of its weight files. The binary `coremldata.bin` files are not interpreted.
enum CompiledModelReader {
    static let format = "Core ML compiled model"

    static func read(_ root: URL, listing: FolderListing, limits: InspectionLimits, notes: inout [String]) throws -> CoreMLFacts {
        var facts = CoreMLFacts(modelType: "unknown")
        facts.weightBytes = listing.size(under: "weights/")
        guard listing.entries.contains(where: { $0.path == "metadata.json" }) else {
            notes.append("no metadata.json: only the file listing is known")
            return facts
        }
        let json = try SideFile.json(at: root.appendingPathComponent("metadata.json"), format: format, limits: limits)
        guard let object = (json as? [Any])?.first as? [String: Any] ?? json as? [String: Any] else {
            throw InspectionError.malformed(format: format, reason: "metadata.json is not an object or a list of one")
        }
        if let type = (object["modelType"] as? [String: Any])?["name"] as? String {
            facts.modelType = type.hasPrefix("MLModelType_") ? String(type.dropFirst("MLModelType_".count)) : type
        }
        if let version = object["specificationVersion"] as? Int {
            facts.specificationVersion = version
            facts.minimumDeploymentTargets = DeploymentTargets.minimum(forSpecificationVersion: version)
        }
        if let availability = object["availability"] as? [String: Any] {
            for (platform, value) in availability { if let value = value as? String { facts.minimumDeploymentTargets[platform] = value } }
        }
        facts.inputs = features(object["inputSchema"])
        facts.outputs = features(object["outputSchema"])
        facts.states = features(object["stateSchema"])
        facts.classLabels = (object["classLabels"] as? [Any])?.prefix(limits.maximumListedLabels).map { "\($0)" }
        facts.metadata = CoreMLMetadata(
            author: (object["author"] as? String)?.nonEmpty, license: (object["license"] as? String)?.nonEmpty,
            version: (object["version"] as? String)?.nonEmpty, shortDescription: (object["shortDescription"] as? String)?.nonEmpty,
            userDefined: (object["userDefinedMetadata"] as? [String: Any])?.compactMapValues { $0 as? String } ?? [:])
        facts.isUpdatable = "\(object["isUpdatable"] ?? "0")" == "1"
        for key in ["mlProgramOperationTypeHistogram", "neuralNetworkLayerTypeHistogram"] {
            for (type, count) in object[key] as? [String: Any] ?? [:] { facts.layerCounts[type] = (count as? Int) ?? 0 }
        }
        return facts
    }

    private static func features(_ value: Any?) -> [Feature] {
        (value as? [Any] ?? []).compactMap { element in
            guard let entry = element as? [String: Any], let name = entry["name"] as? String else { return nil }
            let type = entry["formattedType"] as? String ?? entry["type"] as? String ?? "unspecified"
            var shape: [Int64]?
            if let text = entry["shape"] as? String {
                shape = text.trimmingCharacters(in: CharacterSet(charactersIn: "[] ")).split(separator: ",")
                    .compactMap { Int64($0.trimmingCharacters(in: .whitespaces)) }
            }
            return Feature(name: name, type: type, shape: shape, isOptional: "\(entry["isOptional"] ?? "0")" == "1",
                           description: (entry["shortDescription"] as? String)?.nonEmpty)
        }
    }
}
