import CofferFormat
import Foundation

extension BlobStore {
    /// The container header of a stored blob and its size: the preamble from the first bytes (at
    /// most 4 KiB), the exact length, then the rest of the header (a version 2 chunk table, no
    /// longer than the blob). nil when the blob is not stored; throws ``ContainerError`` when it is
    /// not a valid container.
    func header(of address: String) throws -> (header: ContainerHeader, size: Int64)? {
        guard let handle = FileHandle(forReadingAtPath: path(of: address)) else { return nil }
        defer { try? handle.close() }
        let size = Int64(try handle.seekToEnd())
        try handle.seek(toOffset: 0)
        let prefix = [UInt8](try handle.read(upToCount: ContainerHeader.maximumLength) ?? Data())
        guard prefix.count >= ContainerHeader.prefixLength else { throw ContainerError.notAContainer }
        guard let preamble = try ContainerHeader.preamble(from: prefix) else {
            throw ContainerError.malformedHeader("the header is cut short")
        }
        guard preamble.sealedLength == UInt64(size) else {
            throw ContainerError.lengthMismatch(expected: preamble.sealedLength, actual: UInt64(size))
        }
        try handle.seek(toOffset: 0)
        let bytes = [UInt8](try handle.read(upToCount: preamble.headerLength) ?? Data())
        return (try ContainerHeader(parsing: bytes), size)
    }
}
