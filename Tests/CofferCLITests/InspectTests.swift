import CofferFormat
import Foundation
import Testing

@Suite("coffer inspect")
struct InspectTests {
    @Test("a sealed file's header facts show without a key")
    func sealed() async throws {
        let cli = CLI()
        defer { cli.cleanUp() }
        cli.write("model.gguf", Data("GGUF".utf8) + CLI.randomData(3000))
        try await cli.run("key", "generate", "--name", "k")
        try await cli.run("encrypt", "model.gguf", "--key", "k.modelkey")
        let keyID = (try JSONSerialization.jsonObject(with: cli.read("k.modelkey")!) as! [String: String])["id"]!
        let result = try await cli.run("inspect", "model.gguf.coffer", "--json")
        #expect(result.status == 0)
        let facts = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as! [String: Any]
        #expect(facts["formatVersion"] as? Int == 2)
        #expect(facts["keyID"] as? String == keyID)
        #expect(facts["payloadKind"] as? String == "file")
        #expect(facts["originalName"] as? String == "model.gguf")
        #expect(facts["plaintextSize"] as? Int == 3004)
        #expect(facts["chunking"] as? String == "content-defined")
        #expect(facts["chunkSize"] == nil && facts["chunkCount"] as? Int == 1)
        let statistics = try #require(facts["chunkStatistics"] as? [String: Int])
        #expect(statistics == ["smallest": 3004, "average": 3004, "largest": 3004, "repeated": 0])
        #expect((facts["suite"] as? String)?.contains("AES-256-GCM") == true)
        let text = try await cli.run("inspect", "model.gguf.coffer")
        #expect(text.stdout.contains(keyID) && text.stdout.contains("format version 2"))
        #expect(text.stdout.contains("chunks:      1 content-defined, 3004–3004 bytes (average 3004)"), "\(text.stdout)")

        // Format 1 on request: fixed 1 MiB chunks.
        try await cli.run("encrypt", "model.gguf", "--key", "k.modelkey", "--format-version", "1", "--output", "v1.coffer")
        let v1 = try JSONSerialization.jsonObject(with: Data(try await cli.run("inspect", "v1.coffer", "--json").stdout.utf8)) as! [String: Any]
        #expect(v1["formatVersion"] as? Int == 1 && v1["chunking"] as? String == "fixed" && v1["chunkSize"] as? Int == 1 << 20)
        #expect(try await cli.run("inspect", "v1.coffer").stdout.contains("chunks:      1 of 1048576 bytes"))
        // Options that do not fit together are refused in one line.
        let refused = try await cli.run("encrypt", "model.gguf", "--key", "k.modelkey", "--chunk-size-exponent", "16", "--output", "x.coffer")
        #expect(refused.status == 64 && refused.stderr.contains("--chunk-size-exponent applies to --format-version 1 only"), "\(refused.stderr)")
        #expect(try await cli.run("encrypt", "model.gguf", "--key", "k.modelkey", "--format-version", "3", "--output", "y.coffer").status == 64)
    }

    @Test("a version 2 file whose header claims more than SealedModel.maximumHeaderLength is refused in one line, before its table is read")
    func hugeHeader() async throws {
        let cli = CLI()
        defer { cli.cleanUp() }
        // Without the limit, inspect read the whole table, held it several times over, and printed its facts.
        let preamble = try HugeHeaderContainer.write(cli, "huge.coffer")

        for arguments in [["inspect", "huge.coffer"], ["inspect", "huge.coffer", "--json"]] {
            let result = try await cli.run(arguments)
            #expect(result.status == 65, "\(arguments): \(result.stdout) \(result.stderr)")
            let lines = result.stderr.split(separator: "\n")
            #expect(lines.count == 1 && lines[0].contains("header is \(preamble.headerLength) bytes")
                    && lines[0].contains("\(SealedModel.maximumHeaderLength)"), "\(arguments): \(result.stderr)")
            #expect(result.stdout.isEmpty, "\(arguments): \(result.stdout)")
        }
    }

    @Test("an unsealed model shows its kind, size and file tree")
    func unsealed() async throws {
        let cli = CLI()
        defer { cli.cleanUp() }
        cli.write("model.gguf", Data("GGUF".utf8) + Data(count: 96))
        #expect(try await cli.run("inspect", "model.gguf").stdout.contains("GGUF model, 100 bytes"))
        try FileManager.default.createDirectory(atPath: cli.path("F.mlmodelc/weights"), withIntermediateDirectories: true)
        cli.write("F.mlmodelc/weights/weight.bin", Data(count: 10))
        cli.write("F.mlmodelc/model.mil", Data(count: 5))
        let result = try await cli.run("inspect", "F.mlmodelc", "--json")
        let facts = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as! [String: Any]
        #expect(facts["kind"] as? String == "Core ML compiled model (.mlmodelc)")
        #expect(facts["size"] as? Int == 15)
        let paths = (facts["files"] as? [[String: Any]])?.compactMap { $0["path"] as? String }
        #expect(paths == ["model.mil", "weights/", "weights/weight.bin"])
    }
}

