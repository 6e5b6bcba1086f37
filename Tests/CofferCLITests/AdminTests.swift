import CofferFormat
import Crypto
import Foundation
import Testing

@Suite("Admin commands against a real coffer-server")
struct AdminTests {
    static func mode(_ path: String) -> Int? {
        (try? FileManager.default.attributesOfItem(atPath: path))?[.posixPermissions] as? Int
    }

    @Test("login checks the token, saves it 0600 in a 0700 folder and never prints it; logout removes it")
    func login() async throws {
        guard let session = await AdminSession() else { return }
        defer { session.finish() }
        let token = session.server.token

        let result = try await session.coffer("login", "--server", session.server.url + "/", "--token-file", "admin.token")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "Logged in to \(session.server.url) (member of 0 teams); credentials saved in \(session.credentialsPath).\n")
        #expect(result.stderr.isEmpty)
        #expect(Self.mode(session.credentialsPath) == 0o600)
        #expect(Self.mode(session.configFolder) == 0o700)
        let saved = AdminSession.object(String(decoding: session.cli.read("config/credentials.json") ?? Data(), as: UTF8.self))
        #expect(saved["server"] as? String == session.server.url)
        #expect(saved["token"] as? String == token)
        #expect(try FileManager.default.contentsOfDirectory(atPath: session.configFolder) == ["credentials.json"])

        // --token works too; a wrong token is refused and the saved credentials stay.
        let direct = try await session.coffer("login", "--server", session.server.url, "--token", token)
        #expect(direct.status == 0)
        let wrong = try await session.coffer("login", "--server", session.server.url, "--token", "cft_wrong")
        AdminSession.expectFailure(wrong, 77, "a valid API token is required (HTTP 401 unauthorized)")
        #expect(AdminSession.object(String(decoding: session.cli.read("config/credentials.json")!, as: UTF8.self))["token"] as? String == token)
        for output in [result, direct, wrong] {
            #expect(!output.stdout.contains(token) && !output.stderr.contains(token))
            #expect(!output.stderr.contains("cft_wrong"))
        }

        // The saved login works; COFFER_TOKEN overrides it.
        #expect(try await session.ok("team", "list") == "NAME  ROLE  ID\n")
        // A credentials file others may read, or a folder others may write in (where they could
        // put a server and token of theirs), is refused as ssh refuses its keys; login does not
        // write into such a folder either.
        #expect(chmod(session.credentialsPath, 0o644) == 0)
        AdminSession.expectFailure(try await session.coffer("team", "list"), 77,
                                   "\(session.credentialsPath) may be read or written by others (mode 644); chmod 600 it if it is yours, or run coffer login again")
        #expect(chmod(session.credentialsPath, 0o600) == 0)
        #expect(chmod(session.configFolder, 0o777) == 0)
        let folderRefusal = "the credentials folder \(session.configFolder) may be written by others (mode 777); chmod 700 it, or set COFFER_CONFIG_DIR to a folder of yours"
        AdminSession.expectFailure(try await session.coffer("team", "list"), 77, folderRefusal)
        AdminSession.expectFailure(try await session.coffer("login", "--server", session.server.url, "--token-file", "admin.token"), 77, folderRefusal)
        #expect(chmod(session.configFolder, 0o700) == 0)
        #expect(try await session.ok("team", "list") == "NAME  ROLE  ID\n")
        AdminSession.expectFailure(try await session.coffer("team", "list", token: "cft_other"), 77,
                                   "a valid API token is required (HTTP 401 unauthorized)")
        // The saved token is never sent to another server than the one it was saved for.
        AdminSession.expectFailure(
            try await session.coffer("team", "list", server: "http://127.0.0.1:9"), 77,
            "no API token for http://127.0.0.1:9: run coffer login --server URL --token-file FILE, or set COFFER_SERVER and COFFER_TOKEN")

