import Foundation

/// How often, and how far apart, a failed request is tried again: exponential backoff with
/// jitter, for network failures and 5xx/429 answers only.
public struct RetryPolicy: Sendable, Equatable {
    /// Tries in all, the first included.
    public var attempts: Int
    /// The wait before the second try; each later wait doubles, up to ``maximumDelay``.
    public var initialDelay: TimeInterval
    /// The longest wait between two tries.
    public var maximumDelay: TimeInterval

    /// Four tries, waiting about 0.5, 1 and 2 seconds between them.
    public init(attempts: Int = 4, initialDelay: TimeInterval = 0.5, maximumDelay: TimeInterval = 8) {
        self.attempts = max(1, attempts)
        self.initialDelay = max(0, initialDelay)
        self.maximumDelay = max(initialDelay, maximumDelay)
    }

    /// The wait before try `attempt` (2 is the first retry), with ±25 % jitter.
    func delay(before attempt: Int) -> TimeInterval {
        let base = min(maximumDelay, initialDelay * pow(2, Double(max(0, attempt - 2))))
        return base * Double.random(in: 0.75...1.25)
    }
}
