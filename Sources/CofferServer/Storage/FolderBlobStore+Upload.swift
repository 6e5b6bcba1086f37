import CofferFormat
import NIOCore
import _NIOFileSystem

/// An upload into ``FolderBlobStore``: a new file under `incoming/` (0600), renamed into place
/// when published.
final class FolderUpload: BlobUpload {
    private let store: FolderBlobStore
    private let path: String
    private var handle: WriteFileHandle?
    private var written: Int64 = 0

    init(store: FolderBlobStore, path: String) async throws {
        self.store = store
        self.path = path
        handle = try await FileSystem.shared.openFile(
            forWritingAt: FilePath(path), options: .newFile(replaceExisting: false, permissions: [.ownerReadWrite]))
    }

    func write(_ piece: ByteBuffer) async throws {
        // Written after publish or discard: a programming error, reported as a write failure.
        guard let handle else { throw IOFailure(operation: .write, path: path, errno: 0) }
        try await handle.write(contentsOf: piece, toAbsoluteOffset: written)
        written += Int64(piece.readableBytes)
    }

    /// The bytes reach the disk before the file is renamed into place (and the rename before this
    /// returns): after a power cut, a published blob is whole, never empty or short.
    func publish(as address: String) async throws {
        if let handle {
            self.handle = nil
            do {
                try await handle.synchronize()
            } catch {
                try? await handle.close()
                throw error
            }
            try await handle.close()
        }
        try store.publish(path, as: address)
    }

    func discard() async {
        if let handle {
            self.handle = nil
            try? await handle.close()
        }
        _ = try? await FileSystem.shared.removeItem(at: FilePath(path))
    }
}
