import Foundation

/// The memory all uploads into ``S3BlobStore`` may hold at once (COFFER_S3_UPLOAD_MEMORY): each
/// reserves ``S3Upload/reservedBytes`` when it begins and gives them back when it is published or
/// discarded. An upload that finds the budget spent is refused before a byte of its body is read,
/// so many slow uploads (from one team or several) cannot take the memory every tenant shares.
final class UploadMemory: @unchecked Sendable {
    /// 1 GiB: 25 uploads at once.
    static let defaultLimit: Int64 = 1 << 30

    let limit: Int64
    private let lock = NSLock()
    private var reserved: Int64 = 0

    init(limit: Int64) {
        self.limit = limit
    }

    /// Takes `bytes` from the budget; false (nothing taken) when they are not there.
    func reserve(_ bytes: Int64) -> Bool {
        lock.withLock {
            guard bytes <= limit - reserved else { return false }
            reserved += bytes
            return true
        }
    }

    /// Gives back `bytes` taken by ``reserve(_:)``.
    func release(_ bytes: Int64) {
        lock.withLock { reserved = max(0, reserved - bytes) }
    }
}
