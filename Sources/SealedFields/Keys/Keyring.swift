import Foundation

/// The data keys a store can read with, and the one it writes with. Changed only by rotation and
/// retirement, under a lock, after the database transaction that made the change has committed.
final class Keyring: @unchecked Sendable {
    private let lock = NSLock()
    private var keys: [UInt32: DataKey]
    private var activeVersion: UInt32

    init(keys: [UInt32: DataKey], active: UInt32) {
        self.keys = keys
        self.activeVersion = active
    }

    var active: DataKey { lock.withLock { keys[activeVersion]! } }
    var all: [DataKey] { lock.withLock { keys.values.sorted { $0.version < $1.version } } }

    func key(version: UInt32) throws -> DataKey {
        guard let key = lock.withLock({ keys[version] }) else { throw SealedFieldsError.unknownKeyVersion(version) }
        return key
    }

    func replace(keys: [UInt32: DataKey], active: UInt32) {
        lock.withLock {
            self.keys = keys
            self.activeVersion = active
        }
    }
}
