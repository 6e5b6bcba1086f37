@testable import CofferServer
import Foundation
import Testing

/// The report buffer's memory of event IDs and its outcome sets, on their own: the slot table the
/// idempotency rests on, retries across generations, and what a batch with duplicates adds.
@Suite("Report buffer")
struct ReportBufferTests {
    static let appID = UUID()
    static let deploymentID = UUID()
    static let teamID = UUID()

    static func report(_ eventID: String, device: String = "device-1", model: String = "FlowerClassifier",
                       outcome: ReportOutcome = .opened, at: Date = Date()) -> DeviceReport {
        let key = Array(eventID.utf8).withUnsafeBufferPointer { ReportEventKey(appID: appID, eventID: $0) }
        return DeviceReport(eventKey: key, deviceID: device, collection: "FlowerModels", sequence: 1, deploymentID: deploymentID,
                            model: model, sha256: ModelDigest(hex: String(repeating: "0f", count: 32))!, outcome: outcome,
                            failure: outcome == .failed ? .init(eventID: eventID, reason: "oom") : nil, at: at)
    }

    @Test("keys that land on one slot are all kept and found, around the table's end too; a key held is not added twice")
    func collidingKeys() {
        let table = ReportEventKeyTable(capacity: 8) // 16 slots
        // Every key's low word names the last slot: each probes past the end, to the start.
        let keys = (1...8).map { ReportEventKey(high: UInt64($0), low: 15) }
        for key in keys { #expect(table.insert(key)) }
        #expect(table.count == 8)
        for key in keys {
            #expect(table.contains(key))
            #expect(!table.insert(key))
        }
        #expect(table.count == 8)
        #expect(!table.contains(ReportEventKey(high: 9, low: 15)))
        #expect(!table.contains(ReportEventKey(high: 1, low: 14)))
    }

    @Test("an emptied table holds nothing and takes keys again (a retired generation is reused)")
    func emptiedTable() {
        let table = ReportEventKeyTable(capacity: 8)
        let keys = (1...8).map { ReportEventKey(high: UInt64($0), low: UInt64($0) * 3) }
        for key in keys { #expect(table.insert(key)) }
        table.removeAll()
        #expect(table.count == 0)
        for key in keys { #expect(!table.contains(key)) }
        for key in keys { #expect(table.insert(key)) }
        #expect(table.count == 8)
    }

    @Test("keys differ by app and by event ID, and are the same for the same pair")
    func keys() {
        func key(_ app: UUID, _ id: String) -> ReportEventKey {
            Array(id.utf8).withUnsafeBufferPointer { ReportEventKey(appID: app, eventID: $0) }
        }
        let other = UUID()
        #expect(key(Self.appID, "event-0001") == key(Self.appID, "event-0001"))
        #expect(key(Self.appID, "event-0001") != key(Self.appID, "event-0002"))
        #expect(key(Self.appID, "event-0001") != key(other, "event-0001"))
        #expect(key(Self.appID, "event-0001").words.0 >> 63 == 1)
    }

    @Test("a retry is a duplicate while its generation or the next is remembered, and only the new events of a batch count")
    func retriesAcrossGenerations() throws {
        let buffer = ReportBuffer()
        let first = (0..<20).map { Self.report("first-\($0)-event") }
        #expect(buffer.add(first, appID: Self.appID, teamID: Self.teamID, stage: { _ in 100 })! == (20, 0))
        #expect(buffer.add(first, appID: Self.appID, teamID: Self.teamID, stage: { _ in 100 })! == (0, 20))
        // A batch half old, half new: only the new half is accepted.
        let mixed = Array(first[10...]) + (0..<10).map { Self.report("mixed-\($0)-event") }
        #expect(buffer.add(mixed, appID: Self.appID, teamID: Self.teamID, stage: { _ in 100 })! == (10, 10))

        // Fill one whole generation with other events: the first batch moves to the older one, still remembered.
        var filler = 0
        func fill(_ count: Int) {
            var batch: [DeviceReport] = []
            for _ in 0..<count {
                batch.append(Self.report("fill-\(filler)-event"))
                filler += 1
                if batch.count == 100 {
                    _ = buffer.add(batch, appID: Self.appID, teamID: Self.teamID, stage: { _ in 100 })
                    batch.removeAll(keepingCapacity: true)
                }
            }
            if !batch.isEmpty { _ = buffer.add(batch, appID: Self.appID, teamID: Self.teamID, stage: { _ in 100 }) }
        }
        fill(ReportBuffer.remembered)
        #expect(buffer.add(first, appID: Self.appID, teamID: Self.teamID, stage: { _ in 100 })! == (0, 20))
        // Two generations later it is forgotten, and counted again (the outcome sets make that harmless).
        fill(2 * ReportBuffer.remembered)
        #expect(buffer.add(first, appID: Self.appID, teamID: Self.teamID, stage: { _ in 100 })! == (20, 0))
    }

    @Test("a batch's outcomes merge per device and model; a failure keeps its event ID and reason; duplicates add nothing")
    func outcomeSets() throws {
        let buffer = ReportBuffer()
        let early = Date(timeIntervalSince1970: 1_800_000_000), late = early.addingTimeInterval(60)
        let batch = [Self.report("a-event-1", outcome: .downloaded, at: early), Self.report("a-event-2", outcome: .opened, at: late),
                     Self.report("a-event-3", model: "FlowerStylizer", outcome: .failed, at: early),
                     Self.report("a-event-4", device: "device-2", outcome: .loaded, at: late)]
        #expect(buffer.add(batch, appID: Self.appID, teamID: Self.teamID, stage: { _ in 50 })! == (4, 0))
        // A retry of the first event, now claiming another outcome, changes nothing.
        #expect(buffer.add([Self.report("a-event-1", outcome: .failed, at: late)], appID: Self.appID, teamID: Self.teamID, stage: { _ in 50 })! == (0, 1))
        let pending = buffer.take()
        #expect(pending.devices.count == 3)
        let classifier = try #require(pending.devices[.init(deploymentID: Self.deploymentID, model: "FlowerClassifier", deviceID: "device-1")])
        #expect(classifier.outcomes == ReportOutcome.downloaded.bit | ReportOutcome.opened.bit)
        #expect(classifier.first == early && classifier.last == late && classifier.stage == 50)
        let stylizer = try #require(pending.devices[.init(deploymentID: Self.deploymentID, model: "FlowerStylizer", deviceID: "device-1")])
        #expect(stylizer.outcomes == ReportOutcome.failed.bit)
        #expect(pending.events.map(\.failure.eventID) == ["a-event-3"])
        #expect(pending.events.map(\.failure.reason) == ["oom"])
        #expect(buffer.pendingRows == 0)
    }

    @Test("a team that holds a quarter of the buffer cannot take its last quarter; other teams can, until they hold a quarter; a flush frees it")
    func teamShare() throws {
        let buffer = ReportBuffer(capacity: 100)
        let flooding = UUID(), other = UUID(), third = UUID()
        var serial = 0
        // A batch of `count` events from new devices: `count` rows.
        func batch(_ count: Int) -> [DeviceReport] {
            (0..<count).map { _ in
                serial += 1
                return Self.report("share-\(serial)-event", device: "device-\(serial)")
            }
        }
        func add(_ count: Int, team: UUID) -> Bool {
            buffer.add(batch(count), appID: Self.appID, teamID: team, stage: { _ in 100 }) != nil
        }
        // The flooding team fills three quarters (75 rows) and no more, in any batch size.
        for _ in 0..<3 { #expect(add(25, team: flooding)) }
        #expect(!add(1, team: flooding))
        #expect(buffer.pendingRows == 75)
        // Another team takes the reserve, up to a quarter (25 rows) of its own.
        #expect(add(20, team: other))
        #expect(!add(6, team: other))
        #expect(add(5, team: other))
        #expect(buffer.pendingRows == 100)
        // Full: nobody, not even a team holding nothing.
        #expect(!add(1, team: third))
        // Duplicates and devices already pending add no row and count for nobody.
        let repeated = batch(2)
        _ = buffer.take()
        #expect(buffer.add(repeated, appID: Self.appID, teamID: third, stage: { _ in 100 })! == (2, 0))
        #expect(buffer.add(repeated, appID: Self.appID, teamID: third, stage: { _ in 100 })! == (0, 2))
        #expect(buffer.pendingRows == 2)
        // After the flush took everything, the flooding team may fill three quarters again.
        for _ in 0..<3 { #expect(add(24, team: flooding)) }
        #expect(!add(2, team: flooding))
        #expect(add(1, team: flooding))
        #expect(buffer.pendingRows == 75)
        // A failed flush puts the rows back on their teams: the flooding team is still held back.
        let taken = buffer.take()
        #expect(buffer.pendingRows == 0)
        buffer.restore(taken)
        #expect(buffer.pendingRows == 75)
        #expect(!add(1, team: flooding))
        #expect(add(1, team: other))
    }
}
