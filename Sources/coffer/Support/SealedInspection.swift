import CofferFormat
import Foundation
import ModelInspection
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Inspects the model inside a sealed container with its key.
///
/// A sealed file is read chunk by chunk through ``SealedPlaintext``, in memory. A sealed folder (an
/// `.mlpackage` or `.mlmodelc`) has its packed tree restored, every chunk authenticated, into a fresh private
/// temporary folder (mode 0700, made by `mkdtemp`) that is removed when done.
enum SealedInspection {
    /// The report of the model sealed at `path` (whose header is `header`), opened with `key`.
    ///
    /// - Throws: container errors (wrong key, damaged container) and ``InspectionError`` (damaged model).
    static func report(_ path: String, header: ContainerHeader, using key: KeyMaterial) throws -> ModelReport {
        switch header.payloadKind {
        case .file:
            let reader = try SealedModel.Reader(path: path, using: key)
            return try ModelInspector.inspect(SealedPlaintext(reader), name: header.originalName)
        case .directory:
            return try inspect(path, name: header.originalName, using: key)
        }
    }

    /// Restores the sealed folder at `path` into a private folder made in `temporaryFolder`,
    /// inspects it and removes it again, whatever happened.
    static func inspect(_ path: String, name: String, using key: KeyMaterial,
                        temporaryFolder: String = FileManager.default.temporaryDirectory.path) throws -> ModelReport {
        var bytes = Array((temporaryFolder + "/coffer-inspect-XXXXXX").utf8CString)
        guard let made = mkdtemp(&bytes) else {
            throw CLIFailure(.cannotCreate, "cannot create a private temporary folder in \(temporaryFolder)")
        }
        let folder = String(cString: made)
        // A restored folder may be read-only (its recorded modes): removeTree makes each one writable first.
        defer { TreeUnpacker.removeTree(folder) }
        // The original name keeps its extension (which tells .mlpackage from .mlmodelc) but never a path.
        let last = (name as NSString).lastPathComponent
        let safe = last.isEmpty || last == "." || last == ".." ? "model" : last
        let destination = folder + "/" + safe
        _ = try SealedModel.open(contentsOf: path, to: destination, using: key)
        return try ModelInspector.inspect(path: destination)
    }
}
