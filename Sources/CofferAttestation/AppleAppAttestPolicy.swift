/// What an app with the `apple-app-attest` policy requires of App Attest evidence.
public struct AppleAppAttestPolicy: Sendable, Equatable {
    /// Which App Attest environment issued the key (its AAGUID).
    public enum Environment: String, Sendable, CaseIterable {
        /// Apps from the App Store, TestFlight or enterprise distribution: AAGUID `appattest` and seven zero bytes.
        case production
        /// Development builds: AAGUID `appattestdevelop`.
        case development

        /// The 16-byte AAGUID of the environment.
        public var aaguid: [UInt8] {
            switch self {
            case .production: return Array("appattest".utf8) + [UInt8](repeating: 0, count: 7)
            case .development: return Array("appattestdevelop".utf8)
            }
        }
    }

    /// The Apple Developer Team ID (ten characters).
    public let teamID: String
    /// The app's bundle ID.
    public let bundleID: String
    /// The environment the evidence must come from.
    public let environment: Environment

    /// A policy for `teamID.bundleID` in `environment`.
    public init(teamID: String, bundleID: String, environment: Environment) {
        self.teamID = teamID
        self.bundleID = bundleID
        self.environment = environment
    }

    /// The App ID, `teamID.bundleID`, whose SHA-256 is the evidence's RP ID hash.
    public var appID: String { teamID + "." + bundleID }
}
