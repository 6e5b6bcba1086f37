import BlockingTestSupport
import Crypto
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// Collections, deployments and manifests through the built `coffer` against a real `coffer-server`.
///
/// Matching rules use conditions of the form `deviceClass=tablet` only, and condition texts the
/// server returns are not compared exactly (the targeting parser may normalise them).
@Suite("coffer collection, deployment and manifest against a real server")
struct DeploymentTests {
    /// A logged-in session with team Flowers, an app (its ID, credential in `app.credential`), a key
    /// of the team and three models sealed with it: classifier.coffer, classifier-large.coffer and
    /// stylizer.coffer, whose addresses are in `sha`.
    struct Flowers {
        let session: AdminSession
        let appID: String
        let credential: String
        let sha: [String: String]

        init?(environment: [String: String] = [:]) async throws {
            guard let session = await AdminSession(environment: environment) else { return nil }
            self.session = session
            try await session.login()
            try await session.ok("team", "create", "Flowers")
            let app = AdminSession.object(try await session.ok("app", "create", "--team", "Flowers", "--name", "FlowerApp", "--platform", "ios", "--json"))
            appID = try #require(app["id"] as? String)
            credential = try #require(app["credential"] as? String)
            session.cli.writeSecret("app.credential", Data((credential + "\n").utf8))
            try await session.ok("key", "create", "--team", "Flowers", "--name", "flowers")
            var sha: [String: String] = [:]
            for (name, size) in [("classifier", 150_000), ("classifier-large", 300_000), ("stylizer", 90_000)] {
                session.cli.write(name + ".bin", CLI.randomData(size))
                try await session.ok("encrypt", name + ".bin", "--key", "flowers.modelkey", "--output", name + ".coffer", "--quiet")
                let sealed = try #require(session.cli.read(name + ".coffer"))
                sha[name] = SHA256.hash(data: sealed).map { String(format: "%02x", $0) }.joined()
            }
            self.sha = sha
            try await session.ok("collection", "create", "FlowerModels", "--team", "Flowers", "--models", "FlowerClassifier,FlowerStylizer",
                           "--description", "Flower recognition and styles")
            try await session.ok("app", "update", "--team", "Flowers", appID, "--collections", "FlowerModels")
        }

        /// `coffer manifest --json` as device `device` of class `deviceClass`: the verified payload.
        func manifest(_ device: String, deviceClass: String, sourceLocation: SourceLocation = #_sourceLocation) async throws -> [String: Any] {
            let result = try await session.coffer("manifest", "--collection", "FlowerModels", "--app", appID, "--credential-file", "app.credential",
                                            "--device-id", device, "--attr", "deviceClass=\(deviceClass)", "--json", server: session.server.url)
            #expect(result.status == 0, "\(result.stderr)", sourceLocation: sourceLocation)
            #expect(result.stderr.hasPrefix("coffer: note: the manifest was verified with the key the server publishes"),
                    "\(result.stderr)", sourceLocation: sourceLocation)
            return AdminSession.object(result.stdout, sourceLocation: sourceLocation)
        }

        /// The SHA-256 of each model in a manifest.
        static func models(_ manifest: [String: Any]) -> [String: String] {
            (manifest["models"] as? [String: [String: Any]] ?? [:]).compactMapValues { $0["sha256"] as? String }
        }

