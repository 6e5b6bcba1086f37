import AsyncKit

/// No database connection came free within the pool's timeout (AsyncKit's
/// `ConnectionPoolTimeoutError`, for SQLite and PostgreSQL alike): the server is overloaded — a burst
/// of requests, a slow disk, a long transaction elsewhere — not broken, and not the request's fault.
///
/// Such a request is answered 503 `busy` with `Retry-After` (the dashboard: a page that says to try
/// again), which the SDK and the CLI treat as a reason to try again later, and logged as a warning
/// without detail. Before, it was a 500 `internal` logged as an unhandled error.
enum DatabaseBusy {
    /// What `Retry-After` says, in seconds.
    static let retryAfterSeconds = 2

    static func matches(_ error: any Error) -> Bool {
        error is ConnectionPoolTimeoutError
    }
}
