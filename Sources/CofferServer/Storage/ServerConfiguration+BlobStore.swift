import Vapor

extension ServerConfiguration {
    /// The blob store these settings name: the folder (COFFER_BLOB_DIR, else `DATA_DIR/blobs`).
    func makeBlobStore(_ app: Application) async throws -> any BlobStore {
        try FolderBlobStore(root: resolvedBlobDirectory)
    }
}
