import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension DeviceAPI {
    /// What the server did with a batch of reports.
    enum ReportAnswer: Sendable, Equatable {
        /// 200: every event was counted (or had been before).
        case accepted
        /// A definite refusal (400, 403, 413, 422): sending the same events again cannot help.
        /// `event` is the index the server named, when it named one.
        case refused(status: Int, code: String, reason: String, event: Int?)
        /// 429, 5xx or another answer that may change: try again after `retryAfter` seconds (the
        /// server's `Retry-After`, when it sent one).
        case later(status: Int, reason: String, retryAfter: TimeInterval?)
        /// No answer: the network, DNS, TLS or a timeout.
        case unreachable(String)
    }

    /// The most bytes of one batch's body; the server takes 64 KiB.
    static let maximumReportBody = 60 << 10

    /// Sends `events` (at most 100, within ``maximumReportBody``) with the app's credential.
    func report(_ events: [ReportEvent]) async -> ReportAnswer {
        struct Body: Encodable { let events: [ReportEvent] }
        var request = self.request(["v1", "device", "reports"], query: [])
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.setValue("Basic " + Data("\(configuration.appID):\(configuration.credential)".utf8).base64EncodedString(),
                         forHTTPHeaderField: "Authorization")
        request.httpBody = try? JSONEncoder().encode(Body(events: events))
        let response: HTTPURLResponse, body: Data
        do {
            (response, body) = try await send(request, limit: 16 << 10)
        } catch {
            switch error {
            case .unreachable(let reason): return .unreachable(reason)
            case .cancelled: return .unreachable("cancelled")
            case .unavailable(let status, let reason), .answer(let status, _, let reason):
                return .later(status: status, reason: reason, retryAfter: nil)
            }
        }
        let status = response.statusCode
        if status == 200 { return .accepted }
        let failure = Self.failure(response, body)
        let retryAfter = RetryAfter.seconds(response.value(forHTTPHeaderField: "Retry-After"))
        switch failure {
        case .answer(_, let code, let reason) where [400, 403, 413, 422].contains(status):
            return .refused(status: status, code: code, reason: reason, event: Self.eventIndex(reason))
        case .answer(_, _, let reason), .unavailable(_, let reason):
            return .later(status: status, reason: reason, retryAfter: retryAfter)
        case .unreachable, .cancelled:
            return .later(status: status, reason: "HTTP \(status)", retryAfter: retryAfter)
        }
    }

    /// The index in a refusal's reason such as `event 3: sha256 must be …`.
    static func eventIndex(_ reason: String) -> Int? {
        guard reason.hasPrefix("event ") else { return nil }
        let digits = reason.dropFirst(6).prefix { $0.isNumber }
        guard !digits.isEmpty, digits.count <= 3, reason.dropFirst(6 + digits.count).hasPrefix(":") else { return nil }
        return Int(digits)
    }
}
