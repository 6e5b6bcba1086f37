@testable import CofferServer
import Fluent
import Foundation
import S3TestSupport
import Testing

/// One account's uploads in progress into the folder store are bounded, as a bucket's are by its
/// share of the upload memory. Before, nothing bounded them: one account could keep any number of
/// slow uploads open.
@Suite("Uploads in progress per account into the folder")
struct UploadSlotsTests {
    @Test("an account holding six uploads has its next refused 429 too_many_uploads, by the dashboard and by the API, while another account's goes through; a cut one gives its slot back")
    func oneAccountsUploadsAreBounded() async throws {
        let server = try await TestServer.start()
        defer { Task { try? await server.stop() } }
        let flowers = try await Flowers.make(server)
        let store = try #require(server.app.blobStore as? FolderBlobStore)
        let admin = try #require(try await UserRecord.query(on: server.app.db).filter(\.$name == "admin").first()).requireID()
        let browser = try await DashboardTests.ownerBrowser(server)
        _ = try await browser.get(DashboardDeploymentTests.collection + "/deployments/new")
        let path = DashboardDeploymentTests.collection + "/models/FlowerClassifier"
        let port = try #require(server.base.port)
        // As many as one account's share of a bucket's default upload memory holds.
        let cap = Int(store.uploadSlots.perAccount)
        #expect(cap == 6)

        // The account's uploads send their head and a few bytes, then wait: each holds a slot.
        var held: [HeldUpload] = []
        defer { for upload in held { upload.close() } }
        for index in 0..<cap {
            let model = try DashboardDeploymentTests.sealed(flowers, "held\(index)")
            held.append(try HeldUpload(port: port, method: "POST", path: path,
                                       headers: [("Cookie", browser.cookieHeader), ("X-CSRF-Token", browser.csrf)], body: model, sent: 10))
        }
        try await held[0].waitUntilReserved { store.uploadSlots.inProgress(for: admin) == Int64(cap) }

        let next = try DashboardDeploymentTests.sealed(flowers, "next")
        let scripted = try await DashboardDeploymentTests.scriptUpload(browser, model: "FlowerStylizer", next)
        #expect(scripted.status == 429, "\(scripted.text)")
        #expect(scripted.header("Retry-After") == "10", "\(scripted.headers)")
        #expect((scripted.object["reason"] as? String)?.contains("uploads in progress") == true, "\(scripted.text)")
        let api = try await flowers.admin.call("PUT", "/v1/teams/T/blobs/\(next.sha256Hex)", body: next)
        #expect(api.status == 429 && api.errorCode == "too_many_uploads", "\(api.text)")
        #expect(api.header("Retry-After") == "10")

        // Another account's upload is not held back by them.
        let developer = try await flowers.world.member("dev", role: "developer", in: "T")
        let other = try await developer.call("PUT", "/v1/teams/T/blobs/\(next.sha256Hex)", body: next)
        #expect(other.status == 201, "\(other.text)")

        // Cut, an upload gives its slot back, and the account's next one goes through.
        held[0].close()
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline, store.uploadSlots.inProgress(for: admin) == Int64(cap) { try await Task.sleep(for: .milliseconds(50)) }
        let another = try DashboardDeploymentTests.sealed(flowers, "another")
        let taken = try await DashboardDeploymentTests.scriptUpload(browser, model: "FlowerStylizer", another)
        #expect(taken.status == 201, "\(taken.text)")
        #expect(store.uploadSlots.inProgress(for: admin) == Int64(cap - 1))
    }
}
