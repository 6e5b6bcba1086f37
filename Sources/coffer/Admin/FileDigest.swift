import CofferFormat

/// The SHA-256 of a file, read in 1 MiB pieces (constant memory whatever its size).
enum FileDigest {
    static func sha256(of path: String) throws -> (hex: String, size: UInt64) {
        let file = try PositionalFile(readingAt: path)
        var digest = SHA256Digest()
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var offset: UInt64 = 0
        while true {
            let count = try buffer.withUnsafeMutableBytes { try file.read(into: $0, at: offset) }
            if count == 0 { break }
            buffer.withUnsafeBytes { digest.update(UnsafeRawBufferPointer(rebasing: $0[..<count])) }
            offset += UInt64(count)
        }
        return (digest.finalizeHex(), offset)
    }
}
