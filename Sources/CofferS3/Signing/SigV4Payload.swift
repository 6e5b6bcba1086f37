import CofferFormat
import Crypto
import Foundation

/// What a request says about its body in `x-amz-content-sha256` and the canonical request's last line.
public enum SigV4Payload: Sendable, Equatable {
    /// `UNSIGNED-PAYLOAD`: the body is not covered by the signature (presigned URLs, streamed bodies).
    case unsigned
    /// The lowercase hex SHA-256 of the body, which the store checks against what it receives.
    case sha256(String)

    /// The hash of an empty body (every request without one).
    public static let empty = SigV4Payload.sha256("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")

    /// The hash of `bytes` (hashed in place, not copied).
    public static func hashing(_ bytes: some DataProtocol) -> SigV4Payload {
        .sha256(SHA256.hash(data: bytes).hexString)
    }

    /// The value as it appears in the header and the canonical request.
    public var value: String {
        switch self {
        case .unsigned: "UNSIGNED-PAYLOAD"
        case .sha256(let hex): hex
        }
    }
}
