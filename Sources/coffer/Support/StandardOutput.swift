import CofferFormat
import Foundation

/// Plaintext to standard output, with every write checked (a closed pipe is an I/O error, exit 74).
enum StandardOutput {
    static func write(_ data: Data) throws {
        try data.withUnsafeBytes { try Descriptors.writeAll(1, $0, name: "standard output") }
    }

    /// Copies a whole source to standard output in 1 MiB pieces.
    static func write(_ source: some PlaintextSource) throws {
        let piece: UInt64 = 1 << 20
        var offset: UInt64 = 0
        var buffer = Data(count: Int(piece))
        while offset < source.length {
            let count = Int(min(piece, source.length - offset))
            try buffer.withUnsafeMutableBytes { try source.read(into: UnsafeMutableRawBufferPointer(rebasing: $0[..<count]), at: offset) }
            try write(buffer.prefix(count))
            offset += UInt64(count)
        }
    }
}
