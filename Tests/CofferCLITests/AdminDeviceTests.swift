import Foundation
import Testing

@Suite("coffer device fetch-key against a real server")
struct AdminDeviceTests {
    @Test("a device of the key's team gets a key that opens the model; another team's device is refused and audited")
    func fetchKey() async throws {
        guard let session = await AdminSession() else { return }
        defer { session.finish() }
        try await session.login()
        try await session.ok("team", "create", "Flowers")
        try await session.ok("team", "create", "Weeds")
        let app = AdminSession.json(try await session.ok("app", "create", "--team", "Flowers", "--name", "A", "--platform", "ios", "--json")) as? [String: Any]
        let other = AdminSession.json(try await session.ok("app", "create", "--team", "Weeds", "--name", "B", "--platform", "linux", "--json")) as? [String: Any]
        let created = AdminSession.json(try await session.ok("key", "create", "--team", "Flowers", "--name", "clf", "--json")) as? [String: Any]
        let keyID = try #require(created?["id"] as? String)
        session.cli.writeSecret("app.credential", Data((((app?["credential"] as? String) ?? "") + "\n").utf8))
        session.cli.writeSecret("other.credential", Data((((other?["credential"] as? String) ?? "") + "\n").utf8))
        session.cli.write("model.bin", CLI.randomData(100_000))
        try await session.ok("encrypt", "model.bin", "--key", "clf.modelkey")
        // The key is released: a deployment of a collection the app is bound to uses it.
        try await session.ok("collection", "create", "Models", "--team", "Flowers", "--models", "clf")
        try await session.ok("app", "update", "--team", "Flowers", app?["id"] as? String ?? "", "--collections", "Models")
        try await session.ok("deployment", "create", "--team", "Flowers", "--collection", "Models", "--name", "one", "--model", "clf=model.bin.coffer", "--activate")

        let fetched = try await session.coffer("device", "fetch-key", keyID, "--server", session.server.url, "--app-id", app?["id"] as? String ?? "",
                                         "--credential-file", "app.credential", "--device-id", "phone-1", "-o", "device.modelkey")
        #expect(fetched.status == 0, "\(fetched.stderr)")
        let deviceKeyMode = try FileManager.default.attributesOfItem(atPath: session.cli.path("coffer-device.key"))[.posixPermissions] as? Int
        #expect(deviceKeyMode == 0o600)
        let opened = try await session.coffer("decrypt", "model.bin.coffer", "--key", "device.modelkey", "--stdout")
        #expect(opened.stdoutBytes == session.cli.read("model.bin"))
        #expect(!fetched.stdout.contains((app?["credential"] as? String) ?? "never"))

        let refused = try await session.coffer("device", "fetch-key", keyID, "--server", session.server.url, "--app-id", other?["id"] as? String ?? "",
                                         "--credential-file", "other.credential", "--device-id", "intruder", "-o", "stolen.modelkey")
        #expect(refused.status == 77)
        #expect(refused.stderr.contains("other_team"))
        #expect(session.cli.read("stolen.modelkey") == nil)
        let audit = try await session.ok("audit", "--team", "Flowers", "--json")
        #expect(audit.contains("other_team") && audit.contains("intruder"))
    }
}
