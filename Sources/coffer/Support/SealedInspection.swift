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
/// temporary folder (mode 0700, created exclusively under a fresh name) that is removed when done, also
/// by the signal handler's last-resort cleanup.
enum SealedInspection {
    /// The report of the model sealed at `path` (whose header is `header`), opened with `key`.
    ///
    /// - Throws: container errors (wrong key, damaged container) and ``InspectionError`` (damaged model).
    static func report(_ path: String, header: ContainerHeader, using key: KeyMaterial) throws -> ModelReport {
        switch header.payloadKind {
        case .file:
            let reader = try SealedModel.Reader(path: path, using: key, maximumHeaderLength: SealedModel.maximumHeaderLength)
            return try ModelInspector.inspect(SealedPlaintext(reader), name: header.originalName)
        case .directory:
            return try inspect(path, name: header.originalName, using: key)
        }
    }

    /// Restores the sealed folder at `path` into a private folder made in `temporaryFolder`,
    /// inspects it and removes it again, whatever happened.
    static func inspect(_ path: String, name: String, using key: KeyMaterial,
                        temporaryFolder: String = FileManager.default.temporaryDirectory.path) throws -> ModelReport {
        // Made as an output never committed: its folder (a fresh name, mode 0700, created
        // exclusively) is among the paths a signal's handler removes should the command not stop
        // in time, so the plaintext never outlives the process.
        let output = try AtomicOutput(finalPath: temporaryFolder + "/coffer-inspect-" + UUID().uuidString, replacing: false)
        let folder = output.temporaryPath
        guard mkdir(folder, 0o700) == 0 else {
            output.discard()
            throw CLIFailure(.cannotCreate, "cannot create a private temporary folder in \(temporaryFolder)")
        }
        // A restored folder may be read-only (its recorded modes): removeTree makes each one writable first.
        defer { output.discard() }
        // The original name keeps its extension (which tells .mlpackage from .mlmodelc) but never a path.
        let last = (name as NSString).lastPathComponent
        let safe = last.isEmpty || last == "." || last == ".." ? "model" : last
        let destination = folder + "/" + safe
        _ = try SealedModel.open(contentsOf: path, to: destination, using: key, maximumHeaderLength: SealedModel.maximumHeaderLength)
        return try ModelInspector.inspect(path: destination)
    }
}
