import Foundation

/// Primary keys for the rows one report flush writes: UUIDs of version 7 (RFC 9562 §5.7), 48 bits
/// of Unix milliseconds, then a counter (42 bits, started at random) and 32 random bits fixed for
/// the flush.
///
/// Keys made later sort later, so each row goes at the end of the primary key's index. Random
/// (version 4) keys put every insert on a random page of that index: once `report_devices` outgrew
/// SQLite's page cache, a flush of 20 000 rows spent most of a second of CPU reading and spilling
/// pages, while the event loops answering devices shared the same cores. One draw from the
/// system's random source per flush, too, where Foundation's `UUID()` opens `/dev/urandom` for
/// every key on Linux.
///
/// Unique: within a flush the counter differs; two flushes in the same millisecond (another
/// instance's, or the one at shutdown) differ in 74 random bits.
struct ReportRowIDs {
    private let milliseconds: UInt64
    private let tail: UInt32
    private var counter: UInt64

    /// A sequence starting now.
    init(now: Date = Date()) {
        var random = SystemRandomNumberGenerator()
        let draw = random.next() as UInt64
        milliseconds = UInt64(max(0, now.timeIntervalSince1970 * 1000).rounded(.down)) & 0xFFFF_FFFF_FFFF
        tail = UInt32(truncatingIfNeeded: draw)
        // 42 bits of counter, started in the lower half so that no flush can carry out of it.
        counter = (draw >> 32) & 0x1FF_FFFF_FFFF
    }

    /// The next key.
    mutating func next() -> UUID {
        let value = counter
        counter &+= 1
        let randA = UInt8(truncatingIfNeeded: value >> 30)          // the counter's top 12 bits…
        let randB = UInt32(truncatingIfNeeded: value & 0x3FFF_FFFF) // …and its low 30
        let m = milliseconds
        return UUID(uuid: (
            UInt8(truncatingIfNeeded: m >> 40), UInt8(truncatingIfNeeded: m >> 32), UInt8(truncatingIfNeeded: m >> 24),
            UInt8(truncatingIfNeeded: m >> 16), UInt8(truncatingIfNeeded: m >> 8), UInt8(truncatingIfNeeded: m),
            0x70 | UInt8(truncatingIfNeeded: value >> 38) & 0x0F, randA,
            0x80 | UInt8(truncatingIfNeeded: randB >> 24) & 0x3F, UInt8(truncatingIfNeeded: randB >> 16),
            UInt8(truncatingIfNeeded: randB >> 8), UInt8(truncatingIfNeeded: randB),
            UInt8(truncatingIfNeeded: tail >> 24), UInt8(truncatingIfNeeded: tail >> 16),
            UInt8(truncatingIfNeeded: tail >> 8), UInt8(truncatingIfNeeded: tail)))
    }
}
