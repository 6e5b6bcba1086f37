import Coffer
import CofferAsyncHTTPClient
import CofferFormat
import Foundation

/// What `coffer sync` leaves in its cache folder for `coffer open`: the server, app, pinned key,
/// device ID and attributes (`DIR/sync.json`, 0600), and the app's credential in the cache's key
/// store (`DIR/keys/app-credential`, 0600). No secret is in sync.json.
struct SyncSettings: Codable {
    var server: String
    var appID: String
    var publicKey: String
    var deviceID: String?
    /// The team pinned with `--team-id`; nil (and absent from older files): trust on first use.
    var teamID: String?
    var attributes: [String: String]

    static let credentialName = "app-credential"

    static func path(_ cache: URL) -> String { cache.appendingPathComponent("sync.json").path }

    static func keyStore(_ cache: URL) -> FileKeyStore { FileKeyStore(directory: cache.appendingPathComponent("keys", isDirectory: true)) }

    /// The settings and credential a sync saved in `cache`, read only once `cache` is checked as a
    /// sync leaves it (the user's own folder, not a symbolic link, nobody else may write in it):
    /// another's sync.json could name a server and key of their choosing.
    static func load(_ cache: URL, shown: String) throws -> (SyncSettings, String) {
        do {
            try FileKeyStore.checkPrivateFolder(cache.path)
        } catch let failure as IOFailure where failure.isMissing {
            throw CLIFailure(.noInput, "\(shown) holds no synced collections; run coffer sync first")
        } catch let error as CofferError {
            throw CLIFailure(error)
        }
        let bytes: [UInt8]
        do {
            bytes = try BoundedFile.read(path(cache), atMost: 64 << 10)
        } catch let failure as IOFailure where failure.isMissing {
            throw CLIFailure(.noInput, "\(shown) holds no synced collections; run coffer sync first")
        }
        guard let settings = try? JSONDecoder().decode(SyncSettings.self, from: Data(bytes)) else {
            throw CLIFailure(.badData, "\(path(cache)) is damaged; run coffer sync again")
        }
        guard let credential = (try? keyStore(cache).load(credentialName)).flatMap({ $0 }).map({ String(decoding: $0, as: UTF8.self) }) else {
            throw CLIFailure(.noInput, "\(shown) has no app credential; run coffer sync again")
        }
        return (settings, credential)
    }

    /// Saves the settings (0600, atomically) and the credential in the cache's key store.
    func save(_ cache: URL, credential: String) throws {
        try FileKeyStore.makePrivateFolder(cache.path)
        try Self.keyStore(cache).save(Self.credentialName, Data(credential.utf8))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        try AtomicOutput.write(try encoder.encode(self), to: Self.path(cache), replacing: true)
    }

    /// The SDK configuration these settings describe.
    func configuration(cache: URL, credential: String) throws -> CofferConfiguration {
        guard let url = URL(string: server) else { throw CLIFailure(.usage, "\(server) is not a URL") }
        var configuration = try CofferConfiguration(serverURL: url, appID: appID, credential: credential, publicKey: publicKey,
                                                    cacheDirectory: cache, keyStore: Self.keyStore(cache))
        configuration.deviceID = deviceID
        configuration.teamID = teamID
        configuration.allowsInsecureHTTP = PlainHTTPPolicy.allowedByEnvironment()
        // SwiftNIO's client: large body pieces, where FoundationNetworking hands over 16 KiB at a time.
        configuration.transport = AsyncHTTPClientTransport(timeout: configuration.requestTimeout)
        var device = DeviceAttributes()
        for (name, value) in attributes { _ = device.set(name, to: value) }
        configuration.deviceAttributes = device
        return configuration
    }
}
