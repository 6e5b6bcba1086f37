/// What the device's bootloader told the TEE or StrongBox at boot (the hardware-enforced
/// `rootOfTrust` of a key description): whether the bootloader is locked and whether the booted
/// system verified against the device maker's key.
///
/// ```
/// RootOfTrust ::= SEQUENCE {
///     verifiedBootKey    OCTET STRING,
///     deviceLocked       BOOLEAN,
///     verifiedBootState  VerifiedBootState,
///     verifiedBootHash   OCTET STRING,      -- attestation version 3 and later
/// }
/// VerifiedBootState ::= ENUMERATED { Verified (0), SelfSigned (1), Unverified (2), Failed (3) }
/// ```
///
/// On an unlocked device the system that writes the software-enforced list (where the app's
/// package name and signing digests are) is whatever its owner installed, so that list says
/// nothing; only a locked device with a verified boot vouches for it.
public struct AndroidRootOfTrust: Sendable, Equatable {
    /// How the booted system was verified.
    public enum VerifiedBootState: Int, Sendable, CaseIterable {
        /// Verified against the device maker's key, embedded in the device.
        case verified = 0
        /// Verified against a key the device's owner installed.
        case selfSigned = 1
        /// Not verified (an unlocked bootloader).
        case unverified = 2
        /// Verification failed.
        case failed = 3

        /// A name for messages.
        public var name: String {
            switch self {
            case .verified: return "verified"
            case .selfSigned: return "self-signed"
            case .unverified: return "unverified"
            case .failed: return "failed"
            }
        }
    }

    /// Whether the bootloader is locked.
    public let deviceLocked: Bool
    /// How the booted system was verified.
    public let verifiedBootState: VerifiedBootState

    /// A root of trust with these fields; devices' come from their key description.
    public init(deviceLocked: Bool, verifiedBootState: VerifiedBootState) {
        self.deviceLocked = deviceLocked
        self.verifiedBootState = verifiedBootState
    }
}
