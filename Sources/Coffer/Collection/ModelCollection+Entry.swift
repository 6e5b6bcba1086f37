import CofferFormat
import Foundation

extension ModelCollection {
    /// One model of a collection. Downloaded models are sealed Coffer containers on disk;
    /// ``data()``, ``reader()`` and ``withDecryptedFile(_:)`` open them, fetching the model key
    /// from the server the first time and keeping it in the key store for later, offline opens.
    public struct Entry: Sendable {
        /// The model's name in the collection.
        public let modelName: String
        /// The model version's ID, or the bundled model's version.
        public let version: String
        /// The sealed model's SHA-256 (nil for bundled models).
        public let sha256: String?
        /// The file's size in bytes.
        public let size: UInt64
        /// The model key that opens it; nil for a plain bundled model.
        public let keyID: String?
        /// The model on disk: a sealed container (``isSealed``) or a plain bundled model.
        public let modelURL: URL
        /// Whether ``modelURL`` is sealed.
        public let isSealed: Bool
        let keys: ModelKeys
        /// The deployment the model comes from and the client that reports on it; nil for bundled models.
        var source: Source? = nil

        /// The whole model decrypted into memory.
        public func data() async throws -> Data {
            guard isSealed else { return try Data(contentsOf: modelURL, options: .mappedIfSafe) }
            let reader = try await reader()
            return try checking(reader) { try reader.data() }
        }

        /// Authenticates every chunk `reader` (one of this entry's) reads, decrypting each once and
        /// keeping nothing. For a caller that hands bytes on as it decrypts
        /// (``ModelReader/stream(_:)``), which authenticates each chunk only as it comes to it:
        /// verified first, a damaged or forged model hands on nothing. Fails as ``data()`` does — a
        /// model damaged on this device is marked for the next update to download again.
        public func verify(_ reader: ModelReader) throws {
            try checking(reader) { try reader.sealed.verifyAll() }
        }

        /// A reader that decrypts any byte range on demand (for models larger than you want in memory).
        public func reader() async throws -> ModelReader {
            guard isSealed else { throw CofferError.modelInvalid(name: modelName, reason: "it is not sealed; read modelURL directly") }
            // The file as found before anything is read: a failure is blamed on it only if it is
            // still the file the path names (an update may replace it meanwhile).
            let identity = FileIdentity(path: modelURL.path)
            let header = try opening(identity) { try SealedModel.readHeader(path: modelURL.path) }
            let key = try await keys.key(keyID ?? "", for: modelName, opening: header, verifiedHeader: { try intactOrMarked(identity) })
            let reader = try opening(identity) {
                ModelReader(try SealedModel.Reader(path: modelURL.path, using: .modelKey(key)), identity: identity)
            }
            // Queued on disk before the reader is handed out (no network is waited for), so a
            // process that ends right after opening still reports it later.
            if let source, let sha256 {
                source.client.deviceFailures.forget(sha256)
                await source.client.opened(self, source: source)
            }
            return reader
        }

        /// `body`'s result; its errors as ``CofferError/modelInvalid(name:reason:)``. A model that
        /// fails its checks is reported as failed, and the collection falls back to its last known
        /// good — unless its file was damaged on this device (``intactOrMarked(_:)``). A file that
        /// cannot be read (missing, no descriptor left, an I/O error) says nothing about the model:
        /// not reported.
        private func opening<T>(_ identity: FileIdentity?, _ body: () throws -> T) throws -> T {
            do {
                return try body()
            } catch let failure as IOFailure where failure.isMissing {
                throw deviceFailure("its file is no longer on this device (replaced by an update, or removed); access the collection again")
            } catch let failure as IOFailure {
                throw unreadable(failure, identity)
            } catch {
                _ = try intactOrMarked(identity)
                source?.failedChecks(self, error)
                throw CofferError.modelInvalid(name: modelName, reason: "\(error)")
            }
        }

        /// `body`'s result, where `body` reads `reader` (one of this entry's) with the reader's own
        /// methods (``ModelReader/decrypt(to:)``, ``ModelReader/stream(_:)``, a range): a chunk that
        /// fails authentication is handled as ``data()`` handles it — a model damaged on this
        /// device is marked for the next update to download again (and this throws saying so), a
        /// model that fails its checks is reported as failed and its collection falls back to its
        /// last known good — and its error is thrown. Without it, a reader's own failure only
        /// throws: the damage stays until the model is opened through ``data()`` or ``verify(_:)``.
        public func checking<T>(_ reader: ModelReader, _ body: () throws -> T) throws -> T {
            do {
                return try body()
            } catch let failure as IOFailure where failure.path == modelURL.path {
                // Only a failure to read the model says anything about its file (not one of
                // `body` writing elsewhere). An I/O error marks it, and says so; anything else
                // (no descriptor left, …) is this device's failure, not the model's.
                if let marked = markedUnreadable(failure, reader.identity) { throw marked }
                _ = deviceFailure("\(failure)")
                throw failure
            } catch let error as ContainerError {
                _ = try intactOrMarked(reader.identity)
                source?.failedChecks(self, error)
                throw error
            }
        }

