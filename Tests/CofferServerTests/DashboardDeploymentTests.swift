import BlockingTestSupport
import CofferFormat
@testable import CofferServer
import Fluent
import Foundation
import Testing

/// Deployments made in the browser, over real HTTP: uploads (the script's raw body and the form
/// without a script), the deployment form with its rules, clones, and a deployment's page with the
/// model facts of issue 8.
@Suite("Dashboard deployments")
struct DashboardDeploymentTests {
    static let collection = "/dashboard/teams/T/collections/FlowerModels"

    /// A sealed model of team T's key, as bytes.
    static func sealed(_ flowers: Flowers, _ label: String) throws -> Data {
        Data(try SealedModel.seal(Array("model \(label)".utf8), name: label, using: .modelKey(flowers.key)))
    }

    /// Uploads `data` as the dashboard's script does.
    static func scriptUpload(_ browser: Browser, model: String, _ data: Data, csrf: String? = nil) async throws -> HTTP.Reply {
        try await browser.postRaw(collection + "/models/" + model, body: data, contentType: "application/octet-stream",
                                  headers: ["X-CSRF-Token": csrf ?? browser.csrf])
    }

    @Test("upload two models, create a deployment with a tablet rule, see its page, activate it, clone it", arguments: TestStore.available)
    func createInTheBrowser(store: TestStore) async throws {
        let server = try await TestServer.start(store: store)
        defer { Task { try? await server.stop() } }
        let flowers = try await Flowers.make(server)
        let browser = try await DashboardTests.ownerBrowser(server)

        let form = try await browser.get(Self.collection + "/deployments/new")
        #expect(form.status == 200)
        for label in ["for=\"file-0\"", "for=\"file-1\"", "for=\"name\"", "for=\"model-0\"", "for=\"model-1\"", "for=\"rules\""] {
            #expect(form.html.contains(label), "\(label)")
        }
        #expect(form.html.contains("<script src=\"/dashboard/assets/upload.js\"></script>"))
        #expect(!form.html.contains("<script>"))
        #expect(form.html.contains("Upload a model for FlowerClassifier first"))

        // The script's way: the file as the body, the token in a header; JSON back.
        let phone = try Self.sealed(flowers, "phone"), tablet = try Self.sealed(flowers, "tablet")
        let first = try await Self.scriptUpload(browser, model: "FlowerClassifier", phone)
        #expect(first.status == 201, "\(first.text)")
        #expect(first.object["sha256"] as? String == phone.sha256Hex)
        #expect(first.object["keyID"] as? String == flowers.key.id)
        // The same bytes again: stored once, the same version.
        #expect(try await Self.scriptUpload(browser, model: "FlowerClassifier", phone).object["sha256"] as? String == phone.sha256Hex)
        #expect(try await Self.scriptUpload(browser, model: "FlowerClassifier", tablet).status == 201)

        // The form's way, without a script: back to the form with the model chosen.
        let stylizer = try Self.sealed(flowers, "stylizer")
        let posted = try await browser.postMultipart(Self.collection + "/models/FlowerStylizer", fields: ["from": "", "pick-0": phone.sha256Hex], file: stylizer)
        #expect(posted.status == 303, "\(posted.html)")
        let back = try #require(posted.location)
        #expect(back == Self.collection + "/deployments/new?pick-0=\(phone.sha256Hex)&pick-1=\(stylizer.sha256Hex)")
        let chosen = try await browser.get(back)
        #expect(chosen.html.contains("value=\"\(stylizer.sha256Hex)\" selected"))
        #expect(chosen.html.contains("value=\"\(phone.sha256Hex)\" selected"))

        // The deployment, its tablet rule naming the tablet model by a prefix.
        let created = try await browser.post(Self.collection + "/deployments", [
            "name": "spring", "model-0": phone.sha256Hex, "model-1": stylizer.sha256Hex,
            "rules": "deviceClass=tablet : FlowerClassifier=\(tablet.sha256Hex.prefix(12))",
        ])
        #expect(created.status == 303, "\(created.html)")
        let page = try #require(created.location)
        let shown = try await browser.get(page)
        #expect(shown.status == 200)
        for text in [phone.sha256Hex, tablet.sha256Hex, stylizer.sha256Hex, flowers.key.id, "deviceClass=tablet", "No facts recorded"] {
            #expect(shown.html.contains(text), "\(text)")
        }

        // Facts recorded by the CLI show on the page.
        #expect(try await flowers.admin.call("PUT", "/v1/teams/T/blobs/\(phone.sha256Hex)/facts", json: ModelFactsTests.report).status == 204)
        let withFacts = try await browser.get(page)
        #expect(withFacts.html.contains("neuralNetworkClassifier"), "\(withFacts.html)")
        #expect(withFacts.html.contains("iOS 13.0+"))
        #expect(withFacts.html.contains("2 class labels"))

        // Activate from its page; the device answer follows the rule.
        let id = try #require(page.split(separator: "/").last.map(String.init))
        #expect(withFacts.html.contains("action=\"\(page)/activate\""))
        #expect(try await browser.post(Self.collection + "/deployments/\(id)/activate", [:]).status == 303)
        let device = try await browser.get(Self.collection + "/device?deviceID=d1&deviceClass=tablet")
        #expect(device.html.contains(String(tablet.sha256Hex.prefix(12))))

        // Clone: the form starts from the source; the clone drops the rule and appears on the collection page.
        let cloneForm = try await browser.get(page + "/clone")
        #expect(cloneForm.status == 200)
        #expect(cloneForm.html.contains("value=\"spring-copy\""))
        #expect(cloneForm.html.contains("deviceClass=tablet : FlowerClassifier=\(tablet.sha256Hex.prefix(12))"))
        let cloned = try await browser.post(page + "/clone", ["name": "summer", "model-0": tablet.sha256Hex, "model-1": stylizer.sha256Hex, "rules": ""])
        #expect(cloned.status == 303, "\(cloned.html)")
        let collectionPage = try await browser.get(Self.collection)
        #expect(collectionPage.html.contains("summer"))
        let view = try await flowers.admin.call("GET", Flowers.base + "/deployments")
        let summer = try #require((view.json as? [[String: Any]])?.first { $0["name"] as? String == "summer" })
        #expect((summer["rules"] as? [Any])?.isEmpty == true)
        #expect(((summer["models"] as? [String: Any])?["FlowerClassifier"] as? [String: Any])?["sha256"] as? String == tablet.sha256Hex)

        // The model's page: every uploaded version, its facts, and the deployments that name it.
        let modelPath = Self.collection + "/models/FlowerClassifier"
        #expect(collectionPage.html.contains("href=\"\(modelPath)\""))
        let model = try await browser.get(modelPath)
        #expect(model.status == 200)
        for text in [phone.sha256Hex, tablet.sha256Hex, "neuralNetworkClassifier", "spring (default, active)",
                     "summer (default)", "spring (rule 1, active)", "No facts recorded"] {
            #expect(model.html.contains(text), "\(text)")
        }
        #expect(!model.html.contains(stylizer.sha256Hex), "only FlowerClassifier's versions")
        #expect(try await browser.get(Self.collection + "/models/Nope").status == 404)
    }

