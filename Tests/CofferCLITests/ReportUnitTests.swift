import Foundation
import Testing
@testable import Coffer

/// The report path's rules without a server: the reason's bounds, the queue's bounds and files,
/// batches, and reading a refusal.
@Suite("Coffer SDK report units")
struct ReportUnitTests {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    @Test("a reason is the error's type and description, at most 200 bytes, without control characters, paths or tokens")
    func reasons() {
        #expect(ReportReason.describe(Failure(description: "out of memory")) == "Failure: out of memory")
        #expect(ReportReason.sanitize("bad\u{0}line\nbreak\u{202E}rlo\u{7F}x") == "bad line break rlo x")
        #expect(ReportReason.sanitize("cannot read /Users/alice/Library/model.bin or C:\\Users\\bob") == "cannot read <path> or <path>")
        #expect(ReportReason.sanitize("token cft_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789 refused") == "token <redacted> refused")
        #expect(ReportReason.sanitize("sha 0123456789abcdef0123456789abcde ok") == "sha 0123456789abcdef0123456789abcde ok")  // 31: kept
        // 200 bytes at most, cut between characters (é is 2 bytes, 👍 4).
        let long = ReportReason.sanitize(String(repeating: "é", count: 150))
        #expect(long.utf8.count == 200 && long == String(repeating: "é", count: 100))
        let emoji = ReportReason.sanitize("a" + String(repeating: "👍", count: 60))
        #expect(emoji.utf8.count == 197 && emoji.hasPrefix("a👍"))
        #expect(ReportReason.sanitize("").isEmpty)
    }

    @Test("a refusal that names an event gives its index; anything else gives none")
    func eventIndex() {
        #expect(DeviceAPI.eventIndex("event 3: sha256 must be 64 lowercase hex digits") == 3)
        #expect(DeviceAPI.eventIndex("event 0: x") == 0)
        for text in ["event : x", "event 3 x", "events 3: x", "event 99999999999999999999: x", "x event 3: y", ""] {
            #expect(DeviceAPI.eventIndex(text) == nil, "\(text)")
        }
    }

    static func event(_ number: Int, at date: Date = Date(), reason: String? = nil, padding: String = "") -> ReportEvent {
        ReportEvent(deviceID: "device-\(number)" + padding, collection: "FlowerModels", sequence: 1,
                    deployment: "6F1D8C52-1111-4C3B-9F00-000000000001", model: "FlowerClassifier" + padding,
                    sha256: String(repeating: "a", count: 64), outcome: reason == nil ? .loaded : .failed, reason: reason, at: date)
    }

    @Test("the queue keeps at most 1000 events and none older than 7 days, drops the oldest first, in a 0600 file in a 0700 folder")
    func queueBounds() async throws {
        let root = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("report-queue-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let queue = ReportQueue(root: root)
        #expect(try await queue.events().isEmpty)
        let old = Self.event(0, at: Date().addingTimeInterval(-8 * 86_400))
        try await queue.append([old] + (1...1200).map { Self.event($0) })
        let kept = try await queue.events()
        #expect(kept.count == 1000)
        #expect(kept.first?.deviceID == "device-201" && kept.last?.deviceID == "device-1200")
        #expect(Set(kept.map(\.id)).count == 1000)
        try await queue.remove(Set(kept.prefix(10).map(\.id)))
        #expect(try await queue.events().first?.deviceID == "device-211")
        let file = try FileManager.default.attributesOfItem(atPath: queue.path)
        #expect(file[.posixPermissions] as? Int == 0o600)
        #expect(try FileManager.default.attributesOfItem(atPath: queue.folder)[.posixPermissions] as? Int == 0o700)
        // A damaged file is started afresh rather than failing the app.
        try Data("{not json".utf8).write(to: URL(fileURLWithPath: queue.path))
        #expect(try await queue.events().isEmpty)
        try await queue.append([Self.event(1)])
        #expect(try await queue.events().count == 1)
    }

    @Test("a batch holds at most 100 events and fits the server's 64 KiB body")
    func batches() {
        let small = (0..<250).map { Self.event($0) }
        #expect(Reporter.batch(small).count == 100)
        #expect(Reporter.batch(small).map(\.id) == small.prefix(100).map(\.id))
        // Events near the largest the server takes (long device IDs, model names, reasons): fewer fit.
        let large = (0..<100).map { Self.event($0, reason: String(repeating: "é", count: 100), padding: String(repeating: "x", count: 80)) }
        let batch = Reporter.batch(large)
        struct Body: Encodable { let events: [ReportEvent] }
        let bytes = (try? JSONEncoder().encode(Body(events: batch)).count) ?? .max
        #expect(batch.count < 100 && batch.count > 10 && bytes <= 64 << 10, "\(batch.count) events, \(bytes) bytes")
        #expect(Reporter.batch([]).isEmpty)
    }

    @Test("an event's ID is new each time and the server's shape: 8 to 64 of A-Z a-z 0-9 - _")
    func eventIDs() {
        let ids = (0..<100).map { _ in Self.event(1).id }
        #expect(Set(ids).count == 100)
        #expect(ids.allSatisfy { (8...64).contains($0.utf8.count) && $0.utf8.allSatisfy { byte in
            (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || byte == 0x2D || byte == 0x5F
        } })
        #expect(Self.event(1).reason == nil && Self.event(1, reason: "x").reason == "x")
    }
}
