import CofferFormat
import Foundation

extension FolderBlobStore {
    /// The container header of a stored blob and its size, read as every reader does
    /// (``SealedModel/readHeader(from:)``: the preamble, the exact length, then a version 2 chunk
    /// table no longer than the blob). nil when the blob is not stored; throws ``ContainerError``
    /// when it is not a valid container.
    func header(of address: String) async throws -> (header: ContainerHeader, size: Int64)? {
        guard let source = try? FileSource(path: path(of: address)) else { return nil }
        let header = try SealedModel.readHeader(from: source, maximumHeaderLength: SealedModel.maximumHeaderLength)
        guard header.sealedLength == source.length else {
            throw ContainerError.lengthMismatch(expected: header.sealedLength, actual: source.length)
        }
        return (header, Int64(source.length))
    }
}
