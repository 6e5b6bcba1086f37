import SwiftProtobuf

extension CoreMLFacts {
    /// The facts a decoded specification holds. Weight files (a package's or compiled model's) are added by the caller.
    init(_ model: CoreML_Specification_Model, limits: InspectionLimits, depth: Int = 0) throws {
        let type = model.type
        self.init(modelType: type.map(caseName) ?? "unspecified")
        let version = Int(model.specificationVersion)
        specificationVersion = version
        minimumDeploymentTargets = DeploymentTargets.minimum(forSpecificationVersion: version)
        isUpdatable = model.isUpdatable
        let description = model.description_p
        inputs = description.input.map(FeatureDescriptions.feature)
        outputs = description.output.map(FeatureDescriptions.feature)
        states = description.state.map(FeatureDescriptions.feature)
        predictedFeatureName = description.predictedFeatureName.isEmpty ? nil : description.predictedFeatureName
        predictedProbabilitiesName = description.predictedProbabilitiesName.isEmpty ? nil : description.predictedProbabilitiesName
        let meta = description.metadata
        metadata = CoreMLMetadata(
            author: meta.author.nonEmpty, license: meta.license.nonEmpty, version: meta.versionString.nonEmpty,
            shortDescription: meta.shortDescription.nonEmpty, userDefined: meta.userDefined)

        guard let type, let payload = Mirror(reflecting: type).children.first?.value as? any Message else { return }
        let counter = try ParameterCounter.count(payload, maximumLabels: limits.maximumListedLabels)
        classLabels = counter.classLabels
        parameterCount = counter.elements
        weightBytes = counter.bytes
        switch type {
        case .neuralNetwork(let network): countLayers(network.layers)
        case .neuralNetworkClassifier(let network): countLayers(network.layers)
        case .neuralNetworkRegressor(let network): countLayers(network.layers)
        case .mlProgram(let program):
            let counts = ProgramCounts(program)
            layerCounts = counts.operations
            parameterCount = counts.constantElements
            functions = counts.functions
        case .pipeline(let pipeline): try addSubModels(pipeline.models, limits: limits, depth: depth)
        case .pipelineClassifier(let pipeline): try addSubModels(pipeline.pipeline.models, limits: limits, depth: depth)
        case .pipelineRegressor(let pipeline): try addSubModels(pipeline.pipeline.models, limits: limits, depth: depth)
        case .treeEnsembleClassifier(let trees): layerCounts["treeNodes"] = trees.treeEnsemble.nodes.count
        case .treeEnsembleRegressor(let trees): layerCounts["treeNodes"] = trees.treeEnsemble.nodes.count
        default: break
        }
    }

    private mutating func countLayers(_ layers: [CoreML_Specification_NeuralNetworkLayer]) {
        for layer in layers { layerCounts[layer.layer.map(caseName) ?? "unspecified", default: 0] += 1 }
    }

    private mutating func addSubModels(_ models: [CoreML_Specification_Model], limits: InspectionLimits, depth: Int) throws {
        guard depth < 16 else { throw InspectionError.malformed(format: "Core ML model", reason: "pipelines nest too deeply") }
        let inner = try models.map { try CoreMLFacts($0, limits: limits, depth: depth + 1) }
        subModels = inner
        for model in inner {
            for (type, count) in model.layerCounts { layerCounts[type, default: 0] += count }
        }
        if classLabels == nil { classLabels = inner.last { $0.classLabels != nil }?.classLabels }
    }
}

extension String {
    /// `nil` for an empty string (protobuf's "not set").
    var nonEmpty: String? { isEmpty ? nil : self }
}