    @Test("the model page shows each version's format and how many of its chunks the previous version shares", arguments: TestStore.available)
    func chunkSharingOnTheModelPage(store: TestStore) async throws {
        let server = try await TestServer.start(store: store)
        defer { Task { try? await server.stop() } }
        let flowers = try await Flowers.make(server)
        let browser = try await DashboardTests.ownerBrowser(server)
        // Fixed bytes: how many chunks a 10 KB change reaches depends on where the chunker's cut
        // points fall (content-defined, with a 64 KiB minimum a change can cascade a few chunks
        // before the cuts line up again), so random bytes made this check fail now and then.
        var generator = SplitMix64(state: 20_261_129)
        let base = testBytes(3 << 20) { _ in UInt8.random(in: 0...255, using: &generator) }
        var retrained = base
        retrained.replaceSubrange(2_000_000..<2_010_000, with: [UInt8](repeating: 9, count: 10_000))
        var v1Options = SealedModel.Options()
        v1Options.formatVersion = 1
        let first = Data(try SealedModel.seal(base, name: "m", using: .modelKey(flowers.key)))
        let second = Data(try SealedModel.seal(retrained, name: "m", using: .modelKey(flowers.key)))
        let third = Data(try SealedModel.seal(retrained, name: "m", using: .modelKey(flowers.key), options: v1Options))
        for data in [first, second, third] {
            #expect(try await Self.scriptUpload(browser, model: "FlowerClassifier", data).status == 201)
            try await Task.sleep(for: .milliseconds(1100))  // distinct upload times: the page sorts by them
        }
        let page = try await browser.get(Self.collection + "/models/FlowerClassifier").html
        #expect(page.contains("Format 1: fixed chunks; devices download every version whole."), "\(page)")
        let secondHeader = try SealedModel.readHeader(from: BytesSource(Array(second)))
        let shared = try #require(ChunkSharing.shared(secondHeader, with: try SealedModel.readHeader(from: BytesSource(Array(first)))))
        #expect(shared.total >= 8 && shared.shared >= shared.total - 3, "\(shared)")
        #expect(page.contains("Format 2: \(shared.total) content-defined chunks; \(shared.shared * 100 / shared.total) % shared with the previous version (\(first.sha256Hex.prefix(12))"))
        #expect(page.contains("Format 2: \(try SealedModel.readHeader(from: BytesSource(Array(first))).chunkCount) content-defined chunks."))
    }

