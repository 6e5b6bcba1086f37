import Foundation

extension CofferConfiguration: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The server, app, team, device and cache — never the app's credential: `print`, string
    /// interpolation, `debugPrint` and `dump` of a configuration (in a log line or a crash report)
    /// show `credential: redacted`.
    public var description: String {
        "CofferConfiguration(serverURL: \(serverURL.absoluteString), appID: \(appID), credential: redacted, "
            + "teamID: \(teamID ?? "nil"), deviceID: \(deviceID ?? "nil"), cacheDirectory: \(cacheDirectory.path))"
    }

    /// The same as ``description``.
    public var debugDescription: String { description }

    /// The fields ``description`` shows, and the credential as `redacted`.
    public var customMirror: Mirror {
        Mirror(self, children: ["serverURL": serverURL, "appID": appID, "credential": "redacted", "teamID": teamID as Any,
                                "deviceID": deviceID as Any, "cacheDirectory": cacheDirectory], displayStyle: .struct)
    }
}
