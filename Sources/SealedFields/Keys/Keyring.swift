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

    var active: DataKey { lock.locked { keys[activeVersion]! } }
    var all: [DataKey] { lock.locked { keys.values.sorted { $0.version < $1.version } } }

    func key(version: UInt32) throws -> DataKey {
        guard let key = lock.locked({ keys[version] }) else { throw SealedFieldsError.unknownKeyVersion(version) }
        return key
    }

    func replace(keys: [UInt32: DataKey], active: UInt32) {
        lock.locked {
            self.keys = keys
            self.activeVersion = active
        }
    }
}

extension NSLock {
    /// `withLock`, which Foundation offers only from macOS 14 / iOS 17 on.
    func locked<T>(_ body: () throws -> T) rethrows -> T {
        lock()
        defer { unlock() }
        return try body()
    }
}
