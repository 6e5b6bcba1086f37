/// Which of Core ML's three forms a model is, and so what loading it takes. Decided by the model's
/// name and whether it is one file or a folder — for a sealed model, both from its authenticated
/// header (the original name and the payload kind, docs/FORMAT.md) — never by its bytes: the
/// `.mlmodel` specification is a protobuf with no magic number (an ONNX model starts the same
/// way), and Core ML itself goes by the extension. Coffer packs folders before sealing, so all
/// three forms travel sealed. Compiled on every platform, without Core ML, so it is tested on Linux.
enum CoreMLPayload: Equatable, Sendable {
    /// A `.mlmodel` file (the Core ML specification): compiled on the device, then loaded.
    case specification
    /// A `.mlpackage` folder: compiled on the device, then loaded.
    case package
    /// A `.mlmodelc` folder, compiled already: loaded as it is.
    case compiled

    /// Whether Core ML must compile the model before loading it.
    var needsCompiling: Bool { self != .compiled }

    /// Whether this platform's Core ML can compile a model: watchOS has no `MLModel.compileModel(at:)`.
    static var canCompileHere: Bool {
        #if os(watchOS)
        return false
        #else
        return true
        #endif
    }

    /// What the refusal says on a platform that cannot compile.
    static let noCompilerReason = "watchOS cannot compile Core ML models; seal the compiled .mlmodelc instead"

    /// The form of `fileName` (its last path component counts), a folder or not; refused with
    /// ``CofferError/modelInvalid(name:reason:)`` for `modelName` when Core ML cannot take it here.
    init(fileName: String, isFolder: Bool, modelName: String, canCompile: Bool = Self.canCompileHere) throws {
        let last = fileName.split(separator: "/").last.map(String.init) ?? ""
        let suffix = last.lastIndex(of: ".").map { last[last.index(after: $0)...].lowercased() } ?? ""
        func refuse(_ reason: String) -> CofferError { .modelInvalid(name: modelName, reason: reason) }
        switch (suffix, isFolder) {
        case ("mlmodel", false): self = .specification
        case ("mlpackage", true): self = .package
        case ("mlmodelc", true): self = .compiled
        case ("mlmodel", true): throw refuse("it is a folder, but a .mlmodel is one file")
        case ("mlpackage", false), ("mlmodelc", false):
            throw refuse("it is one file, but a .\(suffix) is a folder: seal the folder itself")
        default:
            let ending = Self.isShowable(suffix) ? "ends in .\(suffix), not" : "does not end in"
            throw refuse("it is not a Core ML model: its name \(ending) .mlmodel, .mlpackage or .mlmodelc")
        }
        guard canCompile || !needsCompiling else { throw refuse(Self.noCompilerReason) }
    }

    /// An extension short and plain enough to quote in a one-line message.
    private static func isShowable(_ suffix: String) -> Bool {
        !suffix.isEmpty && suffix.utf8.count <= 16
            && suffix.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x7A).contains($0) }
    }

    /// What Core ML was doing when it failed.
    enum Stage: Sendable {
        case compiling, loading
    }

    /// Why Core ML failed at `stage`, in one line from its error's domain and code only: Core ML's
    /// own messages can quote the model (layer, feature and file names), which is plaintext.
    /// `isCoreMLError`: the domain is Core ML's (`MLModelErrorDomain`), whose codes are named.
    static func failureReason(_ stage: Stage, isCoreMLError: Bool, domain: String, code: Int) -> String {
        let verb = stage == .compiling ? "compile" : "load"
        if isCoreMLError, let name = coreMLCodeNames[code] {
            return "Core ML could not \(verb) it (MLModelError.\(name), code \(code))"
        }
        let shownDomain = domain.utf8.count <= 64 && domain.unicodeScalars.allSatisfy({ $0.isASCII && $0.value > 0x20 })
            ? domain : "an error"
        return "Core ML could not \(verb) it (\(shownDomain) code \(code))"
    }

    /// `MLModelError.Code`'s cases by raw value, as Core ML's MLModelError.h numbers them.
    private static let coreMLCodeNames: [Int: String] = [
        0: "generic", 1: "featureType", 3: "io", 4: "customLayer", 5: "customModel", 6: "update", 7: "parameters",
        8: "modelDecryptionKeyFetch", 9: "modelDecryption", 10: "modelCollection", 11: "predictionCancelled",
    ]
}
