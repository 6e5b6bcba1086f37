import Foundation

/// The whole-request deadline of the SDK's small requests — manifests, key deliveries, report
/// uploads, attestation challenges (``CofferConfiguration/requestDeadline``).
///
/// A transport's timeout bounds each wait for the next bytes, so a server or CDN that sends one
/// byte every few seconds keeps a request going for as long as the transport lets a request live
/// (a day with AsyncHTTPClient, a week with URLSession's resource timeout). The deadline bounds
/// the request from its start to the end of its answer, whatever the bytes' pace; model downloads,
/// whose size has no such bound, are not subject to it.
struct RequestDeadline: Sendable {
    /// The longest a request may take, in seconds.
    let seconds: TimeInterval

    /// A request that had not ended when its deadline came; it was cancelled.
    struct Exceeded: Error, Sendable, CustomStringConvertible {
        let seconds: TimeInterval

        /// One line for an ``UnavailableCause/offline(_:)``: never the URL, its query or a credential.
        var description: String { "timed out: no complete answer within \(RequestDeadline.format(seconds)) s" }
    }

    /// `work`'s result, or ``Exceeded`` once ``seconds`` have passed since the call: `work`'s task
    /// is then cancelled (a ``CofferTransport`` stops its request when its task is cancelled) and
    /// this returns once it ended. A cancellation of the caller reaches `work` as usual.
    func run<T>(_ work: @escaping @Sendable () async throws -> T) async throws -> T {
        let slot = ResultSlot<T>()
        let seconds = self.seconds
        // Never a trap: whatever the number, the nanoseconds are finite and in range.
        let nanoseconds = UInt64((seconds.isFinite ? min(max(seconds, 0), Self.longest) : Self.longest) * 1e9)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { slot.set(try await work()) }
            group.addTask {
                try await Task.sleep(nanoseconds: nanoseconds)
                throw Exceeded(seconds: seconds)
            }
            // The first to end decides; the other is cancelled, and waited for.
            defer { group.cancelAll() }
            try await group.next()
        }
        guard let value = slot.take() else { throw CancellationError() }
        return value
    }

    /// The longest deadline a configuration may set: a day.
    static let longest: TimeInterval = 86_400

    /// `seconds` as a person writes it: `60`, `2.5`.
    static func format(_ seconds: TimeInterval) -> String {
        seconds == seconds.rounded() && abs(seconds) < 1e15 ? String(Int64(seconds)) : String(format: "%.1f", seconds)
    }
}

/// The value a child task of ``RequestDeadline/run(_:)`` produced, handed to the caller.
private final class ResultSlot<T>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: T?

    func set(_ value: T) { lock.withLock { self.value = value } }

    func take() -> T? {
        lock.withLock {
            defer { value = nil }
            return value
        }
    }
}
