import Foundation

/// An event ID of an app, as ``ReportBuffer`` remembers it: 128 bits of two keyed hashes of the
/// app ID and the event ID (SipHash-1-3 under the process's random seed, told apart by a leading
/// byte), so the idempotency sets hold 16-byte values with nothing to release, compare without
/// following a pointer, and free a generation of a quarter of a million at once.
///
/// Two different event IDs share a key with a probability of about n² / 2¹²⁹ among n remembered
/// (≈ 10⁻²⁷ for the half million kept), and a client cannot aim at a collision: the seed is
/// random per process and never leaves it. A collision would only answer one event as a duplicate.
struct ReportEventKey: Hashable, Sendable {
    private let high: UInt64
    private let low: UInt64

    /// The key of event `eventID` (its UTF-8 bytes) of app `appID`.
    init(appID: UUID, eventID: UnsafeBufferPointer<UInt8>) {
        var first = Hasher(), second = Hasher()
        first.combine(UInt8(1))
        second.combine(UInt8(2))
        withUnsafeBytes(of: appID.uuid) { first.combine(bytes: $0); second.combine(bytes: $0) }
        first.combine(bytes: UnsafeRawBufferPointer(eventID))
        second.combine(bytes: UnsafeRawBufferPointer(eventID))
        high = UInt64(truncatingIfNeeded: first.finalize())
        low = UInt64(truncatingIfNeeded: second.finalize())
    }

    /// One word is enough for the set's buckets: both are already uniformly spread.
    func hash(into hasher: inout Hasher) { hasher.combine(low) }
}
