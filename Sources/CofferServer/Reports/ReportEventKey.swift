import Foundation

/// An event ID of an app, as ``ReportBuffer`` remembers it: 127 bits of two keyed hashes of the
/// app ID and the event ID (SipHash-1-3 under the process's random seed, told apart by a leading
/// byte), so the idempotency tables (``ReportEventKeyTable``) hold 16-byte values with nothing to release,
/// compare without following a pointer, and free a generation of a quarter of a million at once.
///
/// Two different event IDs share a key with a probability of about n² / 2¹²⁸ among n remembered
/// (≈ 10⁻²⁷ for the half million kept), and a client cannot aim at a collision: the seed is
/// random per process and never leaves it. A collision would only answer one event as a duplicate.
struct ReportEventKey: Equatable, Sendable {
    private let high: UInt64
    private let low: UInt64

    /// The two hashers of an app's keys, fed as far as the app ID: a batch's events are one app's,
    /// and each event's key starts from a copy of these (the same key as hashing it whole).
    struct Prefix {
        fileprivate let first: Hasher
        fileprivate let second: Hasher

        init(appID: UUID) {
            var first = Hasher(), second = Hasher()
            first.combine(UInt8(1))
            second.combine(UInt8(2))
            withUnsafeBytes(of: appID.uuid) { first.combine(bytes: $0); second.combine(bytes: $0) }
            self.first = first
            self.second = second
        }
    }

    /// The key of event `eventID` (its UTF-8 bytes) of app `appID`.
    init(appID: UUID, eventID: UnsafeBufferPointer<UInt8>) {
        self.init(Prefix(appID: appID), eventID: eventID)
    }

    /// The key of event `eventID` (its UTF-8 bytes) of the app `prefix` was made for.
    init(_ prefix: Prefix, eventID: UnsafeBufferPointer<UInt8>) {
        var first = prefix.first, second = prefix.second
        first.combine(bytes: UnsafeRawBufferPointer(eventID))
        second.combine(bytes: UnsafeRawBufferPointer(eventID))
        // The top bit set: no key is all zeros, which ``ReportEventKeyTable`` takes for an empty slot.
        high = UInt64(truncatingIfNeeded: first.finalize()) | 1 << 63
        low = UInt64(truncatingIfNeeded: second.finalize())
    }

    /// A key given as its words (tests place keys in chosen slots); `high` must not be zero.
    init(high: UInt64, low: UInt64) {
        precondition(high != 0)
        self.high = high
        self.low = low
    }

    /// The key's two words; the first is never zero.
    var words: (UInt64, UInt64) { (high, low) }
}
