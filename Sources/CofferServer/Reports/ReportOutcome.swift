import Foundation

/// What a device reports about one model of a deployment. Each outcome is a bit in the outcome set
/// the server keeps per device (`report_devices.outcomes`), so a repeated report changes nothing.
enum ReportOutcome: String, CaseIterable, Codable, Sendable {
    /// The model's container arrived and its SHA-256 matched the manifest.
    case downloaded
    /// The model was decrypted (its key obtained, its chunks authenticated).
    case opened
    /// The app loaded the model and it worked, as the app judges.
    case loaded
    /// The model failed to open or to load; the report carries a reason.
    case failed

    /// The outcome named by `bytes` (its raw value's UTF-8), or nil: compared in place, as a
    /// report batch's reader has them.
    init?(bytes: UnsafeBufferPointer<UInt8>) {
        guard !bytes.isEmpty else { return nil }
        for outcome in Self.allCases {
            var name = outcome.rawValue
            if name.withUTF8({ $0.count == bytes.count && memcmp($0.baseAddress!, bytes.baseAddress!, $0.count) == 0 }) {
                self = outcome
                return
            }
        }
        return nil
    }

    /// The outcome's bit in an outcome set.
    var bit: Int {
        switch self {
        case .downloaded: 1
        case .opened: 2
        case .loaded: 4
        case .failed: 8
        }
    }
}
