/// The fields of WebAuthn-style authenticator data as App Attest writes it.
///
/// Layout: RP ID hash (32 bytes), flags (1), big-endian signature counter (4); then, when the
/// attested-credential flag (0x40) is set, AAGUID (16), credential ID length (2, big-endian),
/// credential ID, and the credential public key as one COSE_Key CBOR item (assertions set the flag
/// but carry no credential data). Any bytes after that must
/// be one CBOR map of extensions. Apple's own published sample attestation carries such a map without
/// setting the extension flag (0x80), so the map is accepted with or without it; nothing else may follow.
public struct AppleAuthenticatorData: Sendable, Equatable {
    /// The flag saying attested credential data follows the counter.
    public static let attestedCredentialFlag: UInt8 = 0x40
    /// The flag saying an extensions map is present.
    public static let extensionsFlag: UInt8 = 0x80

    /// SHA-256 of the App ID (`teamID.bundleID`).
    public let rpIDHash: [UInt8]
    /// The flags byte.
    public let flags: UInt8
    /// The signature counter: 0 in an attestation, growing with each assertion.
    public let counter: UInt32
    /// The 16-byte AAGUID naming the App Attest environment, when credential data is present.
    public let aaguid: [UInt8]?
    /// The credential ID (App Attest's key identifier), when credential data is present.
    public let credentialID: [UInt8]?
    /// The credential public key's COSE_Key CBOR bytes, when credential data is present.
    public let credentialPublicKey: [UInt8]?
    /// The extensions map's CBOR bytes, when present.
    public let extensions: [UInt8]?

    /// Parses authenticator data; throws `AttestationFailure(.invalid, …)` for anything malformed.
    public init(bytes: [UInt8]) throws {
        var reader = ByteReader(bytes)
        let header = try reader.take(37, "authenticator data is shorter than 37 bytes")
        rpIDHash = Array(header.prefix(32))
        flags = header[header.startIndex + 32]
        counter = header.suffix(4).reduce(0) { $0 << 8 | UInt32($1) }
        // Apple's assertions set the attested-credential flag with nothing after the counter, so
        // credential data is read only when the flag is set and bytes follow.
        if flags & Self.attestedCredentialFlag != 0, !reader.rest.isEmpty {
            let truncated = "authenticator data's credential data is truncated"
            aaguid = Array(try reader.take(16, truncated))
            let length = try reader.take(2, truncated).reduce(0) { $0 << 8 | Int($1) }
            credentialID = Array(try reader.take(length, truncated))
            let key = try CBORReader.readPrefix(reader.rest)
            guard case .map = key.value else {
                throw AttestationFailure.invalid("authenticator data's credential public key is not a CBOR map")
            }
            credentialPublicKey = Array(try reader.take(key.length, truncated))
        } else {
            aaguid = nil
            credentialID = nil
            credentialPublicKey = nil
        }
        if reader.rest.isEmpty {
            guard flags & Self.extensionsFlag == 0 else {
                throw AttestationFailure.invalid("authenticator data's extensions flag is set but no extensions follow")
            }
            extensions = nil
        } else {
            let map = try CBORReader.readPrefix(reader.rest)
            guard case .map = map.value, map.length == reader.rest.count else {
                throw AttestationFailure.invalid("authenticator data has bytes after its fields that are not one extensions map")
            }
            extensions = Array(reader.rest)
        }
    }
}

/// Reads consecutive fields from bytes, checking each length against what is left before slicing.
struct ByteReader {
    private let bytes: [UInt8]
    private var offset = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// The bytes not read yet.
    var rest: ArraySlice<UInt8> { bytes[offset...] }

    /// The next `count` bytes, or `failure` when fewer are left.
    mutating func take(_ count: Int, _ failure: String) throws -> ArraySlice<UInt8> {
        guard count >= 0, count <= bytes.count - offset else { throw AttestationFailure.invalid(failure) }
        defer { offset += count }
        return bytes[offset..<(offset + count)]
    }
}
