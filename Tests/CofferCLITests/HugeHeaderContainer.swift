import CofferFormat
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A version 2 container whose header claims more than `SealedModel.maximumHeaderLength`: what a
/// command that reads a local container's header must refuse from its preamble.
enum HugeHeaderContainer {
    /// Writes it as `name` in the CLI's folder and returns its preamble.
    ///
    /// A real container's fields, patched to claim one-byte chunks just too many for the limit;
    /// then that many valid table entries, written out (holes would read as empty chunks, refused
    /// at the first one); then holes up to the length the fields give.
    static func write(_ cli: CLI, _ name: String) throws -> ContainerHeader.Preamble {
        let sealed = try SealedModel.seal(Array(repeating: 7, count: 1000), name: "m", using: .modelKey(ModelKey.generate(name: "k")))
        let count = SealedModel.maximumHeaderLength / ChunkTable.entryLength + 1
        var fields = Array(sealed.prefix(Int(sealed[10]) << 8 | Int(sealed[11])))  // F, bytes 10-11
        let claimed = withUnsafeBytes(of: UInt32(count).bigEndian) { Array($0) }
        fields.replaceSubrange(16..<24, with: [0, 0, 0, 0] + claimed)  // plaintext length: one byte a chunk
        fields.replaceSubrange(56..<60, with: claimed)                 // chunk count
        let preamble = try #require(try ContainerHeader.preamble(from: fields))
        #expect(preamble.headerLength > SealedModel.maximumHeaderLength)
        let path = cli.path(name)
        cli.write(name, Data(fields))
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.seekToEnd()
        let entry = [UInt8](repeating: 0xA5, count: ChunkID.length) + [0, 0, 0, 1]
        let block = Data(Array(repeatElement(entry, count: 4096).joined()))
        var left = count
        while left > 0 {
            let entries = min(left, 4096)
            try handle.write(contentsOf: block.prefix(entries * ChunkTable.entryLength))
            left -= entries
        }
        try handle.close()
        #expect(truncate(path, off_t(preamble.sealedLength)) == 0)
        return preamble
    }

    /// Whether `result` is the one-line refusal of that header, exit 65.
    static func refused(_ result: CLI.Result, _ preamble: ContainerHeader.Preamble) -> Bool {
        let lines = result.stderr.split(separator: "\n")
        return result.status == 65 && lines.count == 1 && lines[0].contains("header is \(preamble.headerLength) bytes")
            && lines[0].contains("\(SealedModel.maximumHeaderLength)")
    }
}
