import ArgumentParser
import Coffer
import Foundation

/// The options of commands that act as a device of an app: the app, its credential and the
/// device's attributes (`coffer manifest`, `coffer sync`).
struct DeviceOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The app's ID (coffer app create prints it).", valueName: "APP_ID"))
    var app: String

    @Option(help: ArgumentHelp(
        "The app's device credential. Other users of this machine can see it in the process list: prefer --credential-file.",
        valueName: "C"))
    var credential: String?

    @Option(help: ArgumentHelp("A file holding the app's device credential.", valueName: "FILE"))
    var credentialFile: String?

    @Option(name: .customLong("attr"), help: ArgumentHelp(
        "A device attribute: deviceClass, osName, osVersion, appVersion, language, region, arch, memoryGiB or custom.NAME; repeat for each.",
        valueName: "NAME=VALUE"))
    var attributes: [String] = []

    func validate() throws {
        guard UUID(uuidString: app) != nil else { throw ValidationError("--app is an app ID, a UUID (coffer app list shows them)") }
        _ = try DeviceAttributes(options: attributes)
    }

    /// The credential from --credential, --credential-file or COFFER_APP_CREDENTIAL.
    func resolvedCredential() throws -> String {
        try AppCredential.resolve(option: credential, file: credentialFile)
    }

    /// The attributes given with --attr.
    func deviceAttributes() throws -> DeviceAttributes {
        try DeviceAttributes(options: attributes)
    }
}
