import CofferFormat
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A one-line progress bar on stderr, shown only on a terminal and only for large inputs.
final class ProgressBar: @unchecked Sendable {
    /// Inputs smaller than this finish too fast for a bar to help.
    static let threshold: UInt64 = 64 << 20

    private let total: UInt64
    private let label: String
    private let lock = NSLock()
    private var done: UInt64 = 0
    private var lastDraw = Date.distantPast
    private let started = Date()

    private init(total: UInt64, label: String) {
        self.total = total
        self.label = label
    }

    /// A progress callback for `total` bytes, or nil when no bar should be drawn.
    static func make(total: UInt64, label: String, quiet: Bool) -> (ProgressBar, SealedModel.Progress)? {
        guard !quiet, total >= threshold, isatty(2) != 0 else { return nil }
        let bar = ProgressBar(total: total, label: label)
        return (bar, { bar.advance(by: $0) })
    }

    private func advance(by bytes: UInt64) {
        lock.withLock {
            done += bytes
            let now = Date()
            guard now.timeIntervalSince(lastDraw) >= 0.1 || done >= total else { return }
            lastDraw = now
            draw(now: now)
        }
    }

    private func draw(now: Date) {
        let fraction = total == 0 ? 1 : Double(done) / Double(total)
        let width = 30
        let filled = Int(fraction * Double(width))
        let seconds = max(now.timeIntervalSince(started), 0.001)
        let rate = Double(done) / seconds / 1_048_576
        let line = String(format: "\r%@ [%@%@] %3d%% %.0f MiB/s", label,
                          String(repeating: "#", count: filled), String(repeating: " ", count: width - filled),
                          Int(fraction * 100), rate)
        FileHandle.standardError.write(Data(line.utf8))
    }

    /// Ends the bar's line.
    func finish() {
        lock.withLock { FileHandle.standardError.write(Data("\n".utf8)) }
    }
}
