import Coffer
import CofferFormat
import Crypto
import Foundation
import Testing

/// `coffer sync` and `coffer open`, the built binary, against a real server.
@Suite("coffer sync and coffer open against a real server")
struct SyncCommandTests {
    @Test("sync prints what it fetched, open decrypts it; offline, sync serves the cache and says so")
    func syncAndOpen() async throws {
        guard let fleet = try await SDKFleet() else { return }
        defer { fleet.finish() }
        try await fleet.deploy("spring", classifier: "classifier")
        let cli = fleet.session.cli

        let synced = try await fleet.sync("edge")
        #expect(synced.status == 0, "\(synced.stderr)")
        #expect(synced.stderr.isEmpty)
        let lines = synced.stdout.split(separator: "\n").map(String.init)
        #expect(lines[0].hasPrefix("Collection FlowerModels: deployment ") && lines[0].hasSuffix(", sequence 1 (from the server)"))
        #expect(lines[1].hasPrefix("NAME              VERSION"))
        #expect(lines[2].hasPrefix("FlowerClassifier  ") && lines[2].contains(fleet.flowers.sha["classifier"]!))
        #expect(lines[3].hasPrefix("FlowerStylizer    ") && lines[3].contains(fleet.flowers.sha["stylizer"]!))
        #expect(!synced.stdout.contains(fleet.flowers.credential))

        // A plain http:// server that is not this machine is refused before anything is sent or
        // saved; COFFER_ALLOW_INSECURE_HTTP=1 lets it through (then the host cannot be reached).
        let insecure = try await fleet.sync("insecure", server: "http://models.invalid:8080")
        #expect(insecure.status == 64 && insecure.stderr.contains("https://"), "\(insecure.stderr)")
        #expect(insecure.stderr.split(separator: "\n").count == 1 && !insecure.stderr.contains(fleet.flowers.credential))
        #expect(!FileManager.default.fileExists(atPath: cli.path("insecure/sync.json")))
        #expect(!FileManager.default.fileExists(atPath: cli.path("insecure/keys")))
        let allowed = try await fleet.sync("insecure", server: "http://models.invalid:8080", environment: ["COFFER_ALLOW_INSECURE_HTTP": "1"])
        #expect(allowed.status != 64, "\(allowed.stderr)")
        // The same for an administrator's API token.
        let admin = try await cli.run(["team", "list"], environment: ["COFFER_SERVER": "http://models.invalid:8080", "COFFER_TOKEN": "cft_not_sent"])
        #expect(admin.status == 64 && admin.stderr.contains("https://"), "\(admin.stderr)")

        let json = await AdminSession.object(try fleet.sync("edge", json: true).stdout)
        #expect(json["sequence"] as? Int == 1 && json["source"] as? String == "server")
        let models = try #require(json["models"] as? [[String: Any]])
        #expect(models.map { $0["name"] as? String } == ["FlowerClassifier", "FlowerStylizer"])
        let path = try #require(models[0]["path"] as? String)
        #expect(FileManager.default.contents(atPath: path) == cli.read("classifier.coffer"))

        // Open: once with the key fetched, once offline from the kept key.
        let opened = try await cli.run("open", "--cache", "edge", "--collection", "FlowerModels", "FlowerClassifier", "--output", "classifier.out")
        #expect(opened.status == 0, "\(opened.stderr)")
        #expect(cli.read("classifier.out") == fleet.plain["classifier"])
        let info = try FileManager.default.attributesOfItem(atPath: cli.path("classifier.out"))
        #expect((info[.posixPermissions] as? Int) == 0o600)
        for file in ["sync.json", "keys/app-credential", "keys/device-key"] {
            #expect((try FileManager.default.attributesOfItem(atPath: cli.path("edge/" + file))[.posixPermissions] as? Int) == 0o600, "\(file)")
        }
        #expect(String(decoding: cli.read("edge/sync.json") ?? Data(), as: UTF8.self).contains(fleet.flowers.credential) == false)

        await fleet.session.server.stop()
        let streamed = try await cli.run("open", "--cache", "edge", "--collection", "FlowerModels", "FlowerStylizer", "--stdout")
        #expect(streamed.status == 0, "\(streamed.stderr)")
        #expect(streamed.stdoutBytes == fleet.plain["stylizer"])
        let offline = try await fleet.sync("edge")
        #expect(offline.status == 0)
        #expect(offline.stderr.hasPrefix("coffer: note: the server cannot be reached ("), "\(offline.stderr)")
        #expect(offline.stderr.contains("serving the cached collection (sequence 1)"))
        #expect(offline.stdout.hasPrefix("Collection FlowerModels: deployment ") && offline.stdout.contains("(from the cache)"))

        // Nothing cached and no server: exit 69 with the reason.
        let nothing = try await fleet.sync("empty")
        AdminSession.expectFailure(nothing, 69, "collection FlowerModels is unavailable: the server cannot be reached (connection refused)")
        AdminSession.expectFailure(try await cli.run("open", "--cache", "edge", "--collection", "FlowerModels", "Nope", "--stdout"), 66,
                                   "collection FlowerModels has no model Nope (it has FlowerClassifier, FlowerStylizer)")
        AdminSession.expectFailure(try await cli.run("open", "--cache", "nowhere", "--collection", "FlowerModels", "FlowerStylizer", "--stdout"), 66,
                                   "nowhere holds no synced collections; run coffer sync first")
    }

