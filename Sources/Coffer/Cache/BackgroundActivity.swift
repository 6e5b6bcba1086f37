import Foundation

/// Time the system grants an app to finish work after it leaves the foreground.
///
/// An update holds the collection's update lock (a `flock`) while it downloads. iOS kills an app
/// that is suspended holding a file lock in an App Group container (exception code 0xdead10cc), so
/// an update runs inside an activity: the system keeps the app running until the update ends, and when that time
/// runs out the update is cancelled, which releases the lock before suspension (the download
/// resumes from its part file next time).
protocol BackgroundActivity: Sendable {
    /// Begins an activity; `expired` is called (once, on any thread) if the system is about to
    /// suspend the app before `end` was called. The returned function ends the activity.
    func begin(_ reason: String, expired: @escaping @Sendable () -> Void) -> @Sendable () -> Void
}

extension BackgroundActivity {
    /// Runs `work` inside an activity, cancelling it if the activity expires.
    func run<Value: Sendable>(_ reason: String, _ work: @escaping @Sendable () async throws(SyncFailure) -> Value) async throws(SyncFailure) -> Value {
        let task = Task { () async throws -> Value in try await work() }
        let end = begin(reason) { task.cancel() }
        defer { end() }
        do {
            return try await withTaskCancellationHandler { try await task.value } onCancel: { task.cancel() }
        } catch let failure as SyncFailure {
            throw failure
        } catch {
            throw .cancelled
        }
    }
}

/// Apple platforms that suspend apps: `ProcessInfo.performExpiringActivity(withReason:using:)`,
/// the one background-time API that app extensions and watchOS apps have too (UIApplication's
/// `beginBackgroundTask` is unavailable in extensions, where 0xdead10cc is most common). Its block
/// holds the activity while it runs, so one waits on a thread of its own until the work ends;
/// called again as expired, it cancels the work and gives it up to two seconds to let go of the lock.
struct SystemBackgroundActivity: BackgroundActivity {
    func begin(_ reason: String, expired: @escaping @Sendable () -> Void) -> @Sendable () -> Void {
        #if os(iOS) || os(tvOS) || os(watchOS) || os(visionOS)
        let ended = DispatchSemaphore(value: 0)
        let state = ActivityState()
        ProcessInfo.processInfo.performExpiringActivity(withReason: reason) { isExpired in
            if isExpired {
                if state.expire() { expired() }
                _ = ended.wait(timeout: .now() + 2)
                ended.signal() // the holder below, if any, returns too
            } else {
                ended.wait()
                ended.signal()
            }
        }
        return { if state.end() { ended.signal() } }
        #else
        // macOS and Linux do not suspend a running process this way.
        return {}
        #endif
    }
}

/// An activity's two events: the work ended, the system's time expired.
final class ActivityState: @unchecked Sendable {
    private let lock = NSLock()
    private var ended = false
    private var expired = false

    /// True the first time: the work ended.
    func end() -> Bool {
        lock.withLock {
            defer { ended = true }
            return !ended
        }
    }

    /// True the first time, and only if the work has not ended: it is to be cancelled.
    func expire() -> Bool {
        lock.withLock {
            defer { expired = true }
            return !ended && !expired
        }
    }
}