    @Test("a refused deployment form says why next to the form and keeps what was typed")
    func formErrors() async throws {
        let server = try await TestServer.start()
        defer { Task { try? await server.stop() } }
        let flowers = try await Flowers.make(server)
        let phone = try await flowers.upload("phone"), stylizer = try await flowers.upload("stylizer")
        _ = try await flowers.deployment("taken", models: ["FlowerClassifier": phone, "FlowerStylizer": stylizer])
        let browser = try await DashboardTests.ownerBrowser(server)
        let base = ["name": "autumn", "model-0": phone, "model-1": stylizer]
        let cases: [(rules: String, name: String?, status: Int, says: String)] = [
            ("deviceClass=toaster : FlowerClassifier=\(phone)", nil, 422, "Line 1: Unknown device class"),
            ("\n# a comment\ndeviceClass=tablet FlowerClassifier=\(phone)", nil, 422, "Line 3 is not"),
            ("deviceClass=tablet : FlowerClassifier=abc", nil, 422, "is not a SHA-256"),
            ("deviceClass=tablet : FlowerClassifier=0123456789", nil, 422, "no uploaded FlowerClassifier"),
            ("deviceClass=tablet : Nope=\(phone)", nil, 400, "has no model named Nope"),
            ("", "taken", 409, "already has a deployment named taken"),
            ("", "", 422, "Give the deployment a name"),
            ("<script>alert(1)</script>", nil, 422, "&lt;script&gt;alert(1)&lt;/script&gt;"),
        ]
        for item in cases {
            var fields = base
            fields["rules"] = item.rules
            if let name = item.name { fields["name"] = name }
            let reply = try await browser.post(Self.collection + "/deployments", fields)
            #expect(reply.status == item.status, "\(item.rules): \(reply.status)")
            #expect(reply.html.contains(item.says), "\(item.rules): \(reply.html)")
            #expect(reply.html.contains("role=\"alert\""))
            #expect(!reply.html.contains("<script>alert"))
            if item.name == nil { #expect(reply.html.contains("value=\"autumn\"")) }
        }
        let list = try await flowers.admin.call("GET", Flowers.base + "/deployments")
        #expect((list.json as? [Any])?.count == 1)
    }

    @Test("with no blob limit (COFFER_MAX_BLOB_SIZE at its largest) a form upload is checked, not a trap: the limit plus the form's overhead overflowed Int64")
    func unlimitedBlobSize() async throws {
        let server = try await TestServer.start { $0.maximumBlobSize = .max }
        defer { Task { try? await server.stop() } }
        _ = try await Flowers.make(server)
        let browser = try await DashboardTests.ownerBrowser(server)
        let page = try await browser.postMultipart(Self.collection + "/models/FlowerClassifier", file: Data("not a model".utf8))
        #expect(page.status == 422)
        #expect(page.html.contains("too short to be a Coffer container"))
    }

    @Test("uploads that are not sealed models, cut short, mutated, too big, forged or from a viewer are refused with a clear 4xx",
          arguments: TestStore.available)
    func uploadRefusals(store: TestStore) async throws {
        let server = try await TestServer.start(store: store) { $0.maximumBlobSize = 64 * 1024 }
        defer { Task { try? await server.stop() } }
        let flowers = try await Flowers.make(server)
        let browser = try await DashboardTests.ownerBrowser(server)
        let path = Self.collection + "/models/FlowerClassifier"
        let good = try Self.sealed(flowers, "good")

        let plain = try await Self.scriptUpload(browser, model: "FlowerClassifier", Data("just some text, not a model".utf8))
        #expect(plain.status == 422)
        #expect((plain.object["reason"] as? String)?.contains("not a valid Coffer container") == true, "\(plain.text)")
        let page = try await browser.postMultipart(path, file: Data("<html>not a model</html>".utf8))
        #expect(page.status == 422)
        #expect(page.html.contains("not a valid Coffer container"))
        #expect(page.html.contains("<h1>New deployment</h1>") && page.html.contains("role=\"alert\""), "the form again, the reason beside the upload")
        #expect(!page.html.contains("<html>not a model"))
        #expect(try await browser.postMultipart(path, file: nil).html.contains("Choose a sealed model file"))
        #expect(try await browser.postRaw(path, body: good, contentType: "text/plain", headers: ["X-CSRF-Token": browser.csrf]).status == 415)
        #expect(try await Self.scriptUpload(browser, model: "NoSuchModel", good).status == 404)

        // Sealed with another team's key: refused, not recorded as an upload, its lease released.
        try await flowers.world.team("Other")
        let otherKey = try await flowers.world.key(in: "Other")
        let foreign = Data(try SealedModel.seal(Array("other team's model".utf8), name: "x", using: .modelKey(otherKey)))
        let refused = try await Self.scriptUpload(browser, model: "FlowerClassifier", foreign)
        #expect(refused.status == 422, "\(refused.text)")
        let audited = try await AuditRecord.query(on: server.app.db).filter(\.$target == foreign.sha256Hex).count()
        #expect(audited == 0, "a refused upload is not in the audit log")
        #expect(try await UploadLeaseRecord.query(on: server.app.db).filter(\.$blobID == foreign.sha256Hex).count() == 0)

        // Another team's stored blob (its bytes are public: manifests name it) sent through this
        // team's form is refused without restarting that blob's grace period, which would keep it,
        // and its owner's quota use, for as long as someone sends it again.
        let theirs = Data(try SealedModel.seal(Array("the other team's unused model".utf8), name: "y", using: .modelKey(otherKey)))
        #expect(try await flowers.world.admin.call("PUT", "/v1/teams/Other/blobs/\(theirs.sha256Hex)", body: theirs).status == 201)
        let longAgo = Date().addingTimeInterval(-10 * 86_400)
        let record = try #require(try await BlobRecord.find(theirs.sha256Hex, on: server.app.db))
        record.lastUploadedAt = longAgo
        try await record.update(on: server.app.db)
        #expect(try await Self.scriptUpload(browser, model: "FlowerClassifier", theirs).status == 422)
        let after = try #require(try await BlobRecord.find(theirs.sha256Hex, on: server.app.db)?.lastUploadedAt)
        #expect(abs(after.timeIntervalSince(longAgo)) < 1, "the grace period was restarted by another team's upload")

        // Too big: refused from its Content-Length, before a byte is read.
        let big = Data(count: 64 * 1024 + 1)
        #expect(try await Self.scriptUpload(browser, model: "FlowerClassifier", big).status == 413)
        #expect(try await browser.postMultipart(path, file: Data(count: 200 * 1024)).status == 413)

        // Forged: no token, a wrong one, the token after the file.
        #expect(try await Self.scriptUpload(browser, model: "FlowerClassifier", good, csrf: "not-the-token").status == 403)
        #expect(try await browser.postRaw(path, body: good, contentType: "application/octet-stream").status == 403)
        #expect(try await browser.postMultipart(path, file: good, csrf: .some(nil)).status == 403)
        #expect(try await browser.postMultipart(path, file: good, csrf: "not-the-token").status == 403)

        // Truncated and mutated bodies, both ways in: a 4xx that says why, never a server error;
        // a cut-short model is never stored.
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<40 {
            let cut = Int.random(in: 0..<good.count, using: &generator)
            let truncated = good.prefix(cut)
            let raw = try await Self.scriptUpload(browser, model: "FlowerClassifier", Data(truncated))
            #expect((400..<500).contains(raw.status), "cut at \(cut): \(raw.status)")
            #expect(raw.object["reason"] is String)
            var mutated = good
            let at = Int.random(in: 0..<min(good.count, 128), using: &generator)
            mutated[at] ^= UInt8.random(in: 1...255, using: &generator)
            let mutatedReply = try await Self.scriptUpload(browser, model: "FlowerClassifier", mutated)
            #expect(mutatedReply.status < 500, "byte \(at): \(mutatedReply.status)")
        }
        let form = try await browser.postMultipart(path, file: good)
        #expect(form.status == 303)
        for _ in 0..<40 {
            var body = try Self.multipartBody(browser, good)
            if Bool.random(using: &generator) {
                body = body.prefix(Int.random(in: 0..<body.count, using: &generator))
            } else {
                let at = Int.random(in: 0..<body.count, using: &generator)
                body[at] ^= UInt8.random(in: 1...255, using: &generator)
            }
            let reply = try await browser.postRaw(path, body: body.data, contentType: "multipart/form-data; boundary=\(body.boundary)")
            #expect(reply.status < 500, "\(reply.status): \(reply.html.prefix(300))")
        }
        #expect(try await server.leftoverUploads() == 0)

        // A viewer uploads nothing.
        let viewerToken = try #require(try await flowers.world.member("vera", role: "viewer", in: "T").token)
        let viewer = Browser(base: server.base)
        #expect(try await viewer.welcome(token: viewerToken, email: "vera@example.com", password: DashboardTests.password).status == 303)
        #expect(try await Self.scriptUpload(viewer, model: "FlowerClassifier", try Self.sealed(flowers, "viewer's")).status == 403)
        #expect(try await viewer.postMultipart(path, file: good).status == 403)
        #expect(try await viewer.get(Self.collection + "/deployments/new").status == 403)
    }

    /// A hand-made multipart upload form, to cut and mutate.
    struct Body {
        var data: Data
        let boundary: String
        var count: Int { data.count }
        func prefix(_ length: Int) -> Body { Body(data: data.prefix(length), boundary: boundary) }
        subscript(index: Int) -> UInt8 {
            get { data[data.startIndex + index] }
            set { data[data.startIndex + index] = newValue }
        }
    }

    static func multipartBody(_ browser: Browser, _ file: Data) throws -> Body {
        let boundary = "----coffer-fuzz"
        var data = Data("--\(boundary)\r\nContent-Disposition: form-data; name=\"csrf\"\r\n\r\n\(browser.csrf)\r\n".utf8)
        data += Data("--\(boundary)\r\nContent-Disposition: form-data; name=\"model\"; filename=\"m.coffer\"\r\n\r\n".utf8)
        data += file + Data("\r\n--\(boundary)--\r\n".utf8)
        return Body(data: data, boundary: boundary)
    }
}

extension DashboardDeploymentTests {
    @Test("a multipart body whose part header name has a byte over 0x7f is refused, not a crash (MultipartKit 4.7.1 reads out of bounds)")
    func multipartHeaderBytes() async throws {
        let server = try await TestServer.start()
        defer { Task { try? await server.stop() } }
        let flowers = try await Flowers.make(server)
        let browser = try await DashboardTests.ownerBrowser(server)
        var body = Data("--b\r\nContent-Disposition: form-data; name=\"csrf\"\r\n\r\n\(browser.csrf)\r\n--b\r\nX".utf8)
        body += Data([0xC3, 0xA9]) + Data(": 1\r\nContent-Disposition: form-data; name=\"model\"; filename=\"é.coffer\"\r\n\r\n".utf8)
        body += try Self.sealed(flowers, "accented") + Data("\r\n--b--\r\n".utf8)
        let type = "multipart/form-data; boundary=b"
        // The one multipart route reads it with its own reader: a non-ASCII header is just a header.
        #expect(try await browser.postRaw(Self.collection + "/models/FlowerClassifier", body: body, contentType: type).status == 303)
        // Every other route refuses multipart bodies.
        #expect(try await Browser(base: server.base).postRaw("/dashboard/sign-in", body: body, contentType: type).status == 403)
        #expect(try await browser.postRaw(Self.collection + "/deployments", body: body, contentType: type).status == 403)
        let api = try await flowers.admin.call("POST", Flowers.base + "/deployments", body: body, headers: ["Content-Type": type])
        #expect(api.status == 415)
        #expect(try await browser.get("/dashboard").status == 200)
    }
}

extension DashboardDeploymentTests {
    @Test("a model of several megabytes arrives in many pieces both ways in and is stored byte for byte")
    func largeUpload() async throws {
        let server = try await TestServer.start()
        defer { Task { try? await server.stop() } }
        let flowers = try await Flowers.make(server)
        let browser = try await DashboardTests.ownerBrowser(server)
        for way in ["script", "form"] {
            let plaintext = [UInt8](repeating: way == "script" ? 1 : 2, count: 3 << 20)  // sealed, it is random-looking anyway
            let sealed = Data(try SealedModel.seal(plaintext, name: way, using: .modelKey(flowers.key)))
            let reply = way == "script"
                ? try await Self.scriptUpload(browser, model: "FlowerStylizer", sealed)
                : try await browser.postMultipart(Self.collection + "/models/FlowerStylizer", file: sealed)
            #expect(reply.status == (way == "script" ? 201 : 303), "\(way): \(reply.text.prefix(300))")
            let stored = try Data(contentsOf: URL(fileURLWithPath: server.configuration.resolvedBlobDirectory + "/\(sealed.sha256Hex.prefix(2))/\(sealed.sha256Hex)"))
            #expect(stored == sealed, "\(way)")
        }
    }
}
