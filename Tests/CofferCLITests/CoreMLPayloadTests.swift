import CofferFormat
import Foundation
import Testing
@testable import Coffer

/// How `loadCoreMLModel` tells Core ML's three forms apart, and what its errors say, without Core
/// ML (which Linux has not): the decision is made on the name and kind a sealed header carries.
@Suite("Core ML payloads")
struct CoreMLPayloadTests {
    static func refusal(_ name: String, folder: Bool, canCompile: Bool = true) -> String? {
        do {
            _ = try CoreMLPayload(fileName: name, isFolder: folder, modelName: "Flowers", canCompile: canCompile)
            return nil
        } catch CofferError.modelInvalid(let model, let reason) {
            #expect(model == "Flowers")
            return reason
        } catch {
            Issue.record("unexpected \(error)")
            return nil
        }
    }

    @Test("the three forms by name and kind; only the .mlmodelc is loaded without compiling")
    func forms() throws {
        #expect(try CoreMLPayload(fileName: "Flowers.mlmodel", isFolder: false, modelName: "F") == .specification)
        #expect(try CoreMLPayload(fileName: "Flowers.mlpackage", isFolder: true, modelName: "F") == .package)
        #expect(try CoreMLPayload(fileName: "Flowers.mlmodelc", isFolder: true, modelName: "F") == .compiled)
        #expect(try CoreMLPayload(fileName: "Flowers.MLModelC", isFolder: true, modelName: "F") == .compiled)
        #expect(try CoreMLPayload(fileName: "/tmp/coffer-1/v2.Flowers.mlpackage", isFolder: true, modelName: "F") == .package)
        #expect(CoreMLPayload.specification.needsCompiling && CoreMLPayload.package.needsCompiling)
        #expect(!CoreMLPayload.compiled.needsCompiling)
        #expect(CoreMLPayload.canCompileHere)
    }

    @Test("a form in the wrong kind, another format or no name is refused in one line that says why")
    func refusals() {
        #expect(Self.refusal("Flowers.mlmodel", folder: true) == "it is a folder, but a .mlmodel is one file")
        #expect(Self.refusal("Flowers.mlmodelc", folder: false) == "it is one file, but a .mlmodelc is a folder: seal the folder itself")
        #expect(Self.refusal("Flowers.mlpackage", folder: false) == "it is one file, but a .mlpackage is a folder: seal the folder itself")
        #expect(Self.refusal("flowers.gguf", folder: false)
            == "it is not a Core ML model: its name ends in .gguf, not .mlmodel, .mlpackage or .mlmodelc")
        #expect(Self.refusal("model.onnx", folder: false)?.contains(".onnx, not") == true)
        for odd in ["", "Flowers", "Flowers.", "Flowers.mlmodel.part", "a.b\nc", "x." + String(repeating: "z", count: 40), "mlmodelc"] {
            let reason = Self.refusal(odd, folder: true)
            #expect(reason != nil, "\(odd)")
            #expect(reason?.contains("\n") == false && (reason?.utf8.count ?? 0) < 120, "\(odd)")
        }
        #expect(Self.refusal("Flowers.mlmodel.part", folder: false)?.contains("ends in .part, not") == true)
    }

    @Test("where Core ML cannot compile (watchOS), only a .mlmodelc is taken")
    func noCompiler() {
        #expect(Self.refusal("Flowers.mlmodelc", folder: true, canCompile: false) == nil)
        #expect(Self.refusal("Flowers.mlmodel", folder: false, canCompile: false) == CoreMLPayload.noCompilerReason)
        #expect(Self.refusal("Flowers.mlpackage", folder: true, canCompile: false) == CoreMLPayload.noCompilerReason)
        // A wrong name is said first: compiling it would not help.
        #expect(Self.refusal("Flowers.onnx", folder: false, canCompile: false)?.hasPrefix("it is not a Core ML model") == true)
    }

    @Test("Core ML's failures name the stage and the code, never Core ML's message")
    func failures() {
        #expect(CoreMLPayload.failureReason(.compiling, isCoreMLError: true, domain: "com.apple.CoreML", code: 0)
            == "Core ML could not compile it (MLModelError.generic, code 0)")
        #expect(CoreMLPayload.failureReason(.loading, isCoreMLError: true, domain: "com.apple.CoreML", code: 3)
            == "Core ML could not load it (MLModelError.io, code 3)")
        #expect(CoreMLPayload.failureReason(.loading, isCoreMLError: true, domain: "com.apple.CoreML", code: 99)
            == "Core ML could not load it (com.apple.CoreML code 99)")
        #expect(CoreMLPayload.failureReason(.loading, isCoreMLError: false, domain: "NSCocoaErrorDomain", code: 260)
            == "Core ML could not load it (NSCocoaErrorDomain code 260)")
        #expect(CoreMLPayload.failureReason(.compiling, isCoreMLError: false, domain: "layer conv1\nweights", code: 1)
            == "Core ML could not compile it (an error code 1)")
    }

    @Test("what Coffer seals carries the name and kind the decision needs: a folder stays a folder")
    func sealedHeaders() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-coreml-" + UUID().uuidString)
        defer { try? FileManager.default.removeItem(at: folder) }
        let compiled = folder.appendingPathComponent("Flowers.mlmodelc")
        try FileManager.default.createDirectory(at: compiled.appendingPathComponent("weights"), withIntermediateDirectories: true)
        try Data([1, 2, 3]).write(to: compiled.appendingPathComponent("coremldata.bin"))
        try Data([4, 5]).write(to: compiled.appendingPathComponent("weights/weight.bin"))
        let specification = folder.appendingPathComponent("Flowers.mlmodel")
        try Data([0x08, 0x07, 0x12, 0x00]).write(to: specification)
        let key = KeyMaterial.modelKey(ModelKey.generate(name: "coreml"))
        for (source, expected) in [(compiled, CoreMLPayload.compiled), (specification, .specification)] {
            let sealed = source.path + ".coffer"
            try SealedModel.seal(contentsOf: source.path, to: sealed, using: key)
            let header = try SealedModel.readHeader(path: sealed)
            let payload = try CoreMLPayload(fileName: header.originalName, isFolder: header.payloadKind == .directory, modelName: "F")
            #expect(payload == expected, "\(header.originalName)")
        }
    }
}
