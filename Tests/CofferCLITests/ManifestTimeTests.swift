import CofferFormat
import Crypto
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import Coffer

/// The time manifests are judged by (``ManifestTime``): the device's clock, never earlier than the
/// newest `issuedAt` the cache verified, so that a clock set back (a hostile network spoofing NTP
/// to an edge box) revives no expired manifest and keeps no cache fresh. The device's clock is
/// played by ``CofferConfiguration/deviceClock``; the server by a transport that answers manifest
/// requests with envelopes signed here.
@Suite("Manifest time")
struct ManifestTimeTests {
    /// When the cached manifest was issued.
    static let issued = Date(timeIntervalSince1970: 1_900_000_000)
    static let day: TimeInterval = 86_400
    static let key = Curve25519.Signing.PrivateKey()

    static func manifest(sequence: UInt64 = 3, deployment: String = "d1", issued: Date = issued,
                         lifetime: TimeInterval = 7 * day) -> Manifest {
        Manifest(collection: "FlowerModels", teamID: ManifestTrustTests.team, deploymentID: deployment, sequence: sequence,
                 target: "default", issuedAt: issued, expiresAt: issued.addingTimeInterval(lifetime), models: [:])
    }

    static func state(_ manifest: Manifest) -> CacheState {
        CacheState(envelope: Data(), etag: "\"e\"", manifest: manifest)
    }

    /// The `If-None-Match` of `count` requests that named none.
    static func noneNamed(_ count: Int) -> [String?] { Array(repeating: nil, count: count) }

    @Test("the device's clock a day behind the cached issuedAt: judged at that issuedAt, not fresh, an expired-at-T manifest expired")
    func clockBehind() throws {
        let behind = ManifestTime(deviceClock: Self.issued.addingTimeInterval(-Self.day), newestIssuedAt: Self.issued)
        #expect(behind.now == Self.issued && behind.isClockBehind)
        // Within the skew allowance: judged at the issuedAt, and the clock is not taken for set back.
        let skewed = ManifestTime(deviceClock: Self.issued.addingTimeInterval(-ManifestTime.allowedSkew + 1), newestIssuedAt: Self.issued)
        #expect(skewed.now == Self.issued && !skewed.isClockBehind)
        let ahead = ManifestTime(deviceClock: Self.issued.addingTimeInterval(3600), newestIssuedAt: Self.issued)
        #expect(ahead.now == Self.issued.addingTimeInterval(3600) && !ahead.isClockBehind)
        let nothingVerified = ManifestTime(deviceClock: Self.issued, verified: [nil, nil])
        #expect(nothingVerified.newestIssuedAt == nil && nothingVerified.now == Self.issued && !nothingVerified.isClockBehind)
        #expect(ManifestTime(deviceClock: .distantPast, verified: [Self.manifest(), nil, Self.manifest(issued: Self.issued.addingTimeInterval(60))])
            .newestIssuedAt == Self.issued.addingTimeInterval(60))

