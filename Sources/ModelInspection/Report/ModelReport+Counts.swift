/// Totals of a report's counts. A report may come from outside (facts a client uploads, a compiled
/// model's `metadata.json`), so its counts can be anything an `Int` holds: totals saturate rather
/// than trap, and ``hasNegativeCounts`` tells a report no inspection makes.
extension ModelReport {
    /// The sum of `counts`, `Int.max` when it would be larger.
    static func total(_ counts: [String: Int]) -> Int {
        counts.values.reduce(0) { sum, count in
            let (added, overflow) = sum.addingReportingOverflow(count)
            return overflow ? (count < 0 ? .min : .max) : added
        }
    }

    /// Whether a layer, operator or tensor count is negative anywhere in the report (pipeline
    /// models included): no inspection writes one.
    public var hasNegativeCounts: Bool {
        func negative(_ facts: CoreMLFacts) -> Bool {
            facts.layerCounts.values.contains { $0 < 0 } || (facts.subModels ?? []).contains(where: negative)
        }
        return (coreML.map(negative) ?? false) || (onnx?.operatorCounts.values.contains { $0 < 0 } ?? false)
            || (safetensors.map { $0.tensorCount < 0 } ?? false)
    }
}
