import Foundation

/// The background transports of this process, one per session identifier: the system allows one
/// session per identifier, and it must be re-created at launch to hear about downloads that ran
/// while the app was not.
enum BackgroundSessions {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var transports: [String: BackgroundTransport] = [:]

    /// The transport for `settings.identifier`, created on first use (later settings for the same
    /// identifier get the first one's session).
    static func transport(for settings: BackgroundDownloads, timeout: TimeInterval) -> BackgroundTransport {
        lock.withLock {
            if let existing = transports[settings.identifier] { return existing }
            let created = BackgroundTransport(settings: settings, timeout: timeout)
            transports[settings.identifier] = created
            return created
        }
    }

    /// The app delegate's completion handlers, by session, until the session's events are delivered.
    @MainActor private static var handlers: [String: () -> Void] = [:]

    /// Takes the app delegate's events for `identifier` if it is this SDK's: a session this process
    /// created, or the default identifier. The session itself is made by the client (with the
    /// app's settings), which the app creates at launch; its events then reach the handler.
    @MainActor static func handleEvents(_ identifier: String, completionHandler: @escaping () -> Void) -> Bool {
        let known = lock.withLock { transports[identifier] != nil }
        guard known || identifier == BackgroundDownloads.defaultIdentifier else { return false }
        handlers[identifier] = completionHandler
        return true
    }

    /// The session `identifier` delivered the events it woke the app for: the handler is called.
    @MainActor static func eventsDelivered(_ identifier: String) {
        handlers.removeValue(forKey: identifier)?()
    }
}
