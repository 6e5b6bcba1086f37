import Foundation

/// A trickle for ``TamperingProxy/Action/drip(_:)``: the answer's head at once, then its body one
/// byte every ``interval`` seconds — a server or CDN that never finishes, yet never leaves the
/// connection idle long enough for a transport's timeout — until the test releases it (the rest
/// then goes at once, and answers that come later are not held back).
final class Drip: @unchecked Sendable {
    /// The pause between two bytes, in seconds.
    let interval: Double
    private let condition = NSCondition()
    private var released = false
    private var started = false

    init(every interval: Double) {
        self.interval = interval
    }

    /// Whether an answer has begun to trickle (its head was about to go out).
    var hasStarted: Bool {
        condition.lock()
        defer { condition.unlock() }
        return started
    }

    /// Lets every trickling answer send the rest of its body at once, now and from now on.
    func release() {
        condition.lock()
        released = true
        condition.broadcast()
        condition.unlock()
    }

    /// Notes that an answer begins to trickle.
    func begin() {
        condition.lock()
        started = true
        condition.unlock()
    }

    /// Whether the test released the trickle.
    var isReleased: Bool {
        condition.lock()
        defer { condition.unlock() }
        return released
    }

    /// Waits ``interval`` seconds, or less if the trickle is released meanwhile.
    func pause() {
        let until = Date().addingTimeInterval(interval)
        condition.lock()
        while !released, condition.wait(until: until) {}
        condition.unlock()
    }
}
