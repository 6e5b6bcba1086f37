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
    /// What one account's uploads may hold at once (``accountShare(of:)``).
    var accountShare: Int64 { shares.share }
    private let lock = NSLock()
    private var reserved: Int64 = 0
    private var shares: KeyedShares<UUID>

    /// A budget of `limit` bytes of which one account may hold ``accountShare(of:)``.
    init(limit: Int64) {
        self.limit = limit
        shares = KeyedShares(share: Self.accountShare(of: limit))
    }

    /// One account's share of a budget of `limit` bytes: a quarter, and never less than one
    /// upload's ``S3Upload/reservedBytes``, so that an account can always hold one upload when the
    /// budget has room.
    static func accountShare(of limit: Int64) -> Int64 {
        max(limit / 4, min(S3Upload.reservedBytes, limit))
    }

    /// Takes `bytes` from the budget for `account`'s upload; the refusal (nothing taken) when the
    /// account's share, or else the budget, does not have them. The share is asked first: an account
    /// at its share hears so whether or not others have spent the rest.
    func reserve(_ bytes: Int64, for account: UUID) -> Refusal? {
        lock.withLock {
            guard shares.admits(bytes, for: account) else { return .accountShareSpent }
            guard bytes <= limit - reserved else { return .spent }
            reserved += bytes
            shares.take(bytes, for: account)
            return nil
        }
    }

    /// Gives back `bytes` taken by ``reserve(_:for:)`` for `account` (never more than it holds).
    func release(_ bytes: Int64, for account: UUID) {
        lock.withLock {
            reserved -= shares.giveBack(bytes, for: account)
        }
    }
}