        func finish() { session.finish() }
    }

    @Test("the WWDC walk-through: deploy to all, add a tablet-only classifier, roll back, archive")
    func walkThrough() async throws {
        guard let flowers = try await Flowers() else { return }
        defer { flowers.finish() }
        let session = flowers.session, sha = flowers.sha

        #expect(try await session.ok("collection", "list") == """
            TEAM     COLLECTION    MODELS                           SEQUENCE  ACTIVE DEPLOYMENT
            Flowers  FlowerModels  FlowerClassifier,FlowerStylizer  0         -

            """)

        // Classifier and stylizer for every device, active at once.
        let created = try await session.ok("deployment", "create", "--collection", "FlowerModels", "--name", "spring",
                                     "--model", "FlowerClassifier=classifier.coffer", "--model", "FlowerStylizer=stylizer.coffer", "--activate")
        let lines = created.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines[0] == "Uploaded classifier.coffer (\(try #require(session.cli.read("classifier.coffer")).count) bytes): \(sha["classifier"]!)")
        #expect(lines[1].hasPrefix("Uploaded stylizer.coffer ("))
        #expect(lines[2].hasPrefix("Created draft deployment spring (ID "))
        #expect(lines[3] == "Activated deployment spring of FlowerModels: devices get it from sequence 1.")
        #expect(lines[5] == "Deployment spring of FlowerModels: active")
        #expect(created.contains("FlowerClassifier  ") && created.contains(String(sha["classifier"]!.prefix(12))))
        #expect(!created.contains("Ready to activate") && !created.contains("Cannot be activated"))

        let phone1 = try await flowers.manifest("phone-1", deviceClass: "phone")
        #expect(phone1["collection"] as? String == "FlowerModels")
        #expect(phone1["sequence"] as? Int == 1)
        #expect(phone1["target"] as? String == "default")
        #expect(Flowers.models(phone1) == ["FlowerClassifier": sha["classifier"]!, "FlowerStylizer": sha["stylizer"]!])
        let spring = AdminSession.object(try await session.ok("deployment", "show", "spring", "--collection", "FlowerModels", "--json"))
        let springID = try #require(spring["id"] as? String)
        #expect((phone1["deploymentID"] as? String)?.lowercased() == springID.lowercased())
        #expect(spring["status"] as? String == "active")
        #expect(spring["problems"] as? [String] == [])

        // A tablet-only classifier, in a clone of spring with one rule; the other files are not sent again.
        let cloned = try await session.ok("deployment", "clone", "spring", "--collection", "FlowerModels", "--name", "spring-tablets",
                                    "--rule", "deviceClass=tablet : FlowerClassifier=classifier-large.coffer", "--activate")
        #expect(cloned.hasPrefix("Uploaded classifier-large.coffer ("))
        #expect(cloned.contains("\nCloned spring into draft deployment spring-tablets (ID "))
        #expect(cloned.contains("\nActivated deployment spring-tablets of FlowerModels: devices get it from sequence 2.\n"))
        #expect(cloned.contains("\nRule 1 when deviceClass"))
        #expect(try await session.ok("deployment", "show", "spring", "--collection", "FlowerModels").hasSuffix("\nReady to activate.\n"))
        let phone2 = try await flowers.manifest("phone-1", deviceClass: "phone")
        let tablet2 = try await flowers.manifest("tablet-1", deviceClass: "tablet")
        #expect(phone2["sequence"] as? Int == 2 && tablet2["sequence"] as? Int == 2)
        #expect(phone2["target"] as? String == "default")
        #expect(tablet2["target"] as? String == "rule 1")
        #expect(Flowers.models(phone2) == ["FlowerClassifier": sha["classifier"]!, "FlowerStylizer": sha["stylizer"]!])
        #expect(Flowers.models(tablet2) == ["FlowerClassifier": sha["classifier-large"]!, "FlowerStylizer": sha["stylizer"]!])
        #expect(phone2["deploymentID"] as? String == tablet2["deploymentID"] as? String)
        #expect(phone2["deploymentID"] as? String != phone1["deploymentID"] as? String)

        // The human manifest, verified with the pinned key: no note.
        let publicKey = try #require(await Self.signingKey(session.server.url))
        // `coffer-server public-key` prints the same key from the data folder (while the server runs).
        let dataFolder = session.server.folder.appendingPathComponent("data").path
        let (printerStatus, output) = try await ProcessSlots.shared.run {
            try ChildProcess.run(AdminServer.binary, ["public-key", "--data-dir", dataFolder], clearing: "COFFER_")
        }
        #expect(printerStatus == 0)
        #expect(String(decoding: output, as: UTF8.self) == publicKey + "\n")
        let human = try await session.coffer("manifest", "--collection", "FlowerModels", "--app", flowers.appID, "--credential-file", "app.credential",
                                       "--device-id", "tablet-1", "--attr", "deviceClass=tablet", "--attr", "osName=iPadOS",
                                       "--public-key", publicKey, server: session.server.url)
        #expect(human.status == 0, "\(human.stderr)")
        #expect(human.stderr.isEmpty)
        let shown = human.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(shown[0] == "Manifest of FlowerModels for device tablet-1")
        #expect(shown[1] == "Deployment: \(tablet2["deploymentID"] as? String ?? "")")
        #expect(shown[2] == "Sequence:   2")
        #expect(shown[3] == "Target:     rule 1")
        #expect(shown[4] == "Issued:     \(tablet2["issuedAt"] as? String ?? "")")
        #expect(shown[6].hasPrefix("Signature:  verified with key ") && shown[6].hasSuffix(" (pinned)"))
        #expect(shown[8].hasPrefix("NAME              VERSION"))
        #expect(shown[9].hasPrefix("FlowerClassifier  ") && shown[9].contains("  \(sha["classifier-large"]!.prefix(12))  300"))
        #expect(shown[10].hasPrefix("FlowerStylizer    ") && shown[10].contains("  \(sha["stylizer"]!.prefix(12))  "))
        #expect(!human.stdout.contains(flowers.credential) && !human.stderr.contains(flowers.credential))

        // Another key than the server's: refused.
        let otherKey = Curve25519.Signing.PrivateKey().publicKey.rawRepresentation.base64EncodedString()
        await AdminSession.expectFailure(
            try session.coffer("manifest", "--collection", "FlowerModels", "--app", flowers.appID, "--credential-file", "app.credential",
                               "--public-key", otherKey, server: session.server.url),
            65, "the manifest's signature does not verify with the pinned server key")

        // Roll back: the previous answer again, with a higher sequence number.
        let rolledBack = try await session.ok("deployment", "rollback", "--collection", "FlowerModels")
        #expect(rolledBack == "Rolled FlowerModels back to deployment spring (ID \(springID.lowercased())); devices get it from sequence 3.\n")
        let tablet3 = try await flowers.manifest("tablet-1", deviceClass: "tablet")
        #expect(tablet3["sequence"] as? Int == 3)
        #expect(tablet3["target"] as? String == "default")
        #expect(tablet3["deploymentID"] as? String == phone1["deploymentID"] as? String)
        #expect(Flowers.models(tablet3) == Flowers.models(phone1))

        let history = AdminSession.array(try await session.ok("deployment", "history", "--collection", "FlowerModels", "--json"))
        #expect(history.map { $0["sequence"] as? Int } == [3, 2, 1])
        #expect(history.map { $0["kind"] as? String } == ["rollback", "activate", "activate"])
        #expect(history.map { $0["deploymentName"] as? String } == ["spring", "spring-tablets", "spring"])
        let historyTable = try await session.ok("deployment", "history", "--collection", "FlowerModels").split(separator: "\n")
        #expect(historyTable.count == 4)
        #expect(historyTable[0].hasPrefix("SEQUENCE  KIND      DEPLOYMENT      ID"))
        #expect(historyTable[1].hasPrefix("3         rollback  spring          \(springID.lowercased())  admin  "))

        // Archive the replaced deployment; the active one cannot be.
        #expect(try await session.ok("deployment", "archive", "spring-tablets", "--collection", "FlowerModels")
                == "Archived deployment spring-tablets of FlowerModels.\n")
        await AdminSession.expectFailure(try session.coffer("deployment", "archive", springID, "--collection", "FlowerModels"), 65,
                                   "deployment spring is active; activate another one first (HTTP 409 conflict)")
        let listed = AdminSession.array(try await session.ok("deployment", "list", "--collection", "FlowerModels", "--json"))
        #expect(listed.map { $0["name"] as? String } == ["spring", "spring-tablets"])
        #expect(listed.map { $0["status"] as? String } == ["active", "archived"])
        let table = try await session.ok("deployment", "list", "--collection", "FlowerModels").split(separator: "\n")
        #expect(table[0].hasPrefix("NAME            STATUS    ID"))
        #expect(table[1].hasPrefix("spring          active    \(springID.lowercased())  ") && table[1].hasSuffix("  yes"))

        // The collection shows its active deployment and sequence.
        let collection = try await session.ok("collection", "show", "FlowerModels")
        #expect(collection.contains("Team:        Flowers\nDescription: Flower recognition and styles\n"))
        #expect(collection.contains("Active:      spring (ID \(springID.lowercased()))\nSequence:    3\n"))
        #expect(try await session.ok("collection", "list").contains("Flowers  FlowerModels  FlowerClassifier,FlowerStylizer  3         \(springID.lowercased())"))
    }

    @Test("files are uploaded once, known ones skipped; a deployment missing a model is refused with the reason")
    func uploadsAndRefusals() async throws {
        guard let flowers = try await Flowers() else { return }
        defer { flowers.finish() }
        let session = flowers.session, sha = flowers.sha

        // One file for two names is sent once; the same file again is not sent at all.
        let first = try await session.ok("deployment", "create", "--collection", "FlowerModels", "--name", "same",
                                   "--model", "FlowerClassifier=classifier.coffer", "--model", "FlowerStylizer=./classifier.coffer")
        #expect(first.split(separator: "\n").filter { $0.hasPrefix("Uploaded ") || $0.hasPrefix("Skipped ") } == [
            "Uploaded classifier.coffer (\(try #require(session.cli.read("classifier.coffer")).count) bytes): \(sha["classifier"]!)",
            "Skipped ./classifier.coffer: the server already has it (\(sha["classifier"]!))",
        ])
        #expect(first.contains("Deployment same of FlowerModels: draft\n"))

        // Only the classifier: saved as a draft, and activation is refused with the reason.
        let refused = try await session.coffer("deployment", "create", "--collection", "FlowerModels", "--name", "lonely",
                                         "--model", "FlowerClassifier=classifier.coffer", "--activate")
        #expect(refused.status == 65)
        #expect(refused.stdout.hasPrefix("Skipped classifier.coffer: the server already has it (\(sha["classifier"]!))\n"
                                         + "Created draft deployment lonely (ID "))
        #expect(refused.stderr == "coffer: the draft lonely was saved but not activated: deployment lonely cannot be activated: "
                + "no default model for FlowerStylizer (HTTP 409 not_ready)\n")
        let shown = try await session.ok("deployment", "show", "lonely", "--collection", "FlowerModels")
        #expect(shown.hasSuffix("\nCannot be activated:\n  - no default model for FlowerStylizer\n"))
        await AdminSession.expectFailure(try session.coffer("deployment", "activate", "lonely", "--collection", "FlowerModels"), 65,
                                   "deployment lonely cannot be activated: no default model for FlowerStylizer (HTTP 409 not_ready)")
        #expect(try await session.ok("deployment", "list", "--collection", "FlowerModels").contains("  no (1 problem)\n"))

        // A clone that adds the missing model can be activated; --json prints only the deployment.
        let fixed = AdminSession.object(try await session.ok("deployment", "clone", "lonely", "--collection", "FlowerModels", "--name", "complete",
                                                       "--model", "FlowerStylizer=stylizer.coffer", "--activate", "--json"))
        #expect(fixed["status"] as? String == "active")
        let models = fixed["models"] as? [String: [String: Any]] ?? [:]
        #expect(models.mapValues { $0["sha256"] as? String } == ["FlowerClassifier": sha["classifier"]!, "FlowerStylizer": sha["stylizer"]!])
        #expect(try await session.ok("deployment", "activate", "same", "--collection", "FlowerModels")
                == "Activated deployment same of FlowerModels: devices get it from sequence 2.\n")

        // --rollout is added to the rules that have no rollout clause (a draft: the stub parser is not asked to match it).
        let rollout = AdminSession.object(try await session.ok(
            "deployment", "create", "--collection", "FlowerModels", "--name", "gradual",
            "--model", "FlowerClassifier=classifier.coffer", "--model", "FlowerStylizer=stylizer.coffer",
            "--rule", "deviceClass=tablet : FlowerClassifier=classifier-large.coffer", "--rollout", "10", "--json"))
        let rules = rollout["rules"] as? [[String: Any]] ?? []
        #expect(rules.count == 1)
        let condition = rules.first?["condition"] as? String ?? ""
        #expect(condition.hasPrefix("deviceClass") && condition.contains("tablet") && condition.contains("rollout") && condition.contains("10"))
        #expect((rules.first?["models"] as? [String: [String: Any]])?["FlowerClassifier"]?["sha256"] as? String == sha["classifier-large"]!)

        // A model name the collection lacks is refused before anything is uploaded.
        session.cli.write("new.coffer", try #require(session.cli.read("stylizer.coffer")) + Data([0]))
        await AdminSession.expectFailure(
            try session.coffer("deployment", "create", "--collection", "FlowerModels", "--name", "typo", "--model", "FlowerClasifier=new.coffer"),
            64, "FlowerModels has no model named FlowerClasifier (it has FlowerClassifier, FlowerStylizer)")
        await AdminSession.expectFailure(
            try session.coffer("deployment", "create", "--collection", "FlowerModels", "--name", "missing", "--model", "FlowerClassifier=nope.coffer"),
            66, "cannot open nope.coffer: No such file or directory")

        // Model names: added, and removed unless the active deployment uses them.
        #expect(try await session.ok("collection", "add-model", "FlowerModels", "FlowerSegmenter")
                == "Added FlowerSegmenter to FlowerModels; its models: FlowerClassifier, FlowerStylizer, FlowerSegmenter.\n")
        await AdminSession.expectFailure(try session.coffer("collection", "remove-model", "FlowerModels", "FlowerStylizer"), 65,
                                   "the active deployment same uses FlowerStylizer; activate one without it first (HTTP 409 conflict)")
        let removed = AdminSession.object(try await session.ok("collection", "remove-model", "FlowerModels", "FlowerSegmenter", "--team", "Flowers", "--json"))
        #expect(removed["models"] as? [String] == ["FlowerClassifier", "FlowerStylizer"])
        #expect(removed["sequence"] as? Int == 2)
    }

    @Test("collections by identifier: ambiguous is a usage error naming the teams, unknown is 66; usage errors are 64")
    func lookupsAndUsage() async throws {
        guard let flowers = try await Flowers() else { return }
        defer { flowers.finish() }
        let session = flowers.session

        // Without --team, the identifier must belong to exactly one of your teams.
        try await session.ok("team", "create", "Garden")
        let garden = AdminSession.object(try await session.ok("collection", "create", "FlowerModels", "--team", "Garden", "--models", "Petals", "--json"))
        #expect(garden["team"] as? String == "Garden")
        #expect(garden["models"] as? [String] == ["Petals"])
        #expect(garden["sequence"] as? Int == 0)
        await AdminSession.expectFailure(try session.coffer("deployment", "list", "--collection", "FlowerModels"), 64,
                                   "several of your teams have a collection FlowerModels (Flowers, Garden): pass --team")
        await AdminSession.expectFailure(try session.coffer("collection", "show", "FlowerModels"), 64,
                                   "several of your teams have a collection FlowerModels (Flowers, Garden): pass --team")
        #expect(try await session.ok("deployment", "list", "--collection", "FlowerModels", "--team", "Garden") == "NAME  STATUS  ID  CREATED  ACTIVATED  READY\n")
        #expect(try await session.ok("collection", "show", "FlowerModels", "--team", "Garden").contains("Models:      Petals\nActive:      none\n"))
        #expect(await AdminSession.array(try session.ok("collection", "list", "--team", "Garden", "--json")).map { $0["team"] as? String } == ["Garden"])
        #expect(try await session.ok("collection", "list").split(separator: "\n").count == 3)

        await AdminSession.expectFailure(try session.coffer("deployment", "history", "--collection", "Nope"), 66,
                                   "none of your teams has a collection Nope (coffer collection list shows them)")
        await AdminSession.expectFailure(try session.coffer("deployment", "history", "--collection", "Nope", "--team", "Flowers"), 66,
                                   "collection not found (HTTP 404 not_found)")
        await AdminSession.expectFailure(try session.coffer("deployment", "show", "autumn", "--collection", "FlowerModels", "--team", "Flowers"), 66,
                                   "FlowerModels has no deployment named autumn (coffer deployment list shows them)")
        await AdminSession.expectFailure(try session.coffer("deployment", "rollback", "--collection", "FlowerModels", "--team", "Flowers"), 65,
                                   "FlowerModels has no active deployment (HTTP 409 conflict)")
        await AdminSession.expectFailure(try session.coffer("collection", "create", "FlowerModels", "--team", "Flowers", "--models", "A"), 65,
                                   "team Flowers already has a collection FlowerModels (HTTP 409 conflict)")

        // Usage errors, before any request.
        let usage: [[String]] = [
            ["collection", "create", "X", "--team", "Flowers", "--models", "A,,B"],
            ["collection", "create", "X", "--team", "Flowers", "--models", "A,A"],
            ["deployment", "create", "--collection", "FlowerModels", "--name", "n"],
            ["deployment", "create", "--collection", "FlowerModels", "--name", "n", "--model", "FlowerClassifier"],
            ["deployment", "create", "--collection", "FlowerModels", "--name", "n", "--model", "A=a", "--model", "A=b"],
            ["deployment", "create", "--collection", "FlowerModels", "--name", "n", "--model", "A=a", "--rule", "deviceClass=tablet"],
            ["deployment", "create", "--collection", "FlowerModels", "--name", "n", "--model", "A=a", "--rule", " : A=a"],
            ["deployment", "create", "--collection", "FlowerModels", "--name", "n", "--model", "A=a", "--rollout", "10"],
            ["deployment", "create", "--collection", "FlowerModels", "--name", "n", "--model", "A=a", "--rule", "deviceClass=tablet : A=a", "--rollout", "101"],
            ["manifest", "--collection", "FlowerModels", "--app", "not-a-uuid", "--credential", "x"],
            ["manifest", "--collection", "FlowerModels", "--app", flowers.appID, "--credential", "x", "--attr", "colour=red"],
            ["manifest", "--collection", "FlowerModels", "--app", flowers.appID, "--credential", "x", "--public-key", "AAAA"],
        ]
        for arguments in usage {
            let result = try await session.coffer(arguments)
            #expect(result.status == 64, "coffer \(arguments.joined(separator: " ")): \(result.stderr)")
        }
        let noCredential = try await session.coffer("manifest", "--collection", "FlowerModels", "--app", flowers.appID, server: session.server.url)
        AdminSession.expectFailure(noCredential, 64,
                                   "give the app's credential with --credential-file FILE (or --credential, or COFFER_APP_CREDENTIAL)")

        // The device side: a wrong credential is 77, nothing active is 66, the environment variable works.
        let wrong = try await session.coffer("manifest", "--collection", "FlowerModels", "--app", flowers.appID, "--credential", "cfa_wrong",
                                       server: session.server.url)
        #expect(wrong.status == 77, "\(wrong.stderr)")
        #expect(!wrong.stderr.contains("cfa_wrong"))
        await AdminSession.expectFailure(
            try session.coffer("manifest", "--collection", "FlowerModels", "--app", flowers.appID, server: session.server.url,
                               environment: ["COFFER_APP_CREDENTIAL": flowers.credential]),
            66, "no active deployment of a collection FlowerModels for this app (HTTP 404 not_found)")
    }

    /// The server's manifest-signing public key, from `GET /v1/signing-key`.
    static func signingKey(_ server: String) async -> String? {
        await offThePool { signingKeyNow(server) }
    }

    private static func signingKeyNow(_ server: String) -> String? {
        let done = DispatchSemaphore(value: 0)
        let key = AdminBox<String?>(nil)
        URLSession.shared.dataTask(with: URL(string: server + "/v1/signing-key")!) { data, _, _ in
            let object = data.flatMap { try? JSONSerialization.jsonObject(with: $0) } as? [String: Any]
            key.set(object?["publicKey"] as? String)
            done.signal()
        }.resume()
        done.wait()
        return key.get()
    }
}
