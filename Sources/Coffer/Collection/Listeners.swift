import Foundation

/// Who listens to a client's news about its collections, by identifier: the collections an
/// update switched to, or the causes of updates that failed. Registration is synchronous, so a
/// listener made before an update hears of it.
final class Listeners<Element: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var listeners: [String: [UUID: AsyncStream<Element>.Continuation]] = [:]

    /// A stream of what is announced for `identifier` from now on (the newest 8 kept when the
    /// listener falls behind).
    func stream(_ identifier: String) -> AsyncStream<Element> {
        let (stream, continuation) = AsyncStream.makeStream(of: Element.self, bufferingPolicy: .bufferingNewest(8))
        let id = UUID()
        lock.withLock { listeners[identifier, default: [:]][id] = continuation }
        continuation.onTermination = { [weak self] _ in
            self?.lock.withLock { self?.listeners[identifier]?[id] = nil }
        }
        return stream
    }

    /// Tells every listener of `identifier` about `element`.
    func announce(_ element: Element, to identifier: String) {
        let continuations = lock.withLock { Array((listeners[identifier] ?? [:]).values) }
        for continuation in continuations { continuation.yield(element) }
    }
}
