import Foundation
import Testing

@Suite("coffer inspect")
struct InspectTests {
    @Test("a sealed file's header facts show without a key")
    func sealed() throws {
        let cli = CLI()
        defer { cli.cleanUp() }
        cli.write("model.gguf", Data("GGUF".utf8) + CLI.randomData(3000))
        try cli.run("key", "generate", "--name", "k")
        try cli.run("encrypt", "model.gguf", "--key", "k.modelkey")
        let keyID = (try JSONSerialization.jsonObject(with: cli.read("k.modelkey")!) as! [String: String])["id"]!
        let result = try cli.run("inspect", "model.gguf.coffer", "--json")
        #expect(result.status == 0)
        let facts = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as! [String: Any]
        #expect(facts["formatVersion"] as? Int == 1)
        #expect(facts["keyID"] as? String == keyID)
        #expect(facts["payloadKind"] as? String == "file")
        #expect(facts["originalName"] as? String == "model.gguf")
        #expect(facts["plaintextSize"] as? Int == 3004)
        #expect(facts["chunkSize"] as? Int == 1 << 20)
        #expect((facts["suite"] as? String)?.contains("AES-256-GCM") == true)
        let text = try cli.run("inspect", "model.gguf.coffer")
        #expect(text.stdout.contains(keyID) && text.stdout.contains("format version 1"))
    }

    @Test("an unsealed model shows its kind, size and file tree")
    func unsealed() throws {
        let cli = CLI()
        defer { cli.cleanUp() }
        cli.write("model.gguf", Data("GGUF".utf8) + Data(count: 96))
        #expect(try cli.run("inspect", "model.gguf").stdout.contains("GGUF model, 100 bytes"))
        try FileManager.default.createDirectory(atPath: cli.path("F.mlmodelc/weights"), withIntermediateDirectories: true)
        cli.write("F.mlmodelc/weights/weight.bin", Data(count: 10))
        cli.write("F.mlmodelc/model.mil", Data(count: 5))
        let result = try cli.run("inspect", "F.mlmodelc", "--json")
        let facts = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as! [String: Any]
        #expect(facts["kind"] as? String == "Core ML compiled model (.mlmodelc)")
        #expect(facts["size"] as? Int == 15)
        let paths = (facts["files"] as? [[String: Any]])?.compactMap { $0["path"] as? String }
        #expect(paths == ["model.mil", "weights/", "weights/weight.bin"])
    }
}