/// `coffer inspect` on real models (ModelInspectionTests' fixtures), plain and sealed.
@Suite("coffer inspect: what is inside a model")
struct InspectModelTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("ModelInspectionTests/Fixtures")

    func copyFixture(_ name: String, into cli: CLI) throws {
        try FileManager.default.copyItem(atPath: Self.fixtures.appendingPathComponent(name).path, toPath: cli.path(name))
    }

    func json(_ result: CLI.Result) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: result.stdoutBytes) as? [String: Any])
    }

    @Test("plain models show their facts as text and JSON")
    func plain() async throws {
        let cli = CLI()
        defer { cli.cleanUp() }
        for name in ["Classifier.mlmodel", "Program.mlpackage", "tiny.onnx", "tiny.safetensors", "tiny.gguf"] {
            try copyFixture(name, into: cli)
        }
        let classifier = try await cli.run("inspect", "Classifier.mlmodel")
        #expect(classifier.status == 0)
        #expect(classifier.stdout.contains("type:            neuralNetworkClassifier"))
        #expect(classifier.stdout.contains("class labels:    3: cat, dog, fish"))
        #expect(classifier.stdout.contains("availability:    iOS 11.0+"))
        let package = try json(try await cli.run("inspect", "Program.mlpackage", "--json"))
        #expect(package["kind"] as? String == "Core ML package (.mlpackage)")
        let coreML = (package["model"] as? [String: Any])?["coreML"] as? [String: Any]
        #expect(coreML?["modelType"] as? String == "mlProgram")
        #expect((coreML?["minimumDeploymentTargets"] as? [String: String])?["iOS"] == "16.0")
        #expect(coreML?["parameterCount"] as? Int == 24)
        let onnx = try json(try await cli.run("inspect", "tiny.onnx", "--json"))
        #expect(((onnx["model"] as? [String: Any])?["onnx"] as? [String: Any])?["operatorCounts"] as? [String: Int]
                == ["MatMul": 1, "Add": 1, "Relu": 1])
        #expect(try await cli.run("inspect", "tiny.safetensors").stdout.contains("tensors:         2: F16 1, F32 1"))
        #expect(try await cli.run("inspect", "tiny.gguf").stdout.contains("architecture:    llama"))
    }

    @Test("a sealed file or folder opened with --key or a passphrase shows the same facts as the plain model")
    func sealed() async throws {
        let cli = CLI()
        defer { cli.cleanUp() }
        try copyFixture("Classifier.mlmodel", into: cli)
        try copyFixture("Program.mlpackage", into: cli)
        try await cli.run("key", "generate", "--name", "k")
        try await cli.run("encrypt", "Classifier.mlmodel", "--key", "k.modelkey", "--quiet")
        try await cli.run("encrypt", "Program.mlpackage", "--key", "k.modelkey", "--quiet")
        for name in ["Classifier.mlmodel", "Program.mlpackage"] {
            let plain = try json(try await cli.run("inspect", name, "--json"))
            let sealed = try await cli.run("inspect", name + ".coffer", "--key", "k.modelkey", "--json")
            #expect(sealed.status == 0, "\(sealed.stderr)")
            let facts = try json(sealed)
            #expect(facts["kind"] as? String == "coffer-container")
            let sealedModel = try #require(facts["model"] as? [String: Any])
            let plainModel = try #require(plain["model"] as? [String: Any])
            #expect(NSDictionary(dictionary: sealedModel).isEqual(to: plainModel), "\(name)")
            // Without a key: the header only, as before.
            let headerOnly = try json(try await cli.run("inspect", name + ".coffer", "--json"))
            #expect(headerOnly["model"] == nil && headerOnly["keyID"] != nil)
        }
        let text = try await cli.run("inspect", "Classifier.mlmodel.coffer", "--key", "k.modelkey")
        #expect(text.stdout.contains("Inside (decrypted in memory with the key):"))
        #expect(text.stdout.contains("class labels:    3: cat, dog, fish"))
        // The temporary copy of a sealed folder is gone afterwards.
        let before = Set((try? FileManager.default.contentsOfDirectory(atPath: NSTemporaryDirectory())) ?? [])
        try await cli.run("inspect", "Program.mlpackage.coffer", "--key", "k.modelkey")
        let after = Set((try? FileManager.default.contentsOfDirectory(atPath: NSTemporaryDirectory())) ?? [])
        #expect(after.subtracting(before).filter { $0.contains("coffer-inspect-") }.isEmpty)

        cli.writeSecret("pass.txt", Data("correct horse\n".utf8))
        try await cli.run("encrypt", "Classifier.mlmodel", "--passphrase-file", "pass.txt", "-o", "p.coffer", "--quiet")
        let byPassphrase = try await cli.run("inspect", "p.coffer", "--passphrase-env", "PASS", environment: ["PASS": "correct horse"])
        #expect(byPassphrase.status == 0)
        #expect(byPassphrase.stdout.contains("neuralNetworkClassifier"))
    }

    @Test("a wrong key, a key for a plain file and a damaged model fail with one line and a documented code")
    func failures() async throws {
        let cli = CLI()
        defer { cli.cleanUp() }
        try copyFixture("tiny.onnx", into: cli)
        try await cli.run("key", "generate", "--name", "k")
        try await cli.run("key", "generate", "--name", "other")
        try await cli.run("encrypt", "tiny.onnx", "--key", "k.modelkey", "--quiet")
        let wrong = try await cli.run("inspect", "tiny.onnx.coffer", "--key", "other.modelkey")
        #expect(wrong.status != 0 && wrong.stdout.isEmpty)
        #expect(wrong.stderr.split(separator: "\n").count == 1)
        let keyForPlain = try await cli.run("inspect", "tiny.onnx", "--key", "k.modelkey")
        #expect(keyForPlain.status == 64)
        var damaged = try #require(cli.read("tiny.onnx"))
        damaged = damaged.prefix(damaged.count - 40)
        cli.write("cut.onnx", damaged)
        let cut = try await cli.run("inspect", "cut.onnx")
        #expect(cut.status == 65)
        #expect(cut.stdout.contains("ONNX model, 251 bytes") && cut.stdout.contains("cannot read the model: damaged ONNX model"))
        #expect(cut.stderr.split(separator: "\n").count == 1)
        let cutJSON = try json(try await cli.run("inspect", "cut.onnx", "--json"))
        #expect((cutJSON["error"] as? String)?.hasPrefix("damaged ONNX model") == true)
    }
}

