/// The app a key was generated for, as Android Keystore states it in the `attestationApplicationId`
/// authorization (tag 709): the packages sharing the caller's UID and the SHA-256 digests of
/// their signing certificates.
///
/// ```
/// AttestationApplicationId ::= SEQUENCE {
///     packageInfos      SET OF AttestationPackageInfo,
///     signatureDigests  SET OF OCTET STRING,
/// }
/// AttestationPackageInfo ::= SEQUENCE {
///     packageName       OCTET STRING,
///     version           INTEGER,
/// }
/// ```
public struct AndroidAttestationApplicationID: Sendable, Equatable {
    /// One package of the calling UID.
    public struct Package: Sendable, Equatable {
        /// The package name, UTF-8.
        public let name: String
        /// The package's version code.
        public let version: Int64

        /// A package `name` at `version`.
        public init(name: String, version: Int64) {
            self.name = name
            self.version = version
        }
    }

    /// The packages of the calling UID (one for an ordinary app).
    public let packages: [Package]
    /// SHA-256 digests of the signing certificates of those packages.
    public let signatureDigests: [[UInt8]]

    /// An application ID listing `packages` signed with `signatureDigests`.
    public init(packages: [Package], signatureDigests: [[UInt8]]) {
        self.packages = packages
        self.signatureDigests = signatureDigests
    }
}