    /// The points of an update where the SDK lets a debug build kill itself (CrashPoint.all), and
    /// the second piece of a download.
    static let killPoints = ["manifest-verified", "piece-written", "piece-written:3", "blob-verified", "blob-committed",
                             "state-written", "state-committed", "previous-promoted", "old-removed"]

    @Test("killed at every step of an update, the cache still serves one whole deployment, and the next sync finishes the job")
    func killedMidUpdate() async throws {
        guard let fleet = try await SDKFleet() else { return }
        defer { fleet.finish() }
        try await fleet.deploy("spring", classifier: "classifier")
        try await fleet.deploy("summer", classifier: "classifier-large")
        let cli = fleet.session.cli
        let cache = fleet.folder("edge")
        let sha = fleet.flowers.sha
        let plainBySHA = [sha["classifier"]!: fleet.plain["classifier"]!, sha["classifier-large"]!: fleet.plain["classifier-large"]!,
                          sha["stylizer"]!: fleet.plain["stylizer"]!]
        #expect(try await fleet.sync("edge").status == 0)
        var active = "summer"

        for point in Self.killPoints {
            let before = try fleet.cachedModels(cache)
            active = active == "summer" ? "spring" : "summer"
            try await fleet.activate(active)
            // 64 KiB pieces, so the 300 KB classifier downloads in several.
            let killed = try await fleet.sync("edge", environment: ["COFFER_TEST_KILL_AT": point, "COFFER_TEST_PIECE_BYTES": "65536"])
            #expect(killed.status == 9, "\(point): \(killed.status) \(killed.stderr)")

            // Whatever the state file names is there, whole, and from one deployment.
            let now = try fleet.cachedModels(cache)
            #expect(now == before || now["FlowerClassifier"] == sha[active == "summer" ? "classifier-large" : "classifier"], "\(point)")
            for (name, modelSHA) in now {
                let opened = try await cli.run("open", "--cache", "edge", "--collection", "FlowerModels", name, "--stdout")
                #expect(opened.status == 0, "\(point) \(name): \(opened.stderr)")
                #expect(opened.stdoutBytes == plainBySHA[modelSHA], "\(point) \(name)")
            }

            // The next sync finishes: the active deployment, nothing else left behind.
            let finished = try await fleet.sync("edge")
            #expect(finished.status == 0, "\(point): \(finished.stderr)")
            let after = try fleet.cachedModels(cache)
            #expect(after["FlowerClassifier"] == sha[active == "summer" ? "classifier-large" : "classifier"], "\(point)")
            #expect(SDKFleet.names(cache, "blobs") == Set(after.values.map { $0 + ".coffer" }), "\(point)")
            #expect(SDKFleet.names(cache, "staging").isEmpty, "\(point)")
            #expect(!SDKFleet.names(cache, "").contains { $0.hasPrefix(".state.json") }, "\(point)")
        }
    }
}
