import Foundation
import Testing
@testable import ModelInspection

@Suite("ONNX, safetensors and GGUF")
struct OtherFormatTests {
    @Test("ONNX: opset, producer, features, operators and initializers")
    func onnx() throws {
        let report = try ModelInspector.inspect(path: Fixtures.path("tiny.onnx"))
        #expect(report.format == .onnx)
        let facts = try #require(report.onnx)
        #expect(facts.irVersion == 8)
        #expect(facts.opsets == ["": 17])
        #expect(facts.producerName == "coffer-fixtures")
        #expect(facts.producerVersion == "1.0")
        #expect(facts.docString == "A tiny ONNX model")
        #expect(facts.metadata == ["author": "Coffer tests"])
        #expect(facts.operatorCounts == ["MatMul": 1, "Add": 1, "Relu": 1])
        #expect(facts.initializerCount == 2)
        #expect(facts.parameterCount == 15)
        #expect(facts.weightBytes == 60)
        #expect(facts.inputs == [Feature(name: "input", type: "tensor(float)", shape: [-1, 4], dimensionNames: ["batch", ""])])
        #expect(facts.outputs.first?.shape == [-1, 3])
        #expect(report.text.contains("input: tensor(float) [batch, 4]"))
    }

    @Test("ONNX over the message limit: initializer data skipped, the rest the same")
    func onnxSkeleton() throws {
        let report = try ModelInspector.inspect(path: Fixtures.path("tiny.onnx"), limits: Fixtures.tinyLimits)
        let facts = try #require(report.onnx)
        let whole = try #require(try ModelInspector.inspect(path: Fixtures.path("tiny.onnx")).onnx)
        #expect(facts.operatorCounts == whole.operatorCounts)
        #expect(facts.parameterCount == whole.parameterCount)  // dims are kept
        #expect(facts.weightBytes == whole.weightBytes)  // raw_data counted by size
        #expect(facts.inputs == whole.inputs)
        #expect(!report.notes.isEmpty)
    }

    @Test("safetensors: tensors, dtypes, metadata")
    func safetensors() throws {
        let report = try ModelInspector.inspect(path: Fixtures.path("tiny.safetensors"))
        let facts = try #require(report.safetensors)
        #expect(facts.tensorCount == 2)
        #expect(facts.dataTypeCounts == ["F32": 1, "F16": 1])
        #expect(facts.parameterCount == 10)
        #expect(facts.weightBytes == 32)
        #expect(facts.metadata == ["format": "np"])
        #expect(facts.tensors.map(\.name) == ["layer.bias", "layer.weight"])
        #expect(facts.tensors.last?.shape == [2, 3])
    }

    @Test("GGUF: version, architecture, metadata and tensors")
    func gguf() throws {
        let report = try ModelInspector.inspect(path: Fixtures.path("tiny.gguf"))
        let facts = try #require(report.gguf)
        #expect(facts.version == 3)
        #expect(facts.architecture == "llama")
        #expect(facts.name == "tiny")
        #expect(facts.metadata["llama.context_length"] == "128")
        #expect(facts.tensorCount == 2)
        #expect(facts.dataTypeCounts == ["F32": 2])
        #expect(facts.parameterCount == 36)
        #expect(Set(facts.tensors.map(\.name)) == ["token_embd.weight", "output_norm.weight"])
    }

    @Test("in-memory bytes give the same report as the file")
    func inMemory() throws {
        for name in Fixtures.files {
            var fromMemory = try ModelInspector.inspect(data: Fixtures.data(name), name: name)
            let fromFile = try ModelInspector.inspect(path: Fixtures.path(name))
            fromMemory.files = fromFile.files
            #expect(fromMemory == fromFile, "\(name)")
        }
    }

    @Test("anything else is an opaque file or folder with sizes")
    func opaque() throws {
        let report = try ModelInspector.inspect(data: Data("hello".utf8), name: "notes.txt")
        #expect(report.format == .opaqueFile && report.size == 5)
        let folder = try ModelInspector.inspect(path: Fixtures.folder.path)
        #expect(folder.format == .opaqueFolder)
        #expect(folder.files?.contains(FileEntry(path: "tiny.gguf", size: 416)) == true)
    }

    @Test("the report encodes to JSON and back")
    func json() throws {
        let report = try ModelInspector.inspect(path: Fixtures.path("Classifier.mlmodel"))
        let decoded = try JSONDecoder().decode(ModelReport.self, from: JSONEncoder().encode(report))
        #expect(decoded == report)
    }
}
