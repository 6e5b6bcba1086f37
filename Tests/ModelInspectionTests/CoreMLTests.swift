import Foundation
import Testing
@testable import ModelInspection

@Suite("Core ML models")
struct CoreMLTests {
    @Test("a neural-network classifier: labels, features, metadata, layers and weights")
    func classifier() throws {
        let report = try ModelInspector.inspect(path: Fixtures.path("Classifier.mlmodel"))
        #expect(report.format == .coreMLModel)
        let facts = try #require(report.coreML)
        #expect(facts.modelType == "neuralNetworkClassifier")
        #expect(facts.classLabels == ["cat", "dog", "fish"])
        #expect(facts.predictedFeatureName == "label")
        #expect(facts.inputs.map(\.name) == ["features"])
        #expect(facts.inputs.first?.type == "MultiArray (Double 4)")  // coremltools' datatypes.Array is Double
        #expect(facts.inputs.first?.shape == [4])
        #expect(facts.outputs.map(\.name).sorted() == ["label", "scores"])
        #expect(facts.layerCounts == ["innerProduct": 1, "softmax": 1])
        #expect(facts.parameterCount == 15)  // 3 × 4 weights and 3 biases
        #expect(facts.weightBytes == 60)
        #expect(facts.metadata.author == "Coffer tests")
        #expect(facts.metadata.license == "CC0")
        #expect(facts.metadata.version == "1.2.3")
        #expect(facts.metadata.shortDescription == "A tiny pet classifier")
        #expect(facts.metadata.userDefined["training"] == "none")
        let version = try #require(facts.specificationVersion)
        #expect(facts.minimumDeploymentTargets == DeploymentTargets.minimum(forSpecificationVersion: version))
        #expect(facts.minimumDeploymentTargets["iOS"] != nil)
        #expect(report.text.contains("class labels:    3: cat, dog, fish"))
    }

    @Test("an ML program in a package: operations, constants, weight file, iOS 16")
    func program() throws {
        let report = try ModelInspector.inspect(path: Fixtures.path("Program.mlpackage"))
        #expect(report.format == .coreMLPackage)
        let facts = try #require(report.coreML)
        #expect(facts.modelType == "mlProgram")
        #expect(facts.specificationVersion == 7)
        #expect(facts.minimumDeploymentTargets["iOS"] == "16.0")
        #expect(facts.minimumDeploymentTargets["macOS"] == "13.0")
        #expect(facts.layerCounts["matmul"] == 1)
        #expect(facts.layerCounts["relu"] == 1)
        #expect(facts.parameterCount == 24)  // the 3 × 8 matrix; scalar constants are not parameters
        #expect(facts.weightBytes == 224)  // weights/weight.bin
        #expect(facts.functions == ["main": "CoreML6"])
        #expect(facts.inputs.first?.type == "MultiArray (Float32 1 × 3)")
        #expect(facts.metadata.author == "Coffer tests")
        #expect(report.files?.contains { $0.path == "Manifest.json" } == true)
    }

    @Test("a pipeline lists its models in order")
    func pipeline() throws {
        let facts = try #require(try ModelInspector.inspect(path: Fixtures.path("Pipeline.mlmodel")).coreML)
        #expect(facts.modelType == "pipeline")
        #expect(facts.subModels?.map(\.modelType) == ["neuralNetwork", "neuralNetwork"])
        #expect(facts.subModels?.first?.layerCounts == ["activation": 1])
        #expect(facts.layerCounts == ["activation": 1, "innerProduct": 1])
        #expect(facts.metadata.shortDescription == "relu then sum")
        #expect(facts.parameterCount == 2)
    }

    @Test("a large specification is walked without its layer contents and gives the same structure")
    func skeleton() throws {
        let report = try ModelInspector.inspect(path: Fixtures.path("Classifier.mlmodel"), limits: Fixtures.tinyLimits)
        let facts = try #require(report.coreML)
        let whole = try #require(try ModelInspector.inspect(path: Fixtures.path("Classifier.mlmodel")).coreML)
        #expect(facts.modelType == whole.modelType)
        #expect(facts.layerCounts == whole.layerCounts)
        #expect(facts.classLabels == whole.classLabels)
        #expect(facts.inputs == whole.inputs)
        #expect(facts.parameterCount == 0)
        #expect(facts.weightBytes > 60)  // the skipped layer payloads, by size
        #expect(report.notes.contains { $0.contains("counted by size") })
    }

    @Test("a compiled model's metadata.json is read")
    func compiled() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("mi-\(UUID().uuidString)/M.mlmodelc")
        defer { try? FileManager.default.removeItem(at: folder.deletingLastPathComponent()) }
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("weights"), withIntermediateDirectories: true)
        // The shape Xcode's compiler gives metadata.json (written here: no compiler runs off macOS).
        let metadata = """
            [{"specificationVersion": 7, "modelType": {"name": "MLModelType_mlProgram"}, "author": "A",
              "availability": {"iOS": "16.0", "macOS": "13.0"}, "classLabels": ["a", "b"],
              "mlProgramOperationTypeHistogram": {"Ios16.matmul": 2},
              "inputSchema": [{"name": "x", "formattedType": "MultiArray (Float32 1 × 3)", "shape": "[1, 3]", "isOptional": "0"}],
              "outputSchema": [{"name": "y", "type": "MultiArray", "shape": "[1, 8]"}]}]
            """
        try Data(metadata.utf8).write(to: folder.appendingPathComponent("metadata.json"))
        try Data(count: 100).write(to: folder.appendingPathComponent("weights/weight.bin"))
        try Data(count: 7).write(to: folder.appendingPathComponent("coremldata.bin"))
        let report = try ModelInspector.inspect(path: folder.path)
        #expect(report.format == .coreMLCompiled)
        let facts = try #require(report.coreML)
        #expect(facts.modelType == "mlProgram")
        #expect(facts.minimumDeploymentTargets["iOS"] == "16.0")
        #expect(facts.layerCounts == ["Ios16.matmul": 2])
        #expect(facts.inputs.first?.shape == [1, 3])
        #expect(facts.classLabels == ["a", "b"])
        #expect(facts.weightBytes == 100)
        #expect(report.size == 100 + 7 + UInt64(metadata.utf8.count))
    }

    @Test("a package whose manifest names a missing model is refused with one line")
    func brokenPackage() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("mi-\(UUID().uuidString)/B.mlpackage")
        defer { try? FileManager.default.removeItem(at: folder.deletingLastPathComponent()) }
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("Data"), withIntermediateDirectories: true)
        try Data(#"{"itemInfoEntries": {"x": {"path": "../../etc/passwd"}}, "rootModelIdentifier": "x"}"#.utf8)
            .write(to: folder.appendingPathComponent("Manifest.json"))
        #expect(throws: InspectionError.self) { try ModelInspector.inspect(path: folder.path) }
    }
}
