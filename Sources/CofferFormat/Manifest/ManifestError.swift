/// Why a manifest was refused. A device that gets one keeps using what it has.
///
/// The cases follow who must act (after python-tuf): ``badSignature``, ``expired`` and
/// ``rollback`` mean the server or the network cannot be trusted right now; ``malformed`` and
/// ``unsupportedFormat`` mean this client cannot read what the server sent.
public enum ManifestError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The envelope or the payload is not what docs/MANIFEST.md describes.
    case malformed(String)
    /// A payload format this build does not read.
    case unsupportedFormat(Int)
    /// No signature by the pinned key verifies: tampered, or signed by another server.
    case badSignature
    /// The manifest's expiry has passed (a frozen or replayed manifest).
    case expired
    /// The manifest's sequence number is lower than the one already trusted (a rollback attack).
    case rollback(trusted: UInt64, offered: UInt64)

    /// One line saying what is wrong.
    public var description: String {
        switch self {
        case .malformed(let what): "the manifest is malformed: \(what)"
        case .unsupportedFormat(let format): "the manifest has format \(format), which this version does not read; update Coffer"
        case .badSignature: "the manifest's signature does not verify with the pinned server key"
        case .expired: "the manifest has expired; the server has not re-signed it (is the device's clock right?)"
        case .rollback(let trusted, let offered): "the manifest's sequence \(offered) is lower than the trusted \(trusted): refused as a rollback"
        }
    }
}
