import CofferFormat
@testable import CofferServer
import Foundation
import S3TestSupport
import Testing

/// A dashboard upload refused because the account's uploads already hold their share of the
/// bucket's upload memory (429 `too_many_uploads`) says when to try again, as the API does, both
/// to the page's script and to the form without one.
@Suite("Dashboard uploads refused while busy",
       .enabled(if: S3TestGateway.configured, "set COFFER_TEST_S3_ENDPOINT, COFFER_TEST_S3_ACCESS_KEY and COFFER_TEST_S3_SECRET_KEY"))
struct DashboardUploadBusyTests {
    @Test("an upload refused with 429 too_many_uploads carries Retry-After on the script's answer and on the page")
    func refusedUploadSaysWhenToRetry() async throws {
        // Room for two uploads' parts (8 MiB × 5 each): one account's share is one of them.
        let server = try await TestServer.start(store: .s3) { $0.objectStore?.uploadMemory = 83_886_080 }
        defer { Task { try? await server.stop() } }
        let flowers = try await Flowers.make(server)
        let browser = try await DashboardTests.ownerBrowser(server)
        let path = DashboardDeploymentTests.collection + "/models/FlowerClassifier"
        _ = try await browser.get(DashboardDeploymentTests.collection + "/deployments/new")

        // The same account's slow upload sends its first MiB and waits: it holds the account's share.
        let slow = Data(try SealedModel.seal(Array(repeating: 7, count: 4 << 20), name: "slow", using: .modelKey(flowers.key)))
        let held = try HeldUpload(port: try #require(server.base.port), method: "POST", path: path,
                                  headers: [("Cookie", browser.cookieHeader), ("X-CSRF-Token", browser.csrf)], body: slow, sent: 1 << 20)
        defer { held.close() }
        try await held.waitUntilReserved { try await server.leftoverUploads() > 0 }

        let good = try DashboardDeploymentTests.sealed(flowers, "good")
        let scripted = try await DashboardDeploymentTests.scriptUpload(browser, model: "FlowerClassifier", good)
        #expect(scripted.status == 429, "\(scripted.text)")
        #expect(scripted.header("Retry-After") == "10", "\(scripted.headers)")
        #expect((scripted.object["reason"] as? String)?.contains("uploads in progress") == true, "\(scripted.text)")

        let page = try await browser.postMultipart(path, file: good)
        #expect(page.status == 429)
        #expect(page.header("Retry-After") == "10", "\(page.headers)")
        #expect(page.html.contains("uploads in progress"))
    }
}
