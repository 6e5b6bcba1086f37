import Foundation
import Testing
@testable import ModelInspection

/// Hand-made hostile headers and mutated fixtures: every input gives a report or an ``InspectionError``,
/// never a crash, a hang or an allocation sized by the input.
@Suite("hostile input")
struct HostileInputTests {
    static func littleEndian(_ value: UInt64, _ count: Int = 8) -> Data {
        Data((0..<count).map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) })
    }

    static func message(_ inspect: () throws -> ModelReport) -> String? {
        do {
            _ = try inspect()
            return nil
        } catch let error as InspectionError {
            return error.description
        } catch {
            return "unexpected \(type(of: error)): \(error)"
        }
    }

    @Test("safetensors: a header length past the file or over the limit is refused before allocating")
    func safetensorsLength() {
        let huge = Self.littleEndian(1 << 62) + Data("{}".utf8)
        #expect(Self.message { try ModelInspector.inspect(data: huge, name: "x.safetensors") }?.contains("past the end") == true)
        let limits = InspectionLimits(maximumMessageBytes: 1 << 20, maximumPartBytes: 1 << 20, maximumHeaderBytes: 4,
                                      maximumSideFileBytes: 1 << 20, maximumListedTensors: 10, maximumListedLabels: 10,
                                      maximumFolderEntries: 10)
        let big = Self.littleEndian(8) + Data("{       }".utf8)
        #expect(Self.message { try ModelInspector.inspect(data: big, name: "x.safetensors", limits: limits) }?.contains("over the inspection limit") == true)
    }

    @Test("safetensors: offsets outside the data and shapes that do not fill them are refused")
    func safetensorsOffsets() {
        func file(_ header: String, data: Int) -> Data {
            Self.littleEndian(UInt64(header.utf8.count)) + Data(header.utf8) + Data(count: data)
        }
        let outside = file(#"{"t": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}}"#, data: 8)
        #expect(Self.message { try ModelInspector.inspect(data: outside, name: "x.safetensors") }?.contains("outside") == true)
        let mismatch = file(#"{"t": {"dtype": "F32", "shape": [3], "data_offsets": [0, 16]}}"#, data: 16)
        #expect(Self.message { try ModelInspector.inspect(data: mismatch, name: "x.safetensors") }?.contains("does not fill") == true)
        let negative = file(#"{"t": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 4]}}"#, data: 4)
        #expect(Self.message { try ModelInspector.inspect(data: negative, name: "x.safetensors") } != nil)
    }

    @Test("GGUF: counts and lengths that cannot fit in the file are refused before allocating")
    func ggufCounts() {
        let header = Data("GGUF".utf8) + Self.littleEndian(3, 4)
        let manyTensors = header + Self.littleEndian(1 << 60) + Self.littleEndian(0)
        #expect(Self.message { try ModelInspector.inspect(data: manyTensors, name: "x.gguf") }?.contains("tensors cannot fit") == true)
        let manyKeys = header + Self.littleEndian(0) + Self.littleEndian(1 << 60)
        #expect(Self.message { try ModelInspector.inspect(data: manyKeys, name: "x.gguf") }?.contains("cannot fit") == true)
        // One key whose name claims 2^62 bytes.
        let longKey = header + Self.littleEndian(0) + Self.littleEndian(1) + Self.littleEndian(1 << 62) + Data(count: 16)
        #expect(Self.message { try ModelInspector.inspect(data: longKey, name: "x.gguf") }?.contains("past the end") == true)
        // An array of 2^40 uint32 values.
        let bigArray = header + Self.littleEndian(0) + Self.littleEndian(1) + Self.littleEndian(1) + Data("k".utf8)
            + Self.littleEndian(9, 4) + Self.littleEndian(4, 4) + Self.littleEndian(1 << 40) + Data(count: 16)
        #expect(Self.message { try ModelInspector.inspect(data: bigArray, name: "x.gguf") }?.contains("more than the file holds") == true)
        let version = Data("GGUF".utf8) + Self.littleEndian(99, 4) + Data(count: 16)
        #expect(Self.message { try ModelInspector.inspect(data: version, name: "x.gguf") }?.contains("version 99") == true)
    }

    @Test("protobuf: a field longer than its message and garbage are refused with one line")
    func protobuf() {
        // Field 2 (description), length-delimited, claiming 2^40 bytes.
        let long = Data([0x12, 0x80, 0x80, 0x80, 0x80, 0x80, 0x20]) + Data(count: 10)
        for limits in [InspectionLimits.default, Fixtures.tinyLimits] {
            for name in ["x.mlmodel", "x.onnx"] {
                let message = Self.message { try ModelInspector.inspect(data: long, name: name, limits: limits) }
                #expect(message?.hasPrefix("damaged") == true, "\(name): \(message ?? "accepted")")
                #expect(message?.contains("\n") == false)
            }
        }
        let text = Data("this is not a model at all".utf8)
        #expect(Self.message { try ModelInspector.inspect(data: text, name: "x.mlmodel") } != nil)
    }

    @Test("every truncation of every fixture gives a report or a clean error", arguments: Fixtures.files)
    func truncations(name: String) {
        let data = Fixtures.data(name)
        for length in 0..<data.count {
            for limits in [InspectionLimits.default, Fixtures.tinyLimits] {
                let message = Self.message { try ModelInspector.inspect(data: data.prefix(length), name: name, limits: limits) }
                #expect(message?.hasPrefix("unexpected") != true, "\(name) cut at \(length): \(message ?? "")")
            }
        }
    }

    @Test("random byte flips in every fixture give a report or a clean error", arguments: Fixtures.files)
    func mutations(name: String) {
        let original = Fixtures.data(name)
        var generator = SplitMix(seed: UInt64(name.utf8.count) &* 7919)
        for round in 0..<1500 {
            var data = original
            for _ in 0..<(1 + Int(generator.next() % 4)) {
                let index = Int(generator.next() % UInt64(data.count))
                // Bias towards the values that break lengths and counts.
                let values: [UInt8] = [0x00, 0xFF, 0x7F, 0x80, UInt8(truncatingIfNeeded: generator.next())]
                data[index] = values[Int(generator.next() % UInt64(values.count))]
            }
            let limits = round % 2 == 0 ? InspectionLimits.default : Fixtures.tinyLimits
            let message = Self.message { try ModelInspector.inspect(data: data, name: name, limits: limits) }
            #expect(message?.hasPrefix("unexpected") != true, "\(name) round \(round): \(message ?? "")")
        }
    }
}

/// A small seeded generator so that a failing mutation round can be replayed.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

@Suite("hostile folders")
struct HostileFolderTests {
    @Test("a package whose Manifest.json is a link, or whose model is a pipe, is refused without following or waiting")
    func linksAndPipes() throws {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("mi-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: base) }
        let package = base.appendingPathComponent("L.mlpackage")
        try FileManager.default.createDirectory(at: package.appendingPathComponent("Data/com.apple.CoreML"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: package.appendingPathComponent("Manifest.json").path,
                                                   withDestinationPath: Fixtures.path("Program.mlpackage/Manifest.json"))
        #expect(throws: InspectionError.self) { try ModelInspector.inspect(path: package.path) }
        // A valid manifest naming a FIFO as the model: refused at once, not read forever.
        try FileManager.default.removeItem(atPath: package.appendingPathComponent("Manifest.json").path)
        try FileManager.default.copyItem(atPath: Fixtures.path("Program.mlpackage/Manifest.json"),
                                         toPath: package.appendingPathComponent("Manifest.json").path)
        #expect(mkfifo(package.appendingPathComponent("Data/com.apple.CoreML/model.mlmodel").path, 0o600) == 0)
        #expect(throws: InspectionError.self) { try ModelInspector.inspect(path: package.path) }
    }

    @Test("a link to a model file is inspected under the link's name")
    func linkToModel() throws {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("mi-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: base) }
        try FileManager.default.createDirectory(at: base, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: base.appendingPathComponent("m.onnx").path, withDestinationPath: Fixtures.path("tiny.onnx"))
        #expect(try ModelInspector.inspect(path: base.appendingPathComponent("m.onnx").path).onnx?.irVersion == 8)
    }
}

@Suite("hostile protobuf structure")
struct HostileStructureTests {
    /// A length-delimited field `number` holding `body`.
    static func field(_ number: Int, _ body: Data) -> Data {
        Skeleton.encodeVarint(UInt64(number << 3 | 2)) + Skeleton.encodeVarint(UInt64(body.count)) + body
    }

    @Test("pipelines nested ten thousand deep are refused, not a stack overflow")
    func deepNesting() {
        var model = Data([0x08, 0x04])  // specificationVersion 4
        for _ in 0..<10_000 { model = Self.field(202, Self.field(1, model)) }  // Model.pipeline → Pipeline.models
        #expect(throws: InspectionError.self) { try ModelInspector.inspect(data: model, name: "deep.mlmodel") }
        // Over the limits the pipeline is too large to keep: its type survives, with a note, and nothing recurses.
        let skeleton = try? ModelInspector.inspect(data: model, name: "deep.mlmodel", limits: Fixtures.tinyLimits)
        #expect(skeleton?.coreML?.modelType == "pipeline")
        #expect(skeleton?.notes.first?.contains("parts over 4096 bytes were skipped") == true)
    }

    @Test("an ONNX initializer stored in an external file is counted, and the file is not opened")
    func externalData() throws {
        var tensor = Onnx_TensorProto()
        tensor.name = "W"
        tensor.dims = [1000, 1000]
        tensor.dataType = 1
        tensor.dataLocation = .external
        var location = Onnx_StringStringEntryProto()
        location.key = "location"
        location.value = "/etc/passwd"
        tensor.externalData = [location]
        var model = Onnx_ModelProto()
        model.irVersion = 9
        model.graph.initializer = [tensor]
        let report = try ModelInspector.inspect(data: try model.serializedBytes(), name: "x.onnx")
        #expect(report.onnx?.externalInitializerCount == 1)
        #expect(report.onnx?.parameterCount == 1_000_000)
        #expect(report.onnx?.weightBytes == 0)
    }

    @Test("safetensors: sub-byte types whose bit count is near 2^64 are refused, not a trap")
    func safetensorsSubByteBits() {
        for (dtype, dimension) in [("F4", "4611686018427387903"), ("F6_E2M3", "3074457345618258602")] {
            let header = Data("{\"t\":{\"dtype\":\"\(dtype)\",\"shape\":[\(dimension)],\"data_offsets\":[0,0]}}".utf8)
            let file = HostileInputTests.littleEndian(UInt64(header.count)) + header
            #expect(HostileInputTests.message { try ModelInspector.inspect(data: file, name: "m.safetensors") }?.contains("does not fill") == true, "\(dtype)")
        }
    }

    @Test("a report from outside whose counts pass Int.max is summarised and printed saturated; a negative count is flagged")
    func reportCountsFromOutside() throws {
        let json = #"{"format":"mlmodel","size":1,"notes":[],"coreML":{"modelType":"mlProgram","specificationVersion":7,"#
            + #""minimumDeploymentTargets":{},"inputs":[],"outputs":[],"states":[],"metadata":{"userDefined":{}},"#
            + #""layerCounts":{"a":9223372036854775807,"b":1},"parameterCount":1,"weightBytes":1,"isUpdatable":false},"#
            + #""onnx":null}"#
        let report = try JSONDecoder().decode(ModelReport.self, from: Data(json.utf8))
        #expect(report.summary.contains("9223372036854775807 operations"), "\(report.summary)")
        #expect(report.text.contains("9223372036854775807"))
        #expect(report.detailText.contains("9223372036854775807"))
        #expect(!report.hasNegativeCounts)
        let negative = try JSONDecoder().decode(ModelReport.self, from: Data(json.replacingOccurrences(of: "\"b\":1", with: "\"b\":-1").utf8))
        #expect(negative.hasNegativeCounts)
        #expect(ModelReport.total(["a": Int.min, "b": -1]) == .min)
    }
}
