/// What an ONNX model says about itself.
public struct ONNXFacts: Sendable, Codable, Equatable {
    /// `ir_version`.
    public var irVersion: Int64
    /// Operator sets by domain (`""` is the default `ai.onnx` domain).
    public var opsets: [String: Int64]
    /// `producer_name`.
    public var producerName: String?
    /// `producer_version`.
    public var producerVersion: String?
    /// `domain`.
    public var domain: String?
    /// `model_version`.
    public var modelVersion: Int64?
    /// `doc_string`.
    public var docString: String?
    /// `metadata_props`.
    public var metadata: [String: String]
    /// The graph's name.
    public var graphName: String?
    /// Graph inputs that are not initializers.
    public var inputs: [Feature]
    /// Graph outputs.
    public var outputs: [Feature]
    /// Nodes of the main graph counted by operator (`Conv`, `com.microsoft.Attention`, …).
    public var operatorCounts: [String: Int]
    /// The number of initializers (weights).
    public var initializerCount: Int
    /// Elements in all initializers.
    public var parameterCount: UInt64
    /// Bytes of initializer data stored in the file.
    public var weightBytes: UInt64
    /// Initializers whose data is in external files (not read).
    public var externalInitializerCount: Int
    /// Local functions defined in the model.
    public var functionCount: Int

    /// Empty facts.
    public init() {
        irVersion = 0
        opsets = [:]
        metadata = [:]
        inputs = []
        outputs = []
        operatorCounts = [:]
        initializerCount = 0
        parameterCount = 0
        weightBytes = 0
        externalInitializerCount = 0
        functionCount = 0
    }
}
