/// `ModelReport` written for people, as `coffer inspect` prints it.
extension ModelReport {
    /// Several lines: the format and size, then each section's facts, then a folder's files. Control
    /// characters from the file (in names, descriptions, metadata) are written as `\u{…}`, so a hostile
    /// model cannot add lines of its own or drive the terminal.
    public var text: String {
        var lines = ["\(format.displayName), \(size) bytes"]
        lines += detailLines
        if let files, coreML == nil || format == .coreMLCompiled || format == .coreMLPackage {
            lines.append("  files:")
            for file in files { lines.append("    \(file.path)\(file.size.map { " \($0)" } ?? "")") }
        }
        return lines.map(Self.escapingControls).joined(separator: "\n")
    }

    /// The format's facts and the notes, without the first line and the file listing.
    public var detailText: String { detailLines.joined(separator: "\n") }

    /// ``detailText``'s lines, control characters escaped.
    private var detailLines: [String] {
        var lines: [String] = []
        if let coreML { lines += Self.lines(coreML, indent: "  ") }
        if let onnx { lines += Self.lines(onnx) }
        if let safetensors { lines += Self.lines(safetensors) }
        if let gguf { lines += Self.lines(gguf) }
        for note in notes { lines.append("  note: \(note)") }
        return lines.map(Self.escapingControls)
    }

    /// `text` with control characters (newlines included) written as `\u{…}`.
    static func escapingControls(_ text: String) -> String {
        let isControl = { (scalar: Unicode.Scalar) in scalar.properties.generalCategory == .control || scalar == "\u{2028}" || scalar == "\u{2029}" }
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var result = ""
        for scalar in text.unicodeScalars {
            if isControl(scalar) { result += "\\u{" + String(scalar.value, radix: 16) + "}" } else { result.unicodeScalars.append(scalar) }
        }
        return result
    }

    static func pairs(_ map: [String: String]) -> String {
        map.keys.sorted().map { "\($0)=\(map[$0]!)" }.joined(separator: ", ")
    }

