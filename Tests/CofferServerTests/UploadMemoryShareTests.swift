@testable import CofferServer
import Foundation
import Testing

/// The S3 store's upload budget, by itself: the whole budget, and one account's share of it
/// (through a real gateway: CofferCLITests' UploadMemoryTests).
@Suite("Upload memory: the budget and each account's share")
struct UploadMemoryShareTests {
    /// One upload's reservation (40 MiB).
    static let unit = S3Upload.reservedBytes

    @Test("one account holds at most a quarter of the budget; others still get theirs; what is given back can be taken again")
    func share() {
        let memory = UploadMemory(limit: 1 << 30)
        #expect(memory.accountShare == 256 << 20)
        let mallory = UUID(), alice = UUID()
        // 256 MiB / 40 MiB: six uploads, the seventh is past the share.
        for upload in 0..<6 { #expect(memory.reserve(Self.unit, for: mallory) == nil, "upload \(upload)") }
        #expect(memory.reserve(Self.unit, for: mallory) == .accountShareSpent)
        #expect(memory.reserve(Self.unit, for: alice) == nil)
        memory.release(Self.unit, for: mallory)
        #expect(memory.reserve(Self.unit, for: mallory) == nil)
        #expect(memory.reserve(Self.unit, for: mallory) == .accountShareSpent)
    }

    @Test("when accounts together hold the whole budget, the next account is refused as spent; one at its share hears that first")
    func spent() {
        let memory = UploadMemory(limit: 2 * Self.unit)
        // A budget of two uploads: a quarter is less than one upload, so the share is one upload.
        #expect(memory.accountShare == Self.unit)
        let first = UUID(), second = UUID(), third = UUID()
        #expect(memory.reserve(Self.unit, for: first) == nil)
        #expect(memory.reserve(Self.unit, for: first) == .accountShareSpent)
        #expect(memory.reserve(Self.unit, for: second) == nil)
        #expect(memory.reserve(Self.unit, for: third) == .spent)
        #expect(memory.reserve(Self.unit, for: first) == .accountShareSpent)
        memory.release(Self.unit, for: second)
        #expect(memory.reserve(Self.unit, for: third) == nil)
    }

    @Test("a budget of exactly one upload lets one account hold it; a release for an account that holds nothing takes nothing from others")
    func smallest() {
        let memory = UploadMemory(limit: Self.unit)
        #expect(memory.accountShare == Self.unit)
        let holder = UUID(), stranger = UUID()
        #expect(memory.reserve(Self.unit, for: holder) == nil)
        memory.release(Self.unit, for: stranger)
        #expect(memory.reserve(Self.unit, for: holder) == .accountShareSpent)
        #expect(memory.reserve(Self.unit, for: stranger) == .spent)
        #expect(memory.reserve(Int64.max, for: stranger) == .accountShareSpent)
    }
}