        // Usage errors.
        #expect(try await session.coffer("login", "--server", session.server.url).status == 64)
        #expect(try await session.coffer("login", "--server", "ftp://x", "--token", "t").status == 64)
        AdminSession.expectFailure(try await session.coffer("login", "--server", session.server.url, "--token-file", "missing"), 66,
                                   "cannot read token file missing")
        // Secret files are read up to their limit and no further, and only regular files or pipes
        // of the user's own: a device (endless, and anyone's) is refused at once (before: read
        // whole, for ever). `-` reads the token from standard input.
        let endless = try await session.cli.run(["login", "--server", session.server.url, "--token-file", "/dev/zero"],
                                                environment: ["COFFER_CONFIG_DIR": session.configFolder], terminateAfter: 30)
        AdminSession.expectFailure(endless, 66, "token file /dev/zero is not a regular file")
        let piped = try await session.cli.run(["-c", "exec \"$0\" login --server \"$1\" --token-file - < admin.token",
                                               CLI.binary.path, session.server.url],
                                              environment: ["COFFER_CONFIG_DIR": session.configFolder], binary: URL(fileURLWithPath: "/bin/sh"))
        #expect(piped.status == 0, "\(piped.stderr)")
        #expect(!piped.stdout.contains(token) && !piped.stderr.contains(token))
        let saved2 = session.cli.path("saved2")
        try FileManager.default.createDirectory(atPath: saved2, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: saved2 + "/credentials.json", withDestinationPath: "/dev/zero")
        let endlessSaved = try await session.cli.run(["team", "list"], environment: ["COFFER_CONFIG_DIR": saved2, "COFFER_SERVER": "", "COFFER_TOKEN": ""],
                                                     terminateAfter: 30)
        AdminSession.expectFailure(endlessSaved, 66, "\(saved2)/credentials.json is not a file; run coffer login again")
        // A FIFO is refused at once from what was opened (before: the open waited for a writer).
        try FileManager.default.removeItem(atPath: saved2 + "/credentials.json")
        #expect(mkfifo(saved2 + "/credentials.json", 0o600) == 0)
        let fifoSaved = try await session.cli.run(["team", "list"], environment: ["COFFER_CONFIG_DIR": saved2, "COFFER_SERVER": "", "COFFER_TOKEN": ""],
                                                  terminateAfter: 30)
        AdminSession.expectFailure(fifoSaved, 66, "\(saved2)/credentials.json is not a file; run coffer login again")

        #expect(try await session.ok("logout") == "Removed \(session.credentialsPath).\n")
        #expect(!FileManager.default.fileExists(atPath: session.credentialsPath))
        #expect(try await session.ok("logout") == "Not logged in (no \(session.credentialsPath)).\n")
        AdminSession.expectFailure(try await session.coffer("team", "list"), 77,
                                   "no server: run coffer login --server URL --token-file FILE, or set COFFER_SERVER and COFFER_TOKEN")

