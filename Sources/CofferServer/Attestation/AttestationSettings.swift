import CofferFormat
import CofferAttestation
import Crypto
import Foundation
import Vapor

/// An app's attestation policy, as the API, the CLI and the dashboard set it and as the app's row
/// keeps it (JSON in `apps.attestation`).
///
/// `none` (the default) delivers keys on the credential alone, as before. `apple-app-attest` and
/// `android-key-attestation` deliver a model key only to a device whose request carries valid
/// evidence of a genuine install (docs/ATTESTATION.md).
struct AttestationSettings: Content, Equatable, Sendable {
    /// The policy names.
    enum Policy: String, Codable, Sendable, CaseIterable {
        case none
        case appleAppAttest = "apple-app-attest"
        case androidKeyAttestation = "android-key-attestation"
    }

    var policy: Policy
    /// Apple: the Developer Team ID (ten letters or digits).
    var appleTeamID: String?
    /// Apple: the bundle ID; the app's own bundle ID when absent.
    var bundleID: String?
    /// Apple: `production` (default) or `development`.
    var appleEnvironment: String?
    /// Android: the package name.
    var packageName: String?
    /// Android: SHA-256 digests of the accepted signing certificates, hex (colons allowed on input).
    var signingCertificateDigests: [String]?
    /// Android: `software`, `tee` (default) or `strongbox`.
    var minimumSecurityLevel: String?
    /// Android: accept devices with an unlocked bootloader or a boot not verified by the maker's
    /// key (default false: refused, since such a device's system writes the app identity).
    var allowUnlockedDevices: Bool?

    /// The `none` policy.
    static let none = AttestationSettings(policy: .none)

    /// The settings with every field checked and put in its stored form; `bundleID` fills an
    /// Apple policy's bundle ID when the settings name none.
    func validated(appBundleID: String?) throws -> AttestationSettings {
        switch policy {
        case .none:
            return .none
        case .appleAppAttest:
            guard let team = appleTeamID, team.utf8.count == 10, team.utf8.allSatisfy(Self.isUpperAlphanumeric) else {
                throw APIError.invalid("attestation.appleTeamID must be the ten-character Apple Developer Team ID (A-Z, 0-9)")
            }
            guard let bundle = bundleID ?? appBundleID, Self.isIdentifier(bundle) else {
                throw APIError.invalid("attestation.bundleID (or the app's bundle ID) must be 1 to 155 letters, digits, '.', '-' or '_'")
            }
            let environment = appleEnvironment ?? AppleAppAttestPolicy.Environment.production.rawValue
            guard AppleAppAttestPolicy.Environment(rawValue: environment) != nil else {
                throw APIError.invalid("attestation.appleEnvironment must be production or development")
            }
            return AttestationSettings(policy: policy, appleTeamID: team, bundleID: bundle, appleEnvironment: environment)
        case .androidKeyAttestation:
            guard let package = packageName, Self.isIdentifier(package) else {
                throw APIError.invalid("attestation.packageName must be 1 to 155 letters, digits, '.', '-' or '_'")
            }
            let digests = try (signingCertificateDigests ?? []).map(Self.digest)
            guard (1...16).contains(digests.count) else {
                throw APIError.invalid("attestation.signingCertificateDigests must name 1 to 16 SHA-256 digests of the app's signing certificates")
            }
            let level = minimumSecurityLevel ?? AndroidKeyAttestationPolicy.SecurityLevel.trustedEnvironment.name
            guard AndroidKeyAttestationPolicy.SecurityLevel(name: level) != nil else {
                throw APIError.invalid("attestation.minimumSecurityLevel must be software, tee or strongbox")
            }
            return AttestationSettings(policy: policy, packageName: package, signingCertificateDigests: digests, minimumSecurityLevel: level,
                                       allowUnlockedDevices: allowUnlockedDevices == true ? true : nil)
        }
    }

    /// The Apple policy of validated settings, or nil.
    var apple: AppleAppAttestPolicy? {
        guard policy == .appleAppAttest, let appleTeamID, let bundleID,
              let environment = AppleAppAttestPolicy.Environment(rawValue: appleEnvironment ?? "production") else { return nil }
        return AppleAppAttestPolicy(teamID: appleTeamID, bundleID: bundleID, environment: environment)
    }

    /// The Android policy of validated settings, or nil.
    var android: AndroidKeyAttestationPolicy? {
        guard policy == .androidKeyAttestation, let packageName,
              let level = AndroidKeyAttestationPolicy.SecurityLevel(name: minimumSecurityLevel ?? "tee") else { return nil }
        let digests = (signingCertificateDigests ?? []).compactMap { try? Self.digestBytes($0) }
        return AndroidKeyAttestationPolicy(packageName: packageName, signingCertificateDigests: digests, minimumSecurityLevel: level,
                                           requiresVerifiedBoot: allowUnlockedDevices != true)
    }

    /// Names the policy exactly: the SHA-256 (hex) of its stored JSON (`none` for none). Installs
    /// are recorded with the digest of the policy that checked them (``DeviceAttestation``).
    var digest: String {
        let json = (try? storedJSON()) ?? nil
        return SHA256.hash(data: Data((json ?? "none").utf8)).hexString
    }

    /// One line for `app list`, the dashboard and the audit log.
    var summary: String {
        switch policy {
        case .none: return "none"
        case .appleAppAttest:
            return "apple-app-attest \(appleTeamID ?? "?").\(bundleID ?? "?") (\(appleEnvironment ?? "production"))"
        case .androidKeyAttestation:
            return "android-key-attestation \(packageName ?? "?") (\(signingCertificateDigests?.count ?? 0) signing digests, \(minimumSecurityLevel ?? "tee") or stronger"
                + (allowUnlockedDevices == true ? ", unlocked devices allowed)" : ")")
        }
    }

    /// Reads the stored JSON of an app's row (nil is `none`). Unreadable JSON throws: a policy the
    /// server cannot read must not fall open to `none`.
    static func stored(_ json: String?) throws -> AttestationSettings {
        guard let json else { return .none }
        return try JSONDecoder().decode(AttestationSettings.self, from: Data(json.utf8))
    }

    /// The JSON stored in an app's row; nil for `none`. Throws rather than storing nil, which
    /// would read back as `none`: a policy must never fall open.
    func storedJSON() throws -> String? {
        guard policy != .none else { return nil }
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return String(decoding: try encoder.encode(self), as: UTF8.self)
    }

    private static func isUpperAlphanumeric(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }

    private static func isIdentifier(_ text: String) -> Bool {
        (1...155).contains(text.utf8.count) && text.utf8.allSatisfy {
            isUpperAlphanumeric($0) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) || $0 == UInt8(ascii: ".")
                || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_")
        }
    }

    /// A digest in its stored form: 64 lowercase hex digits.
    private static func digest(_ text: String) throws -> String {
        try digestBytes(text).hexString
    }

    /// 32 bytes from 64 hex digits, colons (as `keytool` prints them) ignored.
    static func digestBytes(_ text: String) throws -> [UInt8] {
        let digits = text.utf8.filter { $0 != UInt8(ascii: ":") }
        guard digits.count == 64, let bytes = Hex.decode(digits) else {
            throw APIError.invalid("a signing certificate digest must be 64 hex digits (SHA-256)")
        }
        return bytes
    }
}
