/// What an app with the `android-key-attestation` policy requires of a key attestation chain.
public struct AndroidKeyAttestationPolicy: Sendable, Equatable {
    /// Where the attested key lives, in Android's order of strength.
    public enum SecurityLevel: Int, Sendable, Comparable, CaseIterable {
        /// Android's software keystore: not hardware-backed.
        case software = 0
        /// A trusted execution environment.
        case trustedEnvironment = 1
        /// StrongBox, a separate secure element.
        case strongBox = 2

        /// The name used in settings and on the command line.
        public var name: String {
            switch self {
            case .software: return "software"
            case .trustedEnvironment: return "tee"
            case .strongBox: return "strongbox"
            }
        }

        /// The level named `name` (`software`, `tee`, `strongbox`), or nil.
        public init?(name: String) {
            guard let level = Self.allCases.first(where: { $0.name == name }) else { return nil }
            self = level
        }

        /// Orders levels by strength.
        public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    /// The app's package name.
    public let packageName: String
    /// SHA-256 digests (32 bytes each) of the app signing certificates accepted; one must match.
    public let signingCertificateDigests: [[UInt8]]
    /// The weakest security level accepted.
    public let minimumSecurityLevel: SecurityLevel
    /// Whether the device must have booted, with its bootloader locked, a system verified against
    /// its maker's key (the hardware-enforced `rootOfTrust`: `deviceLocked` and `verifiedBootState`
    /// Verified). On by default: on an unlocked device the package name and signing digests (which
    /// the Android system, not the TEE, writes) are whatever its owner's system says. Only
    /// checked at `tee` or `strongbox` level: a software attestation has no root of trust.
    public let requiresVerifiedBoot: Bool

    /// A policy for `packageName`, signed with one of `signingCertificateDigests`, at
    /// `minimumSecurityLevel` or stronger, from a locked device with a verified boot unless
    /// `requiresVerifiedBoot` is false.
    public init(packageName: String, signingCertificateDigests: [[UInt8]], minimumSecurityLevel: SecurityLevel,
                requiresVerifiedBoot: Bool = true) {
        self.packageName = packageName
        self.signingCertificateDigests = signingCertificateDigests
        self.minimumSecurityLevel = minimumSecurityLevel
        self.requiresVerifiedBoot = requiresVerifiedBoot
    }
}
