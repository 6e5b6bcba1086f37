import ArgumentParser
import CofferFormat
import Crypto
import Foundation

/// `coffer device fetch-key`: obtain a model key as one of an app's devices would.
///
/// The device's X25519 key pair lives in a 0600 file (made on first use); the server answers with
/// the model key sealed to it with HPKE, which only that private key opens. For testing an app's
/// set-up and for devices without the SDK; the Swift SDK does the same in the platform key store.
struct DeviceCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "device",
        abstract: "Act as an app's device.",
        subcommands: [FetchKey.self]
    )

    struct FetchKey: NetworkCommand {
        static let configuration = CommandConfiguration(
            commandName: "fetch-key",
            abstract: "Fetch a model key as a device of an app, sealed to the device's own key, into a .modelkey file (0600)."
        )

        @Argument(help: "The model key ID.")
        var keyID: String

        @Option(help: "The server (default: COFFER_SERVER or the saved login's server).")
        var server: String?

        @Option(help: "The app ID.")
        var appID: String

        @Option(help: ArgumentHelp("A file holding the app's device credential.", valueName: "FILE"))
        var credentialFile: String

        @Option(help: "This device's ID (default: the host name).")
        var deviceID: String?

        @Option(help: ArgumentHelp("The device's private key file; created (0600) if missing.", valueName: "FILE"))
        var deviceKey: String = "coffer-device.key"

        @Option(name: .shortAndLong, help: ArgumentHelp("Where to write the key (default: KEY_ID.modelkey).", valueName: "FILE"))
        var output: String?

        @Flag(help: "Replace FILE if it exists.")
        var force = false

        struct Delivery: Decodable { let keyID: String; let encapsulatedKey: String; let ciphertext: String }
        struct Request: Encodable { let appID: String; let credential: String; let deviceID: String; let devicePublicKey: String }

        func run() async throws {
            let serverText = try server ?? ProcessInfo.processInfo.environment["COFFER_SERVER"] ?? Credentials.load(ProcessInfo.processInfo.environment)?.server
            guard let serverText else { throw ValidationError("give --server URL (or set COFFER_SERVER)") }
            let client = APIClient(server: try ServerAddress.parse(serverText), token: nil)
            let credential = try AppCredential.resolve(option: nil, file: credentialFile)
            let privateKey = try Self.loadOrCreate(deviceKey)
            let device = deviceID ?? ProcessInfo.processInfo.hostName
            let destination = output ?? keyID + ".modelkey"
            if !force, FileManager.default.fileExists(atPath: destination) {
                throw IOFailure(operation: .create, path: destination, errno: EEXIST)
            }
            let body = Request(appID: appID, credential: credential, deviceID: device,
                               devicePublicKey: privateKey.publicKey.rawRepresentation.base64EncodedString())
            let answer = try await client.send(client.request("POST", ["v1", "device", "keys", keyID], json: body, authorized: false))
            guard let delivery = try? JSONDecoder().decode(Delivery.self, from: answer.body),
                  let encapsulated = Data(base64Encoded: delivery.encapsulatedKey),
                  let sealed = Data(base64Encoded: delivery.ciphertext)
            else { throw AdminFailure(.protocolError, "the server's answer is not a key delivery") }
            let material: SymmetricKey
            do {
                material = try KeyDelivery.open(.init(encapsulatedKey: encapsulated, ciphertext: sealed),
                                                keyID: keyID, deviceID: device, using: privateKey)
            } catch {
                throw CLIFailure(.badData, "the delivered key does not open with this device's key")
            }
            let key = try ModelKey(id: keyID, name: "delivered to \(device)", created: Date(), key: material)
            try KeyFiles.write(key, to: destination, replacing: force)
            print("Fetched key \(keyID) as device \(device); wrote \(destination) (mode 0600).")
        }

        /// The largest device key file read (a key is 45 bytes of base64 and a newline).
        static let maximumKeyFileSize = 4096

        /// The device key from `path`, or a new one written there with mode 0600.
        ///
        /// The default path is in the current folder, which may be anyone's: the file is opened
        /// without following a symbolic link (`O_NOFOLLOW`) and must be the user's own, a regular
        /// file nobody else may read or write (``SecretFile``), or keys would be delivered to a
        /// device key someone else chose or can read.
        static func loadOrCreate(_ path: String) throws -> Curve25519.KeyAgreement.PrivateKey {
            let bytes: [UInt8]?
            do {
                bytes = try SecretFile.read(path, atMost: maximumKeyFileSize + 1, what: "device key file",
                                            allowingPipes: false, followingLinks: false)
            } catch let failure as IOFailure where failure.operation == .open && failure.code == ENOENT {
                bytes = nil
            } catch let failure as IOFailure {
                throw CLIFailure(.noInput, "cannot read device key file \(path): \(failure.reason)")
            }
            if let bytes {
                let text = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
                guard bytes.count <= maximumKeyFileSize, let raw = Data(base64Encoded: text),
                      let key = try? Curve25519.KeyAgreement.PrivateKey(rawRepresentation: raw) else {
                    throw CLIFailure(.noInput, "\(path) is not a device key file")
                }
                return key
            }
            let key = Curve25519.KeyAgreement.PrivateKey()
            try AtomicOutput.write(Array((key.rawRepresentation.base64EncodedString() + "\n").utf8), to: path, replacing: false)
            return key
        }
    }
}
