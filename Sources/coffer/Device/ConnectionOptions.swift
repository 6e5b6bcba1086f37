import ArgumentParser
import Foundation

/// The options `coffer sync` and `coffer report` share: the server, the app and its credential,
/// the pinned key, the collection, the cache folder, the device's ID and the trusted team.
struct ConnectionOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The Coffer server.", valueName: "URL"))
    var server: String

    @OptionGroup var device: DeviceOptions

    @Option(help: ArgumentHelp("The server's manifest-signing public key to pin (coffer-server public-key prints it).", valueName: "KEY"))
    var publicKey: String

    @Option(help: ArgumentHelp("The collection's identifier.", valueName: "ID"))
    var collection: String

    @Option(help: ArgumentHelp("The cache folder (coffer sync creates it 0700).", valueName: "DIR"))
    var cache: String

    @Option(help: ArgumentHelp("This device's ID, which places it in rollouts (default: a random ID kept in DIR/keys).", valueName: "ID"))
    var deviceID: String?

    @Option(help: ArgumentHelp(
        "The team whose manifests to accept (coffer team list shows its ID); default: the team of the first manifest this cache accepted.",
        valueName: "TEAM_ID"))
    var teamID: String?

    /// The cache folder as a URL.
    var cacheURL: URL { URL(fileURLWithPath: cache, isDirectory: true) }

    /// The SDK's settings for this connection, describing the device with `attributes`.
    func settings(attributes: [String: String]) -> SyncSettings {
        SyncSettings(server: server, appID: device.app, publicKey: publicKey, deviceID: deviceID, teamID: teamID, attributes: attributes)
    }
}
