import Vapor

extension ServerConfiguration {
    /// The blob store these settings name: the bucket of COFFER_BLOB_STORE (checked now), else the
    /// folder (COFFER_BLOB_DIR, else `DATA_DIR/blobs`).
    func makeBlobStore(_ app: Application) async throws -> any BlobStore {
        guard let objectStore else { return try FolderBlobStore(root: resolvedBlobDirectory) }
        return try await S3BlobStore.open(objectStore, app: app)
    }
}
