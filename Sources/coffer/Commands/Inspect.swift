import ArgumentParser
import CofferFormat
import Foundation
import ModelInspection

/// `coffer inspect`: what a file is and what model is inside it.
struct Inspect: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Show what a model holds: format, OS versions, inputs, outputs, labels, layers, parameters.",
        discussion: """
            Reads Core ML (.mlmodel, .mlpackage, .mlmodelc), ONNX, safetensors and GGUF without running \
            them. A sealed file shows its header facts without a key; with --key or a passphrase it is \
            opened to show the model inside: a sealed file is read chunk by chunk in memory, a sealed \
            folder is restored into a private temporary folder (0700) that is removed afterwards. \
            Exits 65 when the model is damaged, after printing what could be read.
            """
    )

    @Argument(help: ArgumentHelp("A sealed container, a legacy file, or a model file or folder.", valueName: "PATH"))
    var path: String

    @OptionGroup(title: "Opening a sealed model (optional)") var key: KeyOptions

    @Flag(help: "Print JSON (camelCase field names).")
    var json = false

    func run() throws {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else {
            throw IOFailure(operation: .open, path: path, errno: ENOENT)
        }
        if !isFolder.boolValue {
            let prefix = try PositionalFile(readingAt: path).read(count: ContainerHeader.prefixLength, at: 0)
            if prefix.starts(with: ContainerHeader.magic) { return try runSealed() }
        }
        guard !key.isGiven else {
            throw CLIFailure(.usage, "\(path) is not a Coffer container; inspect it without --key or a passphrase")
        }
        let facts = try ModelFacts(path: path, isFolder: isFolder.boolValue)
        let inspection = Result { try ModelInspector.inspect(path: path) }
        try emit(InspectionOutput(base: facts, baseText: facts.text, inspection: inspection))
    }

    private func runSealed() throws {
        // The file's word sets the header's length: past the limit the server keeps to, it is
        // refused from its preamble, before its chunk table is read (and held several times over).
        let header = try SealedModel.readHeader(path: path, maximumHeaderLength: SealedModel.maximumHeaderLength)
        let facts = SealedFacts(header)
        guard key.isGiven else { return try emit(InspectionOutput(base: facts, baseText: facts.text, inspection: nil)) }
        let material = try key.material()
        // Opening the container first makes a wrong key or a damaged container fail as `decrypt` would.
        _ = try SealedModel.Reader(path: path, using: material, maximumHeaderLength: SealedModel.maximumHeaderLength)
        let inspection = Result { try SealedInspection.report(path, header: header, using: material) }
        let heading = header.payloadKind == .file
            ? "Inside (decrypted in memory with the key):"
            : "Inside (restored to a private temporary folder, since removed):"
        try emit(InspectionOutput(base: facts, baseText: facts.text + "\n\n" + heading, inspection: inspection))
    }

    /// Prints the output; a damaged model exits 65 after what could be read was printed.
    private func emit<Base: Encodable>(_ output: InspectionOutput<Base>) throws {
        if case .failure(let error)? = output.inspection, !(error is InspectionError) { throw error }
        print(json ? JSONOutput.render(output) : output.text)
        if let message = output.errorMessage {
            throw CLIFailure(.badData, "\(path): \(message)")
        }
    }
}

/// A container header's facts, as `inspect` shows them.
struct SealedFacts: Encodable {
    let kind = "coffer-container"
    let formatVersion: Int
    let suite: String
    let keyID: String?
    let passphrase: PassphraseFacts?
    let payloadKind: String
    let originalName: String
    let plaintextSize: UInt64
    /// "fixed" (format 1) or "content-defined" (format 2).
    let chunking: String
    /// Format 1's chunk size; nil for format 2, whose chunks vary.
    let chunkSize: Int?
    let chunkCount: UInt64
    /// Format 2: the smallest, average and largest chunk, and how many chunks repeat an earlier one.
    let chunkStatistics: ChunkStatistics?

    struct ChunkStatistics: Encodable {
        let smallest: Int
        let average: Int
        let largest: Int
        let repeated: Int

        init(_ table: ChunkTable) {
            let lengths = table.entries.map { Int($0.length) }
            smallest = lengths.min() ?? 0
            largest = lengths.max() ?? 0
            average = lengths.isEmpty ? 0 : lengths.reduce(0, +) / lengths.count
            repeated = table.count - Set(table.entries.map(\.id)).count
        }
    }

    struct PassphraseFacts: Encodable {
        let kdf = "scrypt"
        let logN: Int
        let r: Int
        let p: Int
    }

    init(_ header: ContainerHeader) {
        formatVersion = Int(header.version)
        suite = header.version == 1
            ? "AES-256-GCM, HKDF-SHA-256, HMAC-SHA-256"
            : "AES-256-GCM sealed deterministically (HMAC-SHA-256 chunk IDs), HKDF-SHA-256, HMAC-SHA-256"
        keyID = header.keyID
        if case .passphrase(let parameters) = header.keyDerivation {
            passphrase = PassphraseFacts(logN: Int(parameters.logN), r: Int(parameters.r), p: Int(parameters.p))
        } else {
            passphrase = nil
        }
        payloadKind = header.payloadKind == .file ? "file" : "directory"
        originalName = header.originalName
        plaintextSize = header.plaintextLength
        chunking = header.chunkTable == nil ? "fixed" : "content-defined"
        chunkSize = header.chunkTable == nil ? header.chunkSize : nil
        chunkCount = header.chunkCount
        chunkStatistics = header.chunkTable.map(ChunkStatistics.init)
    }

    var text: String {
        let key = keyID.map { "model key \($0)" }
            ?? passphrase.map { "passphrase (scrypt N=2^\($0.logN), r=\($0.r), p=\($0.p))" } ?? "unknown"
        return """
            Coffer container, format version \(formatVersion)
              payload:     \(payloadKind) "\(Printable.text(originalName))", \(plaintextSize) bytes
              key:         \(key)
              suite:       \(suite)
              chunks:      \(chunkText)
            """
    }

    private var chunkText: String {
        guard let statistics = chunkStatistics else { return "\(chunkCount) of \(chunkSize ?? 0) bytes" }
        return "\(chunkCount) content-defined, \(statistics.smallest)–\(statistics.largest) bytes (average \(statistics.average))"
            + (statistics.repeated > 0 ? ", \(statistics.repeated) repeated" : "")
    }
}