        /// True when the model's file still has the SHA-256 the signed manifest named (checked
        /// only once the model failed its checks: the whole file is read). Otherwise the file was
        /// damaged on this device after its download was verified — the disk, a backup restored
        /// half-way, another program — which says nothing about the model: nothing is reported,
        /// the collection does not fall back and the kept key stays; the model is marked
        /// (``CollectionCache/markDamaged(blobPath:)``) so that the next update downloads it again
        /// first, and this throws ``CofferError/modelInvalid(name:reason:)`` saying so. A file that
        /// cannot be read again, or that is no longer the file that failed (`identity`: an update
        /// replaced it meanwhile), is neither blamed nor marked: that throws too. A bundled model
        /// counts as intact.
        func intactOrMarked(_ identity: FileIdentity?) throws -> Bool {
            guard let sha256 else { return true }
            // Nothing was there before it was opened: whatever is there now is not what failed.
            switch identity.map({ FileDigest.check(path: modelURL.path, sha256: sha256, identity: $0) }) ?? .replaced {
            case .intact:
                return true
            case .damaged:
                CollectionCache.markDamaged(blobPath: modelURL.path)
                throw deviceFailure("its file on this device was damaged (it no longer has its SHA-256); the next update downloads it again")
            case .replaced:
                throw deviceFailure("its file was replaced while it was opened (an update downloaded it again); open it again")
            case .unreadable:
                throw deviceFailure("its file on this device could not be read again to check it; try again")
            }
        }

        /// `modelInvalid` for a file that could not be read; an I/O error of the disk marks it for
        /// the next update to download again (``CollectionCache/markDamaged(blobPath:ifUnreadable:)``)
        /// when it is still the file that failed (`identity`).
        private func unreadable(_ failure: IOFailure, _ identity: FileIdentity?) -> CofferError {
            markedUnreadable(failure, identity) ?? deviceFailure("\(failure)")
        }

        /// The failure saying so when `failure` is an I/O error of the file that failed (`identity`)
        /// and it is now marked for the next update to download again; else nil.
        private func markedUnreadable(_ failure: IOFailure, _ identity: FileIdentity?) -> CofferError? {
            guard let identity, FileIdentity(path: modelURL.path) == identity,
                  CollectionCache.markDamaged(blobPath: modelURL.path, ifUnreadable: failure)
            else { return nil }
            return deviceFailure("its file on this device cannot be read (an I/O error); the next update downloads it again")
        }

        /// `modelInvalid` for a failure of this device's file, not of the model, noted so that
        /// reporting it (``reportFailure(_:)``) sends nothing (``DeviceFailures``).
        private func deviceFailure(_ reason: String) -> CofferError {
            if let sha256 { source?.client.deviceFailures.note(sha256) }
            return CofferError.modelInvalid(name: modelName, reason: reason)
        }

        /// Calls `body` with a path to the decrypted model, for runtimes that only open paths, and
        /// removes it afterwards. On Linux the file lives only in memory (`memfd`; a folder model
        /// is unpacked into the RAM file system `/dev/shm`); on Apple platforms it is written to
        /// the app's temporary folder with complete file protection and removed when `body`
        /// returns (see docs/SDK.md).
        public func withDecryptedFile<Result>(_ body: (URL) async throws -> Result) async throws -> Result {
            guard isSealed else { return try await body(modelURL) }
            let reader = try await reader()
            let file: DecryptedFile
            do {
                // Checked unwrapped: a chunk that fails, or an I/O error reading the model, is
                // marked or reported as ``data()`` does.
                file = try checking(reader) { try DecryptedFile(reader.sealed) }
            } catch let error as CofferError {
                throw error
            } catch let failure as IOFailure {
                // Writing the plaintext copy (no room in the temporary folder, no descriptor left):
                // this device's failure, never reported against the model.
                throw deviceFailure("\(failure)")
            } catch {
                throw CofferError.modelInvalid(name: modelName, reason: "\(error)")
            }
            defer { file.remove() }
            return try await body(file.url)
        }
    }
}
