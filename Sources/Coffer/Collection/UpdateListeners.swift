import Foundation

/// Who listens to a client's collection switches, by identifier. Registration is synchronous, so
/// a listener made before an update hears of it.
final class UpdateListeners: @unchecked Sendable {
    private let lock = NSLock()
    private var listeners: [String: [UUID: AsyncStream<ModelCollection>.Continuation]] = [:]

    /// A stream of the collections `identifier` switches to from now on.
    func stream(_ identifier: String) -> AsyncStream<ModelCollection> {
        let (stream, continuation) = AsyncStream.makeStream(of: ModelCollection.self, bufferingPolicy: .bufferingNewest(8))
        let id = UUID()
        lock.withLock { listeners[identifier, default: [:]][id] = continuation }
        continuation.onTermination = { [weak self] _ in
            self?.lock.withLock { self?.listeners[identifier]?[id] = nil }
        }
        return stream
    }

    /// Tells every listener of the collection's identifier about it.
    func announce(_ collection: ModelCollection) {
        let continuations = lock.withLock { Array((listeners[collection.identifier] ?? [:]).values) }
        for continuation in continuations { continuation.yield(collection) }
    }
}
