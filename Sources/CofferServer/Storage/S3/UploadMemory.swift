import Foundation

/// The memory all uploads into ``S3BlobStore`` may hold at once (COFFER_S3_UPLOAD_MEMORY), and the
/// share of it one account's uploads may hold: each upload reserves ``S3Upload/reservedBytes`` when
/// it begins and gives them back when it is published or discarded. An upload that finds the budget
/// or its account's share spent is refused before a byte of its body is read, so many slow uploads
/// cannot take the memory every tenant shares: not from one account (its share runs out first), and
/// not from several without every one of them holding uploads.
final class UploadMemory: @unchecked Sendable {
    /// 1 GiB: 25 uploads at once.
    static let defaultLimit: Int64 = 1 << 30

    /// Why ``reserve(_:for:)`` took nothing.
    enum Refusal: Equatable {
        /// Uploads in progress hold all of ``limit``.
        case spent
        /// The account's uploads in progress hold all of its ``accountShare``.
        case accountShareSpent
    }

    let limit: Int64
    /// What one account's uploads may hold at once: a quarter of ``limit``, and never less than one
    /// upload's ``S3Upload/reservedBytes``, so that an account can always hold one upload when the
    /// budget has room.
    let accountShare: Int64
    private let lock = NSLock()
    private var reserved: Int64 = 0
    private var heldBy: [UUID: Int64] = [:]

    /// A budget of `limit` bytes of which one account may hold a quarter, or at least one upload.
    init(limit: Int64) {
        self.limit = limit
        accountShare = max(limit / 4, min(S3Upload.reservedBytes, limit))
    }

    /// Takes `bytes` from the budget for `account`'s upload; the refusal (nothing taken) when the
    /// account's share, or else the budget, does not have them. The share is asked first: an account
    /// at its share hears so whether or not others have spent the rest.
    func reserve(_ bytes: Int64, for account: UUID) -> Refusal? {
        lock.withLock {
            let held = heldBy[account, default: 0]
            guard bytes <= accountShare - held else { return .accountShareSpent }
            guard bytes <= limit - reserved else { return .spent }
            reserved += bytes
            heldBy[account] = held + bytes
            return nil
        }
    }

    /// Gives back `bytes` taken by ``reserve(_:for:)`` for `account` (never more than it holds).
    func release(_ bytes: Int64, for account: UUID) {
        lock.withLock {
            let held = heldBy[account, default: 0]
            let given = min(max(bytes, 0), held)
            reserved -= given
            heldBy[account] = held > given ? held - given : nil
        }
    }
}
