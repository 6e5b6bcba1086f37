import Foundation

/// What a device should run for one model collection: the payload a Coffer server signs
/// (docs/MANIFEST.md).
///
/// A device verifies the signature over the exact bytes it received (``SignedManifest``), then
/// checks ``expiresAt`` and that ``sequence`` is not lower than the one it already has.
public struct Manifest: Codable, Sendable, Equatable {
    /// The payload format this build writes and reads.
    public static let currentFormat = 1
    /// The most models one manifest may list.
    public static let maximumModels = 1000

    /// The payload format (1).
    public var format: Int
    /// The collection's identifier, e.g. `FlowerModels`.
    public var collection: String
    /// The ID of the team that owns the collection.
    public var teamID: String
    /// The deployment these models come from.
    public var deploymentID: String
    /// Grows with every activation in the collection (a rollback too): a device refuses a lower one.
    public var sequence: UInt64
    /// Which part of the deployment applied: `default`, or `rule N` (1-based).
    public var target: String
    /// When the server signed it.
    public var issuedAt: Date
    /// After this instant the manifest must not be trusted.
    public var expiresAt: Date
    /// The model to use for each model name of the collection.
    public var models: [String: Entry]

    /// One model of the manifest: a sealed container on the server.
    public struct Entry: Codable, Sendable, Equatable {
        /// The model version's ID (stable for these bytes in this collection).
        public var versionID: String
        /// SHA-256 of the sealed container, lowercase hex: also its address.
        public var sha256: String
        /// The container's size in bytes.
        public var size: Int64
        /// Where to download it: absolute, or a path relative to the server's address.
        public var url: String
        /// The ID of the model key that opens it.
        public var keyID: String

        /// An entry.
        public init(versionID: String, sha256: String, size: Int64, url: String, keyID: String) {
            self.versionID = versionID
            self.sha256 = sha256
            self.size = size
            self.url = url
            self.keyID = keyID
        }
    }

    /// A manifest of the current format.
    public init(
        collection: String, teamID: String, deploymentID: String, sequence: UInt64, target: String,
        issuedAt: Date, expiresAt: Date, models: [String: Entry]
    ) {
        self.format = Self.currentFormat
        self.collection = collection
        self.teamID = teamID
        self.deploymentID = deploymentID
        self.sequence = sequence
        self.target = target
        self.issuedAt = issuedAt
        self.expiresAt = expiresAt
        self.models = models
    }
}

extension Manifest {
    /// The canonical payload: UTF-8 JSON with keys sorted, no insignificant white space, `/` not
    /// escaped, times as RFC 3339 UTC to the second. The same manifest always gives the same bytes.
    public func canonicalPayload() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return try encoder.encode(self)
    }

    /// Decodes a payload whose signature was verified; checks the fields a device relies on.
    static func decode(payload: Data) throws(ManifestError) -> Manifest {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        let manifest: Manifest
        do {
            manifest = try decoder.decode(Manifest.self, from: payload)
        } catch {
            throw .malformed("the signed payload is not a manifest")
        }
        guard manifest.format == currentFormat else { throw .unsupportedFormat(manifest.format) }
        guard manifest.models.count <= maximumModels else { throw .malformed("more than \(maximumModels) models") }
        for (name, entry) in manifest.models {
            guard Hex.isSHA256(entry.sha256) else {
                throw .malformed("the sha256 of model \(PrintableText.sanitized(name, limit: 100)) is not 64 lowercase hex digits")
            }
            guard entry.size >= 0 else { throw .malformed("model \(PrintableText.sanitized(name, limit: 100)) has a negative size") }
        }
        return manifest
    }
}