/// `coffer blob upload --key`: the facts reach the server and come back with the deployment.
@Suite("coffer blob upload --key records model facts")
struct UploadFactsTests {
    @Test("facts sent with the upload appear in deployment show, as text and JSON")
    func uploadWithFacts() async throws {
        guard let session = await AdminSession() else { return }
        defer { session.finish() }
        try await session.login()
        try await session.ok("team", "create", "Flowers")
        try await session.ok("key", "create", "--team", "Flowers", "--name", "flowers")
        try FileManager.default.copyItem(atPath: InspectModelTests.fixtures.appendingPathComponent("Classifier.mlmodel").path,
                                         toPath: session.cli.path("Classifier.mlmodel"))
        try await session.ok("encrypt", "Classifier.mlmodel", "--key", "flowers.modelkey", "--quiet")
        // A wrong key stops the upload before anything is sent.
        try await session.ok("key", "generate", "--name", "other")
        let refused = try await session.coffer("blob", "upload", "--team", "Flowers", "Classifier.mlmodel.coffer", "--key", "other.modelkey")
        #expect(refused.status != 0)
        let uploaded = AdminSession.object(try await session.ok("blob", "upload", "--team", "Flowers", "Classifier.mlmodel.coffer",
                                                          "--key", "flowers.modelkey", "--json"))
        #expect(uploaded["factsRecorded"] as? Bool == true)
        #expect(uploaded["created"] as? Bool == true)
        try await session.ok("collection", "create", "FlowerModels", "--team", "Flowers", "--models", "FlowerClassifier")
        try await session.ok("deployment", "create", "--collection", "FlowerModels", "--name", "spring",
                       "--model", "FlowerClassifier=Classifier.mlmodel.coffer")
        let shown = try await session.ok("deployment", "show", "spring", "--collection", "FlowerModels")
        #expect(shown.contains("FlowerClassifier: neuralNetworkClassifier, iOS 11.0+, 1 input, 2 outputs, 3 class labels, 2 layers, 15 parameters"),
                "\(shown)")
        let json = AdminSession.object(try await session.ok("deployment", "show", "spring", "--collection", "FlowerModels", "--json"))
        let version = (json["models"] as? [String: Any])?["FlowerClassifier"] as? [String: Any]
        let coreML = (version?["facts"] as? [String: Any])?["coreML"] as? [String: Any]
        #expect(coreML?["classLabels"] as? [String] == ["cat", "dog", "fish"])

        // deployment create --key records the facts of the files it uploads too.
        try FileManager.default.copyItem(atPath: InspectModelTests.fixtures.appendingPathComponent("Program.mlpackage").path,
                                         toPath: session.cli.path("Program.mlpackage"))
        try await session.ok("encrypt", "Program.mlpackage", "--key", "flowers.modelkey", "--quiet")
        try await session.ok("deployment", "create", "--collection", "FlowerModels", "--name", "summer",
                       "--model", "FlowerClassifier=Program.mlpackage.coffer", "--key", "flowers.modelkey")
        let summer = try await session.ok("deployment", "show", "summer", "--collection", "FlowerModels")
        #expect(summer.contains("FlowerClassifier: mlProgram, iOS 16.0+, 1 input, 1 output, 5 operations, 24 parameters"), "\(summer)")
    }
}
