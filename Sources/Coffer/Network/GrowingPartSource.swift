import CofferFormat
import Foundation

/// A part file read while its download writes it: each read waits until its bytes are on disk
/// (``PartProgress``); its length is the size the manifest names.
struct GrowingPartSource: PlaintextSource {
    let file: PositionalFile
    let progress: PartProgress
    let length: UInt64

    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws {
        let (end, overflow) = offset.addingReportingOverflow(UInt64(buffer.count))
        guard !overflow, end <= length else { throw PartProgress.Stop.closed }
        try progress.wait(until: end)
        try file.readExactly(into: buffer, at: offset)
    }
}
