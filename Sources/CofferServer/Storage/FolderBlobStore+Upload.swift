import CofferFormat
import Foundation
import NIOCore
import _NIOFileSystem

/// An upload into ``FolderBlobStore``: a new file under `incoming/` (0600), renamed into place
/// when published. It holds one of its uploader's ``UploadSlots`` until it is published or discarded.
final class FolderUpload: BlobUpload {
    private let store: FolderBlobStore
    private let path: String
    /// The account whose slot of the store's ``UploadSlots`` this upload holds.
    private let uploader: UUID
    private var handle: WriteFileHandle?
    private var written: Int64 = 0
    /// Whether the upload still holds its uploader's slot.
    private var holdsSlot = true

    /// An upload to the new file `path`, holding the slot the store took for `uploader`.
    init(store: FolderBlobStore, path: String, uploader: UUID) async throws {
        self.store = store
        self.path = path
        self.uploader = uploader
        handle = try await FileSystem.shared.openFile(
            forWritingAt: FilePath(path), options: .newFile(replaceExisting: false, permissions: [.ownerReadWrite]))
    }

    /// Gives the uploader's slot back, once.
    private func releaseSlot() {
        guard holdsSlot else { return }
        holdsSlot = false
        store.uploadSlots.giveBack(for: uploader)
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
        // Published or failed, the upload is over: a failed one is discarded and its file removed.
        defer { releaseSlot() }
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
        releaseSlot()
        if let handle {
            self.handle = nil
            try? await handle.close()
        }
        _ = try? await FileSystem.shared.removeItem(at: FilePath(path))
    }
}
