import Foundation

/// One device report as `POST /v1/device/reports` takes it (docs/ROLLOUTS.md) and as the queue
/// keeps it on disk: what became of one model of one deployment on this device.
///
/// The ID is chosen once, when the event is recorded, and sent again with every retry: the server
/// counts an ID only once.
struct ReportEvent: Codable, Sendable, Equatable {
    /// What became of the model.
    enum Outcome: String, Codable, Sendable {
        case downloaded, opened, loaded, failed
    }

    let id: String
    let deviceID: String
    let collection: String
    let sequence: UInt64
    let deployment: String
    let model: String
    let sha256: String
    let outcome: Outcome
    /// Only with ``Outcome/failed``; already bounded by ``ReportReason``.
    let reason: String?
    /// ISO 8601, seconds.
    let at: String

    init(deviceID: String, collection: String, sequence: UInt64, deployment: String, model: String, sha256: String,
         outcome: Outcome, reason: String? = nil, at date: Date = Date()) {
        id = UUID().uuidString.lowercased()
        self.deviceID = deviceID
        self.collection = collection
        self.sequence = sequence
        self.deployment = deployment.lowercased()
        self.model = model
        self.sha256 = sha256
        self.outcome = outcome
        self.reason = outcome == .failed ? reason : nil
        at = Self.format(date)
    }

    /// When the event happened; nil for a time that does not parse (such an event is dropped).
    var date: Date? { Self.formatter().date(from: at) }

    static func format(_ date: Date) -> String { formatter().string(from: date) }

    private static func formatter() -> ISO8601DateFormatter {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter
    }
}
