/// Why a sealed file (Coffer or legacy) was refused.
///
/// Each case says what the person holding the file must do; none carries plaintext, key material or
/// passphrases. Authentication failures are one case whatever byte was wrong.
public enum ContainerError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The bytes do not start with the Coffer magic: not a Coffer container.
    case notAContainer
    /// A container of a format version this build does not read.
    case unsupportedVersion(UInt16)
    /// The header breaks a rule of docs/FORMAT.md; the text names the rule, never a secret.
    case malformedHeader(String)
    /// The file is shorter or longer than its header says.
    case lengthMismatch(expected: UInt64, actual: UInt64)
    /// The header was sealed with another model key (the key ID differs).
    case wrongKey(sealedWith: String, given: String)
    /// A passphrase container was given a model key, or the reverse.
    case wrongKeyKind(needs: String)
    /// The key or passphrase is wrong, or some byte of the file was changed.
    case authenticationFailure
    /// The passphrase parameters in the header ask for more work or memory than this reader allows.
    case costLimitExceeded(String)
    /// The header (a version 2 header is mostly its chunk table) is longer than the reader was told
    /// to accept (``SealedModel/readHeader(from:maximumHeaderLength:)``); nothing past its preamble was read.
    case headerTooLong(length: Int, limit: Int)
    /// A packed directory breaks a rule of docs/FORMAT.md (unsafe path, unsorted entries, ...).
    case malformedTree(String)
    /// A legacy file that cannot be read (too short, unknown options, ...).
    case malformedLegacy(String)

    /// One line saying what is wrong and what to do.
    public var description: String {
        switch self {
        case .notAContainer:
            return "not a Coffer container (no Coffer magic at the start)"
        case .unsupportedVersion(let version):
            return "container format version \(version) is not supported by this Coffer; upgrade Coffer to open it"
        case .malformedHeader(let rule):
            return "damaged container header: \(rule)"
        case .lengthMismatch(let expected, let actual):
            return actual < expected
                ? "the container is truncated: \(actual) of \(expected) bytes present"
                : "the container has \(actual - expected) unexpected bytes after its end"
        case .wrongKey(let sealedWith, let given):
            return "sealed with model key \(sealedWith), but key \(given) was given; use the matching .modelkey"
        case .wrongKeyKind(let needs):
            return "this file needs \(needs)"
        case .authenticationFailure:
            return "authentication failed: wrong key or passphrase, or the file was damaged or tampered with"
        case .costLimitExceeded(let what):
            return "passphrase parameters exceed this reader's limits (\(what)); refusing to derive the key"
        case .headerTooLong(let length, let limit):
            return "the container's header is \(length) bytes (its chunk table), more than the \(limit) this reader accepts"
        case .malformedTree(let rule):
            return "damaged packed directory: \(rule)"
        case .malformedLegacy(let rule):
            return "cannot read legacy file: \(rule)"
        }
    }
}
