import CofferFormat
@testable import CofferServer
import Fluent
import Foundation
import S3TestSupport
import Testing

/// A dashboard upload reserves the size it states against its team's quota before a byte of its
/// body is read, as the API does. Before, the whole body was written to disk and only then checked
/// against the quota, so any number of uploads started at once each stored their bytes first.
@Suite("Dashboard uploads and the team quota")
struct DashboardQuotaTests {
    /// A model of about `size` bytes sealed with `key`, different for each `seed`.
    static func model(_ key: ModelKey, size: Int, seed: Int) throws -> Data {
        Data(try SealedModel.seal((0..<size).map { UInt8(truncatingIfNeeded: $0 &* seed) }, name: "m\(seed)", using: .modelKey(key)))
    }

    /// A server with a 10 MB team quota whose team stores a 9 MB model (`stored`), and its owner's
    /// browser on the new-deployment page.
    static func nearQuota() async throws -> (TestServer, Flowers, Data, Browser) {
        let server = try await TestServer.start { $0.teamQuotaBytes = 10_000_000 }
        let flowers = try await Flowers.make(server)
        let stored = try Self.model(flowers.key, size: 9_000_000, seed: 13)
        let put = try await flowers.admin.call("PUT", "/v1/teams/T/blobs/\(stored.sha256Hex)", body: stored)
        #expect(put.status == 201, "\(put.text)")
        let browser = try await DashboardTests.ownerBrowser(server)
        _ = try await browser.get(DashboardDeploymentTests.collection + "/deployments/new")
        return (server, flowers, stored, browser)
    }

    @Test("a team near its quota is refused 413 from the head of an upload, from the script and from the form; nothing is stored or left reserved")
    func refusedFromTheHead() async throws {
        let (server, flowers, stored, browser) = try await Self.nearQuota()
        defer { Task { try? await server.stop() } }
        let path = DashboardDeploymentTests.collection + "/models/FlowerClassifier"
        let port = try #require(server.base.port)

        // Each states 6 MB and sends its head and a few bytes (Vapor hands a request on only with
        // its first body bytes or its end): the answer comes while almost all of the body is unsent,
        // the form's before its `csrf` field.
        let ways = [("script", "Content-Type: application/octet-stream\r\nX-CSRF-Token: \(browser.csrf)\r\n", "\u{0}"),
                    ("form", "Content-Type: multipart/form-data; boundary=coffer-quota-test\r\n", "--coffer-quota-test\r\n")]
        for (way, headers, prefix) in ways {
            let connection = try await RawConnection.connect(port: port)
            try await connection.send("POST \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nCookie: \(browser.cookieHeader)\r\n"
                                      + headers + "Content-Length: 6000000\r\n\r\n" + prefix)
            let (text, _) = try await connection.wait(seconds: 10) { $0.contains("COFFER_TEAM_QUOTA_BYTES") }
            await connection.close()
            #expect(RawConnection.statuses(text) == [413], "\(way): \(text.prefix(300))")
            #expect(text.contains("COFFER_TEAM_QUOTA_BYTES"), "\(way)")
        }
        #expect(try await server.leftoverUploads() == 0)
        #expect(try await UploadLeaseRecord.query(on: server.app.db).count() == 0)

        // What fits is still taken, and leaves nothing reserved.
        let small = try DashboardDeploymentTests.sealed(flowers, "small")
        let taken = try await DashboardDeploymentTests.scriptUpload(browser, model: "FlowerClassifier", small)
        #expect(taken.status == 201, "\(taken.text)")
        #expect(try await UploadLeaseRecord.query(on: server.app.db).count() == 0)
    }

    @Test("while one dashboard upload of 6 MB still sends, a second of 6 MB is refused 413 by the dashboard and by the API; once it is cut, the second fits")
    func uploadsInFlightReserve() async throws {
        let server = try await TestServer.start { $0.teamQuotaBytes = 10_000_000 }
        defer { Task { try? await server.stop() } }
        let flowers = try await Flowers.make(server)
        let first = try Self.model(flowers.key, size: 6_000_000, seed: 13)
        let second = try Self.model(flowers.key, size: 6_000_000, seed: 29)
        let browser = try await DashboardTests.ownerBrowser(server)
        _ = try await browser.get(DashboardDeploymentTests.collection + "/deployments/new")

        // The first sends its head and a mebibyte, then waits: it holds 6 MB of the team's 10.
        let held = try HeldUpload(port: try #require(server.base.port), method: "POST", path: DashboardDeploymentTests.collection + "/models/FlowerClassifier",
                                  headers: [("Cookie", browser.cookieHeader), ("X-CSRF-Token", browser.csrf)], body: first, sent: 1 << 20)
        defer { held.close() }
        try await held.waitUntilReserved {
            try await UploadLeaseRecord.query(on: server.app.db).filter(\.$size == Int64(first.count)).count() == 1
        }
        let scripted = try await DashboardDeploymentTests.scriptUpload(browser, model: "FlowerStylizer", second)
        #expect(scripted.status == 413, "\(scripted.text)")
        #expect((scripted.object["reason"] as? String)?.contains("reserved by uploads in progress") == true, "\(scripted.text)")
        let api = try await flowers.admin.call("PUT", "/v1/teams/T/blobs/\(second.sha256Hex)", body: second)
        #expect(api.status == 413 && api.errorCode == "quota_exceeded", "\(api.text)")

        // Cut, the first gives its reservation back.
        held.close()
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline, try await UploadLeaseRecord.query(on: server.app.db).count() > 0 { try await Task.sleep(for: .milliseconds(50)) }
        let taken = try await DashboardDeploymentTests.scriptUpload(browser, model: "FlowerStylizer", second)
        #expect(taken.status == 201, "\(taken.text)")
        #expect(try await server.leftoverUploads() == 0)
    }

