/// The cost of deriving the key-encryption key from a passphrase with scrypt (RFC 7914).
///
/// The parameters and a random salt are stored in the database, so a store can be opened with the
/// parameters it was created with.
public struct ScryptParameters: Sendable, Equatable {
    /// log2 of the CPU/memory cost N.
    public var logN: UInt8
    /// The block size r.
    public var r: UInt32
    /// The parallelism p.
    public var p: UInt32

    /// N = 2^logN, r and p as given.
    public init(logN: UInt8, r: UInt32 = 8, p: UInt32 = 1) {
        self.logN = logN
        self.r = r
        self.p = p
    }

    /// N = 2^15, r = 8, p = 1: 32 MiB and about 0.1 s on a current phone or laptop core.
    public static let `default` = ScryptParameters(logN: 15)

    /// Whether the parameters are ones SealedFields accepts from a database (bounded, so that a damaged
    /// file cannot make opening take hours or gigabytes).
    var isAcceptable: Bool { (1...22).contains(logN) && (1...32).contains(r) && (1...16).contains(p) }
}
