#if canImport(CoreML)
import CofferFormat
import CoreML
import Foundation

extension ModelCollection.Entry {
    /// The model loaded into Core ML; the decrypted and compiled files are removed before this returns.
    ///
    /// The model is decrypted into a protected temporary file or folder as
    /// ``withDecryptedFile(_:)`` does, compiled on the device when it needs it, and loaded with
    /// `MLModel.load(contentsOf:configuration:)`. The decrypted model and the compiled `.mlmodelc`
    /// that Core ML writes to the app's temporary folder are removed as soon as the model has
    /// loaded: Core ML reads the model while loading, and what it memory-mapped stays readable
    /// through the mapping once the file is removed. What that costs on a locked device, and what
    /// Core ML may cache by itself, is in docs/SDK.md.
    ///
    /// What Core ML is given follows the model's original name and whether it is a file or a
    /// folder, both from the sealed model's authenticated header:
    /// - `.mlmodelc` (a folder, compiled already): loaded as it is. The fastest form, and the only
    ///   one watchOS takes, since watchOS cannot compile models.
    /// - `.mlmodel` (one file) or `.mlpackage` (a folder): compiled with
    ///   `MLModel.compileModel(at:)`, then loaded. Compiling takes time on every call; keep the
    ///   returned model rather than loading it again.
    /// - anything else: refused, before the key is fetched or a byte decrypted.
    ///
    /// A plain bundled model is loaded from its ``modelURL``, which is never removed (only a
    /// compiled copy of it is).
    ///
    /// Reporting stays the app's: call ``reportLoaded()`` once the model works, or
    /// ``reportFailure(_:)`` with the error.
    ///
    /// - Parameter configuration: how Core ML loads the model (compute units and so on). The call
    ///   runs off the caller's actor: pass a configuration made for it, not one an actor keeps.
    /// - Returns: the loaded model.
    /// - Throws: ``CofferError/modelInvalid(name:reason:)`` when the model is not a form Core ML
    ///   takes on this platform, or Core ML cannot compile or load it (the reason names Core ML's
    ///   error code, never its message, which can quote the model); otherwise what
    ///   ``withDecryptedFile(_:)`` throws, such as ``CofferError/keyFetchFailed(keyID:reason:)``.
    public func loadCoreMLModel(configuration: MLModelConfiguration = MLModelConfiguration()) async throws -> MLModel {
        // The header read without the key, to refuse early; the decision that counts is made
        // again below, on what was decrypted under the authenticated header.
        if isSealed, let header = try? SealedModel.readHeader(path: modelURL.path) {
            _ = try CoreMLPayload(fileName: header.originalName, isFolder: header.payloadKind == .directory, modelName: modelName)
        }
        return try await withDecryptedFile { (url: URL) async throws -> MLModel in
            let payload = try CoreMLPayload(fileName: url.lastPathComponent, isFolder: Self.isFolder(url), modelName: modelName)
            guard payload.needsCompiling else { return try await coreMLLoad(url, configuration: configuration) }
            let compiled = try await coreMLCompile(url)
            defer { try? FileManager.default.removeItem(at: compiled) }
            return try await coreMLLoad(compiled, configuration: configuration)
        }
    }

    /// Whether `url` is a folder.
    private static func isFolder(_ url: URL) -> Bool {
        (try? url.resourceValues(forKeys: [.isDirectoryKey]))?.isDirectory == true
    }

    /// The `.mlmodelc` Core ML compiles `url` into, in a temporary folder of its choosing.
    private func coreMLCompile(_ url: URL) async throws -> URL {
        #if os(watchOS)
        throw CofferError.modelInvalid(name: modelName, reason: CoreMLPayload.noCompilerReason)
        #else
        do {
            return try await MLModel.compileModel(at: url)
        } catch {
            throw coreMLFailure(.compiling, error)
        }
        #endif
    }

    /// The compiled model at `url`, loaded.
    private func coreMLLoad(_ url: URL, configuration: MLModelConfiguration) async throws -> MLModel {
        do {
            return try await MLModel.load(contentsOf: url, configuration: configuration)
        } catch {
            throw coreMLFailure(.loading, error)
        }
    }

    /// `error` from Core ML as ``CofferError/modelInvalid(name:reason:)`` naming its domain and
    /// code only; a cancellation stays one.
    private func coreMLFailure(_ stage: CoreMLPayload.Stage, _ error: any Error) -> any Error {
        if error is CancellationError { return error }
        let failure = error as NSError
        let reason = CoreMLPayload.failureReason(
            stage, isCoreMLError: failure.domain == MLModelErrorDomain, domain: failure.domain, code: failure.code)
        return CofferError.modelInvalid(name: modelName, reason: reason)
    }
}
#endif