        // A cache holding a manifest issued at T (a week's lifetime): fresh by the device's clock
        // set back a day, so a 304 would keep it; not fresh once the clock is known to be behind.
        let cached = Self.state(Self.manifest())
        #expect(cached.isFresh(at: ManifestTime(deviceClock: Self.issued.addingTimeInterval(3600), newestIssuedAt: Self.issued)))
        #expect(!cached.isFresh(at: behind))
        #expect(!cached.isFresh(at: ManifestTime(deviceClock: Self.issued.addingTimeInterval(4 * Self.day), newestIssuedAt: Self.issued)),
                "past half its lifetime")

        // A manifest that expired at T verifies by the clock set back, not at the time judged by.
        let expiredAtT = Self.manifest(issued: Self.issued.addingTimeInterval(-7 * Self.day))
        let envelope = try SignedManifest.sign(expiredAtT, with: Self.key)
        #expect(try SignedManifest.verify(envelope, using: Self.key.publicKey, now: behind.deviceClock) == expiredAtT)
        #expect(throws: ManifestError.expired) { try SignedManifest.verify(envelope, using: Self.key.publicKey, now: behind.now) }
        #expect(behind.hasPassed(expiredAtT.expiresAt) && behind.hasPassed(Self.manifest().expiresAt),
                "behind: even the cached manifest's expiry cannot be told")
        #expect(!ahead.hasPassed(Self.manifest().expiresAt) && ahead.hasPassed(expiredAtT.expiresAt))
    }

    @Test("through the SDK, the clock set back a day: no 304 keeps the cache, an expired-at-T re-signing is refused, isExpired says so")
    func setBackThroughTheSDK() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-clock-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let server = ScriptedManifests()
        let clock = DeviceClock(Self.issued.addingTimeInterval(3600))
        var configuration = CofferConfiguration(serverURL: URL(string: "http://127.0.0.1:9")!, appID: UUID().uuidString,
                                                credential: "c", publicKey: Self.key.publicKey, cacheDirectory: folder)
        configuration.transport = server
        configuration.updatePolicy = .waitForLatest
        configuration.deviceID = "device-1"
        configuration.deviceClock = { clock.now }
        let client = try CofferClient(configuration: configuration)

        // Issued at T, cached while the clock is right.
        let first = Self.manifest()
        server.answer(.envelope(try SignedManifest.sign(first, with: Self.key), etag: "\"e1\""))
        let fresh = try await client.beginAccessing(identifier: "FlowerModels")
        #expect(fresh.origin == .server && fresh.sequence == 3 && !fresh.isExpired)

        // The clock set back a day, and a forged 304: by the clock alone the cache is fresh (an
        // If-None-Match goes out and the 304 keeps it, as current). It is not: nothing is named, the
        // 304 is refused, and the cached manifest counts as expired.
        clock.now = Self.issued.addingTimeInterval(-Self.day)
        server.answer(.notModified)
        let forged = try await client.beginAccessing(identifier: "FlowerModels")
        #expect(server.conditions == Self.noneNamed(2), "no If-None-Match")
        #expect(forged.origin.isStale { if case .server(status: 304, _, _) = $0 { return true } else { return false } }, "\(forged.origin)")
        #expect(forged.sequence == 3 && forged.isExpired)

        // A re-signing of the same activation that expired at T - 1 h: valid by the clock set back,
        // and the same content, so it would replace the cached one. Judged at T, it has expired.
        let expiredAtT = Self.manifest(issued: Self.issued.addingTimeInterval(-7 * Self.day - 3600))
        server.answer(.envelope(try SignedManifest.sign(expiredAtT, with: Self.key), etag: "\"e0\""))
        let replayed = try await client.beginAccessing(identifier: "FlowerModels")
        #expect(replayed.origin.isStale {
            if case .manifestRefused(let reason) = $0 { return reason.contains("expired") && reason.contains("set back") } else { return false }
        }, "\(replayed.origin)")
        #expect(replayed.expiresAt == first.expiresAt, "the cache keeps the manifest issued at T")

        // A newer manifest is still taken while the clock is behind; it counts as expired until the
        // clock catches up, and then a 304 keeps it again.
        let newer = Self.manifest(sequence: 4, deployment: "d2", issued: Self.issued.addingTimeInterval(Self.day))
        server.answer(.envelope(try SignedManifest.sign(newer, with: Self.key), etag: "\"e2\""))
        let updated = try await client.beginAccessing(identifier: "FlowerModels")
        #expect(updated.origin == .server && updated.sequence == 4 && updated.isExpired)
        clock.now = Self.issued.addingTimeInterval(Self.day + 3600)
        #expect(!updated.isExpired, "the clock caught up")
        server.answer(.notModified)
        let confirmed = try await client.beginAccessing(identifier: "FlowerModels")
        #expect(server.conditions == Self.noneNamed(4) + ["\"e2\""], "the cache is fresh again")
        #expect(confirmed.origin == .server && confirmed.sequence == 4 && !confirmed.isExpired)
    }
}

/// The device's clock, set by the test.
final class DeviceClock: @unchecked Sendable {
    private let lock = NSLock()
    private var date: Date
    init(_ date: Date) { self.date = date }
    var now: Date {
        get { lock.withLock { date } }
        set { lock.withLock { date = newValue } }
    }
}

/// A server that answers every manifest request as the test last said, and keeps the
/// `If-None-Match` each request named; any other request is answered 404.
final class ScriptedManifests: CofferTransport, @unchecked Sendable {
    enum Answer {
        case envelope(Data, etag: String)
        case notModified
    }

    private let lock = NSLock()
    private var current = Answer.notModified
    private var named: [String?] = []

    func answer(_ answer: Answer) { lock.withLock { current = answer } }

    /// The `If-None-Match` of each manifest request, in order (nil: none).
    var conditions: [String?] { lock.withLock { named } }

    func stream(_ request: URLRequest, consume: @escaping @Sendable (HTTPURLResponse, Data) throws -> Void) async throws -> HTTPURLResponse {
        guard let url = request.url else { throw URLError(.badURL) }
        guard url.path.hasSuffix("/manifest") else { return try Self.response(url, 404, [:]) }
        let answer = lock.withLock { () -> Answer in
            named.append(request.value(forHTTPHeaderField: "If-None-Match"))
            return current
        }
        switch answer {
        case .envelope(let body, let etag):
            let response = try Self.response(url, 200, ["ETag": etag])
            try consume(response, body)
            return response
        case .notModified:
            return try Self.response(url, 304, [:])
        }
    }

    private static func response(_ url: URL, _ status: Int, _ headers: [String: String]) throws -> HTTPURLResponse {
        guard let response = HTTPURLResponse(url: url, statusCode: status, httpVersion: "HTTP/1.1", headerFields: headers) else {
            throw URLError(.badServerResponse)
        }
        return response
    }
}
