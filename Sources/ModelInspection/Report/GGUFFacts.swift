/// What a GGUF header says.
public struct GGUFFacts: Sendable, Codable, Equatable {
    /// The GGUF version (2 or 3).
    public var version: UInt32
    /// `general.architecture`.
    public var architecture: String?
    /// `general.name`.
    public var name: String?
    /// Metadata values by key, written for people; arrays are summarised (`[string × 32000]`).
    public var metadata: [String: String]
    /// The number of tensors.
    public var tensorCount: UInt64
    /// The tensors in file order (at most ``InspectionLimits/maximumListedTensors``).
    public var tensors: [TensorSummary]
    /// Tensor counts by ggml type (`F32`, `Q4_K`, …).
    public var dataTypeCounts: [String: Int]
    /// Elements in all tensors.
    public var parameterCount: UInt64

    /// Facts from their parts.
    public init(version: UInt32, architecture: String?, name: String?, metadata: [String: String], tensorCount: UInt64,
                tensors: [TensorSummary], dataTypeCounts: [String: Int], parameterCount: UInt64) {
        self.version = version
        self.architecture = architecture
        self.name = name
        self.metadata = metadata
        self.tensorCount = tensorCount
        self.tensors = tensors
        self.dataTypeCounts = dataTypeCounts
        self.parameterCount = parameterCount
    }
}
