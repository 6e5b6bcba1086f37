/// Why attestation evidence was refused: a reason code the server answers and audits, and one
/// line saying which check failed.
///
/// The detail names the check and, where it helps, the value that was expected by policy (a team
/// ID, a package name); it never carries key material, challenges or whole certificates.
public struct AttestationFailure: Error, Sendable, Equatable, CustomStringConvertible {
    /// The reason codes of refused evidence.
    public enum Code: String, Sendable {
        /// The evidence is malformed, does not chain to a trusted root, or a field differs from policy.
        case invalid = "attestation_invalid"
        /// An assertion's counter did not grow: the assertion was seen before.
        case replayed = "assertion_replayed"
        /// A certificate of the chain is on the operator's revocation list.
        case revoked = "attestation_revoked"
    }

    /// The reason code.
    public let code: Code
    /// One line naming the failed check.
    public let detail: String

    /// A failure with a code and a one-line detail.
    public init(_ code: Code, _ detail: String) {
        self.code = code
        self.detail = detail
    }

    /// An `attestation_invalid` failure.
    public static func invalid(_ detail: String) -> AttestationFailure { AttestationFailure(.invalid, detail) }

    /// `code: detail`.
    public var description: String { "\(code.rawValue): \(detail)" }
}
