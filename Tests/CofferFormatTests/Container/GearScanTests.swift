import Testing
@testable import CofferFormat

/// The gear scan rolls several bytes a step; it must find the boundary a byte-at-a-time roll
/// finds, at every alignment of its start and end, and leave the same hash when it finds none
/// (the loose test after the average length continues from it).
@Suite("Version 2: the gear scan")
struct GearScanTests {
    /// One byte a step, as docs/FORMAT.md states the hash.
    static func naiveScan(_ bytes: [UInt8], _ gear: [UInt64], from: Int, to end: Int, shift: UInt64,
                          hash: inout UInt64) -> Int? {
        for index in from..<max(from, end) {
            hash = (hash &<< 1) &+ gear[Int(bytes[index])]
            if hash >> shift == 0 { return index + 1 }
        }
        return nil
    }

    @Test("every start and end alignment, frequent and rare boundaries: the same cut as one byte a step",
          arguments: [61, 58, 54] as [UInt64])
    func sameAsOneByteAStep(shift: UInt64) {
        let bytes = DeterministicSealingTests.noise(4096, seed: UInt8(shift))
        let gear = DeterministicSealingTests.gear
        var found = 0
        var mismatches: [String] = []
        for from in 0..<9 {
            for end in stride(from: from, through: bytes.count, by: 61) + [bytes.count - 1, bytes.count] {
                var start = 0
                while start < end {
                    var expectedHash: UInt64 = 0x0123_4567_89ab_cdef
                    var hash = expectedHash
                    let expected = Self.naiveScan(bytes, gear, from: start + from, to: end, shift: shift, hash: &expectedHash)
                    let cut = bytes.withUnsafeBytes { raw in
                        gear.withUnsafeBufferPointer {
                            ContentChunker.scan(raw, $0, from: min(start + from, end), to: end, shift: shift, hash: &hash)
                        }
                    }
                    if cut != expected { mismatches.append("from \(start + from) to \(end): \(String(describing: cut)), not \(String(describing: expected))") }
                    if expected == nil, hash != expectedHash { mismatches.append("from \(start + from) to \(end): the hash left differs") }
                    guard let next = expected else { break }
                    found += 1
                    start = next
                }
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches.count) scans differ, the first: \(mismatches.first ?? "")")
        #expect(found > 0, "some boundaries were found")
    }
}
