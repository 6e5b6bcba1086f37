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
    /// Sessions whose events were delivered before the app delegate handed over a handler, and when.
    @MainActor private static var deliveredEarly: [String: Date] = [:]

    /// How long a delivery that came before its handler answers that handler at once. The app
    /// creates the client (and so the session) at launch, before UIKit calls the app delegate with
    /// the handler, so a session with few events can finish delivering them first; a handler that
    /// arrives later than this belongs to new events.
    static let earlyDeliveryWindow: TimeInterval = 30

    /// Takes the app delegate's events for `identifier` if it is this SDK's: a session this process
    /// created, or the default identifier. The session itself is made by the client (with the
    /// app's settings), which the app creates at launch; its events then reach the handler, which
    /// is called at once if they were all delivered just before it came.
    @MainActor static func handleEvents(_ identifier: String, now: Date = Date(), completionHandler: @escaping () -> Void) -> Bool {
        let known = lock.withLock { transports[identifier] != nil }
        guard known || identifier == BackgroundDownloads.defaultIdentifier else { return false }
        if let delivered = deliveredEarly.removeValue(forKey: identifier), now.timeIntervalSince(delivered) < earlyDeliveryWindow {
            completionHandler()
        } else {
            handlers[identifier] = completionHandler
        }
        return true
    }

    /// The session `identifier` delivered the events it woke the app for: the handler is called,
    /// or, when none was handed over yet, the delivery is remembered for the one about to come.
    @MainActor static func eventsDelivered(_ identifier: String, now: Date = Date()) {
        if let handler = handlers.removeValue(forKey: identifier) {
            handler()
        } else {
            deliveredEarly[identifier] = now
        }
    }
}
