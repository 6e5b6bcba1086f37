/// What a Core ML model says about itself: what Xcode's model view shows.
public struct CoreMLFacts: Sendable, Codable, Equatable {
    /// The specification version (`Model.specificationVersion`), or `nil` where unknown (`.mlmodelc` without it).
    public var specificationVersion: Int?
    /// The earliest OS releases that can load a model of ``specificationVersion``, by platform
    /// (`iOS`, `macOS`, `tvOS`, `watchOS`, `visionOS`).
    public var minimumDeploymentTargets: [String: String]
    /// The model type: `neuralNetworkClassifier`, `mlProgram`, `pipeline`, `treeEnsembleRegressor`, …
    public var modelType: String
    /// For pipelines, the models inside, in order (each with its own type, features and counts).
    public var subModels: [CoreMLFacts]?
    /// The inputs.
    public var inputs: [Feature]
    /// The outputs.
    public var outputs: [Feature]
    /// State features (stateful ML programs).
    public var states: [Feature]
    /// The classifier's labels (strings, or integers written as strings); `nil` for non-classifiers.
    public var classLabels: [String]?
    /// The output that carries the predicted label, for classifiers.
    public var predictedFeatureName: String?
    /// The output that carries the class probabilities, for classifiers.
    public var predictedProbabilitiesName: String?
    /// Author, license, version, description and user-defined metadata.
    public var metadata: CoreMLMetadata
    /// Neural network layers or ML program operations, counted by type (`innerProduct`, `ios16.matmul`, …).
    public var layerCounts: [String: Int]
    /// The number of weights and constants (elements), as far as the model shows them.
    public var parameterCount: UInt64
    /// Bytes of weight data (inline in the specification, or in weight files of a package or compiled model).
    public var weightBytes: UInt64
    /// Whether the model can be updated on device.
    public var isUpdatable: Bool
    /// ML programs: the functions and the opset each uses (`main: CoreML6`).
    public var functions: [String: String]?

    /// Empty facts of a model type.
    public init(modelType: String) {
        self.modelType = modelType
        minimumDeploymentTargets = [:]
        inputs = []
        outputs = []
        states = []
        metadata = CoreMLMetadata()
        layerCounts = [:]
        parameterCount = 0
        weightBytes = 0
        isUpdatable = false
    }
}

/// A Core ML model's metadata (`Model.description.metadata`).
public struct CoreMLMetadata: Sendable, Codable, Equatable {
    /// `author`.
    public var author: String?
    /// `license`.
    public var license: String?
    /// `versionString`.
    public var version: String?
    /// `shortDescription`.
    public var shortDescription: String?
    /// `userDefined` (creator tools and the model's own keys).
    public var userDefined: [String: String]

    /// Empty metadata.
    public init(author: String? = nil, license: String? = nil, version: String? = nil,
                shortDescription: String? = nil, userDefined: [String: String] = [:]) {
        self.author = author
        self.license = license
        self.version = version
        self.shortDescription = shortDescription
        self.userDefined = userDefined
    }
}
