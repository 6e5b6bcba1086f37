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

    /// `work`'s result, or ``Exceeded`` once ``seconds`` have passed since the call, whichever
    /// comes first. At the deadline `work`'s task is cancelled (a ``CofferTransport`` stops its
    /// request when its task is cancelled) and this returns at once, without waiting for it to end.
    /// A cancellation of the caller reaches `work` the same way, and this then throws
    /// `CancellationError` at once.
    ///
    /// The trade-off: a transport that is slow to honour cancellation (FoundationNetworking's
    /// URLSession on Linux) or ignores it (an app's own ``CofferTransport``) keeps its abandoned
    /// request running until it notices, or until the answer ends; nothing it returns or throws is
    /// used. What the deadline bounds is the caller's wait, which is its point.
    func run<T: Sendable>(_ work: @escaping @Sendable () async throws -> T) async throws -> T {
        let first = FirstOutcome<T>()
        let seconds = self.seconds
        // Never a trap: whatever the number, the nanoseconds are finite and in range.
        let nanoseconds = UInt64((seconds.isFinite ? min(max(seconds, 0), Self.longest) : Self.longest) * 1e9)
        // Unstructured, so that the caller is not held until it ends: left to end on its own once cancelled.
        let request = Task {
            do {
                let value = try await work()
                first.finish(.success(value))
            } catch {
                first.finish(.failure(error))
            }
        }
        let timer = Task {
            do {
                try await Task.sleep(nanoseconds: nanoseconds)
            } catch {
                return  // cancelled: the race ended first
            }
            first.finish(.failure(Exceeded(seconds: seconds)))
        }
        defer {
            // Whichever came first, the others are stopped (cancelling a task that ended does nothing).
            request.cancel()
            timer.cancel()
        }
        return try await withTaskCancellationHandler {
            try await first.value()
        } onCancel: {
            request.cancel()
            first.finish(.failure(CancellationError()))
        }
    }

    /// The longest deadline a configuration may set: a day.
    static let longest: TimeInterval = 86_400

    /// `seconds` as a person writes it: `60`, `2.5`.
    static func format(_ seconds: TimeInterval) -> String {
        seconds == seconds.rounded() && abs(seconds) < 1e15 ? String(Int64(seconds)) : String(format: "%.1f", seconds)
    }
}
