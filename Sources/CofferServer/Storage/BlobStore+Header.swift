import CofferFormat
import Foundation

extension BlobStore {
    /// The container header of a stored blob, read from its first bytes (at most 4 KiB), and its size.
    /// nil when the blob is not stored; throws ``ContainerError`` when it is not a valid container.
    func header(of address: String) throws -> (header: ContainerHeader, size: Int64)? {
        guard let handle = FileHandle(forReadingAtPath: path(of: address)) else { return nil }
        defer { try? handle.close() }
        let size = Int64(try handle.seekToEnd())
        try handle.seek(toOffset: 0)
        let prefix = [UInt8](try handle.read(upToCount: ContainerHeader.maximumLength) ?? Data())
        guard prefix.count >= ContainerHeader.prefixLength else { throw ContainerError.notAContainer }
        let length = try ContainerHeader.encodedLength(fromPrefix: prefix)
        guard prefix.count >= length else { throw ContainerError.malformedHeader("the header is cut short") }
        let header = try ContainerHeader(parsing: Array(prefix.prefix(length)))
        guard header.sealedLength == UInt64(size) else {
            throw ContainerError.lengthMismatch(expected: header.sealedLength, actual: UInt64(size))
        }
        return (header, size)
    }
}