        // Without COFFER_CONFIG_DIR: $XDG_CONFIG_HOME/coffer.
        let xdg = session.cli.path("xdg")
        let viaXDG = try await session.coffer("login", "--server", session.server.url, "--token-file", "admin.token",
                                        environment: ["COFFER_CONFIG_DIR": "", "XDG_CONFIG_HOME": xdg])
        #expect(viaXDG.status == 0, "\(viaXDG.stderr)")
        #expect(Self.mode(xdg + "/coffer/credentials.json") == 0o600)
        #expect(Self.mode(xdg + "/coffer") == 0o700)
    }

    @Test("teams, apps, members, tokens and the audit log, in human and --json output")
    func accounts() async throws {
        guard let session = await AdminSession() else { return }
        defer { session.finish() }
        try await session.login()

        let flowers = AdminSession.object(try await session.ok("team", "create", "Flowers", "--json"))
        #expect(flowers.keys.sorted() == ["id", "name", "role"])
        #expect(flowers["name"] as? String == "Flowers")
        #expect(flowers["role"] as? String == "owner")
        let flowersID = try #require(flowers["id"] as? String)
        let created = try await session.ok("team", "create", "Bee Hive")
        let beesID = String(created.split(separator: "(").last!.dropFirst(3).prefix(36))
        #expect(created == "Created team Bee Hive (ID \(beesID)); you are its owner.\n")
        #expect(try await session.ok("team", "list") == """
            NAME      ROLE   ID
            Bee Hive  owner  \(beesID)
            Flowers   owner  \(flowersID)

            """)
        #expect(await AdminSession.array(try session.ok("team", "list", "--json")).map { $0["name"] as? String } == ["Bee Hive", "Flowers"])
        await AdminSession.expectFailure(try session.coffer("team", "create", "Flowers"), 65, "team Flowers already exists (HTTP 409 conflict)")

        // Apps: the credential is printed once, at creation and rotation.
        let app = AdminSession.object(try await session.ok("app", "create", "--team", "Flowers", "--name", "Petals",
                                                     "--platform", "ios", "--bundle-id", "com.example.petals", "--json"))
        #expect(app.keys.sorted() == ["attestation", "bundleID", "collections", "createdAt", "credential", "id", "name", "platform"])
        #expect((app["attestation"] as? [String: Any])?["policy"] as? String == "none")
        let appID = try #require(app["id"] as? String)
        let credential = try #require(app["credential"] as? String)
        #expect(credential.hasPrefix("cfa_"))
        let human = try await session.ok("app", "create", "--team", "Bee Hive", "--name", "Buzz", "--platform", "android")
        let lines = human.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count == 5)
        #expect(lines[0] == "Created app Buzz (android) in team Bee Hive, bound to no collection (its devices get nothing until coffer app update --collections).")
        #expect(lines[1].hasPrefix("App ID:     ") && lines[1].count == 12 + 36)
        #expect(lines[2].hasPrefix("Credential: cfa_"))
        #expect(lines[3] == "Store the credential now: it is shown only once (coffer app rotate-credential makes a new one).")
        let listed = AdminSession.array(try await session.ok("app", "list", "--team", "Flowers", "--json"))
        #expect(listed.count == 1)
        #expect(listed.first?["id"] as? String == appID)
        #expect(listed.first?["credential"] == nil)
        let createdAt = try #require(listed.first?["createdAt"] as? String)
        #expect(try await session.ok("app", "list", "--team", "Flowers") == """
            ID                                    NAME    PLATFORM  BUNDLE ID           COLLECTIONS  ATTESTATION  CREATED               REVOKED
            \(appID)  Petals  ios       com.example.petals  (none)       none         \(createdAt)  -

            """)
        // Bound to a collection of its team only; the list shows it.
        try await session.ok("collection", "create", "Petalled", "--team", "Flowers", "--models", "M")
        #expect(try await session.ok("app", "update", "--team", "Flowers", appID, "--collections", "Petalled") == "App Petals is bound to Petalled.\n")
        #expect(await AdminSession.array(try session.ok("app", "list", "--team", "Flowers", "--json")).first?["collections"] as? [String] == ["Petalled"])
        await AdminSession.expectFailure(try session.coffer("app", "update", "--team", "Flowers", appID, "--collections", "Nope"), 65,
                                   "the team has no collection Nope; create it first or leave it out (HTTP 400 unknown_collection)")
        try await session.ok("app", "update", "--team", "Flowers", appID, "--collections", "")
        let rotated = AdminSession.object(try await session.ok("app", "rotate-credential", "--team", "Flowers", appID, "--json"))
        #expect(rotated["id"] as? String == appID)
        #expect((rotated["credential"] as? String).map { $0.hasPrefix("cfa_") && $0 != credential } == true)
        #expect(try await session.ok("app", "revoke", "--team", "Flowers", appID) == "Revoked app \(appID).\n")
        #expect(await AdminSession.array(try session.ok("app", "list", "--team", "Flowers", "--json")).first?["revokedAt"] is String)
        await AdminSession.expectFailure(try session.coffer("app", "rotate-credential", "--team", "Flowers", appID), 65,
                                   "app \(appID) is revoked (HTTP 409 conflict)")
        await AdminSession.expectFailure(try session.coffer("app", "create", "--team", "Flowers", "--name", "X", "--platform", "amiga"), 65,
                                   "platform must be one of ios, ipados, macos, tvos, watchos, visionos, android, linux, windows, web, other (HTTP 400 invalid_request)")

        // Members: member add prints an invitation, never a token; the person makes their own account with it.
        let added = try await session.ok("member", "add", "--team", "Flowers", "--name", "someone", "--role", "viewer")
        #expect(added.hasPrefix("Invitation to team Flowers as viewer for someone (ID "))
        #expect(added.contains("\ncfi_"))
        #expect(!added.contains("cft_"))
        let irisToken = try await session.invite("iris", role: "viewer", to: "Flowers")
        #expect(irisToken.hasPrefix("cft_"))
        // Adding a member's name again changes the role; in another team it is only an invitation.
        let again = AdminSession.object(try await session.ok("member", "add", "--team", "Bee Hive", "--name", "iris", "--role", "developer", "--json"))
        #expect(again.keys.sorted() == ["invitation", "name", "role"])
        #expect(try await session.ok("team", "list", token: irisToken).contains("Bee Hive") == false)
        #expect(try await session.ok("member", "list", "--team", "Flowers") == "NAME   ROLE\nadmin  owner\niris   viewer\n")
        #expect(await AdminSession.array(try session.ok("member", "list", "--team", "Flowers", "--json")).map { $0["role"] as? String } == ["owner", "viewer"])
        #expect(try await session.ok("team", "list", token: irisToken).split(separator: "\n").contains { line in
            line.hasPrefix("Flowers ") && line.contains(" viewer ") && line.hasSuffix(flowersID)
        })
        await AdminSession.expectFailure(
            try session.coffer("app", "create", "--team", "Flowers", "--name", "Nope", "--platform", "ios", token: irisToken, server: session.server.url),
            77, "this needs the developer role in team Flowers (HTTP 403 role_required)")
        #expect(try await session.coffer("member", "add", "--team", "Flowers", "--name", "x", "--role", "admin").status == 64)
        #expect(try await session.ok("member", "remove", "--team", "Flowers", "--name", "iris") == "Removed iris from team Flowers.\n")
        #expect(try await session.ok("member", "list", "--team", "Flowers") == "NAME   ROLE\nadmin  owner\n")
        await AdminSession.expectFailure(try session.coffer("member", "remove", "--team", "Flowers", "--name", "admin"), 65,
                                   "the last owner of a team cannot be removed (HTTP 409 conflict)")

        // Tokens: shown once, listed by prefix, revocable; a revoked token is refused (77).
        let token = AdminSession.object(try await session.ok("token", "create", "--name", "ci", "--json"))
        #expect(token.keys.sorted() == ["id", "name", "prefix", "token"])
        let ciToken = try #require(token["token"] as? String)
        let ciID = try #require(token["id"] as? String)
        #expect(try await session.ok("team", "list", token: ciToken).contains("Flowers"))
        let tokens = AdminSession.array(try await session.ok("token", "list", "--json"))
        #expect(tokens.map { $0["name"] as? String } == ["bootstrap", "ci"])
        #expect(tokens.allSatisfy { $0["token"] == nil })
        #expect(tokens.last?["prefix"] as? String == String(ciToken.prefix(10)))
        let table = try await session.ok("token", "list")
        #expect(table.hasPrefix("ID                                    NAME       PREFIX      CREATED               LAST USED             REVOKED\n"))
        #expect(!table.contains(ciToken) && !table.contains(session.server.token))
        #expect(try await session.ok("token", "revoke", ciID) == "Revoked token \(ciID).\n")
        await AdminSession.expectFailure(try session.coffer("team", "list", token: ciToken, server: session.server.url), 77,
                                   "a valid API token is required (HTTP 401 unauthorized)")
        await AdminSession.expectFailure(try session.coffer("token", "revoke", "00000000-0000-0000-0000-000000000000"), 66,
                                   "token not found (HTTP 404 not_found)")

        // The audit log, newest first; --since filters.
        let events = AdminSession.array(try await session.ok("audit", "--team", "Flowers", "--json"))
        #expect(events.map { $0["action"] as? String } == [
            "member.remove", "invitation.accept", "invitation.create", "invitation.create", "app.revoke", "app.rotate-credential",
            "app.update", "app.update", "collection.create", "app.create", "team.create",
        ])
        // Iris accepted her own invitation; the admin did the rest.
        #expect(events.allSatisfy { ($0["actor"] as? String == "admin") != ($0["action"] as? String == "invitation.accept") })
        #expect(events.allSatisfy { $0["outcome"] as? String == "ok" && $0["at"] is String })
        let audit = try await session.ok("audit", "--team", "Flowers")
        #expect(audit.hasPrefix("TIME" + String(repeating: " ", count: 18) + "ACTION" + String(repeating: " ", count: 17) + "ACTOR  TARGET "))
        #expect(audit.split(separator: "\n").count == 12)
        #expect(await AdminSession.json(try session.ok("audit", "--team", "Flowers", "--since", "2999-01-01T00:00:00Z", "--json")) as? [Any] != nil)
        #expect(await AdminSession.array(try session.ok("audit", "--team", "Flowers", "--since", "2999-01-01T00:00:00Z", "--json")).isEmpty)
        let newest = try #require(events.first?["at"] as? String)
        #expect(await AdminSession.array(try session.ok("audit", "--team", "Flowers", "--since", newest, "--json")).count >= 1)
        #expect(try await session.coffer("audit", "--team", "Flowers", "--since", "yesterday").status == 64)
    }

    @Test("key create saves the server's .modelkey (0600) that seals and opens a model; list and revoke")
    func keys() async throws {
        guard let session = await AdminSession() else { return }
        defer { session.finish() }
        try await session.login()
        try await session.ok("team", "create", "Flowers")

        let output = try await session.ok("key", "create", "--team", "Flowers", "--name", "FlowerClassifier")
        let key = try KeyFilesForTests.read(session.cli.path("FlowerClassifier.modelkey"))
        #expect(key.name == "FlowerClassifier")
        #expect(output == "Created key FlowerClassifier in team Flowers (key ID \(key.id)); wrote FlowerClassifier.modelkey. "
                + "Keep it secret: anyone with it can open your models.\n")
        #expect(Self.mode(session.cli.path("FlowerClassifier.modelkey")) == 0o600)
        let material = key.key.withUnsafeBytes { Data($0).base64EncodedString() }
        #expect(!output.contains(material))

        // The file seals and opens a model with the offline commands.
        let model = CLI.randomData(1 << 20 + 5)
        session.cli.write("model.onnx", model)
        try await session.ok("encrypt", "model.onnx", "--key", "FlowerClassifier.modelkey", "--quiet")
        try await session.ok("decrypt", "model.onnx.coffer", "--key", "FlowerClassifier.modelkey", "--output", "back.onnx")
        #expect(session.cli.read("back.onnx") == model)

        // An existing file is kept without --force, and no key is made on the server for it.
        let before = session.cli.read("FlowerClassifier.modelkey")
        let refused = try await session.coffer("key", "create", "--team", "Flowers", "--name", "FlowerClassifier")
        #expect(refused.status == 73, "\(refused.stderr)")
        #expect(refused.stderr.contains("FlowerClassifier.modelkey already exists"))
        #expect(session.cli.read("FlowerClassifier.modelkey") == before)
        #expect(await AdminSession.array(try session.ok("key", "list", "--team", "Flowers", "--json")).count == 1)
        let replaced = AdminSession.object(try await session.ok("key", "create", "--team", "Flowers", "--name", "FlowerClassifier", "--force", "--json"))
        #expect(replaced.keys.sorted() == ["file", "id", "name", "team"])
        #expect(replaced["file"] as? String == "FlowerClassifier.modelkey")
        let second = try KeyFilesForTests.read(session.cli.path("FlowerClassifier.modelkey"))
        #expect(replaced["id"] as? String == second.id)
        #expect(second.id != key.id)
        try await session.ok("key", "create", "--team", "Flowers", "--name", "Other", "-o", "keys-other.modelkey")
        #expect(session.cli.listing().filter { $0.contains("~") || $0.hasPrefix(".") }.isEmpty)

        let keys = AdminSession.array(try await session.ok("key", "list", "--team", "Flowers", "--json"))
        #expect(keys.map { $0["id"] as? String }.prefix(2) == [key.id, second.id])
        #expect(keys.allSatisfy { Set($0.keys).isSubset(of: ["id", "name", "team", "createdAt", "revokedAt"]) && $0["team"] as? String == "Flowers" })
        let createdAt = try #require(keys.first?["createdAt"] as? String)
        let table = try await session.ok("key", "list", "--team", "Flowers")
        let rows = table.split(separator: "\n").map(String.init)
        #expect(rows.first == "ID" + String(repeating: " ", count: key.id.count) + "NAME              CREATED               REVOKED")
        #expect(rows.dropFirst().first == "\(key.id)  FlowerClassifier  \(createdAt)  -")

        #expect(try await session.ok("key", "revoke", key.id) == "Revoked key \(key.id).\n")
        #expect(await AdminSession.array(try session.ok("key", "list", "--team", "Flowers", "--json")).first?["revokedAt"] is String)
        await AdminSession.expectFailure(try session.coffer("key", "revoke", "no-such-key"), 66, "key not found (HTTP 404 not_found)")
    }

    @Test("server errors: unknown team 66, not a member 77, bad request 65, server down 69")
    func errors() async throws {
        guard let session = await AdminSession() else { return }
        defer { session.finish() }
        try await session.login()
        try await session.ok("team", "create", "Flowers")
        let rose = try await session.invite("rose", role: "owner", to: "Flowers")
        try await session.ok("team", "create", "Roses", token: rose)

        await AdminSession.expectFailure(try session.coffer("key", "list", "--team", "Nowhere"), 66, "team not found (HTTP 404 not_found)")
        await AdminSession.expectFailure(try session.coffer("app", "list", "--team", "Roses"), 77,
                                   "you are not a member of team Roses (HTTP 403 not_a_member)")
        await AdminSession.expectFailure(try session.coffer("key", "create", "--team", "Roses", "--name", "k"), 77,
                                   "you are not a member of team Roses (HTTP 403 not_a_member)")
        #expect(!session.cli.listing().contains("k.modelkey"))
        #expect(session.cli.listing().filter { $0.hasPrefix(".") }.isEmpty)
        await AdminSession.expectFailure(try session.coffer("team", "create", "a/b"), 65,
                                   "team name must be 1 to 100 letters, digits, spaces or - _ . @ + (HTTP 400 invalid_request)")

        // A key of another team cannot be revoked, and the answer does not say whose it is.
        let other = AdminSession.object(try await session.ok("key", "create", "--team", "Roses", "--name", "r", "--json", token: rose))
        let otherID = try #require(other["id"] as? String)
        await AdminSession.expectFailure(try session.coffer("key", "revoke", otherID), 66, "key not found (HTTP 404 not_found)")

        // Nothing listening: 69.
        let port = try AdminServer.freePort()
        let down = try await session.coffer("team", "list", token: session.server.token, server: "http://127.0.0.1:\(port)")
        AdminSession.expectFailure(down, 69, "cannot reach http://127.0.0.1:\(port): connection refused")
        #expect(!down.stderr.contains(session.server.token))
        let downloadDown = try await session.coffer("blob", "download", String(repeating: "a", count: 64), "-o", "x",
                                              "--server", "http://127.0.0.1:\(port)")
        AdminSession.expectFailure(downloadDown, 69, "cannot reach http://127.0.0.1:\(port): connection refused")
        #expect(!session.cli.listing().contains("x"))
    }

    @Test("blob upload skips known bytes; download is bit-identical and a range is the slice")
    func blobs() async throws {
        guard let session = await AdminSession() else { return }
        defer { session.finish() }
        try await session.login()
        try await session.ok("team", "create", "Flowers")
        try await session.ok("key", "generate", "--name", "k")
        let model = CLI.randomData(3 << 20 + 1234)
        session.cli.write("model.bin", model)
        try await session.ok("encrypt", "model.bin", "--key", "k.modelkey", "--quiet")
        let sealed = try #require(session.cli.read("model.bin.coffer"))
        let address = SHA256.hash(data: sealed).map { String(format: "%02x", $0) }.joined()
        let url = session.server.url + "/v1/blobs/" + address

        let uploaded = AdminSession.object(try await session.ok("blob", "upload", "--team", "Flowers", "model.bin.coffer", "--json"))
        #expect(uploaded["sha256"] as? String == address)
        #expect(uploaded["size"] as? Int == sealed.count)
        #expect(uploaded["created"] as? Bool == true)
        #expect(uploaded["url"] as? String == url)
        #expect(try await session.ok("blob", "upload", "--team", "Flowers", "model.bin.coffer")
                == "The server already has model.bin.coffer (\(sealed.count) bytes): \(address)\n\(url)\n")

        // Whole, verified, with the saved server or --server.
        #expect(try await session.ok("blob", "download", address, "--output", "copy.coffer")
                == "Wrote \(address) to copy.coffer (\(sealed.count) bytes, SHA-256 verified).\n")
        #expect(session.cli.read("copy.coffer") == sealed)
        let anonymous = try await session.coffer("blob", "download", address.uppercased(), "-o", "copy2.coffer", "--server", session.server.url,
                                           environment: ["COFFER_CONFIG_DIR": session.cli.path("nowhere")])
        #expect(anonymous.status == 0, "\(anonymous.stderr)")
        #expect(session.cli.read("copy2.coffer") == sealed)
        try await session.ok("decrypt", "copy.coffer", "--key", "k.modelkey", "-o", "model.back")
        #expect(session.cli.read("model.back") == model)

        // Ranges.
        let range = AdminSession.object(try await session.ok("blob", "download", address, "-o", "part", "--range", "1000-200999", "--json"))
        #expect(range["size"] as? Int == 200_000)
        #expect(range["verified"] as? Bool == false)
        #expect(range["range"] as? String == "1000-200999")
        #expect(session.cli.read("part") == sealed.subdata(in: 1000..<201_000))
        try await session.ok("blob", "download", address, "-o", "tail", "--range", "\(sealed.count - 10)-")
        #expect(session.cli.read("tail") == sealed.suffix(10))
        try await session.ok("blob", "download", address, "-o", "past-end", "--range", "\(sealed.count - 10)-\(sealed.count + 500)")
        #expect(session.cli.read("past-end") == sealed.suffix(10))
        #expect(try await session.coffer("blob", "download", address, "-o", "bad", "--range", "9-3").status == 64)

        // Outputs are kept without --force; an unknown address is 66 and leaves nothing.
        let kept = try await session.coffer("blob", "download", address, "-o", "part")
        #expect(kept.status == 73)
        #expect(session.cli.read("part") == sealed.subdata(in: 1000..<201_000))
        try await session.ok("blob", "download", address, "-o", "part", "--force")
        #expect(session.cli.read("part") == sealed)
        await AdminSession.expectFailure(try session.coffer("blob", "download", String(repeating: "0", count: 64), "-o", "none"), 66,
                                   "blob not found (HTTP 404)")
        #expect(try await session.coffer("blob", "download", "abc", "-o", "none").status == 64)
        #expect(!session.cli.listing().contains("none"))
        #expect(session.cli.listing().filter { $0.hasPrefix(".") }.isEmpty)

        // Small and empty sealed files hash right too (the addresses must match the server's).
        for size in [0, 1, 1 << 20] {
            session.cli.write("m\(size)", CLI.randomData(size))
            try await session.ok("encrypt", "m\(size)", "--key", "k.modelkey", "--quiet")
            let bytes = try #require(session.cli.read("m\(size).coffer"))
            let expected = SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined()
            let result = AdminSession.object(try await session.ok("blob", "upload", "--team", "Flowers", "m\(size).coffer", "--json"))
            #expect(result["sha256"] as? String == expected)
            #expect(result["created"] as? Bool == true)
        }

        // Not a container: the server's reason, 65.
        session.cli.write("notes.txt", Data("hello".utf8))
        await AdminSession.expectFailure(try session.coffer("blob", "upload", "--team", "Flowers", "notes.txt"), 65,
                                   "the upload is too short to be a Coffer container (HTTP 422 not_a_container)")
        session.cli.write("random.bin", CLI.randomData(2 << 20))
        let random = try await session.coffer("blob", "upload", "--team", "Flowers", "random.bin")
        #expect(random.status == 65, "\(random.stderr)")
        #expect(random.stderr == "coffer: the upload is not a valid Coffer container: not a Coffer container (no Coffer magic at the start) (HTTP 422 not_a_container)\n")
        await AdminSession.expectFailure(try session.coffer("blob", "upload", "--team", "Flowers", "missing.coffer"), 66,
                                   "cannot open missing.coffer: No such file or directory")
        await AdminSession.expectFailure(try session.coffer("blob", "upload", "--team", "Nowhere", "notes.txt"), 66,
                                   "team not found (HTTP 404 not_found)")
    }
}

/// Reads a `.modelkey` file with CofferFormat.
enum KeyFilesForTests {
    static func read(_ path: String) throws -> ModelKey {
        try ModelKey(fileRepresentation: try #require(FileManager.default.contents(atPath: path)))
    }
}
