import BlockingTestSupport
import CofferFormat
@testable import CofferServer
import Fluent
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import Testing
import Vapor

/// An upload's lease (its quota reservation, its hold against blob collection) lasts as long as its
/// body keeps arriving. Before, it expired an hour after it was taken: a developer who kept a PUT
/// near the quota alive by trickling a byte under the idle timeout had a second one admitted an
/// hour later, and so on, and the team stored its quota many times over on the disk every team
/// shares; an honest upload of more than an hour lost its lease too.
@Suite("Upload leases renewed while the body arrives")
struct LeaseRenewalTests {
    /// The receiving loop itself, with a clock the test moves: a renewal once five minutes passed
    /// since the lease was last set (one UPDATE, not one per chunk), which blob collection
    /// respects; a lease that lapsed is not revived, and the upload fails.
    static func loop(_ backend: Backend) async throws {
        let server = try await TestServer.start(postgres: backend.isPostgres) { $0.blobCollectionInterval = 0 }
        defer { Task { try? await server.stop() } }
        let world = World(server)
        try await world.team("T")
        let key = try await world.key(in: "T")
        let sealed = Data(try SealedModel.seal((0..<50_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }, name: "m", using: .modelKey(key)))
        let db = server.app.db, lifetime = UploadLeaseRecord.lifetime
        let start = Date()
        let clock = HandClock(start)
        let lease = UploadLeaseRecord.forUpload(of: sealed.sha256Hex, lifetime: lifetime, now: start)
        try await lease.create(on: db)
        let leaseID = try lease.requireID()
        let keeper = try LeaseKeeper(lease, lifetime: lifetime, on: db, logger: server.app.logger, clock: { clock.now })
        #expect(keeper.interval == 300)

        // Chunks at 0, 100, 350 (more than five minutes after the lease was taken: renewed), 500 and
        // 640 seconds (less than five minutes after that renewal: not renewed again).
        var intake = BlobIntake(size: Int64(sealed.count))
        try await intake.receive(TimedBody(sealed, at: [0, 100, 350, 500, 640], from: start, clock: clock), into: NullUpload(), keeping: keeper)
        #expect(try intake.finish() == sealed.sha256Hex)
        let renewed = try #require(try await UploadLeaseRecord.find(leaseID, on: db))
        let expected = start.addingTimeInterval(350 + lifetime)
        #expect(abs(renewed.expiresAt.timeIntervalSince(expected)) < 0.01, "expires at \(renewed.expiresAt), not \(expected)")

        // Blob collection an hour and a minute after the lease was taken keeps the renewed lease
        // (it deletes only leases that expired before its `now`).
        let collector = BlobCollector(store: try #require(server.app.blobStore), grace: 3600)
        _ = try await collector.collect(on: db, now: start.addingTimeInterval(lifetime + 60))
        #expect(try await UploadLeaseRecord.find(leaseID, on: db) != nil)

        // A body that comes back after the renewed lease expired finds it lapsed: the upload fails
        // rather than go on with nothing reserved.
        let late = try LeaseKeeper(renewed, lifetime: lifetime, on: db, logger: server.app.logger, clock: { clock.now })
        var resumed = BlobIntake(size: Int64(sealed.count))
        do {
            try await resumed.receive(TimedBody(sealed, at: [350 + lifetime + 1], from: start, clock: clock), into: NullUpload(), keeping: late)
            Issue.record("a lapsed lease was renewed")
        } catch let error as APIError {
            #expect(error.status == .serviceUnavailable && error.code == "upload_lease_lapsed", "\(error.code): \(error.reason)")
        }
        #expect(abs(try #require(try await UploadLeaseRecord.find(leaseID, on: db)).expiresAt.timeIntervalSince(expected)) < 0.01)
    }

    @Test("the receiving loop renews a lease every five minutes of body, and fails once it lapsed (SQLite)")
    func loopSQLite() async throws { try await Self.loop(.sqlite) }

    @Test("the same on PostgreSQL", .enabled(if: TestServer.postgresURL != nil, "set COFFER_TEST_DATABASE_URL to run against PostgreSQL"))
    func loopPostgres() async throws { try await Self.loop(.postgres) }

    /// Through HTTP, with leases of twenty seconds: an admitted upload whose body trickles in for
    /// longer than that still holds its reservation, so the team's second upload past the quota is
    /// refused; the first is stored when it ends, and the team holds no more than its quota.
    static func trickle(_ backend: Backend) async throws {
        // Twenty seconds: long enough that a loaded CI machine pausing the trickle for seconds
        // does not let the lease lapse between renewals (every 1/12 of it).
        let lifetime: TimeInterval = 20
        let quota: Int64 = 10_000_000
        let server = try await TestServer.start(postgres: backend.isPostgres) {
            $0.teamQuotaBytes = quota
            $0.uploadLeaseLifetime = lifetime
        }
        defer { Task { try? await server.stop() } }
        let world = World(server)
        try await world.team("T")
        let key = try await world.key(in: "T")
        // Two sealed models of about 6 MB: either fits the quota, both do not.
        let first = Data(try SealedModel.seal(testBytes(6_000_000) { UInt8(truncatingIfNeeded: $0 &* 13) }, name: "a", using: .modelKey(key)))
        let second = Data(try SealedModel.seal(testBytes(6_000_000) { UInt8(truncatingIfNeeded: $0 &* 29) }, name: "b", using: .modelKey(key)))
        let db = server.app.db

        // The first upload sends its head and a mebibyte; admitted, its lease reserves its size.
        let connection = try await RawConnection.connect(port: try #require(server.base.port))
        try await connection.send("PUT /v1/teams/T/blobs/\(first.sha256Hex) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            + "Authorization: Bearer \(server.adminToken)\r\nContent-Type: application/octet-stream\r\nContent-Length: \(first.count)\r\n\r\n")
        let head = 1 << 20
        try await connection.send(bytes: first.prefix(head))
        var admitted: UploadLeaseRecord?
        let deadline = Date().addingTimeInterval(60)
        while admitted == nil, Date() < deadline {
            admitted = try await UploadLeaseRecord.query(on: db).filter(\.$size == Int64(first.count)).first()
            if admitted == nil { try await Task.sleep(for: .milliseconds(50)) }
        }
        let lease = try #require(admitted, "the first upload was never admitted")
        let leaseID = try lease.requireID(), takenUntil = lease.expiresAt

        // Then a byte every quarter of a second, under every timeout, until it is cut short below.
        let trickling = Task {
            var sent = head
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(250))
                guard !Task.isCancelled else { break }
                try await connection.send(bytes: first[sent..<sent + 1])
                sent += 1
            }
            return sent
        }
        // A second past the lease's first expiry: renewed, it holds the reservation still.
        while Date() < takenUntil.addingTimeInterval(1) { try await Task.sleep(for: .milliseconds(100)) }
        let renewed = try #require(try await UploadLeaseRecord.find(leaseID, on: db), "the first upload's lease is gone")
        #expect(renewed.expiresAt > takenUntil, "never renewed: expires at \(renewed.expiresAt)")
        let refused = try await world.admin.call("PUT", "/v1/teams/T/blobs/\(second.sha256Hex)", body: second)
        trickling.cancel()
        #expect(refused.status == 413, "\(refused.text)")
        #expect(refused.errorCode == "quota_exceeded")

        // The first upload's rest: stored.
        let sent = try await trickling.value
        try await connection.send(bytes: first.dropFirst(sent))
        let (text, _) = try await connection.wait { $0.contains("\r\n\r\n") }
        await connection.close()
        #expect(RawConnection.statuses(text) == [201], "\(text.prefix(300))")
        let team = try #require(try await TeamRecord.query(on: db).filter(\.$name == "T").first())
        let stored = try await BlobRecord.query(on: db).filter(\.$team.$id == team.requireID()).all(\.$size).reduce(0, +)
        #expect(stored <= quota, "team T stores \(stored) bytes, past its quota of \(quota)")
    }

    @Test("a trickled upload keeps its reservation past its lease's first lifetime; the team's next upload is still refused 413 (SQLite)")
    func trickleSQLite() async throws { try await Self.trickle(.sqlite) }

    @Test("the same on PostgreSQL", .enabled(if: TestServer.postgresURL != nil, "set COFFER_TEST_DATABASE_URL to run against PostgreSQL"))
    func tricklePostgres() async throws { try await Self.trickle(.postgres) }
}

/// A clock the test sets by hand.
private final class HandClock: Sendable {
    private let date: NIOLockedValueBox<Date>
    init(_ start: Date) { date = NIOLockedValueBox(start) }
    var now: Date { date.withLockedValue { $0 } }
    func set(_ moment: Date) { date.withLockedValue { $0 = moment } }
}

/// A body in as many chunks as `offsets`, each arriving (the clock set) that many seconds after `start`.
private struct TimedBody: AsyncSequence {
    typealias Element = ByteBuffer
    private let chunks: [(offset: TimeInterval, bytes: ByteBuffer)]
    private let start: Date
    private let clock: HandClock

    init(_ bytes: Data, at offsets: [TimeInterval], from start: Date, clock: HandClock) {
        let size = bytes.count / offsets.count + 1
        chunks = offsets.enumerated().map { index, offset in
            (offset: offset, bytes: ByteBuffer(bytes: bytes.dropFirst(index * size).prefix(size)))
        }
        self.start = start
        self.clock = clock
    }

    struct AsyncIterator: AsyncIteratorProtocol {
        var rest: ArraySlice<(offset: TimeInterval, bytes: ByteBuffer)>
        let start: Date
        let clock: HandClock

        mutating func next() async throws -> ByteBuffer? {
            guard let chunk = rest.popFirst() else { return nil }
            clock.set(start.addingTimeInterval(chunk.offset))
            return chunk.bytes
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(rest: chunks[...], start: start, clock: clock) }
}

/// An upload that keeps nothing: the loop's checks and renewals are what is tested.
private final class NullUpload: BlobUpload {
    func write(_ piece: ByteBuffer) async throws {}
    func publish(as address: String) async throws {}
    func discard() async {}
}