    @Test("a team near its quota may upload from the dashboard a model the server stores already, when the script declares its SHA-256 (with an empty body or the file): answered without reading the body; a declaration that lies is refused")
    func storedBytesCostNothing() async throws {
        let (server, flowers, stored, browser) = try await Self.nearQuota()
        defer { Task { try? await server.stop() } }
        let path = DashboardDeploymentTests.collection + "/models/FlowerClassifier"
        func upload(_ body: Data, declaring sha256: String?) async throws -> HTTP.Reply {
            var headers = ["X-CSRF-Token": browser.csrf]
            if let sha256 { headers[ModelUploadPage.declaredAddressHeader] = sha256 }
            if body.isEmpty { headers["Content-Length"] = "0" }
            return try await browser.postRaw(path, body: body, contentType: "application/octet-stream", headers: headers)
        }

        // Without the declaration its 9 MB are charged again, and do not fit: the script is told why.
        let undeclared = try await upload(stored, declaring: nil)
        #expect(undeclared.status == 413, "\(undeclared.text)")
        #expect(undeclared.object["code"] as? String == "quota_exceeded", "\(undeclared.text)")

        // Declared, the bytes the server has cost nothing and are not read again: the version is made
        // while all but a few bytes of the body are unsent (a declaration, charged nothing, never
        // writes a body to disk).
        let port = try #require(server.base.port)
        let connection = try await RawConnection.connect(port: port)
        try await connection.send("POST \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nCookie: \(browser.cookieHeader)\r\n"
                                  + "Content-Type: application/octet-stream\r\nX-CSRF-Token: \(browser.csrf)\r\n"
                                  + "\(ModelUploadPage.declaredAddressHeader): \(stored.sha256Hex)\r\nContent-Length: \(stored.count)\r\n\r\n\u{0}")
        let (text, _) = try await connection.wait(seconds: 10) { $0.contains("\"label\"") || $0.contains("\"reason\"") }
        await connection.close()
        #expect(RawConnection.statuses(text) == [201], "\(text.prefix(300))")
        #expect(text.contains(stored.sha256Hex), "\(text.prefix(300))")
        #expect(try await server.leftoverUploads() == 0)
        // Asked with an empty body, as the script asks (a browser sends a body whole before it reads
        // the answer): the stored blob is chosen; one the server does not store is 409 not_stored.
        let asked = try await upload(Data(), declaring: stored.sha256Hex)
        #expect(asked.status == 201 && asked.object["sha256"] as? String == stored.sha256Hex, "\(asked.text)")
        let unknown = try await upload(Data(), declaring: String(repeating: "ab", count: 32))
        #expect(unknown.status == 409 && unknown.object["code"] as? String == "not_stored", "\(unknown.text)")

        // A stored copy that is damaged is replaced by a declared upload, whose body is then read and
        // must hash to its declaration: other bytes of its size are refused, and not kept.
        let blobs = try FolderBlobStore(root: server.configuration.resolvedBlobDirectoryForTests)
        let handle = try #require(FileHandle(forUpdatingAtPath: blobs.path(of: stored.sha256Hex)))
        try handle.truncate(atOffset: 4096)
        try handle.close()
        let damagedAsked = try await upload(Data(), declaring: stored.sha256Hex)
        #expect(damagedAsked.status == 409 && damagedAsked.object["code"] as? String == "stored_damaged", "\(damagedAsked.text)")
        let other = try Self.model(flowers.key, size: 9_000_000, seed: 29)
        #expect(other.count == stored.count)
        let lying = try await upload(other, declaring: stored.sha256Hex)
        #expect(lying.status == 422 && lying.object["code"] as? String == "digest_mismatch", "\(lying.text)")
        #expect(try await BlobRecord.find(other.sha256Hex, on: server.app.db) == nil)
        let repaired = try await upload(stored, declaring: stored.sha256Hex)
        #expect(repaired.status == 201, "\(repaired.text)")
        #expect(try await blobs.size(of: stored.sha256Hex) == Int64(stored.count), "the damaged copy was replaced")

        // Declaring the stored blob with another size is refused before the body: it could not hash to it.
        let resized = try await upload(Data(count: 4096), declaring: stored.sha256Hex)
        #expect(resized.status == 422 && resized.object["code"] as? String == "digest_mismatch", "\(resized.text)")
        // A declaration that is not a SHA-256.
        let malformed = try await upload(stored.prefix(4096), declaring: "ABC")
        #expect(malformed.status == 400, "\(malformed.text)")

        #expect(try await server.leftoverUploads() == 0)
        #expect(try await UploadLeaseRecord.query(on: server.app.db).count() == 0)
    }
}
