import ArgumentParser
import Coffer
import CofferFormat
import Crypto
import Foundation

/// `coffer manifest`: the signed manifest a device of an app gets for a collection, verified.
struct ManifestCommand: NetworkCommand {
    static let configuration = CommandConfiguration(
        commandName: "manifest",
        abstract: "Ask for a collection's manifest as a device of an app would, and verify its signature.",
        discussion: """
            Shows which deployment, rule and models the server hands a device with these attributes. \
            The signature is checked with --public-key when given (as an app pins it), else with the \
            key the server publishes at /v1/signing-key, which proves only that the manifest is intact. \
            The credential is read from --credential-file, --credential or COFFER_APP_CREDENTIAL.

            Example:
              coffer manifest --collection FlowerModels --app APP_ID \\
                --credential-file app.credential --device-id tablet-1 \\
                --attr deviceClass=tablet --attr osName=iPadOS --attr osVersion=18.1
            """
    )

    @Option(help: ArgumentHelp("The collection's identifier.", valueName: "ID"))
    var collection: String

    @OptionGroup var device: DeviceOptions

    @Option(help: ArgumentHelp("The device's ID, which places it in rollouts (default: the host name).", valueName: "ID"))
    var deviceID: String?

    @Option(help: ArgumentHelp("The server's manifest-signing public key to pin: raw 32 bytes, base64 (coffer-server public-key).",
                               valueName: "BASE64"))
    var publicKey: String?

    @Option(help: ArgumentHelp("The server (default: COFFER_SERVER, else the one you logged in to).", valueName: "URL"))
    var server: String?

    @Flag(help: "Print the verified manifest as JSON.")
    var json = false

    func validate() throws {
        if let publicKey { _ = try Self.key(publicKey) }
    }

    func run() async throws {
        let client = try server.map { APIClient(server: try ServerAddress.parse($0), token: nil) } ?? APIClient.anonymous()
        let secret = try device.resolvedCredential()
        let name = deviceID ?? ProcessInfo.processInfo.hostName
        let query = [("deviceID", name)] + (try device.deviceAttributes()).queryItems.map { ($0.name, $0.value) }
        var request = client.request("GET", ["v1", "device", "collections", collection, "manifest"], query: query, authorized: false)
        request.setValue("Basic " + Data("\(device.app):\(secret)".utf8).base64EncodedString(), forHTTPHeaderField: "Authorization")
        let envelope = try await client.send(request).body

        let pinned = try publicKey.map(Self.key)
        let key: Curve25519.Signing.PublicKey
        if let pinned {
            key = pinned
        } else {
            key = try await Self.published(by: client)
        }
        let manifest: Manifest
        do {
            manifest = try SignedManifest.verify(envelope, using: key)
        } catch {
            throw AdminFailure(.badData, error.description)
        }
        let keyID = SignedManifest.keyID(of: key)
        if pinned == nil {
            Printable.note("the manifest was verified with the key the server publishes (key ID \(keyID)), not a pinned one; pass --public-key to pin it")
        }
        if json { return print(JSONOutput.render(manifest)) }
        Printable.say(Self.describe(manifest, device: name, keyID: keyID, pinned: pinned != nil))
    }

    static func describe(_ manifest: Manifest, device: String, keyID: String, pinned: Bool) -> String {
        let time = ISO8601DateFormatter()
        var table = TextTable("NAME", "VERSION", "SHA256", "SIZE", "KEY ID")
        for (name, entry) in manifest.models.sorted(by: { $0.key < $1.key }) {
            table.add(name, entry.versionID, DeploymentText.shortAddress(entry.sha256), String(entry.size), entry.keyID)
        }
        return """
            Manifest of \(manifest.collection) for device \(device)
            Deployment: \(manifest.deploymentID)
            Sequence:   \(manifest.sequence)
            Target:     \(manifest.target)
            Issued:     \(time.string(from: manifest.issuedAt))
            Expires:    \(time.string(from: manifest.expiresAt))
            Signature:  verified with key \(keyID) (\(pinned ? "pinned" : "not pinned: fetched from the server"))

            \(table.render())
            """
    }

    /// A `--public-key` value: raw 32 bytes of an Ed25519 public key, base64.
    static func key(_ base64: String) throws -> Curve25519.Signing.PublicKey {
        guard let raw = Data(base64Encoded: base64.trimmingCharacters(in: .whitespaces)), raw.count == 32,
              let key = try? Curve25519.Signing.PublicKey(rawRepresentation: raw)
        else { throw ValidationError("--public-key is an Ed25519 public key: 32 bytes, base64 (coffer-server public-key prints it)") }
        return key
    }

    /// The key the server publishes at `/v1/signing-key`.
    static func published(by client: APIClient) async throws -> Curve25519.Signing.PublicKey {
        let published = try await client.get(API.SigningKey.self, "v1", "signing-key")
        guard published.algorithm == "ed25519", let raw = Data(base64Encoded: published.publicKey), raw.count == 32,
              let key = try? Curve25519.Signing.PublicKey(rawRepresentation: raw)
        else { throw ServerFailure.unexpectedAnswer(from: client.server, "/v1/signing-key is not an Ed25519 public key") }
        return key
    }
}
