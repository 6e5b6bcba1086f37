import CofferFormat
import Foundation

/// The reports not yet accepted by the server, on disk so that they survive the app's end
/// (docs/SDK.md, "Reports"):
///
/// ```
/// ROOT/reports/queue.json   {"format": 1, "events": [...]}, oldest first (0600, replaced in one rename)
/// ROOT/reports/lock         held while the file is read and replaced (several processes may share a cache)
/// ```
///
/// Bounded: at most ``maximumEvents`` events, none older than ``maximumAge`` (the server refuses
/// older ones); the oldest go first. A file that cannot be read is started afresh: reports are
/// worth less than a working app.
struct ReportQueue: Sendable {
    static let maximumEvents = 1000
    static let maximumAge: TimeInterval = 7 * 86_400
    /// Far above 1000 bounded events; a larger file is not read.
    static let maximumFileSize = 4 << 20

    private struct Stored: Codable {
        var format = 1
        var events: [ReportEvent]
    }

    let folder: String
    var path: String { folder + "/queue.json" }

    init(root: URL) {
        folder = root.appendingPathComponent("reports", isDirectory: true).path
    }

    /// Adds `events` at the end, dropping what exceeds the bounds.
    func append(_ events: [ReportEvent]) async throws {
        try await modify { $0 += events }
    }

    /// Removes the events whose IDs are in `ids`.
    func remove(_ ids: Set<String>) async throws {
        try await modify(at: "reports-removing") { $0.removeAll { ids.contains($0.id) } }
    }

    /// The events, oldest first, within the bounds.
    func events() async throws -> [ReportEvent] {
        guard FileManager.default.fileExists(atPath: path) else { return [] }
        let lock = try await FileLock.acquire(try lockPath())
        defer { lock.release() }
        return Self.bounded(read(), now: Date())
    }

    /// Whether the file exists (a cheap look before starting a background send).
    var mayHoldEvents: Bool { FileManager.default.fileExists(atPath: path) }

    /// Changes the events under the lock and replaces the file; `point` names the crash point
    /// (``CrashPoint``) before the write.
    private func modify(at point: String? = nil, _ change: (inout [ReportEvent]) -> Void) async throws {
        let lock = try await FileLock.acquire(try lockPath())
        defer { lock.release() }
        var events = read()
        change(&events)
        events = Self.bounded(events, now: Date())
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let bytes = try encoder.encode(Stored(events: events))
        if let point { try CrashPoint.reach(point, writing: path) }
        try AtomicOutput.write(bytes, to: path, replacing: true)
    }

    private func lockPath() throws -> String {
        try FileKeyStore.makePrivateFolder(folder)
        return folder + "/lock"
    }

    private func read() -> [ReportEvent] {
        guard let data = PositionalFile.contents(at: path, atMost: Self.maximumFileSize),
              let stored = try? JSONDecoder().decode(Stored.self, from: data), stored.format == 1
        else { return [] }
        return stored.events
    }

    /// The newest ``maximumEvents`` of `events` that are younger than ``maximumAge`` (an hour less,
    /// so that the server's own bound does not refuse them on the way).
    static func bounded(_ events: [ReportEvent], now: Date) -> [ReportEvent] {
        let oldest = now.addingTimeInterval(-maximumAge + 3600)
        let young = events.filter { ($0.date ?? .distantPast) >= oldest }
        return Array(young.suffix(maximumEvents))
    }
}
