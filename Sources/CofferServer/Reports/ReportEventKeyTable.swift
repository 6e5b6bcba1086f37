import Foundation

/// The event keys one generation of ``ReportBuffer`` remembers: a fixed table of slots with linear
/// probing, placed by the keys' own bits. The keys are already uniformly random (keyed hashes), so
/// nothing is hashed again: a `Set` fed each key through SipHash once more on every lookup, two
/// lookups an event, under the buffer's lock.
///
/// Only used under that lock, or by one thread after it left the buffer's state (hence
/// `@unchecked Sendable`). It holds at most ``capacity`` keys,
/// in twice as many slots (16 bytes each; 8 MiB for a quarter of a million), allocated zeroed, so
/// the pages cost nothing until used.
final class ReportEventKeyTable: @unchecked Sendable {
    /// The most keys it takes; ``insert(_:)`` refuses more.
    let capacity: Int
    /// Keys held.
    private(set) var count = 0
    private let mask: Int
    private let slots: UnsafeMutablePointer<(UInt64, UInt64)>

    init(capacity: Int) {
        precondition(capacity > 0 && capacity <= 1 << 30)
        var slotCount = 16
        while slotCount < capacity * 2 { slotCount <<= 1 }
        self.capacity = capacity
        mask = slotCount - 1
        // calloc: a table this size comes from fresh, zeroed pages (an empty slot is all zeros).
        guard let memory = calloc(slotCount, MemoryLayout<(UInt64, UInt64)>.stride) else { fatalError("out of memory for the report key table") }
        slots = memory.bindMemory(to: (UInt64, UInt64).self, capacity: slotCount)
    }

    deinit { free(slots) }

    /// Empties the table, keeping its memory (its pages stay mapped: reusing them costs no faults).
    func removeAll() {
        memset(slots, 0, (mask + 1) * MemoryLayout<(UInt64, UInt64)>.stride)
        count = 0
    }

    /// Whether `key` is held.
    func contains(_ key: ReportEventKey) -> Bool { slot(of: key).held }

    /// Adds `key`; false when it was already held. Precondition: not full, or `key` held.
    func insert(_ key: ReportEventKey) -> Bool {
        let (index, held) = slot(of: key)
        if held { return false }
        precondition(count < capacity, "the report key table is full")
        slots[index] = key.words
        count += 1
        return true
    }

    /// The slot holding `key`, or the empty one where it would go.
    private func slot(of key: ReportEventKey) -> (index: Int, held: Bool) {
        let (high, low) = key.words
        var index = Int(truncatingIfNeeded: low) & mask
        while true {
            let slot = slots[index]
            if slot.0 == high && slot.1 == low { return (index, true) }
            if slot.0 == 0 { return (index, false) }
            index = (index + 1) & mask
        }
    }
}
