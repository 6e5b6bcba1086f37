import ArgumentParser
import CofferFormat
import Foundation

/// `coffer inspect`: what a file is, without any key.
struct Inspect: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show a sealed file's header facts (no key needed), or an unsealed model's kind, size and files."
    )

    @Argument(help: ArgumentHelp("A sealed container, a legacy file, or a model file or folder.", valueName: "PATH"))
    var path: String

    @Flag(help: "Print JSON (camelCase field names).")
    var json = false

    func run() throws {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else {
            throw IOFailure(operation: .open, path: path, errno: ENOENT)
        }
        if !isFolder.boolValue {
            let prefix = try PositionalFile(readingAt: path).read(count: ContainerHeader.prefixLength, at: 0)
            if prefix.starts(with: ContainerHeader.magic) {
                let facts = SealedFacts(try SealedModel.readHeader(path: path))
                return print(json ? JSONOutput.render(facts) : facts.text)
            }
        }
        let facts = try ModelFacts(path: path, isFolder: isFolder.boolValue)
        print(json ? JSONOutput.render(facts) : facts.text)
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
    let chunkSize: Int
    let chunkCount: UInt64

    struct PassphraseFacts: Encodable {
        let kdf = "scrypt"
        let logN: Int
        let r: Int
        let p: Int
    }

    init(_ header: ContainerHeader) {
        formatVersion = Int(header.version)
        suite = "AES-256-GCM, HKDF-SHA-256, HMAC-SHA-256"
        keyID = header.keyID
        if case .passphrase(let parameters) = header.keyDerivation {
            passphrase = PassphraseFacts(logN: Int(parameters.logN), r: Int(parameters.r), p: Int(parameters.p))
        } else {
            passphrase = nil
        }
        payloadKind = header.payloadKind == .file ? "file" : "directory"
        originalName = header.originalName
        plaintextSize = header.plaintextLength
        chunkSize = header.chunkSize
        chunkCount = header.chunkCount
    }

    var text: String {
        let key = keyID.map { "model key \($0)" }
            ?? passphrase.map { "passphrase (scrypt N=2^\($0.logN), r=\($0.r), p=\($0.p))" } ?? "unknown"
        return """
            Coffer container, format version \(formatVersion)
              payload:     \(payloadKind) "\(Printable.text(originalName))", \(plaintextSize) bytes
              key:         \(key)
              suite:       \(suite)
              chunks:      \(chunkCount) of \(chunkSize) bytes
            """
    }
}
