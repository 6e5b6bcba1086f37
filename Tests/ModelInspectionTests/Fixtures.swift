import Foundation
@testable import ModelInspection

/// The committed fixtures, made by tools/fixtures/make_models.py with coremltools, onnx, safetensors and gguf.
enum Fixtures {
    static let folder: URL = Bundle.module.resourceURL!.appendingPathComponent("Fixtures")

    static func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

    static func data(_ name: String) -> Data { FileManager.default.contents(atPath: path(name))! }

    /// The single-file fixtures, with the name each is inspected under.
    static let files = ["Classifier.mlmodel", "Pipeline.mlmodel", "Program.mlpackage/Data/com.apple.CoreML/model.mlmodel",
                        "tiny.onnx", "tiny.safetensors", "tiny.gguf"]

    /// Limits so small that the Core ML and ONNX readers walk Classifier.mlmodel (311 bytes) and tiny.onnx (291) as
    /// skeletons, whose 234 and 203 bytes still fit.
    static let tinyLimits = InspectionLimits(
        maximumMessageBytes: 250, maximumPartBytes: 4096, maximumHeaderBytes: 4096, maximumSideFileBytes: 4096,
        maximumListedTensors: 1, maximumListedLabels: 100, maximumFolderEntries: 100)
}
