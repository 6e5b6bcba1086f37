/// Why a report sent with ``CofferClient/report(_:for:)`` or ``CofferClient/sendReports()`` did
/// not reach the server's counts.
public enum ReportError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The server could not take it now (no network, 429, 5xx): it stays queued and is sent again
    /// later, in the background, with the same event ID.
    case queued(UnavailableCause)
    /// The server refused it for good (400, 403, 413 or 422: an invalid event, a collection this
    /// app is not bound to, an unknown deployment): it was dropped from the queue.
    case refused(status: Int, code: String, reason: String)
    /// The model is not a downloaded model of a deployment (a bundled model): there is nothing the
    /// server could count it against.
    case notReportable(String)

    public var description: String {
        switch self {
        case .queued(let cause): return "the report is queued and will be sent later: \(cause)"
        case .refused(let status, let code, let reason): return "the server refused the report (HTTP \(status) \(code)): \(reason)"
        case .notReportable(let reason): return "nothing to report: \(reason)"
        }
    }
}
