import Foundation
import Testing

/// `coffer app create|update --attestation …`, `app list`, and `coffer-server attestation
/// update-revocations`, through the built binaries against a real server.
@Suite("Attestation commands")
struct AttestationCommandTests {
    @Test("app create and update set the attestation policy; app list shows it; bad option sets are refused before anything is sent")
    func policies() async throws {
        guard let session = await AdminSession() else { return }
        defer { session.finish() }
        try await session.login()
        try await session.ok("team", "create", "Cam")
        let apple = AdminSession.object(try await session.ok(
            "app", "create", "--team", "Cam", "--name", "Lens", "--platform", "ios", "--bundle-id", "com.example.lens",
            "--attestation", "apple-app-attest", "--apple-team-id", "ABCDE12345", "--apple-environment", "development", "--json"))
        let policy = apple["attestation"] as? [String: Any] ?? [:]
        #expect(policy["policy"] as? String == "apple-app-attest")
        #expect(policy["bundleID"] as? String == "com.example.lens")
        #expect(policy["appleEnvironment"] as? String == "development")
        let appID = try #require(apple["id"] as? String)

        let human = try await session.ok("app", "create", "--team", "Cam", "--name", "Droid", "--platform", "android",
                                   "--attestation", "android-key-attestation", "--android-package", "com.example.droid",
                                   "--android-signing-digest", String(repeating: "AB:", count: 31) + "CD", "--android-security-level", "strongbox")
        #expect(human.contains("Attestation: android com.example.droid strongbox+ (1 digests)."))
        let table = try await session.ok("app", "list", "--team", "Cam")
        #expect(table.contains("ATTESTATION"))
        #expect(table.contains("apple ABCDE12345.com.example.lens development"))
        #expect(table.contains("android com.example.droid strongbox+ (1 digests)"))
        #expect(!table.contains("unlocked allowed"))
        let board = try await session.ok("app", "create", "--team", "Cam", "--name", "Board", "--platform", "android",
                                         "--attestation", "android-key-attestation", "--android-package", "com.example.board",
                                         "--android-signing-digest", String(repeating: "CD", count: 32), "--android-allow-unlocked-devices")
        #expect(board.contains("Attestation: android com.example.board tee+ (1 digests) unlocked allowed."), "\(board)")

        let updated = try await session.ok("app", "update", "--team", "Cam", appID, "--attestation", "none")
        #expect(updated.hasSuffix("Attestation: none.\n"), "\(updated)")
        let listed = AdminSession.array(try await session.ok("app", "list", "--team", "Cam", "--json"))
        #expect((listed.first { $0["id"] as? String == appID }?["attestation"] as? [String: Any])?["policy"] as? String == "none")

        // Refused by the CLI itself (usage, 64), naming what is wrong.
        for (arguments, message) in [
            (["--attestation", "apple-app-attest"], "needs --apple-team-id"),
            (["--attestation", "android-key-attestation", "--android-package", "x"], "needs --android-package and --android-signing-digest"),
            (["--attestation", "none", "--apple-team-id", "ABCDE12345"], "takes no --apple-* or --android-* options"),
            (["--attestation", "none", "--android-allow-unlocked-devices"], "takes no --apple-* or --android-* options"),
            (["--collections", "", "--apple-team-id", "ABCDE12345"], "need --attestation"),
            (["--attestation", "apple-app-attest", "--apple-team-id", "ABCDE12345", "--android-package", "x"], "are for --attestation android-key-attestation"),
            (["--attestation", "magic"], "must be none, apple-app-attest or android-key-attestation"),
        ] {
            let result = try await session.coffer(["app", "update", "--team", "Cam", appID] + arguments)
            #expect(result.status == 64, "\(arguments): \(result.stderr)")
            #expect(result.stderr.hasPrefix("coffer: ") && result.stderr.contains(message), "\(arguments): \(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1, "one line: \(result.stderr)")
        }
        // Refused by the server (400 → 65), with its reason.
        let neither = try await session.coffer("app", "update", "--team", "Cam", appID)
        #expect(neither.status == 64 && neither.stderr == "coffer: give --collections, --attestation or both\n", "\(neither.stderr)")
        let bad = try await session.coffer("app", "update", "--team", "Cam", appID, "--attestation", "apple-app-attest", "--apple-team-id", "short")
        #expect(bad.status == 65, "\(bad.stderr)")
        #expect(bad.stderr.contains("appleTeamID must be the ten-character Apple Developer Team ID"))
        #expect(bad.stderr.split(separator: "\n").count == 1)
    }

    @Test("coffer-server attestation update-revocations stores a valid list and refuses a bad one with one line, storing nothing")
    func revocations() async throws {
        let cli = CLI()
        defer { cli.cleanUp() }
        var environment = ProcessInfo.processInfo.environment.filter { $0.key.hasPrefix("COFFER_") }.mapValues { _ in "" }
        environment["COFFER_DATA_DIR"] = cli.path("data")
        cli.write("good.json", Data(#"{"entries": {"2c8cdddfd5e03bfc": {"status": "REVOKED", "reason": "KEY_COMPROMISE"}, "c8966fcb2fbb0d7a": {"status": "SUSPENDED"}}}"#.utf8))
        cli.write("bad.json", Data(#"{"entries": ["#.utf8))
        let good = try await cli.run(["attestation", "update-revocations", cli.path("good.json")], environment: environment,
                               binary: AdminServer.binary, terminateAfter: 120)
        #expect(good.status == 0, "\(good.stderr)")
        #expect(good.stdout.contains("2 revoked or suspended certificates"), "\(good.stdout)")
        let bad = try await cli.run(["attestation", "update-revocations", cli.path("bad.json")], environment: environment,
                              binary: AdminServer.binary, terminateAfter: 120)
        #expect(bad.status == 1)
        #expect(bad.stderr.hasPrefix("coffer-server: "))
        #expect(bad.stderr.split(separator: "\n").count == 1, "\(bad.stderr)")
        let missing = try await cli.run(["attestation", "update-revocations", cli.path("absent.json")], environment: environment,
                                  binary: AdminServer.binary, terminateAfter: 60)
        #expect(missing.status == 66)
        // The good list is still the one stored: storing it again reports the same count.
        let again = try await cli.run(["attestation", "update-revocations", cli.path("good.json")], environment: environment,
                                binary: AdminServer.binary, terminateAfter: 120)
        #expect(again.stdout.contains("2 revoked or suspended certificates"))
    }

    @Test("coffer open of a model of an attesting app is refused with one line saying the CLI cannot attest; sync still works")
    func openNeedsAttestation() async throws {
        guard let fleet = try await SDKFleet() else { return }
        defer { fleet.finish() }
        try await fleet.deploy("spring", classifier: "classifier")
        let session = fleet.session
        try await session.ok("app", "update", "--team", "Flowers", fleet.flowers.appID, "--attestation", "apple-app-attest", "--apple-team-id", "ABCDE12345",
                       "--apple-bundle-id", "com.example.flowers")
        let synced = try await fleet.sync("edge")
        #expect(synced.status == 0, "\(synced.stderr)")
        let opened = try await session.cli.run("open", "--cache", "edge", "--collection", "FlowerModels", "FlowerClassifier", "--stdout")
        #expect(opened.status == 77, "\(opened.stderr)")
        #expect(opened.stdout.isEmpty)
        #expect(opened.stderr.split(separator: "\n").count == 1)
        #expect(opened.stderr.contains("attestation_required") && opened.stderr.contains("the coffer CLI cannot attest"), "\(opened.stderr)")
        #expect(!opened.stderr.contains(fleet.flowers.credential))
    }
}
