/// What ``ModelInspector`` found in a model file or folder: the facts a person checks before shipping it.
///
/// Exactly one of the format sections is set for a recognised model; an unrecognised file or folder has
/// none and lists its ``files`` instead. Encodes to JSON with camelCase keys, which is what
/// `coffer inspect --json` prints and what the server stores per model version.
public struct ModelReport: Sendable, Codable, Equatable {
    /// The format the file or folder was recognised as.
    public var format: ModelFormat
    /// Total size in bytes (for a folder, the sum of its regular files).
    public var size: UInt64
    /// Facts of a Core ML `.mlmodel`, `.mlpackage` or `.mlmodelc`.
    public var coreML: CoreMLFacts?
    /// Facts of an ONNX model.
    public var onnx: ONNXFacts?
    /// Facts of a safetensors file.
    public var safetensors: SafetensorsFacts?
    /// Facts of a GGUF file.
    public var gguf: GGUFFacts?
    /// The files of a folder (model folders and opaque trees), sorted by path.
    public var files: [FileEntry]?
    /// Things worth knowing that are not errors, such as a section skipped because of a limit.
    public var notes: [String]

    /// A report with only its format and size set.
    public init(format: ModelFormat, size: UInt64) {
        self.format = format
        self.size = size
        self.notes = []
    }
}

/// The formats ``ModelInspector`` tells apart.
public enum ModelFormat: String, Sendable, Codable, CaseIterable {
    /// A Core ML model specification file (`.mlmodel`).
    case coreMLModel = "mlmodel"
    /// A Core ML package folder (`.mlpackage`).
    case coreMLPackage = "mlpackage"
    /// A compiled Core ML model folder (`.mlmodelc`).
    case coreMLCompiled = "mlmodelc"
    /// An ONNX model (`.onnx`).
    case onnx
    /// A safetensors file.
    case safetensors
    /// A GGUF file (llama.cpp and friends).
    case gguf
    /// A file of a kind not read further.
    case opaqueFile = "file"
    /// A folder of a kind not read further.
    case opaqueFolder = "folder"

    /// A name for people.
    public var displayName: String {
        switch self {
        case .coreMLModel: "Core ML model (.mlmodel)"
        case .coreMLPackage: "Core ML package (.mlpackage)"
        case .coreMLCompiled: "Core ML compiled model (.mlmodelc)"
        case .onnx: "ONNX model"
        case .safetensors: "safetensors"
        case .gguf: "GGUF model"
        case .opaqueFile: "file of unknown kind"
        case .opaqueFolder: "folder"
        }
    }
}

/// One entry of a folder's listing.
public struct FileEntry: Sendable, Codable, Equatable {
    /// The path inside the folder, `/`-separated; folders end in `/`.
    public var path: String
    /// The size in bytes of a regular file; `nil` for folders and links.
    public var size: UInt64?

    /// An entry.
    public init(path: String, size: UInt64?) {
        self.path = path
        self.size = size
    }
}