    static func counts(_ map: [String: Int]) -> String {
        map.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }.map { "\($0.key) \($0.value)" }
            .joined(separator: ", ")
    }

    static func features(_ label: String, _ features: [Feature], indent: String) -> [String] {
        guard !features.isEmpty else { return [] }
        return ["\(indent)\(label):"] + features.map { feature in
            var line = "\(indent)  \(feature.name): \(feature.type)"
            // Core ML types already carry their shape; ONNX tensor types do not.
            if let shape = feature.shape, feature.type.hasPrefix("tensor") || feature.type.hasPrefix("sparse") {
                let dims = shape.enumerated().map { index, value in
                    value >= 0 ? String(value) : (feature.dimensionNames?[safe: index].flatMap(\.nonEmpty) ?? "?")
                }
                line += " [" + dims.joined(separator: ", ") + "]"
            }
            if feature.isOptional { line += " (optional)" }
            if let description = feature.description { line += " — " + description }
            return line
        }
    }

    static func lines(_ facts: CoreMLFacts, indent: String) -> [String] {
        var lines = ["\(indent)type:            \(facts.modelType)"]
        if let version = facts.specificationVersion {
            lines.append("\(indent)specification:   version \(version)")
        }
        if !facts.minimumDeploymentTargets.isEmpty {
            let order = ["iOS", "macOS", "tvOS", "watchOS", "visionOS"]
            let keys = facts.minimumDeploymentTargets.keys.sorted { (order.firstIndex(of: $0) ?? 9, $0) < (order.firstIndex(of: $1) ?? 9, $1) }
            lines.append("\(indent)availability:    " + keys.map { "\($0) \(facts.minimumDeploymentTargets[$0]!)+" }.joined(separator: ", "))
        }
        let meta = facts.metadata
        for (label, value) in [("description", meta.shortDescription), ("author", meta.author), ("license", meta.license), ("version", meta.version)] {
            if let value { lines.append("\(indent)\(label):".padding(toLength: indent.count + 17, withPad: " ", startingAt: 0) + value) }
        }
        if !meta.userDefined.isEmpty { lines.append("\(indent)user metadata:   \(pairs(meta.userDefined))") }
        if let functions = facts.functions { lines.append("\(indent)functions:       \(pairs(functions))") }
        lines += features("inputs", facts.inputs, indent: indent)
        lines += features("outputs", facts.outputs, indent: indent)
        lines += features("states", facts.states, indent: indent)
        if let labels = facts.classLabels {
            let shown = labels.prefix(20).joined(separator: ", ") + (labels.count > 20 ? ", …" : "")
            lines.append("\(indent)class labels:    \(labels.count): \(shown)")
        }
        if let name = facts.predictedFeatureName { lines.append("\(indent)predicted label: \(name)") }
        if !facts.layerCounts.isEmpty {
            let total = ModelReport.total(facts.layerCounts)
            let what = facts.modelType == "mlProgram" ? "operations" : "layers"
            lines.append("\(indent)\(what):".padding(toLength: indent.count + 17, withPad: " ", startingAt: 0) + "\(total): \(counts(facts.layerCounts))")
        }
        lines.append("\(indent)parameters:      \(facts.parameterCount)")
        lines.append("\(indent)weight bytes:    \(facts.weightBytes)")
        if facts.isUpdatable { lines.append("\(indent)updatable:       yes") }
        for (index, model) in (facts.subModels ?? []).enumerated() {
            lines.append("\(indent)model \(index + 1) of the pipeline:")
            lines += Self.lines(model, indent: indent + "    ")
        }
        return lines
    }

    static func lines(_ facts: ONNXFacts) -> [String] {
        var lines = ["  IR version:      \(facts.irVersion)",
                     "  opsets:          " + facts.opsets.keys.sorted().map { "\($0.isEmpty ? "ai.onnx" : $0) \(facts.opsets[$0]!)" }.joined(separator: ", ")]
        if let name = facts.producerName { lines.append("  producer:        \(name)\(facts.producerVersion.map { " " + $0 } ?? "")") }
        if let domain = facts.domain { lines.append("  domain:          \(domain)") }
        if let version = facts.modelVersion { lines.append("  model version:   \(version)") }
        if let doc = facts.docString { lines.append("  description:     \(doc)") }
        if !facts.metadata.isEmpty { lines.append("  metadata:        \(pairs(facts.metadata))") }
        if let graph = facts.graphName { lines.append("  graph:           \(graph)") }
        lines += features("inputs", facts.inputs, indent: "  ")
        lines += features("outputs", facts.outputs, indent: "  ")
        lines.append("  operators:       \(ModelReport.total(facts.operatorCounts)): \(counts(facts.operatorCounts))")
        lines.append("  initializers:    \(facts.initializerCount)" + (facts.externalInitializerCount > 0 ? " (\(facts.externalInitializerCount) in external files)" : ""))
        lines.append("  parameters:      \(facts.parameterCount)")
        lines.append("  weight bytes:    \(facts.weightBytes)")
        if facts.functionCount > 0 { lines.append("  functions:       \(facts.functionCount)") }
        return lines
    }

    static func lines(_ facts: SafetensorsFacts) -> [String] {
        var lines = ["  header:          \(facts.headerBytes) bytes"]
        if !facts.metadata.isEmpty { lines.append("  metadata:        \(pairs(facts.metadata))") }
        lines.append("  tensors:         \(facts.tensorCount): \(counts(facts.dataTypeCounts))")
        lines.append("  parameters:      \(facts.parameterCount)")
        lines.append("  weight bytes:    \(facts.weightBytes)")
        lines += tensorLines(facts.tensors, total: facts.tensorCount)
        return lines
    }

    static func lines(_ facts: GGUFFacts) -> [String] {
        var lines = ["  GGUF version:    \(facts.version)"]
        if let architecture = facts.architecture { lines.append("  architecture:    \(architecture)") }
        if let name = facts.name { lines.append("  name:            \(name)") }
        lines.append("  tensors:         \(facts.tensorCount): \(counts(facts.dataTypeCounts))")
        lines.append("  parameters:      \(facts.parameterCount)")
        lines.append("  metadata:        \(facts.metadata.count) keys")
        for key in facts.metadata.keys.sorted() { lines.append("    \(key) = \(facts.metadata[key]!)") }
        lines += tensorLines(facts.tensors, total: Int(clamping: facts.tensorCount))
        return lines
    }

    static func tensorLines(_ tensors: [TensorSummary], total: Int) -> [String] {
        let shown = tensors.prefix(50)
        guard !shown.isEmpty else { return [] }
        var lines = ["  tensor list:"]
        lines += shown.map { "    \($0.name): \($0.dataType) [\($0.shape.map(String.init).joined(separator: ", "))]" }
        if total > shown.count { lines.append("    … \(total - shown.count) more (--json lists up to \(tensors.count))") }
        return lines
    }
}

extension Array {
    subscript(safe index: Int) -> Element? { indices.contains(index) ? self[index] : nil }
}
