/// An input or output of a model, as Xcode's model view lists them.
public struct Feature: Sendable, Codable, Equatable {
    /// The feature's name.
    public var name: String
    /// Its type for people: `MultiArray (Float32 1 × 3)`, `Image (BGR 224 × 224)`, `String`, `tensor(float)`, …
    public var type: String
    /// The array or tensor shape where the model gives one; `-1` stands for a dimension known only at run time.
    public var shape: [Int64]?
    /// Names of symbolic dimensions (ONNX `dim_param`), in the order of ``shape``; empty strings for fixed ones.
    public var dimensionNames: [String]?
    /// Whether the model accepts the feature missing.
    public var isOptional: Bool
    /// The model's own description of the feature.
    public var description: String?

    /// A feature.
    public init(name: String, type: String, shape: [Int64]? = nil, dimensionNames: [String]? = nil,
                isOptional: Bool = false, description: String? = nil) {
        self.name = name
        self.type = type
        self.shape = shape
        self.dimensionNames = dimensionNames
        self.isOptional = isOptional
        self.description = description
    }
}

/// A named tensor with its element type and shape (safetensors, GGUF, ONNX initializers).
public struct TensorSummary: Sendable, Codable, Equatable {
    /// The tensor's name.
    public var name: String
    /// The element type as the format names it (`F32`, `Q4_K`, `float`, …).
    public var dataType: String
    /// The dimensions.
    public var shape: [UInt64]
    /// The stored size in bytes, where the format says it.
    public var byteCount: UInt64?

    /// A tensor summary.
    public init(name: String, dataType: String, shape: [UInt64], byteCount: UInt64?) {
        self.name = name
        self.dataType = dataType
        self.shape = shape
        self.byteCount = byteCount
    }

    /// The number of elements (the product of the dimensions), saturating at `UInt64.max`.
    public var elementCount: UInt64 { shape.reduce(1) { $0.multipliedReportingOverflow(by: $1).overflow ? .max : $0 * $1 } }
}
