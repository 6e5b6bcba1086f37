#if canImport(CryptoKit)
@preconcurrency import Crypto // CryptoKit's key types are Sendable only in Xcode 26's SDKs
#else
import Crypto
#endif
import Foundation

extension ModelKey {
    /// The format tag of a `.modelkey` file.
    public static let fileFormat = "coffer-modelkey-v1"
    /// The largest `.modelkey` file a reader accepts.
    public static let maximumFileSize = 64 * 1024

    private struct FileContents: Codable {
        var format: String
        var id: String
        var name: String
        var created: Date
        var key: String
    }

    /// The JSON of a `.modelkey` file (docs/FORMAT.md, "Model key files").
    public func fileRepresentation() -> Data {
        let contents = FileContents(
            format: Self.fileFormat, id: id, name: name, created: created,
            key: key.withUnsafeBytes { Data($0).base64EncodedString() }
        )
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        // Encoding a struct of strings and a date cannot fail.
        return try! encoder.encode(contents) + Data("\n".utf8)
    }

    /// Reads a `.modelkey` file's JSON; the error never quotes the file's content.
    public init(fileRepresentation data: Data) throws {
        guard data.count <= Self.maximumFileSize else { throw ModelKeyError.malformedFile("larger than 64 KiB") }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        guard let contents = try? decoder.decode(FileContents.self, from: data) else {
            throw ModelKeyError.malformedFile("not the JSON of a .modelkey file")
        }
        guard contents.format == Self.fileFormat else {
            throw ModelKeyError.malformedFile("unknown format tag (expected \(Self.fileFormat))")
        }
        guard let material = Data(base64Encoded: contents.key), material.count == Self.byteCount else {
            throw ModelKeyError.wrongKeySize
        }
        try self.init(id: contents.id, name: contents.name, created: contents.created, key: SymmetricKey(data: material))
    }
}
