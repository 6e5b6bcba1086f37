/// `ModelReport` in one line, for lists of models (deployment pages, `coffer deployment show`).
extension ModelReport {
    /// The model's kind and its main facts: `mlProgram, iOS 16.0+, 1 input, 1 output, 5 operations, 24 parameters`.
    public var summary: String {
        var parts: [String] = []
        if let coreML {
            parts.append(coreML.modelType)
            if let iOS = coreML.minimumDeploymentTargets["iOS"] { parts.append("iOS \(iOS)+") }
            parts.append(Self.count(coreML.inputs.count, "input"))
            parts.append(Self.count(coreML.outputs.count, "output"))
            if let labels = coreML.classLabels { parts.append(Self.count(labels.count, "class label")) }
            let layers = Self.total(coreML.layerCounts)
            if layers > 0 { parts.append(Self.count(layers, coreML.modelType == "mlProgram" ? "operation" : "layer")) }
            parts.append(Self.count(Int(clamping: coreML.parameterCount), "parameter"))
        } else if let onnx {
            parts.append("ONNX opset \(onnx.opsets[""] ?? onnx.opsets["ai.onnx"] ?? 0)")
            parts.append(Self.count(onnx.inputs.count, "input"))
            parts.append(Self.count(onnx.outputs.count, "output"))
            parts.append(Self.count(Self.total(onnx.operatorCounts), "node"))
            parts.append(Self.count(Int(clamping: onnx.parameterCount), "parameter"))
        } else if let safetensors {
            parts.append("safetensors")
            parts.append(Self.count(safetensors.tensorCount, "tensor"))
            parts.append(Self.count(Int(clamping: safetensors.parameterCount), "parameter"))
        } else if let gguf {
            parts.append("GGUF v\(gguf.version)" + (gguf.architecture.map { " " + $0 } ?? ""))
            parts.append(Self.count(Int(clamping: gguf.tensorCount), "tensor"))
            parts.append(Self.count(Int(clamping: gguf.parameterCount), "parameter"))
        } else {
            parts.append(format.displayName)
        }
        return Self.escapingControls(parts.joined(separator: ", "))
    }

    private static func count(_ value: Int, _ noun: String) -> String { "\(value) \(noun)\(value == 1 ? "" : "s")" }
}
