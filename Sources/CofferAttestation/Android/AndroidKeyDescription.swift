/// The Android key attestation extension of a key attestation leaf certificate
/// (OID 1.3.6.1.4.1.11129.2.1.17): what Keystore says about the attested key.
///
/// Only the fields Coffer checks are kept; the other tagged fields of the authorization lists
/// are skipped. Parse one with ``init(derEncoded:)``, which refuses malformed or oversized input
/// with one ``AttestationFailure`` and never traps, whatever the bytes.
///
/// ```
/// KeyDescription ::= SEQUENCE {
///     attestationVersion         INTEGER,   -- 1, 2, 3, 4, 100, 200, 300, 400, …
///     attestationSecurityLevel   SecurityLevel,
///     keyMintVersion             INTEGER,   -- keymasterVersion before version 100
///     keyMintSecurityLevel       SecurityLevel,
///     attestationChallenge       OCTET STRING,
///     uniqueId                   OCTET STRING,
///     softwareEnforced           AuthorizationList,
///     hardwareEnforced           AuthorizationList,
/// }
/// SecurityLevel ::= ENUMERATED { Software (0), TrustedEnvironment (1), StrongBox (2) }
/// ```
public struct AndroidKeyDescription: Sendable, Equatable {
    /// The attestation format version (3, 4, 100, 200, 300, 400 on current devices).
    public let attestationVersion: Int
    /// Where the attestation was produced.
    public let attestationSecurityLevel: AndroidKeyAttestationPolicy.SecurityLevel
    /// The Keymaster or KeyMint version.
    public let keyMintVersion: Int
    /// Where the attested key lives.
    public let keyMintSecurityLevel: AndroidKeyAttestationPolicy.SecurityLevel
    /// The challenge the app passed when it generated the key.
    public let attestationChallenge: [UInt8]
    /// The unique ID, empty unless the app asked for one.
    public let uniqueID: [UInt8]
    /// The `attestationApplicationId` of the software-enforced list, if present.
    public let softwareEnforcedApplicationID: AndroidAttestationApplicationID?
    /// The `attestationApplicationId` of the hardware-enforced list, if present.
    public let hardwareEnforcedApplicationID: AndroidAttestationApplicationID?
    /// The hardware-enforced `rootOfTrust`, if present (the TEE or StrongBox always gives one).
    public let rootOfTrust: AndroidRootOfTrust?
    /// The hardware-enforced `origin` (0 for a key generated in the TEE or StrongBox, 2 for an
    /// imported one), if present.
    public let origin: Int?

    /// The application ID to check: the hardware-enforced one when the TEE or StrongBox
    /// supplied one, otherwise the software-enforced one, where Keystore (the Android system)
    /// puts it on every current device.
    public var attestationApplicationID: AndroidAttestationApplicationID? {
        hardwareEnforcedApplicationID ?? softwareEnforcedApplicationID
    }

    /// A key description with the given fields; devices' come from ``init(derEncoded:)``.
    init(
        attestationVersion: Int,
        attestationSecurityLevel: AndroidKeyAttestationPolicy.SecurityLevel,
        keyMintVersion: Int,
        keyMintSecurityLevel: AndroidKeyAttestationPolicy.SecurityLevel,
        attestationChallenge: [UInt8],
        uniqueID: [UInt8],
        softwareEnforcedApplicationID: AndroidAttestationApplicationID?,
        hardwareEnforcedApplicationID: AndroidAttestationApplicationID?,
        rootOfTrust: AndroidRootOfTrust? = nil,
        origin: Int? = nil
    ) {
        self.attestationVersion = attestationVersion
        self.attestationSecurityLevel = attestationSecurityLevel
        self.keyMintVersion = keyMintVersion
        self.keyMintSecurityLevel = keyMintSecurityLevel
        self.attestationChallenge = attestationChallenge
        self.uniqueID = uniqueID
        self.softwareEnforcedApplicationID = softwareEnforcedApplicationID
        self.hardwareEnforcedApplicationID = hardwareEnforcedApplicationID
        self.rootOfTrust = rootOfTrust
        self.origin = origin
    }
}
