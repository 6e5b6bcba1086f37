/// What a safetensors header says.
public struct SafetensorsFacts: Sendable, Codable, Equatable {
    /// Bytes of the JSON header.
    public var headerBytes: UInt64
    /// The `__metadata__` string map.
    public var metadata: [String: String]
    /// The tensors, sorted by name (at most ``InspectionLimits/maximumListedTensors``).
    public var tensors: [TensorSummary]
    /// The number of tensors in the file (may exceed the number listed).
    public var tensorCount: Int
    /// Tensor counts by data type (`F32`, `BF16`, …).
    public var dataTypeCounts: [String: Int]
    /// Elements in all tensors.
    public var parameterCount: UInt64
    /// Bytes of tensor data.
    public var weightBytes: UInt64

    /// Facts from their parts.
    public init(headerBytes: UInt64, metadata: [String: String], tensors: [TensorSummary], tensorCount: Int,
                dataTypeCounts: [String: Int], parameterCount: UInt64, weightBytes: UInt64) {
        self.headerBytes = headerBytes
        self.metadata = metadata
        self.tensors = tensors
        self.tensorCount = tensorCount
        self.dataTypeCounts = dataTypeCounts
        self.parameterCount = parameterCount
        self.weightBytes = weightBytes
    }
}
