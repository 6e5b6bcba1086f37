import Foundation

/// Reads model files and folders for the facts a person wants before shipping a model.
///
/// Recognises Core ML (`.mlmodel`, `.mlpackage`, `.mlmodelc`), ONNX, safetensors and GGUF by magic bytes
/// and name; anything else is reported as an opaque file or folder with its size and files. It never runs a
/// model, never follows links out of a folder, never opens a model's external data files, and keeps within
/// ``InspectionLimits`` on hostile input: a damaged file gives an ``InspectionError`` with one clear line.
public enum ModelInspector {
    /// The facts of the file or folder at `path`.
    ///
    /// - Throws: ``InspectionError``.
    public static func inspect(path: String, limits: InspectionLimits = .default) throws -> ModelReport {
        // The path given may be a link to a model (its own name still tells the format); links inside a
        // model folder are never followed.
        let resolved = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: resolved, isDirectory: &isFolder) else {
            throw InspectionError.unreadable(path: path, reason: "no such file or folder")
        }
        if isFolder.boolValue {
            return try inspectFolder(URL(fileURLWithPath: resolved), name: URL(fileURLWithPath: path).lastPathComponent, limits: limits)
        }
        return try inspect(try FileSource(path: resolved), name: path, limits: limits)
    }

    /// The facts of a model file held in memory (a sealed model opened with its key), named `name`
    /// (its extension helps tell formats apart).
    ///
    /// - Throws: ``InspectionError``.
    public static func inspect(data: Data, name: String, limits: InspectionLimits = .default) throws -> ModelReport {
        try inspect(DataSource(data), name: name, limits: limits)
    }

    /// The format `name` and the first bytes of a file suggest.
    static func format(name: String, prefix: Data) -> ModelFormat {
        let lower = name.lowercased()
        if GGUFReader.matches(prefix) { return .gguf }
        if SafetensorsReader.matches(prefix) { return .safetensors }
        if lower.hasSuffix(".gguf") { return .gguf }
        if lower.hasSuffix(".safetensors") { return .safetensors }
        if lower.hasSuffix(".onnx") || lower.hasSuffix(".ort.onnx") { return .onnx }
        if lower.hasSuffix(".mlmodel") { return .coreMLModel }
        return .opaqueFile
    }

    /// The facts of a model file given as random-access bytes (a sealed model read through its key, chunk by chunk).
    package static func inspect(_ source: any ByteSource, name: String, limits: InspectionLimits = .default) throws -> ModelReport {
        let prefix = try source.read(at: 0, length: Int(min(source.count, 16)))
        var report = ModelReport(format: format(name: name, prefix: prefix), size: source.count)
        switch report.format {
        case .gguf: report.gguf = try GGUFReader.read(source, limits: limits)
        case .safetensors: report.safetensors = try SafetensorsReader.read(source, limits: limits)
        case .onnx: report.onnx = try ONNXReader.read(source, limits: limits, notes: &report.notes)
        case .coreMLModel: report.coreML = try SpecificationReader.facts(source, limits: limits, notes: &report.notes)
        default: break
        }
        return report
    }

    static func inspectFolder(_ root: URL, name: String, limits: InspectionLimits) throws -> ModelReport {
        let listing = try FolderListing(root: root, limits: limits)
        let lower = name.lowercased()
        let has = { (path: String) in listing.entries.contains { $0.path == path } }
        var report: ModelReport
        if lower.hasSuffix(".mlpackage") || (has("Manifest.json") && has("Data/")) {
            report = ModelReport(format: .coreMLPackage, size: listing.size)
            report.coreML = try PackageReader.read(root, listing: listing, limits: limits, notes: &report.notes)
        } else if lower.hasSuffix(".mlmodelc") || has("coremldata.bin") {
            report = ModelReport(format: .coreMLCompiled, size: listing.size)
            report.coreML = try CompiledModelReader.read(root, listing: listing, limits: limits, notes: &report.notes)
        } else {
            report = ModelReport(format: .opaqueFolder, size: listing.size)
        }
        report.files = listing.entries
        return report
    }
}
