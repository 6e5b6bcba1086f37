import Foundation

/// The models (by SHA-256) whose last open in this process failed because of this device's file,
/// not the model: gone, damaged, replaced while it was opened, or unreadable
/// (``ModelCollection/Entry/intactOrMarked(_:)``). An app that reports such a failure
/// (`reportFailure(error)` in its `catch`) must not count against the model, even once an update
/// has put a good copy in place between the failure and the report; a later open that succeeds
/// forgets it.
final class DeviceFailures: @unchecked Sendable {
    private let lock = NSLock()
    private var models: Set<String> = []

    /// Notes that opening `sha256` failed because of this device's file.
    func note(_ sha256: String) { lock.withLock { _ = models.insert(sha256) } }

    /// Forgets `sha256`: it opened.
    func forget(_ sha256: String) { lock.withLock { _ = models.remove(sha256) } }

    /// Whether the last open of `sha256` failed because of this device's file.
    func contains(_ sha256: String) -> Bool { lock.withLock { models.contains(sha256) } }
}
