@testable import CofferServer
import BlockingTestSupport
import Foundation
import Testing

/// The report buffer's memory of event IDs and its outcome sets, on their own: the slot table the
/// idempotency rests on, retries across generations, and what a batch with duplicates adds.
@Suite("Report buffer", .ownThread)
struct ReportBufferTests {
    static let appID = UUID()
    static let deploymentID = UUID()
    static let teamID = UUID()

    static func report(_ eventID: String, device: String = "device-1", model: String = "FlowerClassifier",
                       outcome: ReportOutcome = .opened, sequence: Int64 = 1, at: Date = Date()) -> DeviceReport {
        let key = Array(eventID.utf8).withUnsafeBufferPointer { ReportEventKey(appID: appID, eventID: $0) }
        return DeviceReport(eventKey: key, deviceID: device, collection: "FlowerModels", sequence: sequence, deploymentID: deploymentID,
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

    @Test("a batch's keys, made from the app's prefix once, are the keys made one by one, each event's its own")
    func batchKeys() {
        let prefix = ReportEventKey.Prefix(appID: Self.appID)
        let ids = ["event-0001", "event-0002", "event-0001", "a-much-longer-event-id-of-sixty-four-characters-0123456789abcdef"]
        let fromPrefix = ids.map { id in Array(id.utf8).withUnsafeBufferPointer { ReportEventKey(prefix, eventID: $0) } }
        // Made one by one, each from a prefix of its own: using a prefix does not change it.
        let alone = ids.map { id in Array(id.utf8).withUnsafeBufferPointer { ReportEventKey(.init(appID: Self.appID), eventID: $0) } }
        #expect(fromPrefix == alone)
        // The same keys in the reverse order: a key does not depend on the events made before it.
        let reversed = ids.reversed().map { id in Array(id.utf8).withUnsafeBufferPointer { ReportEventKey(prefix, eventID: $0) } }
        #expect(Array(reversed.reversed()) == fromPrefix)
        #expect(fromPrefix[0] == fromPrefix[2] && fromPrefix[0] != fromPrefix[1] && fromPrefix[1] != fromPrefix[3])
        let other = Array("event-0001".utf8).withUnsafeBufferPointer { ReportEventKey(.init(appID: UUID()), eventID: $0) }
        #expect(other != fromPrefix[0])
    }

    @Test("device rows are keyed by bytes: a look-alike device ID or model (KELVIN SIGN for K) is a row of its own")
    func lookAlikeDevices() {
        let buffer = ReportBuffer()
        let batch = [Self.report("look-0001", device: "Kite"), Self.report("look-0002", device: "\u{212A}ite"),
                     Self.report("look-0003", device: "Kite", model: "\u{212A}ite"), Self.report("look-0004", device: "Kite")]
        #expect(buffer.add(batch, appID: Self.appID, teamID: Self.teamID, stage: { _ in 100 }).counts! == (4, 0))
        let devices = buffer.take().devices
        #expect(devices.count == 3)
        #expect(Set(devices.keys.map { Array($0.deviceID.utf8) + [0] + Array($0.model.utf8) }).count == 3)
        let key = ReportBuffer.DeviceKey(deploymentID: Self.deploymentID, model: "Kite", deviceID: "d")
        #expect(key == ReportBuffer.DeviceKey(deploymentID: Self.deploymentID, model: "Kite", deviceID: "d"))
        #expect(key != ReportBuffer.DeviceKey(deploymentID: Self.deploymentID, model: "\u{212A}ite", deviceID: "d"))
        #expect(key != ReportBuffer.DeviceKey(deploymentID: UUID(), model: "Kite", deviceID: "d"))
    }

    @Test("a retry is a duplicate while its generation or the next is remembered, and only the new events of a batch count")
    func retriesAcrossGenerations() throws {
        let buffer = ReportBuffer()
        let first = (0..<20).map { Self.report("first-\($0)-event") }
        #expect(buffer.add(first, appID: Self.appID, teamID: Self.teamID, stage: { _ in 100 }).counts! == (20, 0))
        #expect(buffer.add(first, appID: Self.appID, teamID: Self.teamID, stage: { _ in 100 }).counts! == (0, 20))
        // A batch half old, half new: only the new half is accepted.
        let mixed = Array(first[10...]) + (0..<10).map { Self.report("mixed-\($0)-event") }
        #expect(buffer.add(mixed, appID: Self.appID, teamID: Self.teamID, stage: { _ in 100 }).counts! == (10, 10))

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
        #expect(buffer.add(first, appID: Self.appID, teamID: Self.teamID, stage: { _ in 100 }).counts! == (0, 20))
        // Two generations later it is forgotten, and counted again (the outcome sets make that harmless).
        fill(2 * ReportBuffer.remembered)
        #expect(buffer.add(first, appID: Self.appID, teamID: Self.teamID, stage: { _ in 100 }).counts! == (20, 0))
    }

    @Test("a batch's outcomes merge per device and model; a failure keeps its event ID and reason; duplicates add nothing")
    func outcomeSets() throws {
        let buffer = ReportBuffer()
        let early = Date(timeIntervalSince1970: 1_800_000_000), late = early.addingTimeInterval(60)
        let batch = [Self.report("a-event-1", outcome: .downloaded, at: early), Self.report("a-event-2", outcome: .opened, at: late),
                     Self.report("a-event-3", model: "FlowerStylizer", outcome: .failed, at: early),
                     Self.report("a-event-4", device: "device-2", outcome: .loaded, at: late)]
        #expect(buffer.add(batch, appID: Self.appID, teamID: Self.teamID, stage: { _ in 50 }).counts! == (4, 0))
        // A retry of the first event, now claiming another outcome, changes nothing.
        #expect(buffer.add([Self.report("a-event-1", outcome: .failed, at: late)], appID: Self.appID, teamID: Self.teamID, stage: { _ in 50 }).counts! == (0, 1))
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

    @Test("a device's outcomes keep, each, the highest manifest sequence their reports name, through a restore; only those on a staged activation's manifest count for it")
    func sequences() throws {
        let buffer = ReportBuffer()
        let batch = [Self.report("s-event-1", outcome: .downloaded, sequence: 7), Self.report("s-event-2", outcome: .failed, sequence: 4),
                     Self.report("s-event-3", device: "device-2", outcome: .loaded, sequence: 3)]
        #expect(buffer.add(batch, appID: Self.appID, teamID: Self.teamID, stage: { _ in 100 }).counts! == (3, 0))
        let taken = buffer.take()
        #expect(buffer.add([Self.report("s-event-4", outcome: .opened, sequence: 6)], appID: Self.appID, teamID: Self.teamID,
                           stage: { _ in 100 }).counts! == (1, 0))
        buffer.restore(taken)
        let pending = buffer.take()
        let first = try #require(pending.devices[.init(deploymentID: Self.deploymentID, model: "FlowerClassifier", deviceID: "device-1")])
        let downloaded = ReportOutcome.downloaded.bit, opened = ReportOutcome.opened.bit, failed = ReportOutcome.failed.bit
        #expect(first.outcomes == downloaded | failed | opened)
        // A staged activation that started with sequence 5 counts what device-1 reported on its
        // manifest or later (downloaded at 7, opened at 6), not the failure it reported on an older
        // one (4), though all three are written together; one that started at 7 only the download.
        #expect(first.counted(since: 5) == (downloaded | opened, 5))
        #expect(first.counted(since: 7) == (downloaded, 7))
        // Nothing on its manifest: every outcome, counted for no staged activation.
        #expect(first.counted(since: 8) == (downloaded | failed | opened, 0))
        #expect(first.counted(since: 0) == (downloaded | failed | opened, 0))
        let second = try #require(pending.devices[.init(deploymentID: Self.deploymentID, model: "FlowerClassifier", deviceID: "device-2")])
        #expect(second.counted(since: 5) == (ReportOutcome.loaded.bit, 0) && second.counted(since: 3) == (ReportOutcome.loaded.bit, 3))
    }

    @Test("past three quarters a batch is taken only while its team stays within a quarter; full is full; restored rows count once")
    func teamShare() throws {
        let buffer = ReportBuffer(capacity: 100)
        let flooding = UUID(), other = UUID(), third = UUID()
        var serial = 0
        // A batch of `count` events, each from a device of its own not seen before: `count` rows.
        func batch(_ count: Int) -> [DeviceReport] {
            (0..<count).map { _ in
                serial += 1
                return Self.report("share-\(serial)-event", device: "device-\(serial)")
            }
        }
        func add(_ reports: [DeviceReport], team: UUID) -> ReportBuffer.Outcome {
            buffer.add(reports, appID: Self.appID, teamID: team, stage: { _ in 100 })
        }
        func add(_ count: Int, team: UUID) -> ReportBuffer.Outcome { add(batch(count), team: team) }

        #expect(add(10, team: other) == .added(accepted: 10, duplicates: 0))
        // The flooding team fills up to three quarters (75 rows), then no more.
        #expect(add(25, team: flooding).counts != nil)
        #expect(add(25, team: flooding).counts != nil)
        #expect(add(15, team: flooding).counts != nil)
        #expect(add(1, team: flooding) == .teamShare)
        #expect(buffer.pendingRows == 75 && buffer.pendingRows(of: flooding) == 65)
        // The other team takes the reserve while it stays within a quarter (25 rows) — refused by
        // that rule, not by the capacity (91 rows would fit).
        #expect(add(15, team: other).counts != nil)
        #expect(buffer.pendingRows(of: other) == 25)
        #expect(add(1, team: other) == .teamShare)
        // A third team takes what is left; then the buffer is full for everyone.
        #expect(add(10, team: third).counts != nil)
        #expect(add(1, team: third) == .full)
        #expect(buffer.pendingRows == 100)

        // Duplicates, and new events of devices already pending, add no row and count for nobody.
        _ = buffer.take()
        #expect(buffer.pendingRows == 0 && buffer.pendingRows(of: flooding) == 0)
        let first = batch(2)
        #expect(add(first, team: third) == .added(accepted: 2, duplicates: 0))
        #expect(add(first, team: third) == .added(accepted: 0, duplicates: 2))
        let again = first.map { Self.report("again-\($0.deviceID)-event", device: $0.deviceID) }
        #expect(add(again, team: third) == .added(accepted: 2, duplicates: 0))
        #expect(buffer.pendingRows == 2 && buffer.pendingRows(of: third) == 2)

        // A failed flush: the rows come back on their team, and a device that reported again
        // while the flush ran is one row, counted once — however many flushes fail.
        for round in 0..<3 {
            let taken = buffer.take()
            let later = first.map { Self.report("round-\(round)-\($0.deviceID)-event", device: $0.deviceID) }
            #expect(add(later, team: third).counts != nil)
            buffer.restore(taken)
            #expect(buffer.pendingRows == 2 && buffer.pendingRows(of: third) == 2, "round \(round)")
        }
        // And the flooding team, restored, is still held back.
        for _ in 0..<3 { #expect(add(24, team: flooding).counts != nil) }
        #expect(buffer.pendingRows == 74)
        let taken = buffer.take()
        buffer.restore(taken)
        #expect(buffer.pendingRows(of: flooding) == 72)
        #expect(add(2, team: flooding) == .teamShare)
        #expect(add(2, team: other).counts != nil)
    }

    @Test("rows are written to PostgreSQL in one order whatever order a buffer holds them in (two instances lock them alike), look-alike names too")
    func lockOrder() {
        let deployments = (0..<4).map { _ in UUID() }
        var rows: [(key: ReportBuffer.DeviceKey, value: ReportBuffer.DeviceState)] = []
        for deployment in deployments {
            // KELVIN SIGN and K: rows of their own, which String's `<` would hold equal (unordered).
            for model in ["B", "A", "K", "\u{212A}"] {
                for device in ["d-2", "d-10", "d-1", "Kite", "\u{212A}ite"] {
                    rows.append((ReportBuffer.DeviceKey(deploymentID: deployment, model: model, deviceID: device),
                                 ReportBuffer.DeviceState(outcomes: 1, stage: 100, first: Date(), last: Date())))
                }
            }
        }
        let once = ReportBuffer.lockOrdered(rows).map(\.key)
        for _ in 0..<20 { #expect(ReportBuffer.lockOrdered(rows.shuffled()).map(\.key) == once) }
        for (earlier, later) in zip(once, once.dropFirst()) { #expect(ReportBuffer.precedes(earlier, later)) }
        let events = (0..<50).map { index in
            ReportBuffer.Event(appID: deployments[index % 4], report: Self.report("event-\(index)", outcome: .failed),
                               failure: .init(eventID: "event-\(index)", reason: nil), receivedAt: Date())
        }
        let ordered = ReportBuffer.lockOrdered(events).map { "\($0.appID) \($0.failure.eventID)" }
        #expect(ReportBuffer.lockOrdered(events.shuffled()).map { "\($0.appID) \($0.failure.eventID)" } == ordered)
    }
}
