import BlockingTestSupport
import CofferFormat
@testable import CofferServer
import Fluent
import Foundation
import S3TestSupport
import Testing

/// Uploads in flight count against their team's quota: before, each upload was checked against the
/// blobs stored before it, so a developer who started many at once (any signed-in user can make a
/// team) passed the quota once per upload and could fill the disk every team shares.
@Suite("Quota reservations of uploads in flight")
struct QuotaReservationTests {
    static func run(_ backend: Backend) async throws {
        let server = try await TestServer.start(postgres: backend.isPostgres) { $0.teamQuotaBytes = 10_000_000 }
        defer { Task { try? await server.stop() } }
        let world = World(server)
        try await world.team("T")
        let key = try await world.key(in: "T")
        // Two sealed models of about 6 MB (the header is checked once its bytes arrive).
        let first = Data(try SealedModel.seal(testBytes(6_000_000) { UInt8(truncatingIfNeeded: $0 &* 13) }, name: "a", using: .modelKey(key)))
        let second = Data(try SealedModel.seal(testBytes(6_000_000) { UInt8(truncatingIfNeeded: $0 &* 29) }, name: "b", using: .modelKey(key)))

        // The first upload sends its head and a mebibyte, then waits: admitted, it holds 6 MB.
        let held = try HeldUpload(port: try #require(server.base.port), method: "PUT", path: "/v1/teams/T/blobs/\(first.sha256Hex)",
                                  headers: [("Authorization", "Bearer \(server.adminToken)")], body: first, sent: 1 << 20)
        defer { held.close() }
        try await held.waitUntilReserved {
            try await UploadLeaseRecord.query(on: server.app.db).filter(\.$size == Int64(first.count)).count() == 1
        }
        // The second would take the team to 12 MB: refused before its body is read.
        let refused = try await world.admin.call("PUT", "/v1/teams/T/blobs/\(second.sha256Hex)", body: second)
        #expect(refused.status == 413, "\(refused.text)")
        #expect(refused.errorCode == "quota_exceeded")
        #expect(refused.text.contains("\(first.count) more reserved by uploads in progress"), "\(refused.text)")

        // Cut, the first upload gives its reservation back: the second fits.
        held.close()
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline, try await UploadLeaseRecord.query(on: server.app.db).count() > 0 { try await Task.sleep(for: .milliseconds(50)) }
        #expect(try await world.admin.call("PUT", "/v1/teams/T/blobs/\(second.sha256Hex)", body: second).status == 201)
        // Stored, it counts as before: the first no longer fits.
        #expect(try await world.admin.call("PUT", "/v1/teams/T/blobs/\(first.sha256Hex)", body: first).status == 413)
    }

    @Test("a team's second upload is refused while its first, admitted, still sends (SQLite)")
    func sqlite() async throws { try await Self.run(.sqlite) }

    @Test("the same on PostgreSQL", .enabled(if: TestServer.postgresURL != nil, "set COFFER_TEST_DATABASE_URL to run against PostgreSQL"))
    func postgres() async throws { try await Self.run(.postgres) }
}
