import Foundation

/// How many uploads into ``FolderBlobStore`` one account may have in progress at once: each upload
/// takes a slot when it begins and gives it back when it is published or discarded; one that finds
/// its account's slots taken is refused (``APIError/tooManyUploads()``) before a byte of its body
/// is read. Before, nothing bounded them: one account could keep any number of slow uploads open,
/// each a file being written and a connection held.
final class UploadSlots: @unchecked Sendable {
    /// As many uploads as one account may have in progress in a bucket with the default upload
    /// memory (``UploadMemory/defaultLimit``, a quarter of it each): six.
    static let defaultPerAccount = UploadMemory.accountShare(of: UploadMemory.defaultLimit) / S3Upload.reservedBytes

    private let lock = NSLock()
    private var slots: KeyedShares<UUID>

    /// At most `perAccount` uploads in progress per account.
    init(perAccount: Int64 = UploadSlots.defaultPerAccount) {
        slots = KeyedShares(share: perAccount)
    }

    /// The most uploads one account may have in progress.
    var perAccount: Int64 { slots.share }

    /// Takes a slot for `account`'s upload; false, taking nothing, when its slots are all taken.
    func take(for account: UUID) -> Bool {
        lock.withLock { slots.take(1, for: account) }
    }

    /// Gives back a slot ``take(for:)`` took for `account`.
    func giveBack(for account: UUID) {
        lock.withLock { _ = slots.giveBack(1, for: account) }
    }

    /// How many uploads `account` has in progress.
    func inProgress(for account: UUID) -> Int64 {
        lock.withLock { slots.held(by: account) }
    }
}
