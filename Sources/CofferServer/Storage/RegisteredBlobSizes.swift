import Fluent
import NIOConcurrencyHelpers

/// Each blob's registered size (its ``BlobRecord``, set when its bytes were checked), remembered so
/// a download compares it with the stored size without a query each time. One address has one size,
/// so an entry never goes stale; at most ``capacity`` are kept (then all are dropped, never a scan).
final class RegisteredBlobSizes: Sendable {
    /// The most sizes remembered.
    let capacity: Int
    private let sizes = NIOLockedValueBox<[String: Int64]>([:])

    init(capacity: Int = 100_000) { self.capacity = capacity }

    /// The size remembered for `address`, without asking the database (nil: not remembered).
    func remembered(_ address: String) -> Int64? {
        sizes.withLockedValue { $0[address] }
    }

    /// Forgets what is remembered of `address` (its blob is no longer in the store).
    func forget(_ address: String) {
        _ = sizes.withLockedValue { $0.removeValue(forKey: address) }
    }

    /// The size the blob at `address` was registered with, or nil when it has no record. `db` is
    /// asked only when the size is not remembered.
    func size(of address: String, on db: @autoclosure () -> any Database) async throws -> Int64? {
        if let known = sizes.withLockedValue({ $0[address] }) { return known }
        guard let record = try await BlobRecord.find(address, on: db()) else { return nil }
        sizes.withLockedValue { sizes in
            if sizes.count >= capacity { sizes.removeAll() }
            sizes[address] = record.size
        }
        return record.size
    }
}
