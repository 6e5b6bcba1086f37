import Foundation

/// Records reports in the on-disk ``ReportQueue`` and sends them in the background, in batches,
/// one send at a time per client (docs/SDK.md, "Reports").
///
/// Recording never waits for the network. A batch the server accepted (200) or refused for good
/// (400, 403, 413, 422) leaves the queue; a refusal that names one event drops only that event and
/// the rest go again at once. After 429, 5xx, another 4xx (401: a credential that may be fixed) or
/// no answer the queue stays, and the next background
/// try waits for the server's `Retry-After`, else for a backoff from 30 seconds doubling to 30
/// minutes; a new client (the app's next launch) tries again. When the queue cannot be written
/// after an answer (a full disk), the send stops there and the next waits for that backoff too.
///
/// A background send starts ``gathering`` seconds after the event that asked for it (or after the
/// client was made with reports queued), so that the events of one access go in one request and
/// none competes with the app's start. With ``UpdatePolicy/cachedOnly`` nothing is sent in the
/// background: such a client makes no request by itself, and reports wait for
/// ``CofferClient/sendReports()`` or a client with another policy.
actor Reporter {
    let queue: ReportQueue
    let api: DeviceAPI
    /// Whether sends start by themselves.
    let background: Bool
    /// How long a background send waits for more events.
    static let gathering: TimeInterval = 5
    /// Events recorded but maybe not yet on disk.
    private var recording: Task<Void, Never>?
    /// The send in flight: sends run one after the other.
    private var sending: Task<Void, Never>?
    private var backgroundWaiting = false
    private var wakeScheduled = false
    private var notBefore = Date.distantPast
    private var backoff: TimeInterval = 0
    /// `collection|sha256` of the models opened by this process (reported once).
    private var opened: Set<String> = []
    /// Events refused for good lately, by ID: what ``sendNow(until:)`` answers when a background
    /// send took its event first.
    private var refused: [String: ReportError] = [:]

    static let batchSize = 100

    init(queue: ReportQueue, api: DeviceAPI, background: Bool) {
        self.queue = queue
        self.api = api
        self.background = background
    }

    /// Records `events` on disk (a failing disk drops them: reports are never worth an error in
    /// the app), then starts a background send unless `sendInBackground` is false.
    func enqueue(_ events: [ReportEvent], sendInBackground background: Bool = true) async {
        guard !events.isEmpty else { return }
        let previous = recording
        let queue = self.queue
        let task = Task {
            await previous?.value
            try? await queue.append(events)
        }
        recording = task
        await task.value
        if background { sendSoon() }
    }

    /// Starts a background send in ``gathering`` seconds (or when the server's wait is over).
    func sendSoon() {
        guard background else { return }
        scheduleWake(after: max(Self.gathering, notBefore.timeIntervalSinceNow))
    }

    /// Whether model `sha256` of `collection` is opened for the first time by this process.
    func firstOpening(_ collection: String, _ sha256: String) -> Bool {
        opened.insert(collection + "|" + sha256).inserted
    }

    /// Starts a send unless one waits already or the server asked to wait.
    private func sendInBackground() {
        guard background, !backgroundWaiting else { return }
        let delay = notBefore.timeIntervalSinceNow
        guard delay <= 0 else {
            scheduleWake(after: delay)
            return
        }
        backgroundWaiting = true
        Task {
            _ = await self.serialized { await self.drain(until: nil) }
        }
    }

    /// What one send did.
    struct SendResult: Sendable {
        /// Events the server accepted.
        var accepted = 0
        /// What stopped the send before the queue was empty (it stays queued).
        var stop: ReportError?
        /// Whether the event asked about was answered, and the refusal if it was refused.
        var targetAnswered = false
        var targetError: ReportError?
    }

    /// Sends until the queue is empty, or until the event `target` was answered.
    func sendNow(until target: String?) async -> SendResult {
        await recording?.value
        var result = await serialized { await self.drain(until: target) }
        if let target, !result.targetAnswered {
            // A background send that ran first may have answered it.
            if let error = refused[target] {
                (result.targetAnswered, result.targetError) = (true, error)
            } else if let queued = try? await queue.events(), !queued.contains(where: { $0.id == target }) {
                result.targetAnswered = true
            }
        }
        return result
    }

    private func serialized<T: Sendable>(_ work: @escaping @Sendable () async -> T) async -> T {
        let previous = sending
        let task = Task {
            await previous?.value
            return await work()
        }
        sending = Task { _ = await task.value }
        return await task.value
    }

    /// One send: batches until the queue is empty, the target was answered, or the server cannot
    /// take more.
    private func drain(until target: String?) async -> SendResult {
        backgroundWaiting = false
        var result = SendResult()
        for _ in 0..<(ReportQueue.maximumEvents + 10) {
            guard let events = try? await queue.events(), !events.isEmpty else { break }
            let batch = Self.batch(events)
            let ids = Set(batch.map(\.id))
            let holdsTarget = target.map(ids.contains) ?? false
            switch await api.report(batch) {
            case .accepted:
                result.accepted += batch.count
                backoff = 0
                result.targetAnswered = result.targetAnswered || holdsTarget
                result.stop = await remove(ids)
            case .refused(let status, let code, let reason, let index):
                let error = ReportError.refused(status: status, code: code, reason: reason)
                // A refusal that names one event drops that one; the others go again at once.
                let dropped = index.flatMap { batch.indices.contains($0) ? [batch[$0].id] : nil } ?? Array(ids)
                result.stop = await remove(Set(dropped))
                if refused.count > ReportQueue.maximumEvents { refused.removeAll() }
                for id in dropped { refused[id] = error }
                if let target, dropped.contains(target) { (result.targetAnswered, result.targetError) = (true, error) }
            case .later(let status, let reason, let retryAfter):
                result.stop = .queued(.server(status: status, code: "unavailable", reason: reason))
                wait(retryAfter)
            case .unreachable(let reason):
                result.stop = .queued(.offline(reason))
                wait(nil)
            }
            if result.stop != nil || result.targetAnswered { break }
        }
        return result
    }

    /// Removes the events the server answered from the queue. When the queue cannot be written (a
    /// full disk, a read-only folder) they stay in it, and the send stops there, the next one
    /// waiting for the backoff: read again at once, the same batch would be sent again and again
    /// (the server counts an ID once, but each send costs the device's battery and the network).
    /// Why the send stops, or nil.
    private func remove(_ ids: Set<String>) async -> ReportError? {
        do {
            try await queue.remove(ids)
            return nil
        } catch {
            wait(nil)
            return .queued(.cache("\(Self.queueNotWritten) (\(error))"))
        }
    }

    /// Why events the server answered stay queued.
    static let queueNotWritten = "the report queue cannot be written"

    /// The oldest events that fit one request: at most ``batchSize``, within the body limit.
    static func batch(_ events: [ReportEvent]) -> [ReportEvent] {
        var batch: [ReportEvent] = []
        var bytes = 16
        let encoder = JSONEncoder()
        for event in events.prefix(batchSize) {
            let size = ((try? encoder.encode(event).count) ?? 4096) + 1
            guard batch.isEmpty || bytes + size <= DeviceAPI.maximumReportBody else { break }
            batch.append(event)
            bytes += size
        }
        return batch
    }

    /// No background send before `retryAfter` seconds, else the next backoff.
    private func wait(_ retryAfter: TimeInterval?) {
        backoff = min(max(backoff * 2, 30), 1800)
        let delay = retryAfter ?? backoff
        notBefore = Date().addingTimeInterval(delay)
        scheduleWake(after: delay)
    }

    private func scheduleWake(after delay: TimeInterval) {
        guard background, !wakeScheduled else { return }
        wakeScheduled = true
        Task { [weak self] in
            // Never a trap: whatever the delay is made of, the nanoseconds are finite and in range.
            let seconds = delay.isFinite ? min(max(delay, 0), RetryAfter.longest) : 0
            try? await Task.sleep(nanoseconds: UInt64(seconds * 1e9) + 1_000_000)
            await self?.woke()
        }
    }

    private func woke() {
        wakeScheduled = false
        sendInBackground()
    }
}
